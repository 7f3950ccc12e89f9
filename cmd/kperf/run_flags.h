/* SPDX-License-Identifier: Apache-2.0 */
/* run_flags.h - the flags of `kperf run`, also accepted by `kperf manifests`: one table (name,
 * argument, group, help), one small handler per group, and the --help text generated from the
 * table (base/flags.h). Writes struct run_options; the checks that combine values are
 * run_options_validate's (controller/run_options.h). */
#ifndef KPERF_CMD_RUN_FLAGS_H
#define KPERF_CMD_RUN_FLAGS_H

#include "base/kp_err.h"

#include <stddef.h>
#include <stdio.h>

struct flag;
struct flags_cmd;
struct kp_err;
struct run_options;

/* Parses argv (argv[0] is "run") into o, initialised by run_options_init, then checks it.
 * Returns 0 when parsed, 1 when -h/--help was given (nothing printed: see run_flags_help), or
 * -1 with one line in err that ends with the --help pointer (a usage error: exit 2).
 * o->argv borrows argv. */
KP_MUST_CHECK int run_flags_parse(struct run_options *o, int argc, char **argv, struct kp_err *err);

/* The same for a command that accepts every `kperf run` flag besides its own: cmd (borrowed)
 * names it (for messages) and holds its own tables; it must leave one table slot free, where
 * the run flags go. */
KP_MUST_CHECK int run_flags_parse_as(const struct flags_cmd *cmd, struct run_options *o, int argc,
                                     char **argv, struct kp_err *err);

/* Prints the --help text of `kperf run` to f. */
void run_flags_help(FILE *f);

/* The rows of `kperf run` (static), for `kperf completion`; *n is set to their count. */
const struct flag *run_flags_table(size_t *n);

#endif
