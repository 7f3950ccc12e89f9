/* SPDX-License-Identifier: Apache-2.0 */
/* readiness.h - pod network readiness in a report (issue 13): metadata.readiness = {"pods":
 * [per-pod records from the backend], "nodes": [per node and kind: p50/max of each segment]},
 * its table (text and Markdown) and its comparison in `kperf compare` (lower is better; the
 * threshold group `readiness`, docs/compare.md). Knows nothing of how the records were
 * measured (controller/k8s/k8s_readiness.h makes them). */
#ifndef KPERF_REPORT_READINESS_H
#define KPERF_REPORT_READINESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "controller/report/compare_metrics.h"

/* The segments, in order: "scheduling_s", "network_s", "first_packet_s", "total_s". */
#define READINESS_SEGMENTS 4
extern const char *const readiness_segments[READINESS_SEGMENTS];

/* Per (node, kind) of pods (records: {node, kind, <segment>: seconds}), sorted by node then kind:
 * [{"node", "kind", "pods": N, "<segment>": {"p50", "max"}}] (a segment no pod has is left
 * out). New reference; an empty array for none. */
json_t *readiness_summary(const json_t *pods);

/* metadata.readiness from the records (borrowed): {"pods": pods, "nodes": summary}. New
 * reference. */
json_t *readiness_metadata(json_t *pods);

/* Prints the per-node table of md.readiness (nothing when there is none), after md.services'
 * Service programming latency per node when there is one (kperf run --services), and each
 * size's of md.services_sizes (--services N,N...; a size that failed: its error). */
void readiness_print(const json_t *md, bool markdown, FILE *out);

/* Compares the per-node p50 and max of every segment of two reports' metadata (borrowed):
 * [{"node", "kind", "segment", "stat", "base", "new", "delta", "verdict"}] for each figure both
 * have, verdict "regression" when NEW is slower by more than th (absolute: seconds; relative:
 * percent of BASE), "improvement" when faster by more, else "within threshold"; then the same
 * for md.services.programming (kind "service", segment "programming_s", stat "first": each
 * node's Service programming latency, kperf run --services), where a change must also exceed
 * 1 s (one kube-proxy minSyncPeriod: the sync cycle's phase); when either report has
 * md.services_sizes (--services N,N...), size by size instead, each entry keyed by its size
 * ("services": N; a one-size report's md.services is its one size; a size only one report has
 * is left out). *regressions and *improvements
 * count them. New reference (empty array when either has none). */
json_t *readiness_compare(const json_t *md_base, const json_t *md_new,
                          const struct cmp_threshold *th, size_t *regressions,
                          size_t *improvements);

/* A time's verdict, NEW against BASE, by th as readiness_compare judges it: "regression",
 * "improvement" or "within threshold" (static). NetworkPolicy readiness (netpol.h) uses it too. */
const char *readiness_judge(double base, double cur, const struct cmp_threshold *th);

/* Prints a comparison made by readiness_compare (nothing when it is empty). */
void readiness_compare_print(const json_t *cmp, bool markdown, FILE *out);

#endif
