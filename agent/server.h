/* SPDX-License-Identifier: Apache-2.0 */
/* server.h - the kperf-agent server: one libuv loop serving every test on one TCP and one UDP
 * port, many clients at once, with the protocol's deadlines, caps and token check.
 * Owns its loop, sockets and per-connection state; prints nothing (cmd/ prints the ready
 * line from the callback). */
#ifndef KPERF_AGENT_SERVER_H
#define KPERF_AGENT_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"

struct server_opts {
    const char *bind_addr; /* borrowed; NULL = 0.0.0.0 */
    uint16_t port;         /* 0 = pick a free one (same for TCP and UDP) */
    const char *token;     /* borrowed secret; NULL = no authentication */
    size_t token_len;
    uint32_t max_duration_ms;      /* cap on omit + duration of one test */
    uint16_t max_streams;          /* cap on streams of one test */
    unsigned max_conns;            /* concurrent TCP connections */
    unsigned max_tests;            /* concurrent tests */
    uint32_t idle_timeout_ms;      /* control connection without progress */
    uint32_t handshake_timeout_ms; /* HELLO..TEST_REQ, DATA_HELLO */
    uint64_t max_rate_bps;         /* cap on a UDP_STREAM rate */
};

/* Fills o with the defaults (port 5201, 10 min, 128 streams, 1024 conns, 16 tests, 30 s idle,
 * 5 s handshake, 100 Gbit/s). */
void server_opts_default(struct server_opts *o);

/* Called once when the sockets are bound: addr is "ADDR:PORT" (borrowed for the call). */
typedef void server_ready_fn(const char *addr, uint16_t port, void *arg);

/* Runs the server until SIGTERM or SIGINT, then closes every connection and returns 0.
 * Returns -1 with err when it cannot bind or listen. */
KP_MUST_CHECK int server_run(const struct server_opts *o, server_ready_fn *ready, void *arg,
                             struct kp_err *err);

#endif
