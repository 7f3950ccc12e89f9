/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_report.c - 'kperf report' (placeholder until implemented). */
#include <stdio.h>

#include "cmd/kperf/commands.h"

int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kperf: error: 'report' is not implemented yet\n");
    return 1;
}
