/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_manifests.c - 'kperf manifests' (placeholder until implemented). */
#include <stdio.h>

#include "cmd/kperf/commands.h"

int cmd_manifests(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kperf: error: 'manifests' is not implemented yet\n");
    return 1;
}
