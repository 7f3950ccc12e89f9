/* SPDX-License-Identifier: Apache-2.0 */
/* client_loops.c - the client's worker threads, one per connection: TCP_RR, TCP_CRR, stream
 * sender and receiver, UDP_RR, paced UDP sender and UDP receiver. Blocking sockets, one
 * buffer per thread allocated before the loop, no allocation per operation. Each loop ends at
 * the sample's deadline by itself; a failure is written to the worker's err. */
#include "agent/client_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "agent/testops.h"
#include "agent/thread_cpu.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"

#define RX_BUF_LEN        (256 * 1024)
#define UDP_RR_TIMEOUT_MS 200
#define RECV_GRACE_NS     (300ull * 1000000)   /* reverse UDP: datagrams still in flight */
#define UDP_BATCH         32                   /* datagrams per sendmmsg */
#define PACE_GRANULE_NS   (100ull * 1000)      /* UDP pacing: wake-up granularity */
#define EOF_WAIT_NS       (10000ull * 1000000) /* reverse TCP: wait for the server's FIN */

static void addr_text(const struct sample *s, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";

    if (s->addr.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&s->addr)->sin6_addr, ip, sizeof(ip));
    else
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&s->addr)->sin_addr, ip, sizeof(ip));
    snprintf(buf, len, s->addr.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, s->o->port);
}

/* A connected socket that cannot be set up: closes fd, returns -1 with err naming the call. Not
 * "cannot connect": the server is reachable, so later tests still run. */
static int setup_failed(int fd, const char *what, const char *where, struct kp_err *err)
{
    int e = errno;

    close(fd);
    return kp_err_set(err, "%s on the connection to %s: %s", what, where, strerror(e));
}

int client_connect(const struct sample *s, uint64_t timeout_ms, struct kp_err *err)
{
    char where[80];
    int fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    int soerr = 0;
    int flags;
    socklen_t len = sizeof(soerr);

    addr_text(s, where, sizeof(where));
    if (fd < 0)
        return kp_err_set(err, "cannot connect to %s (%s): socket: %s", where, s->o->host,
                          strerror(errno));
    if (connect(fd, (const struct sockaddr *)&s->addr, s->addr_len) != 0) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int rc;
        if (errno != EINPROGRESS) {
            soerr = errno;
            goto fail;
        }
        do
            rc = poll(&p, 1, (int)timeout_ms);
        while (rc < 0 && errno == EINTR);
        if (rc == 0) {
            soerr = ETIMEDOUT;
            goto fail;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
            soerr = errno;
        if (soerr != 0)
            goto fail;
    }
    /* the loops and the control exchange use blocking I/O; every message and RR transaction
     * must leave at once (Nagle would hold a request behind an unacknowledged one) */
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        return setup_failed(fd, "fcntl clearing O_NONBLOCK", where, err);
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        return setup_failed(fd, "setsockopt TCP_NODELAY", where, err);
    return fd;
fail:
    close(fd);
    if (soerr == ETIMEDOUT)
        return kp_err_set(err, "cannot connect to %s (%s): no answer within %llu ms", where,
                          s->o->host, (unsigned long long)timeout_ms);
    return kp_err_set(err, "cannot connect to %s (%s): %s", where, s->o->host, strerror(soerr));
}

int client_connect_ctrl(const struct sample *s, struct kp_err *err)
{
    const char *refused = strerror(ECONNREFUSED);
    struct timespec pause = {0, 100 * 1000 * 1000};

    for (unsigned waited = 0;; waited += 100) {
        int fd = client_connect(s, s->o->connect_timeout_ms, err);
        if (fd >= 0 || waited >= s->o->connect_retry_ms || !strstr(kp_err_msg(err), refused))
            return fd;
        kp_log(KP_LOG_DEBUG, "%s; trying again", kp_err_msg(err));
        kp_err_clear(err);
        nanosleep(&pause, NULL);
    }
}

int client_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int client_read_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            errno = ECONNRESET;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void fail(struct worker *w, const char *what)
{
    snprintf(w->err, sizeof(w->err), "%s %s (stream %u): %s", proto_test_name(w->smp->req.test),
             what, w->index, strerror(errno));
}

static int set_timeout(int fd, int opt, uint64_t ms)
{
    struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (long)(ms % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

void client_loop_tcp_rr(struct worker *w, uint8_t *buf)
{
    const struct sample *s = w->smp;
    size_t len = s->req.msg_size;

    /* bounds a lost answer: without it a dead server would hang the sample */
    if (set_timeout(w->fd, SO_RCVTIMEO, 5000) != 0)
        return fail(w, "setsockopt SO_RCVTIMEO");
    for (;;) {
        uint64_t t1 = sysinfo_now_ns(), t2;
        if (t1 >= s->t_deadline_ns)
            break;
        if (client_write_all(w->fd, buf, len) != 0)
            return fail(w, "send");
        if (client_read_all(w->fd, buf, len) != 0)
            return fail(w, "receive");
        t2 = sysinfo_now_ns();
        if (t1 >= s->t_mark_ns)
            hist_record(w->hist, t2 - t1);
        atomic_store_explicit(&w->ops, atomic_load_explicit(&w->ops, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
    if (sysinfo_tcp_info(w->fd, &w->tcp) != 0)
        return fail(w, "getsockopt TCP_INFO");
}

/* The CRR connection with as few system calls as possible: a blocking connect bounded by
 * SO_SNDTIMEO, a receive timeout, and SO_LINGER {1, 0} so that close() resets the connection
 * and no TIME_WAIT socket is left on the client (a long run would exhaust its ephemeral
 * ports). Returns the fd; or -1 with errno when socket or connect failed; or -1 with w->err
 * set when an option could not be set. */
static int crr_connect(struct worker *w, const struct linger *lg)
{
    const struct sample *s = w->smp;
    int fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const char *what = NULL;

    if (fd < 0)
        return -1;
    if (set_timeout(fd, SO_SNDTIMEO, s->o->connect_timeout_ms) != 0)
        what = "setsockopt SO_SNDTIMEO";
    else if (set_timeout(fd, SO_RCVTIMEO, 5000) != 0)
        what = "setsockopt SO_RCVTIMEO";
    else if (setsockopt(fd, SOL_SOCKET, SO_LINGER, lg, sizeof(*lg)) != 0)
        what = "setsockopt SO_LINGER";
    if (what) {
        fail(w, what);
        close(fd);
        return -1;
    }
    if (connect(fd, (const struct sockaddr *)&s->addr, s->addr_len) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void client_loop_tcp_crr(struct worker *w, uint8_t *buf)
{
    const struct sample *s = w->smp;
    size_t len = s->req.msg_size;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    struct proto_msg m;
    size_t hlen;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_DATA_HELLO;
    m.u.data_hello.session = s->session;
    hlen = proto_encode(&m, buf, PROTO_HEADER_LEN + 64);
    if (hlen == 0) {
        errno = EMSGSIZE;
        return fail(w, "encoding DATA_HELLO");
    }
    for (bool first = true;; first = false) {
        uint64_t t1 = sysinfo_now_ns(), t2;
        int fd;
        /* at least one connection, even when the thread started after the deadline (a loaded
         * host, a very short sample): a sample never ends with nothing tried */
        if (t1 >= s->t_deadline_ns && !first)
            break;
        fd = crr_connect(w, &lg);
        if (fd < 0 && w->err[0])
            return;
        if (fd < 0 && s->o->parallel) { /* a capacity step: counted, and on to the next */
            if (t1 >= s->t_mark_ns)
                w->conn_errors++;
            continue;
        }
        if (fd < 0) {
            struct kp_err err;
            kp_err_clear(&err);
            fd = client_connect(s, s->o->connect_timeout_ms, &err); /* for the message */
            if (fd >= 0)
                close(fd);
            snprintf(w->err, sizeof(w->err), "TCP_CRR: %s",
                     fd >= 0 ? "connect failed intermittently" : kp_err_msg(&err));
            return;
        }
        if (client_write_all(fd, buf, hlen + len) != 0 ||
            client_read_all(fd, buf + hlen, len) != 0) {
            close(fd);
            return fail(w, "transaction");
        }
        close(fd);
        t2 = sysinfo_now_ns();
        if (t1 >= s->t_mark_ns)
            hist_record(w->hist, t2 - t1);
        atomic_store_explicit(&w->ops, atomic_load_explicit(&w->ops, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
}

void client_loop_stream_send(struct worker *w, uint8_t *buf)
{
    const struct sample *s = w->smp;
    size_t len = s->req.msg_size;

    /* a stalled peer: the loop wakes to see the deadline */
    if (set_timeout(w->fd, SO_SNDTIMEO, 1000) != 0)
        return fail(w, "setsockopt SO_SNDTIMEO");
    while (sysinfo_now_ns() < s->t_deadline_ns) {
        ssize_t n = send(w->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return fail(w, "send");
        atomic_fetch_add_explicit(&w->bytes, (uint64_t)n, memory_order_relaxed);
        atomic_store_explicit(&w->cpu, thread_cpu_id(), memory_order_relaxed);
    }
    if (sysinfo_tcp_info(w->fd, &w->tcp) != 0)
        return fail(w, "getsockopt TCP_INFO");
    shutdown(w->fd, SHUT_WR);
}

void client_loop_stream_recv(struct worker *w, uint8_t *buf)
{
    const struct sample *s = w->smp;

    if (set_timeout(w->fd, SO_RCVTIMEO, 500) != 0)
        return fail(w, "setsockopt SO_RCVTIMEO");
    for (;;) {
        ssize_t n = recv(w->fd, buf, RX_BUF_LEN, 0);
        if (n > 0) {
            atomic_fetch_add_explicit(&w->bytes, (uint64_t)n, memory_order_relaxed);
            atomic_store_explicit(&w->cpu, thread_cpu_id(), memory_order_relaxed);
            w->last_rx_ns = sysinfo_now_ns();
            continue;
        }
        if (n == 0 || (errno == ECONNRESET && s->t_deadline_ns <= sysinfo_now_ns()))
            break;
        if (errno == EINTR || errno == EAGAIN) {
            if (sysinfo_now_ns() > s->t_deadline_ns + EOF_WAIT_NS) {
                errno = ETIMEDOUT;
                return fail(w, "waiting for the end of the stream");
            }
            continue;
        }
        return fail(w, "receive");
    }
}

void client_loop_udp_rr(struct worker *w, uint8_t *buf)
{
    const struct sample *s = w->smp;
    size_t len = s->req.msg_size;
    uint64_t seq = 0;

    /* a lost datagram counts as lost after this, and the next request goes out */
    if (set_timeout(w->fd, SO_RCVTIMEO, UDP_RR_TIMEOUT_MS) != 0)
        return fail(w, "setsockopt SO_RCVTIMEO");
    memset(buf, 0, len);
    for (;;) {
        uint64_t t1 = sysinfo_now_ns(), id, rseq, ts;
        if (t1 >= s->t_deadline_ns)
            break;
        proto_udp_put(buf, s->session, seq, t1);
        if (send(w->fd, buf, len, 0) < 0) {
            if (errno == ECONNREFUSED || errno == ENOBUFS || errno == EINTR)
                continue;
            return fail(w, "send");
        }
        w->udp_sent++;
        for (;;) {
            ssize_t n = recv(w->fd, buf, len, 0);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                break; /* timeout or ICMP error: this one is lost */
            if ((size_t)n < PROTO_MIN_UDP_SIZE)
                continue;
            proto_udp_get(buf, &id, &rseq, &ts);
            if (id != s->session || rseq != seq)
                continue; /* a late answer to an earlier request */
            w->udp_received++;
            if (t1 >= s->t_mark_ns)
                hist_record(w->hist, sysinfo_now_ns() - t1);
            atomic_store_explicit(&w->ops, atomic_load_explicit(&w->ops, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            break;
        }
        seq++;
    }
}

/* Paced UDP sender: datagram i is due at start + i * (size * 8 / rate). The thread sleeps
 * until a little after the next due time and then sends everything due with one sendmmsg. */
void client_loop_udp_send(struct worker *w, uint8_t *buf)
{
    const struct sample *s = w->smp;
    size_t len = s->req.msg_size;
    double ns_per_dgram = (double)len * 8.0 * 1e9 / (double)s->req.rate_bps;
    uint64_t start = sysinfo_now_ns();
    size_t kmax = RX_BUF_LEN / len;
    struct mmsghdr msgs[UDP_BATCH];
    struct iovec iov[UDP_BATCH];

    if (kmax > UDP_BATCH)
        kmax = UDP_BATCH;
    memset(msgs, 0, sizeof(msgs));
    for (size_t i = 0; i < kmax; i++) {
        iov[i].iov_base = buf + i * len;
        iov[i].iov_len = len;
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
    }
    /* Sleeps end within ~1 us of the due time instead of the default 50 us slack. Best effort
     * by design: with the default slack the pacing stays exact on average (each wake-up sends
     * everything that fell due), only the bursts get a little larger. */
    if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) != 0)
        kp_log(KP_LOG_DEBUG, "UDP_STREAM: prctl PR_SET_TIMERSLACK: %s; default timer slack",
               strerror(errno));
    for (;;) {
        uint64_t now = sysinfo_now_ns();
        uint64_t due = start + (uint64_t)((double)w->udp_sent * ns_per_dgram);
        size_t k;
        int n;
        if (now >= s->t_deadline_ns)
            break;
        if (due > now) {
            /* wake at most every PACE_GRANULE_NS: bursts of a few datagrams at high rates */
            uint64_t wake =
                due +
                (ns_per_dgram < PACE_GRANULE_NS ? PACE_GRANULE_NS - (uint64_t)ns_per_dgram : 0);
            struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000ull),
                                  .tv_nsec = (long)(wake % 1000000000ull)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
            continue;
        }
        k = (size_t)((double)(now - due) / ns_per_dgram) + 1;
        if (k > kmax)
            k = kmax;
        for (size_t i = 0; i < k; i++)
            proto_udp_put(buf + i * len, s->session, w->udp_sent + i, now);
        n = sendmmsg(w->fd, msgs, (unsigned)k, 0);
        if (n < 0) {
            if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED)
                continue;
            return fail(w, "send");
        }
        w->udp_sent += (uint64_t)n;
        atomic_fetch_add_explicit(&w->bytes, (uint64_t)n * len, memory_order_relaxed);
    }
}

/* Reverse UDP_STREAM: a UDP hello every PROTO_UDP_KEEPALIVE_MS tells the server that we still
 * receive (it stops after PROTO_UDP_SILENT_MS without one). Best effort: a lost one is what the
 * server's margin is for. */
static void udp_keepalive(struct worker *w, uint64_t now, uint64_t *next_ns)
{
    uint8_t hello[PROTO_MIN_UDP_SIZE];

    if (now < *next_ns)
        return;
    *next_ns = now + PROTO_UDP_KEEPALIVE_MS * 1000000ull;
    proto_udp_put(hello, w->smp->session, PROTO_UDP_HELLO_SEQ, 0);
    if (send(w->fd, hello, sizeof(hello), MSG_DONTWAIT) < 0)
        kp_log(KP_LOG_DEBUG, "UDP_STREAM keep-alive: send: %s", strerror(errno));
}

void client_loop_udp_recv(struct worker *w, uint8_t *buf)
{
    struct sample *s = w->smp;
    uint64_t next_keepalive_ns = 0;

    if (set_timeout(w->fd, SO_RCVTIMEO, 50) != 0)
        return fail(w, "setsockopt SO_RCVTIMEO");
    for (;;) {
        uint64_t id, seq, ts, now = sysinfo_now_ns();
        int64_t transit;
        ssize_t n;
        /* until the server's RESULT says we have everything, or its grace ends */
        if (w->udp_received >= atomic_load(&s->udp_expect) ||
            now > atomic_load(&s->udp_grace_end_ns) || now > s->t_deadline_ns + EOF_WAIT_NS)
            break;
        udp_keepalive(w, now, &next_keepalive_ns);
        n = recv(w->fd, buf, RX_BUF_LEN, 0);
        if (n < (ssize_t)PROTO_MIN_UDP_SIZE)
            continue;
        proto_udp_get(buf, &id, &seq, &ts);
        if (id != s->session || seq == PROTO_UDP_HELLO_SEQ)
            continue;
        w->last_rx_ns = sysinfo_now_ns();
        transit = (int64_t)(w->last_rx_ns - ts);
        w->udp_received++;
        atomic_fetch_add_explicit(&w->bytes, (uint64_t)n, memory_order_relaxed);
        if (seq >= w->udp_max_seq_plus1)
            w->udp_max_seq_plus1 = seq + 1;
        else
            w->udp_ooo++;
        if (w->have_transit) {
            int64_t d = transit - w->last_transit;
            w->jitter_ns += ((double)(d < 0 ? -d : d) - w->jitter_ns) / 16.0;
        }
        w->last_transit = transit;
        w->have_transit = 1;
    }
}

void *client_worker_main(void *arg)
{
    struct worker *w = arg;
    const struct sample *s = w->smp;
    size_t len = s->req.msg_size + PROTO_HEADER_LEN + 64;
    uint8_t *buf = kp_xcalloc(1, len > RX_BUF_LEN ? len : RX_BUF_LEN); /* ours */

    void (*loop)(struct worker *, uint8_t *) = s->reverse && s->ops->client_loop_reverse
                                                   ? s->ops->client_loop_reverse
                                                   : s->ops->client_loop;

    if (loop)
        loop(w, buf);
    w->cpu_ns = thread_cpu_self_ns();
    free(buf);
    return NULL;
}
