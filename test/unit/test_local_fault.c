/* SPDX-License-Identifier: Apache-2.0 */
/* test_local_fault.c - the SPEC syntax of --local-fault: every kind parses with its keys, and
 * each kind of bad input gets a one-line message naming the bad part. Applying a fault needs
 * root and a built cluster: e2e.local_regression does that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_err.h"
#include "controller/local/local_fault.h"

static void test_local_fault_kinds_parse(void **state)
{
    static const char *const ok[] = {
        "mtu:link=node1,mtu=1280",
        "rate:link=node2,rate=200mbit",
        "rate:rate=1G,link=client",
        "loss:link=server2,pct=2",
        "loss:link=ext,pct=0.5",
        "delay:link=node2,ms=5",
        "cpu:node=node2,rules=1000",
        "cni-add-delay:node=node2,delay=2s",
        "rollout:down=2s,gap=2s",
        "conntrack-max:node=node2,max=8",
        "rollout:gap=500ms,down=1s,flush=1",
        "mtu-hop:link=node2,mtu=1400",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        struct kp_err err = {{0}};
        struct local_fault *f = local_fault_parse(ok[i], &err);
        if (!f)
            fail_msg("%s: %s", ok[i], kp_err_msg(&err));
        assert_string_equal(local_fault_spec(f), ok[i]);
        local_fault_free(f);
    }
    local_fault_free(NULL);
}

static void expect_error(const char *spec, const char *want)
{
    struct kp_err err = {{0}};
    struct local_fault *f = local_fault_parse(spec, &err);

    if (f) {
        local_fault_free(f);
        fail_msg("'%s' was accepted", spec);
    }
    if (!strstr(kp_err_msg(&err), want))
        fail_msg("'%s': '%s' does not say '%s'", spec, kp_err_msg(&err), want);
    if (!strstr(kp_err_msg(&err), "--local-fault '"))
        fail_msg("'%s': '%s' does not name the flag", spec, kp_err_msg(&err));
}

static void test_local_fault_bad_specs(void **state)
{
    (void)state;
    expect_error("", "unknown kind ''");
    expect_error("netem:link=node1", "unknown kind 'netem' (mtu, mtu-hop, rate, loss, delay, cpu, "
                                     "conntrack-max, cni-add-delay or "
                                     "rollout)");
    expect_error("loss", "loss needs every key of loss:link=L,pct=N");
    expect_error("loss:link=node2", "needs every key");
    expect_error("loss:link=node3,pct=2", "unknown link 'node3'");
    expect_error("loss:link=node2,pct=0", "pct '0' is not a percentage in [0.1, 99.9]");
    expect_error("loss:link=node2,pct=100", "is not a percentage");
    expect_error("loss:link=node2,pct=2x", "is not a percentage");
    expect_error("loss:link=node2,pct=2,pct=3", "key 'pct' given twice");
    expect_error("loss:link=node2,rate=1G", "loss takes no key 'rate'");
    expect_error("loss:link=node2,bogus=1", "loss takes no key 'bogus'");
    expect_error("loss:link=node2,pct", "'pct' is not KEY=VALUE");
    expect_error("loss:link=,pct=2", "'link=' is not KEY=VALUE");
    expect_error("mtu:link=node1,mtu=100", "mtu '100' is not a whole number in [576, 65000]");
    expect_error("mtu-hop:link=node2", "mtu-hop needs every key of mtu-hop:link=L,mtu=BYTES");
    expect_error("mtu-hop:link=node2,mtu=1400,pct=1",
                 "mtu-hop takes no key 'pct' (mtu-hop:link=L,mtu=BYTES)");
    expect_error("rate:link=node1,rate=5x", "rate '5x' is not a rate");
    expect_error("rate:link=node1,rate=10k", "is not a rate in [1M, 100G]");
    expect_error("delay:link=node1,ms=0", "ms '0' is not a whole number");
    expect_error("cpu:node=node3,rules=10", "unknown node 'node3' (node1 or node2)");
    expect_error("cpu:node=node1,rules=1000000", "rules '1000000' is not a whole number");
    expect_error("cpu:link=node1,rules=10", "cpu takes no key 'link'");
    expect_error("cni-add-delay:node=node2", "cni-add-delay needs every key of "
                                             "cni-add-delay:node=node1|node2,delay=DUR");
    expect_error("cni-add-delay:node=node2,delay=0s", "delay '0s' is not a duration in [1ms, 60s]");
    expect_error("cni-add-delay:node=node2,delay=61s", "is not a duration in [1ms, 60s]");
    expect_error("cni-add-delay:node=node2,delay=soon", "delay 'soon' is not a duration");
    expect_error("cni-add-delay:node=node3,delay=1s", "unknown node 'node3'");
    expect_error("cni-add-delay:link=node2,delay=1s", "cni-add-delay takes no key 'link'");
    expect_error("conntrack-max:node=node2,max=0", "max '0' is not a whole number in [1, 1000000]");
    expect_error("conntrack-max:node=node2", "conntrack-max needs every key of conntrack-max:");
    expect_error("rollout:down=2s", "rollout needs every key of rollout:down=DUR,gap=DUR");
    expect_error("rollout:flush=1,gap=1s", "needs every key");
    expect_error("rollout:down=50ms,gap=1s", "down '50ms' is not a duration in [100ms, 10m]");
    expect_error("rollout:down=1s,gap=11m", "gap '11m' is not a duration in [100ms, 10m]");
    expect_error("rollout:down=1s,gap=1s,flush=yes", "flush 'yes' is not 0 or 1");
    expect_error("rollout:down=1s,gap=1s,node=node1", "rollout takes no key 'node'");
}

/* A rollout's timing, and no other kind claims to be one. */
static void test_local_fault_rollout(void **state)
{
    struct kp_err err = {{0}};
    struct local_fault *r = local_fault_parse("rollout:down=2s,gap=1500ms,flush=1", &err);
    struct local_fault *p = local_fault_parse("rollout:down=300ms,gap=1s", &err);
    struct local_fault *d = local_fault_parse("cni-add-delay:node=node1,delay=1s", &err);
    uint64_t down = 0, gap = 0;
    bool flush = false;

    (void)state;
    assert_non_null(r);
    assert_non_null(p);
    assert_non_null(d);
    assert_true(local_fault_rollout(r, &down, &gap, &flush));
    assert_int_equal(down, 2000);
    assert_int_equal(gap, 1500);
    assert_true(flush);
    assert_true(local_fault_rollout(p, &down, &gap, &flush));
    assert_int_equal(down, 300);
    assert_false(flush);
    assert_false(local_fault_rollout(d, &down, &gap, &flush));
    assert_int_equal(local_fault_pod_delay_ms(r, LN_NODE1), 0);
    local_fault_free(r);
    local_fault_free(p);
    local_fault_free(d);
}

/* What a fault adds to a new pod's network set-up: a cni-add-delay's delay on its node only. */
static void test_local_fault_pod_delay(void **state)
{
    struct kp_err err = {{0}};
    struct local_fault *d = local_fault_parse("cni-add-delay:node=node2,delay=1500ms", &err);
    struct local_fault *c = local_fault_parse("cpu:node=node2,rules=10", &err);

    (void)state;
    assert_non_null(d);
    assert_non_null(c);
    assert_int_equal(local_fault_pod_delay_ms(d, LN_NODE2), 1500);
    assert_int_equal(local_fault_pod_delay_ms(d, LN_NODE1), 0);
    assert_int_equal(local_fault_pod_delay_ms(c, LN_NODE2), 0);
    local_fault_free(d);
    local_fault_free(c);
}

/* --cni-conf replaces kperf's pod links: the faults on them are refused with it. */
static void test_local_fault_on_pod_links(void **state)
{
    static const struct {
        const char *spec;
        bool pod;
    } cases[] = {
        {"loss:link=client,pct=1", true},
        {"mtu:link=server2,mtu=1280", true},
        {"mtu-hop:link=client,mtu=1400", true},
        {"mtu-hop:link=node2,mtu=1400", false},
        {"rollout:down=1s,gap=1s", true},
        {"loss:link=node2,pct=1", false},
        {"rate:link=ext,rate=1G", false},
        {"cpu:node=node1,rules=10", false},
        {"cni-add-delay:node=node1,delay=1s", false},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kp_err err = {{0}};
        struct local_fault *f = local_fault_parse(cases[i].spec, &err);
        assert_non_null(f);
        if (local_fault_on_pod_links(f) != cases[i].pod)
            fail_msg("%s: on pod links %d", cases[i].spec, !cases[i].pod);
        local_fault_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_fault_kinds_parse),
        cmocka_unit_test(test_local_fault_bad_specs),
        cmocka_unit_test(test_local_fault_pod_delay),
        cmocka_unit_test(test_local_fault_rollout),
        cmocka_unit_test(test_local_fault_on_pod_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
