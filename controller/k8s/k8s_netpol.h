/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_netpol.h - the run's NetworkPolicy for --netpol-rules (controller/plan.h, "NetworkPolicy
 * datapath cost"): one networking.k8s.io/v1 NetworkPolicy `kperf-netpol-<run id>` in the run's
 * namespace, selecting its pod-network servers (kperf.io/role=server, kperf.io/network=pod),
 * Ingress only, with N rules: the first admits the run's client pods on every port, the other
 * N - 1 each admit one TEST-NET-1 address (192.0.2.0/24, which nothing uses) on one TCP port
 * of its own, so the CNI must program and walk N rules while kperf's traffic passes. The
 * object carries the run's labels: every cleanup (the run's, `kperf cleanup`, the next run
 * after a kill) deletes it with the rest. */
#ifndef KPERF_K8S_K8S_NETPOL_H
#define KPERF_K8S_K8S_NETPOL_H

#include <signal.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/kube/kube.h"

/* How long a new policy size is given to reach the nodes' datapaths before rows are measured:
 * the API has no "programmed" status for a NetworkPolicy (docs/kubernetes.md). */
#define K8S_NETPOL_SETTLE_MS 5000

/* The policy of rules (>= 1) rules (new reference). */
json_t *k8s_netpol_object(const struct k8s_objects_opts *o, unsigned rules);

/* Puts the policy of rules rules in place (created, or its spec replaced), then waits
 * K8S_NETPOL_SETTLE_MS; rules 0 deletes it (gone already is fine). *stop cuts the wait short
 * (-1, "interrupted"). Returns 0 or -1 with err. */
KP_MUST_CHECK int k8s_netpol_apply(struct kube_client *kc, const struct k8s_objects_opts *o,
                                   unsigned rules, volatile sig_atomic_t *stop, struct kp_err *err);

#endif
