/* SPDX-License-Identifier: Apache-2.0 */
/* test_stats.c - summaries, t quantiles, confidence intervals, Mann-Whitney U against values
 * worked out by hand (and cross-checked with a statistics package). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "controller/report/stats.h"
#include "test/unit/report_fixture.h"

static void test_stats_median_odd_and_even(void **state)
{
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
    (void)state;
    assert_float_equal(stats_median(odd, 3), 2.0, 1e-12);
    assert_float_equal(stats_median(even, 4), 2.5, 1e-12);
    assert_float_equal(stats_median(odd, 0), 0.0, 1e-12);
    assert_float_equal(odd[0], 3.0, 0); /* input untouched */
}

static void test_stats_mean_stddev_cv(void **state)
{
    double v[] = {2, 4, 4, 4, 5, 5, 7, 9};
    struct stats_summary s;
    (void)state;
    stats_summarize(v, 8, 10.0, &s);
    assert_int_equal(s.n, 8);
    assert_float_equal(s.mean, 5.0, 1e-12);
    assert_float_equal(s.median, 4.5, 1e-12);
    assert_float_equal(s.stddev, sqrt(32.0 / 7.0), 1e-12);
    assert_float_equal(s.cv_pct, 100.0 * sqrt(32.0 / 7.0) / 5.0, 1e-9);
    assert_true(s.is_noisy); /* 42.8% > 10% */
    assert_true(s.has_ci);
}

static void test_stats_ci95_small_sample_uses_t(void **state)
{
    double v[] = {10, 12, 14};
    struct stats_summary s;
    (void)state;
    stats_summarize(v, 3, 20.0, &s);
    /* t(0.975, 2) = 4.303; half width = 4.303 * 2 / sqrt(3) = 4.9687 */
    assert_float_equal(s.ci95_lo, 12 - 4.303 * 2 / sqrt(3), 1e-9);
    assert_float_equal(s.ci95_hi, 12 + 4.303 * 2 / sqrt(3), 1e-9);
    assert_float_equal(s.cv_pct, 100.0 * 2 / 12, 1e-9);
    assert_false(s.is_noisy); /* 16.7% < 20% */
}

static void test_stats_single_value_has_no_interval(void **state)
{
    double v[] = {42};
    struct stats_summary s;
    (void)state;
    stats_summarize(v, 1, 10.0, &s);
    assert_false(s.has_ci);
    assert_false(s.is_noisy);
    assert_float_equal(s.median, 42, 0);
    assert_float_equal(s.stddev, 0, 0);
}

static void test_stats_t_quantiles(void **state)
{
    (void)state;
    assert_float_equal(stats_t975(1), 12.706, 1e-3);
    assert_float_equal(stats_t975(10), 2.228, 1e-3);
    assert_float_equal(stats_t975(30), 2.042, 1e-3);
    assert_float_equal(stats_t975(60), 2.0003, 1e-3);
    assert_float_equal(stats_t975(100), 1.9840, 1e-3);
    assert_float_equal(stats_t975(100000), 1.96, 1e-3);
}

static void test_stats_ci_narrow_enough(void **state)
{
    double tight[] = {100, 101, 99, 100, 100}, wide[] = {100, 150, 60};
    (void)state;
    assert_true(stats_ci_narrow_enough(tight, 5, 2.0));
    assert_false(stats_ci_narrow_enough(wide, 3, 10.0));
    assert_false(stats_ci_narrow_enough(tight, 1, 50.0)); /* one sample: no interval */
}

static void test_stats_mann_whitney_exact(void **state)
{
    double a3[] = {1, 2, 3}, b3[] = {4, 5, 6}, i3[] = {2, 4, 6}, j3[] = {1, 3, 5};
    double a5[] = {1, 2, 3, 4, 5}, b5[] = {6, 7, 8, 9, 10};
    (void)state;
    /* complete separation, 3 vs 3: 2 * 1/20 */
    assert_float_equal(stats_mann_whitney_p(a3, 3, b3, 3), 0.1, 1e-12);
    assert_float_equal(stats_mann_whitney_p(b3, 3, a3, 3), 0.1, 1e-12);
    /* 5 vs 5: 2 / C(10,5) = 2/252 */
    assert_float_equal(stats_mann_whitney_p(a5, 5, b5, 5), 2.0 / 252.0, 1e-12);
    /* interleaved: U = 3, P(U <= 3) = 7/20 -> p = 0.7 */
    assert_float_equal(stats_mann_whitney_p(j3, 3, i3, 3), 0.7, 1e-12);
}

static void test_stats_mann_whitney_ties_normal_approximation(void **state)
{
    double a[] = {1, 1, 2, 2}, b[] = {3, 3, 4, 4}, same[] = {5, 5, 5};
    (void)state;
    /* U = 0, mu = 8, sigma^2 = 16/12 * (9 - 24/56); z = 7.5 / sigma -> p = 0.02652 */
    assert_float_equal(stats_mann_whitney_p(a, 4, b, 4), 0.026518, 1e-5);
    assert_float_equal(stats_mann_whitney_p(same, 3, same, 3), 1.0, 0);
    assert_float_equal(stats_mann_whitney_p(a, 0, b, 4), 1.0, 0);
}

static void test_stats_mann_whitney_detects_shift_not_noise(void **state)
{
    uint64_t rng = 42;
    double a[60], b[60], c[60];
    (void)state;
    for (int i = 0; i < 60; i++) {
        a[i] = 100 + fx_normal(&rng);
        b[i] = 101 + fx_normal(&rng); /* shifted by one sigma */
        c[i] = 100 + fx_normal(&rng); /* same distribution */
    }
    assert_true(stats_mann_whitney_p(a, 60, b, 60) < 0.001);
    assert_true(stats_mann_whitney_p(a, 60, c, 60) > 0.05);
    assert_float_equal(stats_hodges_lehmann(a, 60, b, 60), 1.0, 0.4);
}

static void test_stats_hodges_lehmann_and_welch(void **state)
{
    double a[] = {1, 2, 3}, b[] = {11, 12, 13}, lo, hi;
    (void)state;
    assert_float_equal(stats_hodges_lehmann(a, 3, b, 3), 10.0, 1e-12);
    assert_true(stats_welch_ci95(a, 3, b, 3, &lo, &hi));
    /* equal variances 1, se = sqrt(2/3), df = 4 -> t = 2.776 */
    assert_float_equal(lo, 10 - 2.776 * sqrt(2.0 / 3.0), 1e-9);
    assert_float_equal(hi, 10 + 2.776 * sqrt(2.0 / 3.0), 1e-9);
    assert_true(stats_welch_ci95(a, 3, a, 3, &lo, &hi));
    assert_float_equal(lo, -hi, 1e-12);
    assert_false(stats_welch_ci95(a, 1, b, 3, &lo, &hi));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_median_odd_and_even),
        cmocka_unit_test(test_stats_mean_stddev_cv),
        cmocka_unit_test(test_stats_ci95_small_sample_uses_t),
        cmocka_unit_test(test_stats_single_value_has_no_interval),
        cmocka_unit_test(test_stats_t_quantiles),
        cmocka_unit_test(test_stats_ci_narrow_enough),
        cmocka_unit_test(test_stats_mann_whitney_exact),
        cmocka_unit_test(test_stats_mann_whitney_ties_normal_approximation),
        cmocka_unit_test(test_stats_mann_whitney_detects_shift_not_noise),
        cmocka_unit_test(test_stats_hodges_lehmann_and_welch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
