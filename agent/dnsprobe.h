/* SPDX-License-Identifier: Apache-2.0 */
/* dnsprobe.h - `kperf-agent dns`: A or AAAA lookups of one name sent straight to one DNS server
 * (the cluster DNS's ClusterIP) at a fixed rate, over UDP or TCP, for a duration; what a pod's
 * resolver would see of the cluster DNS. Each lookup is one query (no retries: the probe
 * measures the server and the path, not a resolver's retry policy); over TCP each lookup is a
 * fresh connection, as a stub resolver makes one. Accounting:
 *   answered  a valid reply (dnsmsg.h) within timeout_ms, whatever its rcode
 *   lost      sent - answered: no valid reply within timeout_ms (dropped, refused, malformed)
 *   slow_1s   answered, but later than 1 s (a resolver's first retry fires at 1 s or so)
 * Latency (p50/p99/max) is over the answered lookups, send to receive, in microseconds.
 * Memory is bounded: one slot per 16-bit query id. */
#ifndef KPERF_AGENT_DNSPROBE_H
#define KPERF_AGENT_DNSPROBE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/kp_err.h"

#define DNSPROBE_SLOW_NS  1000000000ull /* an answer later than 1 s is slow */
#define DNSPROBE_RATE_MAX 10000         /* lookups per second: ids wrap after 6.5 s at this rate */

struct dnsprobe_opts {
    const char *name;     /* borrowed: the name looked up (a Service's FQDN) */
    const char *server;   /* borrowed: an IPv4 or IPv6 address */
    uint16_t port;        /* 53 */
    uint16_t qtype;       /* DNSMSG_TYPE_A (default) or DNSMSG_TYPE_AAAA */
    bool tcp;             /* false: UDP */
    unsigned rate;        /* lookups per second (10) */
    uint64_t duration_ms; /* how long lookups are sent (10 s) */
    uint64_t timeout_ms;  /* a lookup unanswered this long is lost (2000) */
};

void dnsprobe_opts_default(struct dnsprobe_opts *o);

/* Sends the lookups, waits for the last one's answer or timeout, and returns the result (new
 * reference): {"name", "server", "port", "proto", "type", "rate", "duration_ms", "timeout_ms",
 * "sent", "answered", "lost", "slow_1s", "lost_or_slow_pct", "rcode_errors", "truncated",
 * "malformed", "late", "latency_us": {"p50", "p99", "max"}}. NULL with err when it could not
 * start (bad name or address, no socket). */
json_t *dnsprobe_run(const struct dnsprobe_opts *o, struct kp_err *err);

#endif
