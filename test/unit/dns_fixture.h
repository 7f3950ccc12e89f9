/* SPDX-License-Identifier: Apache-2.0 */
/* dns_fixture.h - a `kperf-agent dns` document for the tests (test_dnsresult.c,
 * test_compare_dns.c). Header-only test helper (static inline). */
#ifndef KPERF_TEST_DNS_FIXTURE_H
#define KPERF_TEST_DNS_FIXTURE_H

#include <stdint.h>

#include <jansson.h>

#include "base/hist.h"

/* A document as the agent prints it: sent lookups, `lost` of them unanswered, `slow` of the
 * answered later than 1 s. */
static inline json_t *dns_doc(const char *proto, int sent, int lost, int slow)
{
    struct hist *h = hist_new();
    json_t *d;

    hist_record_n(h, 300000, (uint64_t)(sent - lost - slow)); /* 300 us */
    hist_record_n(h, 1500000000ull, (uint64_t)slow);          /* 1.5 s */
    d = json_pack("{s:s, s:s, s:i, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:i, s:i, "
                  "s:i, s:i, s:{s:f, s:f, s:f}, s:o}",
                  "name", "kperf-svc-a.perf.svc.cluster.local", "server", "198.19.240.10", "port",
                  53, "proto", proto, "type", "A", "rate", 20, "duration_ms", 5000, "timeout_ms",
                  5000, "sent", sent, "answered", sent - lost, "lost", lost, "slow_1s", slow,
                  "lost_or_slow_pct", 100.0 * (lost + slow) / sent, "rcode_errors", 0, "truncated",
                  0, "malformed", 0, "late", 0, "latency_us", "p50", 300.0, "p99", 300.0, "max",
                  1.5e6, "histogram", hist_to_json(h));
    hist_free(h);
    return d;
}

#endif
