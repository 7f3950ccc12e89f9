/* SPDX-License-Identifier: Apache-2.0 */
/* test_render.c - the table, Markdown, CSV and HTML renderings of a synthetic report contain
 * the right rows and numbers, list skips and errors, and the HTML page is self-contained. */
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
#include "controller/report/report.h"
#include "test/unit/report_fixture.h"

/* pod-to-pod same-node: TCP_RR (two samples, fixed values) and TCP_STREAM (three samples);
 * host-to-host other-node: TCP_STREAM_MULTI; one skip, one error. */
static struct report *synthetic(void)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    struct hist *h = hist_new();
    json_t *rr[2], *doc;

    for (int s = 0; s < 2; s++) {
        hist_reset(h);
        for (uint64_t us = 10; us <= 109; us++) /* 100 values 10..109 us, twice */
            hist_record(h, us * 1000);
        rr[s] = json_pack("{s:s, s:i, s:b, s:s, s:f, s:I, s:f, s:{s:f, s:f, s:f, s:f, s:f, s:f, "
                          "s:f, s:f}, s:{s:f, s:f}}",
                          "test", "TCP_RR", "sample", s, "reverse", 0, "start_time",
                          "2026-11-30T09:00:00Z", "duration_s", 1.0, "ops", (json_int_t)100,
                          "ops_per_sec", s ? 12000.0 : 12500.0, "latency_us", "min", 10.0, "mean",
                          59.5, "p50", 59.0, "p90", 99.0, "p99", 108.0, "p999", 109.0, "max", 109.0,
                          "stddev", 28.9, "cpu_seconds", "client", 0.5, "server", 0.5);
        json_object_set_new(rr[s], "node_cpu", fx_node_cpu());
        json_object_set_new(rr[s], "histogram", hist_to_json(h));
    }
    hist_free(h);
    doc = fx_agent_doc(json_pack("[o, o, o, o, o]", rr[0], rr[1],
                                 fx_stream_sample("TCP_STREAM", 0, false, 9412.5, 3),
                                 fx_stream_sample("TCP_STREAM", 1, false, 9000.25, 5),
                                 fx_stream_sample("TCP_STREAM", 2, false, 9500.0, 4)),
                       NULL);
    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "same-node", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    doc = fx_agent_doc(
        json_pack("[o]", fx_stream_sample("TCP_STREAM_MULTI", 0, false, 23456.78, 12)), NULL);
    if (report_group_add_doc(report_group_get(rep, "host-to-host", "other-node", false), doc,
                             &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    report_group_skip_test(report_group_get(rep, "pod-to-service", "same-node", false), TEST_TCP_RR,
                           "service <DNAT> unavailable");
    report_group_error(report_group_get(rep, "pod-to-external", "external", false),
                       "server unreachable, \"timeout\"");
    json_object_set_new(report_metadata(rep), "backend", json_string("local"));
    json_object_set_new(report_metadata(rep), "start_time", json_string("2026-11-30T09:00:00Z"));
    json_object_set_new(report_metadata(rep), "kubernetes_version", json_integer(31)); /* odd */
    json_object_set_new(report_metadata(rep), "cni",
                        json_pack("{s:s, s:s}", "name", "cilium", "version", "1.16.1"));
    json_object_set_new(report_metadata(rep), "nodes",
                        json_pack("[{s:s, s:s, s:s, s:i}]", "name", "node-a", "role", "server",
                                  "kernel", "6.1.0-18-amd64", "mtu", 9001));
    json_object_set_new(
        report_metadata(rep), "external",
        json_pack("{s:s, s:s, s:s, s:i, s:s, s:{s:[{s:s, s:s, s:i, s:i}], s:{s:s}}}", "name",
                  "ec2.example", "address", "198.51.100.7", "kernel", "6.1.0-ec2\x1b[2J", "cpus", 8,
                  "cpu_model", "Intel Xeon", "net", "nics", "name", "ens5", "driver", "ena",
                  "speed_mbps", 25000, "mtu", 9001, "sysctls", "tcp_congestion_control", "cubic"));
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

/* Renders into a malloc'ed string (caller frees). */
static char *render(const struct report *rep, enum report_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct kp_err err = {{0}};

    assert_non_null(f);
    assert_int_equal(report_render(rep, fmt, f, &err), 0);
    fclose(f);
    if (getenv("KPERF_TEST_SHOW"))
        fprintf(stderr, "%s\n", buf);
    return buf;
}

/* The line of s that contains every needle, or NULL. */
static const char *line_with(const char *s, const char *a, const char *b, const char *c)
{
    static char line[1024];

    while (s && *s) {
        const char *e = strchr(s, '\n');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        snprintf(line, sizeof(line), "%.*s", (int)n, s);
        if (strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c)))
            return line;
        s = e ? e + 1 : NULL;
    }
    return NULL;
}

static void test_render_table_has_cilium_style_rows(void **state)
{
    struct report *rep = synthetic();
    char *t = render(rep, REPORT_TABLE);
    const char *l;
    (void)state;

    assert_non_null(strstr(t, "Network Performance Test Summary [local]"));
    assert_non_null(line_with(t, "started 2026-11-30T09:00:00Z, CNI cilium 1.16.1", NULL, NULL));
    assert_non_null(
        line_with(t, "node node-a (server, kernel 6.1.0-18-amd64, MTU 9001)", NULL, NULL));
    assert_null(strstr(t, "Kubernetes")); /* not a string: left out, not printed as garbage */
    /* the external host like a node, its terminal escape made harmless */
    assert_non_null(line_with(t,
                              "external host ec2.example (198.51.100.7, kernel 6.1.0-ec2?[2J, 8 "
                              "CPUs Intel Xeon, MTU 9001, NIC ens5 ena 25000 Mb/s, TCP cubic)",
                              NULL, NULL));
    assert_null(strchr(t, '\x1b'));
    l = line_with(t, "Scenario", "P99", "OP/s");
    assert_non_null(l);
    assert_non_null(strstr(l, "Min"));
    /* merged percentiles of 10..109 us (twice): p50 ~ 59-60, p99 ~ 108; ops/s median 12250 */
    l = line_with(t, "pod-to-pod", "TCP_RR", "12250.00");
    assert_non_null(l);
    assert_non_null(strstr(l, "same-node"));
    assert_non_null(strstr(l, "10.0")); /* min */
    l = line_with(t, "Scenario", "Throughput Mb/s", "Retransmits");
    assert_non_null(l);
    assert_non_null(strstr(l, "MSS | Loss% | CPU s/Gbit | n | CV% | Note"));
    l = line_with(t, "pod-to-pod", "TCP_STREAM ", "9412.50"); /* median of three */
    assert_non_null(l);
    assert_non_null(strstr(l, " 4 ")); /* median retransmits */
    assert_non_null(line_with(t, "host-to-host", "other-node", "23456.78"));
    assert_non_null(
        line_with(t, "pod-to-service same-node TCP_RR", "service <DNAT> unavailable", NULL));
    assert_non_null(line_with(t, "pod-to-external external", "server unreachable", NULL));
    assert_non_null(line_with(t, "3 measured, 1 failed, 1 skipped, 0 noisy", NULL, NULL));
    free(t);
    report_free(rep);
}

static void test_render_markdown_tables(void **state)
{
    struct report *rep = synthetic();
    char *t = render(rep, REPORT_MARKDOWN);
    (void)state;

    assert_non_null(strstr(t, "## Network Performance Test Summary"));
    assert_non_null(line_with(t, "| Scenario", "P99 |", "OP/s |"));
    assert_non_null(line_with(t, "|---", "-:|", NULL));
    assert_non_null(line_with(t, "| pod-to-pod", "| TCP_RR", "12250.00 |"));
    assert_non_null(line_with(t, "| host-to-host", "| TCP_STREAM_MULTI", "23456.78 |"));
    assert_non_null(line_with(t, "- pod-to-service same-node TCP_RR", NULL, NULL));
    free(t);
    report_free(rep);
}

static void test_render_csv_one_line_per_row(void **state)
{
    struct report *rep = synthetic();
    char *t = render(rep, REPORT_CSV);
    size_t lines = 0;
    (void)state;

    for (const char *p = t; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1 + report_row_count(rep));
    assert_non_null(
        line_with(t, "scenario,placement,test,reverse,kind,status,samples", NULL, NULL));
    assert_non_null(line_with(t, "pod-to-pod,same-node,TCP_STREAM,false,throughput,ok,3,",
                              ",9412.500,4,1448,", NULL));
    assert_non_null(line_with(t, "pod-to-pod,same-node,TCP_RR,false,latency,ok,2,10.000,",
                              ",12250.000,", NULL));
    assert_non_null(line_with(t, "pod-to-service,same-node,TCP_RR,false,latency,skipped,0,,,",
                              "service <DNAT> unavailable", NULL));
    free(t);
    report_free(rep);
}

/* Report text with terminal escapes and spreadsheet formulas: the table and Markdown show no
 * control character, CSV neither, and CSV cells starting with = + - @ get a leading quote. */
static void test_render_text_and_csv_are_safe(void **state)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    json_t *doc;
    char *t;
    enum report_format fmts[] = {REPORT_TABLE, REPORT_MARKDOWN, REPORT_CSV};
    (void)state;

    doc = fx_agent_doc(json_pack("[o]", fx_stream_sample("TCP_STREAM", 0, false, 900, 0)), NULL);
    if (report_group_add_doc(report_group_get(rep, "=HYPERLINK(\"x\")", "same-node", false), doc,
                             &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    report_group_skip_test(report_group_get(rep, "@SUM(A1)", "same-node", false), TEST_TCP_RR,
                           "-1+1 \x1b[2J\x1b]0;title\x07 cleared \xc2\x9b"
                           "31m\xe2\x80\xae"
                           "evil");
    report_group_error(report_group_get(rep, "+cmd", "external", false), "boom\r\nfake line");
    json_object_set_new(report_metadata(rep), "backend", json_string("local\x1b[31m"));
    json_object_set_new(report_metadata(rep), "nodes",
                        json_pack("[{s:s, s:s}]", "name",
                                  "node\x1b"
                                  "[1m-a",
                                  "kernel", "6.1\t"));
    assert_int_equal(report_finish(rep, &err), 0);
    for (size_t k = 0; k < 3; k++) {
        t = render(rep, fmts[k]);
        for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
            assert_true(*p == '\n' || (*p >= 0x20 && *p != 0x7f));
            assert_false(p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
            assert_false(p[0] == 0xe2 && p[1] == 0x80 && p[2] == 0xae);
        }
        assert_non_null(strstr(t, "-1+1 ?[2J?]0;title? cleared ?31m?evil"));
        if (fmts[k] == REPORT_CSV) {
            assert_non_null(
                line_with(t, "\"'=HYPERLINK(\"\"x\"\")\",same-node,TCP_STREAM,", NULL, NULL));
            assert_non_null(line_with(t, "'@SUM(A1),same-node,TCP_RR,", ",'-1+1 ?[2J", NULL));
            assert_null(strstr(t, ",-1+1")); /* a formula never starts a cell */
        } else {
            assert_non_null(strstr(t, "boom??fake line"));
            assert_non_null(strstr(t, "node node?[1m-a"));
            assert_non_null(strstr(t, "[local?[31m]"));
        }
        free(t);
    }
    report_free(rep);
}

static void test_render_html_is_self_contained(void **state)
{
    struct report *rep = synthetic();
    char *t = render(rep, REPORT_HTML);
    (void)state;

    assert_non_null(strstr(t, "<!DOCTYPE html>"));
    assert_non_null(strstr(t, "</html>"));
    assert_non_null(strstr(t, "<svg"));
    assert_non_null(strstr(t, "pod-to-pod same-node TCP_RR"));
    assert_non_null(strstr(t, "service &lt;DNAT&gt; unavailable")); /* escaped */
    assert_null(strstr(t, "<DNAT>"));
    assert_null(strstr(t, "<script"));
    assert_null(strstr(t, "src="));
    assert_null(strstr(t, "https://"));
    free(t);
    report_free(rep);
}

static void test_render_json_is_the_report(void **state)
{
    struct report *rep = synthetic(), *back;
    char *t = render(rep, REPORT_JSON);
    json_error_t jerr;
    json_t *doc = json_loads(t, 0, &jerr);
    struct kp_err err = {{0}};
    (void)state;

    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "schema")), "kperf.report/v1");
    back = report_from_json(doc, &err);
    assert_non_null(back);
    assert_int_equal(report_row_count(back), report_row_count(rep));
    report_free(back);
    json_decref(doc);
    free(t);
    report_free(rep);
}

static void test_render_format_names(void **state)
{
    enum report_format f;
    struct kp_err err = {{0}};
    (void)state;
    assert_int_equal(report_format_parse("md", &f, &err), 0);
    assert_int_equal(f, REPORT_MARKDOWN);
    assert_int_equal(report_format_parse("html", &f, &err), 0);
    assert_int_equal(f, REPORT_HTML);
    assert_int_equal(report_format_parse("xml", &f, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "xml"));
}

/* A full disk shows on the flush, after every fprintf succeeded into the buffer. */
static void test_render_write_errors_are_reported(void **state)
{
    struct report *rep = synthetic();
    struct kp_err err = {{0}};
    FILE *full = fopen("/dev/full", "w");
    (void)state;

    if (!full)
        skip();
    assert_int_equal(report_render(rep, REPORT_TABLE, full, &err), -1);
    assert_string_equal(kp_err_msg(&err), "cannot write the report: No space left on device");
    fclose(full);
    report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_table_has_cilium_style_rows),
        cmocka_unit_test(test_render_markdown_tables),
        cmocka_unit_test(test_render_csv_one_line_per_row),
        cmocka_unit_test(test_render_html_is_self_contained),
        cmocka_unit_test(test_render_json_is_the_report),
        cmocka_unit_test(test_render_format_names),
        cmocka_unit_test(test_render_write_errors_are_reported),
        cmocka_unit_test(test_render_text_and_csv_are_safe),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
