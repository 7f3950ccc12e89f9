/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cleanup.c - 'kperf cleanup' (placeholder until implemented). */
#include <stdio.h>

#include "cmd/kperf/commands.h"

int cmd_cleanup(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kperf: error: 'cleanup' is not implemented yet\n");
    return 1;
}
