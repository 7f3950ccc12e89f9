/* SPDX-License-Identifier: Apache-2.0 */
/* peeraddr.h - a peer's address as the family it really is. A dual-stack socket (the server
 * listens on :: by default) reports an IPv4 peer as the IPv4-mapped IPv6 address
 * ::ffff:a.b.c.d; comparisons and log lines treat it as the IPv4 address a.b.c.d. */
#ifndef KPERF_AGENT_PEERADDR_H
#define KPERF_AGENT_PEERADDR_H

#include <sys/socket.h>

/* Copies sa to out, turning an IPv4-mapped IPv6 address into the AF_INET address (same
 * port). Any other address is copied as it is. */
void peeraddr_unmap(const struct sockaddr *sa, struct sockaddr_storage *out);

/* 1 when a and b are the same IP address (ports ignored; a mapped address equals its IPv4
 * one), else 0. */
int peeraddr_same_ip(const struct sockaddr *a, const struct sockaddr *b);

#endif
