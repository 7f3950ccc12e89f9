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
#include "controller/report/html_util.h"
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
    assert_non_null(
        strstr(l, "MSS | Loss% | Jitter us | Out of order | CPU s/Gbit | n | CV% | Note"));
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

/* pod-to-pod same-node: an idle TCP_RR and a TCP_RR_LOADED (load 9100 Mb/s). */
static struct report *loaded_report(void)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    uint64_t rng = 3;
    json_t *doc =
        fx_agent_doc(json_pack("[o, o]", fx_latency_sample("TCP_RR", 0, &rng, 20, 2000, NULL, NULL),
                               fx_loaded_sample(0, &rng, 80, 2000, 9100.0)),
                     NULL);

    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "same-node", false), doc, &err) !=
            0 ||
        report_finish(rep, &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    return rep;
}

/* The loaded row is in the latency table and in a table of its own, with the idle and loaded
 * percentiles, the signed increase, the ratio and the load; CSV has the same figures. */
static void test_render_latency_under_load(void **state)
{
    struct report *rep = loaded_report();
    const json_t *agg = json_object_get(report_row(rep, 1), "aggregate");
    char *t = render(rep, REPORT_TABLE), inc[32], idle[32], csv[96];
    (void)state;

    snprintf(
        inc, sizeof(inc), "%+.1f",
        json_number_value(json_object_get(json_object_get(agg, "latency_increase_us"), "p50")));
    snprintf(idle, sizeof(idle), "%.1f",
             json_number_value(json_object_get(json_object_get(agg, "idle_latency_us"), "p50")));
    assert_true(inc[0] == '+');
    assert_non_null(line_with(t, "pod-to-pod", "TCP_RR_LOADED", NULL)); /* latency table */
    assert_non_null(line_with(t, "Latency under load (microseconds", NULL, NULL));
    assert_non_null(line_with(t, "Idle P50", "+P50", "Load Mb/s"));
    assert_non_null(line_with(t, "pod-to-pod", inc, "9100.00"));
    assert_non_null(line_with(t, "pod-to-pod", idle, "9100.00"));
    free(t);
    t = render(rep, REPORT_MARKDOWN);
    assert_non_null(line_with(t, "### Latency under load", NULL, NULL));
    assert_non_null(line_with(t, "| pod-to-pod", inc, "9100.00 |"));
    free(t);
    t = render(rep, REPORT_CSV);
    assert_non_null(line_with(t, ",load_mbps,idle_p50_us,idle_p99_us,",
                              "latency_increase_p50_us,latency_increase_p99_us,note,node_verdict",
                              NULL));
    snprintf(csv, sizeof(csv), ",9100.000,%.3f,",
             json_number_value(json_object_get(json_object_get(agg, "idle_latency_us"), "p50")));
    assert_non_null(
        line_with(t, "pod-to-pod,same-node,TCP_RR_LOADED,false,latency,ok,1,", csv, NULL));
    /* the idle row has no load figures: empty cells */
    assert_non_null(line_with(t, "pod-to-pod,same-node,TCP_RR,false,latency,ok,1,", ",,,,,", NULL));
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
    const char *p;
    (void)state;

    assert_non_null(strstr(t, "<!DOCTYPE html>"));
    assert_non_null(strstr(t, "</html>"));
    assert_non_null(strstr(t, "<svg"));
    assert_non_null(strstr(t, "pod-to-pod same-node TCP_RR"));
    assert_non_null(strstr(t, "service &lt;DNAT&gt; unavailable")); /* escaped */
    /* one CDF: the only latency row; the line starts at min (10 us) and ends at max */
    p = strstr(t, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"cdf\"");
    assert_non_null(p);
    assert_null(strstr(strstr(p, "</svg>"), "class=\"cdf\""));
    assert_non_null(strstr(p, "<path class=\"line\""));
    assert_non_null(strstr(p, ">10.0 us</text>"));
    assert_non_null(strstr(t, "TCP_RR: latency CDF, 200 transactions"));
    /* provenance as fields, not JSON text */
    assert_non_null(strstr(t, "<th>cni</th><td><table class=\"kv\"><tr><th>name</th><td>cilium"));
    assert_null(strstr(t, "{&quot;"));
    assert_null(strstr(t, "<DNAT>"));
    assert_null(strstr(t, "<script"));
    assert_null(strstr(t, "src="));
    assert_null(strstr(t, "https://"));
    /* it reads first: the verdict (the error row counts as failed), the summary, then the run
     * card, the raw metadata last and folded */
    assert_non_null(strstr(t, "<p id=\"verdict\" class=\"bad\""));
    assert_true(strstr(t, "id=\"verdict\"") < strstr(t, "id=\"summary\""));
    assert_true(strstr(t, "id=\"summary\"") < strstr(t, "id=\"provenance\""));
    assert_true(strstr(t, "id=\"provenance\"") < strstr(t, "<details id=\"metadata\">"));
    assert_true(strstr(t, "<details id=\"metadata\">") < strstr(t, "<table class=\"meta\">"));
    free(t);
    report_free(rep);
}

/* The shared escape: markup characters become entities, control bytes a space, newlines stay
 * (the run page's <pre> tables need them). */
static void test_render_html_escape(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    assert_non_null(f);
    html_esc("<a href=\"x\">&'\x1b[2J\x7f\n\tz", f);
    html_esc(NULL, f);
    fclose(f);
    assert_string_equal(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39; [2J \n\tz");
    free(buf);
}

/* A UDP_STREAM and a UDP_RR row, IPv6: the table shows P99.9, loss, jitter and out-of-order,
 * the CSV the UDP columns and the family, with note and node_verdict still last. */
static struct report *udp_report(void)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    uint64_t rng = 7;
    json_t *st = fx_stream_sample("UDP_STREAM", 0, false, 812.5, 0);
    json_t *rr = fx_latency_sample("UDP_RR", 0, &rng, 40.0, 2000, NULL, NULL), *doc;

    json_object_del(st, "tcp");
    json_object_del(st, "streams");
    json_object_set_new(st, "udp",
                        json_pack("{s:i, s:i, s:i, s:f, s:f, s:i, s:i}", "sent", 1000, "received",
                                  990, "lost", 10, "loss_pct", 1.0, "jitter_us", 12.25,
                                  "out_of_order", 7, "rcvbuf_errors", 0));
    json_object_del(rr, "tcp");
    json_object_set_new(rr, "udp",
                        json_pack("{s:i, s:i, s:i, s:f}", "sent", 2000, "received", 1996, "lost", 4,
                                  "loss_pct", 0.2));
    doc = fx_agent_doc(json_pack("[o, o]", rr, st), NULL);
    if (report_group_add_doc(
            report_group_get_family(rep, "pod-to-pod", "other-node", "IPv6", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

static void test_render_udp_columns(void **state)
{
    struct report *rep = udp_report();
    char *t = render(rep, REPORT_TABLE), *c, *m;
    const char *l;
    (void)state;

    l = line_with(t, "Scenario", "P99 | P99.9 |", "OP/s | Loss% |");
    assert_non_null(l);
    l = line_with(t, "UDP_RR", NULL, NULL);
    assert_non_null(l);
    assert_non_null(strstr(l, " 0.20 ")); /* UDP_RR loss */
    l = line_with(t, "Scenario", "Loss% | Jitter us | Out of order | CPU s/Gbit", NULL);
    assert_non_null(l);
    assert_non_null(line_with(t, "UDP_STREAM", "|  1.00 |      12.2 |            7 |", NULL));
    m = render(rep, REPORT_MARKDOWN);
    assert_non_null(line_with(m, "| UDP_STREAM", " 12.2 |", " 7 |"));
    c = render(rep, REPORT_CSV);
    assert_non_null(line_with(c,
                              ",noisy,ip_family,udp_sent,udp_lost,udp_loss_pct,udp_jitter_us,"
                              "udp_out_of_order,load_mbps,",
                              NULL, NULL));
    assert_non_null(
        line_with(c, "pod-to-pod,other-node,UDP_STREAM,", ",IPv6,1000,10,1.000,12.250,7,,", NULL));
    assert_non_null(line_with(c, "pod-to-pod,other-node,UDP_RR,", ",IPv6,2000,4,0.200,,,,", NULL));
    free(m);
    free(c);
    free(t);
    t = render(rep, REPORT_HTML);
    assert_non_null(strstr(t, "pod-to-pod other-node UDP_RR [IPv6]"));
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
        cmocka_unit_test(test_render_html_escape),
        cmocka_unit_test(test_render_udp_columns),
        cmocka_unit_test(test_render_json_is_the_report),
        cmocka_unit_test(test_render_format_names),
        cmocka_unit_test(test_render_write_errors_are_reported),
        cmocka_unit_test(test_render_text_and_csv_are_safe),
        cmocka_unit_test(test_render_latency_under_load),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
