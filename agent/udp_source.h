/* SPDX-License-Identifier: Apache-2.0 */
/* udp_source.h - the server's sending end of a reverse UDP_STREAM: a UDP socket bound to the
 * server's address and port and connected to the receiver, so that the kernel reports an ICMP
 * error for it (port or host unreachable: nobody receives there) on the next call, and hands it
 * the receiver's keep-alives rather than the shared socket. Owns the socket and one datagram
 * buffer; pacing and accounting stay with the session (session.c). Non-blocking, no thread:
 * the session's pacing timer calls it. */
#ifndef KPERF_AGENT_UDP_SOURCE_H
#define KPERF_AGENT_UDP_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/kp_err.h"

struct udp_source; /* opaque */

enum udp_source_status {
    UDP_SOURCE_OK = 0,
    UDP_SOURCE_FULL = 1,        /* the socket buffer is full: try again later */
    UDP_SOURCE_UNREACHABLE = 2, /* an ICMP error came back (errno in *why) */
    UDP_SOURCE_FAILED = 3,      /* another error (errno in *why) */
};

/* Opens the socket: bound to local (the server's UDP address and port, whose shared socket
 * must be bound with SO_REUSEADDR) and connected to peer; datagrams of size bytes carry
 * session id. Returns the source (caller frees with udp_source_close) or NULL with err naming
 * the call that failed. */
struct udp_source *udp_source_open(const struct sockaddr *local, const struct sockaddr *peer,
                                   uint64_t session, size_t size, struct kp_err *err);

/* Sends one datagram with sequence number seq, stamped with the sysinfo clock. On anything but
 * UDP_SOURCE_OK nothing was sent; *why is the errno for UNREACHABLE and FAILED. */
enum udp_source_status udp_source_send(struct udp_source *u, uint64_t seq, int *why);

/* Reads at most max datagrams the receiver sent (without blocking) and adds the session's
 * keep-alives (UDP hellos) to *keepalives. Returns UDP_SOURCE_OK when the socket has no more,
 * or UNREACHABLE / FAILED with *why when a pending error came back instead. */
enum udp_source_status udp_source_poll(struct udp_source *u, unsigned max, unsigned *keepalives,
                                       int *why);

void udp_source_close(struct udp_source *u); /* NULL is a no-op */

#endif
