/* SPDX-License-Identifier: Apache-2.0 */
/* test_report.c - building a report from synthetic agent documents: rows and samples, merged
 * percentiles against the raw values, medians and statistics, strict validation of agent
 * input (also of a loaded report's samples), skips and errors, the JSON round trip and the
 * schema check of a written report. */
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
#include "controller/report/report.h"
#include "controller/report/report_aggregate.h"
#include "test/unit/fixture.h"
#include "test/unit/report_fixture.h"

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static const json_t *row_of(const struct report *rep, const char *test, bool reverse)
{
    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *r = report_row(rep, i);
        if (strcmp(json_string_value(json_object_get(r, "test")), test) == 0 &&
            json_is_true(json_object_get(r, "reverse")) == reverse)
            return r;
    }
    return NULL;
}

static double num(const json_t *o, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* Three TCP_RR samples with different medians (so averaging p99s would be wrong) and three
 * TCP_STREAM samples plus one reverse; raw latency values go to raw. */
static struct report *build(uint64_t *raw, size_t *nraw)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    uint64_t rng = 7;
    json_t *results = json_array();
    static const double medians[] = {20, 25, 60};
    static const double mbps[] = {9000, 9400, 9300};

    for (int s = 0; s < 3; s++) {
        json_array_append_new(results,
                              fx_latency_sample("TCP_RR", s, &rng, medians[s], 4000, raw, nraw));
        json_array_append_new(results, fx_stream_sample("TCP_STREAM", s, false, mbps[s], s));
    }
    json_array_append_new(results, fx_stream_sample("TCP_STREAM", 0, true, 5000, 0));
    json_t *doc = fx_agent_doc(results, NULL);
    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "same-node", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

static void test_report_rows_and_samples(void **state)
{
    struct report *rep = build(NULL, NULL);
    (void)state;
    assert_int_equal(report_row_count(rep), 3);
    assert_int_equal(json_array_size(json_object_get(row_of(rep, "TCP_RR", false), "samples")), 3);
    assert_int_equal(json_array_size(json_object_get(row_of(rep, "TCP_STREAM", false), "samples")),
                     3);
    assert_int_equal(json_array_size(json_object_get(row_of(rep, "TCP_STREAM", true), "samples")),
                     1);
    assert_string_equal(json_string_value(json_object_get(row_of(rep, "TCP_RR", false), "kind")),
                        "latency");
    assert_string_equal(
        json_string_value(json_object_get(row_of(rep, "TCP_STREAM", false), "status")), "ok");
    assert_int_equal(report_ok_count(rep), 3);
    assert_int_equal(report_error_count(rep), 0);
    report_free(rep);
}

static void test_report_percentiles_come_from_merged_histograms(void **state)
{
    uint64_t *raw = malloc(12000 * sizeof(*raw));
    size_t nraw = 0;
    struct report *rep = build(raw, &nraw);
    const json_t *row = row_of(rep, "TCP_RR", false), *agg = json_object_get(row, "aggregate");
    double p99_mean = 0;
    (void)state;

    assert_int_equal(nraw, 12000);
    qsort(raw, nraw, sizeof(*raw), cmp_u64);
    /* exact percentiles of all raw values, in microseconds: merged must be within 1% */
    double exact50 = raw[(size_t)(0.50 * nraw) - 1] / 1e3,
           exact99 = raw[(size_t)(0.99 * nraw) - 1] / 1e3;
    assert_float_equal(num(agg, "latency_us", "p50", NULL), exact50, exact50 * 0.01);
    assert_float_equal(num(agg, "latency_us", "p99", NULL), exact99, exact99 * 0.01);
    assert_float_equal(num(agg, "latency_us", "min", NULL), raw[0] / 1e3, 1e-6);
    assert_float_equal(num(agg, "latency_us", "max", NULL), raw[nraw - 1] / 1e3, 1e-6);
    /* and it is not the mean of the per-sample p99s */
    for (size_t i = 0; i < 3; i++)
        p99_mean +=
            num(json_array_get(json_object_get(row, "samples"), i), "latency_us", "p99", NULL) / 3;
    assert_true(fabs(p99_mean - exact99) > 0.05 * exact99);
    assert_int_equal((int)num(agg, "histogram", "count", NULL), 12000);
    free(raw);
    report_free(rep);
}

static void test_report_scalars_are_medians_with_stats(void **state)
{
    struct report *rep = build(NULL, NULL);
    const json_t *row = row_of(rep, "TCP_STREAM", false);
    const json_t *st = json_object_get(json_object_get(row, "stats"), "throughput_mbps");
    (void)state;
    assert_float_equal(num(row, "aggregate", "throughput_mbps", NULL), 9300, 1e-9);
    assert_float_equal(num(row, "aggregate", "tcp", "retransmits"), 1, 1e-9);
    /* 2 + 3 CPU seconds for 93 Gbit */
    assert_float_equal(num(row, "aggregate", "cpu_seconds_per_gbit", "client"), 2.0 / 93.0, 1e-9);
    assert_int_equal((int)num(st, "n", NULL, NULL), 3);
    assert_float_equal(num(st, "median", NULL, NULL), 9300, 1e-9);
    assert_float_equal(num(st, "mean", NULL, NULL), 9233.333333, 1e-5);
    assert_float_equal(num(st, "stddev", NULL, NULL), 208.166600, 1e-5);
    assert_float_equal(json_number_value(json_array_get(json_object_get(st, "ci95"), 0)),
                       9233.333333 - 4.303 * 208.1666 / sqrt(3), 1e-2);
    assert_false(json_is_true(json_object_get(st, "noisy")));
    /* the TCP_RR medians 20/25/60 spread widely: that row is noisy */
    assert_true(json_is_true(json_object_get(row_of(rep, "TCP_RR", false), "noisy")));
    /* one sample: no interval */
    st = json_object_get(json_object_get(row_of(rep, "TCP_STREAM", true), "stats"),
                         "throughput_mbps");
    assert_true(json_is_null(json_object_get(st, "ci95")));
    report_free(rep);
}

static void expect_rejected(json_t *doc, const char *needle)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};

    assert_int_equal(
        report_group_add_doc(report_group_get(rep, "pod-to-pod", "same-node", false), doc, &err),
        -1);
    if (!strstr(kp_err_msg(&err), needle))
        fail_msg("error '%s' does not mention '%s'", kp_err_msg(&err), needle);
    assert_null(strchr(kp_err_msg(&err), '\n'));
    assert_int_equal(report_row_count(rep), 0); /* nothing added */
    report_free(rep);
    json_decref(doc);
}

static void test_report_rejects_malformed_agent_docs(void **state)
{
    uint64_t rng = 1;
    json_t *s;
    (void)state;

    expect_rejected(json_pack("{s:s, s:[]}", "schema", "kperf.result/v2", "results"),
                    "kperf.result/v1");
    s = fx_agent_doc(json_array(), NULL);
    json_object_del(s, "results");
    expect_rejected(s, "results: missing");
    s = fx_stream_sample("TCP_STREAM", 0, false, 100, 0);
    json_object_set_new(s, "throughput_mbps", json_real(-1));
    expect_rejected(fx_agent_doc(json_pack("[o]", s), NULL), "results[0].throughput_mbps");
    s = fx_stream_sample("TCP_STREAM", 0, false, 100, 0);
    json_object_del(s, "test");
    expect_rejected(fx_agent_doc(json_pack("[o]", s), NULL), "results[0].test");
    s = fx_latency_sample("TCP_RR", 0, &rng, 20, 10, NULL, NULL);
    json_object_del(s, "histogram");
    expect_rejected(fx_agent_doc(json_pack("[o]", s), NULL), "results[0].histogram: missing");
    s = fx_latency_sample("TCP_RR", 0, &rng, 20, 10, NULL, NULL);
    json_object_set_new(json_object_get(s, "histogram"), "count", json_integer(11));
    expect_rejected(fx_agent_doc(json_pack("[o]", s), NULL), "results[0].histogram");
    s = fx_latency_sample("TCP_RR", 0, &rng, 20, 10, NULL, NULL);
    json_object_set_new(json_object_get(s, "latency_us"), "p99", json_string("fast"));
    expect_rejected(fx_agent_doc(json_pack("[o]", s), NULL), "results[0].latency_us.p99");
    s = fx_stream_sample("TCP_STREAM", 0, false, 100, 0);
    expect_rejected(fx_agent_doc(json_pack("[o, o]", s, json_pack("{s:i}", "sample", 0)), NULL),
                    "results[1]");
    s = fx_agent_doc(json_array(), NULL);
    json_object_set_new(s, "bad\nkey", json_true());
    expect_rejected(s, "bad key"); /* still one line */
    expect_rejected(fx_agent_doc(json_array(), json_pack("[{s:s}]", "test", "TCP_RR")),
                    "errors[0]");
    expect_rejected(fx_agent_doc(json_array(), json_pack("[{s:s, s:i, s:s}]", "test", "TCP_RR",
                                                         "sample", 0, "error", "")),
                    "errors[0].error: empty string");
}

static void test_report_skips_and_errors(void **state)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    json_t *doc = fx_agent_doc(
        json_pack("[o]", fx_stream_sample("TCP_STREAM", 0, false, 900, 0)),
        json_pack("[{s:s, s:i, s:s}]", "test", "TCP_STREAM", "sample", 1, "error", "reset"));
    (void)state;

    if (report_group_add_doc(report_group_get(rep, "host-to-host", "other-node", false), doc,
                             &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    report_group_skip_test(report_group_get(rep, "pod-to-service", "same-node", false), TEST_TCP_RR,
                           "no service address");
    report_group_skip(report_group_get(rep, "pod-to-external", "external", false),
                      "no external server");
    report_group_error_test(report_group_get(rep, "pod-to-pod", "same-node", false), TEST_TCP_CRR,
                            "agent timed out after 30s");
    report_group_error(report_group_get(rep, "pod-to-pod", "other-node", false),
                       "pod never became ready");
    report_group_skip_test(report_group_get(rep, "host-to-host", "other-node", true),
                           TEST_TCP_STREAM, "interrupted");
    report_group_error_test(report_group_get(rep, "pod-to-external", "external", true),
                            TEST_TCP_STREAM, "refused");
    doc = fx_agent_doc(json_array(), json_pack("[{s:s, s:i, s:s}]", "test", "TCP_STREAM_MULTI",
                                               "sample", 0, "error", "reset"));
    json_object_set_new(json_object_get(doc, "params"), "reverse", json_true());
    if (report_group_add_doc(report_group_get(rep, "pod-to-external", "external", false), doc,
                             &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    assert_int_equal(report_finish(rep, &err), 0);

    assert_int_equal(report_row_count(rep), 6);
    /* the reverse skip does not touch the measured forward row */
    assert_string_equal(json_string_value(json_object_get(report_row(rep, 3), "status")),
                        "skipped");
    assert_true(json_is_true(json_object_get(report_row(rep, 3), "reverse")));
    assert_null(json_object_get(report_row(rep, 0), "skip_reason"));
    assert_true(json_is_true(json_object_get(report_row(rep, 4), "reverse")));
    assert_true(json_is_true(json_object_get(report_row(rep, 5), "reverse")));
    assert_string_equal(json_string_value(json_object_get(report_row(rep, 5), "status")), "failed");
    assert_string_equal(json_string_value(json_object_get(report_row(rep, 0), "status")),
                        "partial");
    assert_string_equal(json_string_value(json_object_get(report_row(rep, 1), "status")),
                        "skipped");
    assert_string_equal(json_string_value(json_object_get(report_row(rep, 1), "kind")), "latency");
    assert_string_equal(json_string_value(json_object_get(report_row(rep, 2), "status")), "failed");
    assert_int_equal(json_array_size(report_skipped(rep)), 1);
    assert_int_equal(json_array_size(report_errors(rep)), 1);
    assert_int_equal(report_ok_count(rep), 1);
    assert_int_equal(report_error_count(rep), 5);
    report_free(rep);
}

static void test_report_json_round_trip(void **state)
{
    struct report *rep = build(NULL, NULL), *back;
    struct kp_err err = {{0}};
    json_t *a, *b;
    (void)state;

    json_object_set_new(report_metadata(rep), "backend", json_string("local"));
    a = report_to_json(rep);
    back = report_from_json(a, &err);
    assert_non_null(back);
    b = report_to_json(back);
    assert_true(json_equal(a, b));
    /* a modified copy is rejected with the path of the problem */
    json_object_set_new(json_array_get(json_object_get(b, "results"), 1), "status",
                        json_string("great"));
    assert_null(report_from_json(b, &err));
    assert_non_null(strstr(kp_err_msg(&err), "results[1].status"));
    json_object_set_new(b, "schema", json_string("kperf.report/v9"));
    assert_null(report_from_json(b, &err));
    assert_non_null(strstr(kp_err_msg(&err), "kperf.report/v9"));
    json_decref(a);
    json_decref(b);
    report_free(back);
    report_free(rep);
}

/* Loads a copy of the report JSON a with one sample changed by mutate; expects refusal
 * mentioning want. */
static void expect_load_refused(const json_t *a, void (*mutate)(json_t *sample), const char *want)
{
    json_t *b = json_deep_copy(a);
    json_t *row = json_array_get(json_object_get(b, "results"), 0);
    struct kp_err err = {{0}};

    mutate(json_array_get(json_object_get(row, "samples"), 0));
    assert_null(report_from_json(b, &err));
    if (!strstr(kp_err_msg(&err), want))
        fail_msg("error '%s' does not mention '%s'", kp_err_msg(&err), want);
    json_decref(b);
}

static void m_sample_extra(json_t *s)
{
    json_object_set_new(s, "extra", json_true());
}
static void m_sample_p99(json_t *s)
{
    json_object_set_new(json_object_get(s, "latency_us"), "p99", json_real(0));
}
static void m_sample_unknown_test(json_t *s)
{
    json_object_set_new(s, "test", json_string("FOO_RR"));
}
static void m_sample_no_node_cpu(json_t *s)
{
    json_object_del(s, "node_cpu");
}
static void m_sample_mtu(json_t *s)
{
    json_object_set_new(json_object_get(s, "mtu"), "client", json_string("big"));
}
static void m_sample_throughput_on_rr(json_t *s)
{
    json_object_set_new(s, "throughput_mbps", json_real(1));
}

/* A loaded report's samples are held to the agent's own schema (base/result.h), the mtu the
 * report keeps with each sample aside. */
static void test_report_load_checks_samples_with_the_agent_schema(void **state)
{
    struct report *rep = build(NULL, NULL), *back;
    struct kp_err err = {{0}};
    json_t *a = report_to_json(rep);
    const json_t *row = json_array_get(json_object_get(a, "results"), 0);
    (void)state;

    assert_string_equal(json_string_value(json_object_get(row, "test")), "TCP_RR");
    assert_true(
        json_is_object(json_object_get(json_array_get(json_object_get(row, "samples"), 0), "mtu")));
    back = report_from_json(a, &err);
    if (!back)
        fail_msg("%s", kp_err_msg(&err));
    report_free(back);
    expect_load_refused(a, m_sample_extra, "results[0].samples[0]: unexpected field \"extra\"");
    expect_load_refused(a, m_sample_p99, "results[0].samples[0].latency_us: p99 < p90");
    expect_load_refused(a, m_sample_unknown_test, "results[0].samples[0].test");
    expect_load_refused(a, m_sample_no_node_cpu, "results[0].samples[0].node_cpu: missing");
    expect_load_refused(a, m_sample_mtu, "results[0].samples[0].mtu.client");
    expect_load_refused(a, m_sample_throughput_on_rr,
                        "results[0].samples[0]: unexpected field \"throughput_mbps\"");
    json_decref(a);
    report_free(rep);
}

/* A row's kind comes from base/testkind.h, not from the spelling of the name. */
static void test_report_row_kind_follows_testkind(void **state)
{
    static const struct {
        const char *test, *kind;
    } want[] = {
        {"TCP_RR", "latency"},        {"TCP_CRR", "latency"},
        {"UDP_RR", "latency"},        {"TCP_STREAM", "throughput"},
        {"UDP_STREAM", "throughput"}, {"TCP_STREAM_MULTI", "throughput"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(report_kind_of_test(want[i].test), want[i].kind);
    assert_string_equal(report_kind_of_test("FOO_RR"), "throughput"); /* not a test */
}

static void test_report_ci_narrow_enough_for_samples_auto(void **state)
{
    struct report *rep = build(NULL, NULL);
    (void)state;
    /* 9000/9400/9300: half width 517 = 5.6% of the mean */
    assert_true(report_group_ci_narrow_enough(
        report_group_get(rep, "pod-to-pod", "same-node", false), TEST_TCP_STREAM, 6));
    assert_false(report_group_ci_narrow_enough(
        report_group_get(rep, "pod-to-pod", "same-node", false), TEST_TCP_STREAM, 5));
    assert_false(report_group_ci_narrow_enough(
        report_group_get(rep, "pod-to-pod", "same-node", true), TEST_TCP_STREAM, 50));
    assert_false(report_group_ci_narrow_enough(
        report_group_get(rep, "pod-to-pod", "other-node", false), TEST_TCP_STREAM, 50));
    report_free(rep);
}

/* Writes every format to a directory, loads report.json back, and checks it against
 * docs/report-schema.json with the stdlib-only validator (skipped without python3). */
static void test_report_write_dir_validates_against_schema(void **state)
{
    struct report *rep = build(NULL, NULL), *back;
    struct kp_err err = {{0}};
    char dir[] = "/tmp/kperf-report-test-XXXXXX", path[512], cmd[2048];
    const char *data = fixture_dir();
    static const char *const files[] = {"report.json", "report.md", "report.csv", "report.html"};
    (void)state;

    report_group_skip_test(report_group_get(rep, "pod-to-service", "same-node", false), TEST_TCP_RR,
                           "no service address");
    report_group_error(report_group_get(rep, "pod-to-pod", "other-node", false),
                       "pod never became ready");
    assert_int_equal(report_finish(rep, &err), 0);
    assert_non_null(mkdtemp(dir));
    assert_int_equal(report_write_dir(rep, dir, &err), 0);
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        assert_int_equal(access(path, R_OK), 0);
    }
    snprintf(path, sizeof(path), "%s/report.json", dir);
    back = report_load(path, &err);
    assert_non_null(back);
    assert_int_equal(report_row_count(back), 4);
    {
        json_t *a = report_to_json(rep), *b = report_to_json(back);
        assert_true(json_equal(a, b)); /* the file round trip loses nothing */
        json_decref(a);
        json_decref(b);
    }
    if (data && system("command -v python3 >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof(cmd),
                 "python3 %s/../../tools/validate_report.py %s/../../../docs/report-schema.json %s",
                 data, data, path);
        assert_int_equal(system(cmd), 0);
    }
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
    report_free(back);
    report_free(rep);
}

static void test_report_load_errors_are_one_line(void **state)
{
    struct kp_err err = {{0}};
    char path[] = "/tmp/kperf-report-bad-XXXXXX";
    int fd = mkstemp(path);
    (void)state;

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "{\"schema\": 1", 12), 12);
    close(fd);
    assert_null(report_load(path, &err));
    assert_non_null(strstr(kp_err_msg(&err), "invalid JSON"));
    assert_null(strchr(kp_err_msg(&err), '\n'));
    {
        /* the loader walks the top level and results[] itself: its own errors are clear too */
        static const char *const bad[][2] = {
            {"[1, 2]", "expected a JSON object"},
            {"{\"schema\": \"kperf.report/v1\"} x", "end of file expected"},
            {"{\"results\": [], \"results\": []}", "duplicate object key"},
            {"{\"results\": [,]}", "invalid JSON at line 1"},
            {"{\"results\": {}}", "results: expected an array"},
            {"{\"results\": [{}]}", "results[0]"},
            {"{\"results\": []}", "no \"schema\" field"},
            {"{\"schema\": \"kperf.report/v1\",\n\"metadata\": {}\n\"results\": []}", "at line 3"},
            /* the provenance facts compare reads (issue 31) */
            {"{\"schema\": \"kperf.report/v1\", \"metadata\": {\"kube_proxy_mode\": 1}, "
             "\"results\": []}",
             "metadata.kube_proxy_mode: expected a string"},
            {"{\"schema\": \"kperf.report/v1\", \"metadata\": {\"cni\": {\"settings\": {}}}, "
             "\"results\": []}",
             "metadata.cni.name: missing"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            fputs(bad[i][0], f);
            fclose(f);
            assert_null(report_load(path, &err));
            if (!strstr(kp_err_msg(&err), bad[i][1]))
                fail_msg("%s: '%s' has no '%s'", bad[i][0], kp_err_msg(&err), bad[i][1]);
            assert_null(strchr(kp_err_msg(&err), '\n'));
        }
    }
    unlink(path);
    assert_null(report_load("/nonexistent/report.json", &err));
    assert_non_null(strstr(kp_err_msg(&err), "cannot read"));
    assert_null(report_load("/tmp", &err)); /* e.g. the --output-dir instead of its report.json */
    assert_string_equal(kp_err_msg(&err), "/tmp is a directory, not a report file");
}

/* Documents printed by the real kperf-agent (loopback, 300 ms, 2 samples; reverse stream)
 * are accepted and aggregated: merged histogram counts add up to the samples' ops. */
/* A cluster's MTUs come from what the agents saw: pod-to-pod servers give the pod MTU,
 * host-to-host servers the server node's, other-node host clients the client node's; what the
 * backend already set stays. */
static void test_report_fills_mtus_from_agents(void **state)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    static const struct {
        const char *scenario, *placement;
        int client, server;
    } docs[] = {
        {"pod-to-pod", "same-node", 8951, 8951},
        {"host-to-host", "same-node", 9001, 9001},
        {"host-to-host", "other-node", 1500, 9001},
    };
    json_t *md = report_metadata(rep), *nodes = json_array();
    (void)state;

    json_array_append_new(nodes, json_pack("{s:s, s:s}", "name", "a", "role", "server"));
    json_array_append_new(nodes, json_pack("{s:s, s:s}", "name", "b", "role", "client"));
    json_array_append_new(nodes,
                          json_pack("{s:s, s:s, s:i}", "name", "c", "role", "server", "mtu", 1234));
    json_object_set_new(md, "nodes", nodes);
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        json_t *results = json_array();
        json_array_append_new(results, fx_stream_sample("TCP_STREAM", 0, false, 9000, 0));
        json_t *doc = fx_agent_doc(results, NULL);
        json_object_set_new(
            doc, "mtu",
            json_pack("{s:i, s:i}", "client", docs[i].client, "server", docs[i].server));
        if (report_group_add_doc(report_group_get(rep, docs[i].scenario, docs[i].placement, false),
                                 doc, &err) != 0)
            fail_msg("%s", kp_err_msg(&err));
        json_decref(doc);
    }
    assert_int_equal(report_finish(rep, &err), 0);
    assert_int_equal(num(md, "mtu", "pod", NULL), 8951);
    assert_int_equal(num(md, "mtu", "host", NULL), 9001);
    assert_int_equal(num(json_array_get(nodes, 0), "mtu", NULL, NULL), 9001);
    assert_int_equal(num(json_array_get(nodes, 1), "mtu", NULL, NULL), 1500);
    assert_int_equal(num(json_array_get(nodes, 2), "mtu", NULL, NULL), 1234);
    report_free(rep);
}

static void test_report_real_agent_documents(void **state)
{
    static const char *const files[] = {"agent-loopback.json", "agent-loopback-reverse.json"};
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    const json_t *row;
    double ops = 0;
    size_t i;
    const json_t *s;
    (void)state;

    for (size_t k = 0; k < 2; k++) {
        json_t *doc = fixture_json("report", files[k]);
        if (report_group_add_doc(report_group_get(rep, k ? "pod-to-external" : "pod-to-pod",
                                                  k ? "external" : "same-node", false),
                                 doc, &err) != 0)
            fail_msg("%s", kp_err_msg(&err));
        json_decref(doc);
    }
    assert_int_equal(report_finish(rep, &err), 0);
    assert_int_equal(report_row_count(rep), 4);
    row = row_of(rep, "TCP_RR", false);
    json_array_foreach(json_object_get(row, "samples"), i, s)
    {
        ops += num(s, "ops", NULL, NULL);
    }
    assert_float_equal(num(row, "aggregate", "histogram", "count"), ops, 0);
    assert_true(num(row, "aggregate", "latency_us", "p50") <=
                num(row, "aggregate", "latency_us", "p99"));
    assert_true(json_is_object(
        json_object_get(json_object_get(row_of(rep, "UDP_STREAM", false), "aggregate"), "udp")));
    assert_non_null(row_of(rep, "TCP_STREAM", true));
    assert_true(num(row_of(rep, "TCP_STREAM_MULTI", false), "aggregate", "throughput_mbps", NULL) >
                0);
    report_free(rep);
}

/* Latency under load: the loaded row's aggregate holds its load (median of the samples), the
 * idle TCP_RR's percentiles of the same place, and the increase and ratio against them; a
 * place without an idle TCP_RR gets the load only. */
static void test_report_loaded_row_against_idle(void **state)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    uint64_t rng = 7;
    const json_t *idle, *loaded, *other;
    json_t *doc;
    double il, ll;
    (void)state;

    doc = fx_agent_doc(json_pack("[o, o, o, o]",
                                 fx_latency_sample("TCP_RR", 0, &rng, 20, 2000, NULL, NULL),
                                 fx_loaded_sample(0, &rng, 80, 2000, 9000.0),
                                 fx_loaded_sample(1, &rng, 90, 2000, 9500.0),
                                 fx_loaded_sample(2, &rng, 85, 2000, 9100.0)),
                       NULL);
    assert_int_equal(
        report_group_add_doc(report_group_get(rep, "pod-to-pod", "same-node", false), doc, &err),
        0);
    json_decref(doc);
    doc = fx_agent_doc(json_pack("[o]", fx_loaded_sample(0, &rng, 50, 2000, 5000.0)), NULL);
    assert_int_equal(
        report_group_add_doc(report_group_get(rep, "pod-to-pod", "other-node", false), doc, &err),
        0);
    json_decref(doc);
    assert_int_equal(report_finish(rep, &err), 0);

    idle = row_of(rep, "TCP_RR", false);
    loaded = report_row(rep, 1);
    other = report_row(rep, 2);
    assert_string_equal(json_string_value(json_object_get(loaded, "test")), "TCP_RR_LOADED");
    assert_string_equal(json_string_value(json_object_get(loaded, "kind")), "latency");
    assert_string_equal(json_string_value(json_object_get(loaded, "status")), "ok");
    assert_float_equal(num(loaded, "aggregate", "load", "throughput_mbps"), 9100.0, 1e-9);
    assert_float_equal(num(loaded, "aggregate", "load", "streams"), 4, 1e-9);
    for (size_t k = 0; k < 4; k++) {
        static const char *const p[] = {"p50", "p90", "p99", "mean"};
        il = num(json_object_get(idle, "aggregate"), "latency_us", p[k], NULL);
        ll = num(json_object_get(loaded, "aggregate"), "latency_us", p[k], NULL);
        assert_float_equal(num(json_object_get(loaded, "aggregate"), "idle_latency_us", p[k], NULL),
                           il, 1e-9);
        assert_float_equal(
            num(json_object_get(loaded, "aggregate"), "latency_increase_us", p[k], NULL), ll - il,
            1e-9);
        assert_float_equal(num(json_object_get(loaded, "aggregate"), "latency_ratio", p[k], NULL),
                           ll / il, 1e-9);
    }
    /* ~85 us loaded vs ~20 us idle */
    assert_in_range((long)num(loaded, "aggregate", "latency_increase_us", "p50"), 55, 75);
    /* other-node has no idle TCP_RR: the load, no comparison */
    assert_float_equal(num(other, "aggregate", "load", "throughput_mbps"), 5000.0, 1e-9);
    assert_null(json_object_get(json_object_get(other, "aggregate"), "latency_increase_us"));
    assert_null(json_object_get(json_object_get(other, "aggregate"), "idle_latency_us"));
    report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_rows_and_samples),
        cmocka_unit_test(test_report_percentiles_come_from_merged_histograms),
        cmocka_unit_test(test_report_scalars_are_medians_with_stats),
        cmocka_unit_test(test_report_rejects_malformed_agent_docs),
        cmocka_unit_test(test_report_skips_and_errors),
        cmocka_unit_test(test_report_json_round_trip),
        cmocka_unit_test(test_report_load_checks_samples_with_the_agent_schema),
        cmocka_unit_test(test_report_row_kind_follows_testkind),
        cmocka_unit_test(test_report_ci_narrow_enough_for_samples_auto),
        cmocka_unit_test(test_report_write_dir_validates_against_schema),
        cmocka_unit_test(test_report_load_errors_are_one_line),
        cmocka_unit_test(test_report_real_agent_documents),
        cmocka_unit_test(test_report_fills_mtus_from_agents),
        cmocka_unit_test(test_report_loaded_row_against_idle),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
