/* SPDX-License-Identifier: Apache-2.0 */
/* test_render_openmetrics.c - `-o openmetrics`: every family written once and whole, values in
 * base units taken from the aggregates, label values escaped (a hostile CNI name cannot break
 * a line), rows without samples absent, the cluster label's fallbacks, the "# EOF" end, the
 * evidence families (node CPU per Gbit/s, path MTU and its black hole, moved counters); and
 * the checks of a --push-gateway URL and a push that cannot connect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_err.h"
#include "controller/report/pushgw.h"
#include "controller/report/report.h"
#include "test/unit/report_fixture.h"

/* pod-to-pod same-node TCP_RR (one sample) and TCP_STREAM reverse at 800 Mb/s with 7
 * retransmits; a skipped TCP_CRR row; a CNI named with a quote, a backslash and a newline. */
static struct report *synthetic(const char *cluster, const char *backend)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    uint64_t rng = 42;
    json_t *doc = fx_agent_doc(
        json_pack("[o, o]", fx_latency_sample("TCP_RR", 0, &rng, 50.0, 2000, NULL, NULL),
                  fx_stream_sample("TCP_STREAM", 0, true, 800.0, 7)),
        NULL);

    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "same-node", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    report_group_skip_test(report_group_get(rep, "pod-to-pod", "same-node", false), TEST_TCP_CRR,
                           "not asked");
    json_object_set_new(report_metadata(rep), "backend", json_string(backend));
    json_object_set_new(report_metadata(rep), "run_id", json_string("kp123"));
    if (cluster)
        json_object_set_new(report_metadata(rep), "cluster", json_string(cluster));
    json_object_set_new(report_metadata(rep), "cni",
                        json_pack("{s:s, s:s}", "name", "evil\"cni\\x\ny", "version", "1.16.1"));
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

static char *render(const struct report *rep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct kp_err err = {{0}};

    assert_non_null(f);
    assert_int_equal(report_render(rep, REPORT_OPENMETRICS, f, &err), 0);
    fclose(f);
    if (getenv("KPERF_TEST_SHOW"))
        fprintf(stderr, "%s\n", buf);
    return buf;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_format_parse(void **state)
{
    enum report_format fmt = REPORT_TABLE;
    struct kp_err err = {{0}};

    (void)state;
    assert_int_equal(report_format_parse("openmetrics", &fmt, &err), 0);
    assert_int_equal(fmt, REPORT_OPENMETRICS);
}

/* Every sample line belongs to the family of the last # TYPE line, each TYPE once; the text
 * ends with "# EOF\n" and has no other line starting with "# EOF". */
static void test_families_whole(void **state)
{
    struct report *rep = synthetic(NULL, "k8s");
    char *s = render(rep), *save = NULL, family[128] = "";
    size_t n = strlen(s);

    (void)state;
    assert_true(n > 6 && strcmp(s + n - 6, "# EOF\n") == 0);
    assert_int_equal(count(s, "# EOF"), 1);
    assert_int_equal(count(s, "# TYPE kperf_latency_seconds gauge\n"), 1);
    assert_int_equal(count(s, "# TYPE kperf_run_info gauge\n"), 1);
    for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "# TYPE ", 7) == 0) {
            snprintf(family, sizeof(family), "%.*s", (int)strcspn(line + 7, " "), line + 7);
        } else if (line[0] != '#') {
            assert_true(family[0]);
            assert_int_equal(strncmp(line, family, strlen(family)), 0);
            assert_true(line[strlen(family)] == '{');
        }
    }
    free(s);
    report_free(rep);
}

static void test_values_and_labels(void **state)
{
    struct report *rep = synthetic(NULL, "k8s");
    char *s = render(rep);
    const json_t *row = report_row(rep, 0);
    double p99 = json_number_value(
        json_object_get(json_object_get(json_object_get(row, "aggregate"), "latency_us"), "p99"));
    char want[512];

    (void)state;
    /* the escaped CNI name, once per sample and on the info line */
    assert_non_null(strstr(s, "cni=\"evil\\\"cni\\\\x\\ny\",cni_version=\"1.16.1\""));
    assert_null(strstr(s, "evil\"cni\\x\ny")); /* never raw */
    snprintf(
        want, sizeof(want),
        "kperf_latency_seconds{scenario=\"pod-to-pod\",placement=\"same-node\",test=\"TCP_RR\","
        "direction=\"forward\",ip_family=\"IPv4\",cluster=\"default\",cni=\"evil\\\"cni\\\\x\\ny\","
        "cni_version=\"1.16.1\",stat=\"p99\"} %.15g\n",
        p99 / 1e6);
    if (!strstr(s, want)) /* the 17-digit form when 15 do not read back */
        snprintf(strrchr(want, '}') + 1, 40, " %.17g\n", p99 / 1e6);
    assert_non_null(strstr(s, want));
    /* 800 Mb/s = 1e8 B/s, reverse direction; retransmits as counted */
    assert_non_null(strstr(s, "test=\"TCP_STREAM\",direction=\"reverse\",ip_family=\"IPv4\""));
    assert_non_null(strstr(s, "cni_version=\"1.16.1\"} 100000000\n"));
    assert_non_null(strstr(s, "kperf_tcp_retransmits{scenario=\"pod-to-pod\",placement=\"same-"
                              "node\",test=\"TCP_STREAM\""));
    assert_non_null(strstr(s, "\"} 7\n"));
    /* the skipped row has no sample */
    assert_null(strstr(s, "test=\"TCP_CRR\""));
    assert_non_null(strstr(s, "kperf_run_info{cluster=\"default\""));
    assert_non_null(strstr(s, "run_id=\"kp123\""));
    free(s);
    report_free(rep);
}

static void test_cluster_label(void **state)
{
    struct report *a = synthetic(NULL, "local"), *b = synthetic("prod/eu-1", "k8s");
    char *s;

    (void)state;
    s = render(a);
    assert_non_null(strstr(s, "kperf_run_info{cluster=\"local\""));
    free(s);
    s = render(b);
    assert_non_null(strstr(s, "kperf_run_info{cluster=\"prod/eu-1\""));
    assert_int_equal(count(s, "cluster=\"default\""), 0);
    free(s);
    report_free(a);
    report_free(b);
}

/* The value of the one sample line that starts with family and contains every needle (NULL
 * ended); fails when there is none or more than one. */
static double value_of(const char *s, const char *family, ...)
{
    const char *found = NULL;
    size_t n = 0;

    for (const char *line = s; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        size_t len = strcspn(line, "\n");
        char buf[1024];
        va_list ap;
        const char *needle;
        bool all = true;
        if (strncmp(line, family, strlen(family)) != 0 || line[strlen(family)] != '{')
            continue;
        snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
        va_start(ap, family);
        while ((needle = va_arg(ap, const char *)) != NULL)
            all = all && strstr(buf, needle);
        va_end(ap);
        if (all) {
            found = line;
            n++;
        }
    }
    if (n != 1)
        fail_msg("%zu lines of %s match", n, family);
    return strtod(strstr(found, "} ") + 2, NULL);
}

/* An agent document of one 800 Mb/s TCP_STREAM sample with a path MTU verdict and, when
 * qdisc_overlimits > 0, a shaping counter that moved on the client's node. */
static json_t *probed_doc(const char *verdict, int path, int qdisc_overlimits)
{
    json_t *smp = fx_stream_sample("TCP_STREAM", 0, false, 800.0, 0);
    json_t *doc, *mtu;

    json_object_set_new(smp, "counters",
                        json_pack("{s:{s:i, s:{s:i, s:i}}}", "client", "v", 1, "deltas",
                                  "qdisc.eth0.overlimits", qdisc_overlimits, "Tcp.RetransSegs", 3));
    doc = fx_agent_doc(json_pack("[o]", smp), NULL);
    mtu = json_object_get(doc, "mtu");
    json_object_set_new(mtu, "path", json_integer(path));
    json_object_set_new(mtu, "icmp", json_integer(0));
    json_object_set_new(mtu, "tcp_full_mss", json_boolean(strcmp(verdict, "ok") == 0));
    json_object_set_new(mtu, "verdict", json_string(verdict));
    json_object_set_new(mtu, "probe_ms", json_integer(12));
    return doc;
}

/* The evidence families: node CPU per Gbit/s by side and mode (the fixture's node_cpu: client
 * 5% user, 10% system, 3% softirq, 0% irq at 0.8 Gbit/s), the path MTU and its black-hole mark
 * (1 on the black-hole row, 0 on the clean one), and the shaping counter that moved. */
static void test_evidence_families(void **state)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    char *s;
    const char *other = "placement=\"other-node\"", *same = "placement=\"same-node\"";

    (void)state;
    for (int i = 0; i < 2; i++) {
        json_t *doc = i ? probed_doc("ok", 1500, 0) : probed_doc("black-hole", 1396, 816);
        if (report_group_add_doc(
                report_group_get(rep, "pod-to-pod", i ? "same-node" : "other-node", false), doc,
                &err) != 0)
            fail_msg("%s", kp_err_msg(&err));
        json_decref(doc);
    }
    json_object_set_new(report_metadata(rep), "backend", json_string("local"));
    assert_int_equal(report_finish(rep, &err), 0);
    s = render(rep);
    assert_int_equal(count(s, "# TYPE kperf_node_cpu_ratio_per_gbps gauge\n"), 1);
    assert_int_equal(count(s, "kperf_node_cpu_ratio_per_gbps{"), 16); /* 2 rows x 2 sides x 4 */
    assert_float_equal(value_of(s, "kperf_node_cpu_ratio_per_gbps", other, "side=\"client\"",
                                "mode=\"user\"", NULL),
                       0.05 / 0.8, 1e-12);
    assert_float_equal(value_of(s, "kperf_node_cpu_ratio_per_gbps", other, "side=\"server\"",
                                "mode=\"softirq\"", NULL),
                       0.06 / 0.8, 1e-12);
    assert_float_equal(
        value_of(s, "kperf_node_cpu_ratio_per_gbps", same, "side=\"client\"", "mode=\"irq\"", NULL),
        0, 0);
    assert_float_equal(value_of(s, "kperf_path_mtu_bytes", other, NULL), 1396, 0);
    assert_float_equal(value_of(s, "kperf_path_mtu_bytes", same, NULL), 1500, 0);
    assert_float_equal(value_of(s, "kperf_path_mtu_black_hole", other, NULL), 1, 0);
    assert_float_equal(value_of(s, "kperf_path_mtu_black_hole", same, NULL), 0, 0);
    assert_float_equal(value_of(s, "kperf_evidence_marked", other, NULL), 1, 0);
    assert_float_equal(value_of(s, "kperf_evidence_marked", same, NULL), 0, 0);
    /* only the counter that marks moves a gauge: retransmits explain, they do not mark */
    assert_float_equal(value_of(s, "kperf_evidence_delta", other,
                                "counter=\"qdisc.eth0.overlimits\"", "class=\"shaping\"", NULL),
                       816, 0);
    assert_int_equal(count(s, "kperf_evidence_delta{"), 1);
    assert_null(strstr(s, "Tcp.RetransSegs"));
    free(s);
    report_free(rep);
}

static void test_url_check(void **state)
{
    struct kp_err err = {{0}};

    (void)state;
    assert_int_equal(pushgw_url_check("http://pushgateway:9091", &err), 0);
    assert_int_equal(pushgw_url_check("https://pg.example/prefix/", &err), 0);
    assert_int_equal(pushgw_url_check("pushgateway:9091", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "not an http:// or https:// URL"));
    assert_int_equal(pushgw_url_check("http://", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "has no host"));
    assert_int_equal(pushgw_url_check("http://pg:9091/?x=1", &err), -1);
    assert_int_equal(pushgw_url_check("http://pg:9091/a b", &err), -1);
    /* a refused URL is named without its user-info */
    assert_int_equal(pushgw_url_check("http://me:Pa55word@pg:9091/?x=1", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "'http://pg:9091/?x=1' must be a base URL"));
    assert_int_equal(pushgw_url_check("http://me:Pa55word@pg:99999", &err), -1);
    assert_null(strstr(kp_err_msg(&err), "Pa55word"));
    assert_int_equal(pushgw_url_check("http://me:Pa55word@pg:9091/", &err), 0);
}

/* Port 1 on loopback: nothing listens; the error names the grouping URL (base64 instance). */
static void test_push_refused(void **state)
{
    struct report *rep = synthetic("local", "local");
    struct kp_err err = {{0}};

    (void)state;
    assert_int_equal(pushgw_push(rep, "http://127.0.0.1:1/", NULL, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err),
                           "push gateway http://127.0.0.1:1/metrics/job/kperf/instance@base64/"
                           "bG9jYWw=: "));
    assert_null(strchr(kp_err_msg(&err), '\n'));
    /* credentials in the URL or given apart: the error names the URL without them */
    assert_int_equal(pushgw_push(rep, "http://me:Url5ecret@127.0.0.1:1", "F1le5ecret", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "push gateway http://127.0.0.1:1/metrics/job/kperf/"));
    assert_null(strstr(kp_err_msg(&err), "5ecret"));
    assert_null(strstr(kp_err_msg(&err), "me@"));
    report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_parse),      cmocka_unit_test(test_families_whole),
        cmocka_unit_test(test_values_and_labels), cmocka_unit_test(test_cluster_label),
        cmocka_unit_test(test_url_check),         cmocka_unit_test(test_push_refused),
        cmocka_unit_test(test_evidence_families),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
