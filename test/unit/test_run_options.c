/* SPDX-License-Identifier: Apache-2.0 */
/* test_run_options.c - the values of `kperf run` without the command line: the defaults, the
 * checks that combine values (run_options_validate) and its normalisation, and cleanup. The
 * flags themselves are test_run_flags.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/plan.h"
#include "controller/run_options.h"

static void test_run_options_defaults(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    run_options_init(&o);
    assert_int_equal(o.scenarios, 1u << SCENARIO_POD_TO_POD);
    assert_int_equal(o.placements, PLACEMENT_BOTH_MASK);
    assert_int_equal(o.tests, TEST_DEFAULT_MASK);
    assert_int_equal(o.duration_ms, 10000);
    assert_int_equal(o.interval_ms, 1000);
    assert_int_equal(o.samples, 1);
    assert_int_equal(o.samples_max, 1);
    assert_false(o.samples_auto);
    assert_int_equal(o.streams, 4);
    assert_int_equal(o.timeout_ms, 120000);
    assert_int_equal(o.output, RUN_OUTPUT_TABLE);
    assert_int_equal(o.mtu, 1500);
    assert_int_equal(o.port, 5201);
    assert_int_equal(o.external_port, 5201);
    assert_false(o.local);
    assert_null(o.namespace_name);
    /* the defaults pass the checks unchanged */
    kp_err_clear(&err);
    assert_int_equal(run_options_validate(&o, &err), 0);
    assert_int_equal(o.interval_ms, 1000);
    run_options_cleanup(&o);
}

/* Each combination that cannot work fails with one line naming the flag. */
/* a build without KPERF_AGENT_IMAGE_DIGEST: the release's tag (test_run_options_digest.c: with) */
static void test_run_options_default_image_is_the_tag(void **state)
{
    (void)state;
    assert_string_equal(run_options_default_image(), "ghcr.io/kperf/kperf-agent:" KPERF_VERSION);
}

static void test_run_options_validate_refuses(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    run_options_init(&o);
    o.mtu = 9001; /* a cluster's MTU is its own */
    assert_int_equal(run_options_validate(&o, &err), -1);
    assert_string_equal(kp_err_msg(&err),
                        "--mtu applies to --local only (a cluster's MTU is its own)");
    o.local = true;
    assert_int_equal(run_options_validate(&o, &err), 0);
    run_options_cleanup(&o);

    run_options_init(&o);
    o.node_a = kp_xstrdup("a");
    o.nodes_from = kp_xstrdup("base.json");
    assert_int_equal(run_options_validate(&o, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--nodes and --nodes-from cannot be used together");
    run_options_cleanup(&o);

    run_options_init(&o);
    o.omit_ms = 3600000;
    assert_int_equal(run_options_validate(&o, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "--omit"));
    run_options_cleanup(&o);

    run_options_init(&o);
    o.interval_ms = 5000;
    o.duration_ms = 2000;
    assert_int_equal(run_options_validate(&o, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--interval: longer than --duration");
    run_options_cleanup(&o);
}

/* The default 1s series does not fit a sub-second run: it is dropped, not refused. */
static void test_run_options_validate_normalises_interval(void **state)
{
    struct run_options o;
    struct kp_err err;

    (void)state;
    run_options_init(&o);
    o.duration_ms = 500;
    assert_int_equal(run_options_validate(&o, &err), 0);
    assert_int_equal(o.interval_ms, 0);
    run_options_cleanup(&o);
}

static void test_run_options_cleanup_frees_and_zeroes(void **state)
{
    struct run_options o;

    (void)state;
    run_options_init(&o);
    o.kubeconfig = kp_xstrdup("/k");
    o.node_selector = kp_xcalloc(1, sizeof(*o.node_selector));
    o.node_selector[0].key = kp_xstrdup("role");
    o.node_selector[0].value = kp_xstrdup("perf");
    o.n_node_selector = 1;
    o.tolerations = kp_xcalloc(1, sizeof(*o.tolerations));
    o.tolerations[0].effect = kp_xstrdup("NoSchedule");
    o.n_tolerations = 1;
    run_options_cleanup(&o); /* the sanitizer build catches a leak */
    assert_null(o.kubeconfig);
    assert_null(o.node_selector);
    assert_int_equal(o.n_node_selector, 0);
    assert_null(o.tolerations);
    assert_int_equal(o.n_tolerations, 0);
}

/* --ip-family against the cluster's families: default = all of them, both only on
 * dual-stack, a single family only when the cluster has it; unknown = IPv4. */
static void test_run_options_ip_families(void **state)
{
    static const char *const v4[] = {"IPv4"}, *const v6[] = {"IPv6"};
    static const char *const dual6[] = {"IPv6", "IPv4"};
    const char *out[2];
    size_t n = 9;
    struct kp_err err;

    (void)state;
    assert_int_equal(run_ip_families_choose(RUN_IP_DEFAULT, v4, 1, out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0], "IPv4");
    assert_int_equal(run_ip_families_choose(RUN_IP_DEFAULT, v6, 1, out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0], "IPv6");
    assert_int_equal(run_ip_families_choose(RUN_IP_DEFAULT, dual6, 2, out, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_string_equal(out[0], "IPv6");
    assert_string_equal(out[1], "IPv4");
    assert_int_equal(run_ip_families_choose(RUN_IP_BOTH, dual6, 2, out, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(run_ip_families_choose(RUN_IPV4, dual6, 2, out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0], "IPv4");
    assert_int_equal(run_ip_families_choose(RUN_IPV6, dual6, 2, out, &n, &err), 0);
    assert_string_equal(out[0], "IPv6");
    assert_int_equal(run_ip_families_choose(RUN_IP_DEFAULT, NULL, 0, out, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(out[0], "IPv4");

    assert_int_equal(run_ip_families_choose(RUN_IP_BOTH, v4, 1, out, &n, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--ip-family both: the cluster is IPv4-only (both "
                                          "needs a dual-stack cluster)");
    assert_int_equal(n, 0);
    assert_int_equal(run_ip_families_choose(RUN_IPV6, v4, 1, out, &n, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--ip-family ipv6: the cluster has no IPv6 (it is "
                                          "IPv4-only)");
    assert_int_equal(run_ip_families_choose(RUN_IPV4, v6, 1, out, &n, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--ip-family ipv4: the cluster has no IPv4 (it is "
                                          "IPv6-only)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_options_defaults),
        cmocka_unit_test(test_run_options_default_image_is_the_tag),
        cmocka_unit_test(test_run_options_ip_families),
        cmocka_unit_test(test_run_options_validate_refuses),
        cmocka_unit_test(test_run_options_validate_normalises_interval),
        cmocka_unit_test(test_run_options_cleanup_frees_and_zeroes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
