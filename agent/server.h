/* SPDX-License-Identifier: Apache-2.0 */
/* server.h - the kperf-agent server: one libuv loop serving every test on one TCP and one UDP
 * port, many clients at once, with the protocol's deadlines, caps and mutual token check.
 * Owns its loop, sockets and per-connection state; prints nothing (cmd/ prints the ready
 * line from the callback). */
#ifndef KPERF_AGENT_SERVER_H
#define KPERF_AGENT_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"
#include "base/testkind.h"

/* Defaults (docs/protocol.md, "Deadlines, limits"), the reasons beside them. */
#define SERVER_DEFAULT_PORT            TESTKIND_DEFAULT_PORT
#define SERVER_DEFAULT_MAX_DURATION_MS (10u * 60u * 1000u)
#define SERVER_DEFAULT_MAX_CONNS       1024
/* One source (an IPv4 address, an IPv6 /64) may hold about a quarter of the global cap: two
 * whole tests of the largest size (2 x (1 control + 128 data connections)), so a host running
 * two such tests at once fits, and so does a test that starts while the server still closes
 * the previous one's connections; one source can never starve the others. */
#define SERVER_DEFAULT_MAX_CONNS_PER_ADDR 258
#define SERVER_DEFAULT_MAX_TESTS          16
#define SERVER_DEFAULT_IDLE_TIMEOUT_MS    30000
/* HELLO..TEST_REQ is two round trips: 2 s covers round trips up to ~1 s (a thousand times a
 * cross-zone RTT) and frees the slot of a connection that never speaks 2.5x sooner than the
 * 5 s of protocol version 1. */
#define SERVER_DEFAULT_HANDSHAKE_TIMEOUT_MS 2000
/* A UDP_STREAM is one flow, and cloud networks cap one flow well below the NIC: EC2 allows
 * 5 Gbit/s per flow (10 Gbit/s inside a cluster placement group) even on 50-100 Gbit/s
 * instances such as c6gn. 10 Gbit/s covers every rate one flow can carry there; a higher
 * request would mostly measure drops and lets one request point a 100 Gbit/s stream at the
 * client's address. Raise it with --max-rate (kperf passes it when --udp-rate asks for more). */
#define SERVER_DEFAULT_MAX_RATE_BPS (10ull * 1000 * 1000 * 1000)

/* Stream connections on threads of their own, over all tests: one per stream of the largest
 * test. Measured on 2 vCPUs (loopback, 2 s): with threads for only as many streams as CPUs and
 * the rest on the event loop, 8 / 32 / 128 streams got 11 / 6 / 4 Gb/s; with a thread each,
 * 21 / 21 / 13 Gb/s. Memory stays bounded: STREAMER_BUF and a small stack per thread. */
#define SERVER_DEFAULT_STREAM_THREADS 128

struct server_opts {
    const char *bind_addr; /* borrowed; NULL = :: (dual-stack), or 0.0.0.0 without IPv6 */
    uint16_t port;         /* 0 = pick a free one (same for TCP and UDP) */
    const char *token;     /* borrowed secret; NULL = no authentication */
    size_t token_len;
    uint32_t max_duration_ms;    /* cap on omit + duration of one test */
    uint16_t max_streams;        /* cap on streams of one test */
    unsigned max_conns;          /* concurrent TCP connections */
    unsigned max_conns_per_addr; /* of those, from one source (srclimit.h) */
    unsigned max_tests;          /* concurrent tests */
    uint32_t idle_timeout_ms;    /* control connection without progress */
    /* > 0: after this long without a test (none running, none started), the server closes its
     * sockets for good and stays idle until SIGTERM: a server whose run is gone (its controller
     * was killed) stops listening by itself. Parked, not exited: a DaemonSet's pod whose
     * container exits is restarted, listening again. 0 = listen until stopped. */
    uint32_t max_idle_ms;
    uint32_t handshake_timeout_ms; /* HELLO..TEST_REQ, DATA_HELLO */
    uint64_t max_rate_bps;         /* cap on a UDP_STREAM rate */
    unsigned stream_threads;       /* most streams on threads of their own (streamer.h), over
                                    * all tests; more share the loop; 0 = none */
    unsigned stream_pool;          /* > 0: those streams share this many epoll threads
                                    * (streampool.h) instead of a thread each; 0 = off */
    const char *counters_netns;    /* borrowed; the counters' namespace (/run/netns/NAME), or
                                    * NULL: the server's own (agent/counters.h) */
};

/* Fills o with the SERVER_DEFAULT_* values (128 streams; no token; all addresses). */
void server_opts_default(struct server_opts *o);

/* Called once when the sockets are bound: addr is "ADDR:PORT" (borrowed for the call). */
typedef void server_ready_fn(const char *addr, uint16_t port, void *arg);

/* Runs the server until SIGTERM or SIGINT, then closes every connection and returns 0.
 * Returns -1 with err when it cannot bind or listen. */
KP_MUST_CHECK int server_run(const struct server_opts *o, server_ready_fn *ready, void *arg,
                             struct kp_err *err);

#endif
