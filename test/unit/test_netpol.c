/* SPDX-License-Identifier: Apache-2.0 */
/* test_netpol.c - NetworkPolicy enforcement readiness in a report: the figures made from probe
 * documents (policy phase, new-pod phase, and the errors when a deny or an allow never shows),
 * the per-node table, and the comparison (a node 2 s slower is a regression naming it; early
 * packets shown, not judged; a node that failed in NEW only is a regression). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/report/compare_metrics.h"
#include "controller/report/netpol.h"

/* a connect-probe document started at 1000.0, probes every 20 ms, with one outage */
static json_t *probe(double start_s, double end_s, bool open, long answered)
{
    return json_pack("{s:s, s:f, s:i, s:{s:{s:i, s:[{s:f, s:f, s:b}]}}}", "schema",
                     "kperf.probe/v1", "start_unix_s", 1000.0, "connect_every_ms", 20, "probes",
                     "connect", "answered", (int)answered, "outages", "start_s", start_s, "end_s",
                     end_s, "open", open);
}

static double fig(const json_t *r, const char *k)
{
    return json_number_value(json_object_get(r, k));
}

static void test_policy_phase(void **state)
{
    json_t *p = probe(5.3, 9.5, false, 400), *r = json_object();
    (void)state;

    /* deny created at 1005.0 (refused from 1005.3), allow at 1009.0 (admitted from 1009.5) */
    assert_int_equal(netpol_policy_phase(r, p, 1005.0, 1009.0), 0);
    assert_true(fig(r, "policy_deny_s") > 0.29 && fig(r, "policy_deny_s") < 0.31);
    assert_int_equal(json_integer_value(json_object_get(r, "policy_early")), 15);
    assert_true(fig(r, "policy_allow_s") > 0.49 && fig(r, "policy_allow_s") < 0.51);
    assert_null(json_object_get(r, "error"));
    json_decref(r);
    /* the allow never admitted a probe: the outage stays open */
    r = json_object();
    json_decref(p);
    p = probe(5.3, 12.0, true, 400);
    assert_int_equal(netpol_policy_phase(r, p, 1005.0, 1009.0), -1);
    assert_string_equal(json_string_value(json_object_get(r, "error")),
                        "the allow policy admitted no probe");
    json_decref(r);
    /* an outage that ended before the deny is not the deny's */
    r = json_object();
    json_decref(p);
    p = probe(1.0, 1.5, false, 400);
    assert_int_equal(netpol_policy_phase(r, p, 1005.0, 1009.0), -1);
    assert_string_equal(json_string_value(json_object_get(r, "error")),
                        "the deny policy refused no probe");
    json_decref(r);
    json_decref(p);
}

static void test_pod_phase(void **state)
{
    json_t *p = probe(2.1, 6.0, true, 105), *r = json_object();
    (void)state;

    assert_int_equal(netpol_pod_phase(r, p), 0);
    assert_true(fig(r, "pod_deny_s") > 2.09 && fig(r, "pod_deny_s") < 2.11);
    assert_int_equal(json_integer_value(json_object_get(r, "pod_early")), 105);
    json_decref(r);
    json_decref(p);
    r = json_object();
    p = probe(2.1, 2.5, false, 300);
    assert_int_equal(netpol_pod_phase(r, p), -1);
    assert_non_null(json_object_get(r, "error"));
    json_decref(r);
    json_decref(p);
}

static json_t *md(double node2_deny, bool node2_error)
{
    json_t *n1 =
        json_pack("{s:s, s:f, s:i, s:f, s:f, s:i}", "node", "node-1", "policy_deny_s", 0.2,
                  "policy_early", 10, "policy_allow_s", 0.3, "pod_deny_s", 0.1, "pod_early", 3);
    json_t *n2 =
        node2_error ? json_pack("{s:s, s:s}", "node", "node-2", "error", "no deny")
                    : json_pack("{s:s, s:f, s:i, s:f, s:f, s:i}", "node", "node-2", "policy_deny_s",
                                node2_deny, "policy_early", (int)(node2_deny / 0.02),
                                "policy_allow_s", 0.3, "pod_deny_s", node2_deny, "pod_early", 4);
    return json_pack("{s:{s:i, s:[o, o]}}", "netpol", "probe_every_ms", 20, "nodes", n1, n2);
}

static void test_print_and_compare(void **state)
{
    struct cmp_threshold th[CMP_GROUPS];
    json_t *base = md(0.2, false), *slow = md(2.3, false), *bad = md(0, true), *c;
    size_t reg, imp, i;
    const json_t *e;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    netpol_print(slow, false, f);
    netpol_print(slow, true, f);
    fclose(f);
    assert_non_null(strstr(buf, "NetworkPolicy enforcement readiness"));
    assert_non_null(strstr(buf, "node-2"));
    assert_non_null(strstr(buf, "2.300"));
    assert_non_null(strstr(buf, "| node-2 | 2.300 | 114 |"));
    free(buf);
    cmp_thresholds_default(th);
    c = netpol_compare(base, slow, &th[CMP_READINESS], &reg, &imp);
    assert_int_equal(reg, 2); /* node-2: policy_deny_s and pod_deny_s */
    assert_int_equal(imp, 0);
    json_array_foreach(c, i, e)
    {
        const char *v = json_string_value(json_object_get(e, "verdict"));
        if (strcmp(v, "regression") == 0)
            assert_string_equal(json_string_value(json_object_get(e, "node")), "node-2");
    }
    buf = NULL;
    f = open_memstream(&buf, &len);
    netpol_compare_print(c, false, f);
    fclose(f);
    assert_non_null(strstr(buf, "regression"));
    assert_non_null(strstr(buf, "not judged"));
    free(buf);
    json_decref(c);
    c = netpol_compare(base, base, &th[CMP_READINESS], &reg, &imp);
    assert_int_equal(reg + imp, 0);
    json_decref(c);
    c = netpol_compare(base, bad, &th[CMP_READINESS], &reg, &imp);
    assert_int_equal(reg, 1);
    json_decref(c);
    json_t *empty = json_object();
    c = netpol_compare(empty, slow, &th[CMP_READINESS], &reg, &imp);
    assert_int_equal(json_array_size(c), 0);
    json_decref(c);
    json_decref(empty);
    json_decref(base);
    json_decref(slow);
    json_decref(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_phase),
        cmocka_unit_test(test_pod_phase),
        cmocka_unit_test(test_print_and_compare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
