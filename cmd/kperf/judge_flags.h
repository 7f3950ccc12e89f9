/* SPDX-License-Identifier: Apache-2.0 */
/* judge_flags.h - the flags `kperf compare` and `kperf history report` share: how a run is
 * judged (--threshold SPEC, --thresholds FILE, --runs N). A command's flag struct starts with a
 * struct judge_flags, so the setters below take that struct as their flag context (a pointer to
 * a struct is a pointer to its first member). */
#ifndef KPERF_CMD_JUDGE_FLAGS_H
#define KPERF_CMD_JUDGE_FLAGS_H

#include "base/flags.h"
#include "base/kp_err.h"
#include "controller/report/compare.h"

struct judge_flags {
    struct compare_opts opts; /* thresholds (and compare's alpha) */
    long runs;                /* earlier runs a run is judged against, 1..1000 */
};

/* FLAG_CALL setters for --runs, --threshold and --thresholds; ctx is a struct judge_flags. */
KP_MUST_CHECK int judge_set_runs(void *ctx, const struct flag *fl, const char *v,
                                 struct kp_err *err);
KP_MUST_CHECK int judge_set_threshold(void *ctx, const struct flag *fl, const char *v,
                                      struct kp_err *err);
KP_MUST_CHECK int judge_set_thresholds_file(void *ctx, const struct flag *fl, const char *v,
                                            struct kp_err *err);

/* Warns on stderr that the history run at path was skipped as unreadable (why: the loader's
 * message, which may start with the path), made safe for the terminal. */
void judge_warn_skipped(const char *path, const char *why);

#endif
