/* SPDX-License-Identifier: Apache-2.0 */
/* server_conn.c - one connection of the server from accept to free: reading into its buffer
 * (control bytes to server_ctrl.c, data bytes to its session), writing (at once, or queued),
 * refusing with a reason, draining and closing. Every connection is freed only from its libuv
 * close callbacks. The handshake is server_ctrl.c's; accepting and the caps are server.c's. */
#include "agent/server_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/echo.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"

struct wreq {
    uv_write_t req;
    size_t len;
    uint8_t data[];
};

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
    uint8_t out[PROTO_HEADER_LEN + PROTO_MAX_PAYLOAD]; /* RESULT's 5308, COUNTERS' 8014 */
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

/* --- refusing before counting ------------------------------------------------------------ */

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void read_cb(uv_stream_t *st, ssize_t n, const uv_buf_t *buf);

void conn_refuse_now(struct conn *c, uint16_t code, const char *fmt, ...)
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
    used = server_ctrl_process(c);
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
