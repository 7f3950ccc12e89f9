/* SPDX-License-Identifier: Apache-2.0 */
/* test_netpol_cost.c - the NetworkPolicy datapath cost section (report/netpol_cost.h): rows
 * under a policy of N rules beside the same row without one, metric by metric and in size
 * order; only matching rows (scenario, placement, test) count; nothing without policy rows; the
 * same for the rows of --services sizes beside the row at 0 extra Services. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/report/netpol_cost.h"
#include "controller/report/report.h"
#include "report_fixture.h"

/* one TCP_STREAM row of mbps (two samples) in scenario/placement */
static void add_stream(struct report *rep, const char *scenario, const char *placement, double mbps)
{
    struct kp_err err = {{0}};
    json_t *doc =
        fx_agent_doc(json_pack("[o, o]", fx_stream_sample("TCP_STREAM", 0, false, mbps, 0),
                               fx_stream_sample("TCP_STREAM", 1, false, mbps, 0)),
                     NULL);

    if (report_group_add_doc(report_group_get(rep, scenario, placement, false), doc, &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
}

static void finish(struct report *rep)
{
    struct kp_err err = {{0}};

    if (report_finish(rep, &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
}

static char *print(const struct report *rep)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    netpol_cost_print(rep, "  ", f);
    fclose(f);
    if (getenv("KPERF_TEST_SHOW"))
        fprintf(stderr, "%s\n", buf);
    return buf;
}

static void test_netpol_cost_size(void **state)
{
    size_t len = 0;
    (void)state;

    assert_int_equal(netpol_cost_size("same-node/netpol-100", &len), 100);
    assert_int_equal(len, strlen("same-node"));
    assert_int_equal(netpol_cost_size("other-node/netpol-0", NULL), 0);
    assert_int_equal(netpol_cost_size("same-node", NULL), -1);
    assert_int_equal(netpol_cost_size("same-node/netpol-", NULL), -1);
    assert_int_equal(netpol_cost_size("same-node/netpol-1x", NULL), -1);
    assert_int_equal(netpol_cost_size(NULL, NULL), -1);
}

static void test_netpol_cost_rows_beside_their_base(void **state)
{
    struct report *rep = report_new();
    char *t;
    (void)state;

    add_stream(rep, "pod-to-pod", "same-node", 9000.0);
    add_stream(rep, "pod-to-pod", "other-node", 8000.0);
    add_stream(rep, "pod-to-service", "same-node", 7000.0);
    add_stream(rep, "pod-to-pod", "same-node/netpol-100", 8100.0);
    add_stream(rep, "pod-to-pod", "same-node/netpol-1000", 4500.0);
    finish(rep);
    t = print(rep);
    assert_non_null(strstr(t, "\nNetworkPolicy datapath cost"));
    assert_non_null(strstr(t, "  pod-to-pod same-node TCP_STREAM Mb/s: 9000.0 | 100 rules 8100.0 "
                              "(-10.0%) | 1000 rules 4500.0 (-50.0%)\n"));
    /* node CPU per Gbit/s of each row, beside its base */
    assert_non_null(strstr(t, "  pod-to-pod same-node TCP_STREAM node CPU/Gbps: "));
    /* rows without a policy variant get no line; the variants none of their own */
    assert_null(strstr(t, "other-node"));
    assert_null(strstr(t, "pod-to-service"));
    assert_null(strstr(t, "netpol-100 TCP_STREAM"));
    free(t);
    report_free(rep);
}

/* --services 0,1000,5000: the pod-to-service rows at each size beside the row at 0; no
 * NetworkPolicy section for them, nor a Services section for policy rows */
static void test_services_cost_rows_beside_the_row_at_0(void **state)
{
    struct report *rep = report_new();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    add_stream(rep, "pod-to-service", "same-node", 7000.0);
    add_stream(rep, "pod-to-service", "same-node/services-1000", 6300.0);
    add_stream(rep, "pod-to-service", "same-node/services-5000", 3500.0);
    add_stream(rep, "pod-to-pod", "same-node/netpol-100", 8100.0);
    finish(rep);
    services_cost_print(rep, "  ", f);
    fclose(f);
    assert_non_null(strstr(buf, "\nServices at scale (the row at 0 extra Services"));
    assert_non_null(strstr(buf, "  pod-to-service same-node TCP_STREAM Mb/s: 7000.0 | 1000 "
                                "Services 6300.0 (-10.0%) | 5000 Services 3500.0 (-50.0%)\n"));
    assert_null(strstr(buf, "rules"));
    free(buf);
    buf = print(rep); /* NetworkPolicy: no policy-free pod-to-pod row, and services rows are not
                         policy rows */
    assert_string_equal(buf, "");
    free(buf);
    report_free(rep);
}

static void test_netpol_cost_nothing_without_policy_rows(void **state)
{
    struct report *rep = report_new();
    char *t;
    (void)state;

    add_stream(rep, "pod-to-pod", "same-node", 9000.0);
    finish(rep);
    t = print(rep);
    assert_string_equal(t, "");
    free(t);
    report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_netpol_cost_size),
        cmocka_unit_test(test_netpol_cost_rows_beside_their_base),
        cmocka_unit_test(test_netpol_cost_nothing_without_policy_rows),
        cmocka_unit_test(test_services_cost_rows_beside_the_row_at_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
