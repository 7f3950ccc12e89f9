/* SPDX-License-Identifier: Apache-2.0 */
/* netpol.h - NetworkPolicy enforcement readiness per node in a report (issue 33, part 1):
 * metadata.netpol = {"probe_every_ms": N, "nodes": [{"node", <figures>} or {"node", "error"}]},
 * made from the kperf.probe/v1 documents (connect probes) of each node's probers, its table
 * (text and Markdown) and its comparison in `kperf compare` (lower is better; the `readiness`
 * threshold group, absolute seconds by default). The figures of a node:
 *   policy_deny_s   a deny-all ingress policy created -> the first probe it refused
 *   policy_early    probes sent in that window (each admitted though the policy existed)
 *   policy_allow_s  an allow policy created -> the first probe admitted again
 *   pod_deny_s      a new pod under an egress deny: its first probe -> the first refused
 *   pod_early       probes that pod got through before the deny took effect
 * Knows nothing of how the probes ran (controller/k8s/ makes them). */
#ifndef KPERF_REPORT_NETPOL_H
#define KPERF_REPORT_NETPOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "controller/report/compare_metrics.h"

/* The judged figures (seconds), in table order. */
#define NETPOL_TIMES 3
extern const char *const netpol_times[NETPOL_TIMES];

/* The policy phase of one node from its prober's document (borrowed): a deny policy created at
 * deny_at, an allow at allow_at (Unix seconds, the controller's clock). Sets policy_deny_s,
 * policy_early and policy_allow_s on rec, or "error" when the probes show no deny or no allow.
 * Returns 0, or -1 when an error was set. */
int netpol_policy_phase(json_t *rec, const json_t *probe, double deny_at, double allow_at);

/* The new-pod phase from that pod's prober document: sets pod_deny_s and pod_early on rec, or
 * "error" (the deny never took effect). Returns 0 or -1. */
int netpol_pod_phase(json_t *rec, const json_t *probe);

/* Prints the per-node table of md.netpol (nothing when there is none). */
void netpol_print(const json_t *md, bool markdown, FILE *out);

/* Compares each node's figures of two reports' metadata (borrowed): [{"node", "figure", "base",
 * "new", "delta", "verdict"}] for each time both have ("regression" when NEW is slower by more
 * than th), and each early-packet count, shown, never judged. A node with an error in NEW and
 * figures in BASE is a regression. New reference (empty array when either has none). */
json_t *netpol_compare(const json_t *md_base, const json_t *md_new, const struct cmp_threshold *th,
                       size_t *regressions, size_t *improvements);

/* Prints a comparison made by netpol_compare (nothing when it is empty). */
void netpol_compare_print(const json_t *cmp, bool markdown, FILE *out);

#endif
