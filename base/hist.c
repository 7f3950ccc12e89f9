/* SPDX-License-Identifier: Apache-2.0 */
/* hist.c - see hist.h. Layout: index v for v < 256; above, e = floor(log2 v), shift = e - 7,
 * index = 256 + (shift - 1) * 128 + ((v >> shift) - 128). */
#include "base/hist.h"

#include <math.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"

#define LINEAR_MAX  256u
#define SUB_BUCKETS 128u
#define MAX_SHIFT   40u /* values up to 2^48 - 1 ns */
#define N_BUCKETS   (LINEAR_MAX + MAX_SHIFT * SUB_BUCKETS)
#define MAX_VALUE   ((1ULL << 48) - 1)

struct hist {
    uint64_t count;
    uint64_t min;
    uint64_t max;
    long double sum; /* exact enough: 2^64 ns sums keep 64 bits of mantissa */
    uint64_t buckets[N_BUCKETS];
};

unsigned hist_bucket_count(void)
{
    return N_BUCKETS;
}

unsigned hist_bucket_index(uint64_t ns)
{
    unsigned e;
    unsigned shift;

    if (ns > MAX_VALUE)
        ns = MAX_VALUE;
    if (ns < LINEAR_MAX)
        return (unsigned)ns;
    e = 63u - (unsigned)__builtin_clzll(ns);
    shift = e - 7u;
    return LINEAR_MAX + (shift - 1u) * SUB_BUCKETS + (unsigned)((ns >> shift) - SUB_BUCKETS);
}

void hist_bucket_range(unsigned index, uint64_t *low, uint64_t *high)
{
    unsigned shift;
    uint64_t m;

    if (index < LINEAR_MAX) {
        *low = *high = index;
        return;
    }
    if (index >= N_BUCKETS)
        index = N_BUCKETS - 1;
    shift = (index - LINEAR_MAX) / SUB_BUCKETS + 1u;
    m = (index - LINEAR_MAX) % SUB_BUCKETS + SUB_BUCKETS;
    *low = m << shift;
    *high = ((m + 1) << shift) - 1;
}

struct hist *hist_new(void)
{
    return kp_xcalloc(1, sizeof(struct hist));
}

void hist_free(struct hist *h)
{
    free(h);
}

void hist_reset(struct hist *h)
{
    memset(h, 0, sizeof(*h));
}

void hist_record_n(struct hist *h, uint64_t ns, uint64_t n)
{
    if (n == 0)
        return;
    if (ns > MAX_VALUE)
        ns = MAX_VALUE;
    if (h->count == 0 || ns < h->min)
        h->min = ns;
    if (h->count == 0 || ns > h->max)
        h->max = ns;
    h->count += n;
    h->sum += (long double)ns * (long double)n;
    h->buckets[hist_bucket_index(ns)] += n;
}

void hist_record(struct hist *h, uint64_t ns)
{
    hist_record_n(h, ns, 1);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->count == 0)
        return;
    if (dst->count == 0 || src->min < dst->min)
        dst->min = src->min;
    if (dst->count == 0 || src->max > dst->max)
        dst->max = src->max;
    dst->count += src->count;
    dst->sum += src->sum;
    for (unsigned i = 0; i < N_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
}

uint64_t hist_count(const struct hist *h)
{
    return h->count;
}

uint64_t hist_min(const struct hist *h)
{
    return h->min;
}

uint64_t hist_max(const struct hist *h)
{
    return h->max;
}

double hist_mean(const struct hist *h)
{
    return h->count ? (double)(h->sum / (long double)h->count) : 0.0;
}

/* The value reported for a bucket: its midpoint, kept inside the exact [min, max]. */
static uint64_t bucket_value(const struct hist *h, unsigned i)
{
    uint64_t lo;
    uint64_t hi;
    uint64_t v;

    hist_bucket_range(i, &lo, &hi);
    v = lo + (hi - lo) / 2;
    if (v < h->min)
        v = h->min;
    if (v > h->max)
        v = h->max;
    return v;
}

double hist_stddev(const struct hist *h)
{
    double mean = hist_mean(h);
    long double acc = 0;

    if (h->count < 2)
        return 0.0;
    for (unsigned i = 0; i < N_BUCKETS; i++) {
        if (h->buckets[i]) {
            double d = (double)bucket_value(h, i) - mean;
            acc += (long double)d * d * (long double)h->buckets[i];
        }
    }
    return sqrt((double)(acc / (long double)(h->count - 1)));
}

uint64_t hist_percentile(const struct hist *h, double p)
{
    uint64_t rank;
    uint64_t seen = 0;

    if (h->count == 0)
        return 0;
    if (p <= 0)
        return h->min;
    if (p >= 100)
        return h->max;
    /* nearest-rank: the smallest value with at least p% of values at or below it */
    rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
    if (rank < 1)
        rank = 1;
    for (unsigned i = 0; i < N_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank)
            return bucket_value(h, i);
    }
    return h->max;
}

json_t *hist_to_json(const struct hist *h)
{
    json_t *buckets = json_array();

    for (unsigned i = 0; i < N_BUCKETS; i++) {
        if (h->buckets[i])
            json_array_append_new(buckets,
                                  json_pack("[II]", (json_int_t)i, (json_int_t)h->buckets[i]));
    }
    return json_pack("{s:s, s:I, s:f, s:I, s:I, s:o}", "layout", HIST_LAYOUT, "count",
                     (json_int_t)h->count, "sum_ns", (double)h->sum, "min_ns", (json_int_t)h->min,
                     "max_ns", (json_int_t)h->max, "buckets", buckets);
}

static int read_uint(const json_t *v, uint64_t *out)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    return -1;
}

/* Reads one [index, count] pair into h; checks range and overflow. */
static int read_bucket(struct hist *h, const json_t *pair, size_t n, struct kp_err *err)
{
    uint64_t idx;
    uint64_t cnt;

    if (!json_is_array(pair) || json_array_size(pair) != 2 ||
        read_uint(json_array_get(pair, 0), &idx) != 0 ||
        read_uint(json_array_get(pair, 1), &cnt) != 0)
        return kp_err_set(err, "histogram bucket %zu is not [index, count]", n);
    if (idx >= N_BUCKETS)
        return kp_err_set(err, "histogram bucket index %llu out of range", (unsigned long long)idx);
    if (cnt == 0 || h->buckets[idx] != 0)
        return kp_err_set(err, "histogram bucket %llu is empty or repeated",
                          (unsigned long long)idx);
    if (h->count + cnt < h->count)
        return kp_err_set(err, "histogram counts overflow");
    h->buckets[idx] = cnt;
    h->count += cnt;
    return 0;
}

struct hist *hist_from_json(const json_t *j, struct kp_err *err)
{
    struct hist *h = hist_new();
    const json_t *buckets = json_object_get(j, "buckets");
    const json_t *layout = json_object_get(j, "layout");
    uint64_t count = 0;
    size_t n;
    const json_t *pair;

    if (!json_is_object(j) || !json_is_string(layout) || !json_is_array(buckets)) {
        kp_err_set(err, "histogram: expected an object with layout and buckets");
        goto fail;
    }
    if (strcmp(json_string_value(layout), HIST_LAYOUT) != 0) {
        kp_err_set(err, "histogram: unknown layout '%s' (expected %s)", json_string_value(layout),
                   HIST_LAYOUT);
        goto fail;
    }
    if (json_array_size(buckets) > N_BUCKETS) {
        kp_err_set(err, "histogram: too many buckets");
        goto fail;
    }
    json_array_foreach(buckets, n, pair)
    {
        if (read_bucket(h, pair, n, err) != 0)
            goto fail;
    }
    if (read_uint(json_object_get(j, "count"), &count) != 0 || count != h->count ||
        read_uint(json_object_get(j, "min_ns"), &h->min) != 0 ||
        read_uint(json_object_get(j, "max_ns"), &h->max) != 0 ||
        !json_is_number(json_object_get(j, "sum_ns"))) {
        kp_err_set(err, "histogram: count, sum_ns, min_ns or max_ns missing or inconsistent");
        goto fail;
    }
    h->sum = (long double)json_number_value(json_object_get(j, "sum_ns"));
    if (h->count) {
        if (h->min > h->max || h->buckets[hist_bucket_index(h->min)] == 0 ||
            h->buckets[hist_bucket_index(h->max)] == 0) {
            kp_err_set(err, "histogram: min_ns/max_ns do not match the buckets");
            goto fail;
        }
    }
    return h;
fail:
    hist_free(h);
    return NULL;
}
