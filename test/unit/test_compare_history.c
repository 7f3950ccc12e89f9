/* SPDX-License-Identifier: Apache-2.0 */
/* test_compare_history.c - compare against a history of runs (compare_history): the power to
 * find a 10% change after five runs, and the false-alarm rate over seeded histories. The
 * synthetic runs come from compare_fixture.h, shared with test_compare.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/report/compare.h"
#include "controller/report/report.h"
#include "test/unit/compare_fixture.h"

#define RUN_SD (getenv("KPERF_RUNSD") ? atof(getenv("KPERF_RUNSD")) : 1.5)

/* One run of a synthetic history: run-to-run offsets of run_sd_pct on throughput and latency
 * (seeded by seed), samples spread by 3% around them; scale multiplies throughput and divides
 * the op rate (latency * 1/scale). */
static struct report *history_run(uint64_t seed, double run_sd_pct, double mbps_scale,
                                  double latency_scale)
{
    uint64_t rng = seed * 7919 + 17;
    double off_t = 1 + run_sd_pct / 100 * fx_normal(&rng);
    double off_l = 1 + run_sd_pct / 100 * fx_normal(&rng);
    struct spec sp = {
        seed * 31 + 5, 5, 20 * off_l * latency_scale, 9000 * off_t * mbps_scale, 3, 0, NULL, 0, 0};

    return make(&sp, NULL);
}

/* Judges cur against hist[0..k) and returns the regressions + improvements (verdicts shown). */
static size_t judged(struct report **hist, size_t k, struct report *cur, const char *test,
                     const char *metric, const char **v)
{
    struct compare_opts o;
    struct kp_err err = {{0}};
    struct compare *cmp;
    size_t n;

    compare_opts_init(&o);
    if (getenv("KPERF_HZ"))
        o.history_z = atof(getenv("KPERF_HZ"));
    cmp = compare_history((const struct report *const *)hist, k, cur, &o, &err);
    if (!cmp)
        fail_msg("%s", kp_err_msg(&err));
    n = compare_regression_count(cmp) + compare_improvement_count(cmp);
    if (getenv("KPERF_TEST_SHOW") && n)
        assert_int_equal(compare_render(cmp, REPORT_TABLE, stderr, &err), 0);
    if (v)
        *v = verdict(cmp, test, metric, NULL);
    compare_free(cmp);
    return n;
}

/* A 10% throughput drop and a 10% latency rise after 5 runs of history (1.5% between runs, 3%
 * between samples) are found in (nearly) every one of 20 seeded histories. */
static void test_compare_history_finds_10pct(void **state)
{
    int found_t = 0, found_l = 0;
    const char *v;
    (void)state;

    for (uint64_t s = 0; s < 20; s++) {
        struct report *h[5], *cur;
        for (int j = 0; j < 5; j++)
            h[j] = history_run(1000 * s + (uint64_t)j, RUN_SD, 1, 1);
        cur = history_run(1000 * s + 99, RUN_SD, 0.9, 1);
        (void)judged(h, 5, cur, "TCP_STREAM", "Mb/s", &v);
        found_t += strcmp(v, "regression") == 0;
        report_free(cur);
        cur = history_run(1000 * s + 98, RUN_SD, 1, 1.1);
        (void)judged(h, 5, cur, "TCP_RR", "p50", &v);
        found_l += strcmp(v, "regression") == 0;
        report_free(cur);
        for (int j = 0; j < 5; j++)
            report_free(h[j]);
    }
    fprintf(stderr, "history power: -10%% Mb/s found %d/20, +10%% p50 found %d/20\n", found_t,
            found_l);
    assert_true(found_t >= 15); /* measured 17 and 19 (docs/compare.md) */
    assert_true(found_l >= 15);
}

/* 20 runs of one distribution, each judged against 5 others (leave-one-out, the next five in a
 * ring): the share of judgments with any verdict (regression or improvement, any metric) is
 * the false-alarm rate; bound 5% (at most 1 of 20). */
static void test_compare_history_false_alarms(void **state)
{
    struct report *runs[20];
    size_t alarms = 0, judgments = 0;
    (void)state;

    uint64_t seed0 = getenv("KPERF_HSEED") ? (uint64_t)atoi(getenv("KPERF_HSEED")) : 500;
    for (uint64_t i = 0; i < 20; i++)
        runs[i] = history_run(seed0 + i, RUN_SD, 1, 1);
    for (size_t i = 0; i < 20; i++) {
        struct report *h[5];
        for (size_t j = 0; j < 5; j++)
            h[j] = runs[(i + 1 + j) % 20];
        alarms += judged(h, 5, runs[i], "TCP_STREAM", "Mb/s", NULL) > 0;
        judgments++;
    }
    fprintf(stderr, "history false alarms: %zu of %zu judgments\n", alarms, judgments);
    assert_true(alarms <= 1);
    for (size_t i = 0; i < 20; i++)
        report_free(runs[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_history_finds_10pct),
        cmocka_unit_test(test_compare_history_false_alarms),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
