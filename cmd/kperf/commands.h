/* SPDX-License-Identifier: Apache-2.0 */
/* commands.h - the kperf subcommands. Each lives in its own cmd_<name>.c, parses its own flags
 * and returns the process exit code: 0 ok, 1 error, 2 usage, 3 regression (compare). */
#ifndef KPERF_CMD_COMMANDS_H
#define KPERF_CMD_COMMANDS_H

#include <stddef.h>

int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_cleanup(int argc, char **argv);
int cmd_manifests(int argc, char **argv);
int cmd_completion(int argc, char **argv);
int cmd_history(int argc, char **argv);

/* The flag rows of a command (static), for `kperf completion`; *n is set to their count. */
struct flag;
const struct flag *cmd_compare_flags(size_t *n);
const struct flag *cmd_report_flags(size_t *n);
const struct flag *cmd_cleanup_flags(size_t *n);
const struct flag *cmd_history_flags(size_t *n);
const struct flag *cmd_manifests_flags(size_t *n); /* its own; it takes every run flag too */
const struct flag *cmd_watch_flags(size_t *n);     /* its own; it takes every run flag too */
int cmd_watch(int argc, char **argv);

#endif
