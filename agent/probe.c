/* SPDX-License-Identifier: Apache-2.0 */
/* probe.c - see probe.h. One thread per kind; the calling thread keeps time and stops them. */
#include "agent/probe.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/probe_sess.h"
#include "agent/probe_track.h"
#include "agent/proto.h"
#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/testkind.h"

#define MS            1000000ull
#define TCP_MSG       16 /* seq, send time: echoed back */
#define UDP_MSG       PROTO_MIN_UDP_SIZE
#define CONNECT_SLOTS 64
#define RETRY_MS      100 /* between attempts to re-open a session */
/* The UDP session is renewed this often (make before break), so that its control connection
 * is never idle long enough for the server's TCP keepalive: after a conntrack flush on the
 * path (a CNI restart) the first packet of an idle connection decides its NAT state, and a
 * keepalive from the server, not translated back to the Service address, is answered with a
 * reset by the client's node or pod; the server then drops the session and every later
 * datagram goes unanswered, though the path works (docs/watch.md). */
#define UDP_REFRESH_NS (PROTO_CTRL_KEEPIDLE_S * 1000 * MS / 2)
/* A loss run this long may be a dead session rather than the network: renew even then. */
#define STUCK_NS (2000 * MS)

void probe_opts_default(struct probe_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->port = TESTKIND_DEFAULT_PORT;
    o->rate = 100;
    o->connect_every_ms = 100;
    o->timeout_ms = 200;
    o->interval_ms = 100;
    o->session_ms = 10 * 60 * 1000;
    o->connect_timeout_ms = 1000;
    o->udp = o->tcp = o->connect = true;
}

enum kind { K_UDP, K_TCP, K_CONNECT, K_COUNT };
static const char *const kind_name[K_COUNT] = {"udp", "tcp", "connect"};

struct prober {
    const struct probe_opts *o;
    struct probe_target target;
    enum kind kind;
    pthread_t thread;
    bool started;
    struct probe_track *trk; /* ours */
    uint64_t period_ns;
    _Atomic uint64_t stop_at; /* 0 = run; else stop sending at this time */
    /* sessions (udp, tcp) */
    struct probe_sess sess;
    uint64_t sessions, renewals, resets, reconnect_ns_total, reconnect_ns_max;
    bool first_survived;     /* the first connection lasted the whole run */
    uint64_t renew_retry_ns; /* a failed renewal is tried again from here */
    char last_error[256];
    /* published for the status line (written by the thread, read by the caller's) */
    _Atomic uint64_t pub_sent, pub_lost, pub_outages, pub_last_outage_ns;
    _Atomic bool pub_down;
};

/* Decides what is due and publishes the counters for the status line. */
static void expire(struct prober *p, uint64_t now)
{
    probe_track_expire(p->trk, now);
    atomic_store(&p->pub_sent, p->trk->sent);
    atomic_store(&p->pub_lost, p->trk->lost);
    atomic_store(&p->pub_outages, p->trk->outages_total);
    atomic_store(&p->pub_last_outage_ns, p->trk->last_outage_ns);
    atomic_store(&p->pub_down, probe_track_down(p->trk));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static uint32_t session_duration(const struct prober *p)
{
    uint64_t ms = p->o->session_ms;

    if (p->o->duration_ms && p->o->duration_ms + 5000 < ms)
        ms = p->o->duration_ms + 5000;
    return (uint32_t)ms;
}

static int sess_open(struct prober *p, struct kp_err *err)
{
    uint8_t test = p->kind == K_UDP ? PROTO_UDP_RR : PROTO_TCP_RR;

    if (probe_sess_open(&p->target, test, p->kind == K_UDP ? UDP_MSG : TCP_MSG, session_duration(p),
                        &p->sess, err) != 0)
        return -1;
    p->sessions++;
    return 0;
}

/* Slots due at or before now that cannot be sent (no session): lost. */
static void miss_until(struct prober *p, uint64_t *next, uint64_t now)
{
    while (*next <= now) {
        probe_track_missed(p->trk, *next);
        *next += p->period_ns;
    }
}

/* Slots more than half the outage interval before now fell due while this thread was not
 * running (the machine stalled it): skipped, not lost, and not sent late in a burst. Those due
 * since are sent at once (a wake-up is late by a millisecond or two at any rate). */
static void skip_late(struct prober *p, uint64_t *next, uint64_t now)
{
    uint64_t late = p->o->interval_ms * MS / 2;

    while (*next + late < now) {
        probe_track_skipped(p->trk);
        *next += p->period_ns;
    }
}

/* A non-blocking recv with the time the kernel received the data (SO_TIMESTAMPNS, on
 * CLOCK_REALTIME) on clock_now_ns()'s clock, so that an answer that came in time counts in
 * time even when this thread reads it late. Without a timestamp: the time of the read. */
static ssize_t recv_stamped(int fd, void *buf, size_t len, uint64_t *at_ns)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } cb;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb.buf, .msg_controllen = sizeof(cb.buf)};
    ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
    struct timespec real;
    uint64_t mono;

    /* the wall clock first: a delay between the two readings makes the time later, never
     * earlier than the send */
    clock_gettime(CLOCK_REALTIME, &real);
    mono = clock_now_ns();
    *at_ns = mono;
    if (n < 0)
        return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec rx;
            uint64_t rx_ns, real_ns;
            memcpy(&rx, CMSG_DATA(c), sizeof(rx));
            rx_ns = clock_ts_to_ns(&rx);
            real_ns = clock_ts_to_ns(&real);
            if (rx_ns <= real_ns && real_ns - rx_ns < mono)
                *at_ns = mono - (real_ns - rx_ns);
        }
    }
    return n;
}

static void stamp_receives(int fd)
{
    int one = 1;

    (void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)); /* best effort */
}

static bool stopping(struct prober *p, uint64_t now)
{
    uint64_t at = atomic_load(&p->stop_at);
    return at && now >= at;
}

/* The session was lost at t_lost: re-open it, counting missed slots, until it works or the
 * run stops. */
static void reopen(struct prober *p, uint64_t *next, uint64_t t_lost)
{
    struct kp_err err;

    probe_sess_close(&p->sess, 0);
    for (;;) {
        uint64_t now = clock_now_ns();
        miss_until(p, next, now);
        expire(p, now);
        if (stopping(p, now))
            return;
        kp_err_clear(&err);
        if (sess_open(p, &err) == 0)
            break;
        snprintf(p->last_error, sizeof(p->last_error), "%s", kp_err_msg(&err));
        clock_sleep_ms(RETRY_MS);
    }
    uint64_t took = clock_now_ns() - t_lost;
    p->reconnect_ns_total += took;
    if (took > p->reconnect_ns_max)
        p->reconnect_ns_max = took;
}

static void lost_session(struct prober *p, uint64_t *next, const char *why)
{
    snprintf(p->last_error, sizeof(p->last_error), "%s", why);
    p->resets++;
    p->first_survived = false;
    reopen(p, next, clock_now_ns());
}

static bool renew_due(const struct prober *p, uint64_t now)
{
    uint64_t life = (uint64_t)p->sess.duration_ms * MS, age = now - p->sess.opened_ns;
    const struct probe_track *t = p->trk;

    if (p->sess.ctrl < 0 || now < p->renew_retry_ns)
        return false;
    if (age + 2000 * MS >= life)
        return true;
    /* UDP: renewed before the server's keepalive, not while the path is down (the new session
     * could not open: a wait for nothing), unless the loss run lasts long enough to be a
     * session the server dropped */
    return p->kind == K_UDP && age >= UDP_REFRESH_NS &&
           (!t->in_run || now - t->run_start_ns >= STUCK_NS);
}

/* The session nears the server's deadline: make before break. The new session is opened
 * while the old one still answers, then the old one is stopped; answers are matched by our
 * sequence numbers, so they may come on either. When the new one cannot be opened, the old
 * one is kept and the renewal tried again a second later (at its deadline it ends: a reset). */
static void renew(struct prober *p)
{
    struct probe_sess old = p->sess;
    struct probe_target full = p->target;
    struct kp_err err;
    int rc;

    /* the probes wait meanwhile: a healthy path opens a session within the probe timeout */
    p->target.timeout_ms = p->o->timeout_ms;
    kp_err_clear(&err);
    rc = sess_open(p, &err);
    p->target = full;
    if (rc != 0) {
        snprintf(p->last_error, sizeof(p->last_error), "renewing the session: %s",
                 kp_err_msg(&err));
        p->sess = old;
        p->renew_retry_ns = clock_now_ns() + 1000 * MS;
        return;
    }
    probe_sess_close(&old, 200);
    p->renewals++;
}

/* Anything on the control connection during a test (REFUSE at a deadline, EOF, reset) means
 * the session is over. */
static bool ctrl_lost(short revents)
{
    return revents & (POLLIN | POLLHUP | POLLERR);
}

/* ---- udp ---- */

static void udp_drain(struct prober *p, int fd)
{
    uint8_t buf[2048];
    uint64_t at;
    ssize_t n;

    while ((n = recv_stamped(fd, buf, sizeof(buf), &at)) >= 0) {
        uint64_t session, seq, ts;
        if (n < (ssize_t)UDP_MSG)
            continue;
        proto_udp_get(buf, &session, &seq, &ts);
        probe_track_answer(p->trk, seq, at);
    }
}

static void run_udp(struct prober *p)
{
    int fd = socket(p->target.addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    uint64_t next = clock_now_ns();

    if (fd < 0 || connect(fd, (const struct sockaddr *)&p->target.addr, p->target.addr_len) != 0) {
        snprintf(p->last_error, sizeof(p->last_error), "UDP socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    stamp_receives(fd);
    for (;;) {
        uint64_t now = clock_now_ns(), wait;
        struct pollfd pf[2] = {{.fd = fd, .events = POLLIN},
                               {.fd = p->sess.ctrl, .events = POLLIN}};
        uint64_t at = atomic_load(&p->stop_at);

        if (at && now >= at + p->o->timeout_ms * MS)
            break;
        if (!stopping(p, now)) {
            if (renew_due(p, now)) {
                renew(p);
                continue;
            }
            skip_late(p, &next, now);
            while (next <= now) {
                uint8_t dg[UDP_MSG];
                uint64_t seq = probe_track_send(p->trk, now); /* sent now, not at the slot */
                proto_udp_put(dg, p->sess.session, seq, now);
                (void)send(fd, dg, sizeof(dg), MSG_DONTWAIT); /* a failed send is a loss */
                next += p->period_ns;
            }
        }
        udp_drain(p, fd); /* every answer that came by now, before deciding at now */
        expire(p, now);
        wait = next > now ? (next - now) / MS + 1 : 0;
        if (wait > 10)
            wait = 10;
        if (poll(pf, 2, (int)wait) > 0) {
            if (ctrl_lost(pf[1].revents) && !stopping(p, clock_now_ns()))
                lost_session(p, &next, "UDP_RR session ended by the server or the network");
        }
    }
    udp_drain(p, fd);
    close(fd);
}

/* ---- tcp ---- */

/* Reads every answer the data connection has (without blocking), each at the time the kernel
 * received it. Returns NULL, or why the connection is lost. */
static const char *tcp_read(struct prober *p, uint8_t *rx, size_t cap, size_t *have)
{
    if (p->sess.data < 0)
        return NULL;
    for (;;) {
        uint64_t at;
        ssize_t n = recv_stamped(p->sess.data, rx + *have, cap - *have, &at);
        size_t off = 0;

        if (n == 0)
            return "the server closed the connection";
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? NULL
                                                                             : strerror(errno);
        *have += (size_t)n;
        for (; *have - off >= TCP_MSG; off += TCP_MSG)
            probe_track_answer(p->trk, get_u64(rx + off), at);
        memmove(rx, rx + off, *have - off);
        *have -= off;
    }
}

static void run_tcp(struct prober *p)
{
    uint8_t rx[4096];
    size_t have = 0;
    uint64_t next = clock_now_ns();
    int stamped = -1; /* the data connection SO_TIMESTAMPNS was set on */

    for (;;) {
        uint64_t now = clock_now_ns(), wait;
        struct pollfd pf[2] = {{.fd = p->sess.data, .events = POLLIN},
                               {.fd = p->sess.ctrl, .events = POLLIN}};
        uint64_t at = atomic_load(&p->stop_at);
        const char *lost = NULL;

        if (at && now >= at + p->o->timeout_ms * MS)
            break;
        if (p->sess.data >= 0 && p->sess.data != stamped) {
            stamp_receives(p->sess.data);
            stamped = p->sess.data;
        }
        if (!stopping(p, now)) {
            if (renew_due(p, now)) {
                int old = p->sess.data;
                renew(p);
                if (p->sess.data != old)
                    have = 0; /* a partial answer of the old connection is gone */
                continue;
            }
            skip_late(p, &next, now);
            while (next <= now && !lost) {
                uint8_t req[TCP_MSG];
                uint64_t t = now; /* sent now, not at the slot */
                ssize_t n;
                put_u64(req, p->trk->next);
                put_u64(req + 8, t);
                n = send(p->sess.data, req, sizeof(req), MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n == (ssize_t)sizeof(req)) {
                    (void)probe_track_send(p->trk, t);
                } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                    probe_track_missed(p->trk, t); /* the send buffer is full */
                } else {
                    /* a partial write would break the framing: treat it as a reset */
                    lost = n < 0 ? strerror(errno) : "short write";
                    probe_track_missed(p->trk, t);
                }
                next += p->period_ns;
            }
        }
        if (!lost)
            lost = tcp_read(p, rx, sizeof(rx), &have); /* what came by now, before deciding */
        expire(p, now);
        if (!lost) {
            wait = next > now ? (next - now) / MS + 1 : 0;
            if (wait > 10)
                wait = 10;
            if (poll(pf, 2, (int)wait) > 0 && ctrl_lost(pf[1].revents))
                lost = "the TCP_RR session ended (control connection)";
        }
        if (lost && !stopping(p, clock_now_ns())) {
            char why[200];
            snprintf(why, sizeof(why), "long-lived connection lost: %s", lost);
            have = 0;
            lost_session(p, &next, why);
        } else if (lost) {
            break;
        }
    }
}

/* ---- connect ---- */

struct cslot {
    int fd; /* -1 = free */
    uint64_t seq, t;
};

/* An orderly close (FIN): the server logs a connection that never spoke at info level only,
 * where a reset would be a warning per probe. The TIME_WAIT sockets it leaves (10 a second
 * for 60 s) are few. */
static void cslot_close(struct cslot *c)
{
    close(c->fd);
    c->fd = -1;
}

/* A connect poll said is finished, at t: answered when it connected. Noticed after its timeout
 * (this thread was not running), the handshake's round trip as the kernel measured it says when
 * it connected (a retransmitted SYN leaves no measurement: then it came late). */
static void connect_done(struct prober *p, struct cslot *c, uint64_t t)
{
    int soerr = 0;
    socklen_t len = sizeof(soerr);

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0) {
        struct tcp_info ti;
        socklen_t tl = sizeof(ti);
        uint64_t at = t;
        if (t - c->t > p->o->timeout_ms * MS &&
            getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_total_retrans == 0 &&
            ti.tcpi_rtt > 0)
            at = c->t + (uint64_t)ti.tcpi_rtt * 1000;
        probe_track_answer(p->trk, c->seq, at);
    }
    cslot_close(c);
}

/* Waits at most wait_ms for the connects in flight and settles those that finished. */
static void connect_poll(struct prober *p, struct cslot *slot, int wait_ms)
{
    struct pollfd pf[CONNECT_SLOTS];
    int n = 0, idx[CONNECT_SLOTS];

    for (int i = 0; i < CONNECT_SLOTS; i++) {
        if (slot[i].fd < 0)
            continue;
        pf[n] = (struct pollfd){.fd = slot[i].fd, .events = POLLOUT};
        idx[n++] = i;
    }
    if (poll(pf, (nfds_t)n, wait_ms) > 0) {
        uint64_t t = clock_now_ns();
        for (int k = 0; k < n; k++)
            if (pf[k].revents)
                connect_done(p, &slot[idx[k]], t);
    }
}

static void run_connect(struct prober *p)
{
    struct cslot slot[CONNECT_SLOTS];
    uint64_t next = clock_now_ns();

    for (int i = 0; i < CONNECT_SLOTS; i++)
        slot[i].fd = -1;
    for (;;) {
        uint64_t now = clock_now_ns(), wait;
        uint64_t at = atomic_load(&p->stop_at);

        if (at && now >= at + p->o->timeout_ms * MS)
            break;
        if (!stopping(p, now)) {
            skip_late(p, &next, now);
            while (next <= now) {
                int i;
                for (i = 0; i < CONNECT_SLOTS && slot[i].fd >= 0; i++)
                    ;
                if (i == CONNECT_SLOTS) {
                    probe_track_missed(p->trk, now);
                } else {
                    slot[i].seq = probe_track_send(p->trk, now); /* started now */
                    slot[i].t = now;
                    slot[i].fd = probe_connect_start(&p->target); /* -1: lost at its timeout */
                }
                next += p->period_ns;
            }
        }
        connect_poll(p, slot, 0); /* the connects that finished by now, before deciding */
        for (int i = 0; i < CONNECT_SLOTS; i++)
            if (slot[i].fd >= 0 && now - slot[i].t > p->o->timeout_ms * MS)
                cslot_close(&slot[i]); /* lost (expire decides it) */
        expire(p, now);
        wait = next > now ? (next - now) / MS + 1 : 0;
        if (wait > 10)
            wait = 10;
        connect_poll(p, slot, (int)wait);
    }
    for (int i = 0; i < CONNECT_SLOTS; i++)
        if (slot[i].fd >= 0)
            cslot_close(&slot[i]);
}

static void *prober_main(void *arg)
{
    struct prober *p = arg;

    if (p->kind == K_UDP)
        run_udp(p);
    else if (p->kind == K_TCP)
        run_tcp(p);
    else
        run_connect(p);
    probe_track_finish(p->trk, clock_now_ns());
    probe_sess_close(&p->sess, 500);
    return NULL;
}

/* ---- the document ---- */

static json_t *kind_json(const struct prober *p, uint64_t t0)
{
    json_t *j = probe_track_json(p->trk, t0);

    if (p->kind != K_CONNECT)
        json_object_set_new(
            j, "connection",
            json_pack("{s:I, s:I, s:I, s:f, s:f, s:b}", "sessions", (json_int_t)p->sessions,
                      "renewals", (json_int_t)p->renewals, "resets", (json_int_t)p->resets,
                      "reconnect_s_total", (double)p->reconnect_ns_total / 1e9, "reconnect_s_max",
                      (double)p->reconnect_ns_max / 1e9, "survived", p->first_survived));
    json_object_set_new(j, "last_error",
                        p->last_error[0] ? json_string(p->last_error) : json_null());
    return j;
}

static json_t *document(const struct probe_opts *o, struct prober *pr, uint64_t t0,
                        double start_unix, uint64_t t_end)
{
    json_t *probes = json_object();
    char server[300];

    snprintf(server, sizeof(server), strchr(o->host, ':') ? "[%s]:%u" : "%s:%u", o->host, o->port);
    for (int k = 0; k < K_COUNT; k++)
        if (pr[k].started)
            json_object_set_new(probes, kind_name[k], kind_json(&pr[k], t0));
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:o}", "schema", PROBE_SCHEMA,
                     "server", server, "rate_per_s", (json_int_t)o->rate, "connect_every_ms",
                     (json_int_t)o->connect_every_ms, "timeout_ms", (json_int_t)o->timeout_ms,
                     "interval_ms", (json_int_t)o->interval_ms, "start_unix_s", start_unix,
                     "duration_s", (double)(t_end - t0) / 1e9, "probes", probes);
}

/* "kperf-agent: status udp ok 500 0 tcp down 500 120 connect lossy 50 2 last 2.010" on
 * stderr: per kind its state (down: an outage in progress; lossy: losses since the last line;
 * ok), probes sent and lost; then the length of the latest outage of any kind. */
static void status_line(struct prober *pr, uint64_t last_lost[K_COUNT])
{
    char line[256];
    size_t n = (size_t)snprintf(line, sizeof(line), "kperf-agent: status");
    uint64_t last = 0;

    for (int k = 0; k < K_COUNT && n < sizeof(line); k++) {
        uint64_t lost = atomic_load(&pr[k].pub_lost), lo = atomic_load(&pr[k].pub_last_outage_ns);
        const char *state = atomic_load(&pr[k].pub_down) ? "down"
                            : lost > last_lost[k]        ? "lossy"
                                                         : "ok";
        if (!pr[k].started)
            continue;
        last_lost[k] = lost;
        if (lo > last)
            last = lo;
        n += (size_t)snprintf(line + n, sizeof(line) - n, " %s %s %llu %llu", kind_name[k], state,
                              (unsigned long long)atomic_load(&pr[k].pub_sent),
                              (unsigned long long)lost);
    }
    if (n < sizeof(line))
        snprintf(line + n, sizeof(line) - n, " last %.3f", (double)last / 1e9);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

json_t *probe_run(const struct probe_opts *o, volatile sig_atomic_t *stop, struct kp_err *err)
{
    struct prober pr[K_COUNT];
    bool want[K_COUNT] = {o->udp, o->tcp, o->connect};
    struct probe_target target;
    struct timespec wall;
    uint64_t t0, t_end;
    json_t *doc = NULL;

    if (o->rate == 0 || o->rate > 10000 || o->connect_every_ms == 0 ||
        (uint64_t)o->rate * o->timeout_ms / 1000 >= PROBE_RING ||
        o->timeout_ms * 1000 / o->connect_every_ms / 1000 >= CONNECT_SLOTS)
        return kp_err_set(err, "rate, timeout and connect interval out of range"), NULL;
    memset(&target, 0, sizeof(target));
    target.token = o->token;
    target.token_len = o->token_len;
    target.timeout_ms = o->connect_timeout_ms;
    if (probe_target_resolve(&target, o->host, o->port, err) != 0)
        return NULL;
    memset(pr, 0, sizeof(pr));
    for (int k = 0; k < K_COUNT; k++) {
        pr[k].o = o;
        pr[k].kind = (enum kind)k;
        pr[k].target = target;
        pr[k].sess.ctrl = pr[k].sess.data = -1;
        pr[k].period_ns = k == K_CONNECT ? o->connect_every_ms * MS : 1000000000ull / o->rate;
        pr[k].trk = kp_xmalloc(sizeof(*pr[k].trk));
        probe_track_init(pr[k].trk, o->timeout_ms * MS, o->interval_ms * MS, pr[k].period_ns);
    }
    /* the first sessions must open: a wrong token or no server is an error, not an outage */
    for (int k = 0; k < K_CONNECT; k++) {
        if (want[k] && sess_open(&pr[k], err) != 0) {
            kp_err_prefix(err, "%s probe", kind_name[k]);
            goto out;
        }
        pr[k].first_survived = true;
    }
    clock_gettime(CLOCK_REALTIME, &wall);
    t0 = clock_now_ns();
    for (int k = 0; k < K_COUNT; k++) {
        if (!want[k])
            continue;
        if (pthread_create(&pr[k].thread, NULL, prober_main, &pr[k]) != 0) {
            kp_err_set(err, "pthread_create: %s", strerror(errno));
            for (int j = 0; j < k; j++)
                if (pr[j].started)
                    atomic_store(&pr[j].stop_at, clock_now_ns());
            for (int j = 0; j < k; j++)
                if (pr[j].started)
                    pthread_join(pr[j].thread, NULL);
            goto out;
        }
        pr[k].started = true;
    }
    if (o->on_ready)
        o->on_ready(o->ready_arg);
    uint64_t next_status = t0 + o->status_ms * MS, last_lost[K_COUNT] = {0};
    while (!*stop && (!o->duration_ms || clock_now_ns() - t0 < o->duration_ms * MS)) {
        clock_sleep_ms(20);
        if (o->status_ms && clock_now_ns() >= next_status) {
            status_line(pr, last_lost);
            next_status += o->status_ms * MS;
        }
    }
    t_end = clock_now_ns();
    for (int k = 0; k < K_COUNT; k++)
        atomic_store(&pr[k].stop_at, t_end);
    for (int k = 0; k < K_COUNT; k++)
        if (pr[k].started)
            pthread_join(pr[k].thread, NULL);
    doc = document(o, pr, t0, (double)wall.tv_sec + (double)wall.tv_nsec / 1e9, t_end);
out:
    for (int k = 0; k < K_COUNT; k++) {
        probe_sess_close(&pr[k].sess, 0);
        probe_track_free(pr[k].trk);
        free(pr[k].trk);
    }
    return doc;
}
