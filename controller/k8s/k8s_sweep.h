/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_sweep.h - sweep mode (--all-nodes) of the Kubernetes backend: every eligible node is the
 * client of one pair and the server of another. Nodes are sorted by name and paired in a ring
 * (node i -> node i+1, the last -> the first), so no reference node carries every client and a
 * slow node shows in both pairs it is part of (report/outlier.h attributes it). Servers: node
 * A's servers for A, and one server DaemonSet per network ("kperf-server-<net>-sweep") on the
 * other eligible nodes. Internal to controller/k8s/. */
#ifndef KPERF_K8S_K8S_SWEEP_H
#define KPERF_K8S_K8S_SWEEP_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"
#include "controller/plan.h"

struct k8s_backend;

/* The ring over node names (array of strings, any order): [{"client", "server"}] with clients
 * in name order. One node pairs with itself; none gives []. New reference. Pure. */
json_t *k8s_sweep_ring(const json_t *names);

/* Sets "cni_version" on each node fact of infos (array of k8s_facts_node_info objects) from the
 * pods of the CNI DaemonSet (core/v1 Pod array, borrowed): the image tag of container `container`
 * (or the first) of the pod on that node, so a sweep shows a CNI upgrade half rolled out. Pure. */
void k8s_sweep_cni_versions(json_t *infos, const json_t *pods, const char *container);

/* Replaces the other-node groups with one group per eligible node (client node = that node) and
 * records metadata "sweep": {"pairs": ring, "nodes": [node facts, k8s_facts_node_info]}. */
void k8s_sweep_plan(struct k8s_backend *b, struct plan *plan);

/* After node A's servers are ready: the sweep server DaemonSets on every other eligible node,
 * waited for Ready, their pod (or host) IPs recorded. No-op outside sweep mode. 0 or -1. */
KP_MUST_CHECK int k8s_sweep_deploy(struct k8s_backend *b, struct kp_err *err);

/* The server address for a sweep group g on network "pod" or "host" (the ring successor of
 * g->node), or NULL when g is not a sweep group (the caller's usual address applies). */
const char *k8s_sweep_server(const struct k8s_backend *b, const struct plan_group *g,
                             const char *network);

/* run_client of a sweep group with --parallel N > 1: the pairs of a sweep are split into rounds
 * of node-disjoint pairs (greedy, in ring order: 2 rounds for an even node count, 3 for odd);
 * when the runner asks for a group that was not started yet, the pending Jobs of other rounds
 * are collected first, then its Job and those of up to N-1 more not-yet-run groups of the same
 * round (same scenario and direction) are created at once; the runner's later calls for those
 * collect the results started ahead (a call whose spec differs gets a fresh Job). */
KP_MUST_CHECK int k8s_sweep_run_client(struct k8s_backend *b, const struct run_spec *spec,
                                       json_t **doc, struct kp_err *err);

/* Takes what the node watch (b->nodewatch, k8s_nodewatch.h) found since the last call: a node
 * whose network turned not ready mid-run fails its pairs as client at once (cause
 * cni-not-ready, the kubelet's message), and its node fact records "skipped", "cause",
 * "not_ready_since_unix_s" (the Ready condition's lastTransitionTime) and "diagnosed_unix_s"
 * (when kperf saw it). No-op outside a sweep or without the watch. */
void k8s_sweep_sync_nodes(struct k8s_backend *b);

/* The nodes found NotReady during the sweep (new array of names, maybe empty). */
json_t *k8s_sweep_down_nodes(const struct k8s_backend *b);

/* Deletes the Jobs started ahead and never collected and frees the sweep's run state. */
void k8s_sweep_free(struct k8s_backend *b);

#endif
