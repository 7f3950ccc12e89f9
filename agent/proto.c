/* SPDX-License-Identifier: Apache-2.0 */
/* proto.c - see proto.h. Encoding is big-endian; every decoder checks the exact length of its
 * type before reading a field, and every field's range after. */
#include "agent/proto.h"

#include <string.h>

#include "agent/sha256.h"
#include "base/kp_err.h"
#include "base/testkind.h"

static const char *const type_names[] = {NULL,     "HELLO",   "CHALLENGE",  "AUTH",    "TEST_REQ",
                                         "ACCEPT", "REFUSE",  "DATA_HELLO", "DATA_OK", "UDP_READY",
                                         "START",  "STARTED", "STOP",       "RESULT",  "AUTH_OK",
                                         "FACTS",  "COUNTERS"};

/* Test kinds come from base/testkind.h: the wire id of a test is its entry's `wire`. */
const char *proto_test_name(uint8_t test)
{
    const struct testkind *tk = testkind_by_wire(test);

    return tk ? tk->name : "UNKNOWN";
}

uint8_t proto_test_from_name(const char *name)
{
    const struct testkind *tk = testkind_by_name(name);

    return tk ? tk->wire : 0;
}

int proto_test_is_udp(uint8_t test)
{
    const struct testkind *tk = testkind_by_wire(test);

    return tk && tk->udp;
}

int proto_test_is_stream(uint8_t test)
{
    const struct testkind *tk = testkind_by_wire(test);

    return tk && !tk->latency;
}

const char *proto_type_name(uint8_t type)
{
    if (type == 0 || type > PROTO_TYPE_MAX)
        return "UNKNOWN";
    return type_names[type];
}

/* --- byte helpers ------------------------------------------------------------------------ */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

void proto_udp_put(uint8_t *buf, uint64_t session, uint64_t seq, uint64_t ts_ns)
{
    put64(buf, session);
    put64(buf + 8, seq);
    put64(buf + 16, ts_ns);
}

void proto_udp_get(const uint8_t *buf, uint64_t *session, uint64_t *seq, uint64_t *ts_ns)
{
    *session = get64(buf);
    *seq = get64(buf + 8);
    *ts_ns = get64(buf + 16);
}

void proto_auth_mac(const void *token, size_t token_len, enum proto_auth_side side,
                    const uint8_t server_nonce[PROTO_NONCE_LEN],
                    const uint8_t client_nonce[PROTO_NONCE_LEN], uint8_t mac[PROTO_MAC_LEN])
{
    /* same length, so the label ends where the nonces begin whichever side signs */
    static const char client_label[] = "kperf-auth-v2-client";
    static const char server_label[] = "kperf-auth-v2-server";
    const char *label = side == PROTO_AUTH_SERVER ? server_label : client_label;
    uint8_t msg[sizeof(client_label) - 1 + 2 * PROTO_NONCE_LEN];
    size_t n = sizeof(client_label) - 1;

    _Static_assert(sizeof(client_label) == sizeof(server_label), "labels of equal length");
    memcpy(msg, label, n);
    memcpy(msg + n, server_nonce, PROTO_NONCE_LEN);
    memcpy(msg + n + PROTO_NONCE_LEN, client_nonce, PROTO_NONCE_LEN);
    hmac_sha256(token, token_len, msg, sizeof(msg), mac);
    explicit_bzero(msg, sizeof(msg));
}

void proto_kernel_tag(const uint8_t server_nonce[PROTO_NONCE_LEN], const char *boot_id,
                      size_t boot_id_len, uint8_t tag[PROTO_KERNEL_TAG_LEN])
{
    static const char label[] = "kperf-kernel-v1";
    uint8_t h[SHA256_LEN];
    struct sha256 c;

    memset(tag, 0, PROTO_KERNEL_TAG_LEN);
    if (boot_id_len == 0)
        return;
    sha256_init(&c);
    sha256_update(&c, label, sizeof(label) - 1);
    sha256_update(&c, server_nonce, PROTO_NONCE_LEN);
    sha256_update(&c, boot_id, boot_id_len);
    sha256_final(&c, h);
    memcpy(tag, h, PROTO_KERNEL_TAG_LEN);
}

int proto_kernel_tag_same(const uint8_t a[PROTO_KERNEL_TAG_LEN],
                          const uint8_t b[PROTO_KERNEL_TAG_LEN])
{
    static const uint8_t zero[PROTO_KERNEL_TAG_LEN];

    return memcmp(a, zero, PROTO_KERNEL_TAG_LEN) != 0 && memcmp(a, b, PROTO_KERNEL_TAG_LEN) == 0;
}

/* The header version a type is framed with (see proto.h). */
static uint8_t frame_version(uint8_t type)
{
    return type == PROTO_HELLO || type == PROTO_REFUSE ? PROTO_VERSION_STABLE : PROTO_VERSION;
}

/* --- payload lengths --------------------------------------------------------------------- */

/* Fixed payload length of a type, or the maximum for the variable ones (*variable = 1). */
static size_t payload_len(uint8_t type, int *variable)
{
    *variable = 0;
    switch (type) {
    case PROTO_HELLO:
        return 4;
    case PROTO_CHALLENGE:
        return PROTO_NONCE_LEN + 4 + PROTO_KERNEL_TAG_LEN;
    case PROTO_AUTH:
        return PROTO_NONCE_LEN + PROTO_MAC_LEN;
    case PROTO_AUTH_OK:
        return PROTO_MAC_LEN;
    case PROTO_TEST_REQ:
        return 24;
    case PROTO_ACCEPT:
        return 8;
    case PROTO_REFUSE:
        *variable = 1;
        return 4 + PROTO_REASON_MAX;
    case PROTO_DATA_HELLO:
        return 12;
    case PROTO_STOP:
        return 16;
    case PROTO_RESULT:
        *variable = 1;
        return PROTO_RESULT_FIXED_LEN + (size_t)PROTO_MAX_STREAMS * PROTO_STREAM_STATS_LEN;
    case PROTO_FACTS:
        *variable = 1;
        return 2 + PROTO_FACTS_MAX;
    case PROTO_COUNTERS:
        *variable = 1;
        return 2 + PROTO_COUNTERS_MAX;
    default: /* DATA_OK, UDP_READY, START, STARTED */
        return 0;
    }
}

enum proto_status proto_decode_header(const uint8_t *buf, size_t len, struct proto_header *h,
                                      struct kp_err *err)
{
    int variable;
    size_t max;

    if (len < PROTO_HEADER_LEN)
        return PROTO_AGAIN;
    if (get32(buf) != PROTO_MAGIC) {
        kp_err_set(err, "bad magic 0x%08x (not a kperf-agent peer)", get32(buf));
        return PROTO_ERROR;
    }
    if (buf[5] == 0 || buf[5] > PROTO_TYPE_MAX) {
        kp_err_set(err, "unknown message type %u (protocol version %u)", buf[5], buf[4]);
        return PROTO_ERROR;
    }
    if (buf[4] != frame_version(buf[5])) {
        kp_err_set(err, "unsupported protocol version %u in %s (this agent speaks %u)", buf[4],
                   proto_type_name(buf[5]), PROTO_VERSION);
        return PROTO_ERROR;
    }
    if (get16(buf + 6) != 0) {
        kp_err_set(err, "reserved header bits set");
        return PROTO_ERROR;
    }
    h->type = buf[5];
    h->length = get32(buf + 8);
    max = payload_len(h->type, &variable);
    if ((size_t)h->length > max || (!variable && (size_t)h->length != max) ||
        (size_t)h->length > PROTO_MAX_PAYLOAD) {
        kp_err_set(err, "%s with bad length %u (expected %s%zu)", proto_type_name(h->type),
                   h->length, variable ? "at most " : "", max);
        return PROTO_ERROR;
    }
    return PROTO_OK;
}

int proto_check_test_req(const struct proto_test_req *r, struct kp_err *err)
{
    const struct testkind *tk = testkind_by_wire(r->test);

    if (!tk)
        return kp_err_set(err, "unknown test type %u", r->test);
    if (tk->loaded)
        return kp_err_set(err,
                          "%s is run by the client as TCP_RR and TCP_STREAM_MULTI at once, "
                          "not requested from a server",
                          tk->name);
    if (r->flags & ~(PROTO_FLAG_REVERSE | PROTO_FLAG_FACTS | PROTO_FLAG_SAME_KERNEL |
                     PROTO_FLAG_LOW_UNSENT | PROTO_FLAG_COUNTERS))
        return kp_err_set(err, "unknown test flags 0x%x", r->flags);
    if ((r->flags & PROTO_FLAG_SAME_KERNEL) && (tk->udp || tk->latency))
        return kp_err_set(err, "same-kernel is only for TCP stream tests");
    if ((r->flags & PROTO_FLAG_LOW_UNSENT) && (tk->udp || tk->latency))
        return kp_err_set(err, "low-unsent is only for TCP stream tests");
    if (r->streams < 1 || r->streams > PROTO_MAX_STREAMS)
        return kp_err_set(err, "streams %u out of range [1, %u]", r->streams, PROTO_MAX_STREAMS);
    if (!tk->multi_stream && r->streams != 1)
        return kp_err_set(err, "%s takes 1 stream, not %u", tk->name, r->streams);
    if (tk->udp) {
        if (r->msg_size < PROTO_MIN_UDP_SIZE || r->msg_size > PROTO_MAX_UDP_SIZE)
            return kp_err_set(err, "UDP message size %u out of range [%u, %u]", r->msg_size,
                              PROTO_MIN_UDP_SIZE, PROTO_MAX_UDP_SIZE);
    } else if (r->msg_size < 1 || r->msg_size > PROTO_MAX_MSG_SIZE) {
        return kp_err_set(err, "message size %u out of range [1, %u]", r->msg_size,
                          PROTO_MAX_MSG_SIZE);
    }
    if (r->duration_ms < 1 || r->duration_ms > PROTO_MAX_DURATION_MS)
        return kp_err_set(err, "duration %u ms out of range [1, %u]", r->duration_ms,
                          PROTO_MAX_DURATION_MS);
    if (r->omit_ms > PROTO_MAX_DURATION_MS)
        return kp_err_set(err, "omit %u ms out of range", r->omit_ms);
    if (tk->udp && !tk->latency) { /* UDP_STREAM sends at a rate */
        if (r->rate_bps < 1000 || r->rate_bps > PROTO_MAX_RATE_BPS)
            return kp_err_set(err, "UDP rate %llu bit/s out of range [1000, %llu]",
                              (unsigned long long)r->rate_bps,
                              (unsigned long long)PROTO_MAX_RATE_BPS);
    } else if (r->rate_bps != 0) {
        return kp_err_set(err, "rate given for %s", tk->name);
    }
    if ((r->flags & PROTO_FLAG_REVERSE) && !tk->reversible)
        return kp_err_set(err, "reverse is only for stream tests");
    return 0;
}

static int decode_result(const uint8_t *p, size_t len, struct proto_result *r, struct kp_err *err)
{
    const uint8_t *q = p;

    if (len < PROTO_RESULT_FIXED_LEN)
        return kp_err_set(err, "RESULT too short (%zu bytes)", len);
    r->window_ns = get64(q), q += 8;
    r->rx_bytes = get64(q), q += 8;
    r->tx_bytes = get64(q), q += 8;
    r->rx_total = get64(q), q += 8;
    r->cpu_user_us = get64(q), q += 8;
    r->cpu_sys_us = get64(q), q += 8;
    for (int i = 0; i < PROTO_CPU_FIELDS; i++)
        r->node_cpu[i] = get64(q), q += 8;
    r->mtu = get32(q), q += 4;
    r->udp_received = get64(q), q += 8;
    r->udp_sent = get64(q), q += 8;
    r->udp_out_of_order = get64(q), q += 8;
    r->udp_max_seq_plus1 = get64(q), q += 8;
    r->udp_jitter_ns = get64(q), q += 8;
    r->udp_rcvbuf_errors = get64(q), q += 8;
    r->udp_send_ns = get64(q), q += 8;
    r->udp_stop = get16(q), q += 2;
    r->nstreams = get16(q), q += 2;
    if (r->udp_stop > PROTO_UDP_STOP_MAX)
        return kp_err_set(err, "RESULT with unknown UDP stop reason %u", r->udp_stop);
    if (r->nstreams > PROTO_MAX_STREAMS)
        return kp_err_set(err, "RESULT with %u streams (max %u)", r->nstreams, PROTO_MAX_STREAMS);
    if (len != PROTO_RESULT_FIXED_LEN + (size_t)r->nstreams * PROTO_STREAM_STATS_LEN)
        return kp_err_set(err, "RESULT length %zu does not match %u streams", len, r->nstreams);
    if (r->rx_bytes > r->rx_total)
        return kp_err_set(err, "RESULT window bytes exceed total bytes");
    for (unsigned i = 0; i < r->nstreams; i++) {
        struct proto_stream_stats *s = &r->streams[i];
        s->rx_bytes = get64(q), q += 8;
        s->tx_bytes = get64(q), q += 8;
        s->retransmits = get32(q), q += 4;
        s->rtt_us = get32(q), q += 4;
        s->mss = get32(q), q += 4;
        s->cpu_us = get64(q), q += 8;
        s->cpu = get32(q), q += 4;
        if (s->cpu != PROTO_CPU_UNKNOWN && s->cpu >= PROTO_MAX_CPUS)
            return kp_err_set(err, "RESULT stream %u on CPU %u (max %u)", i, s->cpu,
                              PROTO_MAX_CPUS - 1);
    }
    return 0;
}

static int decode_refuse(const uint8_t *p, size_t len, struct proto_msg *m, struct kp_err *err)
{
    uint16_t n;

    if (len < 4)
        return kp_err_set(err, "REFUSE too short");
    m->u.refuse.code = get16(p);
    n = get16(p + 2);
    if (m->u.refuse.code == 0 || m->u.refuse.code > PROTO_REFUSE_TIMEOUT)
        return kp_err_set(err, "REFUSE with unknown code %u", m->u.refuse.code);
    if (n > PROTO_REASON_MAX || (size_t)n + 4 != len)
        return kp_err_set(err, "REFUSE reason length %u does not match", n);
    for (unsigned i = 0; i < n; i++)
        if (p[4 + i] < 0x20 || p[4 + i] > 0x7e)
            return kp_err_set(err, "REFUSE reason has a non-printable byte");
    memcpy(m->u.refuse.reason, p + 4, n);
    m->u.refuse.reason[n] = '\0';
    return 0;
}

/* FACTS and COUNTERS: u16 n, then n bytes of printable ASCII (a JSON object's text; the
 * receiver parses it), 2 <= n <= max. */
static int decode_text(const uint8_t *p, size_t len, char *text, size_t max, const char *what,
                       struct kp_err *err)
{
    uint16_t n;

    if (len < 2)
        return kp_err_set(err, "%s too short", what);
    n = get16(p);
    if (n < 2 || n > max || (size_t)n + 2 != len)
        return kp_err_set(err, "%s text length %u does not match", what, n);
    for (unsigned i = 0; i < n; i++)
        if (p[2 + i] < 0x20 || p[2 + i] > 0x7e)
            return kp_err_set(err, "%s text has a non-printable byte", what);
    memcpy(text, p + 2, n);
    text[n] = '\0';
    return 0;
}

static int decode_payload(uint8_t type, const uint8_t *p, size_t len, struct proto_msg *m,
                          struct kp_err *err)
{
    struct proto_test_req *r = &m->u.test_req;

    switch (type) {
    case PROTO_HELLO:
        m->u.hello.version_min = get16(p);
        m->u.hello.version_max = get16(p + 2);
        if (m->u.hello.version_min == 0 || m->u.hello.version_min > m->u.hello.version_max)
            return kp_err_set(err, "HELLO with bad version range %u..%u", m->u.hello.version_min,
                              m->u.hello.version_max);
        return 0;
    case PROTO_CHALLENGE:
        memcpy(m->u.challenge.nonce, p, PROTO_NONCE_LEN);
        m->u.challenge.flags = get32(p + PROTO_NONCE_LEN);
        if (m->u.challenge.flags & ~PROTO_FLAG_AUTH)
            return kp_err_set(err, "CHALLENGE with unknown flags");
        memcpy(m->u.challenge.kernel, p + PROTO_NONCE_LEN + 4, PROTO_KERNEL_TAG_LEN);
        return 0;
    case PROTO_AUTH:
        memcpy(m->u.auth.nonce, p, PROTO_NONCE_LEN);
        memcpy(m->u.auth.mac, p + PROTO_NONCE_LEN, PROTO_MAC_LEN);
        return 0;
    case PROTO_AUTH_OK:
        memcpy(m->u.auth_ok.mac, p, PROTO_MAC_LEN);
        return 0;
    case PROTO_TEST_REQ:
        r->test = p[0];
        r->flags = p[1];
        r->streams = get16(p + 2);
        r->msg_size = get32(p + 4);
        r->duration_ms = get32(p + 8);
        r->omit_ms = get32(p + 12);
        r->rate_bps = get64(p + 16);
        return proto_check_test_req(r, err);
    case PROTO_ACCEPT:
        m->u.accept.session = get64(p);
        if (m->u.accept.session == 0)
            return kp_err_set(err, "ACCEPT with session 0");
        return 0;
    case PROTO_REFUSE:
        return decode_refuse(p, len, m, err);
    case PROTO_DATA_HELLO:
        m->u.data_hello.session = get64(p);
        m->u.data_hello.stream = get16(p + 8);
        if (get16(p + 10) != 0 || m->u.data_hello.stream >= PROTO_MAX_STREAMS)
            return kp_err_set(err, "DATA_HELLO with bad stream index");
        return 0;
    case PROTO_STOP:
        m->u.stop.sent_bytes = get64(p);
        m->u.stop.udp_sent = get64(p + 8);
        return 0;
    case PROTO_RESULT:
        return decode_result(p, len, &m->u.result, err);
    case PROTO_FACTS:
        return decode_text(p, len, m->u.facts.text, PROTO_FACTS_MAX, "FACTS", err);
    case PROTO_COUNTERS:
        return decode_text(p, len, m->u.counters.text, PROTO_COUNTERS_MAX, "COUNTERS", err);
    default:
        return 0;
    }
}

enum proto_status proto_decode(const uint8_t *buf, size_t len, struct proto_msg *m, size_t *used,
                               struct kp_err *err)
{
    struct proto_header h;
    enum proto_status st = proto_decode_header(buf, len, &h, err);

    if (st != PROTO_OK)
        return st;
    if (len - PROTO_HEADER_LEN < (size_t)h.length)
        return PROTO_AGAIN;
    memset(m, 0, sizeof(*m));
    m->type = h.type;
    if (decode_payload(h.type, buf + PROTO_HEADER_LEN, h.length, m, err) != 0)
        return PROTO_ERROR;
    *used = PROTO_HEADER_LEN + (size_t)h.length;
    return PROTO_OK;
}

static size_t encode_result(const struct proto_result *r, uint8_t *p)
{
    uint8_t *q = p;
    unsigned n = r->nstreams > PROTO_MAX_STREAMS ? PROTO_MAX_STREAMS : r->nstreams;

    put64(q, r->window_ns), q += 8;
    put64(q, r->rx_bytes), q += 8;
    put64(q, r->tx_bytes), q += 8;
    put64(q, r->rx_total), q += 8;
    put64(q, r->cpu_user_us), q += 8;
    put64(q, r->cpu_sys_us), q += 8;
    for (int i = 0; i < PROTO_CPU_FIELDS; i++)
        put64(q, r->node_cpu[i]), q += 8;
    put32(q, r->mtu), q += 4;
    put64(q, r->udp_received), q += 8;
    put64(q, r->udp_sent), q += 8;
    put64(q, r->udp_out_of_order), q += 8;
    put64(q, r->udp_max_seq_plus1), q += 8;
    put64(q, r->udp_jitter_ns), q += 8;
    put64(q, r->udp_rcvbuf_errors), q += 8;
    put64(q, r->udp_send_ns), q += 8;
    put16(q, r->udp_stop), q += 2;
    put16(q, (uint16_t)n), q += 2;
    for (unsigned i = 0; i < n; i++) {
        put64(q, r->streams[i].rx_bytes), q += 8;
        put64(q, r->streams[i].tx_bytes), q += 8;
        put32(q, r->streams[i].retransmits), q += 4;
        put32(q, r->streams[i].rtt_us), q += 4;
        put32(q, r->streams[i].mss), q += 4;
        put64(q, r->streams[i].cpu_us), q += 8;
        put32(q, r->streams[i].cpu), q += 4;
    }
    return (size_t)(q - p);
}

/* FACTS and COUNTERS: see decode_text; non-printable bytes become '?'. 0 below 2 bytes. */
static size_t encode_text(const char *text, size_t max, uint8_t *p)
{
    size_t n = strnlen(text, max);

    if (n < 2)
        return 0;
    put16(p, (uint16_t)n);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)text[i];
        p[2 + i] = (c < 0x20 || c > 0x7e) ? '?' : c;
    }
    return 2 + n;
}

static size_t encode_payload(const struct proto_msg *m, uint8_t *p)
{
    const struct proto_test_req *r = &m->u.test_req;
    size_t n;

    switch (m->type) {
    case PROTO_HELLO:
        put16(p, m->u.hello.version_min);
        put16(p + 2, m->u.hello.version_max);
        return 4;
    case PROTO_CHALLENGE:
        memcpy(p, m->u.challenge.nonce, PROTO_NONCE_LEN);
        put32(p + PROTO_NONCE_LEN, m->u.challenge.flags);
        memcpy(p + PROTO_NONCE_LEN + 4, m->u.challenge.kernel, PROTO_KERNEL_TAG_LEN);
        return PROTO_NONCE_LEN + 4 + PROTO_KERNEL_TAG_LEN;
    case PROTO_AUTH:
        memcpy(p, m->u.auth.nonce, PROTO_NONCE_LEN);
        memcpy(p + PROTO_NONCE_LEN, m->u.auth.mac, PROTO_MAC_LEN);
        return PROTO_NONCE_LEN + PROTO_MAC_LEN;
    case PROTO_AUTH_OK:
        memcpy(p, m->u.auth_ok.mac, PROTO_MAC_LEN);
        return PROTO_MAC_LEN;
    case PROTO_TEST_REQ:
        p[0] = r->test;
        p[1] = r->flags;
        put16(p + 2, r->streams);
        put32(p + 4, r->msg_size);
        put32(p + 8, r->duration_ms);
        put32(p + 12, r->omit_ms);
        put64(p + 16, r->rate_bps);
        return 24;
    case PROTO_ACCEPT:
        put64(p, m->u.accept.session);
        return 8;
    case PROTO_REFUSE:
        n = strnlen(m->u.refuse.reason, PROTO_REASON_MAX);
        put16(p, m->u.refuse.code);
        put16(p + 2, (uint16_t)n);
        for (size_t i = 0; i < n; i++) {
            uint8_t c = (uint8_t)m->u.refuse.reason[i];
            p[4 + i] = (c < 0x20 || c > 0x7e) ? '?' : c;
        }
        return 4 + n;
    case PROTO_DATA_HELLO:
        put64(p, m->u.data_hello.session);
        put16(p + 8, m->u.data_hello.stream);
        put16(p + 10, 0);
        return 12;
    case PROTO_STOP:
        put64(p, m->u.stop.sent_bytes);
        put64(p + 8, m->u.stop.udp_sent);
        return 16;
    case PROTO_RESULT:
        return encode_result(&m->u.result, p);
    case PROTO_FACTS:
        return encode_text(m->u.facts.text, PROTO_FACTS_MAX, p);
    case PROTO_COUNTERS:
        return encode_text(m->u.counters.text, PROTO_COUNTERS_MAX, p);
    default:
        return 0;
    }
}

size_t proto_encode(const struct proto_msg *m, uint8_t *out, size_t cap)
{
    int variable;
    size_t max;
    size_t n;

    if (m->type == 0 || m->type > PROTO_TYPE_MAX)
        return 0;
    max = payload_len(m->type, &variable);
    if (cap < PROTO_HEADER_LEN + max)
        return 0;
    n = encode_payload(m, out + PROTO_HEADER_LEN);
    if (n == 0 && (m->type == PROTO_FACTS || m->type == PROTO_COUNTERS)) /* at least "{}" */
        return 0;
    put32(out, PROTO_MAGIC);
    out[4] = frame_version(m->type);
    out[5] = m->type;
    put16(out + 6, 0);
    put32(out + 8, (uint32_t)n);
    return PROTO_HEADER_LEN + n;
}
