/* SPDX-License-Identifier: Apache-2.0 */
/* test_dnsresult.c - the `kperf-agent dns` document: a consistent one parses and becomes a
 * kperf.result/v1 entry (UDP_RR or TCP_CRR, with dns{}) that the result checks accept; a
 * document whose counts do not add up, with an unknown field or a wrong protocol is refused
 * naming what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/unit/test_assert.h"

#include "base/dnsresult.h"
#include "base/hist.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/result.h"
#include "test/unit/dns_fixture.h"

static int parse_text(const json_t *d, json_t **out, struct kp_err *err)
{
    char *text = json_dumps(d, JSON_COMPACT);
    int rc = dnsresult_parse(text, strlen(text), out, err);

    free(text);
    return rc;
}

static void test_parse_and_entry(void **state)
{
    json_t *udp = dns_doc("udp", 100, 30, 0), *tcp = dns_doc("tcp", 25, 0, 6), *p = NULL;
    const json_t *both[2];
    struct kp_err err = {{0}};
    json_t *e, *doc;
    double v;

    (void)state;
    assert_int_equal(parse_text(udp, &p, &err), 0);
    json_decref(p);
    e = dnsresult_entry(udp, 0, "2026-12-04T17:00:00Z");
    assert_non_null(e);
    assert_string_equal(result_test(e), "UDP_RR");
    assert_int_equal(result_validate_entry(e, "e", &err), 0);
    assert_int_equal(result_number(e, "ops", &v), 0);
    assert_double_exact(v, 70);
    assert_int_equal(result_number(e, "dns.lost_pct", &v), 0);
    assert_double_exact(v, 30);
    assert_int_equal(result_number(e, "udp.loss_pct", &v), 0);
    assert_double_exact(v, 30);
    json_decref(e);
    e = dnsresult_entry(tcp, 0, "2026-12-04T17:00:00Z");
    assert_string_equal(result_test(e), "TCP_CRR");
    assert_int_equal(result_validate_entry(e, "e", &err), 0);
    assert_int_equal(result_number(e, "dns.slow_pct", &v), 0);
    assert_double_exact(v, 24);
    assert_null(json_object_get(e, "udp"));
    json_decref(e);
    both[0] = udp;
    both[1] = tcp;
    doc = dnsresult_doc(both, 2, "node-2", "2026-12-04T17:00:00Z");
    assert_int_equal(result_validate(doc, &err), 0);
    assert_int_equal(result_count(doc), 2);
    json_decref(doc);
    json_decref(udp);
    json_decref(tcp);
}

/* dnsresult_parse refuses d with a message containing want */
static void refused(json_t *d, const char *want)
{
    struct kp_err err = {{0}};
    json_t *p = NULL;

    assert_int_equal(parse_text(d, &p, &err), -1);
    assert_null(p);
    if (!strstr(kp_err_msg(&err), want))
        fail_msg("%s: no \"%s\"", kp_err_msg(&err), want);
    json_decref(d);
}

static void test_refused(void **state)
{
    json_t *d;
    struct kp_err err = {{0}};
    json_t *p = NULL;

    (void)state;
    d = dns_doc("udp", 100, 10, 0);
    json_object_set_new(d, "lost", json_integer(11));
    refused(d, "answered + lost differs from sent");
    d = dns_doc("udp", 100, 10, 0);
    json_object_set_new(d, "answered", json_integer(91));
    json_object_set_new(d, "lost", json_integer(9));
    refused(d, "histogram.count differs from answered");
    d = dns_doc("udp", 100, 0, 0);
    json_object_set_new(d, "extra", json_integer(1));
    refused(d, "unexpected field \"extra\"");
    d = dns_doc("sctp", 100, 0, 0);
    refused(d, "is not udp or tcp");
    d = dns_doc("udp", 100, 0, 0);
    json_object_del(d, "histogram"); /* an agent from before the histogram */
    refused(d, "histogram");
    assert_int_equal(dnsresult_parse("{", 1, &p, &err), -1);
    if (!strstr(kp_err_msg(&err), "not JSON"))
        fail_msg("%s: no \"%s\"", kp_err_msg(&err), "not JSON");
}

/* a dns{} whose figures disagree is refused inside a kperf.result/v1 entry too */
static void test_entry_dns_checked(void **state)
{
    json_t *udp = dns_doc("udp", 100, 0, 0);
    json_t *e = dnsresult_entry(udp, 0, "2026-12-04T17:00:00Z");
    struct kp_err err = {{0}};

    (void)state;
    json_object_set_new(json_object_get(e, "dns"), "lost_pct", json_real(101));
    assert_int_equal(result_validate_entry(e, "e", &err), -1);
    if (!strstr(kp_err_msg(&err), "e.dns"))
        fail_msg("%s: no \"%s\"", kp_err_msg(&err), "e.dns");
    json_decref(e);
    e = dnsresult_entry(udp, 0, "2026-12-04T17:00:00Z");
    json_object_set_new(e, "test", json_string("TCP_STREAM")); /* not a latency test */
    json_object_del(e, "ops");
    assert_int_equal(result_validate_entry(e, "e", &err), -1);
    json_decref(e);
    json_decref(udp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_entry),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_entry_dns_checked),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
