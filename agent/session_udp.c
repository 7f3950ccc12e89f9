/* SPDX-License-Identifier: Apache-2.0 */
/* session_udp.c - the UDP data of a test on the server, the kind-specific parts the ops table
 * (testops.h) points at: UDP_RR echoed (on the loop, then on a connected socket's own thread),
 * forward UDP_STREAM counted (loss, order, RFC 3550 jitter), reverse UDP_STREAM sent paced
 * from a socket of its own and stopped when the receiver goes quiet or unreachable. The
 * datagrams arrive on the server's one UDP socket (server.c); the session's life and RESULT
 * are session.c's. */
#include "agent/server_int.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "agent/echo.h"
#include "agent/peeraddr.h"
#include "agent/sysinfo.h"
#include "agent/testops.h"
#include "agent/udp_source.h"
#include "base/kp_log.h"

#define UDP_SEND_PER_TICK 4096 /* datagrams per 1 ms pacing tick, at most */
#define UDP_POLL_PER_TICK 16   /* reverse UDP: keep-alives read per pacing tick, at most */
#define REPORT_GRACE_MS   1000 /* forward UDP: wait for datagrams still in flight after STOP */

/* Stops the UDP_RR echo thread, if any, and adds what it echoed to the session's counters. */
void session_udp_echo_fold(struct session *s)
{
    echo_udp_stop(s->udp_echo);
    s->udp_echo = NULL;
    s->udp_received += atomic_exchange(&s->udp_echo_count, 0);
    s->udp_bytes += atomic_exchange(&s->udp_echo_bytes, 0);
}

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

/* UDP_RR: after the first request, later ones go to a connected socket echoed by its own
 * thread (one blocking recv and send per transaction, no loop wake-up). The socket is bound
 * to the address the client reached the control connection on, so answers leave from the
 * address the client sends to. Failing that, the loop keeps echoing. */
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
    if (!s || s->closing || !s->ctrl || !s->ops->udp ||
        !peeraddr_same_ip((const struct sockaddr *)&s->ctrl->peer_addr, from))
        return;
    s->ops->udp(s, buf, len, from, seq, ts);
}

void session_udp_rr(struct session *s, const uint8_t *buf, size_t len, const struct sockaddr *from,
                    uint64_t seq, uint64_t ts_ns)
{
    uv_buf_t b = uv_buf_init((char *)buf, (unsigned)len);

    (void)seq, (void)ts_ns;
    if (s->started && !s->stopping && uv_udp_try_send(&s->srv->udp, &b, 1, from) > 0) {
        s->udp_received++;
        s->udp_bytes += len;
        if (!s->udp_echo_tried)
            udp_echo_begin(s, from);
    }
}

void session_udp_stream(struct session *s, const uint8_t *buf, size_t len,
                        const struct sockaddr *from, uint64_t seq, uint64_t ts_ns)
{
    (void)buf;
    if (seq == PROTO_UDP_HELLO_SEQ) {
        if ((s->req.flags & PROTO_FLAG_REVERSE) && !s->udp_peer_known && !s->started)
            udp_reverse_ready(s, from);
        return;
    }
    if (!(s->req.flags & PROTO_FLAG_REVERSE) && s->started && !s->reported) {
        udp_sink(s, seq, ts_ns, len);
        /* after STOP: report as soon as every datagram the client sent is in */
        if (s->stopping && s->udp_received >= s->stop_udp_sent)
            session_report(s);
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
    /* Once per authenticated test, like the "accepted" line: not through the flood limiter,
     * which a burst of unauthenticated connections just before may have emptied. */
    kp_log(KP_LOG_WARN, "%s: reverse UDP_STREAM stopped sending after %llu ms: %s%s%s%s",
           s->ctrl ? s->ctrl->peer : "?", (unsigned long long)((now - s->pace_start_ns) / 1000000),
           what[why], err_no ? " (" : "", err_no ? strerror(err_no) : "", err_no ? ")" : "");
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

void session_udp_started(struct session *s)
{
    int rc;

    if (!(s->req.flags & PROTO_FLAG_REVERSE))
        return;
    s->pace_start_ns = sysinfo_now_ns();
    s->udp_last_ka_ns = s->pace_start_ns; /* the receiver's keep-alives start now */
    rc = uv_timer_start(&s->pace, pace_tick, 1, 1);
    if (rc != 0)
        session_fail(s, "uv_timer_start (pacing)", rc);
}

void session_udp_stopped(struct session *s)
{
    if (!(s->req.flags & PROTO_FLAG_REVERSE) && s->udp_received < s->stop_udp_sent)
        session_report_later(s, REPORT_GRACE_MS, "uv_timer_start (grace)");
    else
        session_report(s);
}
