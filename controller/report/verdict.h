/* SPDX-License-Identifier: Apache-2.0 */
/* verdict.h - a comparison's verdict as the people and machines watching a nightly read it:
 * the exit status (docs/exit-status.md), one line for a Job's termination message, the
 * kperf_verdict and kperf_compare_status gauges for the Pushgateway, and a Slack-compatible
 * message for --notify. Reads a kperf.compare/v1 document (compare_to_json); owns no HTTP (the
 * push is pushgw.h's, the POST notify.h's). */
#ifndef KPERF_REPORT_VERDICT_H
#define KPERF_REPORT_VERDICT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Exit statuses of kperf run and kperf compare: docs/exit-status.md is their one table. */
#define VERDICT_EXIT_OK           0
#define VERDICT_EXIT_ERROR        1
#define VERDICT_EXIT_USAGE        2
#define VERDICT_EXIT_REGRESSION   3
#define VERDICT_EXIT_CLUSTER      4 /* the cluster could not start kperf's pods */
#define VERDICT_EXIT_INCONCLUSIVE 5 /* worse beyond a threshold, but within the noise */

#define VERDICT_MESSAGE_MAX 4096 /* a kubelet keeps this much of a termination message */
#define VERDICT_TOP_ROWS    5    /* rows named in a message */

/* The word of an exit status: "ok", "regression", "inconclusive", "could not measure",
 * "error", "usage" (static). */
const char *verdict_status_word(int status);

/* The exit status of a comparison's document doc (borrowed): 3 when summary.regressions,
 * failed_in_new, readiness_regressions or netpol_regressions is non-zero, else 5 when
 * summary.inconclusive is, else 0. */
int verdict_status(const json_t *doc);

/* One line (no newline) of at most VERDICT_MESSAGE_MAX - 1 bytes: "kperf: regression (exit 3):
 * 2 of 6 rows: pod-to-pod same-node TCP_RR p99 +23.1%, ...", naming the VERDICT_TOP_ROWS rows
 * that moved most in the status's direction. Caller frees. */
char *verdict_line(const json_t *doc, int status);

/* The gauges of a comparison (OpenMetrics text ending in "# EOF"): kperf_verdict per compared
 * row (3 regression, 5 inconclusive, 0 within noise, -1 improvement; the row's key and cluster
 * as labels) and kperf_compare_status{cluster} = status. */
void verdict_openmetrics(const json_t *doc, const char *cluster, int status, FILE *out);

/* A Slack-compatible message (new reference): {"text": the line, "blocks": [a header section
 * with the verdict and the cluster, one section listing the top rows, a context block with
 * links to report_url_base/report.html and compare.html when report_url_base is not NULL]}. */
json_t *verdict_slack(const json_t *doc, int status, const char *cluster,
                      const char *report_url_base);

#endif
