/* SPDX-License-Identifier: Apache-2.0 */
/* test_proto.c - wire protocol: every message round-trips, every malformed header and payload
 * is rejected with a reason, truncation asks for more, test requests are range-checked, HELLO
 * and REFUSE keep the framing every version reads, and the handshake MACs match an
 * independent HMAC (Python's hmac module) and bind both nonces and the side. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/proto.h"
#include "base/kp_err.h"
#include "base/testkind.h"

static uint8_t buf[PROTO_HEADER_LEN + PROTO_MAX_PAYLOAD];

static struct proto_test_req good_req(void)
{
    struct proto_test_req r = {.test = PROTO_TCP_STREAM_MULTI,
                               .flags = PROTO_FLAG_REVERSE,
                               .streams = 8,
                               .msg_size = 131072,
                               .duration_ms = 10000,
                               .omit_ms = 1000,
                               .rate_bps = 0};
    return r;
}

/* Encodes m, decodes it back into out; asserts the whole buffer is consumed. */
static void round_trip(const struct proto_msg *m, struct proto_msg *out)
{
    size_t n = proto_encode(m, buf, sizeof(buf));
    size_t used = 0;
    struct kp_err err;

    kp_err_clear(&err);
    assert_true(n >= PROTO_HEADER_LEN);
    assert_int_equal(proto_decode(buf, n, out, &used, &err), PROTO_OK);
    assert_int_equal(used, n);
    assert_int_equal(out->type, m->type);
}

/* A raw FACTS message of n declared text bytes and len payload bytes into buf; returns its size. */
static size_t raw_facts(uint16_t n, uint32_t len, uint8_t fill)
{
    const uint8_t head[] = {0x4b, 0x50, 0x52, 0x46, PROTO_VERSION, PROTO_FACTS, 0, 0};

    memcpy(buf, head, sizeof(head));
    buf[8] = (uint8_t)(len >> 24), buf[9] = (uint8_t)(len >> 16);
    buf[10] = (uint8_t)(len >> 8), buf[11] = (uint8_t)len;
    buf[12] = (uint8_t)(n >> 8), buf[13] = (uint8_t)n;
    memset(buf + 14, fill, len >= 2 ? len - 2 : 0);
    return PROTO_HEADER_LEN + len;
}

static enum proto_status decode_len(size_t n, struct kp_err *err)
{
    struct proto_msg m;
    size_t used;
    kp_err_clear(err);
    return proto_decode(buf, n, &m, &used, err);
}

/* FACTS: printable text only, its length matching the payload, 2..PROTO_FACTS_MAX bytes; the
 * encoder refuses an empty text and sanitises what is not printable; TEST_REQ may ask for it
 * on any test, and no other flag is new. */
static void test_proto_facts_rules(void **state)
{
    struct proto_msg m, out;
    struct kp_err err;
    (void)state;

    assert_int_equal(decode_len(raw_facts(4, 6, '{'), &err), PROTO_OK);
    assert_int_equal(decode_len(raw_facts(5, 6, '{'), &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "does not match"));
    assert_int_equal(decode_len(raw_facts(1, 3, '{'), &err), PROTO_ERROR);
    assert_int_equal(decode_len(raw_facts(6, 8, '\n'), &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "non-printable"));
    assert_int_equal(decode_len(raw_facts(PROTO_FACTS_MAX + 1, PROTO_FACTS_MAX + 3, 'a'), &err),
                     PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "bad length"));
    assert_int_equal(decode_len(raw_facts(PROTO_FACTS_MAX, PROTO_FACTS_MAX + 2, 'a'), &err),
                     PROTO_OK);

    memset(&m, 0, sizeof(m));
    m.type = PROTO_FACTS;
    assert_int_equal(proto_encode(&m, buf, sizeof(buf)), 0); /* nothing to send */
    strcpy(m.u.facts.text, "{\"a\":\"\x01\xff\"}");
    round_trip(&m, &out);
    assert_string_equal(out.u.facts.text, "{\"a\":\"??\"}");

    {
        struct proto_test_req r = good_req();
        r.test = PROTO_TCP_RR;
        r.streams = 1;
        r.flags = PROTO_FLAG_FACTS | PROTO_FLAG_COUNTERS;
        assert_int_equal(proto_check_test_req(&r, &err), 0);
        r.flags = 0x20; /* unknown */
        assert_int_equal(proto_check_test_req(&r, &err), -1);
    }
}

/* A message of type t with distinctive values in every field the type carries. */
static void sample_msg(uint8_t t, struct proto_msg *m)
{
    memset(m, 0, sizeof(*m));
    m->type = t;
    switch (t) {
    case PROTO_HELLO:
        m->u.hello.version_min = 1;
        m->u.hello.version_max = 3;
        break;
    case PROTO_CHALLENGE:
        memset(m->u.challenge.nonce, 0xa5, PROTO_NONCE_LEN);
        m->u.challenge.flags = PROTO_FLAG_AUTH;
        memset(m->u.challenge.kernel, 0x7e, PROTO_KERNEL_TAG_LEN);
        break;
    case PROTO_AUTH:
        memset(m->u.auth.nonce, 0x5a, PROTO_NONCE_LEN);
        memset(m->u.auth.mac, 0x3c, PROTO_MAC_LEN);
        break;
    case PROTO_AUTH_OK:
        memset(m->u.auth_ok.mac, 0xc3, PROTO_MAC_LEN);
        break;
    case PROTO_TEST_REQ:
        m->u.test_req = good_req();
        break;
    case PROTO_ACCEPT:
        m->u.accept.session = 0x0102030405060708ull;
        break;
    case PROTO_REFUSE:
        m->u.refuse.code = PROTO_REFUSE_BUSY;
        strcpy(m->u.refuse.reason, "busy: 16 tests running");
        break;
    case PROTO_DATA_HELLO:
        m->u.data_hello.session = 42;
        m->u.data_hello.stream = 7;
        break;
    case PROTO_STOP:
        m->u.stop.sent_bytes = 1ull << 40;
        m->u.stop.udp_sent = 12345;
        break;
    case PROTO_RESULT:
        m->u.result.window_ns = 10000000000ull;
        m->u.result.rx_bytes = 1000;
        m->u.result.rx_total = 2000;
        m->u.result.mtu = 9001;
        m->u.result.node_cpu[PROTO_CPU_SOFTIRQ] = 77;
        m->u.result.udp_jitter_ns = 5000;
        m->u.result.udp_send_ns = 3000000;
        m->u.result.udp_stop = PROTO_UDP_STOP_UNREACHABLE;
        m->u.result.nstreams = 3;
        m->u.result.streams[2].rx_bytes = 999;
        m->u.result.streams[2].mss = 8949;
        m->u.result.streams[2].cpu_us = 1234567;
        m->u.result.streams[2].cpu = 1;
        m->u.result.streams[1].cpu = PROTO_CPU_UNKNOWN;
        break;
    case PROTO_FACTS:
        strcpy(m->u.facts.text, "{\"kernel\":\"6.1.0\",\"cpus\":8}");
        break;
    case PROTO_COUNTERS:
        strcpy(m->u.counters.text, "{\"v\":1,\"deltas\":{\"qdisc.eth0.drops\":3}}");
        break;
    default:
        break;
    }
}

/* out, decoded from m's encoding, carries m's values. */
static void check_round_trip(const struct proto_msg *m, const struct proto_msg *out)
{
    switch (m->type) {
    case PROTO_HELLO:
        assert_int_equal(out->u.hello.version_max, 3);
        break;
    case PROTO_CHALLENGE:
        assert_memory_equal(out->u.challenge.nonce, m->u.challenge.nonce, PROTO_NONCE_LEN);
        assert_int_equal(out->u.challenge.flags, PROTO_FLAG_AUTH);
        assert_memory_equal(out->u.challenge.kernel, m->u.challenge.kernel, PROTO_KERNEL_TAG_LEN);
        break;
    case PROTO_AUTH:
        assert_memory_equal(out->u.auth.nonce, m->u.auth.nonce, PROTO_NONCE_LEN);
        assert_memory_equal(out->u.auth.mac, m->u.auth.mac, PROTO_MAC_LEN);
        break;
    case PROTO_AUTH_OK:
        assert_memory_equal(out->u.auth_ok.mac, m->u.auth_ok.mac, PROTO_MAC_LEN);
        break;
    case PROTO_TEST_REQ:
        assert_memory_equal(&out->u.test_req, &m->u.test_req, sizeof(m->u.test_req));
        break;
    case PROTO_ACCEPT:
        assert_int_equal(out->u.accept.session, m->u.accept.session);
        break;
    case PROTO_REFUSE:
        assert_string_equal(out->u.refuse.reason, m->u.refuse.reason);
        break;
    case PROTO_DATA_HELLO:
        assert_int_equal(out->u.data_hello.stream, 7);
        break;
    case PROTO_STOP:
        assert_int_equal(out->u.stop.sent_bytes, 1ull << 40);
        break;
    case PROTO_RESULT:
        assert_int_equal(out->u.result.nstreams, 3);
        assert_int_equal(out->u.result.streams[2].mss, 8949);
        assert_int_equal(out->u.result.streams[2].cpu_us, 1234567);
        assert_int_equal(out->u.result.streams[2].cpu, 1);
        assert_int_equal(out->u.result.streams[1].cpu, PROTO_CPU_UNKNOWN);
        assert_int_equal(out->u.result.node_cpu[PROTO_CPU_SOFTIRQ], 77);
        assert_int_equal(out->u.result.rx_total, 2000);
        assert_int_equal(out->u.result.udp_send_ns, 3000000);
        assert_int_equal(out->u.result.udp_stop, PROTO_UDP_STOP_UNREACHABLE);
        break;
    case PROTO_FACTS:
        assert_string_equal(out->u.facts.text, m->u.facts.text);
        break;
    case PROTO_COUNTERS:
        assert_string_equal(out->u.counters.text, m->u.counters.text);
        break;
    default:
        break;
    }
}

static void test_proto_round_trip_every_type(void **state)
{
    struct proto_msg m, out;
    (void)state;

    for (uint8_t t = 1; t <= PROTO_TYPE_MAX; t++) {
        sample_msg(t, &m);
        round_trip(&m, &out);
        check_round_trip(&m, &out);
    }
}

static void test_proto_truncated_asks_for_more(void **state)
{
    struct proto_msg m;
    struct kp_err err;
    size_t n;
    (void)state;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_TEST_REQ;
    m.u.test_req = good_req();
    n = proto_encode(&m, buf, sizeof(buf));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(decode_len(i, &err), PROTO_AGAIN);
    assert_int_equal(decode_len(n, &err), PROTO_OK);
}

static void encode_header(uint32_t magic, uint8_t ver, uint8_t type, uint16_t rsv, uint32_t len)
{
    buf[0] = (uint8_t)(magic >> 24);
    buf[1] = (uint8_t)(magic >> 16);
    buf[2] = (uint8_t)(magic >> 8);
    buf[3] = (uint8_t)magic;
    buf[4] = ver;
    buf[5] = type;
    buf[6] = (uint8_t)(rsv >> 8);
    buf[7] = (uint8_t)rsv;
    buf[8] = (uint8_t)(len >> 24);
    buf[9] = (uint8_t)(len >> 16);
    buf[10] = (uint8_t)(len >> 8);
    buf[11] = (uint8_t)len;
}

static void test_proto_bad_headers(void **state)
{
    struct kp_err err;
    (void)state;

    memset(buf, 0, sizeof(buf));
    encode_header(0x47455420, 1, PROTO_HELLO, 0, 4); /* "GET " */
    assert_int_equal(decode_len(16, &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "magic"));
    encode_header(PROTO_MAGIC, PROTO_VERSION, PROTO_HELLO, 0, 4); /* HELLO is framed as 1 */
    assert_int_equal(decode_len(16, &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "version"));
    encode_header(PROTO_MAGIC, 1, PROTO_START, 0, 0); /* a version 1 peer past HELLO */
    assert_int_equal(decode_len(PROTO_HEADER_LEN, &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "unsupported protocol version 1 in START"));
    encode_header(PROTO_MAGIC, 1, 0, 0, 4);
    assert_int_equal(decode_len(16, &err), PROTO_ERROR);
    encode_header(PROTO_MAGIC, 1, PROTO_TYPE_MAX + 1, 0, 4);
    assert_int_equal(decode_len(16, &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "type"));
    encode_header(PROTO_MAGIC, 1, PROTO_HELLO, 1, 4);
    assert_int_equal(decode_len(16, &err), PROTO_ERROR);
}

static void test_proto_oversized_lengths_rejected_before_payload(void **state)
{
    static const uint32_t lens[] = {0xffffffffu, 0x80000000u, PROTO_MAX_PAYLOAD + 1,
                                    4 + PROTO_REASON_MAX + 1};
    struct kp_err err;
    (void)state;

    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        encode_header(PROTO_MAGIC, 1, PROTO_REFUSE, 0, lens[i]);
        /* only the header is present: the length alone must be enough to refuse */
        assert_int_equal(decode_len(PROTO_HEADER_LEN, &err), PROTO_ERROR);
        assert_non_null(strstr(kp_err_msg(&err), "length"));
    }
    encode_header(PROTO_MAGIC, PROTO_VERSION, PROTO_RESULT, 0, 0xffffffffu);
    assert_int_equal(decode_len(PROTO_HEADER_LEN, &err), PROTO_ERROR);
}

static void test_proto_fixed_lengths_enforced(void **state)
{
    static const struct {
        uint8_t type;
        uint32_t len;
    } wrong[] = {{PROTO_HELLO, 3},      {PROTO_HELLO, 5},    {PROTO_AUTH, 32},
                 {PROTO_AUTH, 63},      {PROTO_AUTH_OK, 31}, {PROTO_AUTH_OK, 64},
                 {PROTO_TEST_REQ, 23},  {PROTO_TEST_REQ, 0}, {PROTO_START, 1},
                 {PROTO_DATA_HELLO, 8}, {PROTO_ACCEPT, 16},  {PROTO_CHALLENGE, 36},
                 {PROTO_STOP, 0},       {PROTO_DATA_OK, 12}, {PROTO_UDP_READY, 2}};
    struct kp_err err;
    (void)state;

    for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
        memset(buf, 0, sizeof(buf));
        encode_header(PROTO_MAGIC, wrong[i].type == PROTO_HELLO ? 1 : PROTO_VERSION, wrong[i].type,
                      0, wrong[i].len);
        assert_int_equal(decode_len(PROTO_HEADER_LEN + wrong[i].len, &err), PROTO_ERROR);
    }
}

static int req_rejected(struct proto_test_req r)
{
    struct proto_msg m;
    struct kp_err err;
    size_t n;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_TEST_REQ;
    m.u.test_req = r;
    n = proto_encode(&m, buf, sizeof(buf));
    return decode_len(n, &err) == PROTO_ERROR && kp_err_is_set(&err);
}

static void test_proto_test_request_ranges(void **state)
{
    struct proto_test_req r;
    (void)state;

    assert_false(req_rejected(good_req()));
    r = good_req(), r.test = 0;
    assert_true(req_rejected(r));
    r = good_req(), r.test = PROTO_TCP_RR_LOADED, r.streams = 1; /* client-side composite */
    assert_true(req_rejected(r));
    r = good_req(), r.test = 8;
    assert_true(req_rejected(r));
    r = good_req(), r.flags = 0x80;
    assert_true(req_rejected(r));
    r = good_req(), r.streams = 0;
    assert_true(req_rejected(r));
    r = good_req(), r.streams = PROTO_MAX_STREAMS + 1;
    assert_true(req_rejected(r));
    r = good_req(), r.streams = 65535;
    assert_true(req_rejected(r));
    r = good_req(), r.test = PROTO_TCP_RR, r.flags = 0; /* RR takes one stream */
    assert_true(req_rejected(r));
    r = good_req(), r.msg_size = 0;
    assert_true(req_rejected(r));
    r = good_req(), r.msg_size = PROTO_MAX_MSG_SIZE + 1;
    assert_true(req_rejected(r));
    r = good_req(), r.msg_size = 0xffffffffu;
    assert_true(req_rejected(r));
    r = good_req(), r.duration_ms = 0;
    assert_true(req_rejected(r));
    r = good_req(), r.duration_ms = PROTO_MAX_DURATION_MS + 1;
    assert_true(req_rejected(r));
    r = good_req(), r.omit_ms = 0xffffffffu;
    assert_true(req_rejected(r));
    r = good_req(), r.rate_bps = 1000; /* a rate is only for UDP_STREAM */
    assert_true(req_rejected(r));
    r = good_req(), r.test = PROTO_UDP_STREAM, r.streams = 1, r.msg_size = 1472, r.rate_bps = 0;
    assert_true(req_rejected(r));
    r.rate_bps = PROTO_MAX_RATE_BPS + 1;
    assert_true(req_rejected(r));
    r.rate_bps = 1000000000ull;
    assert_false(req_rejected(r));
    r.msg_size = PROTO_MIN_UDP_SIZE - 1;
    assert_true(req_rejected(r));
    r.msg_size = PROTO_MAX_UDP_SIZE + 1;
    assert_true(req_rejected(r));
    r = good_req(), r.test = PROTO_TCP_RR, r.streams = 1; /* reverse is for streams only */
    assert_true(req_rejected(r));
    r.flags = 0;
    assert_false(req_rejected(r));
}

static void test_proto_bad_payloads(void **state)
{
    struct proto_msg m;
    struct kp_err err;
    size_t n;
    (void)state;

    /* HELLO with an empty version range */
    memset(&m, 0, sizeof(m));
    m.type = PROTO_HELLO;
    m.u.hello.version_min = 3;
    m.u.hello.version_max = 1;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    /* ACCEPT of session 0 */
    memset(&m, 0, sizeof(m));
    m.type = PROTO_ACCEPT;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    /* CHALLENGE with unknown flags */
    memset(&m, 0, sizeof(m));
    m.type = PROTO_CHALLENGE;
    m.u.challenge.flags = 0x10;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    /* DATA_HELLO with a stream index past the cap, or padding set */
    memset(&m, 0, sizeof(m));
    m.type = PROTO_DATA_HELLO;
    m.u.data_hello.session = 1;
    m.u.data_hello.stream = PROTO_MAX_STREAMS;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    m.u.data_hello.stream = 0;
    n = proto_encode(&m, buf, sizeof(buf));
    buf[PROTO_HEADER_LEN + 11] = 1;
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
}

static void test_proto_bad_refuse(void **state)
{
    struct proto_msg m;
    struct kp_err err;
    size_t n;
    (void)state;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_REFUSE;
    m.u.refuse.code = PROTO_REFUSE_AUTH;
    strcpy(m.u.refuse.reason, "no");
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_OK);
    buf[PROTO_HEADER_LEN + 4] = 0x07; /* a bell in the reason */
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    n = proto_encode(&m, buf, sizeof(buf));
    buf[PROTO_HEADER_LEN + 3] = 5; /* reason length beyond the payload */
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    n = proto_encode(&m, buf, sizeof(buf));
    buf[PROTO_HEADER_LEN + 1] = 99; /* unknown code */
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    /* the encoder sanitises, so a server cannot emit an undecodable reason */
    strcpy(m.u.refuse.reason, "a\nb\x01");
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_OK);
}

static void test_proto_bad_result(void **state)
{
    struct proto_msg m;
    struct kp_err err;
    size_t n;
    (void)state;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_RESULT;
    m.u.result.nstreams = 2;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_OK);
    /* claim 3 streams in a payload sized for 2 */
    buf[PROTO_HEADER_LEN + PROTO_RESULT_FIXED_LEN - 1] = 3;
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    /* claim more than the cap */
    buf[PROTO_HEADER_LEN + PROTO_RESULT_FIXED_LEN - 2] = 0xff;
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    /* an unknown reason for a UDP stop */
    memset(&m, 0, sizeof(m));
    m.type = PROTO_RESULT;
    m.u.result.udp_stop = PROTO_UDP_STOP_MAX;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_OK);
    buf[PROTO_HEADER_LEN + PROTO_RESULT_FIXED_LEN - 3] = PROTO_UDP_STOP_MAX + 1;
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "UDP stop reason"));
    /* window bytes above the total */
    memset(&m, 0, sizeof(m));
    m.type = PROTO_RESULT;
    m.u.result.rx_bytes = 10;
    m.u.result.rx_total = 9;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    /* a stream's CPU: the last one there can be, or unknown, but nothing past */
    memset(&m, 0, sizeof(m));
    m.type = PROTO_RESULT;
    m.u.result.nstreams = 2;
    m.u.result.streams[0].cpu = PROTO_MAX_CPUS - 1;
    m.u.result.streams[1].cpu = PROTO_CPU_UNKNOWN;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(n, PROTO_HEADER_LEN + PROTO_RESULT_FIXED_LEN + 2 * PROTO_STREAM_STATS_LEN);
    assert_int_equal(decode_len(n, &err), PROTO_OK);
    m.u.result.streams[0].cpu = PROTO_MAX_CPUS;
    n = proto_encode(&m, buf, sizeof(buf));
    assert_int_equal(decode_len(n, &err), PROTO_ERROR);
    assert_non_null(strstr(kp_err_msg(&err), "stream 0 on CPU 65536"));
}

static void test_proto_pipelined_messages(void **state)
{
    struct proto_msg a, b, out;
    struct kp_err err;
    size_t n1, n2, used;
    (void)state;

    memset(&a, 0, sizeof(a));
    a.type = PROTO_START;
    memset(&b, 0, sizeof(b));
    b.type = PROTO_STOP;
    b.u.stop.sent_bytes = 5;
    n1 = proto_encode(&a, buf, sizeof(buf));
    n2 = proto_encode(&b, buf + n1, sizeof(buf) - n1);
    kp_err_clear(&err);
    assert_int_equal(proto_decode(buf, n1 + n2, &out, &used, &err), PROTO_OK);
    assert_int_equal(out.type, PROTO_START);
    assert_int_equal(used, n1);
    assert_int_equal(proto_decode(buf + used, n2, &out, &used, &err), PROTO_OK);
    assert_int_equal(out.u.stop.sent_bytes, 5);
}

static void hex(const uint8_t *d, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

/* The expected values come from Python: hmac.new(b"secret", label + sn + cn, sha256). */
static void test_proto_auth_mac_matches_an_independent_hmac(void **state)
{
    uint8_t sn[PROTO_NONCE_LEN], cn[PROTO_NONCE_LEN], mac[PROTO_MAC_LEN];
    char got[2 * PROTO_MAC_LEN + 1];
    (void)state;

    for (int i = 0; i < PROTO_NONCE_LEN; i++) {
        sn[i] = (uint8_t)i;
        cn[i] = (uint8_t)(32 + i);
    }
    proto_auth_mac("secret", 6, PROTO_AUTH_CLIENT, sn, cn, mac);
    hex(mac, sizeof(mac), got);
    assert_string_equal(got, "ecc43d22915a0eb014ccef4044faee41957c24ed582af46814a1100c8bf298ab");
    proto_auth_mac("secret", 6, PROTO_AUTH_SERVER, sn, cn, mac);
    hex(mac, sizeof(mac), got);
    assert_string_equal(got, "e69d608a4505d820070b9fe984592e5495a2e82e4d4abb05d85bd2400e551ac5");
}

/* Each MAC depends on the token, on both nonces (so neither side alone picks what is signed),
 * on their order, and on the side (so a MAC is never valid as the other side's proof). */
/* The kernel tag: equal for one boot id under one nonce, different for another boot or nonce,
 * never "same" when unknown; the same-kernel and low-unsent flags only on TCP stream tests. */
static void test_proto_kernel_tag_and_same_kernel_flag(void **state)
{
    static const char boot_a[] = "0f7c2c4e-6f1d-4d55-9a1c-1b2d3e4f5a6b";
    static const char boot_b[] = "0f7c2c4e-6f1d-4d55-9a1c-1b2d3e4f5a6c";
    uint8_t n1[PROTO_NONCE_LEN], n2[PROTO_NONCE_LEN], zero[PROTO_KERNEL_TAG_LEN] = {0};
    uint8_t a1[PROTO_KERNEL_TAG_LEN], a1b[PROTO_KERNEL_TAG_LEN], a2[PROTO_KERNEL_TAG_LEN];
    uint8_t b1[PROTO_KERNEL_TAG_LEN], none[PROTO_KERNEL_TAG_LEN];
    struct proto_test_req r = good_req();
    struct kp_err err;
    (void)state;

    memset(n1, 1, sizeof(n1));
    memset(n2, 2, sizeof(n2));
    proto_kernel_tag(n1, boot_a, strlen(boot_a), a1);
    proto_kernel_tag(n1, boot_a, strlen(boot_a), a1b);
    proto_kernel_tag(n2, boot_a, strlen(boot_a), a2);
    proto_kernel_tag(n1, boot_b, strlen(boot_b), b1);
    proto_kernel_tag(n1, "", 0, none);
    assert_true(proto_kernel_tag_same(a1, a1b));
    assert_false(proto_kernel_tag_same(a1, a2)); /* another connection's nonce */
    assert_false(proto_kernel_tag_same(a1, b1)); /* another boot */
    assert_memory_equal(none, zero, sizeof(zero));
    assert_false(proto_kernel_tag_same(none, none)); /* unknown never matches */
    assert_false(proto_kernel_tag_same(zero, a1));

    r.flags = PROTO_FLAG_SAME_KERNEL; /* good_req: TCP_STREAM_MULTI */
    assert_int_equal(proto_check_test_req(&r, &err), 0);
    r.flags = PROTO_FLAG_SAME_KERNEL | PROTO_FLAG_REVERSE;
    assert_int_equal(proto_check_test_req(&r, &err), 0);
    r.flags = PROTO_FLAG_LOW_UNSENT | PROTO_FLAG_REVERSE;
    assert_int_equal(proto_check_test_req(&r, &err), 0);
    r.flags = 0x20; /* the next bit is unknown */
    assert_int_equal(proto_check_test_req(&r, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "unknown test flags 0x20"));
    r.test = PROTO_TCP_RR;
    r.streams = 1;
    r.flags = PROTO_FLAG_SAME_KERNEL;
    assert_int_equal(proto_check_test_req(&r, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "same-kernel"));
    r.flags = PROTO_FLAG_LOW_UNSENT;
    assert_int_equal(proto_check_test_req(&r, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "low-unsent"));
    r.test = PROTO_UDP_STREAM;
    r.msg_size = 1472;
    r.rate_bps = 1000000;
    assert_int_equal(proto_check_test_req(&r, &err), -1);
    r.flags = PROTO_FLAG_SAME_KERNEL;
    assert_int_equal(proto_check_test_req(&r, &err), -1);
}

static void test_proto_auth_mac_binds_token_nonces_and_side(void **state)
{
    uint8_t sn[PROTO_NONCE_LEN] = {1, 2, 3}, cn[PROTO_NONCE_LEN] = {9, 8, 7};
    uint8_t m1[PROTO_MAC_LEN], m2[PROTO_MAC_LEN], m3[PROTO_MAC_LEN];
    (void)state;

    proto_auth_mac("secret", 6, PROTO_AUTH_CLIENT, sn, cn, m1);
    proto_auth_mac("secret", 6, PROTO_AUTH_CLIENT, sn, cn, m2);
    assert_memory_equal(m1, m2, PROTO_MAC_LEN);
    proto_auth_mac("secreT", 6, PROTO_AUTH_CLIENT, sn, cn, m3);
    assert_memory_not_equal(m1, m3, PROTO_MAC_LEN);
    proto_auth_mac("secret", 6, PROTO_AUTH_SERVER, sn, cn, m3);
    assert_memory_not_equal(m1, m3, PROTO_MAC_LEN);
    proto_auth_mac("secret", 6, PROTO_AUTH_CLIENT, cn, sn, m3);
    assert_memory_not_equal(m1, m3, PROTO_MAC_LEN);
    cn[31] = 1;
    proto_auth_mac("secret", 6, PROTO_AUTH_CLIENT, sn, cn, m3);
    assert_memory_not_equal(m1, m3, PROTO_MAC_LEN);
    cn[31] = 0;
    sn[31] = 1;
    proto_auth_mac("secret", 6, PROTO_AUTH_CLIENT, sn, cn, m3);
    assert_memory_not_equal(m1, m3, PROTO_MAC_LEN);
}

/* HELLO and REFUSE are framed as version 1 whatever the version, so an old client still reads
 * a new server's refusal (and the reverse); everything else carries PROTO_VERSION. */
static void test_proto_hello_and_refuse_keep_the_stable_framing(void **state)
{
    static const uint8_t v1_refuse[] = {0x4b, 0x50, 0x52, 0x46, 1, PROTO_REFUSE, 0,   0,  0, 0, 0,
                                        7,    0,    5,    0,    3, 'o',          'l', 'd'};
    struct proto_msg m, out;
    struct kp_err err;
    size_t used = 0;
    (void)state;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_HELLO;
    m.u.hello.version_min = m.u.hello.version_max = PROTO_VERSION;
    assert_int_equal(proto_encode(&m, buf, sizeof(buf)), PROTO_HEADER_LEN + 4);
    assert_int_equal(buf[4], PROTO_VERSION_STABLE);
    m.type = PROTO_REFUSE;
    m.u.refuse.code = PROTO_REFUSE_VERSION;
    assert_true(proto_encode(&m, buf, sizeof(buf)) > 0);
    assert_int_equal(buf[4], PROTO_VERSION_STABLE);
    m.type = PROTO_START;
    assert_true(proto_encode(&m, buf, sizeof(buf)) > 0);
    assert_int_equal(buf[4], PROTO_VERSION);
    /* a version 1 server's REFUSE, byte for byte */
    kp_err_clear(&err);
    assert_int_equal(proto_decode(v1_refuse, sizeof(v1_refuse), &out, &used, &err), PROTO_OK);
    assert_int_equal(out.u.refuse.code, PROTO_REFUSE_VERSION);
    assert_string_equal(out.u.refuse.reason, "old");
}

/* proto.h's test numbers and base/testkind.h's wire ids are the same protocol. */
static void test_proto_test_numbers_are_the_testkind_wire_ids(void **state)
{
    static const struct {
        uint8_t wire;
        enum test_kind kind;
    } pairs[] = {
        {PROTO_TCP_RR, TEST_TCP_RR},
        {PROTO_TCP_CRR, TEST_TCP_CRR},
        {PROTO_TCP_STREAM, TEST_TCP_STREAM},
        {PROTO_TCP_STREAM_MULTI, TEST_TCP_STREAM_MULTI},
        {PROTO_UDP_RR, TEST_UDP_RR},
        {PROTO_UDP_STREAM, TEST_UDP_STREAM},
        {PROTO_TCP_RR_LOADED, TEST_TCP_RR_LOADED},
    };
    (void)state;
    assert_int_equal(sizeof(pairs) / sizeof(pairs[0]), TEST_COUNT);
    for (size_t i = 0; i < TEST_COUNT; i++) {
        assert_int_equal(testkind_get(pairs[i].kind)->wire, pairs[i].wire);
        assert_string_equal(proto_test_name(pairs[i].wire), testkind_name(pairs[i].kind));
    }
    assert_int_equal(PROTO_TCP_RR, 1); /* the wire protocol: never renumbered */
    assert_int_equal(PROTO_TCP_CRR, 2);
    assert_int_equal(PROTO_TCP_STREAM, 3);
    assert_int_equal(PROTO_TCP_STREAM_MULTI, 4);
    assert_int_equal(PROTO_UDP_RR, 5);
    assert_int_equal(PROTO_UDP_STREAM, 6);
    assert_int_equal(PROTO_TCP_RR_LOADED, 7);
}

static void test_proto_names_and_udp_header(void **state)
{
    uint8_t d[PROTO_MIN_UDP_SIZE];
    uint64_t a, b, c;
    (void)state;

    for (uint8_t t = PROTO_TCP_RR; t <= PROTO_UDP_STREAM; t++)
        assert_int_equal(proto_test_from_name(proto_test_name(t)), t);
    assert_int_equal(proto_test_from_name("tcp_rr"), 0);
    assert_string_equal(proto_test_name(99), "UNKNOWN");
    assert_string_equal(proto_test_name(0), "UNKNOWN");
    assert_string_equal(proto_test_name(PROTO_TCP_RR_LOADED + 1), "UNKNOWN");
    assert_true(proto_test_is_udp(PROTO_UDP_RR));
    assert_false(proto_test_is_udp(PROTO_TCP_CRR));
    assert_true(proto_test_is_stream(PROTO_TCP_STREAM_MULTI));
    assert_false(proto_test_is_stream(PROTO_UDP_RR));
    assert_false(proto_test_is_udp(0));
    assert_false(proto_test_is_stream(0));
    assert_string_equal(proto_type_name(PROTO_RESULT), "RESULT");
    proto_udp_put(d, 0x1122334455667788ull, 9, UINT64_MAX - 1);
    proto_udp_get(d, &a, &b, &c);
    assert_int_equal(a, 0x1122334455667788ull);
    assert_int_equal(b, 9);
    assert_int_equal(c, UINT64_MAX - 1);
    assert_int_equal(d[0], 0x11);
}

static void test_proto_encode_refuses_small_buffer(void **state)
{
    struct proto_msg m;
    uint8_t small[PROTO_HEADER_LEN + 8];
    (void)state;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_TEST_REQ;
    m.u.test_req = good_req();
    assert_int_equal(proto_encode(&m, small, sizeof(small)), 0);
    m.type = 0;
    assert_int_equal(proto_encode(&m, buf, sizeof(buf)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proto_round_trip_every_type),
        cmocka_unit_test(test_proto_facts_rules),
        cmocka_unit_test(test_proto_truncated_asks_for_more),
        cmocka_unit_test(test_proto_bad_headers),
        cmocka_unit_test(test_proto_oversized_lengths_rejected_before_payload),
        cmocka_unit_test(test_proto_fixed_lengths_enforced),
        cmocka_unit_test(test_proto_test_request_ranges),
        cmocka_unit_test(test_proto_test_numbers_are_the_testkind_wire_ids),
        cmocka_unit_test(test_proto_bad_payloads),
        cmocka_unit_test(test_proto_bad_refuse),
        cmocka_unit_test(test_proto_bad_result),
        cmocka_unit_test(test_proto_pipelined_messages),
        cmocka_unit_test(test_proto_auth_mac_matches_an_independent_hmac),
        cmocka_unit_test(test_proto_auth_mac_binds_token_nonces_and_side),
        cmocka_unit_test(test_proto_kernel_tag_and_same_kernel_flag),
        cmocka_unit_test(test_proto_hello_and_refuse_keep_the_stable_framing),
        cmocka_unit_test(test_proto_names_and_udp_header),
        cmocka_unit_test(test_proto_encode_refuses_small_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
