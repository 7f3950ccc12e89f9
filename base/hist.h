/* SPDX-License-Identifier: Apache-2.0 */
/* hist.h - latency histogram: log-linear buckets (exact below 256 ns, then 128 buckets per
 * power of two, so a bucket is 1/128 = 0.78% wide and a reported percentile is within 0.4%),
 * mergeable across streams and samples, with exact count, sum, min and max.
 * Owns bucket layout, percentile maths and the compact JSON form (layout "loglin128-ns");
 * knows nothing of sockets. Values are nanoseconds; values above 2^48 ns are clamped. */
#ifndef KPERF_BASE_HIST_H
#define KPERF_BASE_HIST_H

#include <stdint.h>

#include <jansson.h>

struct kp_err;
struct hist; /* opaque */

#define HIST_LAYOUT "loglin128-ns"

struct hist *hist_new(void);                                 /* never NULL; aborts on OOM */
void hist_free(struct hist *h);                              /* NULL is a no-op */
void hist_reset(struct hist *h);                             /* empties it */
void hist_record(struct hist *h, uint64_t ns);               /* one sample */
void hist_record_n(struct hist *h, uint64_t ns, uint64_t n); /* n equal samples */
void hist_merge(struct hist *dst, const struct hist *src);   /* dst += src */

uint64_t hist_count(const struct hist *h);
uint64_t hist_min(const struct hist *h);                  /* exact; 0 if empty */
uint64_t hist_max(const struct hist *h);                  /* exact; 0 if empty */
double hist_mean(const struct hist *h);                   /* exact; 0 if empty */
double hist_stddev(const struct hist *h);                 /* from buckets; 0 if < 2 values */
uint64_t hist_percentile(const struct hist *h, double p); /* p in [0, 100]; 0 if empty */

/* Compact JSON: {"layout":"loglin128-ns","count":N,"sum_ns":S,"min_ns":..,"max_ns":..,
 * "buckets":[[index,count],...]} with only non-empty buckets. Returns a new reference. */
json_t *hist_to_json(const struct hist *h);

/* Parses the form above, strictly: unknown layout, an index out of range, a count that does
 * not add up, or min/max outside the buckets is an error. Returns a new histogram (caller
 * frees with hist_free) or NULL with err. */
struct hist *hist_from_json(const json_t *j, struct kp_err *err);

/* Bucket maths, exposed for tests: index of a value, and the [low, high] range of an index. */
unsigned hist_bucket_index(uint64_t ns);
void hist_bucket_range(unsigned index, uint64_t *low, uint64_t *high);
unsigned hist_bucket_count(void);

#endif
