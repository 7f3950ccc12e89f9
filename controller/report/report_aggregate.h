/* SPDX-License-Identifier: Apache-2.0 */
/* report_aggregate.h - turns a row's samples into its aggregate and statistics: latency
 * percentiles from the merged histogram of all samples (never averaged percentiles), scalar
 * metrics as the median of samples, and per key metric median/mean/stddev/cv/ci95/noisy.
 * Also extracts per-sample values, which compare_judge.c uses for its tests. Owns no state. */
#ifndef KPERF_REPORT_REPORT_AGGREGATE_H
#define KPERF_REPORT_REPORT_AGGREGATE_H

#include "base/kp_err.h"

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct kp_err;

/* Key metrics: what stats are computed for and compare tests. `field`/`sub` address the
 * value inside a sample or aggregate (sub NULL for a top-level number). higher_is_better gives
 * the direction (latency: lower is better). */
struct report_metric {
    const char *name; /* display name: "p50", "ops/s", "Mb/s"... */
    const char *field;
    const char *sub;
    bool higher_is_better;
};

/* The key metrics of a row kind ("latency" or "throughput"): a static table, *count set. */
const struct report_metric *report_metrics_for(const char *kind, size_t *count);

/* A row's kind: "latency" for a latency test (base/testkind.h), else "throughput" (also for a
 * name that is not a test). */
const char *report_kind_of_test(const char *test);

/* Reads obj[field][sub] (or obj[field] when sub is NULL) as a number. False when absent. */
bool report_get_number(const json_t *obj, const char *field, const char *sub, double *out);

/* Per-sample values of one metric from row.samples[]: fills out (allocated, caller frees
 * with free(); NULL when 0) and returns how many samples carry it. */
size_t report_sample_values(const json_t *row, const char *field, const char *sub, double **out);

/* Replaces row.aggregate, row.stats, row.noisy and row.status from row.samples and
 * row.errors (row is a kperf.report/v1 results[] object being built). Returns 0 or -1 with
 * err when a histogram cannot be parsed. */
KP_MUST_CHECK int report_aggregate_row(json_t *row, double noisy_cv_pct, struct kp_err *err);

/* Judges an aggregated row's noise again under another threshold: replaces row.stats and
 * row.noisy (all that the threshold moves; the keys keep their places) from row.samples. */
void report_aggregate_judge_noise(json_t *row, double noisy_cv_pct);

#endif
