/* SPDX-License-Identifier: Apache-2.0 */
/* client_mux.c - the multiplexed stream engine of the client (client_int.h): the streams of a
 * TCP stream test over s->nthreads threads, each an epoll loop over its non-blocking sockets
 * (level-triggered). A wake-up serves its ready sockets in rounds, one call per socket per round
 * (as iperf3 does), and repeats the round on the sockets whose call was whole until it has made
 * MUX_CALLS_PER_WAKE calls (docs/benchmark.md, "One call per ready socket" and "Rounds per
 * wake-up"). Thread t serves the streams t, t + T, t + 2T, ... Same semantics as the per-stream
 * loops of client_loops.c: a sender stops at the deadline, reads TCP_INFO and shuts down its write
 * side; a receiver counts until the server's FIN (a reset after the deadline is an end too) and
 * fails EOF_WAIT_NS after the deadline. */
#include "agent/client_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/thread_cpu.h"
#include "base/kp_alloc.h"

#define MUX_RX_BUF         (256 * 1024)
#define MUX_WAKE_MS        100                  /* epoll_wait timeout: the deadline is looked at */
#define MUX_EVENTS         64                   /* events per epoll_wait */
#define MUX_CALLS_PER_WAKE 32                   /* calls per wake-up: one round when 32 are ready */
#define MUX_EOF_WAIT       (10000ull * 1000000) /* reverse: wait for the server's FIN (ns) */

static void mux_fail(struct worker *w, const char *what, int e)
{
    snprintf(w->err, sizeof(w->err), "%s %s (stream %u): %s", proto_test_name(w->smp->req.test),
             what, w->index, strerror(e));
}

/* Puts the thread's streams into ep, non-blocking. 0, or -1 with the failing worker's err. */
static int mux_add(const struct worker *owner, int ep, uint32_t events)
{
    const struct sample *s = owner->smp;

    for (unsigned i = owner->index; i < s->nworkers; i += s->nthreads) {
        struct worker *w = &s->workers[i];
        struct epoll_event ev = {.events = events, .data.ptr = w};
        int flags = fcntl(w->fd, F_GETFL);
        if (flags < 0 || fcntl(w->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
            mux_fail(w, "fcntl setting O_NONBLOCK", errno);
            return -1;
        }
        if (epoll_ctl(ep, EPOLL_CTL_ADD, w->fd, &ev) != 0) {
            mux_fail(w, "epoll_ctl", errno);
            return -1;
        }
    }
    return 0;
}

static int mux_wait_ms(uint64_t now, uint64_t until)
{
    uint64_t ms = until > now ? (until - now) / 1000000 + 1 : 0;
    return ms < MUX_WAKE_MS ? (int)ms : MUX_WAKE_MS;
}

/* What one call on a ready socket did. */
enum mux_call {
    MUX_FAILED = -1, /* err set */
    MUX_ENDED,       /* receive: the stream's end */
    MUX_WHOLE,       /* the whole write or read buffer: the socket may take (or have) more */
    MUX_SHORT,       /* less, or EAGAIN: not again this wake-up */
};

static enum mux_call send_some(struct worker *w, const struct iovec *iov)
{
    ssize_t n = writev(w->fd, iov, 1);

    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return MUX_SHORT;
    if (n < 0) {
        mux_fail(w, "send", errno);
        return MUX_FAILED;
    }
    atomic_fetch_add_explicit(&w->bytes, (uint64_t)n, memory_order_relaxed);
    return (size_t)n == iov->iov_len ? MUX_WHOLE : MUX_SHORT;
}

static void mux_send(struct worker *owner, int ep, uint8_t *buf)
{
    struct sample *s = owner->smp;
    struct iovec iov = {.iov_base = buf, .iov_len = s->req.msg_size};
    struct epoll_event evs[MUX_EVENTS];
    int cpu;

    if (mux_add(owner, ep, EPOLLOUT) != 0)
        return;
    for (;;) {
        uint64_t now = sysinfo_now_ns(), deadline = atomic_load(&s->t_deadline_ns);
        int n;
        if (now >= deadline)
            break;
        n = epoll_wait(ep, evs, MUX_EVENTS, mux_wait_ms(now, deadline));
        if (n < 0 && errno != EINTR) {
            mux_fail(owner, "epoll_wait", errno);
            return;
        }
        /* rounds over the sockets still whole; evs is compacted to them */
        for (int calls = 0; n > 0 && calls < MUX_CALLS_PER_WAKE;) {
            int whole = 0;
            for (int i = 0; i < n; i++) {
                enum mux_call rc = send_some(evs[i].data.ptr, &iov);
                if (rc == MUX_FAILED)
                    return;
                if (rc == MUX_WHOLE)
                    evs[whole++] = evs[i];
            }
            calls += n;
            n = whole;
        }
    }
    cpu = thread_cpu_id();
    for (unsigned i = owner->index; i < s->nworkers; i += s->nthreads) {
        struct worker *w = &s->workers[i];
        atomic_store_explicit(&w->cpu, cpu, memory_order_relaxed);
        if (sysinfo_tcp_info(w->fd, &w->tcp) != 0) {
            mux_fail(w, "getsockopt TCP_INFO", errno);
            return;
        }
        shutdown(w->fd, SHUT_WR);
    }
}

/* One receive on a ready socket; its end is a FIN, or a reset after the deadline. */
static enum mux_call recv_some(struct worker *w, uint8_t *buf)
{
    const struct sample *s = w->smp;
    ssize_t n = recv(w->fd, buf, MUX_RX_BUF, 0);

    if (n > 0) {
        atomic_fetch_add_explicit(&w->bytes, (uint64_t)n, memory_order_relaxed);
        w->last_rx_ns = sysinfo_now_ns();
        return n == MUX_RX_BUF ? MUX_WHOLE : MUX_SHORT;
    }
    if (n == 0 || (errno == ECONNRESET && s->t_deadline_ns <= sysinfo_now_ns()))
        return MUX_ENDED;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return MUX_SHORT;
    mux_fail(w, "receive", errno);
    return MUX_FAILED;
}

static void mux_recv(struct worker *owner, int ep, uint8_t *buf)
{
    struct sample *s = owner->smp;
    struct epoll_event evs[MUX_EVENTS];
    unsigned open = 0;

    if (mux_add(owner, ep, EPOLLIN) != 0)
        return;
    for (unsigned i = owner->index; i < s->nworkers; i += s->nthreads)
        open++;
    while (open > 0) {
        uint64_t now = sysinfo_now_ns(), limit = atomic_load(&s->t_deadline_ns) + MUX_EOF_WAIT;
        int cpu, n;
        if (now > limit) {
            for (unsigned i = owner->index; i < s->nworkers; i += s->nthreads)
                mux_fail(&s->workers[i], "waiting for the end of the stream", ETIMEDOUT);
            return;
        }
        n = epoll_wait(ep, evs, MUX_EVENTS, MUX_WAKE_MS);
        if (n < 0 && errno != EINTR) {
            mux_fail(owner, "epoll_wait", errno);
            return;
        }
        cpu = thread_cpu_id();
        /* rounds over the sockets still whole, as in mux_send */
        for (int calls = 0; n > 0 && calls < MUX_CALLS_PER_WAKE;) {
            int whole = 0;
            for (int i = 0; i < n; i++) {
                struct worker *w = evs[i].data.ptr;
                enum mux_call rc = recv_some(w, buf);
                atomic_store_explicit(&w->cpu, cpu, memory_order_relaxed);
                if (rc == MUX_FAILED)
                    return;
                if (rc == MUX_WHOLE)
                    evs[whole++] = evs[i];
                if (rc != MUX_ENDED)
                    continue;
                /* out of the set (a closed peer stays readable) */
                if (epoll_ctl(ep, EPOLL_CTL_DEL, w->fd, NULL) != 0) {
                    mux_fail(w, "epoll_ctl", errno);
                    return;
                }
                open--;
            }
            calls += n;
            n = whole;
        }
    }
}

void *client_mux_main(void *arg)
{
    struct worker *owner = arg;
    struct sample *s = owner->smp;
    uint8_t *buf = kp_xcalloc(1, s->req.msg_size > MUX_RX_BUF ? s->req.msg_size : MUX_RX_BUF);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    uint64_t ns;

    if (ep < 0)
        mux_fail(owner, "epoll_create1", errno);
    else if (s->reverse)
        mux_recv(owner, ep, buf);
    else
        mux_send(owner, ep, buf);
    if (ep >= 0)
        close(ep);
    ns = thread_cpu_self_ns();
    /* every stream of this thread: the thread's total (client_json.c divides by the share) */
    for (unsigned i = owner->index; i < s->nworkers; i += s->nthreads)
        s->workers[i].cpu_ns = ns;
    free(buf);
    return NULL;
}
