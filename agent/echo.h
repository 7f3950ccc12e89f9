/* SPDX-License-Identifier: Apache-2.0 */
/* echo.h - the server's TCP_RR data path: echoes a connection on a dedicated thread with a
 * blocking socket, so a transaction costs the server one read and one write (no event-loop
 * wake-up in between), as in the reference tools. Owns the thread and its buffer; the socket
 * stays owned by the caller's libuv handle, which must not do I/O on it until echo_stop. */
#ifndef KPERF_AGENT_ECHO_H
#define KPERF_AGENT_ECHO_H

#include <stdatomic.h>
#include <stdint.h>

struct echo; /* opaque */

/* Starts echoing fd (switched to blocking mode); rx and tx (borrowed, must outlive the echo)
 * count the bytes. Returns NULL if no thread could be started (the caller keeps echoing on
 * its loop). */
struct echo *echo_start(int fd, _Atomic uint64_t *rx, _Atomic uint64_t *tx);

/* Wakes the thread (shutdown of both directions), joins it and frees e; afterwards the caller
 * may close fd. Returns within microseconds. NULL is a no-op. */
void echo_stop(struct echo *e);

#endif
