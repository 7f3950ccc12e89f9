/* SPDX-License-Identifier: Apache-2.0 */
/* compare.h - compares two kperf reports (BASE, NEW): matches rows by their key (base/rowkey.h:
 * scenario, placement, test, reverse, ip_family; no ip_family = IPv4), computes the delta of
 * every metric of compare_metrics.h (latency, op/s, conn/s, Mb/s, retransmits, UDP loss and
 * jitter, node and agent CPU per Gbit/s) and classifies each as regression, improvement or
 * within noise from the samples, not from one number. Also lists provenance differences (nodes,
 * kernel, MTU, CNI, Kubernetes version, backend, parameters) that may explain a change. The
 * method (Mann-Whitney U, Welch interval, the one-sample rule) is in docs/compare.md. Owns the
 * comparison result; reads reports through report.h and numbers through stats.h. */
#ifndef KPERF_REPORT_COMPARE_H
#define KPERF_REPORT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/report/compare_metrics.h"
#include "controller/report/report.h"

struct kp_err;
struct compare; /* opaque */

#define COMPARE_SCHEMA            "kperf.compare/v1"
#define COMPARE_DEFAULT_THRESHOLD 5.0  /* percent */
#define COMPARE_DEFAULT_ALPHA     0.05 /* significance level of the tests */

struct compare_opts {
    /* a change must exceed its metric's threshold to be a regression/improvement */
    struct cmp_threshold th[CMP_GROUPS];
    double alpha; /* significance level */
    /* compare_history: a change is shown when it is more than history_z spreads between runs
     * from the history's median; the spread is at least history_min_spread_pct of it */
    double history_z;
    double history_min_spread_pct;
    /* a row whose drop, shaping or overflow counters moved on either side (evidence.h), or whose
     * path was a path MTU black hole on either side (pathmtu.h), gets no verdict: "cannot
     * judge", counted by compare_refused_count */
    bool strict_evidence;
};

#define COMPARE_HISTORY_Z          3.0
#define COMPARE_HISTORY_MIN_SPREAD 1.0 /* percent of the median */

/* Fills opts with the defaults above. */
void compare_opts_init(struct compare_opts *opts);

/* Compares the two reports (both borrowed, only during the call). Fails when they share no
 * measured row (different scenarios, tests or not kperf reports at all). Returns a new
 * comparison (caller frees with compare_free) or NULL with err. */
struct compare *compare_reports(const struct report *base, const struct report *cur,
                                const struct compare_opts *opts, struct kp_err *err);
void compare_free(struct compare *cmp); /* NULL is a no-op */

/* Judges cur against k earlier comparable runs (hist[0] oldest, all borrowed during the call)
 * by the spread BETWEEN runs: per metric, the median of the runs' values and a robust spread
 * (max of 1.4826 x MAD, the standard deviation, the typical in-run standard error and
 * history_min_spread_pct of the median, times sqrt(1 + 1/k)); a regression is worse by more
 * than history_z spreads AND beyond the metric's threshold. Method: docs/compare.md. Rows are
 * listed against the newest run as in compare_reports. Needs k >= 1 (k == 1: compare_reports).
 * Returns a comparison or NULL with err. */
struct compare *compare_history(const struct report *const *hist, size_t k,
                                const struct report *cur, const struct compare_opts *opts,
                                struct kp_err *err);

/* Records in the comparison (JSON "history": runs_used, runs_skipped; the text says it when a run
 * was skipped) how many history runs it rests on and how many unreadable ones were left out. */
void compare_note_baseline(struct compare *cmp, size_t used, size_t skipped);

/* Number of metrics classified as regression (beyond the threshold and significant). */
size_t compare_regression_count(const struct compare *cmp);
size_t compare_improvement_count(const struct compare *cmp);
/* Rows left without a verdict by strict_evidence (their counters moved or their path was a
 * path MTU black hole), and how many of them for a black hole. */
size_t compare_refused_count(const struct compare *cmp);
size_t compare_refused_pmtu_count(const struct compare *cmp);
/* Number of metrics worse beyond their threshold whose change the noise does not let the judge
 * call (verdict "inconclusive": docs/compare.md); kperf compare exits 5 on them when no
 * regression was found. */
size_t compare_inconclusive_count(const struct compare *cmp);

/* The comparison as kperf.compare/v1 (new reference; caller json_decref's it). */
json_t *compare_to_json(const struct compare *cmp);

/* Writes the comparison as REPORT_TABLE, REPORT_MARKDOWN, REPORT_JSON or REPORT_HTML
 * (render_compare_html.h; others are an error) and flushes out. Returns 0 or -1 with err (also for
 * write errors). */
KP_MUST_CHECK int compare_render(const struct compare *cmp, enum report_format fmt, FILE *out,
                                 struct kp_err *err);

#endif
