/* SPDX-License-Identifier: Apache-2.0 */
/* test_plan.c - which groups a plan holds, in which order, with which tests; skips that keep
 * their reason; sample counts and expected time; sweep expansion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/plan.h"
#include "controller/run_options.h"

static struct plan_opts opts_with(unsigned scenarios, unsigned placements, unsigned tests,
                                  int samples)
{
    struct plan_opts o = {
        .scenarios = scenarios,
        .placements = placements,
        .tests = tests,
        .samples = samples,
        .samples_max = samples,
        .duration_ms = 10000,
    };
    return o;
}

static void assert_group(const struct plan *p, size_t i, enum scenario s, const char *placement,
                         bool reverse, size_t n_tests)
{
    const struct plan_group *g = plan_group_get(p, i);

    assert_non_null(g);
    assert_int_equal(g->scenario, s);
    assert_string_equal(g->placement_label, placement);
    assert_int_equal(g->reverse, reverse);
    assert_int_equal(g->n_tests, n_tests);
}

static void test_plan_default_is_pod_to_pod_both_placements(void **state)
{
    struct run_options ro;
    struct plan_opts po;
    struct plan *p;

    (void)state;
    run_options_init(&ro);
    plan_opts_from_run_options(&ro, &po);
    p = plan_new(&po);
    assert_int_equal(plan_group_count(p), 2);
    assert_group(p, 0, SCENARIO_POD_TO_POD, "same-node", false, 3);
    assert_group(p, 1, SCENARIO_POD_TO_POD, "other-node", false, 3);
    /* default tests in canonical order */
    assert_int_equal(plan_group_get(p, 0)->tests[0], TEST_TCP_RR);
    assert_int_equal(plan_group_get(p, 0)->tests[1], TEST_TCP_STREAM);
    assert_int_equal(plan_group_get(p, 0)->tests[2], TEST_TCP_STREAM_MULTI);
    assert_int_equal(plan_measurement_count(p), 6);
    assert_int_equal(plan_expected_ms(p), 60000);
    plan_free(p);
    run_options_cleanup(&ro);
}

static void test_plan_all_scenarios_order_and_external_directions(void **state)
{
    struct plan_opts o = opts_with(SCENARIO_ALL_MASK, PLACEMENT_BOTH_MASK, TEST_DEFAULT_MASK, 1);
    struct plan *p = plan_new(&o);

    (void)state;
    assert_int_equal(plan_group_count(p), 8);
    assert_group(p, 0, SCENARIO_POD_TO_POD, "same-node", false, 3);
    assert_group(p, 1, SCENARIO_POD_TO_POD, "other-node", false, 3);
    assert_group(p, 2, SCENARIO_HOST_TO_HOST, "same-node", false, 3);
    assert_group(p, 3, SCENARIO_HOST_TO_HOST, "other-node", false, 3);
    assert_group(p, 4, SCENARIO_POD_TO_SERVICE, "same-node", false, 3);
    assert_group(p, 5, SCENARIO_POD_TO_SERVICE, "other-node", false, 3);
    assert_group(p, 6, SCENARIO_POD_TO_EXTERNAL, "external", false, 3);
    /* the reverse direction only for stream tests */
    assert_group(p, 7, SCENARIO_POD_TO_EXTERNAL, "external", true, 2);
    assert_int_equal(plan_group_get(p, 7)->tests[0], TEST_TCP_STREAM);
    assert_int_equal(plan_group_get(p, 7)->tests[1], TEST_TCP_STREAM_MULTI);
    assert_int_equal(plan_measurement_count(p), 23);
    plan_free(p);
}

/* One family marks every group; two double every group, the families adjacent and in the
 * order given, skips and labels copied; a bad family changes nothing. */
static void test_plan_families(void **state)
{
    static const char *const v6[] = {"IPv6"}, *const both[] = {"IPv4", "IPv6"};
    static const char *const bad[] = {"IPv5"};
    struct plan_opts o =
        opts_with(1u << SCENARIO_POD_TO_POD, PLACEMENT_BOTH_MASK, 1u << TEST_TCP_RR, 1);
    struct plan *p = plan_new(&o);

    (void)state;
    plan_set_families(p, bad, 1);
    assert_null(plan_group_get(p, 0)->ip_family);
    plan_set_families(p, v6, 1);
    assert_int_equal(plan_group_count(p), 2);
    assert_string_equal(plan_group_get(p, 0)->ip_family, "IPv6");
    assert_string_equal(plan_group_get(p, 1)->ip_family, "IPv6");
    plan_free(p);

    p = plan_new(&o);
    plan_skip(p, SCENARIO_POD_TO_POD, PLACEMENT_OTHER_NODE, "one node");
    plan_set_families(p, both, 2);
    assert_int_equal(plan_group_count(p), 4);
    assert_group(p, 0, SCENARIO_POD_TO_POD, "same-node", false, 1);
    assert_group(p, 1, SCENARIO_POD_TO_POD, "same-node", false, 1);
    assert_group(p, 2, SCENARIO_POD_TO_POD, "other-node", false, 1);
    assert_group(p, 3, SCENARIO_POD_TO_POD, "other-node", false, 1);
    assert_string_equal(plan_group_get(p, 0)->ip_family, "IPv4");
    assert_string_equal(plan_group_get(p, 1)->ip_family, "IPv6");
    assert_string_equal(plan_group_get(p, 2)->ip_family, "IPv4");
    assert_string_equal(plan_group_get(p, 3)->ip_family, "IPv6");
    assert_false(plan_group_get(p, 1)->skipped);
    assert_true(plan_group_get(p, 3)->skipped);
    assert_string_equal(plan_group_get(p, 3)->skip_reason, "one node");
    assert_int_equal(plan_measurement_count(p), 2);
    plan_free(p);
}

static void test_plan_one_placement_keeps_external(void **state)
{
    struct plan_opts o =
        opts_with(SCENARIO_ALL_MASK, 1u << PLACEMENT_OTHER_NODE, 1u << TEST_TCP_RR, 1);
    struct plan *p = plan_new(&o);

    (void)state;
    /* 3 other-node groups + external forward; no reverse group (RR is not reversible) */
    assert_int_equal(plan_group_count(p), 4);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(plan_group_get(p, i)->placement_label, "other-node");
    assert_group(p, 3, SCENARIO_POD_TO_EXTERNAL, "external", false, 1);
    plan_free(p);
}

/* every kind, the loaded one too: canonical order forward; the reverse group has only the
 * reversible streams (TCP_RR_LOADED's load always fills client -> server) */
static void test_plan_all_tests_canonical_order(void **state)
{
    struct plan_opts o =
        opts_with(1u << SCENARIO_POD_TO_EXTERNAL, PLACEMENT_BOTH_MASK, (1u << TEST_COUNT) - 1, 1);
    struct plan *p = plan_new(&o);
    const struct plan_group *g;

    (void)state;
    assert_int_equal(plan_group_count(p), 2);
    g = plan_group_get(p, 0);
    assert_int_equal(g->n_tests, TEST_COUNT);
    for (int t = 0; t < TEST_COUNT; t++)
        assert_int_equal(g->tests[t], t);
    g = plan_group_get(p, 1);
    assert_true(g->reverse);
    assert_int_equal(g->n_tests, 3);
    assert_int_equal(g->tests[2], TEST_UDP_STREAM);
    plan_free(p);
}

/* "all" is every test but TCP_RR_LOADED, which only --under-load (or naming it) adds */
static void test_plan_all_mask_leaves_out_the_loaded_test(void **state)
{
    (void)state;
    assert_int_equal(TEST_ALL_MASK & (1u << TEST_TCP_RR_LOADED), 0);
    for (int t = 0; t < TEST_COUNT; t++)
        if (!testkind_get((enum test_kind)t)->loaded)
            assert_true(TEST_ALL_MASK & (1u << t));
}

static void test_plan_skip_keeps_group_with_first_reason(void **state)
{
    struct plan_opts o = opts_with(SCENARIO_ALL_MASK, PLACEMENT_BOTH_MASK, TEST_DEFAULT_MASK, 3);
    struct plan *p = plan_new(&o);
    size_t before = plan_measurement_count(p);

    (void)state;
    assert_int_equal(before, 69);
    assert_int_equal(plan_skip(p, SCENARIO_POD_TO_SERVICE, PLACEMENT_OTHER_NODE, "no %s", "svc"),
                     1);
    /* a second reason does not replace the first, and is not counted again */
    assert_int_equal(plan_skip(p, SCENARIO_POD_TO_SERVICE, PLACEMENT_COUNT, "later"), 1);
    assert_int_equal(plan_group_count(p), 8); /* never dropped */
    assert_true(plan_group_get(p, 5)->skipped);
    assert_string_equal(plan_group_get(p, 5)->skip_reason, "no svc");
    assert_string_equal(plan_group_get(p, 4)->skip_reason, "later");
    assert_false(plan_group_get(p, 3)->skipped);
    assert_int_equal(plan_measurement_count(p), before - 2 * 3 * 3);
    /* both external groups at once */
    assert_int_equal(plan_skip(p, SCENARIO_POD_TO_EXTERNAL, PLACEMENT_COUNT, "none"), 2);
    assert_int_equal(plan_measurement_count(p), 12 * 3);
    assert_int_equal(plan_expected_ms(p), 36ull * 10000);
    plan_free(p);
}

static void test_plan_expected_time_counts_omit(void **state)
{
    struct plan_opts o =
        opts_with(1u << SCENARIO_HOST_TO_HOST, 1u << PLACEMENT_SAME_NODE, 1u << TEST_UDP_RR, 2);
    struct plan *p;

    (void)state;
    o.omit_ms = 1000;
    p = plan_new(&o);
    assert_int_equal(plan_measurement_count(p), 2);
    assert_int_equal(plan_expected_ms(p), 2 * 11000);
    plan_free(p);
}

static void test_plan_sweep_one_group_per_node(void **state)
{
    const char *nodes[] = {"ip-10-0-1-5", "ip-10-0-1-6", "ip-10-0-1-7"};
    struct plan_opts o = opts_with((1u << SCENARIO_POD_TO_POD) | (1u << SCENARIO_POD_TO_EXTERNAL),
                                   PLACEMENT_BOTH_MASK, 1u << TEST_TCP_RR, 1);
    struct plan *p = plan_new(&o);

    (void)state;
    plan_skip(p, SCENARIO_POD_TO_POD, PLACEMENT_OTHER_NODE, "kept reason");
    plan_expand_sweep(p, nodes, 3);
    assert_int_equal(plan_group_count(p), 1 + 3 + 1);
    assert_string_equal(plan_group_get(p, 0)->placement_label, "same-node");
    for (size_t i = 0; i < 3; i++) {
        const struct plan_group *g = plan_group_get(p, 1 + i);
        char want[64];
        snprintf(want, sizeof(want), "node:%s", nodes[i]);
        assert_int_equal(g->placement, PLACEMENT_NODE);
        assert_string_equal(g->node, nodes[i]);
        assert_string_equal(g->placement_label, want);
        assert_string_equal(g->skip_reason, "kept reason");
    }
    assert_string_equal(plan_group_get(p, 4)->placement_label, "external");
    plan_free(p);
}

static void test_plan_skip_node_client_and_extra(void **state)
{
    const char *nodes[] = {"n1", "n2", "n3"};
    struct plan_opts o = opts_with(1u << SCENARIO_POD_TO_POD, PLACEMENT_BOTH_MASK,
                                   (1u << TEST_TCP_RR) | (1u << TEST_TCP_STREAM), 1);
    struct plan *p = plan_new(&o);
    size_t extra[] = {0, 1}; /* same-node (not a sweep group: ignored) and n1's pair */

    (void)state;
    plan_expand_sweep(p, nodes, 3); /* same-node, n1..n3, n1..n3 reverse */
    assert_int_equal(plan_group_count(p), 7);
    /* n2 as client (forward and reverse), and n1's forward pair (whose server is n2) */
    assert_int_equal(plan_skip_node(p, "n2", extra, 2, "node n2 is NotReady"), 3);
    assert_false(plan_group_get(p, 0)->skipped);
    assert_true(plan_group_get(p, 1)->skipped);
    assert_true(plan_group_get(p, 2)->skipped);
    assert_false(plan_group_get(p, 3)->skipped);
    assert_false(plan_group_get(p, 4)->skipped);
    assert_true(plan_group_get(p, 5)->skipped);
    assert_string_equal(plan_group_get(p, 5)->skip_reason, "node n2 is NotReady");
    /* already skipped groups keep their first reason */
    assert_int_equal(plan_skip_node(p, "n2", NULL, 0, "again"), 0);
    assert_string_equal(plan_group_get(p, 2)->skip_reason, "node n2 is NotReady");
    plan_free(p);
}

static void test_plan_sweep_streams_both_directions(void **state)
{
    const char *nodes[] = {"n1", "n2"};
    struct plan_opts o = opts_with(1u << SCENARIO_POD_TO_POD, PLACEMENT_BOTH_MASK,
                                   (1u << TEST_TCP_RR) | (1u << TEST_TCP_STREAM), 1);
    struct plan *p = plan_new(&o);

    (void)state;
    plan_expand_sweep(p, nodes, 2);
    /* same-node, 2 forward (RR + stream), 2 reverse (stream only) */
    assert_int_equal(plan_group_count(p), 1 + 2 + 2);
    for (size_t i = 0; i < 2; i++) {
        const struct plan_group *f = plan_group_get(p, 1 + i), *r = plan_group_get(p, 3 + i);
        assert_false(f->reverse);
        assert_int_equal(f->n_tests, 2);
        assert_true(r->reverse);
        assert_string_equal(r->node, nodes[i]);
        assert_int_equal(r->n_tests, 1);
        assert_int_equal(r->tests[0], TEST_TCP_STREAM);
    }
    plan_free(p);
}

/* --services 0,100,1000: the pod-to-service groups in place at 0 (plain labels), then once
 * per larger size, adjacent and ascending; other scenarios' groups are not sized */
static void test_plan_services_sizes_follow_the_base_groups(void **state)
{
    static const unsigned sizes[] = {0, 100, 1000};
    struct plan_opts o =
        opts_with((1u << SCENARIO_POD_TO_POD) | (1u << SCENARIO_POD_TO_SERVICE),
                  PLACEMENT_BOTH_MASK, (1u << TEST_TCP_RR) | (1u << TEST_TCP_CRR), 1);
    static const unsigned want_size[] = {0, 0, 0, 0, 100, 100, 1000, 1000};
    struct plan *p;

    (void)state;
    o.services = sizes;
    o.n_services = 3;
    p = plan_new(&o);
    assert_int_equal(plan_group_count(p), 8);
    assert_group(p, 0, SCENARIO_POD_TO_POD, "same-node", false, 2);
    assert_group(p, 1, SCENARIO_POD_TO_POD, "other-node", false, 2);
    assert_group(p, 2, SCENARIO_POD_TO_SERVICE, "same-node", false, 2);
    assert_group(p, 3, SCENARIO_POD_TO_SERVICE, "other-node", false, 2);
    assert_group(p, 4, SCENARIO_POD_TO_SERVICE, "same-node/services-100", false, 2);
    assert_group(p, 5, SCENARIO_POD_TO_SERVICE, "other-node/services-100", false, 2);
    assert_group(p, 6, SCENARIO_POD_TO_SERVICE, "same-node/services-1000", false, 2);
    assert_group(p, 7, SCENARIO_POD_TO_SERVICE, "other-node/services-1000", false, 2);
    for (size_t i = 0; i < 8; i++) {
        const struct plan_group *g = plan_group_get(p, i);
        assert_int_equal(g->services_sized, i >= 2);
        assert_int_equal(g->services, want_size[i]);
        assert_int_equal(g->netpol_rules, 0);
    }
    assert_int_equal(plan_measurement_count(p), 16);
    plan_free(p);
}

/* The smallest size labelled too when it is not 0; one size: no sized groups at all */
static void test_plan_services_smallest_size_labelled_unless_zero(void **state)
{
    static const unsigned sizes[] = {20, 60};
    struct plan_opts o =
        opts_with(1u << SCENARIO_POD_TO_SERVICE, 1u << PLACEMENT_SAME_NODE, 1u << TEST_TCP_CRR, 1);
    struct plan *p;

    (void)state;
    o.services = sizes;
    o.n_services = 2;
    p = plan_new(&o);
    assert_int_equal(plan_group_count(p), 2);
    assert_group(p, 0, SCENARIO_POD_TO_SERVICE, "same-node/services-20", false, 1);
    assert_group(p, 1, SCENARIO_POD_TO_SERVICE, "same-node/services-60", false, 1);
    assert_int_equal(plan_group_get(p, 0)->services, 20);
    assert_int_equal(plan_group_get(p, 1)->services, 60);
    plan_free(p);
    o.n_services = 1; /* --services 20: today's run, the Services made in prepare */
    p = plan_new(&o);
    assert_int_equal(plan_group_count(p), 1);
    assert_group(p, 0, SCENARIO_POD_TO_SERVICE, "same-node", false, 1);
    assert_false(plan_group_get(p, 0)->services_sized);
    plan_free(p);
}

static void test_plan_netpol_sizes_follow_the_base_groups(void **state)
{
    static const unsigned sizes[] = {0, 100, 1000};
    struct plan_opts o = opts_with((1u << SCENARIO_POD_TO_POD) | (1u << SCENARIO_HOST_TO_HOST),
                                   PLACEMENT_BOTH_MASK, 1u << TEST_TCP_CRR, 1);
    struct plan *p;

    (void)state;
    o.netpol_rules = sizes;
    o.n_netpol_rules = 3;
    p = plan_new(&o);
    /* the groups without a policy first, as always; then the pod groups once per size > 0 */
    assert_int_equal(plan_group_count(p), 8);
    assert_group(p, 0, SCENARIO_POD_TO_POD, "same-node", false, 1);
    assert_group(p, 3, SCENARIO_HOST_TO_HOST, "other-node", false, 1);
    assert_group(p, 4, SCENARIO_POD_TO_POD, "same-node/netpol-100", false, 1);
    assert_group(p, 5, SCENARIO_POD_TO_POD, "other-node/netpol-100", false, 1);
    assert_group(p, 6, SCENARIO_POD_TO_POD, "same-node/netpol-1000", false, 1);
    assert_group(p, 7, SCENARIO_POD_TO_POD, "other-node/netpol-1000", false, 1);
    for (size_t i = 0; i < 8; i++) {
        const struct plan_group *g = plan_group_get(p, i);
        assert_int_equal(g->netpol_rules, i < 4 ? 0 : i < 6 ? 100 : 1000);
        assert_int_equal(g->placement, i % 2 ? PLACEMENT_OTHER_NODE : PLACEMENT_SAME_NODE);
    }
    assert_int_equal(plan_measurement_count(p), 8);
    plan_free(p);
}

/* pod-to-dns: UDP_RR and TCP_CRR whatever --tests says, one group per node once expanded (a
 * sweep's expansion leaves it alone) */
static void test_plan_dns_one_group_per_node(void **state)
{
    const char *nodes[] = {"node-1", "node-2", "node-3"};
    struct plan_opts o = opts_with((1u << SCENARIO_POD_TO_POD) | (1u << SCENARIO_POD_TO_DNS),
                                   1u << PLACEMENT_SAME_NODE, 1u << TEST_TCP_STREAM, 1);
    struct plan *p = plan_new(&o);

    (void)state;
    assert_int_equal(plan_group_count(p), 2);
    plan_expand_sweep(p, nodes, 3);
    assert_int_equal(plan_group_count(p), 2);
    plan_expand_dns(p, nodes, 3);
    assert_int_equal(plan_group_count(p), 1 + 3);
    for (size_t i = 0; i < 3; i++) {
        const struct plan_group *g = plan_group_get(p, 1 + i);
        char want[64];
        snprintf(want, sizeof(want), "node:%s", nodes[i]);
        assert_int_equal(g->scenario, SCENARIO_POD_TO_DNS);
        assert_string_equal(g->node, nodes[i]);
        assert_string_equal(g->placement_label, want);
        assert_int_equal(g->n_tests, 2);
        assert_int_equal(g->tests[0], TEST_TCP_CRR);
        assert_int_equal(g->tests[1], TEST_UDP_RR);
    }
    plan_expand_dns(p, nodes, 3); /* expanded groups stay as they are */
    assert_int_equal(plan_group_count(p), 4);
    plan_free(p);
}

static void test_plan_names_round_trip(void **state)
{
    (void)state;
    for (int s = 0; s < SCENARIO_COUNT; s++)
        assert_int_equal(plan_scenario_from_name(plan_scenario_name((enum scenario)s)), s);
    assert_int_equal(plan_scenario_from_name("pod-to-nowhere"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_default_is_pod_to_pod_both_placements),
        cmocka_unit_test(test_plan_all_scenarios_order_and_external_directions),
        cmocka_unit_test(test_plan_one_placement_keeps_external),
        cmocka_unit_test(test_plan_all_tests_canonical_order),
        cmocka_unit_test(test_plan_all_mask_leaves_out_the_loaded_test),
        cmocka_unit_test(test_plan_skip_keeps_group_with_first_reason),
        cmocka_unit_test(test_plan_expected_time_counts_omit),
        cmocka_unit_test(test_plan_sweep_one_group_per_node),
        cmocka_unit_test(test_plan_sweep_streams_both_directions),
        cmocka_unit_test(test_plan_skip_node_client_and_extra),
        cmocka_unit_test(test_plan_dns_one_group_per_node),
        cmocka_unit_test(test_plan_names_round_trip),
        cmocka_unit_test(test_plan_families),
        cmocka_unit_test(test_plan_netpol_sizes_follow_the_base_groups),
        cmocka_unit_test(test_plan_services_sizes_follow_the_base_groups),
        cmocka_unit_test(test_plan_services_smallest_size_labelled_unless_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
