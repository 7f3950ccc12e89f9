/* SPDX-License-Identifier: Apache-2.0 */
/* test_hist.c - histogram percentiles against exact values, merge, and the JSON form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "test/unit/test_assert.h"

#include "base/hist.h"
#include "base/kp_err.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* exact nearest-rank percentile of a sorted array */
static uint64_t exact_pct(const uint64_t *v, size_t n, double p)
{
    size_t rank = (size_t)((p / 100.0) * (double)n + 0.999999999);
    if (rank < 1)
        rank = 1;
    return v[rank - 1];
}

static void assert_within_pct(uint64_t got, uint64_t want, double pct)
{
    double d = (double)got - (double)want;
    if (d < 0)
        d = -d;
    if (d > (double)want * pct / 100.0 + 1.0)
        fail_msg("got %llu, want %llu within %.2f%%", (unsigned long long)got,
                 (unsigned long long)want, pct);
}

static void test_hist_median_of_uniform_values(void **state)
{
    struct hist *h = hist_new();
    (void)state;
    for (uint64_t us = 1; us <= 1000; us++)
        hist_record(h, us * 1000);
    assert_in_range(hist_percentile(h, 50.0), 495000, 505000);
    assert_int_equal(hist_min(h), 1000);
    assert_int_equal(hist_max(h), 1000000);
    assert_int_equal(hist_count(h), 1000);
    hist_free(h);
}

static void test_hist_percentiles_of_lognormal_data_within_half_percent(void **state)
{
    enum { N = 200000 };
    uint64_t *v = malloc(N * sizeof(*v));
    struct hist *h = hist_new();
    const double ps[] = {1, 10, 50, 90, 99, 99.9, 99.99};
    uint64_t seed = 42;
    (void)state;
    for (size_t i = 0; i < N; i++) {
        /* xorshift, spread over 6 orders of magnitude */
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        v[i] = 100 + (seed % 1000) * (1 + (seed >> 40) % 1000);
        hist_record(h, v[i]);
    }
    qsort(v, N, sizeof(*v), cmp_u64);
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        assert_within_pct(hist_percentile(h, ps[i]), exact_pct(v, N, ps[i]), 0.5);
    assert_int_equal(hist_percentile(h, 100), v[N - 1]);
    assert_int_equal(hist_percentile(h, 0), v[0]);
    free(v);
    hist_free(h);
}

static void test_hist_bucket_layout_is_contiguous(void **state)
{
    uint64_t prev_high = 0;
    (void)state;
    for (unsigned i = 0; i < hist_bucket_count(); i++) {
        uint64_t lo, hi;
        hist_bucket_range(i, &lo, &hi);
        if (i > 0)
            assert_int_equal(lo, prev_high + 1);
        assert_int_equal(hist_bucket_index(lo), i);
        assert_int_equal(hist_bucket_index(hi), i);
        if (lo >= 256)
            assert_true((double)(hi - lo + 1) / (double)lo <= 1.0 / 128.0 + 1e-12);
        prev_high = hi;
    }
}

static void test_hist_merge_equals_recording_everything(void **state)
{
    struct hist *a = hist_new(), *b = hist_new(), *all = hist_new();
    (void)state;
    for (uint64_t i = 0; i < 5000; i++) {
        hist_record(i % 2 ? a : b, i * 37 + 5);
        hist_record(all, i * 37 + 5);
    }
    hist_merge(a, b);
    assert_int_equal(hist_count(a), hist_count(all));
    assert_int_equal(hist_min(a), hist_min(all));
    assert_int_equal(hist_max(a), hist_max(all));
    for (double p = 1; p < 100; p += 7)
        assert_int_equal(hist_percentile(a, p), hist_percentile(all, p));
    assert_double_exact(hist_mean(a), hist_mean(all));
    hist_free(a);
    hist_free(b);
    hist_free(all);
}

static void test_hist_json_round_trip(void **state)
{
    struct hist *h = hist_new();
    struct hist *back;
    struct kp_err err = {{0}};
    json_t *j;
    (void)state;
    for (uint64_t i = 1; i < 3000; i++)
        hist_record(h, i * i);
    j = hist_to_json(h);
    back = hist_from_json(j, &err);
    assert_non_null(back);
    assert_int_equal(hist_count(back), hist_count(h));
    assert_int_equal(hist_percentile(back, 99), hist_percentile(h, 99));
    assert_int_equal(hist_max(back), hist_max(h));
    json_decref(j);
    hist_free(back);
    hist_free(h);
}

static void test_hist_json_rejects_malformed(void **state)
{
    const char *bad[] = {
        "{}",
        "{\"layout\":\"other\",\"buckets\":[],\"count\":0,\"sum_ns\":0,\"min_ns\":0,\"max_ns\":0}",
        "{\"layout\":\"loglin128-ns\",\"buckets\":[[999999,1]],\"count\":1,\"sum_ns\":1,"
        "\"min_ns\":1,\"max_ns\":1}",
        "{\"layout\":\"loglin128-ns\",\"buckets\":[[1,1]],\"count\":2,\"sum_ns\":1,"
        "\"min_ns\":1,\"max_ns\":1}",
        "{\"layout\":\"loglin128-ns\",\"buckets\":[[1,-1]],\"count\":1,\"sum_ns\":1,"
        "\"min_ns\":1,\"max_ns\":1}",
        "{\"layout\":\"loglin128-ns\",\"buckets\":[[1,1],[1,1]],\"count\":2,\"sum_ns\":2,"
        "\"min_ns\":1,\"max_ns\":1}",
        "{\"layout\":\"loglin128-ns\",\"buckets\":[[1,1]],\"count\":1,\"sum_ns\":1,"
        "\"min_ns\":5,\"max_ns\":5}",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct kp_err err = {{0}};
        json_t *j = json_loads(bad[i], 0, NULL);
        assert_non_null(j);
        assert_null(hist_from_json(j, &err));
        assert_true(kp_err_is_set(&err));
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_median_of_uniform_values),
        cmocka_unit_test(test_hist_percentiles_of_lognormal_data_within_half_percent),
        cmocka_unit_test(test_hist_bucket_layout_is_contiguous),
        cmocka_unit_test(test_hist_merge_equals_recording_everything),
        cmocka_unit_test(test_hist_json_round_trip),
        cmocka_unit_test(test_hist_json_rejects_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
