/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_netready.h - `kperf run --netpol-readiness` on a cluster (controller/report/netpol.h):
 * on node A and node B, a target (a pod-network agent server DaemonSet
 * kperf-server-pod-np-a / -np-b, labelled kperf.io/netpol-target=true) and a prober Job on the
 * same node (`kperf-agent probe --kinds connect --connect-every 20ms` at the target, through
 * k8s_watch.h); then a deny-all ingress NetworkPolicy selecting the targets
 * (kperf-netready-deny-<run id>) K8S_NETREADY_LEAD_MS after the probers started,
 * K8S_NETREADY_WINDOW_MS, an allow from the run's client pods
 * (kperf-netready-allow-<run id>), the same wait; the probes stopped, their documents read
 * (the runner turns them into the policy phase of each node: report/netpol.h). Every object carries
 * the run's labels (cleanup removes what this does not); the policies and targets are deleted at
 * the end. */
#ifndef KPERF_K8S_K8S_NETREADY_H
#define KPERF_K8S_K8S_NETREADY_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"

/* How long each phase waits at most for every node's prober to see the change (its status
 * lines, every K8S_NETREADY_STATUS: a phase ends as soon as all have, K8S_NETREADY_SETTLE_MS
 * later; a node slower than the bound shows as an error: "the deny policy refused no probe"),
 * and how long the policy probers run before the deny (their baseline). */
#define K8S_NETREADY_WINDOW_MS 15000
#define K8S_NETREADY_SETTLE_MS 200
#define K8S_NETREADY_LEAD_MS   2000
#define K8S_NETREADY_EVERY     "20ms"
#define K8S_NETREADY_STATUS    "100ms"

/* The backend's netpol_readiness op (backend.h), or NULL with err. */
json_t *k8s_netready_run(struct backend *b, struct kp_err *err);

#endif
