/* SPDX-License-Identifier: Apache-2.0 */
/* srclimit.h - concurrent connections counted per source, so that one address cannot take
 * every connection slot of the server. A source is an IPv4 address (an IPv4-mapped IPv6
 * address counts as its IPv4 address) or an IPv6 /64 prefix (one host is usually given a
 * whole /64, so counting single IPv6 addresses would bound nothing). Owns a hash table with a
 * random seed, so a client cannot pick addresses that collide in it; an entry exists only while
 * its count is above 0, so memory is bounded by the open connections. Single-threaded (the
 * server's loop). */
#ifndef KPERF_AGENT_SRCLIMIT_H
#define KPERF_AGENT_SRCLIMIT_H

#include <stdint.h>
#include <sys/socket.h>

struct srclimit_key {
    uint8_t family; /* AF_INET or AF_INET6; 0 = not an IP source (never counted) */
    uint8_t addr[8];
    uint8_t len; /* bytes of addr in use: 4 (IPv4) or 8 (an IPv6 /64) */
};

struct srclimit; /* opaque */

/* A new, empty table sized for about `expected` sources (never NULL; aborts on OOM). Caller
 * frees with srclimit_free. */
struct srclimit *srclimit_new(unsigned expected);
void srclimit_free(struct srclimit *t); /* NULL is a no-op */

/* The source of a peer address. A family other than IPv4/IPv6 gives family 0. */
void srclimit_key_of(const struct sockaddr *sa, struct srclimit_key *k);

/* Connections currently counted for k (0 for family 0). */
unsigned srclimit_count(const struct srclimit *t, const struct srclimit_key *k);

/* Counts one more connection for k and returns the new count (family 0: not counted, 0). */
unsigned srclimit_add(struct srclimit *t, const struct srclimit_key *k);

/* Counts one connection less for k; the entry goes when its count reaches 0. A key that is not
 * counted is ignored. */
void srclimit_del(struct srclimit *t, const struct srclimit_key *k);

/* Sources with a count above 0. */
unsigned srclimit_sources(const struct srclimit *t);

#endif
