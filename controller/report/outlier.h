/* SPDX-License-Identifier: Apache-2.0 */
/* outlier.h - the verdict of a sweep (--all-nodes): which nodes are outliers. Robust rule
 * (docs/report.md, "Sweep verdicts"): among nodes of the same instance type, a node's value of a
 * metric is an outlier when it is worse than the median by a modified z-score
 * 0.6745 * |x - median| / MAD above OUTLIER_Z (Iglewicz and Hoaglin's 3.5) AND by at least
 * OUTLIER_MIN_REL of the median (so the sub-percent jitter of identical nodes, where the MAD is
 * tiny, is never flagged). Groups of fewer than OUTLIER_MIN_GROUP nodes are not judged. A node is
 * client of one ring pair and server of another; its value is the better of those two pairs, so
 * a slow node (both of its pairs slow) stands out and its neighbours (one good pair each) do not;
 * and the best sample of each pair, so a node the runner measured again (its second look at the
 * outliers, runner.c) stays an outlier only when it was slow both times.
 * Knows nothing of how the figures were measured. */
#ifndef KPERF_REPORT_OUTLIER_H
#define KPERF_REPORT_OUTLIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define OUTLIER_Z         3.5
#define OUTLIER_MIN_REL   0.25
#define OUTLIER_MIN_GROUP 3

enum outlier_verdict { OUTLIER_NOT_JUDGED = -1, OUTLIER_OK = 0, OUTLIER_YES = 1 };

/* Judges n values of one metric, grouped by group[i] (equal strings = one group; NULL = its
 * own "unknown" group). higher_better: throughput (true) or latency (false). verdict[i] gets an
 * enum outlier_verdict; z[i] (may be NULL) the signed modified z-score (positive = worse; 0 when
 * not judged; HUGE_VAL when MAD is 0 and x differs). */
void outlier_judge(const double *v, const char *const *group, size_t n, bool higher_better,
                   int *verdict, double *z);

/* For a report whose metadata has "sweep": {"pairs": [{client, server}], "nodes": [{name,
 * instance_type, ...}]}: sets on each sweep node "verdict" ("ok", "outlier", "not judged";
 * "skipped" for a node with "skipped": the reason it went NotReady mid-sweep) and "metrics"
 * {"<scenario> <test>[ reverse][ <family>] <metric>": {value, median, z, verdict}} from the rows
 * (placement "node:<client>"; one series per rowkey_same_series, base/rowkey.h; the family is
 * named when it is not ROWKEY_DEFAULT_FAMILY), and sweep.outliers [names]. No-op without a sweep.
 */
void outlier_annotate(json_t *metadata, const json_t *rows);

/* The sweep section of a table or Markdown report: one line per node (verdict, instance type,
 * zone, kernel, why). Nothing without a sweep. */
void outlier_print(const json_t *metadata, bool markdown, FILE *out);

/* The HTML heat map of a sweep: nodes x metrics, each cell coloured by how far the node is from
 * the median (green at the median or better, red at twice as bad), outliers marked. Nothing
 * without a sweep. */
void outlier_html(const json_t *metadata, FILE *out);

#endif
