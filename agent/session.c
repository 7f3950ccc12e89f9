/* SPDX-License-Identifier: Apache-2.0 */
/* session.c - one test on the server, whatever its kind: creates and ends it, attaches data
 * connections, runs START and STOP, takes the measurement window (after --omit) and reports
 * the server's side in RESULT. What differs by kind goes through the session's ops
 * (testops.h): TCP data in session_tcp.c, UDP in session_udp.c.
 * Every loop here is bounded by the server's own numbers, never by values from the wire. */
#include "agent/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/peeraddr.h"
#include "agent/sha256.h"
#include "agent/streamer.h"
#include "agent/sysinfo.h"
#include "agent/testops.h"
#include "agent/udp_source.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"

static void session_closed(uv_handle_t *h)
{
    struct session *s = h->data;

    if (--s->open_handles > 0)
        return;
    udp_source_close(s->udp_src);
    free(s->cnt0);
    free(s);
}

struct session *session_new(struct server *srv, struct conn *ctrl, const struct proto_test_req *req,
                            struct kp_err *err)
{
    const struct test_ops *ops = testops_get(req->test);
    struct session *s;
    uv_timer_t *timers[3];
    int rc = 0;

    if (!ops || !(ops->attach || ops->udp)) {
        kp_err_set(err, "no server side for test %s", proto_test_name(req->test));
        return NULL;
    }
    s = kp_xcalloc(1, sizeof(*s));
    timers[0] = &s->deadline, timers[1] = &s->mark, timers[2] = &s->pace;
    s->srv = srv;
    s->ops = ops;
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
    srv->last_tested = sysinfo_now_ns(); /* a test: its run is alive (--max-idle) */
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
    session_udp_echo_fold(s);
    for (pp = &srv->sessions; *pp; pp = &(*pp)->next) {
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    }
    srv->nsessions--;
    srv->last_tested = sysinfo_now_ns();
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

int session_attach(struct session *s, struct conn *c, uint16_t stream)
{
    if (!s->ctrl || !peeraddr_same_ip((const struct sockaddr *)&s->ctrl->peer_addr,
                                      (const struct sockaddr *)&c->peer_addr))
        return -1;
    if (!s->ops->attach || s->stopping)
        return -1;
    return s->ops->attach(s, c, stream);
}

void session_on_data(struct conn *c, const uint8_t *buf, size_t len)
{
    struct session *s = c->sess;

    if (!s)
        return;
    c->rx_bytes += len;
    if (s->ops->data)
        s->ops->data(c, buf, len);
}

void session_on_data_eof(struct conn *c)
{
    struct session *s = c->sess;

    if (!s || !s->ops->data_eof) {
        conn_close(c);
        return;
    }
    s->ops->data_eof(c);
}

/* --- the measurement window and RESULT ---------------------------------------------------- */

/* The counters at the mark (TEST_REQ asked): best effort, as node CPU; none when unreadable. */
static void counters_mark(struct session *s)
{
    struct kp_err why;

    kp_err_clear(&why);
    if (!s->cnt0)
        s->cnt0 = kp_xmalloc(sizeof(*s->cnt0));
    if (counters_take(s->cnt0, s->srv->o.counters_netns, &why) != 0) {
        server_warn(s->srv, "counters: %s", kp_err_msg(&why));
        free(s->cnt0);
        s->cnt0 = NULL;
    }
}

/* COUNTERS (TEST_REQ asked), sent right before RESULT: the deltas since the mark, or
 * {"v":1,"error":...} when they could not be read. */
static void send_counters(struct session *s)
{
    struct proto_msg *m = kp_xcalloc(1, sizeof(*m));
    struct counters_snap *now = kp_xmalloc(sizeof(*now));
    struct kp_err why;
    json_t *delta = NULL;
    char *text = NULL;

    kp_err_clear(&why);
    if (!s->cnt0)
        kp_err_set(&why, "the counters at the start were not read");
    else if (counters_take(now, s->srv->o.counters_netns, &why) == 0)
        delta = counters_delta_json(s->cnt0, now);
    if (!delta)
        delta = json_pack("{s:i, s:s}", "v", COUNTERS_VERSION, "error", kp_err_msg(&why));
    text = counters_text(delta, PROTO_COUNTERS_MAX);
    m->type = PROTO_COUNTERS;
    snprintf(m->u.counters.text, sizeof(m->u.counters.text), "%s",
             text ? text : "{\"v\":1,\"error\":\"too large\"}");
    conn_send(s->ctrl, m);
    free(text);
    json_decref(delta);
    free(now);
    free(m);
}

static void take_mark(struct session *s)
{
    s->measuring = 1;
    if (s->req.flags & PROTO_FLAG_COUNTERS) /* first: its cost stays outside the window */
        counters_mark(s);
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

/* The figures of each data connection into r. */
static void fill_streams(struct session *s, struct proto_result *r)
{
    for (unsigned i = 0; i < r->nstreams; i++) {
        struct conn *c = s->streams[i];
        struct sysinfo_tcp ti;
        int fd;
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
}

static void fill_result(struct session *s, struct proto_result *r)
{
    const struct testkind *tk = testkind_get(s->ops->kind);
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
    r->nstreams = (uint16_t)(tk->udp || tk->conn_per_txn ? 0 : s->req.streams);
    fill_streams(s, r);
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

void session_report(struct session *s)
{
    struct proto_msg *m;

    if (s->reported || !s->ctrl)
        return;
    s->reported = 1;
    session_streams_stop(s); /* their figures are final from here */
    m = kp_xcalloc(1, sizeof(*m));
    m->type = PROTO_RESULT;
    fill_result(s, &m->u.result);
    if (s->req.flags & PROTO_FLAG_COUNTERS)
        send_counters(s);
    conn_send(s->ctrl, m);
    free(m);
    session_end(s, NULL);
}

static void report_fired(uv_timer_t *t)
{
    struct session *s = t->data;
    session_report(s);
}

void session_report_later(struct session *s, uint64_t ms, const char *what)
{
    int rc = uv_timer_start(&s->pace, report_fired, ms, 0);

    if (rc != 0)
        session_fail(s, what, rc);
}

void session_fail(struct session *s, const char *what, int uv_status)
{
    char why[PROTO_REASON_MAX + 1];

    snprintf(why, sizeof(why), "server: %s: %s", what, uv_strerror(uv_status));
    session_end(s, why);
}

/* --- control ------------------------------------------------------------------------------ */

/* Starts the whole-test deadline and the warm-up mark. 0, or -1 when s ended. */
static int start_timers(struct session *s)
{
    const struct proto_test_req *r = &s->req;
    int rc;

    rc = uv_timer_start(&s->deadline, deadline_fired,
                        (uint64_t)r->omit_ms + r->duration_ms + SESSION_SLACK_MS, 0);
    if (rc != 0) {
        session_fail(s, "uv_timer_start (deadline)", rc);
        return -1;
    }
    if (r->omit_ms == 0) {
        take_mark(s);
        return 0;
    }
    rc = uv_timer_start(&s->mark, mark_fired, r->omit_ms, 0);
    if (rc != 0) {
        session_fail(s, "uv_timer_start (warm-up)", rc);
        return -1;
    }
    return 0;
}

static void on_start(struct session *s)
{
    const struct testkind *tk = testkind_get(s->ops->kind);
    const struct proto_test_req *r = &s->req;
    struct proto_msg m;
    struct kp_err err;
    int reverse = (r->flags & PROTO_FLAG_REVERSE) != 0;
    unsigned want = tk->udp || tk->conn_per_txn ? 0 : r->streams;

    if (s->started) {
        conn_refuse(s->ctrl, PROTO_REFUSE_BAD_REQUEST, "START sent twice");
        return;
    }
    /* a reverse UDP test sends to the address the receiver's hello came from */
    if (s->attached != want || (reverse && tk->udp && !s->udp_peer_known)) {
        conn_refuse(s->ctrl, PROTO_REFUSE_BAD_REQUEST, "START before %u data connections", want);
        return;
    }
    s->started = 1;
    uv_timer_stop(&s->ctrl->timer);
    if (start_timers(s) != 0)
        return;
    kp_err_clear(&err);
    if (s->ops->start && s->ops->start(s, &err) != 0) {
        char why[PROTO_REASON_MAX + 1];
        snprintf(why, sizeof(why), "server: %s", kp_err_msg(&err));
        session_end(s, why);
        return;
    }
    memset(&m, 0, sizeof(m));
    m.type = PROTO_STARTED;
    conn_send(s->ctrl, &m);
    if (s->ops->started)
        s->ops->started(s);
}

static void on_stop(struct session *s, const struct proto_msg *m)
{
    if (!s->started || s->stopping) {
        conn_refuse(s->ctrl, PROTO_REFUSE_BAD_REQUEST, "STOP out of order");
        return;
    }
    s->stopping = 1;
    session_udp_echo_fold(s);
    s->stop_sent_bytes = m->u.stop.sent_bytes;
    s->stop_udp_sent = m->u.stop.udp_sent;
    s->t_end_ns = sysinfo_now_ns();
    uv_timer_stop(&s->pace);
    if (s->ops->stop)
        s->ops->stop(s);
    else
        session_report(s);
}

void session_on_ctrl_msg(struct session *s, const struct proto_msg *m)
{
    if (m->type == PROTO_START)
        on_start(s);
    else if (m->type == PROTO_STOP)
        on_stop(s, m);
}
