/* SPDX-License-Identifier: Apache-2.0 */
/* session_tcp.c - the TCP data of a test on the server, the kind-specific parts the ops table
 * (testops.h) points at: data connections joining (one per stream, or one per TCP_CRR
 * transaction), echoing (TCP_RR, on its own thread from START), answering and closing
 * (TCP_CRR), sinking or sourcing streams (on threads of their own, streamer.h, or on the
 * loop), and waiting for every stream's EOF after STOP. The session's life and RESULT are
 * session.c's. */
#include "agent/server_int.h"

#include <stdlib.h>
#include <string.h>

#include "agent/echo.h"
#include "agent/streamer.h"
#include "agent/streampool.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"

#define STREAM_BUFS_PER_WRITE 4    /* reverse streams: msg_size blocks per writev */
#define DRAIN_WAIT_MS         5000 /* forward TCP: wait for every stream's EOF after STOP */

struct echo_req {
    uv_write_t req;
    struct conn *c;
    uint8_t data[];
};

/* --- joining ------------------------------------------------------------------------------ */

int session_attach_stream(struct session *s, struct conn *c, uint16_t stream)
{
    struct proto_msg ok;

    c->sess = s;
    c->state = CONN_DATA;
    if (s->started || stream >= s->req.streams || s->streams[stream])
        return -1;
    c->stream = stream;
    s->streams[stream] = c;
    s->attached++;
    uv_timer_stop(&c->timer);
    memset(&ok, 0, sizeof(ok));
    ok.type = PROTO_DATA_OK;
    conn_send(c, &ok);
    return 0;
}

int session_attach_txn(struct session *s, struct conn *c, uint16_t stream)
{
    (void)stream;
    c->sess = s;
    c->state = CONN_DATA;
    /* one transaction; the handshake timer stays as its deadline */
    if (!s->started)
        return -1;
    c->crr_need = s->req.msg_size;
    return 0;
}

/* --- TCP_RR and TCP_CRR ------------------------------------------------------------------- */

static void echo_done(uv_write_t *req, int status)
{
    struct echo_req *e = req->data;
    struct conn *c = e->c;

    free(e);
    c->writes_in_flight--;
    if (status == 0 && !c->closing && c->paused && c->writes_in_flight == 0) {
        c->paused = 0;
        conn_resume(c);
    }
}

/* Echoes buf; when the peer does not read, queues the rest and stops reading until it is
 * written, so a client cannot make the server buffer more than one read's worth. */
void session_tcp_echo(struct conn *c, const uint8_t *buf, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
    int n = c->writes_in_flight ? UV_EAGAIN : uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    struct echo_req *e;

    if (n == (int)len) {
        c->tx_bytes += len;
        return;
    }
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    if (n < 0)
        n = 0;
    e = kp_xmalloc(sizeof(*e) + len - (size_t)n);
    e->c = c;
    e->req.data = e;
    memcpy(e->data, buf + n, len - (size_t)n);
    b = uv_buf_init((char *)e->data, (unsigned)(len - (size_t)n));
    if (uv_write(&e->req, (uv_stream_t *)&c->tcp, &b, 1, echo_done) != 0) {
        free(e);
        conn_close(c);
        return;
    }
    c->tx_bytes += len;
    c->writes_in_flight++;
    c->paused = 1;
    uv_read_stop((uv_stream_t *)&c->tcp);
}

static void crr_done(uv_write_t *req, int status)
{
    struct conn *c = req->data;
    (void)status;
    c->writes_in_flight--;
    conn_close(c);
}

/* TCP_CRR: once the whole request is in, answers and closes. */
void session_tcp_crr(struct conn *c, const uint8_t *buf, size_t len)
{
    uv_buf_t b;

    (void)buf;
    if (c->crr_need == 0)
        return;
    if (len < c->crr_need) {
        c->crr_need -= (uint32_t)len;
        return;
    }
    c->crr_need = 0;
    c->wr[0].data = c;
    b = uv_buf_init((char *)c->srv->tx_buf, c->sess->req.msg_size);
    if (uv_write(&c->wr[0], (uv_stream_t *)&c->tcp, &b, 1, crr_done) != 0)
        conn_close(c);
    else
        c->writes_in_flight++;
}

/* TCP_RR: from START on, the data connection is echoed on its own thread (echo.h); if no
 * thread can be had, the loop keeps echoing it. Returns 0, or -1 with err when the connection
 * is unusable (the session must end). */
static int start_echo(struct conn *c, struct kp_err *err)
{
    int fd;
    int rc;

    if (c->writes_in_flight)
        return 0; /* a queued echo write: the loop keeps this connection */
    rc = uv_fileno((uv_handle_t *)&c->tcp, &fd);
    if (rc != 0) {
        server_warn(c->srv, "%s: TCP_RR echo thread unavailable (uv_fileno: %s); on the loop",
                    c->peer, uv_strerror(rc));
        return 0;
    }
    uv_read_stop((uv_stream_t *)&c->tcp);
    switch (echo_start(fd, &c->rx_bytes, &c->tx_bytes, &c->echo, err)) {
    case ECHO_STARTED:
        return 0;
    case ECHO_ON_LOOP:
        server_warn(c->srv, "%s: TCP_RR echo thread unavailable (%s); on the loop", c->peer,
                    kp_err_msg(err));
        kp_err_clear(err);
        conn_resume(c);
        return 0;
    default:
        /* a blocking descriptor must not reach the loop again: close it now */
        conn_close(c);
        return kp_err_prefix(err, "TCP_RR echo");
    }
}

int session_rr_start(struct session *s, struct kp_err *err)
{
    return s->streams[0] ? start_echo(s->streams[0], err) : 0;
}

/* --- streams ------------------------------------------------------------------------------ */

static void stream_written(uv_write_t *req, int status);

static void stream_send(struct conn *c)
{
    struct session *s = c->sess;

    while (s && !c->closing && c->writes_in_flight < 2 && s->started && !s->stopping) {
        uv_write_t *w = &c->wr[c->wr[0].data ? 1 : 0];
        uv_buf_t b[STREAM_BUFS_PER_WRITE];
        for (unsigned i = 0; i < STREAM_BUFS_PER_WRITE; i++)
            b[i] = uv_buf_init((char *)c->srv->tx_buf, s->req.msg_size);
        w->data = c;
        if (uv_write(w, (uv_stream_t *)&c->tcp, b, STREAM_BUFS_PER_WRITE, stream_written) != 0) {
            w->data = NULL;
            conn_close(c);
            return;
        }
        c->writes_in_flight++;
        /* counted when queued: everything queued is delivered before our FIN */
        c->tx_bytes += (uint64_t)s->req.msg_size * STREAM_BUFS_PER_WRITE;
    }
}

static void stream_written(uv_write_t *req, int status)
{
    struct conn *c = req->data;

    req->data = NULL;
    c->writes_in_flight--;
    if (status != 0 || c->closing)
        return;
    stream_send(c);
}

static void streamer_ended_cb(void *arg)
{
    uv_async_send(arg); /* the one libuv call that is safe from another thread */
}

/* The pool a stream of s goes to: the --stream-pool one, else for a same-kernel test with no
 * more streams than CPUs the server's half of them, and for one with more all of them (the
 * client then has one thread per two CPUs; with one pool thread against one client thread the
 * receiver swung between 11 and 55 Gb/s, with two it read 34-40: docs/benchmark.md, "One
 * call per ready socket"). Each is made on first use; without it the stream gets a thread. */
static struct streampool *stream_pool_for(struct server *srv, const struct session *s)
{
    struct streampool **pool;
    struct kp_err err;
    unsigned cpus, n;

    if (srv->pool || !(s->req.flags & PROTO_FLAG_SAME_KERNEL))
        return srv->pool;
    cpus = sysinfo_usable_cpus();
    pool = s->req.streams > cpus ? &srv->wide_pool : &srv->near_pool;
    if (!*pool) {
        n = pool == &srv->wide_pool ? cpus : sysinfo_half_cpus(cpus);
        if (n > STREAMPOOL_MAX_THREADS)
            n = STREAMPOOL_MAX_THREADS;
        kp_err_clear(&err);
        if (streampool_new(n, pool, &err) != 0)
            server_warn(srv, "same-kernel streams on threads of their own: %s", kp_err_msg(&err));
    }
    return *pool;
}

/* From START on, a stream test's connection is received (or, reversed, sent) on its own
 * thread (streamer.h) while fewer than max_streamers run; the others stay on the loop. A
 * connection with a queued write stays on the loop too. Failing to start a thread is not an
 * error: the loop keeps the stream. */
static void stream_hand_off(struct conn *c)
{
    struct server *srv = c->srv;
    struct session *s = c->sess;
    struct streamer_params p;
    struct kp_err err;
    int fd;

    if (srv->nstreamers >= srv->max_streamers || c->writes_in_flight ||
        uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) != 0 || c->eof ||
        uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0)
        return;
    memset(&p, 0, sizeof(p));
    p.fd = fd;
    p.mode = (s->req.flags & PROTO_FLAG_REVERSE) ? STREAMER_SOURCE : STREAMER_SINK;
    p.block = srv->tx_buf;
    p.block_len = s->req.msg_size;
    p.bytes = p.mode == STREAMER_SOURCE ? &c->tx_bytes : &c->rx_bytes;
    p.on_end = streamer_ended_cb;
    p.arg = &srv->streams_done;
    p.pool = stream_pool_for(srv, s);
    kp_err_clear(&err); /* it only shapes CPU use: the stream runs without it */
    if (p.mode == STREAMER_SOURCE && (s->req.flags & PROTO_FLAG_LOW_UNSENT) &&
        sysinfo_low_unsent(fd, PROTO_LOW_UNSENT_BYTES, &err) != 0)
        server_warn(srv, "%s: %s", c->peer, kp_err_msg(&err));
    uv_read_stop((uv_stream_t *)&c->tcp);
    kp_err_clear(&err);
    if (streamer_start(&p, &c->streamer, &err) != 0) {
        server_warn(srv, "%s: stream thread unavailable (%s); on the loop", c->peer,
                    kp_err_msg(&err));
        if (p.mode == STREAMER_SINK)
            conn_resume(c);
        return;
    }
    srv->nstreamers++;
}

void session_stream_stop(struct conn *c)
{
    if (!c->streamer)
        return;
    streamer_stop(c->streamer, &c->sst);
    c->streamer = NULL;
    c->has_sst = 1;
    c->srv->nstreamers--;
}

void session_streams_stop(struct session *s)
{
    for (unsigned i = 0; i < s->req.streams && i < PROTO_MAX_STREAMS; i++)
        if (s->streams[i])
            streamer_request_stop(s->streams[i]->streamer);
    for (unsigned i = 0; i < s->req.streams && i < PROTO_MAX_STREAMS; i++)
        if (s->streams[i])
            session_stream_stop(s->streams[i]);
}

void session_streams_done(struct server *srv)
{
    struct conn *next;

    for (struct conn *c = srv->conns; c; c = next) {
        next = c->next;
        if (!c->streamer || !streamer_ended(c->streamer))
            continue;
        session_stream_stop(c);
        if (c->sst.eof) {
            session_on_data_eof(c);
        } else if (c->sst.err_no && c->sess && !(c->sess->req.flags & PROTO_FLAG_REVERSE)) {
            /* as on the loop: a receiving stream that fails is dropped; a sending one keeps
             * its count for RESULT */
            server_warn(srv, "%s: data connection: %s; dropped", c->peer, strerror(c->sst.err_no));
            conn_close(c);
        }
    }
}

static int all_streams_eof(const struct session *s)
{
    for (unsigned i = 0; i < s->req.streams; i++)
        if (s->streams[i] && !s->streams[i]->eof)
            return 0;
    return 1;
}

void session_stream_eof(struct conn *c)
{
    struct session *s = c->sess;

    c->eof = 1;
    s->t_last_eof_ns = c->has_sst && c->sst.eof ? c->sst.end_ns : sysinfo_now_ns();
    if (s->stopping && !s->reported && all_streams_eof(s)) {
        s->t_end_ns = s->t_last_eof_ns;
        session_report(s);
    }
}

int session_stream_start(struct session *s, struct kp_err *err)
{
    (void)err;
    /* receivers go to their threads before STARTED lets the client send */
    if (!(s->req.flags & PROTO_FLAG_REVERSE))
        for (unsigned i = 0; i < s->req.streams; i++)
            if (s->streams[i])
                stream_hand_off(s->streams[i]);
    return 0;
}

void session_stream_started(struct session *s)
{
    /* senders after STARTED */
    if (!(s->req.flags & PROTO_FLAG_REVERSE))
        return;
    for (unsigned i = 0; i < s->req.streams; i++)
        if (s->streams[i]) {
            stream_hand_off(s->streams[i]);
            if (s->streams[i] && !s->streams[i]->streamer)
                stream_send(s->streams[i]);
        }
}

void session_stream_stopped(struct session *s)
{
    int reverse = (s->req.flags & PROTO_FLAG_REVERSE) != 0;

    if (!reverse && !all_streams_eof(s)) {
        session_report_later(s, DRAIN_WAIT_MS, "uv_timer_start (drain)");
        return;
    }
    if (!reverse && s->t_last_eof_ns)
        s->t_end_ns = s->t_last_eof_ns;
    session_report(s);
}
