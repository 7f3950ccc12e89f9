/* SPDX-License-Identifier: Apache-2.0 */
/* history_html.h - `kperf history report DIR -o html`: the trend page of a history directory
 * (history.h). One section per comparable series (cluster, node pair and CNI, any version, as
 * `kperf compare --baseline` groups them), runs oldest first; per row (scenario, placement,
 * test, direction, family) one small line chart per compare metric (compare_metrics.h) over the
 * runs. Each run from the second on is judged against the runs before it with the same rule as
 * `kperf compare --baseline DIR --runs N` (compare_history), and a metric it calls a
 * regression is marked red on that run's point. Self-contained page: inline SVG and CSS, no
 * scripts, nothing fetched. Reads reports through report.h; owns only the page. */
#ifndef KPERF_REPORT_HISTORY_HTML_H
#define KPERF_REPORT_HISTORY_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/kp_err.h"
#include "controller/report/compare.h"

struct history_trend_opts {
    const struct compare_opts *compare; /* thresholds and z of the judgement (borrowed) */
    size_t runs;                        /* earlier runs each run is judged against (>= 1) */
    bool strict;                        /* an unreadable run fails the page, not skipped */
    /* called for each run skipped as unreadable (path and reason borrowed during the call) */
    void (*on_skip)(const char *path, const char *why, void *arg);
    void *arg;
};

/* Writes the trend page of every report in dir to out; a report that cannot be loaded is left
 * out (o->on_skip names it; the page counts it). Returns 0, or -1 with err when dir cannot be
 * read, holds no readable report, or (o->strict) a report cannot be loaded (its path named).
 * Write errors are left in out's error flag. */
KP_MUST_CHECK int history_trend_html(const char *dir, const struct history_trend_opts *o, FILE *out,
                                     struct kp_err *err);

#endif
