/* SPDX-License-Identifier: Apache-2.0 */
/* watch_readiness.h - pod network readiness in the kperf.watch/v1 document (`kperf watch
 * --readiness-every`, docs/watch.md): the per-pod records of the backend grouped into one
 * series per node (time from the watch's start, total and segments, or the failure), with the
 * p50 and max of the totals; printed as a table or Markdown and drawn as one marker row per node
 * in the HTML timeline. Knows nothing of how the records were measured
 * (controller/k8s/k8s_watch_ready.h makes them). */
#ifndef KPERF_REPORT_WATCH_READINESS_H
#define KPERF_REPORT_WATCH_READINESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* The document's "readiness" member from the records (borrowed; each {node, created_unix_s,
 * scheduling_s, network_s, first_packet_s, total_s, pod} or {node, created_unix_s, error}):
 * {"every_s", "bound_s", "nodes": [{"node", "measured", "failed", "total_s": {"p50", "max"} |
 * null, "series": [{"at_s", "created_unix_s", "pod", "total_s", "scheduling_s", "network_s",
 * "first_packet_s"} | {"at_s", "created_unix_s", "error"}]}]}, nodes sorted by name, each series
 * by time; at_s is created_unix_s - start_unix_s. A segment or total the record lacks is left
 * out (and that pod out of the p50/max). New reference. */
json_t *watch_readiness_build(const json_t *records, double start_unix_s, double every_s,
                              double bound_s);

/* Prints doc.readiness (nothing when the document has none): per node pods, failures, p50
 * and max, then every sample in time order. Markdown when markdown. */
void watch_readiness_print(const json_t *doc, bool markdown, FILE *out);

/* The number of node rows doc.readiness draws in the timeline (0 when none). */
size_t watch_readiness_rows(const json_t *doc);

/* Where the timeline's time axis is: x0 px at the watch's start, width px for span_s
 * seconds; label_x the right edge of the row labels. */
struct watch_readiness_axis {
    double x0, width, span_s, label_x;
};

/* Draws the marker rows of doc.readiness into an SVG, the first at y (px, its top), each
 * row_h px high: the node's name and p50/max as its label, a dot per pod at its creation time
 * (its title the total and segments), a red cross for a pod that got no network in time.
 * Every string from the document is escaped. */
void watch_readiness_svg(const json_t *doc, const struct watch_readiness_axis *ax, double y,
                         double row_h, FILE *out);

#endif
