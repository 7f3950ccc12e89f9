/* SPDX-License-Identifier: Apache-2.0 */
/* echo.h - the server's TCP_RR and UDP_RR data paths: echoes on a dedicated thread with a
 * blocking socket, so a transaction costs the server one read and one write (no event-loop
 * wake-up in between), as in the reference tools. Owns the thread and its buffer; for TCP the
 * socket stays owned by the caller's libuv handle, which must not do I/O on it until
 * echo_stop; for UDP the connected socket is the echo's own. */
#ifndef KPERF_AGENT_ECHO_H
#define KPERF_AGENT_ECHO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/kp_err.h"

struct echo; /* opaque */

enum echo_start_status {
    ECHO_STARTED = 0, /* *out echoes fd on its thread */
    ECHO_ON_LOOP = 1, /* no thread (err says why); fd is unchanged, the loop may keep echoing */
    ECHO_FAILED = -1, /* fd is left in blocking mode (err says why): the caller must drop it */
};

/* Starts echoing fd (switched to blocking mode); rx and tx (borrowed, must outlive the echo)
 * count the bytes. On ECHO_STARTED *out is the echo (ours until echo_stop), else NULL. */
KP_MUST_CHECK enum echo_start_status echo_start(int fd, _Atomic uint64_t *rx, _Atomic uint64_t *tx,
                                                struct echo **out, struct kp_err *err);

/* Wakes the thread (shutdown of both directions), joins it and frees e; afterwards the caller
 * may close fd. Returns within microseconds. NULL is a no-op. */
void echo_stop(struct echo *e);

struct echo_udp; /* opaque */

/* UDP_RR: opens a UDP socket bound to local (the server's UDP port, which must be bound with
 * SO_REUSEADDR) and connected to peer, so the kernel hands the peer's datagrams to it rather
 * than to the shared socket, and echoes on a dedicated thread the datagrams that carry
 * session id (at least min_len bytes), counting them in count and bytes (borrowed). The loop
 * is bounded: it wakes at least every 100 ms and ends at deadline_ns (sysinfo clock) or at
 * echo_udp_stop. Returns NULL with err (naming the call that failed) if the socket or thread
 * cannot be set up (the caller keeps echoing on its loop). */
struct echo_udp *echo_udp_start(const struct sockaddr *local, const struct sockaddr *peer,
                                uint64_t id, size_t min_len, uint64_t deadline_ns,
                                _Atomic uint64_t *count, _Atomic uint64_t *bytes,
                                struct kp_err *err);

/* Stops echoing, joins the thread, closes the socket and frees e. NULL is a no-op. */
void echo_udp_stop(struct echo_udp *e);

#endif
