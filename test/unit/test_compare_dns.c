/* SPDX-License-Identifier: Apache-2.0 */
/* test_compare_dns.c - pod-to-dns rows (one per node, base/dnsresult.h) in kperf compare: DNS
 * queries dropped on one node are a regression of that node's rows only (lost% over UDP, slow%
 * over TCP), and two clean runs compare clean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/dnsresult.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/report/compare.h"
#include "controller/report/report.h"
#include "test/unit/dns_fixture.h"

/* A run of three nodes; node `bad` (1..3, 0 = none) lost 30 % over UDP and had 6 of 25 TCP
 * lookups late. */
static struct report *run(int bad)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};

    for (int n = 1; n <= 3; n++) {
        char node[16], placement[32];
        json_t *d[2] = {dns_doc("udp", 100, n == bad ? 30 : 0, 0),
                        dns_doc("tcp", 25, 0, n == bad ? 6 : 0)};
        snprintf(node, sizeof(node), "node-%d", n);
        snprintf(placement, sizeof(placement), "node:%s", node);
        json_t *doc = dnsresult_doc((const json_t *const *)d, 2, node, "2026-12-04T17:00:00Z");
        struct report_group *rg = report_group_get(rep, "pod-to-dns", placement, false);
        assert_int_equal(report_group_add_doc(rg, doc, &err), 0);
        json_decref(doc);
        json_decref(d[0]);
        json_decref(d[1]);
    }
    assert_int_equal(report_finish(rep, &err), 0);
    return rep;
}

/* the "row metric" of every regression of base vs cur, one string, and how many */
static size_t regressions(struct report *base, struct report *cur, char *out, size_t len)
{
    struct compare_opts o;
    struct kp_err err = {{0}};
    struct compare *c;
    json_t *doc, *row, *m;
    size_t i, k, n;

    compare_opts_init(&o);
    c = compare_reports(base, cur, &o, &err);
    assert_non_null(c);
    n = compare_regression_count(c);
    doc = compare_to_json(c);
    *out = '\0';
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        json_array_foreach(json_object_get(row, "metrics"), k, m)
        {
            const char *v = json_string_value(json_object_get(m, "verdict"));
            if (v && strcmp(v, "regression") == 0)
                snprintf(out + strlen(out), len - strlen(out), "%s %s %s; ",
                         json_string_value(json_object_get(row, "placement")),
                         json_string_value(json_object_get(row, "test")),
                         json_string_value(json_object_get(m, "metric")));
        }
    }
    json_decref(doc);
    compare_free(c);
    return n;
}

static void test_drop_on_one_node(void **state)
{
    struct report *clean = run(0), *clean2 = run(0), *faulted = run(2);
    char text[2048];

    (void)state;
    assert_int_equal(regressions(clean, clean2, text, sizeof(text)), 0);
    assert_true(regressions(clean, faulted, text, sizeof(text)) > 0);
    print_message("%s\n", text);
    assert_non_null(strstr(text, "node:node-2 UDP_RR lost%"));
    assert_non_null(strstr(text, "node:node-2 TCP_CRR slow%"));
    assert_null(strstr(text, "node-1"));
    assert_null(strstr(text, "node-3"));
    report_free(clean);
    report_free(clean2);
    report_free(faulted);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drop_on_one_node),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
