/* SPDX-License-Identifier: Apache-2.0 */
/* test_compare.c - synthetic reports (seeded RNG, real histograms) with a known regression, a
 * known improvement and pure noise are classified right, for many samples (rank test), a few
 * (Welch interval) and one (in-run spread rule); provenance differences are listed; reports
 * without common rows are refused. With KPERF_WRITE_FIXTURES=DIR set, the reports are also
 * written there (that is how the JSON files in test/unit/data/report/ were made). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/report/compare.h"
#include "controller/report/report.h"
#include "test/unit/compare_fixture.h"
#include "test/unit/report_fixture.h"

static void test_compare_known_regression(void **state)
{
    struct spec b = {11, 6, 20, 9000, 1, 0, NULL, 0, 0}, n = {12, 6, 20, 8000, 1, 0, NULL, 0, 0};
    struct compare *cmp = run(&b, &n, "base", "regressed");
    const char *method;
    (void)state;

    assert_string_equal(verdict(cmp, "TCP_STREAM", "Mb/s", &method), "regression");
    assert_string_equal(method, "mann-whitney-u");
    assert_string_equal(verdict(cmp, "TCP_RR", "p50", NULL), "within noise");
    assert_string_equal(verdict(cmp, "TCP_RR", "p99", NULL), "within noise");
    assert_string_equal(verdict(cmp, "TCP_RR", "ops/s", NULL), "within noise");
    assert_int_equal(compare_regression_count(cmp), 1);
    assert_int_equal(compare_improvement_count(cmp), 0);
    compare_free(cmp);
}

static void test_compare_known_improvement(void **state)
{
    struct spec b = {11, 6, 20, 9000, 1, 0, NULL, 0, 0}, n = {13, 6, 15, 9000, 1, 0, NULL, 0, 0};
    struct compare *cmp = run(&b, &n, NULL, "improved");
    (void)state;

    /* lower latency is better, higher ops/s is better: all improvements */
    assert_string_equal(verdict(cmp, "TCP_RR", "p50", NULL), "improvement");
    assert_string_equal(verdict(cmp, "TCP_RR", "p90", NULL), "improvement");
    assert_string_equal(verdict(cmp, "TCP_RR", "p99", NULL), "improvement");
    assert_string_equal(verdict(cmp, "TCP_RR", "mean", NULL), "improvement");
    assert_string_equal(verdict(cmp, "TCP_RR", "ops/s", NULL), "improvement");
    assert_string_equal(verdict(cmp, "TCP_STREAM", "Mb/s", NULL), "within noise");
    assert_int_equal(compare_regression_count(cmp), 0);
    assert_string_equal(verdict(cmp, "TCP_RR", "p99.9", NULL), "improvement");
    assert_int_equal(compare_improvement_count(cmp), 6);
    compare_free(cmp);
}

static void test_compare_pure_noise_is_within_noise(void **state)
{
    /* 20 pairs of runs from one distribution with a 15% spread between samples: the medians
     * often differ by more than the 5% threshold by chance, but no pair shows a shift */
    size_t beyond = 0, flagged = 0;
    (void)state;

    for (uint64_t k = 0; k < 20; k++) {
        struct spec b = {100 + 2 * k, 6, 20, 9000, 15, 0, NULL, 0, 0};
        struct spec n = {101 + 2 * k, 6, 20, 9000, 15, 0, NULL, 0, 0};
        struct compare *cmp = run(&b, &n, NULL, k == 0 ? "noise" : NULL);
        json_t *doc = compare_to_json(cmp), *m;

        m = json_array_get(
            json_object_get(json_array_get(json_object_get(doc, "rows"), 1), "metrics"), 0);
        assert_string_equal(json_string_value(json_object_get(m, "metric")), "Mb/s");
        beyond += fabs(json_number_value(json_object_get(m, "delta_pct"))) > 5;
        flagged += compare_regression_count(cmp) + compare_improvement_count(cmp);
        if (getenv("KPERF_TEST_SHOW") &&
            compare_regression_count(cmp) + compare_improvement_count(cmp))
            assert_int_equal(compare_render(cmp, REPORT_TABLE, stderr, NULL), 0);
        json_decref(doc);
        compare_free(cmp);
    }
    assert_true(beyond >= 5);
    assert_int_equal(flagged, 0);
}

static void test_compare_few_samples_use_welch(void **state)
{
    struct spec b = {31, 3, 20, 9000, 1, 0, NULL, 0, 0}, n = {32, 3, 20, 7000, 1, 0, NULL, 0, 0};
    struct spec nb = {33, 3, 20, 9000, 12, 0, NULL, 0, 0},
                nn = {34, 3, 20, 8400, 12, 0, NULL, 0, 0};
    struct compare *cmp = run(&b, &n, NULL, NULL);
    const char *method;
    (void)state;

    assert_string_equal(verdict(cmp, "TCP_STREAM", "Mb/s", &method), "regression");
    assert_string_equal(method, "welch-ci95");
    compare_free(cmp);
    /* -7% but 12% spread over 3 samples: not shown as a regression, and the noise is wider than
     * the 5% threshold, so the judge cannot tell (exit 5) */
    cmp = run(&nb, &nn, NULL, NULL);
    assert_string_equal(verdict(cmp, "TCP_STREAM", "Mb/s", NULL), "inconclusive");
    assert_int_equal(compare_regression_count(cmp), 0);
    assert_true(compare_inconclusive_count(cmp) >= 1);
    compare_free(cmp);
}

static void test_compare_one_sample_uses_in_run_spread(void **state)
{
    struct spec b = {41, 1, 20, 9000, 0, 2, NULL, 0, 0}, n = {42, 1, 20, 8000, 0, 2, NULL, 0, 0};
    struct spec wb = {43, 1, 20, 9000, 0, 30, NULL, 0, 0},
                wn = {44, 1, 20, 8000, 0, 30, NULL, 0, 0};
    struct compare *cmp = run(&b, &n, "one-base", "one-regressed");
    const char *method;
    json_t *doc;
    (void)state;

    /* -11% against an in-run spread of ~2%: a (low-confidence) regression */
    assert_string_equal(verdict(cmp, "TCP_STREAM", "Mb/s", &method), "regression");
    assert_string_equal(method, "in-run-spread");
    doc = compare_to_json(cmp);
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(
                json_object_get(json_array_get(json_object_get(doc, "rows"), 1), "metrics"), 0),
            "confidence")),
        "low");
    json_decref(doc);
    compare_free(cmp);
    cmp = run(&wb, &wn, NULL, NULL); /* same change, per-second values swing by 30% */
    assert_string_equal(verdict(cmp, "TCP_STREAM", "Mb/s", NULL), "inconclusive");
    compare_free(cmp);
}

static void test_compare_one_sample_gives_tail_percentiles_no_verdict(void **state)
{
    struct spec b = {51, 1, 20, 9000, 0, 2, NULL, 0, 0}, n = {52, 1, 30, 9000, 0, 2, NULL, 0, 0};
    struct compare *cmp = run(&b, &n, NULL, NULL);
    const char *method;
    (void)state;

    /* +50% at every percentile from one sample a side: the tail gets no verdict... */
    assert_string_equal(verdict(cmp, "TCP_RR", "p99", &method), "within noise");
    assert_string_equal(method, "needs-samples");
    assert_string_equal(verdict(cmp, "TCP_RR", "p90", &method), "within noise");
    assert_string_equal(method, "needs-samples");
    /* ...while the median still does (no interval series here: threshold only) */
    assert_string_equal(verdict(cmp, "TCP_RR", "p50", &method), "regression");
    assert_string_equal(method, "in-run-spread");
    compare_free(cmp);
}

/* compare's table of rb against rn (both freed here; caller frees the text); *keep, when
 * asked, the comparison (caller frees), else it is freed too. */
static char *compare_text(struct report *rb, struct report *rn, struct compare **keep)
{
    struct compare_opts o;
    struct compare *cmp;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct kp_err err = {{0}};

    compare_opts_init(&o);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    report_free(rb);
    report_free(rn);
    assert_int_equal(compare_render(cmp, REPORT_TABLE, f, &err), 0);
    fclose(f);
    if (getenv("KPERF_TEST_SHOW"))
        fprintf(stderr, "%s\n", buf);
    if (keep)
        *keep = cmp;
    else
        compare_free(cmp);
    return buf;
}

static void test_compare_lists_provenance_differences(void **state)
{
    struct spec b = {11, 6, 20, 9000, 1, 0, NULL, 0, 0},
                n = {12, 6, 20, 8000, 1, 0, "6.8.0-1-amd64", 0, 0};
    struct report *rb = make(&b, NULL), *rn = make(&n, NULL);
    struct compare *cmp;
    struct kp_err err = {{0}};
    char *buf;
    (void)state;

    /* fields only one side has are listed too */
    json_object_set_new(report_metadata(rn), "cni", json_pack("{s:s}", "version", "1.16.1"));
    json_object_set_new(report_metadata(rb), "kube_proxy_mode", json_string("ipvs"));
    buf = compare_text(rb, rn, &cmp);
    assert_non_null(strstr(buf, "Provenance differences"));
    assert_non_null(strstr(buf, "nodes[server].kernel: 6.1.0-18-amd64 -> 6.8.0-1-amd64"));
    assert_null(strstr(buf, "start_time")); /* always differs, explains nothing */
    assert_non_null(strstr(buf, "cni.version: (absent) -> 1.16.1"));
    assert_non_null(strstr(buf, "kube_proxy_mode: ipvs -> (absent)"));
    assert_non_null(strstr(buf, "REGRESSION"));
    assert_non_null(strstr(buf, "1 regression, 0 improvements beyond the thresholds"));
    assert_int_equal(compare_render(cmp, REPORT_CSV, stdout, &err), -1);
    free(buf);
    compare_free(cmp);
}

/* An agent's placement of a stream test with this many client CPUs and CPU quota. */
static json_t *placement(int cpus, int quota_millis)
{
    return json_pack("{s:b, s:i, s:i, s:i, s:i, s:i}", "same_kernel", 0, "client_threads", 0,
                     "msg_size_bytes", 131072, "low_unsent_bytes", 0, "client_cpus", cpus,
                     "client_cpu_quota_millicores", quota_millis);
}

/* A stream rate measured under another agent placement (here a CPU limit that appeared) is
 * listed as a changed setting, first, as the likely explanation; the same placement is not,
 * nor a field only one side reports. */
static void test_compare_lists_placement_changes(void **state)
{
    struct spec b = {21, 6, 20, 9000, 1, 0, NULL, 0, 0}, n = {22, 6, 20, 5000, 1, 0, NULL, 0, 0};
    json_t *two = placement(2, 0), *one = placement(1, 1000), *doc, *d;
    struct compare *cmp;
    char *buf = compare_text(make_placed(&b, NULL, two), make_placed(&n, NULL, one), &cmp);
    size_t i, found = 0;
    (void)state;

    assert_non_null(strstr(buf, "Likely explanation: samples.placement."));
    assert_non_null(strstr(buf, "samples.placement.client_cpus: 2 -> 1 (in 1 row)"));
    assert_non_null(
        strstr(buf, "samples.placement.client_cpu_quota_millicores: 0 -> 1000 (in 1 row)"));
    assert_null(strstr(buf, "samples.placement.msg_size_bytes")); /* unchanged */
    doc = compare_to_json(cmp);
    json_array_foreach(json_object_get(doc, "provenance"), i, d)
    {
        if (strncmp(json_string_value(json_object_get(d, "field")), "samples.placement.", 18))
            continue;
        found++;
        assert_string_equal(json_string_value(json_object_get(d, "kind")), "setting");
        assert_int_equal(json_integer_value(json_object_get(d, "rows")), 1);
    }
    assert_int_equal(found, 2);
    json_decref(doc);
    compare_free(cmp);
    free(buf);

    buf = compare_text(make_placed(&b, NULL, two), make_placed(&n, NULL, two), NULL);
    assert_null(strstr(buf, "samples.placement"));
    assert_non_null(strstr(buf, "Same provenance"));
    free(buf);
    /* an older agent's placement lacks the CPU fields: not a change */
    json_object_del(one, "client_cpus");
    json_object_del(one, "client_cpu_quota_millicores");
    buf = compare_text(make_placed(&b, NULL, two), make_placed(&n, NULL, one), NULL);
    assert_null(strstr(buf, "samples.placement"));
    free(buf);
    json_decref(two);
    json_decref(one);
}

static void test_compare_refuses_reports_without_common_rows(void **state)
{
    struct spec b = {11, 2, 20, 9000, 1, 0, NULL, 0, 0};
    struct report *rb = make(&b, NULL), *other = report_new();
    struct kp_err err = {{0}};
    struct compare_opts o;
    json_t *doc = fx_agent_doc(
        json_pack("[o]", fx_stream_sample("TCP_STREAM_MULTI", 0, false, 900, 0)), NULL);
    (void)state;

    if (report_group_add_doc(report_group_get(other, "host-to-host", "same-node", false), doc,
                             &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    assert_int_equal(report_finish(other, &err), 0);
    compare_opts_init(&o);
    assert_null(compare_reports(rb, other, &o, &err));
    assert_non_null(strstr(kp_err_msg(&err), "share no measured row"));
    json_decref(doc);
    report_free(rb);
    report_free(other);
}

/* A report of n stream rows, one per scenario "s<i>" (i from `from`, step 1), each with one
 * sample of 1000 + i Mb/s, added in reverse order when backwards. */
static struct report *many_rows(int from, int n, bool backwards)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    char sc[32];

    for (int k = 0; k < n; k++) {
        int i = backwards ? from + n - 1 - k : from + k;
        json_t *doc = fx_agent_doc(
            json_pack("[o]", fx_stream_sample("TCP_STREAM", 0, false, 1000 + i, 0)), NULL);
        snprintf(sc, sizeof(sc), "s%d", i);
        if (report_group_add_doc(report_group_get(rep, sc, "same-node", false), doc, &err) != 0)
            fail_msg("%s", kp_err_msg(&err));
        json_decref(doc);
    }
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

/* Rows are matched by key through the index, whatever their order: BASE s0..s299, NEW
 * s50..s349 backwards. Every matched row compares the same scenario (equal values, delta 0),
 * and the rows missing on either side are listed. */
static void test_compare_matches_rows_by_key_and_lists_missing(void **state)
{
    struct report *rb = many_rows(0, 300, false), *rn = many_rows(50, 300, true);
    struct kp_err err = {{0}};
    struct compare_opts o;
    struct compare *cmp;
    json_t *doc, *row, *only;
    size_t i;
    (void)state;

    compare_opts_init(&o);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    doc = compare_to_json(cmp);
    assert_int_equal(json_array_size(json_object_get(doc, "rows")), 250);
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        const json_t *m = json_array_get(json_object_get(row, "metrics"), 0);
        int sc = atoi(json_string_value(json_object_get(row, "scenario")) + 1);
        assert_true(sc >= 50 && sc < 300);
        assert_float_equal(json_number_value(json_object_get(m, "base")), 1000 + sc, 1e-6);
        assert_float_equal(json_number_value(json_object_get(m, "new")), 1000 + sc, 1e-6);
    }
    only = json_object_get(doc, "only_in_base");
    assert_int_equal(json_array_size(only), 50);
    json_array_foreach(only, i, row)
    {
        char want[32];
        snprintf(want, sizeof(want), "s%zu", i);
        assert_string_equal(json_string_value(json_object_get(row, "scenario")), want);
    }
    only = json_object_get(doc, "only_in_new");
    assert_int_equal(json_array_size(only), 50);
    json_array_foreach(only, i, row)
    {
        int sc = atoi(json_string_value(json_object_get(row, "scenario")) + 1);
        assert_true(sc >= 300 && sc < 350);
    }
    assert_int_equal(compare_regression_count(cmp), 0);
    json_decref(doc);
    compare_free(cmp);
    report_free(rb);
    report_free(rn);
}

/* A test that worked in BASE and fails in NEW is counted as a regression (exit 3). */
static void test_compare_row_failing_in_new_is_a_regression(void **state)
{
    struct spec b = {11, 4, 20, 9000, 1, 0, NULL, 0, 0};
    struct report *rb = make(&b, NULL), *rn = report_new();
    struct kp_err err = {{0}};
    struct compare_opts o;
    struct compare *cmp;
    uint64_t rng = 5;
    json_t *doc = fx_agent_doc(
        json_pack("[o]", fx_latency_sample("TCP_RR", 0, &rng, 20, 2000, NULL, NULL)), NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;

    if (report_group_add_doc(report_group_get(rn, "pod-to-pod", "other-node", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    report_group_error_test(report_group_get(rn, "pod-to-pod", "other-node", false),
                            TEST_TCP_STREAM, "connection refused");
    assert_int_equal(report_finish(rn, &err), 0);
    compare_opts_init(&o);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    assert_int_equal(compare_regression_count(cmp), 1);
    f = open_memstream(&buf, &len);
    assert_int_equal(compare_render(cmp, REPORT_TABLE, f, &err), 0);
    fclose(f);
    assert_non_null(strstr(buf, "FAILED in NEW"));
    assert_non_null(strstr(buf, "pod-to-pod other-node TCP_STREAM: connection refused"));
    assert_non_null(strstr(buf, "1 row failed in NEW"));
    free(buf);
    compare_free(cmp);
    report_free(rb);
    report_free(rn);
}

/* Loss rises by 0.5 percentage points, nothing else moves: caught, and named. */
static void test_compare_loss_only_regression(void **state)
{
    struct spec b = {61, 5, 20, 9000, 1, 0, NULL, 0, 0.2},
                n = {62, 5, 20, 9000, 1, 0, NULL, 0, 0.7};
    struct spec same = {63, 5, 20, 9000, 1, 0, NULL, 0, 0.2};
    struct compare *cmp = run(&b, &n, NULL, NULL);
    const char *method;
    (void)state;

    assert_string_equal(verdict(cmp, "UDP_STREAM", "loss%", &method), "regression");
    assert_string_equal(method, "mann-whitney-u");
    assert_string_equal(verdict(cmp, "UDP_STREAM", "Mb/s", NULL), "within noise");
    assert_string_equal(verdict(cmp, "UDP_STREAM", "jitter", NULL), "within noise");
    assert_int_equal(compare_regression_count(cmp), 1);
    compare_free(cmp);
    cmp = run(&b, &same, NULL, NULL); /* the same loss, other samples */
    assert_string_equal(verdict(cmp, "UDP_STREAM", "loss%", NULL), "within noise");
    assert_int_equal(compare_regression_count(cmp), 0);
    compare_free(cmp);
}

/* The same throughput at 30% more CPU per Gbit/s (agents and both nodes' softirq + system):
 * two CPU regressions, throughput and latency unchanged. */
static void test_compare_cpu_only_regression(void **state)
{
    struct spec b = {71, 5, 20, 9000, 1, 0, NULL, 0, 0}, n = {72, 5, 20, 9000, 1, 0, NULL, 1.3, 0};
    struct compare *cmp = run(&b, &n, NULL, NULL);
    (void)state;

    assert_string_equal(verdict(cmp, "TCP_STREAM", "node CPU/Gbps", NULL), "regression");
    assert_string_equal(verdict(cmp, "TCP_STREAM", "agent CPU/Gbit", NULL), "regression");
    assert_string_equal(verdict(cmp, "TCP_STREAM", "Mb/s", NULL), "within noise");
    assert_int_equal(compare_regression_count(cmp), 2);
    compare_free(cmp);
}

/* Thresholds per metric from a spec and a YAML file; a higher one hides the CPU change. */
/* Latency under load: the loaded row is matched; its latency increase over the idle TCP_RR
 * doubling is a regression of "+p50 load" while the idle TCP_RR stays within noise; the
 * load's Mb/s is compared too. */
static struct report *loaded_run(uint64_t seed, double loaded_us)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    json_t *results = json_array(), *doc;

    for (int i = 0; i < 6; i++) {
        json_array_append_new(results, fx_latency_sample("TCP_RR", i, &seed, 20, 2000, NULL, NULL));
        json_array_append_new(results, fx_loaded_sample(i, &seed, loaded_us, 2000,
                                                        9000 * (1 + 0.01 * fx_normal(&seed))));
    }
    doc = fx_agent_doc(results, NULL);
    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "other-node", false), doc, &err) !=
            0 ||
        report_finish(rep, &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    return rep;
}

static struct compare *loaded_compare(double base_us, double new_us)
{
    return compare_owned(loaded_run(31, base_us), loaded_run(32, new_us));
}

static void test_compare_latency_under_load(void **state)
{
    struct compare *cmp = loaded_compare(40, 60);
    struct cmp_threshold th[CMP_GROUPS];
    struct kp_err err = {{0}};
    (void)state;

    assert_string_equal(verdict(cmp, "TCP_RR_LOADED", "+p50 load", NULL), "regression");
    assert_string_equal(verdict(cmp, "TCP_RR_LOADED", "p50", NULL), "regression");
    assert_string_equal(verdict(cmp, "TCP_RR", "p50", NULL), "within noise");
    assert_string_equal(verdict(cmp, "TCP_RR_LOADED", "load Mb/s", NULL), "within noise");
    assert_string_equal(verdict(cmp, "TCP_RR", "+p50 load", NULL), ""); /* not its metric */
    compare_free(cmp);
    cmp = loaded_compare(60, 40);
    assert_string_equal(verdict(cmp, "TCP_RR_LOADED", "+p50 load", NULL), "improvement");
    compare_free(cmp);
    cmp_thresholds_default(th);
    assert_float_equal(th[CMP_LOAD].value, 25, 1e-12);
    assert_int_equal(cmp_thresholds_parse("load=50%", th, &err), 0);
    assert_float_equal(th[CMP_LOAD].value, 50, 1e-12);
    assert_false(th[CMP_LOAD].absolute);
}

static void test_compare_thresholds(void **state)
{
    struct spec b = {71, 5, 20, 9000, 1, 0, NULL, 0, 0}, n = {72, 5, 20, 9000, 1, 0, NULL, 1.3, 0};
    struct report *rb = make(&b, NULL), *rn = make(&n, NULL);
    struct compare_opts o;
    struct kp_err err = {{0}};
    struct compare *cmp;
    char path[] = "/tmp/kperf-thresholds-XXXXXX";
    int fd;
    FILE *f;
    (void)state;

    compare_opts_init(&o);
    assert_false(o.th[CMP_LOSS].value != 0.1 || !o.th[CMP_LOSS].absolute);
    assert_int_equal(cmp_thresholds_parse("node_cpu=40%,agent_cpu=35%,loss=0.5pp", o.th, &err), 0);
    assert_true(o.th[CMP_LOSS].absolute);
    assert_float_equal(o.th[CMP_LOSS].value, 0.5, 1e-12);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_int_equal(compare_regression_count(cmp), 0);
    compare_free(cmp);
    assert_int_equal(cmp_thresholds_parse("3%", o.th, &err), 0); /* every relative one */
    assert_float_equal(o.th[CMP_NODE_CPU].value, 3, 1e-12);
    assert_float_equal(o.th[CMP_LOSS].value, 0.5, 1e-12); /* absolute: kept */
    assert_int_equal(cmp_thresholds_parse("latncy=5%", o.th, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "unknown threshold 'latncy'"));
    assert_int_equal(cmp_thresholds_parse("loss=much", o.th, &err), -1);
    assert_int_equal(cmp_thresholds_parse("loss=5x", o.th, &err), -1);
    assert_int_equal(cmp_thresholds_parse("2", o.th, &err), -1);

    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs("# thresholds of the nightly gate\nnode_cpu: 40%\nagent_cpu: 35%\nretransmits: 3\n", f);
    fclose(f);
    compare_opts_init(&o);
    assert_int_equal(cmp_thresholds_load(path, o.th, &err), 0);
    assert_float_equal(o.th[CMP_AGENT_CPU].value, 35, 1e-12);
    assert_true(o.th[CMP_RETRANSMITS].absolute);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_int_equal(compare_regression_count(cmp), 0);
    compare_free(cmp);
    f = fopen(path, "w");
    fputs("jitter: [1, 2]\n", f);
    fclose(f);
    assert_int_equal(cmp_thresholds_load(path, o.th, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "jitter"));
    unlink(path);
    assert_int_equal(cmp_thresholds_load(path, o.th, &err), -1);
    report_free(rb);
    report_free(rn);
}

/* A row's report strings with terminal escapes never reach the table as control characters. */
static void test_compare_table_escapes_control_characters(void **state)
{
    struct spec b = {11, 4, 20, 9000, 1, 0, NULL, 0, 0};
    struct report *rb = make(&b, NULL), *rn = make(&b, NULL);
    struct compare_opts o;
    struct kp_err err = {{0}};
    struct compare *cmp;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    json_object_set_new(report_metadata(rn), "kube_proxy_mode",
                        json_string("ipvs\x1b]0;pwned\x07\r\u202e"));
    compare_opts_init(&o);
    cmp = compare_reports(rb, rn, &o, &err);
    assert_non_null(cmp);
    assert_int_equal(compare_render(cmp, REPORT_TABLE, f, &err), 0);
    fclose(f);
    assert_non_null(strstr(buf, "kube_proxy_mode: (absent) -> ipvs?]0;pwned???"));
    for (size_t i = 0; i < len; i++)
        assert_true(buf[i] == '\n' || (unsigned char)buf[i] >= 0x20);
    free(buf);
    compare_free(cmp);
    report_free(rb);
    report_free(rn);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_known_regression),
        cmocka_unit_test(test_compare_known_improvement),
        cmocka_unit_test(test_compare_pure_noise_is_within_noise),
        cmocka_unit_test(test_compare_few_samples_use_welch),
        cmocka_unit_test(test_compare_one_sample_uses_in_run_spread),
        cmocka_unit_test(test_compare_one_sample_gives_tail_percentiles_no_verdict),
        cmocka_unit_test(test_compare_lists_provenance_differences),
        cmocka_unit_test(test_compare_lists_placement_changes),
        cmocka_unit_test(test_compare_refuses_reports_without_common_rows),
        cmocka_unit_test(test_compare_row_failing_in_new_is_a_regression),
        cmocka_unit_test(test_compare_matches_rows_by_key_and_lists_missing),
        cmocka_unit_test(test_compare_loss_only_regression),
        cmocka_unit_test(test_compare_cpu_only_regression),
        cmocka_unit_test(test_compare_thresholds),
        cmocka_unit_test(test_compare_latency_under_load),
        cmocka_unit_test(test_compare_table_escapes_control_characters),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
