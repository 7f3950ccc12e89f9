/* SPDX-License-Identifier: Apache-2.0 */
/* test_result.c - kperf.result/v1: a real agent document parses and round-trips; each kind of
 * malformed document is rejected naming the offending path; the emission helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/unit/test_assert.h"

#include "base/hist.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/result.h"
#include "test/unit/fixture.h"

static char *doc_text;
static size_t doc_len;

static int load(void **state)
{
    (void)state;

    doc_text = fixture_text("result", "valid.json", &doc_len);
    kp_alloc_init_json();
    return 0;
}

static int unload(void **state)
{
    (void)state;
    free(doc_text);
    return 0;
}

static json_t *valid_doc(void)
{
    json_t *doc = NULL;
    struct kp_err err;
    kp_err_clear(&err);
    if (result_parse(doc_text, doc_len, &doc, &err) != 0)
        fail_msg("valid.json rejected: %s", kp_err_msg(&err));
    return doc;
}

static double num_of(const json_t *r, const char *path)
{
    double v = -1;
    (void)result_number(r, path, &v);
    return v;
}

static void test_result_real_document_parses(void **state)
{
    json_t *doc = valid_doc();
    const json_t *rr, *udp;
    struct hist *h;
    struct kp_err err;
    double v;
    (void)state;

    assert_int_equal(result_count(doc), 6);
    assert_int_equal(result_error_count(doc), 1);
    assert_string_equal(result_test(result_error_get(doc, 0)), "UDP_STREAM");
    rr = result_get(doc, 0);
    assert_string_equal(result_test(rr), "TCP_RR");
    assert_int_equal(result_number(rr, "latency_us.p50", &v), 0);
    assert_true(v > 0);
    assert_int_equal(result_number(rr, "throughput_mbps", &v), -1); /* not for RR */
    assert_int_equal(result_number(rr, "node_cpu.client.idle_pct", &v), 0);
    assert_int_equal(result_number(rr, "latency_us..p50", &v), -1);
    kp_err_clear(&err);
    h = result_histogram(rr, &err);
    assert_non_null(h);
    assert_int_equal(result_number(rr, "ops", &v), 0);
    assert_int_equal(hist_count(h), (uint64_t)v);
    hist_free(h);
    assert_null(result_histogram(result_get(doc, 2), &err));
    udp = result_get(doc, 5);
    assert_int_equal(result_number(udp, "udp.loss_pct", &v), 0);
    assert_null(result_get(doc, 6));
    json_decref(doc);
}

static void test_result_round_trip(void **state)
{
    json_t *doc = valid_doc(), *again = NULL;
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(result_parse(text, strlen(text), &again, &err), 0);
    assert_true(json_equal(doc, again));
    free(text);
    json_decref(doc);
    json_decref(again);
}

/* Applies one mutation to a fresh valid document and expects rejection mentioning `want`. */
static void expect_invalid(void (*mutate)(json_t *doc), const char *want)
{
    json_t *doc = valid_doc();
    struct kp_err err;

    mutate(doc);
    kp_err_clear(&err);
    if (result_validate(doc, &err) == 0)
        fail_msg("mutation for '%s' was accepted", want);
    if (!strstr(kp_err_msg(&err), want))
        fail_msg("error '%s' does not mention '%s'", kp_err_msg(&err), want);
    json_decref(doc);
}

static json_t *res(json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "results"), i);
}

static void m_schema(json_t *d)
{
    json_object_set_new(d, "schema", json_string("kperf.result/v2"));
}
static void m_no_latency(json_t *d)
{
    json_object_del(res(d, 0), "latency_us");
}
static void m_negative_ops(json_t *d)
{
    json_object_set_new(res(d, 0), "ops", json_integer(-1));
}
static void m_string_p50(json_t *d)
{
    json_object_set_new(json_object_get(res(d, 0), "latency_us"), "p50", json_string("fast"));
}
static void m_p99_below_p50(json_t *d)
{
    json_object_set_new(json_object_get(res(d, 0), "latency_us"), "p99", json_real(0.0));
}
static void m_latency_on_stream(json_t *d)
{
    json_object_set(res(d, 2), "latency_us", json_object_get(res(d, 0), "latency_us"));
}
static void m_unknown_top(json_t *d)
{
    json_object_set_new(d, "extra", json_true());
}
static void m_loss_over_100(json_t *d)
{
    json_object_set_new(json_object_get(res(d, 5), "udp"), "loss_pct", json_real(150));
}
static void m_unknown_test(json_t *d)
{
    json_object_set_new(res(d, 0), "test", json_string("TCP_XX"));
}
static void m_ops_vs_hist(json_t *d)
{
    json_object_set_new(res(d, 0), "ops", json_integer(1));
}
static void m_hist_layout(json_t *d)
{
    json_object_set_new(json_object_get(res(d, 0), "histogram"), "layout", json_string("x"));
}
static void m_node_cpu_missing(json_t *d)
{
    json_object_del(json_object_get(json_object_get(res(d, 1), "node_cpu"), "client"), "user_pct");
}
static void m_port(json_t *d)
{
    json_object_set_new(json_object_get(d, "server"), "port", json_integer(70000));
}
static void m_error_entry(json_t *d)
{
    json_object_del(json_array_get(json_object_get(d, "errors"), 0), "error");
}
static void m_lost_over_sent(json_t *d)
{
    json_t *u = json_object_get(res(d, 5), "udp");
    json_object_set_new(u, "lost",
                        json_integer(json_integer_value(json_object_get(u, "sent")) + 1));
}
static void m_interval_backwards(json_t *d)
{
    json_t *iv = json_array_get(json_object_get(res(d, 2), "intervals"), 0);
    json_object_set_new(iv, "start_s", json_real(5.0));
}
static void m_negative_duration(json_t *d)
{
    json_object_set_new(res(d, 3), "duration_s", json_real(-1.0));
}
static void m_tcp_on_udp(json_t *d)
{
    json_object_set(res(d, 5), "tcp", json_object_get(res(d, 2), "tcp"));
}
static void m_results_not_array(json_t *d)
{
    json_object_set_new(d, "results", json_object());
}
static void m_streams_missing_bytes(json_t *d)
{
    json_object_del(json_array_get(json_object_get(res(d, 3), "streams"), 1), "bytes");
}
/* per-stream thread CPU (protocol version 3): each side optional, never negative */
static void m_stream_cpu(json_t *d)
{
    json_t *st = json_array_get(json_object_get(res(d, 3), "streams"), 0);

    json_object_set_new(st, "cpu_seconds", json_pack("{s:f, s:f}", "client", 0.2, "server", 0.25));
    json_object_set_new(st, "cpu", json_pack("{s:i}", "client", 1)); /* server: on the loop */
}
static void m_stream_cpu_negative(json_t *d)
{
    m_stream_cpu(d);
    json_object_set_new(json_array_get(json_object_get(res(d, 3), "streams"), 0), "cpu",
                        json_pack("{s:i, s:i}", "client", 1, "server", -1));
}
static void m_stream_cpu_unknown_side(json_t *d)
{
    m_stream_cpu(d);
    json_object_set_new(json_array_get(json_object_get(res(d, 3), "streams"), 0), "cpu",
                        json_pack("{s:i}", "both", 1));
}
/* how the client placed a TCP stream test's streams (protocol version 5) */
static void m_placement(json_t *d)
{
    json_object_set_new(res(d, 3), "placement",
                        json_pack("{s:b, s:i, s:i}", "same_kernel", 1, "client_threads", 1,
                                  "msg_size_bytes", 65536));
}
static void m_placement_threads_text(json_t *d)
{
    m_placement(d);
    json_object_set_new(json_object_get(res(d, 3), "placement"), "client_threads",
                        json_string("1"));
}
/* low_unsent_bytes (protocol version 6) is optional: version 5 documents lack it */
static void m_placement_low_unsent(json_t *d)
{
    m_placement(d);
    json_object_set_new(json_object_get(res(d, 3), "placement"), "low_unsent_bytes",
                        json_integer(131072));
}
static void m_placement_low_unsent_negative(json_t *d)
{
    m_placement(d);
    json_object_set_new(json_object_get(res(d, 3), "placement"), "low_unsent_bytes",
                        json_integer(-1));
}
static void m_placement_on_udp_stream(json_t *d)
{
    m_placement(d);
    json_object_set(res(d, 5), "placement", json_object_get(res(d, 3), "placement"));
}
static void m_reverse_not_bool(json_t *d)
{
    json_object_set_new(res(d, 0), "reverse", json_integer(0));
}

static void m_tcp_on_crr(json_t *d)
{
    json_object_set(res(d, 1), "tcp", json_object_get(res(d, 0), "tcp"));
}
static void m_streams_on_udp_stream(json_t *d)
{
    json_object_set(res(d, 5), "streams", json_object_get(res(d, 2), "streams"));
}
static void m_test_lower_case(json_t *d)
{
    json_object_set_new(res(d, 0), "test", json_string("tcp_rr"));
}
static void m_error_empty(json_t *d)
{
    json_object_set_new(json_array_get(json_object_get(d, "errors"), 0), "error", json_string(""));
}
static void m_error_test_empty(json_t *d)
{
    json_object_set_new(json_array_get(json_object_get(d, "errors"), 0), "test", json_string(""));
}
static void m_too_many_intervals(json_t *d)
{
    json_t *ivs = json_object_get(res(d, 2), "intervals");
    json_t *iv = json_array_get(ivs, 0);

    while (json_array_size(ivs) <= RESULT_MAX_ENTRIES)
        json_array_append(ivs, iv); /* the same object again: cheap */
}

/* server_facts (protocol version 4, --server-facts): every field optional, nothing unknown */
static void m_server_facts(json_t *d)
{
    json_object_set_new(
        d, "server_facts",
        json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:{s:[{s:s, s:s, s:i, s:i, s:b}], s:{s:s}}}",
                  "hostname", "ip-10-0-0-7", "kernel", "6.1.0", "machine", "aarch64", "cpus", 8,
                  "cpu_model", "Xeon", "interface", "ens5", "net", "nics", "name", "ens5", "driver",
                  "ena", "speed_mbps", 25000, "mtu", 9001, "gro", 1, "sysctls",
                  "tcp_congestion_control", "cubic"));
}
static void m_server_facts_unknown(json_t *d)
{
    m_server_facts(d);
    json_object_set_new(json_object_get(d, "server_facts"), "password", json_string("x"));
}
static void m_server_facts_nic_mtu_text(json_t *d)
{
    m_server_facts(d);
    json_object_set_new(
        json_array_get(
            json_object_get(json_object_get(json_object_get(d, "server_facts"), "net"), "nics"), 0),
        "mtu", json_string("9001"));
}

/* agent.machine (uname's machine) is optional, but a string when present */
static void m_agent_machine_number(json_t *d)
{
    json_object_set_new(json_object_get(d, "agent"), "machine", json_integer(64));
}

static void test_result_rejects_malformed_documents(void **state)
{
    (void)state;
    expect_invalid(m_schema, "schema");
    expect_invalid(m_no_latency, "results[0].latency_us: missing");
    expect_invalid(m_negative_ops, "results[0].ops");
    expect_invalid(m_string_p50, "results[0].latency_us.p50");
    expect_invalid(m_p99_below_p50, "p99 < p90");
    expect_invalid(m_latency_on_stream, "results[2]: unexpected field \"latency_us\"");
    expect_invalid(m_unknown_top, "unexpected field \"extra\"");
    expect_invalid(m_loss_over_100, "results[5].udp.loss_pct");
    expect_invalid(m_unknown_test, "results[0].test");
    expect_invalid(m_ops_vs_hist, "ops differs from histogram.count");
    expect_invalid(m_hist_layout, "results[0].histogram");
    expect_invalid(m_node_cpu_missing, "results[1].node_cpu.client.user_pct: missing");
    expect_invalid(m_port, "server.port");
    expect_invalid(m_error_entry, "errors[0].error: missing");
    expect_invalid(m_lost_over_sent, "lost > sent");
    expect_invalid(m_interval_backwards, "results[2].intervals[0]");
    expect_invalid(m_negative_duration, "results[3].duration_s");
    expect_invalid(m_tcp_on_udp, "unexpected field \"tcp\"");
    expect_invalid(m_results_not_array, "results");
    expect_invalid(m_streams_missing_bytes, "results[3].streams[1].bytes: missing");
    expect_invalid(m_reverse_not_bool, "results[0].reverse");
    expect_invalid(m_stream_cpu_negative, "results[3].streams[0].cpu.server");
    expect_invalid(m_stream_cpu_unknown_side, "unexpected field \"both\"");
    expect_invalid(m_placement_threads_text, "results[3].placement.client_threads");
    expect_invalid(m_placement_low_unsent_negative, "results[3].placement.low_unsent_bytes");
    expect_invalid(m_placement_on_udp_stream, "results[5]: unexpected field \"placement\"");
    /* which fields a test carries follows from base/testkind.h */
    expect_invalid(m_tcp_on_crr, "results[1]: unexpected field \"tcp\"");
    expect_invalid(m_streams_on_udp_stream, "results[5]: unexpected field \"streams\"");
    expect_invalid(m_test_lower_case, "unknown test");
    /* refused by the report's own agent checks before they were merged into result.c */
    expect_invalid(m_error_empty, "errors[0].error: empty string");
    expect_invalid(m_error_test_empty, "errors[0].test: empty string");
    expect_invalid(m_too_many_intervals, "results[2].intervals: more than 100000 entries");
    expect_invalid(m_server_facts_unknown, "server_facts: unexpected field \"password\"");
    expect_invalid(m_server_facts_nic_mtu_text, "server_facts.net.nics[0].mtu");
    expect_invalid(m_agent_machine_number, "agent.machine");
}

static void test_result_stream_cpu_accepted(void **state)
{
    json_t *doc = valid_doc();
    struct kp_err err;
    (void)state;

    m_stream_cpu(doc);
    kp_err_clear(&err);
    if (result_validate(doc, &err) != 0)
        fail_msg("per-stream cpu refused: %s", kp_err_msg(&err));
    m_server_facts(doc);
    if (result_validate(doc, &err) != 0)
        fail_msg("server_facts refused: %s", kp_err_msg(&err));
    m_placement(doc);
    if (result_validate(doc, &err) != 0)
        fail_msg("placement refused: %s", kp_err_msg(&err));
    m_placement_low_unsent(doc);
    if (result_validate(doc, &err) != 0)
        fail_msg("placement with low_unsent_bytes refused: %s", kp_err_msg(&err));
    json_decref(doc);
}

static void test_result_parse_rejects_bad_text(void **state)
{
    static const char dup[] = "{\"schema\":\"kperf.result/v1\",\"schema\":\"kperf.result/v1\"}";
    json_t *doc = (json_t *)1;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(result_parse(dup, sizeof(dup) - 1, &doc, &err), -1);
    assert_null(doc);
    assert_int_equal(result_parse("not json", 8, &doc, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "not JSON"));
    assert_int_equal(result_parse(doc_text, doc_len / 2, &doc, &err), -1);
    assert_int_equal(result_parse("[]", 2, &doc, &err), -1);
    /* the size cap is checked before the text is read */
    assert_int_equal(result_parse("{}", (size_t)RESULT_MAX_BYTES + 1, &doc, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "limit"));
}

static void test_result_latency_json_from_hist(void **state)
{
    struct hist *h = hist_new();
    json_t *j;
    double v;
    (void)state;

    for (uint64_t us = 1; us <= 1000; us++)
        hist_record(h, us * 1000);
    j = result_latency_json(h);
    assert_int_equal(result_number(j, "min", &v), 0);
    assert_double_exact(v, 1.0);
    assert_int_equal(result_number(j, "max", &v), 0);
    assert_double_exact(v, 1000.0);
    assert_int_equal(result_number(j, "mean", &v), 0);
    assert_true(v > 500.49 && v < 500.51);
    assert_int_equal(result_number(j, "p50", &v), 0);
    assert_true(v > 495 && v < 505);
    assert_int_equal(result_number(j, "p999", &v), 0);
    assert_true(v > 989 && v <= 1000);
    json_decref(j);
    hist_free(h);
}

static void test_result_node_cpu_percentages(void **state)
{
    const uint64_t d[8] = {8, 2, 20, 60, 0, 0, 10, 0};
    const uint64_t zero[8] = {0};
    json_t *j = result_node_cpu_json(d);
    double v;
    (void)state;

    assert_int_equal(result_number(j, "user_pct", &v), 0);
    assert_true(v > 9.99 && v < 10.01); /* user includes nice */
    assert_int_equal(result_number(j, "system_pct", &v), 0);
    assert_true(v > 19.99 && v < 20.01);
    assert_int_equal(result_number(j, "softirq_pct", &v), 0);
    assert_true(v > 9.99 && v < 10.01);
    assert_int_equal(result_number(j, "idle_pct", &v), 0);
    assert_true(v > 59.99 && v < 60.01);
    json_decref(j);
    j = result_node_cpu_json(zero);
    assert_int_equal(result_number(j, "idle_pct", &v), 0);
    assert_double_exact(v, 0.0);
    json_decref(j);
}

static void test_result_aggregates_merge_samples(void **state)
{
    json_t *doc = valid_doc(), *copy, *agg;
    json_t *results = json_object_get(doc, "results");
    struct kp_err err;
    double ops, v, p1, p2;
    (void)state;

    /* a second TCP_RR sample: the same figures again, with ops_per_sec doubled */
    copy = json_deep_copy(json_array_get(results, 0));
    json_object_set_new(copy, "sample", json_integer(1));
    p1 = json_number_value(json_object_get(copy, "ops_per_sec"));
    json_object_set_new(copy, "ops_per_sec", json_real(2 * p1));
    json_array_append_new(results, copy);
    kp_err_clear(&err);
    assert_int_equal(result_add_aggregates(doc, &err), 0);
    assert_int_equal(result_validate(doc, &err), 0);
    assert_int_equal(json_array_size(json_object_get(doc, "aggregates")), 6);
    agg = json_array_get(json_object_get(doc, "aggregates"), 0);
    assert_string_equal(result_test(agg), "TCP_RR");
    assert_int_equal(json_integer_value(json_object_get(agg, "samples")), 2);
    assert_int_equal(result_number(result_get(doc, 0), "ops", &ops), 0);
    assert_int_equal(result_number(agg, "ops", &v), 0);
    assert_double_exact(v, 2 * ops);
    assert_int_equal(result_number(agg, "histogram.count", &v), 0);
    assert_double_exact(v, 2 * ops);
    assert_int_equal(result_number(agg, "sample_spread.min", &v), 0);
    assert_double_exact(v, p1);
    assert_int_equal(result_number(agg, "sample_spread.max", &v), 0);
    assert_double_exact(v, 2 * p1);
    assert_int_equal(result_number(agg, "ops_per_sec", &p2), 0);
    assert_true(p2 > 1.49 * p1 && p2 < 1.51 * p1);
    /* min latency of the merge equals the sample's: the same values twice */
    assert_int_equal(result_number(agg, "latency_us.min", &v), 0);
    assert_double_exact(v, num_of(result_get(doc, 0), "latency_us.min"));
    agg = json_array_get(json_object_get(doc, "aggregates"), 5);
    assert_string_equal(result_test(agg), "UDP_STREAM");
    assert_int_equal(result_number(agg, "udp.loss_pct", &v), 0);
    assert_null(result_aggregate(doc, "TCP_RR", 1, &err)); /* no reverse TCP_RR sample */
    json_object_set_new(json_array_get(json_object_get(doc, "aggregates"), 1), "samples",
                        json_integer(0));
    assert_int_equal(result_validate(doc, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "aggregates[1].samples"));
    json_decref(doc);
}

/* the first answered packet (pod network readiness): an optional number, nothing else */
static void test_result_first_answer_time(void **state)
{
    json_t *doc = valid_doc();
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(result_validate(doc, &err), 0);
    json_object_set_new(doc, "first_answer_unix_s", json_real(1764624000.123456));
    assert_int_equal(result_validate(doc, &err), 0);
    json_object_set_new(doc, "first_answer_unix_s", json_string("now"));
    assert_int_equal(result_validate(doc, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "first_answer_unix_s"));
    json_object_set_new(doc, "first_answer_unix_s", json_real(-1));
    assert_int_equal(result_validate(doc, &err), -1);
    json_decref(doc);
}

static void test_result_validate_entry_alone(void **state)
{
    json_t *doc = valid_doc(), *entry;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    for (size_t i = 0; i < result_count(doc); i++)
        if (result_validate_entry(result_get(doc, i), "results[0].samples[1]", &err) != 0)
            fail_msg("entry %zu: %s", i, kp_err_msg(&err));
    entry = json_deep_copy(result_get(doc, 0));
    json_object_set_new(entry, "mtu", json_object()); /* a document field, not an entry's */
    assert_int_equal(result_validate_entry(entry, "results[0].samples[1]", &err), -1);
    assert_string_equal(kp_err_msg(&err), "results[0].samples[1]: unexpected field \"mtu\"");
    json_object_del(entry, "mtu");
    json_object_set_new(json_object_get(entry, "latency_us"), "p50", json_string("fast"));
    assert_int_equal(result_validate_entry(entry, "results[0].samples[1]", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "results[0].samples[1].latency_us.p50"));
    assert_int_equal(result_validate_entry(json_object_get(doc, "params"), "x", &err), -1);
    json_decref(entry);
    json_decref(doc);
}

/* TCP_RR_LOADED: a TCP_RR entry plus load{} (required, and only there); aggregates sum the
 * load's bytes and average its Mb/s. */
static void test_result_loaded_entry_needs_its_load(void **state)
{
    json_t *doc = valid_doc(), *entry, *load, *agg;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    entry = json_deep_copy(result_get(doc, 0)); /* TCP_RR */
    load = json_pack("{s:s, s:i, s:f, s:I, s:f, s:i}", "test", "TCP_STREAM_MULTI", "streams", 4,
                     "duration_s", 1.2, "bytes", (json_int_t)1500000000, "throughput_mbps", 10000.0,
                     "retransmits", 3);
    json_object_set(entry, "load", load);
    assert_int_equal(result_validate_entry(entry, "r", &err), -1);
    assert_string_equal(kp_err_msg(&err), "r: unexpected field \"load\"");
    json_object_set_new(entry, "test", json_string("TCP_RR_LOADED"));
    assert_int_equal(result_validate_entry(entry, "r", &err), 0);
    json_object_del(entry, "load");
    assert_int_equal(result_validate_entry(entry, "r", &err), -1);
    assert_string_equal(kp_err_msg(&err), "r.load: missing");
    json_object_set_new(load, "test", json_string("TCP_STREAM"));
    json_object_set(entry, "load", load);
    assert_int_equal(result_validate_entry(entry, "r", &err), -1);
    assert_string_equal(kp_err_msg(&err), "r.load.test: the load is TCP_STREAM_MULTI");
    json_object_set_new(load, "test", json_string("TCP_STREAM_MULTI"));

    /* two samples: bytes summed, Mb/s averaged */
    json_array_append_new(json_object_get(doc, "results"), json_deep_copy(entry));
    json_object_set_new(entry, "sample", json_integer(1));
    json_object_set_new(load, "throughput_mbps", json_real(12000.0));
    json_array_append_new(json_object_get(doc, "results"), json_deep_copy(entry));
    agg = result_aggregate(doc, "TCP_RR_LOADED", 0, &err);
    if (!agg)
        fail_msg("%s", kp_err_msg(&err));
    assert_float_equal(num_of(agg, "load.bytes"), 3e9, 1);
    assert_float_equal(num_of(agg, "load.throughput_mbps"), 11000.0, 1e-6);
    assert_int_equal(num_of(agg, "samples"), 2);
    json_decref(agg);
    json_decref(load);
    json_decref(entry);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result_real_document_parses),
        cmocka_unit_test(test_result_round_trip),
        cmocka_unit_test(test_result_rejects_malformed_documents),
        cmocka_unit_test(test_result_stream_cpu_accepted),
        cmocka_unit_test(test_result_parse_rejects_bad_text),
        cmocka_unit_test(test_result_latency_json_from_hist),
        cmocka_unit_test(test_result_node_cpu_percentages),
        cmocka_unit_test(test_result_aggregates_merge_samples),
        cmocka_unit_test(test_result_validate_entry_alone),
        cmocka_unit_test(test_result_loaded_entry_needs_its_load),
        cmocka_unit_test(test_result_first_answer_time),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
