/* SPDX-License-Identifier: Apache-2.0 */
/* pmtu.c - see pmtu.h. */
#include "agent/pmtu.h"

#include <string.h>

void pmtu_search_init(struct pmtu_search *p, uint32_t iface_mtu, uint32_t floor)
{
    memset(p, 0, sizeof(*p));
    p->floor = floor;
    p->top = iface_mtu > floor ? iface_mtu : floor;
    p->hi = p->top + 1;
}

uint32_t pmtu_next(const struct pmtu_search *p)
{
    if (p->steps >= PMTU_MAX_STEPS)
        return 0;
    if (p->steps == 0)
        return p->hi - 1; /* the interface MTU: the common case ends here */
    if (p->lo == 0 && p->hi <= p->floor)
        return 0; /* not even the floor crossed */
    if (p->lo && p->hi - p->lo <= PMTU_STEP)
        return p->lo < p->top && !p->rechecked ? p->top : 0;
    if (p->icmp_mtu > p->lo && p->icmp_mtu < p->hi)
        return p->icmp_mtu; /* a router said so: one try confirms it */
    if (p->lo == 0)
        return p->floor; /* before bisecting, proof that something crosses */
    return p->lo + (p->hi - p->lo) / 2;
}

void pmtu_report(struct pmtu_search *p, uint32_t size, int crossed, uint32_t icmp_mtu)
{
    if (size == p->top && p->steps > 0) {
        p->rechecked = 1; /* the last try: a crossing top ends the search at the top */
        if (crossed)
            p->lo = p->top, p->hi = p->top + 1;
    }
    p->steps++;
    if (icmp_mtu && (p->icmp_mtu == 0 || icmp_mtu < p->icmp_mtu))
        p->icmp_mtu = icmp_mtu;
    if (crossed && size > p->lo)
        p->lo = size;
    if (!crossed && size < p->hi)
        p->hi = size;
    if (crossed && size == p->icmp_mtu && p->hi > size + 1)
        p->hi = size + 1; /* the reported MTU crossed: the hop said nothing larger passes */
}

enum pmtu_verdict pmtu_verdict(const struct pmtu_facts *f)
{
    uint32_t want = f->client_mtu;

    if (f->server_mtu && (want == 0 || f->server_mtu < want))
        want = f->server_mtu;
    if (f->tcp_full_mss == 0)
        return PMTU_BLACK_HOLE;
    if (f->path_mtu == 0)
        return PMTU_UNKNOWN;
    if (want == 0 || f->path_mtu + PMTU_STEP >= want)
        return PMTU_OK;
    if (f->icmp_mtu && f->icmp_mtu <= f->path_mtu + PMTU_STEP)
        return PMTU_REDUCED;
    return PMTU_BLACK_HOLE;
}

const char *pmtu_verdict_name(enum pmtu_verdict v)
{
    static const char *const names[] = {"unknown", "ok", "reduced", "black-hole"};
    return v <= PMTU_BLACK_HOLE ? names[v] : "unknown";
}
