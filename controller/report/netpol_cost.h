/* SPDX-License-Identifier: Apache-2.0 */
/* netpol_cost.h - the NetworkPolicy datapath cost of a run with `--netpol-rules` (docs/report.md
 * "NetworkPolicy datapath cost"): each row measured under a policy of N rules (placement
 * "<placement>/netpol-N") set beside the same row without one, metric by metric, with the
 * change in percent; and the same for the pod-to-service rows of `--services 0,N,...` (placement
 * "<placement>/services-N" beside the row at 0 extra Services, docs/kubernetes.md "Services at
 * scale"). Reads the rows only; compare and history judge those rows like any other. */
#ifndef KPERF_REPORT_NETPOL_COST_H
#define KPERF_REPORT_NETPOL_COST_H

#include <stdio.h>

#define NETPOL_COST_SUFFIX   "/netpol-"
#define SERVICES_COST_SUFFIX "/services-"

struct report;

/* When the report has rows under a policy: a blank line, a title line and one line per (row,
 * metric) that the policy-free row carries, e.g.
 * "  pod-to-pod other-node TCP_CRR p50 us: 54.7 | 100 rules 60.8 (+11.2%) | 1000 rules 81.7
 * (+49.4%)", bullet before each (markdown: "- "). Metrics: p50 and p99 (latency rows), ops/s or
 * conn/s, Mb/s and node CPU/Gbps (throughput rows). A size whose row has no value shows "-". */
void netpol_cost_print(const struct report *rep, const char *bullet, FILE *out);

/* The same for rows at --services sizes ("<placement>/services-N") beside the row at 0 extra
 * Services (the plain placement; nothing when 0 was not a size): "Services at scale (...)", then
 * e.g. "  pod-to-service same-node TCP_CRR conn/s: 9000.0 | 1000 Services 8100.0 (-10.0%)". */
void services_cost_print(const struct report *rep, const char *bullet, FILE *out);

/* The policy size of a placement ("same-node/netpol-100" -> 100) and its length without the
 * suffix (base_len); -1 when the placement has no policy suffix. */
long netpol_cost_size(const char *placement, size_t *base_len);

#endif
