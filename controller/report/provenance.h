/* SPDX-License-Identifier: Apache-2.0 */
/* provenance.h - ranking the provenance differences `kperf compare` finds, so that a changed
 * datapath setting (a CNI setting such as Cilium's host routing, kube-proxy's mode, an MTU, a
 * node's or the external host's NIC driver, speed, queues or offloads, a TCP sysctl) is listed
 * first as the likely explanation, then versions (kernel, CNI, Kubernetes, OS), then the rest (node
 * names, zones); and finding them: the metadata flattened to paths and compared, and the agent
 * placement of matched rows. Knows nothing of how the metadata was gathered. */
#ifndef KPERF_REPORT_PROVENANCE_H
#define KPERF_REPORT_PROVENANCE_H

#include <stdio.h>

#include <jansson.h>

/* The class of a flattened metadata path ("cni.settings.host_routing",
 * "nodes[server].net.nics[0].speed_mbps"): "setting", "version" or "other" (static). */
const char *provenance_kind(const char *field);

/* Sets "kind" on every {field, base, new} entry of diff and sorts it: settings, versions,
 * others; stable within a class. A setting that one side could not read ("unknown (forbidden:
 * ...)") is kind "unread", sorted with the others: a change of what kperf knew, not of the
 * datapath. */
void provenance_rank(json_t *diff);

/* "Likely explanation: FIELD changed from B to N" when the first entry of a ranked diff is a
 * setting (with the count of other changed settings); nothing otherwise. */
void provenance_print_likely(const json_t *diff, const char *prefix, FILE *out);

/* Adds to acc (an object keyed by field, base and new value) each value of the agent's
 * placement (the first sample's `placement`: same kernel, client threads, write size,
 * low-unsent, the client's CPUs and CPU quota) that differs between the matched rows rb and
 * rn (borrowed), as {field: "samples.placement.F", base, new, rows: how many rows changed so}.
 * A field only one side reports (an older agent) is not a change of placement. */
void provenance_placement_diff(json_t *acc, const json_t *rb, const json_t *rn);

/* [{field, base, new, kind}] for every metadata value that differs between mb and mn (absent =
 * null; run-specific keys such as start_time left out), then the placement changes gathered in
 * placements (may be NULL), ranked by provenance_rank. New reference. */
json_t *provenance_diff(const json_t *mb, const json_t *mn, const json_t *placements);

#endif
