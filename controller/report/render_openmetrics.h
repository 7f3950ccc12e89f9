/* SPDX-License-Identifier: Apache-2.0 */
/* render_openmetrics.h - the report as OpenMetrics text (docs/prometheus.md): one gauge family
 * per metric, every measured row a sample labelled scenario, placement, test, direction,
 * cluster, cni and cni_version, a kperf_run_info gauge (value 1) carrying the provenance, and
 * the "# EOF" terminator. Names follow Prometheus base units (seconds, bytes) so that
 * `promtool check metrics` accepts the output. Reads the report through report.h; owns only
 * layout and label escaping. */
#ifndef KPERF_REPORT_RENDER_OPENMETRICS_H
#define KPERF_REPORT_RENDER_OPENMETRICS_H

#include <stddef.h>
#include <stdio.h>

struct report;

/* Writes the exposition; write errors are left in out's error flag. */
void render_openmetrics(const struct report *rep, FILE *out);

/* render_openmetrics with, when run_status >= 0, a last family kperf_run_status{cluster} =
 * run_status (the exit status kperf run is about to return). */
void render_openmetrics_status(const struct report *rep, int run_status, FILE *out);

/* The cluster label of the report: metadata.cluster (kperf run --cluster-name), else
 * "local" for a --local run, else "default". Borrowed from the report or static. */
const char *render_openmetrics_cluster(const struct report *rep);

/* Writes s as an OpenMetrics label value body (no quotes): backslash, double quote and
 * newline escaped; other control bytes become a space so a hostile field cannot break a
 * line. NULL writes nothing. */
void render_openmetrics_label_value(const char *s, FILE *out);

#endif
