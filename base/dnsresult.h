/* SPDX-License-Identifier: Apache-2.0 */
/* dnsresult.h - the document `kperf-agent dns` prints (docs/kube-sim.md, "Cluster DNS"): its
 * strict check, and its translation into a kperf.result/v1 results[] entry so that DNS lookups
 * become report rows like any other (docs/kubernetes.md, "DNS per node"): lookups over UDP are
 * a UDP_RR sample, over TCP (a connection per lookup) a TCP_CRR sample, each with the lookup
 * counts in "dns" {proto, type, name, server, rate, timeout_ms, sent, answered, lost, slow_1s,
 * lost_pct, slow_pct, rcode_errors, truncated, malformed, late}. The controller reads the
 * agent's document here, never through agent/. Knows nothing of pods or reports. */
#ifndef KPERF_BASE_DNSRESULT_H
#define KPERF_BASE_DNSRESULT_H

#include <stddef.h>

#include <jansson.h>

#include "base/kp_err.h"

#define DNSRESULT_MAX_BYTES (4u << 20) /* a longer document is refused unparsed */

/* Parses and checks the agent's dns document in buf[0..len): every field present with its
 * kind, none unknown, counts that add up (answered + lost = sent, slow_1s <= answered, the
 * histogram's count = answered). 0 with *doc (new reference), or -1 with err naming the
 * field. */
KP_MUST_CHECK int dnsresult_parse(const char *buf, size_t len, json_t **doc, struct kp_err *err);
KP_MUST_CHECK int dnsresult_validate(const json_t *doc, struct kp_err *err);

/* The results[] entry of a checked dns document: test UDP_RR (proto udp) or TCP_CRR (tcp),
 * sample `sample`, start_time (RFC 3339, copied), ops = the lookups answered in time, their
 * latency and histogram, udp {sent, received, lost, loss_pct} for UDP, zero CPU figures, and
 * dns {...} as above. New reference; passes result_validate_entry. */
json_t *dnsresult_entry(const json_t *dns, int sample, const char *start_time);

/* A whole kperf.result/v1 document of n checked dns documents (one entry each), the client
 * named hostname, the server and port of the first. New reference; passes result_validate. */
json_t *dnsresult_doc(const json_t *const *dns, size_t n, const char *hostname,
                      const char *start_time);

#endif
