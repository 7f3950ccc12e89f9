/* SPDX-License-Identifier: Apache-2.0 */
/* server_ctrl.c - the control handshake of a connection: HELLO, CHALLENGE, AUTH (HMACs over
 * both sides' fresh nonces, constant-time compare, the server's proof in AUTH_OK), TEST_REQ
 * checked against the server's limits (then handed to session.c), DATA_HELLO, and the
 * handshake and idle deadlines. Which message each state accepts is here; reading and writing
 * bytes is server_conn.c's. */
#include "agent/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/hostfacts.h"
#include "agent/sha256.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"

void server_ctrl_deadline(uv_timer_t *t)
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
    rc = uv_timer_start(&c->timer, server_ctrl_deadline, o->idle_timeout_ms, 0);
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

size_t server_ctrl_process(struct conn *c)
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
