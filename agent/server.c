/* SPDX-License-Identifier: Apache-2.0 */
/* server.c - see server.h. The listener and its limits: binds the TCP and UDP sockets (dual-stack
 * or IPv4), accepts connections and counts them against the caps (global and per source,
 * refusing with a reason), hands UDP datagrams to session_udp.c, and runs and shuts down the
 * loop. A connection's life is server_conn.c's, its handshake server_ctrl.c's, a test's the
 * session*.c files'. */
#include "agent/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/peeraddr.h"
#include "agent/server_int.h"
#include "agent/streampool.h"
#include "agent/sysinfo.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"

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
    rc = uv_timer_start(&c->timer, server_ctrl_deadline, srv->o.handshake_timeout_ms, 0);
    if (rc != 0) {
        server_warn(srv, "%s: uv_timer_start (handshake): %s; dropped", c->peer, uv_strerror(rc));
        conn_close(c);
        return;
    }
    conn_resume(c); /* starts reading; on failure warns and closes c */
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
    if (srv->has_idle && !uv_is_closing((uv_handle_t *)&srv->idle))
        uv_close((uv_handle_t *)&srv->idle, NULL);
    uv_walk(&srv->loop, close_walk, srv);
}

/* --max-idle: no test running and none for max_idle_ms, so the run that started this server
 * is gone (a run's clients test one after the other; the controller sets the bound above the
 * longest gap it plans). Closes the sockets for good, so nothing listens; the loop stays up
 * on the signal handles until SIGTERM. */
static void idle_check(uv_timer_t *t)
{
    struct server *srv = t->data;
    uint64_t now = sysinfo_now_ns();

    if (srv->nsessions > 0) {
        srv->last_tested = now;
        return;
    }
    if (now - srv->last_tested < (uint64_t)srv->o.max_idle_ms * 1000000u)
        return;
    kp_log(KP_LOG_WARN,
           "no test for %u s (--max-idle): the run that started this server is gone; not "
           "listening any more",
           srv->o.max_idle_ms / 1000);
    srv->parked = 1;
    uv_timer_stop(t);
    if (!uv_is_closing((uv_handle_t *)&srv->listener))
        uv_close((uv_handle_t *)&srv->listener, NULL);
    if (!uv_is_closing((uv_handle_t *)&srv->udp))
        uv_close((uv_handle_t *)&srv->udp, NULL);
}

static int start_idle(struct server *srv, struct kp_err *err)
{
    int rc;

    srv->last_tested = sysinfo_now_ns();
    if (!srv->o.max_idle_ms)
        return 0;
    rc = uv_timer_init(&srv->loop, &srv->idle);
    if (rc == 0) {
        srv->has_idle = 1;
        srv->idle.data = srv;
        rc = uv_timer_start(&srv->idle, idle_check, 1000, 1000);
    }
    if (rc != 0)
        return kp_err_set(err, "--max-idle: uv_timer: %s", uv_strerror(rc));
    return 0;
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
    if (start_signals(srv, err) != 0 || start_idle(srv, err) != 0)
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
        if (srv->has_idle)
            uv_close((uv_handle_t *)&srv->idle, NULL);
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
