/* SPDX-License-Identifier: Apache-2.0 */
/* streampool.c - see streampool.h. Each thread waits in epoll_wait (level-triggered) with no
 * timeout: its eventfd wakes it for a stop request or the pool's end. A wake-up serves its ready
 * streams in rounds, one call per stream per round, repeating the round on the streams whose
 * call was whole until it has made POOL_CALLS_PER_WAKE calls (docs/benchmark.md, "Rounds per
 * wake-up"). The thread's CPU time is shared out among its streams by their calls, about once a
 * millisecond and before a stream ends (reading the thread's CPU clock is a system call). A stream
 * ends on the pool thread only (EOF, error, or a stop it sees), under the pool's lock, which is
 * what streampool_stop waits on; after that the thread never touches the stream again (epoll
 * returns a descriptor at most once per wait, and it was removed from the set first). */
#include "agent/streampool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/streamer.h"
#include "agent/sysinfo.h"
#include "agent/thread_cpu.h"
#include "base/kp_alloc.h"

#define POOL_STACK          (256 * 1024)
#define POOL_EVENTS         64
#define POOL_CALLS_PER_WAKE 32      /* one round when 32 streams are ready */
#define POOL_SHARE_EVERY_NS 1000000 /* CPU time shared out this often (and at a stream's end) */

struct pool_thread {
    struct streampool *pool;
    pthread_t thread;
    int ep, wake; /* -1 when not made */
    int running;
    uint8_t *buf;                   /* STREAMER_BUF: what sinks read into; ours */
    uint64_t shared_cpu_ns;         /* the thread's CPU clock at the last share-out */
    uint64_t shared_at_ns;          /* and the monotonic clock then */
    uint64_t calls;                 /* calls since the last share-out */
    unsigned nstreams;              /* under pool->mu */
    struct streampool_one *streams; /* under pool->mu */
};

struct streampool {
    unsigned n;
    atomic_int quit;
    pthread_mutex_t mu;
    pthread_cond_t ended; /* a stream ended */
    struct pool_thread th[STREAMPOOL_MAX_THREADS];
};

struct streampool_one {
    struct pool_thread *th;
    struct streamer_params p;
    int flags; /* the descriptor's file status flags before the hand-off */
    atomic_int stop, ended, cpu;
    _Atomic uint64_t cpu_ns, cpu_mark_ns;
    uint64_t end_ns; /* set before ended */
    uint64_t calls;  /* since the thread's last share-out; the pool thread's */
    int eof, err_no;
    struct streampool_one *next, *prev; /* th->streams, under pool->mu */
};

static void wake(struct pool_thread *th)
{
    uint64_t one = 1;
    /* best effort: a full counter (2^64 - 2 wake-ups) already wakes the thread */
    (void)!write(th->wake, &one, sizeof(one));
}

/* The thread's CPU time since the last share-out goes to its streams by their calls. */
static void share_out(struct pool_thread *th)
{
    uint64_t now = thread_cpu_self_ns();
    double spent = now > th->shared_cpu_ns ? (double)(now - th->shared_cpu_ns) : 0;

    th->shared_cpu_ns = now;
    th->shared_at_ns = sysinfo_now_ns();
    if (th->calls == 0)
        return;
    pthread_mutex_lock(&th->pool->mu);
    for (struct streampool_one *s = th->streams; s; s = s->next) {
        if (s->calls == 0)
            continue;
        atomic_fetch_add_explicit(&s->cpu_ns,
                                  (uint64_t)(spent * (double)s->calls / (double)th->calls),
                                  memory_order_relaxed);
        s->calls = 0;
    }
    pthread_mutex_unlock(&th->pool->mu);
    th->calls = 0;
}

/* The pool thread lets go of s: its CPU share, out of the set and list, figures final, then
 * on_end. */
static void end_stream(struct streampool_one *s)
{
    struct streampool *pool = s->th->pool;
    streamer_end_fn *fn = s->p.on_end;
    void *arg = s->p.arg;

    share_out(s->th);
    /* a descriptor the set no longer has (never the case here) changes nothing */
    (void)epoll_ctl(s->th->ep, EPOLL_CTL_DEL, s->p.fd, NULL);
    pthread_mutex_lock(&pool->mu);
    if (s->prev)
        s->prev->next = s->next;
    else
        s->th->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->th->nstreams--;
    s->end_ns = sysinfo_now_ns();
    atomic_store_explicit(&s->ended, 1, memory_order_release);
    pthread_cond_broadcast(&pool->ended);
    pthread_mutex_unlock(&pool->mu);
    if (fn) /* s may be gone now: fn and arg were copied */
        fn(arg);
}

/* One receive on a ready stream; STREAMER_ENDED sets eof or err_no. */
static enum streamer_call sink_once(struct streampool_one *s, uint8_t *buf)
{
    ssize_t n = recv(s->p.fd, buf, STREAMER_BUF, MSG_DONTWAIT);

    if (n > 0) {
        atomic_fetch_add_explicit(s->p.bytes, (uint64_t)n, memory_order_relaxed);
        return n == STREAMER_BUF ? STREAMER_WHOLE : STREAMER_SHORT;
    }
    if (n == 0) {
        s->eof = !atomic_load(&s->stop);
        return STREAMER_ENDED;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return STREAMER_SHORT;
    s->err_no = errno;
    return STREAMER_ENDED;
}

/* One call on a ready stream; STREAMER_ENDED also when it was asked to stop. */
static enum streamer_call serve(struct streampool_one *s, uint8_t *buf)
{
    if (atomic_load_explicit(&s->stop, memory_order_relaxed))
        return STREAMER_ENDED;
    return s->p.mode == STREAMER_SINK ? sink_once(s, buf)
                                      : streamer_send_block(&s->p, MSG_DONTWAIT, &s->err_no);
}

/* Serves one wake-up's ready streams in rounds over those still whole (ready is compacted to
 * them); streams that end are ended after the rounds. */
static void serve_all(struct epoll_event *evs, int n, struct pool_thread *th, int *woken)
{
    struct streampool_one *ready[POOL_EVENTS], *ended[POOL_EVENTS];
    unsigned nready = 0, nended = 0;
    int cpu = thread_cpu_id();

    for (int i = 0; i < n; i++) {
        if (evs[i].data.ptr == th) {
            uint64_t v;
            *woken = 1;
            (void)!read(th->wake, &v, sizeof(v)); /* non-blocking; 0 is fine too */
            continue;
        }
        ready[nready++] = evs[i].data.ptr;
    }
    for (unsigned calls = 0; nready > 0 && calls < POOL_CALLS_PER_WAKE;) {
        unsigned whole = 0;
        for (unsigned i = 0; i < nready; i++) {
            struct streampool_one *s = ready[i];
            enum streamer_call rc = serve(s, th->buf);
            s->calls++;
            atomic_store_explicit(&s->cpu, cpu, memory_order_relaxed);
            if (rc == STREAMER_WHOLE)
                ready[whole++] = s;
            else if (rc == STREAMER_ENDED)
                ended[nended++] = s;
        }
        calls += nready;
        th->calls += nready;
        nready = whole;
    }
    for (unsigned i = 0; i < nended; i++)
        end_stream(ended[i]); /* each shares out first */
    if (sysinfo_now_ns() - th->shared_at_ns >= POOL_SHARE_EVERY_NS)
        share_out(th);
}

/* After a wake-up: every stream asked to stop ends (a source whose peer does not read is
 * never ready, so only this finds it). */
static void end_stopped(struct pool_thread *th)
{
    struct streampool_one *s;

    for (;;) {
        pthread_mutex_lock(&th->pool->mu);
        for (s = th->streams; s; s = s->next)
            if (atomic_load(&s->stop))
                break;
        pthread_mutex_unlock(&th->pool->mu);
        if (!s) /* only this thread removes streams from its list: s stays valid */
            return;
        end_stream(s);
    }
}

static void *pool_main(void *arg)
{
    struct pool_thread *th = arg;
    struct epoll_event evs[POOL_EVENTS];

    th->shared_cpu_ns = thread_cpu_self_ns();
    th->shared_at_ns = sysinfo_now_ns();
    while (!atomic_load(&th->pool->quit)) {
        int woken = 0;
        int n = epoll_wait(th->ep, evs, POOL_EVENTS, -1);
        serve_all(evs, n, th, &woken);
        if (woken)
            end_stopped(th);
    }
    return NULL;
}

static int thread_init(struct streampool *pool, struct pool_thread *th, struct kp_err *err)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = th};
    pthread_attr_t attr;
    int rc;

    th->pool = pool;
    th->ep = epoll_create1(EPOLL_CLOEXEC);
    th->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (th->ep < 0 || th->wake < 0)
        return kp_err_set(err, "stream pool: epoll/eventfd: %s", strerror(errno));
    if (epoll_ctl(th->ep, EPOLL_CTL_ADD, th->wake, &ev) != 0)
        return kp_err_set(err, "stream pool: epoll_ctl: %s", strerror(errno));
    th->buf = kp_xmalloc(STREAMER_BUF);
    rc = pthread_attr_init(&attr);
    if (rc == 0) {
        rc = pthread_attr_setstacksize(&attr, POOL_STACK);
        if (rc == 0)
            rc = pthread_create(&th->thread, &attr, pool_main, th);
        pthread_attr_destroy(&attr);
    }
    if (rc != 0)
        return kp_err_set(err, "stream pool: pthread_create: %s", strerror(rc));
    th->running = 1;
    return 0;
}

int streampool_new(unsigned n, struct streampool **out, struct kp_err *err)
{
    struct streampool *pool;

    *out = NULL;
    if (n == 0 || n > STREAMPOOL_MAX_THREADS)
        return kp_err_set(err, "stream pool: %u threads (1..%u)", n, STREAMPOOL_MAX_THREADS);
    pool = kp_xcalloc(1, sizeof(*pool));
    pool->n = n;
    atomic_init(&pool->quit, 0);
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->ended, NULL);
    for (unsigned i = 0; i < STREAMPOOL_MAX_THREADS; i++)
        pool->th[i].ep = pool->th[i].wake = -1;
    for (unsigned i = 0; i < n; i++)
        if (thread_init(pool, &pool->th[i], err) != 0) {
            streampool_free(pool);
            return -1;
        }
    *out = pool;
    return 0;
}

void streampool_free(struct streampool *pool)
{
    if (!pool)
        return;
    atomic_store(&pool->quit, 1);
    for (unsigned i = 0; i < pool->n; i++) {
        struct pool_thread *th = &pool->th[i];
        if (th->running) {
            wake(th);
            pthread_join(th->thread, NULL);
        }
        if (th->ep >= 0)
            close(th->ep);
        if (th->wake >= 0)
            close(th->wake);
        free(th->buf);
    }
    pthread_cond_destroy(&pool->ended);
    pthread_mutex_destroy(&pool->mu);
    free(pool);
}

int streampool_add(struct streampool *pool, const struct streamer_params *p,
                   struct streampool_one **out, struct kp_err *err)
{
    struct epoll_event ev = {.events = p->mode == STREAMER_SINK ? EPOLLIN : EPOLLOUT};
    struct pool_thread *th = &pool->th[0];
    struct streampool_one *s;
    int flags;

    *out = NULL;
    if (p->mode == STREAMER_SOURCE && (!p->block || p->block_len == 0))
        return kp_err_set(err, "stream pool: a source needs a block to send");
    flags = fcntl(p->fd, F_GETFL);
    if (flags < 0)
        return kp_err_set(err, "fcntl F_GETFL: %s", strerror(errno));
    if (fcntl(p->fd, F_SETFL, flags | O_NONBLOCK) != 0)
        return kp_err_set(err, "fcntl setting O_NONBLOCK: %s", strerror(errno));
    s = kp_xcalloc(1, sizeof(*s));
    s->p = *p;
    s->flags = flags;
    atomic_init(&s->stop, 0);
    atomic_init(&s->ended, 0);
    atomic_init(&s->cpu, -1);
    atomic_init(&s->cpu_ns, 0);
    atomic_init(&s->cpu_mark_ns, 0);
    pthread_mutex_lock(&pool->mu);
    for (unsigned i = 1; i < pool->n; i++)
        if (pool->th[i].nstreams < th->nstreams)
            th = &pool->th[i];
    s->th = th;
    s->next = th->streams;
    if (th->streams)
        th->streams->prev = s;
    th->streams = s;
    th->nstreams++;
    pthread_mutex_unlock(&pool->mu);
    ev.data.ptr = s;
    if (epoll_ctl(th->ep, EPOLL_CTL_ADD, p->fd, &ev) == 0) {
        *out = s;
        return 0;
    }
    kp_err_set(err, "stream pool: epoll_ctl: %s", strerror(errno));
    pthread_mutex_lock(&pool->mu);
    if (s->prev)
        s->prev->next = s->next;
    else
        th->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    th->nstreams--;
    pthread_mutex_unlock(&pool->mu);
    free(s);
    if (fcntl(p->fd, F_SETFL, flags) != 0)
        kp_err_set(err, "stream pool: epoll_ctl failed; then fcntl restoring flags: %s",
                   strerror(errno));
    return -1;
}

int streampool_ended(const struct streampool_one *s)
{
    return atomic_load_explicit(&s->ended, memory_order_acquire);
}

void streampool_mark(struct streampool_one *s)
{
    atomic_store(&s->cpu_mark_ns, atomic_load(&s->cpu_ns));
}

void streampool_request_stop(struct streampool_one *s)
{
    if (!s || atomic_exchange(&s->stop, 1))
        return;
    if (s->p.mode == STREAMER_SINK)
        shutdown(s->p.fd, SHUT_RD); /* its recv returns 0 at once */
    wake(s->th);
}

void streampool_stop(struct streampool_one *s, struct streamer_stats *st)
{
    struct streampool *pool;

    if (!s)
        return;
    pool = s->th->pool;
    streampool_request_stop(s);
    pthread_mutex_lock(&pool->mu);
    while (!atomic_load(&s->ended))
        pthread_cond_wait(&pool->ended, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
    /* best effort, as in streamer_stop */
    (void)fcntl(s->p.fd, F_SETFL, s->flags);
    if (st) {
        st->cpu_ns = atomic_load(&s->cpu_ns);
        st->cpu_mark_ns = atomic_load(&s->cpu_mark_ns);
        st->cpu = atomic_load(&s->cpu);
        st->eof = s->eof;
        st->end_ns = s->end_ns;
        st->err_no = s->err_no;
    }
    free(s);
}
