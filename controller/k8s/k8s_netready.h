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

/* How long each policy is given to take effect on every node before the next step (a node
 * slower than that shows as an error: "the deny policy refused no probe"), and how long the
 * probers run before the deny (their baseline). */
#define K8S_NETREADY_WINDOW_MS 8000
#define K8S_NETREADY_LEAD_MS   2000
#define K8S_NETREADY_EVERY     "20ms"

/* The backend's netpol_readiness op (backend.h), or NULL with err. */
json_t *k8s_netready_run(struct backend *b, struct kp_err *err);

#endif
