/* SPDX-License-Identifier: Apache-2.0 */
/* judge_flags.c - the judging flags of compare and history report (see judge_flags.h). */
#include "cmd/kperf/judge_flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textsafe.h"

int judge_set_runs(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    struct judge_flags *j = ctx;
    char *end;

    (void)fl;
    j->runs = strtol(v, &end, 10);
    if (*end || end == v || j->runs < 1 || j->runs > 1000)
        return kp_err_set(err, "--runs: '%s' is not a number of runs from 1 to 1000", v);
    return 0;
}

int judge_set_threshold(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    (void)fl;
    return cmp_thresholds_parse(v, ((struct judge_flags *)ctx)->opts.th, err);
}

int judge_set_thresholds_file(void *ctx, const struct flag *fl, const char *v, struct kp_err *err)
{
    (void)fl;
    return cmp_thresholds_load(v, ((struct judge_flags *)ctx)->opts.th, err);
}

void judge_warn_skipped(const char *path, const char *why)
{
    char safe[512], reason[512];
    size_t n = strlen(path);

    if (strncmp(why, path, n) == 0 && strncmp(why + n, ": ", 2) == 0)
        why += n + 2; /* named once */
    fprintf(stderr, "kperf: warning: skipping unreadable run %s: %s (--strict makes it fail)\n",
            textsafe(path, safe, sizeof(safe)), textsafe(why, reason, sizeof(reason)));
}
