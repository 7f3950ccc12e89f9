/* SPDX-License-Identifier: Apache-2.0 */
/* server_int.h - state shared by the server's files: server.c (listener, caps, loop),
 * server_conn.c (a connection's reads, writes, refusal and close), server_ctrl.c (the control
 * handshake) and the session files (one test: session.c its control and result,
 * session_tcp.c TCP data, session_udp.c UDP data), whose per-kind parts the ops table picks
 * (testops.h). Private to the server. */
#ifndef KPERF_AGENT_SERVER_INT_H
#define KPERF_AGENT_SERVER_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include <uv.h>

#include "agent/counters.h"
#include "agent/proto.h"
#include "agent/server.h"
#include "agent/srclimit.h"
#include "agent/streamer.h"
#include "base/kp_err.h"

#define SERVER_RX_BUF    (256 * 1024) /* shared receive buffer for data connections */
#define SERVER_UDP_BUF   (16 * 65536) /* 16 datagrams per recvmmsg */
#define CONN_CTRL_BUF    128          /* no client->server control message is larger (AUTH: 76) */
#define SESSION_SLACK_MS 10000        /* deadline = omit + duration + this */
/* A connection refused before it counts (a cap reached at accept, a handshake deadline): the
 * server writes REFUSE, half-closes, and keeps it at most this long so the peer can read the
 * reason, and keeps at most SERVER_MAX_LINGER such connections: past that they close at once
 * (the peer may then miss the reason, a flood cannot pile them up). */
#define SERVER_LINGER_MS  500
#define SERVER_MAX_LINGER 256

enum conn_state {
    CONN_NEW,     /* waiting for HELLO or DATA_HELLO */
    CONN_AUTH,    /* CHALLENGE sent, waiting for AUTH */
    CONN_REQ,     /* authenticated, waiting for TEST_REQ */
    CONN_CONTROL, /* control connection of a session */
    CONN_DATA,    /* data connection of a session */
    CONN_DRAIN,   /* reply sent; discarding input until EOF or the timer */
};

struct session;
struct server;

struct conn {
    uv_tcp_t tcp; /* tcp.data = this */
    uv_timer_t timer;
    struct server *srv;
    struct session *sess; /* borrowed; NULL when detached */
    struct conn *next;    /* server's list */
    enum conn_state state;
    int closing;
    int counted;   /* counts against max_conns and its source's max_conns_per_addr */
    int lingering; /* refused before counting: in srv->nlinger */
    struct srclimit_key src;
    int has_timer; /* timer initialised (else only tcp is open) */
    int open_handles;
    char peer[64]; /* "ip:port" for log lines */
    struct sockaddr_storage peer_addr;
    uint8_t nonce[PROTO_NONCE_LEN]; /* the server's, from CHALLENGE to AUTH */
    uint8_t rbuf[CONN_CTRL_BUF];
    size_t rlen;
    /* data connections */
    uint16_t stream;
    int eof;
    int writes_in_flight;
    int paused;
    _Atomic uint64_t rx_bytes, tx_bytes; /* atomic: an echo thread may count */
    uint64_t rx_mark, tx_mark;           /* at the window start */
    struct echo *echo;                   /* TCP_RR echo thread; ours */
    struct streamer *streamer;           /* stream test: its own thread (streamer.h); ours */
    struct streamer_stats sst;           /* the streamer's, once stopped (has_sst) */
    int has_sst;
    uint32_t crr_need; /* TCP_CRR: request bytes still expected */
    uv_write_t wr[2];  /* reverse stream / CRR response writes */
};

struct session {
    struct server *srv;
    struct session *next;
    const struct test_ops *ops; /* its kind's (testops.h), looked up once in session_new */
    uint64_t id;
    struct proto_test_req req;
    struct conn *ctrl;
    struct conn *streams[PROTO_MAX_STREAMS];
    unsigned attached;
    int started, measuring, stopping, reported, closing;
    int open_handles;
    uv_timer_t deadline; /* whole-test deadline */
    uv_timer_t mark;     /* end of the warm-up (--omit) */
    uv_timer_t pace;     /* reverse UDP_STREAM pacing; the report's grace/drain wait */
    uint64_t t_mark_ns, t_end_ns, t_last_eof_ns;
    /* reverse UDP_STREAM: the sending socket (ours), the receiver's last keep-alive, and when
     * and why the sender stopped before STOP */
    struct udp_source *udp_src;
    uint64_t udp_last_ka_ns, udp_stop_ns;
    uint16_t udp_stop; /* enum proto_udp_stop */
    uint64_t cpu_user0, cpu_sys0, node0[PROTO_CPU_FIELDS], rcvbuf0;
    struct counters_snap *cnt0; /* ours: the counters at the mark, when TEST_REQ asked */
    uint64_t stop_sent_bytes, stop_udp_sent;
    /* UDP */
    struct sockaddr_storage udp_peer;
    int udp_peer_known;
    uint64_t udp_received, udp_bytes, udp_bytes_mark, udp_max_seq_plus1, udp_ooo;
    double jitter_ns;
    int64_t last_transit;
    int have_transit;
    uint64_t udp_sent, udp_tx_bytes, udp_tx_mark, pace_start_ns;
    /* UDP_RR: the echo thread on a connected socket (ours) and what it echoed so far, folded
     * into udp_received/udp_bytes when it stops */
    struct echo_udp *udp_echo;
    int udp_echo_tried;
    _Atomic uint64_t udp_echo_count, udp_echo_bytes;
};

struct server {
    struct server_opts o;
    uv_loop_t loop;
    uv_tcp_t listener;
    uv_udp_t udp;
    uv_signal_t sigterm, sigint;
    struct conn *conns;
    struct session *sessions;
    unsigned nconns;  /* counted connections (conn.counted) */
    unsigned nlinger; /* refused connections still lingering (conn.lingering) */
    unsigned nsessions;
    struct srclimit *per_src; /* counted connections per source; ours */
    uv_async_t streams_done;  /* a streamer's thread ended: session_streams_done */
    unsigned nstreamers;      /* streamer threads running, at most max_streamers */
    unsigned max_streamers;   /* o.stream_threads: more streams stay on the loop */
    struct streampool *pool;  /* o.stream_pool threads, or NULL; ours */
    /* the streams of same-kernel tests (PROTO_FLAG_SAME_KERNEL) when pool is NULL: near_pool
     * (half the usable CPUs) for a test with no more streams than CPUs, wide_pool (all of
     * them) for one with more; each made at its first stream; NULL before (or when it could
     * not be) */
    struct streampool *near_pool, *wide_pool;
    char boot_id[64]; /* sysinfo_boot_id, for CHALLENGE's kernel tag; "" when unreadable */
    size_t boot_id_len;
    uint8_t *rx_buf;  /* SERVER_RX_BUF bytes, shared by the loop's data connections */
    uint8_t *tx_buf;  /* PROTO_MAX_MSG_SIZE zero bytes for responses and streams */
    uint8_t *udp_buf; /* SERVER_UDP_BUF bytes for recvmmsg; touched only by UDP tests */
    uint64_t last_flood_log_ns;
    unsigned flood_suppressed;
    double log_tokens; /* server_warn's bucket */
    uint64_t log_last_ns;
    unsigned log_suppressed;
    int shutting_down;
    uv_timer_t idle;        /* o.max_idle_ms: checks every second whether the run is gone */
    int has_idle;           /* idle is initialised (closed by shut_down) */
    int parked;             /* the sockets are closed for good (o.max_idle_ms passed) */
    uint64_t last_tested;   /* sysinfo_now_ns of the server's start or of its last test */
    char fatal[KP_ERR_MAX]; /* why the loop stopped on its own; server_run returns it */
};

#define LOG_BURST   10.0
#define LOG_PER_SEC 2.0

/* server_conn.c */
/* A per-connection warning (one line per dropped connection), rate-limited so that a flood
 * costs a bounded number of lines. */
void server_warn(struct server *srv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void conn_close(struct conn *c);
void conn_drain(struct conn *c);  /* half-close after queued writes, then close */
void conn_resume(struct conn *c); /* restart reading after a pause */
void conn_send(struct conn *c, const struct proto_msg *m);
void conn_refuse(struct conn *c, uint16_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Refuses c before (or instead of) serving it: writes REFUSE if the socket takes it at once,
 * half-closes, stops counting c against the caps and closes it at the peer's EOF or after
 * SERVER_LINGER_MS, so a refused connection costs the others nothing. Past SERVER_MAX_LINGER
 * lingering connections c closes at once. Logs nothing (the callers do, rate-limited). */
void conn_refuse_now(struct conn *c, uint16_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* server_ctrl.c */
/* The timer of a connection not yet in a test (handshake, idle before START) or of a TCP_CRR
 * transaction: refuses it with the reason, or closes it. */
void server_ctrl_deadline(uv_timer_t *t);
/* Decodes and handles every whole message in c->rbuf. Returns the number of bytes consumed; a
 * protocol error closes c. */
size_t server_ctrl_process(struct conn *c);

struct test_ops;

/* session.c */
/* A new session (the server's; freed from its timers' close callbacks after session_end), or
 * NULL with err when its timers cannot be set up. */
struct session *session_new(struct server *srv, struct conn *ctrl, const struct proto_test_req *req,
                            struct kp_err *err);
struct session *session_find(struct server *srv, uint64_t id);
/* Ends s: closes its data connections and itself; with why, the control connection gets REFUSE
 * code (session_end: PROTO_REFUSE_INTERNAL) and the reason, else it is drained. */
void session_end(struct session *s, const char *why);
void session_end_code(struct session *s, uint16_t code, const char *why);
void session_on_ctrl_msg(struct session *s, const struct proto_msg *m);
KP_MUST_CHECK int session_attach(struct session *s, struct conn *c, uint16_t stream);
/* Bytes on a data connection (counted, then the kind's ops->data), and its EOF. */
void session_on_data(struct conn *c, const uint8_t *buf, size_t len);
void session_on_data_eof(struct conn *c);
/* Sends RESULT (once) and ends s; session_report_later does it after ms, on the pace timer
 * (what names that timer when it cannot start: s then ends with the reason). */
void session_report(struct session *s);
void session_report_later(struct session *s, uint64_t ms, const char *what);
/* Ends s because a call that its measurement needs failed: the client gets REFUSE (internal)
 * with "server: what: uv_strerror(uv_status)", and the server logs it. */
void session_fail(struct session *s, const char *what, int uv_status);

/* session_tcp.c: the TCP kinds' ops (testops.h) and the stream threads */
int session_attach_stream(struct session *s, struct conn *c, uint16_t stream);
int session_attach_txn(struct session *s, struct conn *c, uint16_t stream);
void session_tcp_echo(struct conn *c, const uint8_t *buf, size_t len);
void session_tcp_crr(struct conn *c, const uint8_t *buf, size_t len);
int session_rr_start(struct session *s, struct kp_err *err);
void session_stream_eof(struct conn *c);
int session_stream_start(struct session *s, struct kp_err *err);
void session_stream_started(struct session *s);
void session_stream_stopped(struct session *s);
/* Stops c's streamer, if any, keeping its figures in c->sst; afterwards the loop may do I/O on
 * c again. */
void session_stream_stop(struct conn *c);
/* Asks every streamer of s to stop, then joins them: they stop in parallel. */
void session_streams_stop(struct session *s);
/* The streams_done wake-up: every streamer whose thread ended is stopped and its stream treated
 * as at EOF (or dropped on an error). */
void session_streams_done(struct server *srv);

/* session_udp.c: the UDP kinds' ops and the server's datagrams */
void session_on_udp(struct server *srv, const uint8_t *buf, size_t len,
                    const struct sockaddr *from);
void session_udp_rr(struct session *s, const uint8_t *buf, size_t len, const struct sockaddr *from,
                    uint64_t seq, uint64_t ts_ns);
void session_udp_stream(struct session *s, const uint8_t *buf, size_t len,
                        const struct sockaddr *from, uint64_t seq, uint64_t ts_ns);
void session_udp_started(struct session *s);
void session_udp_stopped(struct session *s);
/* Stops the UDP_RR echo thread, if any, and adds what it echoed to s's counters. */
void session_udp_echo_fold(struct session *s);

#endif
