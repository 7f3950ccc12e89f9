/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_netready.h - `kperf run --netpol-readiness` on a cluster (controller/report/netpol.h):
 * on every eligible node (the first 8), a target (a pod-network agent server DaemonSet
 * kperf-server-pod-np-<i>, labelled kperf.io/netpol-target=true) and a prober Job on the same
 * node (`kperf-agent probe --kinds connect --connect-every 20ms --status 100ms` at the target,
 * through k8s_watch.h; its status lines tell when it saw a change). First, before the targets,
 * an egress deny-all (but DNS) NetworkPolicy kperf-netready-newpod-<run id> selecting the run's
 * pods labelled kperf.io/scenario=netpol-newpod; once the probers run, a second prober per node
 * with that label (the new-pod phase), stopped when each saw its probes refused. Then, at least
 * K8S_NETREADY_LEAD_MS after the probers started, a deny-all ingress policy selecting the
 * targets (kperf-netready-deny-<run id>) until every prober saw its probes refused, an allow
 * from the run's client pods (kperf-netready-allow-<run id>) until every prober saw them
 * admitted; the probes stopped, their documents read (the runner turns them into each node's
 * policy and new-pod phases: report/netpol.h). Every object carries the run's labels (cleanup
 * removes what this does not); the policies and targets are deleted at the end. */
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
