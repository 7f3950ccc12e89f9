/* SPDX-License-Identifier: Apache-2.0 */
/* outlier.h - the verdict of a sweep (--all-nodes): which nodes are outliers. The rule
 * (docs/report.md, "Sweep verdicts"), among nodes of the same instance type, per metric:
 *  - the floor: a value OUTLIER_FLOOR times worse than the group's median or more (throughput at
 *    or below half the median, latency at or above twice it) is an outlier whatever the spread
 *    of the others: no noise of a healthy group seen so far comes near it (a contended 5-node
 *    kube-sim spreads 1.7x end to end, about 1.4x from the median), and the faults a sweep is
 *    for (a NIC at a lower speed, a rate-limited link) cost more;
 *  - the tail: a value worse than the median by a modified z-score 0.6745 * |x - median| / MAD
 *    above OUTLIER_Z (Iglewicz and Hoaglin's 3.5), by at least OUTLIER_MIN_REL of the median,
 *    and by OUTLIER_EDGE_GAP beyond the edge of the others' spread (their OUTLIER_EDGE_Q
 *    quantile on the worse side) is a suspect: it becomes an outlier only once a second
 *    measurement (the runner's second look, listed in metadata.sweep.confirmed) left it there,
 *    as one slow measurement among hundreds is what noise does.
 * Once the second look ran (sweep.confirmed present), every flagged node it did not reach (its
 * cap) is a suspect too: slow once on a contended cluster is not yet evidence.
 * Groups of fewer than OUTLIER_MIN_GROUP nodes are not judged. A node is client of one ring
 * pair and server of another; its value is the better of those two pairs, so a slow node (both
 * of its pairs slow) stands out and its neighbours (one good pair each) do not; and the best
 * sample of each pair, so a node the runner measured again stays flagged only when it was slow
 * both times. Knows nothing of how the figures were measured. */
#ifndef KPERF_REPORT_OUTLIER_H
#define KPERF_REPORT_OUTLIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define OUTLIER_Z         3.5
#define OUTLIER_MIN_REL   0.25
#define OUTLIER_MIN_GROUP 3
#define OUTLIER_FLOOR     2.0 /* this many times worse than the median: an outlier outright */
#define OUTLIER_EDGE_Q    0.9 /* the edge of the group's spread: its worst 10% begin here */
#define OUTLIER_EDGE_GAP  1.25

enum outlier_verdict {
    OUTLIER_NOT_JUDGED = -1,
    OUTLIER_OK = 0,
    OUTLIER_YES = 1,     /* at or beyond the floor */
    OUTLIER_SUSPECT = 2, /* in the tail: an outlier once measured again and still there */
};

/* Judges n values of one metric, grouped by group[i] (equal strings = one group; NULL = its
 * own "unknown" group). higher_better: throughput (true) or latency (false). verdict[i] gets an
 * enum outlier_verdict (SUSPECT: the tail rule; the caller knows whether it was measured again);
 * z[i] (may be NULL) the signed modified z-score (positive = worse; 0 when not judged; HUGE_VAL
 * when MAD is 0 and x differs). */
void outlier_judge(const double *v, const char *const *group, size_t n, bool higher_better,
                   int *verdict, double *z);

/* The spread of n values (NAN ones left out), so a reader sees how sure a verdict is: new
 * object {nodes, median, mad, p10, p90, min, max} ({nodes: 0} when none is finite). */
json_t *outlier_spread(const double *v, size_t n);

/* For a report whose metadata has "sweep": {"pairs": [{client, server}], "nodes": [{name,
 * instance_type, ...}]}: sets on each sweep node "verdict" ("ok", "outlier", "not judged";
 * "skipped" for a node with "skipped": the reason it went NotReady mid-sweep; "suspect" for a
 * tail verdict not measured again: not in sweep.confirmed) and "metrics"
 * {"<scenario> <test>[ reverse][ <family>] <metric>": {value, ratio (value / the group's
 * median), z, verdict}} from the rows
 * (placement "node:<client>"; one series per rowkey_same_series, base/rowkey.h; the family is
 * named when it is not ROWKEY_DEFAULT_FAMILY), sweep.outliers and sweep.suspects [names, the
 * worst first] and sweep.spread [{metric, instance_type, outlier_spread()}]. No-op without a
 * sweep. */
void outlier_annotate(json_t *metadata, const json_t *rows);

/* The sweep section of a table or Markdown report: one line per node (verdict, instance type,
 * zone, kernel, why). Nothing without a sweep. */
void outlier_print(const json_t *metadata, bool markdown, FILE *out);

/* The HTML heat map of a sweep: nodes x metrics, each cell coloured by how far the node is from
 * the median (green at the median or better, red at twice as bad), outliers marked. Nothing
 * without a sweep. */
void outlier_html(const json_t *metadata, FILE *out);

#endif
