/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_run.c - 'kperf run' (placeholder until implemented). */
#include <stdio.h>

#include "cmd/kperf/commands.h"

int cmd_run(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kperf: error: 'run' is not implemented yet\n");
    return 1;
}
