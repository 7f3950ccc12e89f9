/* SPDX-License-Identifier: Apache-2.0 */
/* provenance.h - ranking the provenance differences `kperf compare` finds, so that a changed
 * datapath setting (a CNI setting such as Cilium's host routing, kube-proxy's mode, an MTU, a
 * node's or the external host's NIC driver, speed, queues or offloads, a TCP sysctl) is listed
 * first as the likely explanation, then versions (kernel, CNI, Kubernetes, OS), then the rest (node
 * names, zones). Knows nothing of how the metadata was gathered. */
#ifndef KPERF_REPORT_PROVENANCE_H
#define KPERF_REPORT_PROVENANCE_H

#include <stdio.h>

#include <jansson.h>

/* The class of a flattened metadata path ("cni.settings.host_routing",
 * "nodes[server].net.nics[0].speed_mbps"): "setting", "version" or "other" (static). */
const char *provenance_kind(const char *field);

/* Sets "kind" on every {field, base, new} entry of diff and sorts it: settings, versions,
 * others; stable within a class. */
void provenance_rank(json_t *diff);

/* "Likely explanation: FIELD changed from B to N" when the first entry of a ranked diff is a
 * setting (with the count of other changed settings); nothing otherwise. */
void provenance_print_likely(const json_t *diff, const char *prefix, FILE *out);

#endif
