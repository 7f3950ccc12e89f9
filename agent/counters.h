/* SPDX-License-Identifier: Apache-2.0 */
/* counters.h - the kernel and NIC counters that explain a figure, read before and after each
 * measurement (docs/result-schema.md, "counters"): TCP/UDP/IP MIB and TcpExt (/proc/net/snmp,
 * /proc/net/snmp6, /proc/net/netstat), softnet drops and time squeezes, conntrack statistics,
 * qdisc drops and overlimits and link drop counters (rtnetlink), NIC statistics by name
 * (ETHTOOL_GSTATS). Owns the parsers (pure functions over file text, unit-tested on real files)
 * and the delta as JSON; counters_read.c does the reading. Knows nothing of the protocol.
 *
 * A snapshot is read in one network namespace: the process's own (a pod reads its pod, a
 * host-network agent the node), or the one named by --counters-netns. A source the kernel does
 * not have (no conntrack module) is absent from the snapshot, never zero. */
#ifndef KPERF_AGENT_COUNTERS_H
#define KPERF_AGENT_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/kp_err.h"

#define COUNTERS_MAX      1024 /* counters kept per snapshot; more are ignored */
#define COUNTERS_NAME_MAX 64   /* "qdisc.<dev>.overlimits", "ethtool.<dev>.<stat>" */
#define COUNTERS_VERSION  1    /* "v" of the JSON below */

/* Which sources a snapshot could read (a bit each). */
enum counters_source {
    COUNTERS_SNMP = 1u << 0,      /* /proc/net/snmp: Ip, Tcp, Udp */
    COUNTERS_NETSTAT = 1u << 1,   /* /proc/net/netstat: TcpExt */
    COUNTERS_SNMP6 = 1u << 2,     /* /proc/net/snmp6: Udp6 */
    COUNTERS_SOFTNET = 1u << 3,   /* /proc/net/softnet_stat */
    COUNTERS_CONNTRACK = 1u << 4, /* /proc/net/stat/nf_conntrack and the count and max */
    COUNTERS_QDISC = 1u << 5,     /* RTM_GETQDISC */
    COUNTERS_LINK = 1u << 6,      /* RTM_GETLINK (IFLA_STATS64) */
    COUNTERS_ETHTOOL = 1u << 7,   /* ETHTOOL_GSTATS of the non-loopback interfaces */
};

struct counter {
    char name[COUNTERS_NAME_MAX];
    uint64_t value;
};

struct counters_snap {
    unsigned sources; /* enum counters_source bits that were read */
    size_t n;
    struct counter c[COUNTERS_MAX];
    int64_t conntrack_count, conntrack_max; /* -1 when absent */
};

void counters_snap_init(struct counters_snap *s); /* empty, nothing read */

/* Adds name = value (summed into an existing name). Names longer than the limit and counters
 * past COUNTERS_MAX are dropped. */
void counters_add(struct counters_snap *s, const char *name, uint64_t value);

/* The value of name, or 0 with *found = 0 (found may be NULL). */
uint64_t counters_get(const struct counters_snap *s, const char *name, int *found);

/* Parsers of one file's text into s; each returns 0, or -1 when the text is not that file.
 * /proc/net/snmp and /proc/net/netstat (pairs of "Section: names" and "Section: values"
 * lines; only the sections Ip, Tcp, Udp, TcpExt are kept, as "Section.Name"). */
KP_MUST_CHECK int counters_parse_snmp(const char *text, struct counters_snap *s);
/* /proc/net/snmp6 ("Name value" lines; the Udp6 ones kept, as "Udp6.InErrors"). */
KP_MUST_CHECK int counters_parse_snmp6(const char *text, struct counters_snap *s);
/* /proc/net/softnet_stat (one line of hex columns per CPU): "softnet.dropped" (column 2) and
 * "softnet.time_squeeze" (column 3), summed over CPUs. */
KP_MUST_CHECK int counters_parse_softnet(const char *text, struct counters_snap *s);
/* /proc/net/stat/nf_conntrack (a header line of names, one line of hex values per CPU):
 * "conntrack.<name>" summed over CPUs, for insert_failed, drop, early_drop, invalid,
 * search_restart and clash_resolve when the kernel has them. */
KP_MUST_CHECK int counters_parse_conntrack(const char *text, struct counters_snap *s);

/* Reads a snapshot in the namespace of netns_path (/run/netns/NAME; NULL: our own), from the
 * calling thread (which enters it and comes back). Sources that cannot be read are left out
 * (their bits clear). Returns 0, or -1 with err when the namespace cannot be entered. */
KP_MUST_CHECK int counters_take(struct counters_snap *s, const char *netns_path,
                                struct kp_err *err);

/* {"v": 1, "sources": [...], "deltas": {name: after - before, only those that moved},
 * "conntrack_count": N, "conntrack_max": N (when read)}. A counter that went backwards (a
 * device recreated) is left out. New reference. */
json_t *counters_delta_json(const struct counters_snap *before, const struct counters_snap *after);

/* The delta as compact JSON text of at most max bytes: when it does not fit, deltas are left
 * out (Ip and TcpExt's TCP* first, then the other MIB ones) and "trimmed": true is added.
 * NULL when even that does not fit. Caller frees. */
char *counters_text(json_t *delta, size_t max);

#endif
