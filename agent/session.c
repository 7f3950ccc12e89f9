/* SPDX-License-Identifier: Apache-2.0 */
/* session.c - one test on the server: attaches data connections, echoes (TCP_RR, UDP_RR),
 * answers and closes (TCP_CRR), sinks or sources streams (TCP and UDP, paced), takes the
 * measurement window (after --omit) and reports the server's side in RESULT.
 * Every loop here is bounded by the server's own numbers, never by values from the wire. */
#include "agent/server_int.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/echo.h"
#include "agent/peeraddr.h"
#include "agent/sha256.h"
#include "agent/streamer.h"
#include "agent/streampool.h"
#include "agent/sysinfo.h"
#include "agent/udp_source.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"

#define UDP_SEND_PER_TICK     4096 /* datagrams per 1 ms pacing tick, at most */
#define UDP_POLL_PER_TICK     16   /* reverse UDP: keep-alives read per pacing tick, at most */
#define REPORT_GRACE_MS       1000 /* forward UDP: wait for datagrams still in flight after STOP */
#define STREAM_BUFS_PER_WRITE 4    /* reverse streams: msg_size blocks per writev */
#define DRAIN_WAIT_MS         5000 /* forward TCP: wait for every stream's EOF after STOP */

struct echo_req {
    uv_write_t req;
    struct conn *c;
    uint8_t data[];
};

/* Stops the UDP_RR echo thread, if any, and adds what it echoed to the session's counters. */
static void udp_echo_fold(struct session *s)
{
    echo_udp_stop(s->udp_echo);
    s->udp_echo = NULL;
    s->udp_received += atomic_exchange(&s->udp_echo_count, 0);
    s->udp_bytes += atomic_exchange(&s->udp_echo_bytes, 0);
}

static void session_closed(uv_handle_t *h)
{
    struct session *s = h->data;

    if (--s->open_handles > 0)
        return;
    udp_source_close(s->udp_src);
    free(s);
}

struct session *session_new(struct server *srv, struct conn *ctrl, const struct proto_test_req *req,
                            struct kp_err *err)
{
    struct session *s = kp_xcalloc(1, sizeof(*s));
    uv_timer_t *timers[] = {&s->deadline, &s->mark, &s->pace};
    int rc = 0;

    s->srv = srv;
    s->req = *req;
    s->ctrl = ctrl;
    while (s->id == 0 || session_find(srv, s->id))
        if (sha256_random(&s->id, sizeof(s->id)) != 0)
            s->id = sysinfo_now_ns() ^ (uint64_t)(uintptr_t)s;
    for (unsigned i = 0; i < 3 && rc == 0; i++) {
        rc = uv_timer_init(&srv->loop, timers[i]);
        if (rc == 0) {
            timers[i]->data = s;
            s->open_handles++;
        }
    }
    if (rc != 0) {
        int opened = s->open_handles;
        kp_err_set(err, "uv_timer_init: %s", uv_strerror(rc));
        /* s is freed by the last close callback, or here when none was opened */
        s->closing = 1;
        if (opened == 0)
            free(s);
        for (int i = 0; i < opened; i++)
            uv_close((uv_handle_t *)timers[i], session_closed);
        return NULL;
    }
    s->next = srv->sessions;
    srv->sessions = s;
    srv->nsessions++;
    return s;
}

struct session *session_find(struct server *srv, uint64_t id)
{
    for (struct session *s = srv->sessions; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

void session_end(struct session *s, const char *why)
{
    session_end_code(s, PROTO_REFUSE_INTERNAL, why);
}

void session_end_code(struct session *s, uint16_t code, const char *why)
{
    struct server *srv = s->srv;
    struct session **pp;
    struct conn *ctrl = s->ctrl;

    if (s->closing)
        return;
    s->closing = 1;
    udp_echo_fold(s);
    for (pp = &srv->sessions; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    srv->nsessions--;
    s->ctrl = NULL;
    if (ctrl) {
        ctrl->sess = NULL;
        if (why)
            conn_refuse(ctrl, code, "%s", why);
        else
            conn_drain(ctrl);
    }
    for (struct conn *c = srv->conns; c; c = c->next) {
        if (c->sess != s)
            continue;
        c->sess = NULL;
        conn_drain(c);
    }
    uv_timer_stop(&s->deadline);
    uv_timer_stop(&s->mark);
    uv_timer_stop(&s->pace);
    /* nothing more goes to the receiver; the struct goes with the last timer */
    udp_source_close(s->udp_src);
    s->udp_src = NULL;
    uv_close((uv_handle_t *)&s->deadline, session_closed);
    uv_close((uv_handle_t *)&s->mark, session_closed);
    uv_close((uv_handle_t *)&s->pace, session_closed);
}

static int same_ip(const struct sockaddr_storage *a, const struct sockaddr *b)
{
    return peeraddr_same_ip((const struct sockaddr *)a, b);
}

int session_attach(struct session *s, struct conn *c, uint16_t stream)
{
    struct proto_msg ok;

    if (!s->ctrl || !same_ip(&s->ctrl->peer_addr, (const struct sockaddr *)&c->peer_addr))
        return -1;
    if (proto_test_is_udp(s->req.test) || s->stopping)
        return -1;
    c->sess = s;
    c->state = CONN_DATA;
    if (s->req.test == PROTO_TCP_CRR) {
        /* one transaction; the handshake timer stays as its deadline */
        if (!s->started)
            return -1;
        c->crr_need = s->req.msg_size;
        return 0;
    }
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

/* --- TCP data ----------------------------------------------------------------------------- */

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
static void echo(struct conn *c, const uint8_t *buf, size_t len)
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

void session_on_data(struct conn *c, const uint8_t *buf, size_t len)
{
    struct session *s = c->sess;

    if (!s)
        return;
    c->rx_bytes += len;
    switch (s->req.test) {
    case PROTO_TCP_RR:
        echo(c, buf, len);
        break;
    case PROTO_TCP_CRR:
        if (c->crr_need == 0)
            break;
        if (len < c->crr_need) {
            c->crr_need -= (uint32_t)len;
            break;
        }
        c->crr_need = 0;
        c->wr[0].data = c;
        {
            uv_buf_t b = uv_buf_init((char *)c->srv->tx_buf, s->req.msg_size);
            if (uv_write(&c->wr[0], (uv_stream_t *)&c->tcp, &b, 1, crr_done) != 0)
                conn_close(c);
            else
                c->writes_in_flight++;
        }
        break;
    default:
        break; /* stream sink: counting is all */
    }
}

static void report(struct session *s);

/* --- streams on their own threads ---------------------------------------------------------- */

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

/* Asks every streamer of s to stop, then joins them: they stop in parallel. */
static void session_streams_stop(struct session *s)
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

void session_on_data_eof(struct conn *c)
{
    struct session *s = c->sess;

    if (!s || s->req.test == PROTO_TCP_RR || s->req.test == PROTO_TCP_CRR) {
        conn_close(c);
        return;
    }
    c->eof = 1;
    s->t_last_eof_ns = c->has_sst && c->sst.eof ? c->sst.end_ns : sysinfo_now_ns();
    if (s->stopping && !s->reported && all_streams_eof(s)) {
        s->t_end_ns = s->t_last_eof_ns;
        report(s);
    }
}

/* --- UDP ---------------------------------------------------------------------------------- */

static void udp_sink(struct session *s, uint64_t seq, uint64_t ts_ns, size_t len)
{
    int64_t transit = (int64_t)(sysinfo_now_ns() - ts_ns);

    s->udp_received++;
    s->udp_bytes += len;
    if (seq >= s->udp_max_seq_plus1)
        s->udp_max_seq_plus1 = seq + 1;
    else
        s->udp_ooo++;
    /* RFC 3550 6.4.1: J += (|D| - J) / 16; clock offsets cancel in D */
    if (s->have_transit) {
        int64_t d = transit - s->last_transit;
        if (d < 0)
            d = -d;
        s->jitter_ns += ((double)d - s->jitter_ns) / 16.0;
    }
    s->last_transit = transit;
    s->have_transit = 1;
}

/* UDP_RR: after the first request, later ones go to a connected socket echoed by its own
 * thread (one blocking recv and send per transaction, no loop wake-up). The socket is bound
 * to the address the client reached the control connection on, so answers leave from the
 * address the client sends to. Failing that, the loop keeps echoing. */
/* The address the client reached the control connection on, with the server's UDP port: a
 * per-session UDP socket bound there sends from the address the client sends to. Returns 0,
 * or -1 with err. */
static int local_udp_addr(const struct session *s, struct sockaddr_storage *local,
                          struct kp_err *err)
{
    int len = sizeof(*local);
    int rc = uv_tcp_getsockname(&s->ctrl->tcp, (struct sockaddr *)local, &len);

    if (rc != 0)
        return kp_err_set(err, "uv_tcp_getsockname: %s", uv_strerror(rc));
    if (local->ss_family == AF_INET)
        ((struct sockaddr_in *)local)->sin_port = htons(s->srv->o.port);
    else if (local->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)local)->sin6_port = htons(s->srv->o.port);
    else
        return kp_err_set(err, "control connection is neither IPv4 nor IPv6");
    return 0;
}

static void udp_echo_begin(struct session *s, const struct sockaddr *from)
{
    struct sockaddr_storage local;
    uint64_t deadline_ns;
    struct kp_err err;

    s->udp_echo_tried = 1;
    if (!s->ctrl)
        return;
    kp_err_clear(&err);
    if (local_udp_addr(s, &local, &err) != 0)
        goto on_loop;
    deadline_ns = sysinfo_now_ns() +
                  ((uint64_t)s->req.omit_ms + s->req.duration_ms + SESSION_SLACK_MS) * 1000000ull;
    s->udp_echo = echo_udp_start((const struct sockaddr *)&local, from, s->id, PROTO_MIN_UDP_SIZE,
                                 deadline_ns, &s->udp_echo_count, &s->udp_echo_bytes, &err);
    if (s->udp_echo)
        return;
on_loop:
    server_warn(s->srv, "%s: UDP_RR echo thread unavailable (%s); echoing on the loop",
                s->ctrl->peer, kp_err_msg(&err));
}

/* Reverse UDP_STREAM: the receiver's address is known from its hello. Opens the sending socket
 * (connected to it, so that an ICMP error and the receiver's keep-alives reach it) and confirms
 * with UDP_READY; a socket that cannot be set up ends the session with the reason (REFUSE 6). */
static void udp_reverse_ready(struct session *s, const struct sockaddr *from)
{
    char why[PROTO_REASON_MAX + 1];
    struct sockaddr_storage local;
    struct proto_msg m;
    struct kp_err err;

    kp_err_clear(&err);
    if (local_udp_addr(s, &local, &err) == 0)
        s->udp_src = udp_source_open((struct sockaddr *)&local, from, s->id, s->req.msg_size, &err);
    if (!s->udp_src) {
        snprintf(why, sizeof(why), "server: reverse UDP_STREAM socket: %s", kp_err_msg(&err));
        session_end(s, why);
        return;
    }
    memcpy(&s->udp_peer, from,
           from->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    s->udp_peer_known = 1;
    memset(&m, 0, sizeof(m));
    m.type = PROTO_UDP_READY;
    conn_send(s->ctrl, &m);
}

void session_on_udp(struct server *srv, const uint8_t *buf, size_t len, const struct sockaddr *from)
{
    uint64_t id, seq, ts;
    struct session *s;

    if (len < PROTO_MIN_UDP_SIZE)
        return;
    proto_udp_get(buf, &id, &seq, &ts);
    s = session_find(srv, id);
    if (!s || s->closing || !s->ctrl || !same_ip(&s->ctrl->peer_addr, from) ||
        !proto_test_is_udp(s->req.test))
        return;
    if (s->req.test == PROTO_UDP_RR) {
        uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);
        if (s->started && !s->stopping && uv_udp_try_send(&srv->udp, &b, 1, from) > 0) {
            s->udp_received++;
            s->udp_bytes += len;
            if (!s->udp_echo_tried)
                udp_echo_begin(s, from);
        }
        return;
    }
    if (seq == PROTO_UDP_HELLO_SEQ) {
        if ((s->req.flags & PROTO_FLAG_REVERSE) && !s->udp_peer_known && !s->started)
            udp_reverse_ready(s, from);
        return;
    }
    if (!(s->req.flags & PROTO_FLAG_REVERSE) && s->started && !s->reported) {
        udp_sink(s, seq, ts, len);
        /* after STOP: report as soon as every datagram the client sent is in */
        if (s->stopping && s->udp_received >= s->stop_udp_sent)
            report(s);
    }
}

/* Reverse UDP_STREAM: the receiver is gone or cannot be reached, so the server stops sending
 * (it never streams at an address that does not want it). The session itself goes on until
 * STOP or its deadline; RESULT says when and why the sending stopped. */
static void udp_stop(struct session *s, uint16_t why, int err_no)
{
    static const char *const what[] = {
        [PROTO_UDP_STOP_UNREACHABLE] = "the receiver is unreachable",
        [PROTO_UDP_STOP_SILENT] = "no keep-alive from the receiver",
        [PROTO_UDP_STOP_SEND_FAILED] = "a send failed",
    };
    uint64_t now = sysinfo_now_ns();

    uv_timer_stop(&s->pace);
    udp_source_close(s->udp_src);
    s->udp_src = NULL;
    s->udp_stop = why;
    s->udp_stop_ns = now;
    server_warn(s->srv, "%s: reverse UDP_STREAM stopped sending after %llu ms: %s%s%s%s",
                s->ctrl ? s->ctrl->peer : "?",
                (unsigned long long)((now - s->pace_start_ns) / 1000000), what[why],
                err_no ? " (" : "", err_no ? strerror(err_no) : "", err_no ? ")" : "");
}

static uint16_t stop_reason(enum udp_source_status st)
{
    return st == UDP_SOURCE_UNREACHABLE ? PROTO_UDP_STOP_UNREACHABLE : PROTO_UDP_STOP_SEND_FAILED;
}

static void pace_tick(uv_timer_t *t)
{
    struct session *s = t->data;
    uint64_t now = sysinfo_now_ns();
    double due_bytes = (double)s->req.rate_bps / 8.0 * (double)(now - s->pace_start_ns) / 1e9;
    uint64_t due = (uint64_t)(due_bytes / s->req.msg_size);
    enum udp_source_status st;
    unsigned keepalives = 0;
    int why = 0;

    if (!s->udp_src) {
        uv_timer_stop(&s->pace);
        return;
    }
    st = udp_source_poll(s->udp_src, UDP_POLL_PER_TICK, &keepalives, &why);
    if (keepalives)
        s->udp_last_ka_ns = now;
    if (st != UDP_SOURCE_OK)
        return udp_stop(s, stop_reason(st), why);
    if (now - s->udp_last_ka_ns > PROTO_UDP_SILENT_MS * 1000000ull)
        return udp_stop(s, PROTO_UDP_STOP_SILENT, 0);
    for (unsigned i = 0; i < UDP_SEND_PER_TICK && s->udp_sent < due; i++) {
        st = udp_source_send(s->udp_src, s->udp_sent, &why);
        if (st == UDP_SOURCE_FULL)
            break; /* socket buffer full: try again next tick */
        if (st != UDP_SOURCE_OK)
            return udp_stop(s, stop_reason(st), why);
        s->udp_sent++;
        s->udp_tx_bytes += s->req.msg_size;
    }
}

/* --- control ------------------------------------------------------------------------------ */

static void take_mark(struct session *s)
{
    s->measuring = 1;
    s->t_mark_ns = sysinfo_now_ns();
    sysinfo_process_cpu_us(&s->cpu_user0, &s->cpu_sys0);
    /* best effort by design: node CPU reads as all 0 when /proc/stat is unreadable
     * (docs/result-schema.md), and the measurement itself does not depend on it */
    if (sysinfo_node_cpu(s->node0) != 0)
        kp_log(KP_LOG_DEBUG, "/proc/stat unreadable: node CPU will read 0");
    s->rcvbuf0 = sysinfo_udp_rcvbuf_errors();
    for (unsigned i = 0; i < s->req.streams; i++) {
        struct conn *c = s->streams[i];
        if (c) {
            c->rx_mark = c->rx_bytes;
            c->tx_mark = c->tx_bytes;
            if (c->streamer)
                streamer_mark(c->streamer);
        }
    }
    s->udp_bytes_mark = s->udp_bytes + atomic_load(&s->udp_echo_bytes);
    s->udp_tx_mark = s->udp_tx_bytes;
}

static void mark_fired(uv_timer_t *t)
{
    take_mark(t->data);
}

static void deadline_fired(uv_timer_t *t)
{
    struct session *s = t->data;

    server_warn(s->srv, "%s: %s exceeded its deadline; dropped", s->ctrl ? s->ctrl->peer : "?",
                proto_test_name(s->req.test));
    session_end_code(s, PROTO_REFUSE_TIMEOUT, "test exceeded its deadline");
}

static void fill_result(struct session *s, struct proto_result *r)
{
    uint64_t user, sys, node[PROTO_CPU_FIELDS];
    int fd;

    memset(r, 0, sizeof(*r));
    if (!s->measuring)
        take_mark(s);
    r->window_ns = s->t_end_ns > s->t_mark_ns ? s->t_end_ns - s->t_mark_ns : 0;
    sysinfo_process_cpu_us(&user, &sys);
    r->cpu_user_us = user - s->cpu_user0;
    r->cpu_sys_us = sys - s->cpu_sys0;
    if (sysinfo_node_cpu(node) == 0)
        for (int i = 0; i < PROTO_CPU_FIELDS; i++)
            r->node_cpu[i] = node[i] >= s->node0[i] ? node[i] - s->node0[i] : 0;
    if (s->ctrl && uv_fileno((uv_handle_t *)&s->ctrl->tcp, &fd) == 0)
        r->mtu = sysinfo_socket_mtu(fd);
    r->nstreams =
        (uint16_t)(proto_test_is_udp(s->req.test) || s->req.test == PROTO_TCP_CRR ? 0
                                                                                  : s->req.streams);
    for (unsigned i = 0; i < r->nstreams; i++) {
        struct conn *c = s->streams[i];
        struct sysinfo_tcp ti;
        if (!c)
            continue;
        r->streams[i].rx_bytes = c->rx_bytes - c->rx_mark;
        r->streams[i].tx_bytes = c->tx_bytes - c->tx_mark;
        r->rx_bytes += r->streams[i].rx_bytes;
        r->tx_bytes += r->streams[i].tx_bytes;
        r->rx_total += c->rx_bytes;
        r->streams[i].cpu = PROTO_CPU_UNKNOWN;
        if (c->has_sst) {
            r->streams[i].cpu_us = (c->sst.cpu_ns - c->sst.cpu_mark_ns) / 1000;
            if (c->sst.cpu >= 0)
                r->streams[i].cpu = (uint32_t)c->sst.cpu;
        }
        if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0 && sysinfo_tcp_info(fd, &ti) == 0) {
            r->streams[i].retransmits = ti.retransmits;
            r->streams[i].rtt_us = ti.rtt_us;
            r->streams[i].mss = ti.mss;
        }
    }
    r->rx_bytes += s->udp_bytes - s->udp_bytes_mark;
    r->rx_total += s->udp_bytes;
    r->tx_bytes += s->udp_tx_bytes - s->udp_tx_mark;
    r->udp_received = s->udp_received;
    r->udp_sent = s->udp_sent;
    r->udp_out_of_order = s->udp_ooo;
    r->udp_max_seq_plus1 = s->udp_max_seq_plus1;
    r->udp_jitter_ns = (uint64_t)s->jitter_ns;
    r->udp_rcvbuf_errors = sysinfo_udp_rcvbuf_errors() - s->rcvbuf0;
    if (s->pace_start_ns) {
        uint64_t end = s->udp_stop_ns ? s->udp_stop_ns : s->t_end_ns;
        r->udp_send_ns = end > s->pace_start_ns ? end - s->pace_start_ns : 0;
    }
    r->udp_stop = s->udp_stop;
}

static void report(struct session *s)
{
    struct proto_msg *m;

    if (s->reported || !s->ctrl)
        return;
    s->reported = 1;
    session_streams_stop(s); /* their figures are final from here */
    m = kp_xcalloc(1, sizeof(*m));
    m->type = PROTO_RESULT;
    fill_result(s, &m->u.result);
    conn_send(s->ctrl, m);
    free(m);
    session_end(s, NULL);
}

static void report_fired(uv_timer_t *t)
{
    struct session *s = t->data;
    report(s);
}

/* Ends s because a call that its measurement needs failed: the client gets REFUSE (internal)
 * with the reason, and the server logs it. */
static void session_fail(struct session *s, const char *what, int uv_status)
{
    char why[PROTO_REASON_MAX + 1];

    snprintf(why, sizeof(why), "server: %s: %s", what, uv_strerror(uv_status));
    session_end(s, why);
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

static void on_start(struct session *s)
{
    const struct proto_test_req *r = &s->req;
    struct proto_msg m;
    struct kp_err err;
    int reverse = (r->flags & PROTO_FLAG_REVERSE) != 0;
    unsigned want = (r->test == PROTO_TCP_CRR || proto_test_is_udp(r->test)) ? 0 : r->streams;
    int rc;

    if (s->started) {
        conn_refuse(s->ctrl, PROTO_REFUSE_BAD_REQUEST, "START sent twice");
        return;
    }
    if (s->attached != want || (r->test == PROTO_UDP_STREAM && reverse && !s->udp_peer_known)) {
        conn_refuse(s->ctrl, PROTO_REFUSE_BAD_REQUEST, "START before %u data connections", want);
        return;
    }
    s->started = 1;
    uv_timer_stop(&s->ctrl->timer);
    rc = uv_timer_start(&s->deadline, deadline_fired,
                        (uint64_t)r->omit_ms + r->duration_ms + SESSION_SLACK_MS, 0);
    if (rc != 0) {
        session_fail(s, "uv_timer_start (deadline)", rc);
        return;
    }
    if (r->omit_ms == 0) {
        take_mark(s);
    } else {
        rc = uv_timer_start(&s->mark, mark_fired, r->omit_ms, 0);
        if (rc != 0) {
            session_fail(s, "uv_timer_start (warm-up)", rc);
            return;
        }
    }
    kp_err_clear(&err);
    if (r->test == PROTO_TCP_RR && s->streams[0] && start_echo(s->streams[0], &err) != 0) {
        char why[PROTO_REASON_MAX + 1];
        snprintf(why, sizeof(why), "server: %s", kp_err_msg(&err));
        session_end(s, why);
        return;
    }
    /* receivers go to their threads before STARTED lets the client send; senders after it */
    if (!reverse && proto_test_is_stream(r->test) && r->test != PROTO_UDP_STREAM)
        for (unsigned i = 0; i < r->streams; i++)
            if (s->streams[i])
                stream_hand_off(s->streams[i]);
    memset(&m, 0, sizeof(m));
    m.type = PROTO_STARTED;
    conn_send(s->ctrl, &m);
    if (reverse && r->test != PROTO_UDP_STREAM)
        for (unsigned i = 0; i < r->streams; i++)
            if (s->streams[i]) {
                stream_hand_off(s->streams[i]);
                if (s->streams[i] && !s->streams[i]->streamer)
                    stream_send(s->streams[i]);
            }
    if (reverse && r->test == PROTO_UDP_STREAM) {
        s->pace_start_ns = sysinfo_now_ns();
        s->udp_last_ka_ns = s->pace_start_ns; /* the receiver's keep-alives start now */
        rc = uv_timer_start(&s->pace, pace_tick, 1, 1);
        if (rc != 0) {
            session_fail(s, "uv_timer_start (pacing)", rc);
            return;
        }
    }
}

static void on_stop(struct session *s, const struct proto_msg *m)
{
    const struct proto_test_req *r = &s->req;
    int reverse = (r->flags & PROTO_FLAG_REVERSE) != 0;
    int rc;

    if (!s->started || s->stopping) {
        conn_refuse(s->ctrl, PROTO_REFUSE_BAD_REQUEST, "STOP out of order");
        return;
    }
    s->stopping = 1;
    udp_echo_fold(s);
    s->stop_sent_bytes = m->u.stop.sent_bytes;
    s->stop_udp_sent = m->u.stop.udp_sent;
    s->t_end_ns = sysinfo_now_ns();
    uv_timer_stop(&s->pace);
    if (r->test == PROTO_UDP_STREAM && !reverse && s->udp_received < s->stop_udp_sent) {
        rc = uv_timer_start(&s->pace, report_fired, REPORT_GRACE_MS, 0);
        if (rc != 0)
            session_fail(s, "uv_timer_start (grace)", rc);
    } else if (proto_test_is_stream(r->test) && !reverse && !all_streams_eof(s)) {
        rc = uv_timer_start(&s->pace, report_fired, DRAIN_WAIT_MS, 0);
        if (rc != 0)
            session_fail(s, "uv_timer_start (drain)", rc);
    } else {
        if (proto_test_is_stream(r->test) && !reverse && s->t_last_eof_ns)
            s->t_end_ns = s->t_last_eof_ns;
        report(s);
    }
}

void session_on_ctrl_msg(struct session *s, const struct proto_msg *m)
{
    if (m->type == PROTO_START)
        on_start(s);
    else if (m->type == PROTO_STOP)
        on_stop(s, m);
}
