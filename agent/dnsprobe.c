/* SPDX-License-Identifier: Apache-2.0 */
/* dnsprobe.c - the DNS lookup probe (dnsprobe.h) on one libuv loop: a tick timer sends what the
 * rate owes and expires lookups older than the timeout; UDP lookups share one connected socket
 * and are matched by id (a table of send times, one slot per id); a TCP lookup owns its
 * connection and is freed from its close callback. */
#include "agent/dnsprobe.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <uv.h>

#include "agent/dnsmsg.h"
#include "base/hist.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"

#define TICK_MS   5
#define SWEEP_NS  50000000ull /* UDP lookups are expired this often (a walk of every id) */
#define NIDS      65536
#define TCP_BUF   4096 /* a reply longer than this (length prefix included) is malformed */
#define NS_PER_MS 1000000ull

struct tcpq;

struct run {
    const struct dnsprobe_opts *o;
    uv_loop_t loop;
    uv_timer_t tick;
    uv_udp_t udp;
    bool udp_open;
    struct sockaddr_storage addr;
    uint8_t tmpl[DNSMSG_QUERY_MAX]; /* the query with id 0 */
    size_t tlen;
    uint64_t start_ns, end_ns, timeout_ns, swept_ns;
    uint64_t *pending; /* UDP: send time by id, 0 = none; ours */
    uint64_t outstanding;
    struct tcpq *tcp_head; /* TCP lookups not yet done */
    uint16_t next_id;
    uint64_t sent, answered, slow, rcode_errors, truncated, malformed, late;
    struct hist *h;
};

struct tcpq {
    uv_tcp_t tcp; /* tcp.data = this */
    uv_connect_t conn;
    uv_write_t wr;
    struct run *run;
    struct tcpq *next, *prev;
    uint64_t sent_ns;
    bool done;
    size_t inlen;
    uint8_t out[2 + DNSMSG_QUERY_MAX];
    uint8_t in[TCP_BUF];
};

void dnsprobe_opts_default(struct dnsprobe_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->port = 53;
    o->qtype = DNSMSG_TYPE_A;
    o->rate = 10;
    o->duration_ms = 10000;
    o->timeout_ms = 2000;
}

/* One reply (borrowed) to the query with id, sent at sent_ns: checked and counted. Returns 0 when
 * it answered the lookup, -1 when it was malformed (the lookup stays unanswered). */
static int take_reply(struct run *r, const uint8_t *msg, size_t len, uint16_t id, uint64_t sent_ns)
{
    uint8_t q[DNSMSG_QUERY_MAX];
    struct dnsmsg_reply rep;
    struct kp_err err;
    uint64_t lat = uv_hrtime() - sent_ns;

    memcpy(q, r->tmpl, r->tlen);
    dnsmsg_set_id(q, id);
    kp_err_clear(&err);
    if (dnsmsg_parse_reply(msg, len, q, r->tlen, &rep, &err) != 0) {
        r->malformed++;
        return -1;
    }
    r->answered++;
    hist_record(r->h, lat);
    if (lat > DNSPROBE_SLOW_NS)
        r->slow++;
    if (rep.rcode != 0)
        r->rcode_errors++;
    if (rep.truncated)
        r->truncated++;
    return 0;
}

/* --- UDP ------------------------------------------------------------------------------------- */

static void udp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    static uint8_t space[65536]; /* one loop, one read at a time */
    (void)h, (void)suggested;
    *buf = uv_buf_init((char *)space, sizeof(space));
}

static void udp_recv(uv_udp_t *u, ssize_t n, const uv_buf_t *buf, const struct sockaddr *from,
                     unsigned flags)
{
    struct run *r = u->data;
    int id;

    (void)from, (void)flags;
    if (n <= 0)
        return; /* nothing, or an ICMP error on the connected socket: the lookup times out */
    id = dnsmsg_id((const uint8_t *)buf->base, (size_t)n);
    if (id < 0) {
        r->malformed++;
        return;
    }
    if (r->pending[id] == 0) {
        r->late++; /* expired already, or never sent */
        return;
    }
    if (take_reply(r, (const uint8_t *)buf->base, (size_t)n, (uint16_t)id, r->pending[id]) == 0) {
        r->pending[id] = 0;
        r->outstanding--;
    }
}

static void udp_send(struct run *r, uint64_t now)
{
    uint8_t q[DNSMSG_QUERY_MAX];
    uint16_t id = r->next_id++;
    uv_buf_t b;

    if (r->pending[id] != 0) /* ids wrapped on a lookup older than the timeout: not possible */
        r->outstanding--;
    memcpy(q, r->tmpl, r->tlen);
    dnsmsg_set_id(q, id);
    b = uv_buf_init((char *)q, (unsigned)r->tlen);
    r->sent++;
    r->pending[id] = now;
    r->outstanding++;
    (void)uv_udp_try_send(&r->udp, &b, 1, NULL); /* a failed send is a lost lookup */
}

static void udp_expire(struct run *r, uint64_t now)
{
    if (r->outstanding == 0 || now - r->swept_ns < SWEEP_NS)
        return;
    r->swept_ns = now;
    for (size_t id = 0; id < NIDS; id++)
        if (r->pending[id] != 0 && now - r->pending[id] >= r->timeout_ns) {
            r->pending[id] = 0;
            r->outstanding--;
        }
}

/* --- TCP ------------------------------------------------------------------------------------- */

static void tcp_freed(uv_handle_t *h)
{
    free(h->data);
}

/* The lookup is over (answered, failed or expired): out of the list, its connection closed. */
static void tcp_done(struct tcpq *q)
{
    struct run *r = q->run;

    if (q->done)
        return;
    q->done = true;
    r->outstanding--;
    if (q->prev)
        q->prev->next = q->next;
    else
        r->tcp_head = q->next;
    if (q->next)
        q->next->prev = q->prev;
    uv_close((uv_handle_t *)&q->tcp, tcp_freed);
}

static void tcp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    struct tcpq *q = h->data;
    (void)suggested;
    *buf = uv_buf_init((char *)q->in + q->inlen, (unsigned)(sizeof(q->in) - q->inlen));
}

static void tcp_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    struct tcpq *q = s->data;
    size_t want;

    (void)buf;
    if (n < 0) {
        tcp_done(q);
        return;
    }
    q->inlen += (size_t)n;
    if (q->inlen < 2)
        return;
    want = 2u + ((size_t)q->in[0] << 8 | q->in[1]);
    if (want > sizeof(q->in)) {
        q->run->malformed++;
        tcp_done(q);
        return;
    }
    if (q->inlen < want)
        return;
    take_reply(q->run, q->in + 2, want - 2, (uint16_t)dnsmsg_id(q->out + 2, q->run->tlen),
               q->sent_ns);
    tcp_done(q);
}

static void tcp_written(uv_write_t *w, int status)
{
    (void)w, (void)status; /* a failed write shows as a read error or a timeout */
}

static void tcp_connected(uv_connect_t *c, int status)
{
    struct tcpq *q = c->data;
    uv_buf_t b;

    if (q->done)
        return;
    if (status < 0) {
        tcp_done(q);
        return;
    }
    b = uv_buf_init((char *)q->out, (unsigned)(q->run->tlen + 2));
    if (uv_write(&q->wr, (uv_stream_t *)&q->tcp, &b, 1, tcp_written) != 0 ||
        uv_read_start((uv_stream_t *)&q->tcp, tcp_alloc, tcp_read) != 0)
        tcp_done(q);
}

static void tcp_send(struct run *r, uint64_t now)
{
    struct tcpq *q = kp_xcalloc(1, sizeof(*q));

    q->run = r;
    q->sent_ns = now;
    q->tcp.data = q;
    q->conn.data = q;
    q->out[0] = (uint8_t)(r->tlen >> 8);
    q->out[1] = (uint8_t)r->tlen;
    memcpy(q->out + 2, r->tmpl, r->tlen);
    dnsmsg_set_id(q->out + 2, r->next_id++);
    r->sent++;
    if (uv_tcp_init(&r->loop, &q->tcp) != 0) {
        free(q); /* never a handle: counted lost */
        return;
    }
    r->outstanding++;
    q->next = r->tcp_head;
    if (q->next)
        q->next->prev = q;
    r->tcp_head = q;
    if (uv_tcp_connect(&q->conn, &q->tcp, (const struct sockaddr *)&r->addr, tcp_connected) != 0)
        tcp_done(q);
}

static void tcp_expire(struct run *r, uint64_t now)
{
    struct tcpq *q = r->tcp_head, *next;

    for (; q; q = next) {
        next = q->next;
        if (now - q->sent_ns >= r->timeout_ns)
            tcp_done(q);
    }
}

/* --- the loop -------------------------------------------------------------------------------- */

static void on_tick(uv_timer_t *t)
{
    struct run *r = t->data;
    uint64_t now = uv_hrtime();

    if (now < r->end_ns) {
        uint64_t due = (now - r->start_ns) / 1000 * r->o->rate / 1000000 + 1;
        while (r->sent < due) {
            if (r->o->tcp)
                tcp_send(r, now);
            else
                udp_send(r, now);
        }
    }
    if (r->o->tcp)
        tcp_expire(r, now);
    else
        udp_expire(r, now);
    if (now >= r->end_ns && r->outstanding == 0) {
        uv_timer_stop(&r->tick);
        uv_close((uv_handle_t *)&r->tick, NULL);
        if (r->udp_open)
            uv_close((uv_handle_t *)&r->udp, NULL);
    }
}

static int set_addr(struct run *r, const struct dnsprobe_opts *o, struct kp_err *err)
{
    int rc = strchr(o->server, ':')
                 ? uv_ip6_addr(o->server, o->port, (struct sockaddr_in6 *)&r->addr)
                 : uv_ip4_addr(o->server, o->port, (struct sockaddr_in *)&r->addr);

    if (rc != 0)
        return kp_err_set(err, "--server '%s': not an IPv4 or IPv6 address", o->server);
    return 0;
}

static int open_udp(struct run *r, struct kp_err *err)
{
    int rc = uv_udp_init(&r->loop, &r->udp);

    if (rc != 0)
        return kp_err_set(err, "UDP socket: %s", uv_strerror(rc));
    r->udp_open = true;
    r->udp.data = r;
    rc = uv_udp_connect(&r->udp, (const struct sockaddr *)&r->addr);
    if (rc == 0)
        rc = uv_udp_recv_start(&r->udp, udp_alloc, udp_recv);
    if (rc != 0)
        return kp_err_set(err, "UDP socket to %s: %s", r->o->server, uv_strerror(rc));
    return 0;
}

static json_t *result(const struct run *r)
{
    const struct dnsprobe_opts *o = r->o;
    uint64_t lost = r->sent - r->answered;
    double bad = r->sent ? 100.0 * (double)(lost + r->slow) / (double)r->sent : 0;

    return json_pack(
        "{s:s, s:s, s:i, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I, "
        "s:{s:f, s:f, s:f}, s:o}",
        "name", o->name, "server", o->server, "port", (int)o->port, "proto", o->tcp ? "tcp" : "udp",
        "type", o->qtype == DNSMSG_TYPE_AAAA ? "AAAA" : "A", "rate", (json_int_t)o->rate,
        "duration_ms", (json_int_t)o->duration_ms, "timeout_ms", (json_int_t)o->timeout_ms, "sent",
        (json_int_t)r->sent, "answered", (json_int_t)r->answered, "lost", (json_int_t)lost,
        "slow_1s", (json_int_t)r->slow, "lost_or_slow_pct", bad, "rcode_errors",
        (json_int_t)r->rcode_errors, "truncated", (json_int_t)r->truncated, "malformed",
        (json_int_t)r->malformed, "late", (json_int_t)r->late, "latency_us", "p50",
        (double)hist_percentile(r->h, 50) / 1e3, "p99", (double)hist_percentile(r->h, 99) / 1e3,
        "max", (double)hist_max(r->h) / 1e3, "histogram", hist_to_json(r->h));
}

json_t *dnsprobe_run(const struct dnsprobe_opts *o, struct kp_err *err)
{
    struct run *r = kp_xcalloc(1, sizeof(*r));
    json_t *doc = NULL;
    bool loop_ok = false;

    r->o = o;
    if (o->rate == 0 || o->rate > DNSPROBE_RATE_MAX) {
        kp_err_set(err, "--rate: %u is not 1 to %d lookups per second", o->rate, DNSPROBE_RATE_MAX);
        goto out;
    }
    if (dnsmsg_encode(o->name, o->qtype, 0, r->tmpl, sizeof(r->tmpl), &r->tlen, err) != 0 ||
        set_addr(r, o, err) != 0)
        goto out;
    if (uv_loop_init(&r->loop) != 0) {
        kp_err_set(err, "cannot start an event loop");
        goto out;
    }
    loop_ok = true;
    r->h = hist_new();
    r->pending = kp_xcalloc(NIDS, sizeof(*r->pending));
    r->next_id = (uint16_t)(uv_hrtime() & 0xffff);
    r->timeout_ns = o->timeout_ms * NS_PER_MS;
    if (!o->tcp && open_udp(r, err) != 0)
        goto out;
    uv_timer_init(&r->loop, &r->tick);
    r->tick.data = r;
    r->start_ns = uv_hrtime();
    r->end_ns = r->start_ns + o->duration_ms * NS_PER_MS;
    uv_timer_start(&r->tick, on_tick, 0, TICK_MS);
    uv_run(&r->loop, UV_RUN_DEFAULT);
    doc = result(r);
out:
    if (loop_ok) {
        if (!doc && r->udp_open)
            uv_close((uv_handle_t *)&r->udp, NULL);
        uv_run(&r->loop, UV_RUN_DEFAULT);
        (void)uv_loop_close(&r->loop);
    }
    hist_free(r->h);
    free(r->pending);
    free(r);
    return doc;
}
