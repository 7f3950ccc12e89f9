/* SPDX-License-Identifier: Apache-2.0 */
/* probe_sess.h - one test session of `kperf-agent probe` against an unchanged kperf-agent
 * server (docs/protocol.md): control connection, handshake with the optional token, the
 * TCP_RR data connection, START; and its end (STOP, RESULT awaited briefly, close).
 * Blocking sockets with deadlines; no threads, no printing. */
#ifndef KPERF_AGENT_PROBE_SESS_H
#define KPERF_AGENT_PROBE_SESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/kp_err.h"

struct probe_sess {
    int ctrl; /* -1 when closed */
    int data; /* TCP_RR: the echo connection; -1 otherwise */
    uint64_t session;
    uint64_t opened_ns;   /* when START was answered */
    uint32_t duration_ms; /* what the session was granted */
};

struct probe_target {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    const char *token; /* borrowed; NULL = none */
    size_t token_len;
    uint64_t timeout_ms; /* each connect and each handshake step */
};

/* Resolves a numeric or named host and port into t->addr. Returns 0 or -1 with err. */
KP_MUST_CHECK int probe_target_resolve(struct probe_target *t, const char *host, uint16_t port,
                                       struct kp_err *err);

/* A non-blocking TCP connect to the target started (fd returned, -1 with errno on failure). */
int probe_connect_start(const struct probe_target *t);

/* Opens a session of test (PROTO_TCP_RR or PROTO_UDP_RR) with msg_size and duration_ms and
 * starts it. Returns 0 with *s filled, or -1 with err (everything closed). */
KP_MUST_CHECK int probe_sess_open(const struct probe_target *t, uint8_t test, uint32_t msg_size,
                                  uint32_t duration_ms, struct probe_sess *s, struct kp_err *err);

/* STOP, RESULT awaited at most wait_ms (0: not at all), then closes both connections. */
void probe_sess_close(struct probe_sess *s, uint64_t wait_ms);

#endif
