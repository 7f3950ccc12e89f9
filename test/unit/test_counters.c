/* SPDX-License-Identifier: Apache-2.0 */
/* test_counters.c - the counter parsers on real files (test/unit/data/counters: /proc/net/snmp,
 * netstat, snmp6 and softnet_stat copied from a Debian 12 VM with kernel 6.18; its
 * /proc/net/stat/nf_conntrack, all zero there, with insert_failed 0x10, drop 0x2 and early_drop
 * 0x1 written into the second CPU's line), the delta JSON (absent is not zero, backwards is
 * left out), the trimming to the COUNTERS limit, and one snapshot of this process's namespace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "agent/counters.h"
#include "test/unit/fixture.h"

static struct counters_snap *parsed(const char *file,
                                    int (*parse)(const char *, struct counters_snap *))
{
    struct counters_snap *s = kp_xmalloc(sizeof(*s));
    char *text = fixture_text("counters", file, NULL);

    counters_snap_init(s);
    assert_int_equal(parse(text, s), 0);
    free(text);
    return s;
}

static uint64_t get(const struct counters_snap *s, const char *name)
{
    int found = 0;
    uint64_t v = counters_get(s, name, &found);

    if (!found)
        fail_msg("%s: not parsed", name);
    return v;
}

static void test_counters_snmp_and_netstat(void **state)
{
    struct counters_snap *s = parsed("snmp", counters_parse_snmp);
    int found = 1;
    (void)state;

    assert_int_equal(get(s, "Tcp.RetransSegs"), 26652);
    assert_int_equal(get(s, "Tcp.InSegs"), 59371483);
    assert_int_equal(get(s, "Udp.RcvbufErrors"), 251127);
    counters_get(s, "Tcp.MaxConn", &found); /* -1: a gauge, not a counter */
    assert_false(found);
    counters_get(s, "Icmp.InMsgs", &found); /* of Icmp: only the unreachables */
    assert_false(found);
    counters_get(s, "Icmp.OutDestUnreachs", &found);
    assert_true(found);
    assert_int_equal(counters_parse_snmp(NULL, s), -1);
    assert_int_equal(counters_parse_snmp("Tcp: A B\nTcp: 1\n", s), -1); /* names != values */
    free(s);

    s = parsed("netstat", counters_parse_snmp);
    assert_int_equal(get(s, "TcpExt.ListenDrops"), 0);
    assert_int_equal(get(s, "TcpExt.ListenOverflows"), 0);
    assert_int_equal(get(s, "TcpExt.TCPTimeouts"), 6);
    free(s);

    s = parsed("snmp6", counters_parse_snmp6);
    assert_int_equal(get(s, "Udp6.InDatagrams"), 333120);
    counters_get(s, "Ip6.InReceives", &found);
    assert_false(found);
    free(s);
}

static void test_counters_softnet_and_conntrack(void **state)
{
    struct counters_snap *s = parsed("softnet_stat", counters_parse_softnet);
    (void)state;

    assert_int_equal(get(s, "softnet.dropped"), 0);
    assert_int_equal(get(s, "softnet.time_squeeze"), 0x11 + 0x9); /* hex, summed over CPUs */
    assert_int_equal(counters_parse_softnet("", s), -1);
    free(s);

    s = parsed("nf_conntrack", counters_parse_conntrack);
    assert_int_equal(get(s, "conntrack.insert_failed"), 0x10);
    assert_int_equal(get(s, "conntrack.drop"), 2);
    assert_int_equal(get(s, "conntrack.early_drop"), 1);
    assert_int_equal(get(s, "conntrack.search_restart"), 0);
    assert_int_equal(counters_parse_conntrack("entries drop\n00000001\n", s), -1); /* short */
    assert_int_equal(counters_parse_conntrack("Tcp: 1\n", s), -1);
    free(s);
}

static void test_counters_delta_json(void **state)
{
    struct counters_snap *a = kp_xmalloc(sizeof(*a)), *b = kp_xmalloc(sizeof(*b));
    json_t *d, *deltas;
    (void)state;

    counters_snap_init(a);
    counters_snap_init(b);
    a->sources = b->sources = COUNTERS_QDISC | COUNTERS_SNMP;
    counters_add(a, "qdisc.eth0.overlimits", 10);
    counters_add(b, "qdisc.eth0.overlimits", 826);
    counters_add(a, "qdisc.eth0.drops", 5);
    counters_add(b, "qdisc.eth0.drops", 5); /* did not move: left out */
    counters_add(a, "nic.veth1.rx_dropped", 9);
    counters_add(b, "nic.veth1.rx_dropped", 2); /* went back (device recreated): left out */
    counters_add(b, "nic.new0.rx_dropped", 7);  /* absent before: left out */
    d = counters_delta_json(a, b);
    deltas = json_object_get(d, "deltas");
    assert_int_equal(json_integer_value(json_object_get(d, "v")), COUNTERS_VERSION);
    assert_int_equal(json_object_size(deltas), 1);
    assert_int_equal(json_integer_value(json_object_get(deltas, "qdisc.eth0.overlimits")), 816);
    assert_int_equal(json_array_size(json_object_get(d, "sources")), 2);
    assert_null(json_object_get(d, "conntrack_count")); /* no conntrack: absent, not 0 */
    json_decref(d);
    free(a);
    free(b);
}

static void test_counters_text_trims_mib_first(void **state)
{
    json_t *d = json_pack("{s:i, s:{s:i}}", "v", 1, "deltas", "qdisc.eth0.drops", 3);
    json_t *deltas = json_object_get(d, "deltas");
    char *text;
    (void)state;

    for (int i = 0; i < 400; i++) {
        char name[64];
        snprintf(name, sizeof(name), "TcpExt.TCPSomething%03d", i);
        json_object_set_new(deltas, name, json_integer(123456));
    }
    text = counters_text(d, 8000);
    assert_non_null(text);
    assert_true(strlen(text) <= 8000);
    assert_non_null(strstr(text, "\"qdisc.eth0.drops\":3"));
    assert_non_null(strstr(text, "\"trimmed\":true"));
    assert_null(strstr(text, "TCPSomething"));
    free(text);
    json_decref(d);
}

/* This process's own namespace: the files every Linux has are read. */
static void test_counters_take_own_namespace(void **state)
{
    struct counters_snap *s = kp_xmalloc(sizeof(*s));
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(counters_take(s, NULL, &err), 0);
    assert_true(s->sources & COUNTERS_SNMP);
    assert_true(s->sources & COUNTERS_NETSTAT);
    assert_true(s->sources & COUNTERS_LINK);
    assert_int_equal(counters_take(s, "/nonexistent/netns", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "/nonexistent/netns"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_snmp_and_netstat),
        cmocka_unit_test(test_counters_softnet_and_conntrack),
        cmocka_unit_test(test_counters_delta_json),
        cmocka_unit_test(test_counters_text_trims_mib_first),
        cmocka_unit_test(test_counters_take_own_namespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
