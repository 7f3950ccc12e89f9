/* SPDX-License-Identifier: Apache-2.0 */
/* compare.h - compares two kperf reports (BASE, NEW): matches rows by (scenario, placement,
 * test, reverse), computes the delta of every key metric (latency p50/p90/p99/mean, ops/s,
 * throughput) and classifies each as regression, improvement or within noise from the
 * samples, not from one number. Also lists provenance differences (nodes, kernel, MTU, CNI,
 * Kubernetes version, backend, parameters) that may explain a change.
 * The method (Mann-Whitney U, Welch interval, the one-sample rule) is in docs/compare.md.
 * Owns the comparison result; reads reports through report.h and numbers through stats.h. */
#ifndef KPERF_REPORT_COMPARE_H
#define KPERF_REPORT_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/report/report.h"

struct kp_err;
struct compare; /* opaque */

#define COMPARE_SCHEMA            "kperf.compare/v1"
#define COMPARE_DEFAULT_THRESHOLD 5.0  /* percent */
#define COMPARE_DEFAULT_ALPHA     0.05 /* significance level of the tests */

struct compare_opts {
    double threshold_pct; /* a change must exceed this to be a regression/improvement */
    double alpha;         /* significance level */
};

/* Fills opts with the defaults above. */
void compare_opts_init(struct compare_opts *opts);

/* Compares the two reports (both borrowed, only during the call). Fails when they share no
 * measured row (different scenarios, tests or not kperf reports at all). Returns a new
 * comparison (caller frees with compare_free) or NULL with err. */
struct compare *compare_reports(const struct report *base, const struct report *cur,
                                const struct compare_opts *opts, struct kp_err *err);
void compare_free(struct compare *cmp); /* NULL is a no-op */

/* Number of metrics classified as regression (beyond the threshold and significant). */
size_t compare_regression_count(const struct compare *cmp);
size_t compare_improvement_count(const struct compare *cmp);

/* The comparison as kperf.compare/v1 (new reference; caller json_decref's it). */
json_t *compare_to_json(const struct compare *cmp);

/* Writes the comparison as REPORT_TABLE, REPORT_MARKDOWN, REPORT_JSON or REPORT_HTML
 * (render_compare_html.h; others are an error) and flushes out. Returns 0 or -1 with err (also for
 * write errors). */
KP_MUST_CHECK int compare_render(const struct compare *cmp, enum report_format fmt, FILE *out,
                                 struct kp_err *err);

#endif
