/* SPDX-License-Identifier: Apache-2.0 */
/* test_dnsmsg.c - the DNS probe's messages (agent/dnsmsg.h): a query's bytes; bad names refused;
 * a reply accepted with its answers counted (also with a compressed name and the question in
 * another case); replies refused when short, cut inside an answer, not a response, of another
 * id or question, or with a pointer loop; TC reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/dnsmsg.h"
#include "base/kp_err.h"

static const uint8_t query_a[] = {
    0x12, 0x34, 0x01, 0x00, 0, 1,   0,   0, 0, 0, 0, 0, /* id, RD, one question */
    3,    's',  'v',  'c',  2, 'n', 's', 0, 0, 1, 0, 1};

/* A reply to query_a: header flags, then `an` A records, each named by a pointer to the
 * question's name (offset 12). Returns its length. */
static size_t reply(uint8_t *buf, uint16_t flags, unsigned an)
{
    size_t off = sizeof(query_a);

    memcpy(buf, query_a, sizeof(query_a));
    buf[2] = (uint8_t)(flags >> 8);
    buf[3] = (uint8_t)flags;
    buf[7] = (uint8_t)an;
    for (unsigned i = 0; i < an; i++) {
        const uint8_t rr[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 198, 19, 240, (uint8_t)i};
        memcpy(buf + off, rr, sizeof(rr));
        off += sizeof(rr);
    }
    return off;
}

static void test_dnsmsg_encode_query(void **state)
{
    uint8_t buf[DNSMSG_QUERY_MAX];
    size_t len = 0;
    struct kp_err err;

    (void)state;
    kp_err_clear(&err);
    assert_int_equal(dnsmsg_encode("svc.ns.", DNSMSG_TYPE_A, 0x1234, buf, sizeof(buf), &len, &err),
                     0);
    assert_int_equal(len, sizeof(query_a));
    assert_memory_equal(buf, query_a, len);
    assert_int_equal(dnsmsg_id(buf, len), 0x1234);
    dnsmsg_set_id(buf, 7);
    assert_int_equal(dnsmsg_id(buf, len), 7);
    assert_int_equal(dnsmsg_encode("svc.ns", DNSMSG_TYPE_AAAA, 1, buf, sizeof(buf), &len, &err), 0);
    assert_int_equal(buf[len - 3], DNSMSG_TYPE_AAAA);
}

static void test_dnsmsg_encode_refuses_bad_names(void **state)
{
    uint8_t buf[DNSMSG_QUERY_MAX];
    char big[300];
    size_t len;
    struct kp_err err;

    (void)state;
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    kp_err_clear(&err);
    assert_int_equal(dnsmsg_encode("", 1, 1, buf, sizeof(buf), &len, &err), -1);
    assert_int_equal(dnsmsg_encode("a..b", 1, 1, buf, sizeof(buf), &len, &err), -1);
    assert_int_equal(dnsmsg_encode(".a", 1, 1, buf, sizeof(buf), &len, &err), -1);
    assert_int_equal(dnsmsg_encode("a..", 1, 1, buf, sizeof(buf), &len, &err), -1);
    assert_int_equal(dnsmsg_encode(big, 1, 1, buf, sizeof(buf), &len, &err), -1);
    big[64] = 0; /* one label of 64 bytes */
    assert_int_equal(dnsmsg_encode(big, 1, 1, buf, sizeof(buf), &len, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "labels"));
    assert_int_equal(dnsmsg_encode("svc.ns", 1, 1, buf, 20, &len, &err), -1); /* no room */
}

static void test_dnsmsg_reply_accepted(void **state)
{
    uint8_t buf[256];
    struct dnsmsg_reply r;
    struct kp_err err;
    size_t len = reply(buf, 0x8180, 2); /* QR, RD, RA, NOERROR */

    (void)state;
    kp_err_clear(&err);
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), 0);
    assert_int_equal(r.id, 0x1234);
    assert_int_equal(r.rcode, 0);
    assert_int_equal(r.answers, 2);
    assert_false(r.truncated);
    /* the question echoed in another case is the same question */
    buf[13] = 'S';
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), 0);
    /* NXDOMAIN with no answers, and a truncated answer, are replies too */
    len = reply(buf, 0x8183, 0);
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), 0);
    assert_int_equal(r.rcode, 3);
    assert_int_equal(r.answers, 0);
    len = reply(buf, 0x8380, 0);
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), 0);
    assert_true(r.truncated);
}

static void test_dnsmsg_reply_refused(void **state)
{
    uint8_t buf[256];
    struct dnsmsg_reply r;
    struct kp_err err;
    size_t len = reply(buf, 0x8180, 1);

    (void)state;
    kp_err_clear(&err);
    for (size_t cut = 0; cut < len; cut++) /* every truncation of the message */
        assert_int_equal(dnsmsg_parse_reply(buf, cut, query_a, sizeof(query_a), &r, &err), -1);
    buf[1] ^= 1; /* another id */
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "id"));
    buf[1] ^= 1;
    buf[2] &= 0x7f; /* a query, not a response */
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), -1);
    len = reply(buf, 0x8180, 1);
    buf[len - 16 - 3] = 28; /* the question asks for AAAA */
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), -1);
    len = reply(buf, 0x8180, 1);
    buf[14] = 'x'; /* another name */
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), -1);
    len = reply(buf, 0x8180, 1);
    buf[7] = 3; /* says three answers, holds one */
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "cut short"));
    len = reply(buf, 0x8180, 1);
    buf[len - 5] = 200; /* rdlength past the end */
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), -1);
    len = reply(buf, 0x8180, 0);
    buf[12] = 0xc0; /* the question's name: a pointer to itself */
    buf[13] = 12;
    assert_int_equal(dnsmsg_parse_reply(buf, len, query_a, sizeof(query_a), &r, &err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dnsmsg_encode_query),
        cmocka_unit_test(test_dnsmsg_encode_refuses_bad_names),
        cmocka_unit_test(test_dnsmsg_reply_accepted),
        cmocka_unit_test(test_dnsmsg_reply_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
