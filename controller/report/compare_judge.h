/* SPDX-License-Identifier: Apache-2.0 */
/* compare_judge.h - judging one metric of a matched row for compare.h: the change, whether the
 * samples show it is real (docs/compare.md: Mann-Whitney U with 4+ samples a side, Welch's 95%
 * interval with 2+, the in-run spread with one), whether it passes the metric's threshold, and
 * the verdict "regression", "improvement", "inconclusive" (worse beyond the threshold, but not
 * significant: the noise is larger than the threshold, so the judge cannot tell; never for a
 * method that has no noise estimate) or "within noise". Owns the maths of a verdict; the
 * rows are matched by compare_match.h and the numbers read through compare_metrics.h. */
#ifndef KPERF_REPORT_COMPARE_JUDGE_H
#define KPERF_REPORT_COMPARE_JUDGE_H

#include <stddef.h>

#include <jansson.h>

#include "controller/report/compare.h"
#include "controller/report/compare_metrics.h"

/* Metric m of NEW's row rn against BASE's row rb (both borrowed): {metric, field, group, base,
 * new, delta_pct, better, method, significant, verdict, ...} (new reference). NULL when
 * neither side has it, or only one (then {metric, measured_in} is appended to `missing`).
 * *verdict is set (static). */
json_t *compare_judge_pair(const json_t *rb, const json_t *rn, const struct cmp_metric *m,
                           const struct compare_opts *o, json_t *missing, const char **verdict);

/* Metric m of rn against the rows of k earlier runs (rows[j] NULL where run j lacks the row):
 * the same object with base = the runs' median, n_runs, spread and z. NULL when rn or every
 * run lacks it. *verdict is set (static). */
json_t *compare_judge_history(const json_t *const *rows, size_t k, const json_t *rn,
                              const struct cmp_metric *m, const struct compare_opts *o,
                              const char **verdict);

#endif
