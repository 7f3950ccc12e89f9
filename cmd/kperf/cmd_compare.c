/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_compare.c - 'kperf compare' (placeholder until implemented). */
#include <stdio.h>

#include "cmd/kperf/commands.h"

int cmd_compare(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kperf: error: 'compare' is not implemented yet\n");
    return 1;
}
