/* SPDX-License-Identifier: Apache-2.0 */
/* pmtu.h - the path-MTU probe's arithmetic (docs/protocol.md, "Path MTU probe"): which packet
 * size to try next (full interface MTU first, then the family's floor, then bisection, and an
 * MTU an ICMP reported as soon as one arrives), and the path's verdict. Owns no socket:
 * client_pmtu.c sends what pmtu_next asks for and reports each outcome with pmtu_report. */
#ifndef KPERF_AGENT_PMTU_H
#define KPERF_AGENT_PMTU_H

#include <stdint.h>

#define PMTU_STEP      8    /* bisection ends when the bracket is this many bytes or fewer */
#define PMTU_IPV4_MIN  576  /* RFC 791: every IPv4 host takes datagrams of 576 bytes */
#define PMTU_IPV6_MIN  1280 /* RFC 8200: every IPv6 link carries 1280 */
#define PMTU_MAX_STEPS 16   /* a bound on packet sizes tried, whatever is reported */

/* Sizes are IP packet sizes (header included), as an MTU is. */
struct pmtu_search {
    uint32_t lo;       /* largest size seen crossing (0: none yet) */
    uint32_t hi;       /* smallest size seen not crossing, or the interface MTU + 1 */
    uint32_t floor;    /* the family's minimum, tried second */
    uint32_t icmp_mtu; /* smallest MTU an ICMP reported (0: none) */
    uint32_t top;      /* the interface MTU, tried first and, if it was lost, once more last */
    int rechecked;     /* the last try of top was made */
    unsigned steps;    /* sizes tried */
};

/* Starts a search up to iface_mtu (the sender's interface) from floor (PMTU_IPV4_MIN or
 * PMTU_IPV6_MIN; iface_mtu below it is taken as the floor). */
void pmtu_search_init(struct pmtu_search *p, uint32_t iface_mtu, uint32_t floor);

/* The size to try next, or 0 when the search is over: the interface MTU, then the floor, then
 * an ICMP-reported MTU inside the bracket, then its midpoint; once the bracket is at most
 * PMTU_STEP bytes, the interface MTU once more (a loss of the first try must not make a black
 * hole); over then, when the floor did not cross, or after PMTU_MAX_STEPS sizes. */
uint32_t pmtu_next(const struct pmtu_search *p);

/* One size's outcome: crossed (answered) or not; icmp_mtu is the MTU an ICMP "fragmentation
 * needed" / "packet too big" (or the kernel's learned path MTU) reported meanwhile, 0 if none. */
void pmtu_report(struct pmtu_search *p, uint32_t size, int crossed, uint32_t icmp_mtu);

enum pmtu_verdict {
    PMTU_UNKNOWN = 0,    /* not even the floor crossed, and the TCP check did not stall */
    PMTU_OK = 1,         /* the path carries the interfaces' MTU */
    PMTU_REDUCED = 2,    /* a smaller path MTU, and an ICMP said so: discovery works */
    PMTU_BLACK_HOLE = 3, /* a smaller path MTU and no ICMP, or the full-MSS transfer stalled */
};

struct pmtu_facts {
    uint32_t client_mtu, server_mtu; /* each end's interface MTU (0: unknown) */
    uint32_t path_mtu;               /* the search's lo (0: nothing crossed) */
    uint32_t icmp_mtu;               /* the smallest MTU an ICMP reported (0: none) */
    int tcp_full_mss;                /* 1 passed, 0 stalled, -1 not run */
};

/* The verdict: black hole if the full-MSS transfer stalled, or the path MTU is below the
 * smaller interface MTU (what TCP's MSS assumes) by more than PMTU_STEP and no ICMP reported
 * an MTU at or below what crossed (+ PMTU_STEP); reduced if one did; ok at the interface MTU. */
enum pmtu_verdict pmtu_verdict(const struct pmtu_facts *f);

/* "ok", "reduced", "black-hole", "unknown". */
const char *pmtu_verdict_name(enum pmtu_verdict v);

#endif
