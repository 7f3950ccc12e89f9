/* SPDX-License-Identifier: Apache-2.0 */
/* server.c - see server.h. Accepts connections, enforces the connection caps (global and per
 * source, refusing with a reason) and the handshake and idle deadlines, authenticates both ways
 * (HMACs over both sides' fresh nonces, constant-time compare) and hands authenticated test
 * requests to session.c. Every connection is freed only from its libuv close callbacks. */
#include "agent/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/echo.h"
#include "agent/hostfacts.h"
#include "agent/peeraddr.h"
#include "agent/server_int.h"
#include "agent/sha256.h"
#include "agent/streampool.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"

struct wreq {
    uv_write_t req;
    size_t len;
    uint8_t data[];
};

void server_opts_default(struct server_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->port = SERVER_DEFAULT_PORT;
    o->max_duration_ms = SERVER_DEFAULT_MAX_DURATION_MS;
    o->max_streams = PROTO_MAX_STREAMS;
    o->max_conns = SERVER_DEFAULT_MAX_CONNS;
    o->max_conns_per_addr = SERVER_DEFAULT_MAX_CONNS_PER_ADDR;
    o->stream_threads = SERVER_DEFAULT_STREAM_THREADS;
    o->max_tests = SERVER_DEFAULT_MAX_TESTS;
    o->idle_timeout_ms = SERVER_DEFAULT_IDLE_TIMEOUT_MS;
    o->handshake_timeout_ms = SERVER_DEFAULT_HANDSHAKE_TIMEOUT_MS;
    o->max_rate_bps = SERVER_DEFAULT_MAX_RATE_BPS;
}

static void format_addr(const struct sockaddr *raw, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    struct sockaddr_storage ss;
    const struct sockaddr *sa = (const struct sockaddr *)&ss;
    unsigned port = 0;

    peeraddr_unmap(raw, &ss); /* an IPv4 peer of the dual-stack listener: its IPv4 address */

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
        port = ntohs(in->sin_port);
        snprintf(buf, len, "%s:%u", ip, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
        port = ntohs(in6->sin6_port);
        snprintf(buf, len, "[%s]:%u", ip, port);
    } else {
        snprintf(buf, len, "?");
    }
}

void server_warn(struct server *srv, const char *fmt, ...)
{
    uint64_t now = sysinfo_now_ns();
    char line[512];
    va_list ap;

    /* token bucket: bursts of LOG_BURST lines, then LOG_PER_SEC; a flood costs a few lines */
    srv->log_tokens += (double)(now - srv->log_last_ns) / 1e9 * LOG_PER_SEC;
    if (srv->log_tokens > LOG_BURST)
        srv->log_tokens = LOG_BURST;
    srv->log_last_ns = now;
    if (srv->log_tokens < 1.0) {
        srv->log_suppressed++;
        return;
    }
    srv->log_tokens -= 1.0;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (srv->log_suppressed)
        kp_log(KP_LOG_WARN, "%s [%u similar lines suppressed]", line, srv->log_suppressed);
    else
        kp_log(KP_LOG_WARN, "%s", line);
    srv->log_suppressed = 0;
}

/* --- closing ----------------------------------------------------------------------------- */

/* c stops counting against the caps (it is closing, or refused and leaving). */
static void uncount(struct conn *c)
{
    if (c->counted) {
        c->counted = 0;
        c->srv->nconns--;
        srclimit_del(c->srv->per_src, &c->src);
    }
}

static void conn_closed(uv_handle_t *h)
{
    struct conn *c = h->data;
    struct conn **pp;

    if (--c->open_handles > 0)
        return;
    for (pp = &c->srv->conns; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    uncount(c);
    if (c->lingering)
        c->srv->nlinger--;
    explicit_bzero(c->nonce, sizeof(c->nonce));
    free(c);
}

void conn_close(struct conn *c)
{
    struct session *s = c->sess;

    if (c->closing)
        return;
    c->closing = 1;
    c->sess = NULL;
    if (s && s->ctrl == c) {
        s->ctrl = NULL;
        session_end(s, NULL);
    } else if (s && c->state == CONN_DATA && c->stream < PROTO_MAX_STREAMS &&
               s->streams[c->stream] == c) {
        s->streams[c->stream] = NULL;
    }
    /* the echo or streamer thread must be gone before the descriptor can be closed */
    echo_stop(c->echo);
    c->echo = NULL;
    session_stream_stop(c);
    if (c->has_timer) {
        uv_timer_stop(&c->timer);
        uv_close((uv_handle_t *)&c->timer, conn_closed);
    }
    uv_close((uv_handle_t *)&c->tcp, conn_closed);
}

static void drain_timeout(uv_timer_t *t)
{
    conn_close(t->data);
}

static void conn_shutdown_cb(uv_shutdown_t *req, int status)
{
    (void)status;
    free(req);
}

/* Stops serving c: half-closes it after queued writes and discards input until EOF or 2 s. */
void conn_drain(struct conn *c)
{
    uv_shutdown_t *req;
    int resume = 0;
    int rc;

    if (c->closing || c->state == CONN_DRAIN)
        return;
    if (c->echo) { /* nothing queued on the loop: an echo conn just closes */
        conn_close(c);
        return;
    }
    if (c->streamer || c->has_sst) {
        /* the loop stopped reading at the hand-off (streamer.h) and nothing restarted it:
         * without a read, the peer's EOF would not be seen and the connection would hold its
         * slot until the drain timeout (a back-to-back 128-stream test was refused for it) */
        session_stream_stop(c); /* no-op when stopped already */
        resume = 1;             /* discard what a reverse stream's peer may still send */
    }
    if (c->eof || (c->has_sst && c->sst.eof)) { /* the peer is done: nothing to drain */
        conn_close(c);
        return;
    }
    if (c->sess && c->sess->ctrl == c) {
        struct session *s = c->sess;
        s->ctrl = NULL;
        c->sess = NULL;
        session_end(s, NULL);
    }
    c->state = CONN_DRAIN;
    c->sess = NULL;
    req = kp_xmalloc(sizeof(*req));
    if (uv_shutdown(req, (uv_stream_t *)&c->tcp, conn_shutdown_cb) != 0) {
        free(req);
        conn_close(c);
        return;
    }
    rc = uv_timer_start(&c->timer, drain_timeout, 2000, 0);
    if (rc != 0) {
        /* nothing would bound the drain: close at once */
        server_warn(c->srv, "%s: uv_timer_start (drain): %s; closed", c->peer, uv_strerror(rc));
        conn_close(c);
        return;
    }
    if (resume)
        conn_resume(c);
}

/* --- writing ----------------------------------------------------------------------------- */

static void wreq_done(uv_write_t *req, int status)
{
    (void)status;
    free(req->data);
}

static void conn_write(struct conn *c, const uint8_t *buf, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    int n;
    struct wreq *w;

    if (c->closing)
        return;
    n = uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    if (n == (int)len)
        return;
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    if (n < 0)
        n = 0;
    w = kp_xmalloc(sizeof(*w) + len - (size_t)n);
    w->len = len - (size_t)n;
    memcpy(w->data, buf + n, w->len);
    w->req.data = w;
    b = uv_buf_init((char *)w->data, (unsigned)w->len);
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &b, 1, wreq_done) != 0) {
        free(w);
        conn_close(c);
    }
}

void conn_send(struct conn *c, const struct proto_msg *m)
{
    uint8_t
        out[PROTO_HEADER_LEN + PROTO_RESULT_FIXED_LEN + PROTO_MAX_STREAMS * PROTO_STREAM_STATS_LEN];
    size_t n = proto_encode(m, out, sizeof(out));

    if (n > 0)
        conn_write(c, out, n);
}

void conn_refuse(struct conn *c, uint16_t code, const char *fmt, ...)
{
    struct proto_msg m;
    va_list ap;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_REFUSE;
    m.u.refuse.code = code;
    va_start(ap, fmt);
    vsnprintf(m.u.refuse.reason, sizeof(m.u.refuse.reason), fmt, ap);
    va_end(ap);
    server_warn(c->srv, "%s: refused: %s", c->peer, m.u.refuse.reason);
    conn_send(c, &m);
    conn_drain(c);
}

/* --- control handshake ------------------------------------------------------------------- */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);

/* Refuses c before (or instead of) serving it: writes REFUSE if the socket takes it at once,
 * half-closes, stops counting c against the caps and closes it at the peer's EOF or after
 * SERVER_LINGER_MS, so a refused connection costs the others nothing. Past SERVER_MAX_LINGER
 * lingering connections c closes at once. Logs nothing (the callers do, rate-limited). */
static void conn_refuse_now(struct conn *c, uint16_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void conn_refuse_now(struct conn *c, uint16_t code, const char *fmt, ...)
{
    uint8_t out[PROTO_HEADER_LEN + 4 + PROTO_REASON_MAX];
    struct proto_msg m;
    uv_shutdown_t *req;
    uv_buf_t b;
    size_t n;
    va_list ap;
    int rc;

    uncount(c);
    if (c->closing || !c->has_timer || c->srv->nlinger >= SERVER_MAX_LINGER) {
        conn_close(c);
        return;
    }
    memset(&m, 0, sizeof(m));
    m.type = PROTO_REFUSE;
    m.u.refuse.code = code;
    va_start(ap, fmt);
    vsnprintf(m.u.refuse.reason, sizeof(m.u.refuse.reason), fmt, ap);
    va_end(ap);
    n = proto_encode(&m, out, sizeof(out));
    b = uv_buf_init((char *)out, (unsigned)n);
    /* an empty send buffer takes a few hundred bytes; if not, the reason is lost, not queued */
    (void)uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    c->state = CONN_DRAIN;
    c->lingering = 1;
    c->srv->nlinger++;
    req = kp_xmalloc(sizeof(*req));
    if (uv_shutdown(req, (uv_stream_t *)&c->tcp, conn_shutdown_cb) != 0) {
        free(req);
        conn_close(c);
        return;
    }
    /* read_cb discards a draining connection's input and closes it at EOF; a connection
     * refused at its deadline is reading already */
    rc = uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
    if ((rc != 0 && rc != UV_EALREADY) ||
        uv_timer_start(&c->timer, drain_timeout, SERVER_LINGER_MS, 0) != 0)
        conn_close(c);
}

static void deadline_fired(uv_timer_t *t)
{
    struct conn *c = t->data;
    const struct server_opts *o = &c->srv->o;

    switch (c->state) {
    case CONN_NEW:
    case CONN_AUTH:
    case CONN_REQ:
        server_warn(c->srv, "%s: no progress in time (%s); dropped", c->peer,
                    c->state == CONN_NEW    ? "no hello"
                    : c->state == CONN_AUTH ? "no auth"
                                            : "no test request");
        conn_refuse_now(c, PROTO_REFUSE_TIMEOUT, "handshake not finished within %u ms",
                        o->handshake_timeout_ms);
        return;
    case CONN_CONTROL:
        server_warn(c->srv, "%s: no progress in time (idle); dropped", c->peer);
        conn_refuse(c, PROTO_REFUSE_TIMEOUT, "no START within %u ms of ACCEPT", o->idle_timeout_ms);
        return;
    default: /* a TCP_CRR transaction past its deadline, or a drain */
        conn_close(c);
        return;
    }
}

static void on_hello(struct conn *c, const struct proto_msg *m)
{
    struct proto_msg out;
    struct kp_err err;
    int fd, rc;

    if (m->u.hello.version_min > PROTO_VERSION || m->u.hello.version_max < PROTO_VERSION) {
        conn_refuse(c, PROTO_REFUSE_VERSION,
                    "protocol version %u..%u not supported (this server speaks %u)",
                    m->u.hello.version_min, m->u.hello.version_max, PROTO_VERSION);
        return;
    }
    memset(&out, 0, sizeof(out));
    out.type = PROTO_CHALLENGE;
    if (sha256_random(c->nonce, sizeof(c->nonce)) != 0) {
        conn_refuse(c, PROTO_REFUSE_INTERNAL, "no random bytes");
        return;
    }
    memcpy(out.u.challenge.nonce, c->nonce, PROTO_NONCE_LEN);
    /* a control connection: notice a vanished peer even when no test traffic flows. Best
     * effort by design: the idle timeout and the session deadline bound a silent peer anyway,
     * and a kernel without one of the options must not refuse the test. */
    rc = uv_fileno((uv_handle_t *)&c->tcp, &fd);
    kp_err_clear(&err);
    if (rc != 0)
        kp_log(KP_LOG_DEBUG, "%s: no keepalive: uv_fileno: %s", c->peer, uv_strerror(rc));
    else if (sysinfo_keepalive(fd, PROTO_CTRL_KEEPIDLE_S, 30000, &err) != 0)
        kp_log(KP_LOG_DEBUG, "%s: keepalive incomplete: %s", c->peer, kp_err_msg(&err));
    out.u.challenge.flags = c->srv->o.token ? PROTO_FLAG_AUTH : 0;
    proto_kernel_tag(c->nonce, c->srv->boot_id, c->srv->boot_id_len, out.u.challenge.kernel);
    c->state = CONN_AUTH;
    conn_send(c, &out);
}

_Static_assert(CONN_CTRL_BUF >= PROTO_HEADER_LEN + PROTO_NONCE_LEN + PROTO_MAC_LEN &&
                   CONN_CTRL_BUF >= PROTO_HEADER_LEN + 24,
               "the control buffer holds AUTH and TEST_REQ");

/* AUTH: checks the client's MAC over both nonces, then proves in AUTH_OK that this server
 * knows the token too (its MAC under the other label; 32 zero bytes without a token, which a
 * client holding a token refuses). */
static void on_auth(struct conn *c, const struct proto_msg *m)
{
    const struct server_opts *o = &c->srv->o;
    uint8_t want[PROTO_MAC_LEN];
    struct proto_msg out;
    int ok = 1;

    memset(&out, 0, sizeof(out));
    out.type = PROTO_AUTH_OK;
    if (o->token) {
        proto_auth_mac(o->token, o->token_len, PROTO_AUTH_CLIENT, c->nonce, m->u.auth.nonce, want);
        ok = sha256_ct_equal(want, m->u.auth.mac, PROTO_MAC_LEN);
        if (ok)
            proto_auth_mac(o->token, o->token_len, PROTO_AUTH_SERVER, c->nonce, m->u.auth.nonce,
                           out.u.auth_ok.mac);
        explicit_bzero(want, sizeof(want));
    }
    explicit_bzero(c->nonce, sizeof(c->nonce)); /* single use */
    if (!ok) {
        conn_refuse(c, PROTO_REFUSE_AUTH, "authentication failed: wrong or missing token");
        return;
    }
    c->state = CONN_REQ;
    conn_send(c, &out);
    explicit_bzero(&out, sizeof(out));
}

/* FACTS after ACCEPT (TEST_REQ asked): this host, and the NIC of the connection's local
 * address. Facts that do not fit are dropped (hostfacts_text); "{}" at worst, so the client,
 * which waits for the message, always gets one. */
static void send_facts(struct conn *c)
{
    struct proto_msg *out = kp_xcalloc(1, sizeof(*out));
    json_t *facts;
    char *text;
    int fd = -1;

    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0)
        fd = -1;
    facts = hostfacts_collect(fd);
    text = hostfacts_text(facts, PROTO_FACTS_MAX);
    out->type = PROTO_FACTS;
    snprintf(out->u.facts.text, sizeof(out->u.facts.text), "%s", text ? text : "{}");
    conn_send(c, out);
    free(text);
    json_decref(facts);
    free(out);
}

static void on_test_req(struct conn *c, const struct proto_msg *m)
{
    const struct server_opts *o = &c->srv->o;
    const struct proto_test_req *r = &m->u.test_req;
    struct session *s;
    struct proto_msg out;
    struct kp_err err;
    int rc;

    if ((uint64_t)r->duration_ms + r->omit_ms > o->max_duration_ms) {
        conn_refuse(c, PROTO_REFUSE_LIMIT, "duration %u ms + omit %u ms exceeds server max %u ms",
                    r->duration_ms, r->omit_ms, o->max_duration_ms);
        return;
    }
    if (r->streams > o->max_streams) {
        conn_refuse(c, PROTO_REFUSE_LIMIT, "%u streams exceed server max %u", r->streams,
                    o->max_streams);
        return;
    }
    if (r->rate_bps > o->max_rate_bps) {
        conn_refuse(c, PROTO_REFUSE_LIMIT, "rate %llu bit/s exceeds server max %llu",
                    (unsigned long long)r->rate_bps, (unsigned long long)o->max_rate_bps);
        return;
    }
    if (c->srv->nsessions >= o->max_tests) {
        conn_refuse(c, PROTO_REFUSE_BUSY, "busy: %u tests running (max %u)", c->srv->nsessions,
                    o->max_tests);
        return;
    }
    kp_err_clear(&err);
    s = session_new(c->srv, c, r, &err);
    if (!s) {
        conn_refuse(c, PROTO_REFUSE_INTERNAL, "server cannot set up the test: %s",
                    kp_err_msg(&err));
        return;
    }
    c->sess = s;
    c->state = CONN_CONTROL;
    /* until START: the idle timeout; the session's own deadline takes over then */
    rc = uv_timer_start(&c->timer, deadline_fired, o->idle_timeout_ms, 0);
    if (rc != 0) {
        conn_refuse(c, PROTO_REFUSE_INTERNAL, "server: uv_timer_start (idle): %s", uv_strerror(rc));
        return;
    }
    memset(&out, 0, sizeof(out));
    out.type = PROTO_ACCEPT;
    out.u.accept.session = s->id;
    kp_log(KP_LOG_INFO, "%s: %s accepted (streams %u, %u ms)", c->peer, proto_test_name(r->test),
           r->streams, r->duration_ms);
    conn_send(c, &out);
    if (r->flags & PROTO_FLAG_FACTS)
        send_facts(c);
}

static void on_data_hello(struct conn *c, const struct proto_msg *m)
{
    struct session *s = session_find(c->srv, m->u.data_hello.session);

    if (!s || s->closing) {
        server_warn(c->srv, "%s: data connection for an unknown session; dropped", c->peer);
        conn_close(c);
        return;
    }
    if (session_attach(s, c, m->u.data_hello.stream) != 0) {
        server_warn(c->srv, "%s: data connection rejected by its session; dropped", c->peer);
        conn_close(c);
    }
}

/* Which client->server message types each state accepts. */
static int type_allowed(enum conn_state st, uint8_t type)
{
    switch (st) {
    case CONN_NEW:
        return type == PROTO_HELLO || type == PROTO_DATA_HELLO;
    case CONN_AUTH:
        return type == PROTO_AUTH;
    case CONN_REQ:
        return type == PROTO_TEST_REQ;
    case CONN_CONTROL:
        return type == PROTO_START || type == PROTO_STOP;
    default:
        return 0;
    }
}

static void dispatch(struct conn *c, const struct proto_msg *m)
{
    switch (m->type) {
    case PROTO_HELLO:
        on_hello(c, m);
        break;
    case PROTO_AUTH:
        on_auth(c, m);
        break;
    case PROTO_TEST_REQ:
        on_test_req(c, m);
        break;
    case PROTO_DATA_HELLO:
        on_data_hello(c, m);
        break;
    default:
        if (c->sess)
            session_on_ctrl_msg(c->sess, m);
        break;
    }
}

/* Decodes and handles every whole message in rbuf. Returns the number of bytes consumed; a
 * protocol error closes c. */
static size_t process_ctrl(struct conn *c)
{
    size_t off = 0;

    while (!c->closing && c->state != CONN_DRAIN && c->state != CONN_DATA) {
        struct proto_header h;
        struct proto_msg m;
        struct kp_err err;
        size_t used = 0;
        enum proto_status st;

        kp_err_clear(&err);
        st = proto_decode_header(c->rbuf + off, c->rlen - off, &h, &err);
        if (st == PROTO_OK && !type_allowed(c->state, h.type)) {
            kp_err_set(&err, "unexpected %s", proto_type_name(h.type));
            st = PROTO_ERROR;
        }
        if (st == PROTO_OK)
            st = proto_decode(c->rbuf + off, c->rlen - off, &m, &used, &err);
        if (st == PROTO_AGAIN)
            break;
        if (st == PROTO_ERROR && c->state == CONN_REQ && h.type == PROTO_TEST_REQ) {
            /* authenticated, well-framed, out of range: say why */
            conn_refuse(c, PROTO_REFUSE_BAD_REQUEST, "bad test request: %s", kp_err_msg(&err));
            return c->rlen;
        }
        if (st == PROTO_ERROR) {
            server_warn(c->srv, "%s: protocol error: %s; dropped", c->peer, kp_err_msg(&err));
            conn_close(c);
            return c->rlen;
        }
        off += used;
        dispatch(c, &m);
    }
    return off;
}

/* --- reading ----------------------------------------------------------------------------- */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct conn *c = h->data;
    (void)suggested;

    if (c->state == CONN_DATA || c->state == CONN_DRAIN)
        *buf = uv_buf_init((char *)c->srv->rx_buf, SERVER_RX_BUF);
    else
        *buf = uv_buf_init((char *)c->rbuf + c->rlen, (unsigned)(sizeof(c->rbuf) - c->rlen));
}

static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
    struct conn *c = st->data;
    size_t used;

    if (c->closing)
        return;
    if (n < 0) {
        if (c->state == CONN_DATA && n == UV_EOF) {
            uv_read_stop(st);
            session_on_data_eof(c);
            return;
        }
        if (c->state == CONN_CONTROL && c->sess && !c->sess->reported)
            server_warn(c->srv, "%s: client went away during %s (%s); dropped", c->peer,
                        proto_test_name(c->sess->req.test), uv_strerror((int)n));
        else if (c->state == CONN_NEW && c->rlen == 0 && n == UV_EOF)
            /* connect and close: a TCP health probe or a port check, not an attack */
            kp_log(KP_LOG_INFO, "%s: connected and closed without a word", c->peer);
        else if (c->state == CONN_NEW || c->state == CONN_AUTH || c->state == CONN_REQ)
            server_warn(c->srv, "%s: closed during handshake (%s); dropped", c->peer,
                        uv_strerror((int)n));
        conn_close(c);
        return;
    }
    if (n == 0 || c->state == CONN_DRAIN)
        return;
    if (c->state == CONN_DATA) {
        session_on_data(c, (const uint8_t *)buf->base, (size_t)n);
        return;
    }
    c->rlen += (size_t)n;
    used = process_ctrl(c);
    if (c->closing)
        return;
    memmove(c->rbuf, c->rbuf + used, c->rlen - used);
    c->rlen -= used;
    if (c->state == CONN_DATA && c->rlen > 0) {
        /* bytes that followed DATA_HELLO in the same read are test data */
        size_t rest = c->rlen;
        c->rlen = 0;
        memcpy(c->srv->rx_buf, c->rbuf, rest);
        session_on_data(c, c->srv->rx_buf, rest);
    } else if (c->rlen == sizeof(c->rbuf)) {
        server_warn(c->srv, "%s: control message too large; dropped", c->peer);
        conn_close(c);
    }
}

void conn_resume(struct conn *c)
{
    int rc;

    if (c->closing)
        return;
    rc = uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
    if (rc != 0) {
        server_warn(c->srv, "%s: uv_read_start: %s; dropped", c->peer, uv_strerror(rc));
        conn_close(c);
    }
}

/* --- accepting --------------------------------------------------------------------------- */

static void log_flood(struct server *srv, const char *what)
{
    uint64_t now = sysinfo_now_ns();

    if (now - srv->last_flood_log_ns < 1000000000ull) {
        srv->flood_suppressed++;
        return;
    }
    kp_log(KP_LOG_WARN, "%s (%u more suppressed)", what, srv->flood_suppressed);
    srv->flood_suppressed = 0;
    srv->last_flood_log_ns = now;
}

static void shut_down(struct server *srv);

/* Counts c against the caps, or refuses it (REFUSE code 2, the reason naming the cap) when its
 * source already holds max_conns_per_addr connections or the server max_conns. The source's
 * cap is checked first: a client is told about its own share when that is what it hit. Returns
 * 1 when c is admitted. */
static int admit(struct conn *c)
{
    struct server *srv = c->srv;
    unsigned mine = srclimit_count(srv->per_src, &c->src);
    char line[160];

    if (mine >= srv->o.max_conns_per_addr) {
        snprintf(line, sizeof(line), "%s: connection refused: %u from its address (max %u)",
                 c->peer, mine, srv->o.max_conns_per_addr);
        log_flood(srv, line);
        conn_refuse_now(c, PROTO_REFUSE_BUSY,
                        "server at its connection limit (%u from your address)", mine);
        return 0;
    }
    if (srv->nconns >= srv->o.max_conns) {
        snprintf(line, sizeof(line), "%s: connection refused: %u connections (max %u)", c->peer,
                 srv->nconns, srv->o.max_conns);
        log_flood(srv, line);
        conn_refuse_now(c, PROTO_REFUSE_BUSY,
                        "server at its connection limit (%u connections, %u from your address)",
                        srv->nconns, mine);
        return 0;
    }
    c->counted = 1;
    srv->nconns++;
    srclimit_add(srv->per_src, &c->src);
    return 1;
}

static void on_connection(uv_stream_t *ls, int status)
{
    struct server *srv = ls->data;
    struct conn *c;
    struct sockaddr_storage ss;
    int len = sizeof(ss);
    int rc;

    if (status < 0) {
        /* libuv already accepted and closed one pending connection with its reserve fd */
        log_flood(srv, status == UV_EMFILE || status == UV_ENFILE
                           ? "out of file descriptors; connection dropped"
                           : "accept failed; connection dropped");
        return;
    }
    c = kp_xcalloc(1, sizeof(*c));
    c->srv = srv;
    rc = uv_tcp_init(&srv->loop, &c->tcp);
    if (rc != 0) {
        /* Without a handle the pending connection cannot be accepted, and libuv stops polling
         * the listener until it is: rather than hang, stop and say why. */
        free(c);
        snprintf(srv->fatal, sizeof(srv->fatal), "accepting a connection: uv_tcp_init: %s",
                 uv_strerror(rc));
        kp_log(KP_LOG_ERROR, "%s", srv->fatal);
        shut_down(srv);
        return;
    }
    c->tcp.data = c;
    c->open_handles = 1;
    c->next = srv->conns;
    srv->conns = c;
    rc = uv_timer_init(&srv->loop, &c->timer);
    if (rc == 0) {
        c->timer.data = c;
        c->has_timer = 1;
        c->open_handles = 2;
    }
    /* accept in any case, so that the listener keeps going */
    if (uv_accept(ls, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
        c->peer_addr = ss;
        format_addr((struct sockaddr *)&ss, c->peer, sizeof(c->peer));
        srclimit_key_of((struct sockaddr *)&ss, &c->src);
    } else {
        snprintf(c->peer, sizeof(c->peer), "?");
    }
    if (rc != 0) {
        server_warn(srv, "%s: uv_timer_init: %s; dropped", c->peer, uv_strerror(rc));
        conn_close(c);
        return;
    }
    if (srv->shutting_down) {
        conn_close(c);
        return;
    }
    if (!admit(c))
        return;
    /* every control message and RR/CRR transaction must leave at once */
    rc = uv_tcp_nodelay(&c->tcp, 1);
    if (rc != 0) {
        server_warn(srv, "%s: setsockopt TCP_NODELAY: %s; dropped", c->peer, uv_strerror(rc));
        conn_close(c);
        return;
    }
    rc = uv_timer_start(&c->timer, deadline_fired, srv->o.handshake_timeout_ms, 0);
    if (rc != 0) {
        server_warn(srv, "%s: uv_timer_start (handshake): %s; dropped", c->peer, uv_strerror(rc));
        conn_close(c);
        return;
    }
    rc = uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb);
    if (rc != 0) {
        server_warn(srv, "%s: uv_read_start: %s; dropped", c->peer, uv_strerror(rc));
        conn_close(c);
    }
}

static void udp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct server *srv = h->data;
    (void)suggested;
    *buf = uv_buf_init((char *)srv->udp_buf, SERVER_UDP_BUF);
}

static void udp_recv(uv_udp_t *u, ssize_t n, const uv_buf_t *buf, const struct sockaddr *from,
                     unsigned flags)
{
    struct server *srv = u->data;

    if (n <= 0 || !from || (flags & UV_UDP_PARTIAL))
        return;
    session_on_udp(srv, (const uint8_t *)buf->base, (size_t)n, from);
}

/* --- run --------------------------------------------------------------------------------- */

static void close_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (uv_is_closing(h))
        return;
    if (h->type == UV_TCP && h->data && h->data != arg) {
        /* connections close through conn_close so their memory is released */
        return;
    }
    if (h->type == UV_TIMER)
        return;
    uv_close(h, NULL);
}

/* Ends every session and connection and closes the listener, UDP socket and signal handles:
 * uv_run then returns. */
static void shut_down(struct server *srv)
{
    srv->shutting_down = 1;
    while (srv->sessions)
        session_end(srv->sessions, "server shutting down");
    for (struct conn *c = srv->conns; c; c = c->next)
        conn_close(c);
    uv_walk(&srv->loop, close_walk, srv);
}

static void on_signal(uv_signal_t *sig, int signum)
{
    kp_log(KP_LOG_INFO, "signal %d: shutting down", signum);
    shut_down(sig->data);
}

/* Binds the listener and the UDP socket to addr. On a failure, *uv_rc is the libuv error of
 * the TCP bind or listen (0 when something else failed). */
static int bind_at(struct server *srv, const char *addr, int *uv_rc, struct kp_err *err)
{
    struct sockaddr_storage ss;
    struct kp_err why;
    int len = sizeof(ss);
    int rc;
    int fd;

    memset(&ss, 0, sizeof(ss));
    if (uv_ip4_addr(addr, srv->o.port, (struct sockaddr_in *)&ss) != 0 &&
        uv_ip6_addr(addr, srv->o.port, (struct sockaddr_in6 *)&ss) != 0)
        return kp_err_set(err, "bad bind address %s: not an IPv4 or IPv6 literal", addr);
    /* --port 0: bind TCP to a free port, then UDP to the same number; retry on a clash */
    for (int attempt = 0; attempt < 20; attempt++) {
        struct sockaddr_storage bound = ss;
        rc = uv_tcp_bind(&srv->listener, (struct sockaddr *)&ss, 0);
        if (rc == 0)
            rc = uv_listen((uv_stream_t *)&srv->listener, 1024, on_connection);
        if (rc != 0) {
            *uv_rc = rc;
            return kp_err_set(err, "cannot listen on %s:%u/tcp: %s", addr, srv->o.port,
                              uv_strerror(rc));
        }
        rc = uv_tcp_getsockname(&srv->listener, (struct sockaddr *)&bound, &len);
        if (rc != 0)
            return kp_err_set(err, "cannot read the TCP port: uv_tcp_getsockname: %s",
                              uv_strerror(rc));
        rc = uv_udp_bind(&srv->udp, (struct sockaddr *)&bound, UV_UDP_REUSEADDR);
        if (rc == 0) {
            srv->o.port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
            break;
        }
        if (srv->o.port != 0)
            return kp_err_set(err, "cannot bind %s:%u/udp: %s", addr, srv->o.port, uv_strerror(rc));
        /* reopen the TCP listener and try another free port */
        uv_close((uv_handle_t *)&srv->listener, NULL);
        uv_run(&srv->loop, UV_RUN_NOWAIT);
        rc = uv_tcp_init(&srv->loop, &srv->listener);
        if (rc != 0)
            return kp_err_set(err, "cannot reopen the TCP listener: uv_tcp_init: %s",
                              uv_strerror(rc));
        srv->listener.data = srv;
    }
    if (rc != 0)
        return kp_err_set(err, "cannot bind a UDP port next to the TCP one: %s", uv_strerror(rc));
    /* Buffer sizes are a hint by design (the kernel caps them at net.core.*mem_max): a UDP
     * test still runs without them, and reports its drops as rcvbuf_errors. */
    kp_err_clear(&why);
    rc = uv_fileno((uv_handle_t *)&srv->udp, &fd);
    if (rc != 0)
        kp_log(KP_LOG_DEBUG, "UDP socket buffers left as they are: uv_fileno: %s", uv_strerror(rc));
    else if (sysinfo_set_bufs(fd, 4 << 20, 8 << 20, &why) != 0)
        kp_log(KP_LOG_DEBUG, "UDP socket buffers left as they are: %s", kp_err_msg(&why));
    rc = uv_udp_recv_start(&srv->udp, udp_alloc, udp_recv);
    if (rc != 0)
        return kp_err_set(err, "cannot receive on UDP: %s", uv_strerror(rc));
    return 0;
}

static int init_handles(struct server *srv, struct kp_err *err);

/* Without --bind the server listens on :: with IPV6_V6ONLY off (libuv leaves it off unless
 * asked), so IPv4 peers reach it too, as ::ffff:a.b.c.d; a host without IPv6 (no AF_INET6
 * sockets, or no address for ::) gets 0.0.0.0 instead. */
static int bind_all(struct server *srv, struct kp_err *err)
{
    uint16_t port = srv->o.port;
    int uv_rc = 0;

    if (srv->o.bind_addr)
        return bind_at(srv, srv->o.bind_addr, &uv_rc, err);
    if (bind_at(srv, "::", &uv_rc, err) == 0) {
        srv->o.bind_addr = "::";
        return 0;
    }
    if (uv_rc != UV_EAFNOSUPPORT && uv_rc != UV_EADDRNOTAVAIL)
        return -1;
    kp_log(KP_LOG_DEBUG, "no IPv6 here (%s): listening on 0.0.0.0", kp_err_msg(err));
    kp_err_clear(err);
    /* a fresh listener and UDP socket: the failed ones may hold an IPv6 socket */
    uv_close((uv_handle_t *)&srv->listener, NULL);
    uv_close((uv_handle_t *)&srv->udp, NULL);
    uv_close((uv_handle_t *)&srv->sigterm, NULL);
    uv_close((uv_handle_t *)&srv->sigint, NULL);
    uv_run(&srv->loop, UV_RUN_NOWAIT);
    if (init_handles(srv, err) != 0)
        return -1;
    srv->o.port = port;
    srv->o.bind_addr = "0.0.0.0";
    return bind_at(srv, "0.0.0.0", &uv_rc, err);
}

static int start_signals(struct server *srv, struct kp_err *err)
{
    int rc = uv_signal_start(&srv->sigterm, on_signal, SIGTERM);

    if (rc == 0)
        rc = uv_signal_start(&srv->sigint, on_signal, SIGINT);
    if (rc != 0)
        return kp_err_set(err, "uv_signal_start: %s", uv_strerror(rc));
    return 0;
}

static void streams_done_cb(uv_async_t *a)
{
    session_streams_done(a->data);
}

/* The loop's handles. A failure leaves the ones already open in the loop, where server_run's
 * clean-up closes them. Returns 0, or -1 with err naming the call. */
static int init_handles(struct server *srv, struct kp_err *err)
{
    int rc;

    rc = uv_tcp_init(&srv->loop, &srv->listener);
    if (rc != 0)
        return kp_err_set(err, "uv_tcp_init: %s", uv_strerror(rc));
    srv->listener.data = srv;
    /* recvmmsg: up to SERVER_UDP_BUF / 64 KiB datagrams per system call */
    rc = uv_udp_init_ex(&srv->loop, &srv->udp, AF_UNSPEC | UV_UDP_RECVMMSG);
    if (rc != 0)
        return kp_err_set(err, "uv_udp_init_ex: %s", uv_strerror(rc));
    srv->udp.data = srv;
    rc = uv_signal_init(&srv->loop, &srv->sigterm);
    if (rc != 0)
        return kp_err_set(err, "uv_signal_init: %s", uv_strerror(rc));
    srv->sigterm.data = srv;
    rc = uv_signal_init(&srv->loop, &srv->sigint);
    if (rc != 0)
        return kp_err_set(err, "uv_signal_init: %s", uv_strerror(rc));
    srv->sigint.data = srv;
    rc = uv_async_init(&srv->loop, &srv->streams_done, streams_done_cb);
    if (rc != 0)
        return kp_err_set(err, "uv_async_init: %s", uv_strerror(rc));
    srv->streams_done.data = srv;
    return 0;
}

int server_run(const struct server_opts *o, server_ready_fn *ready, void *arg, struct kp_err *err)
{
    struct server *srv = kp_xcalloc(1, sizeof(*srv));
    char where[96];
    int rc = -1;

    srv->o = *o;
    srv->log_tokens = LOG_BURST;
    srv->log_last_ns = sysinfo_now_ns();
    srv->max_streamers = o->stream_threads;
    srv->boot_id_len = sysinfo_boot_id(srv->boot_id, sizeof(srv->boot_id));
    rc = uv_loop_init(&srv->loop);
    if (rc != 0) {
        kp_err_set(err, "uv_loop_init: %s", uv_strerror(rc));
        free(srv);
        return -1;
    }
    rc = -1;
    srv->rx_buf = kp_xmalloc(SERVER_RX_BUF);
    srv->tx_buf = kp_xcalloc(1, PROTO_MAX_MSG_SIZE);
    srv->udp_buf = kp_xmalloc(SERVER_UDP_BUF);
    srv->per_src = srclimit_new(srv->o.max_conns < 65536 ? srv->o.max_conns : 65536);
    if (o->stream_pool && streampool_new(o->stream_pool, &srv->pool, err) != 0)
        goto out;
    if (init_handles(srv, err) != 0 || bind_all(srv, err) != 0)
        goto out;
    if (start_signals(srv, err) != 0)
        goto out;
    snprintf(where, sizeof(where), "%s%s%s:%u", strchr(srv->o.bind_addr, ':') ? "[" : "",
             srv->o.bind_addr, strchr(srv->o.bind_addr, ':') ? "]" : "", srv->o.port);
    if (ready)
        ready(where, srv->o.port, arg);
    uv_run(&srv->loop, UV_RUN_DEFAULT);
    if (srv->fatal[0])
        kp_err_set(err, "%s", srv->fatal);
    else
        rc = 0;
out:
    if (rc != 0) {
        srv->shutting_down = 1;
        uv_walk(&srv->loop, close_walk, srv);
        uv_run(&srv->loop, UV_RUN_DEFAULT);
    }
    uv_loop_close(&srv->loop);
    free(srv->rx_buf);
    free(srv->tx_buf);
    free(srv->udp_buf);
    srclimit_free(srv->per_src);
    streampool_free(srv->pool); /* every stream was stopped when its connection closed */
    streampool_free(srv->near_pool);
    streampool_free(srv->wide_pool);
    free(srv);
    return rc;
}
