/* SPDX-License-Identifier: Apache-2.0 */
/* backend_k8s.h - the Kubernetes backend: measures in the cluster of a kubeconfig context.
 * Owns the run's life in the cluster: cluster facts, node pair, preflight (permissions, a
 * server-side dry run of the agent pod, eligible nodes), deployment (k8s_deploy objects),
 * watch-based waits (k8s_wait), one client Job per plan group whose log is the agent's JSON,
 * and cleanup (k8s_cleanup) that always runs. Leaves the order of measurements to the runner
 * and the API mechanics to kube/.
 *
 * Where each scenario runs (client -> server; servers are on node A):
 *   pod-to-pod      same-node  client pod on A -> server pod IP (kperf-server-pod-a)
 *                   other-node client pod on B -> same server
 *   host-to-host    same-node  hostNetwork client on A -> node A's IP (kperf-server-host-a)
 *                   other-node hostNetwork client on B -> same
 *   pod-to-service  client pod on A or B -> ClusterIP of kperf-svc-a (its only backend: A)
 *   pod-to-external client pod on A -> --external-server (reverse groups: --reverse)
 *   sweep           (--all-nodes) a client on every eligible node -> the servers on A */
#ifndef KPERF_K8S_BACKEND_K8S_H
#define KPERF_K8S_BACKEND_K8S_H

#include "controller/backend.h"

struct kp_err;
struct run_options;

/* A Kubernetes backend for opts (borrowed: must outlive the backend). Connects nothing yet.
 * Returns a backend (free with b->ops->destroy after cleanup) or NULL with err. */
struct backend *backend_k8s_new(const struct run_options *opts, struct kp_err *err);

/* API requests sent so far (for the overhead figures). */
unsigned backend_k8s_requests(const struct backend *b);

#endif
