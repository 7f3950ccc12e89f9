/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_shape.h - a node's shape, and nodes of the same shape (issue 30): what a saved run
 * records of each node it used (instance type, zone, arch, node group or pool: k8s_facts
 * node_info) is enough to find a like node when the named one is gone, as node groups roll and
 * Karpenter replaces nodes. --nodes-from names the report's nodes; a named node that no longer
 * exists or can no longer run agents is replaced by the best eligible node of its shape (same
 * arch and instance type required; same node group, then same zone preferred; then by name),
 * and the ranked table of the cluster's nodes says why each other node was not taken. Pure
 * functions over API JSON but k8s_shape_wanted, which reads the report and logs. */
#ifndef KPERF_K8S_K8S_SHAPE_H
#define KPERF_K8S_K8S_SHAPE_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/run_options.h"

/* The node's group or pool label as "key=value" (caller frees), or NULL: the first present of
 * eks.amazonaws.com/nodegroup, karpenter.sh/nodepool, alpha.eksctl.io/nodegroup-name,
 * cloud.google.com/gke-nodepool, tke.cloud.tencent.com/nodepool-id,
 * kubernetes.azure.com/agentpool. */
char *k8s_shape_node_group(const json_t *node);

/* How well node (core/v1 Node) has the shape of want (a report's metadata.nodes[] entry):
 * -1 when it cannot stand in (another arch or instance type, both known), with *why set
 * ("instance type m5.large, not c5.xlarge"; caller frees; why may be NULL); else a score, higher
 * is better: 2 for the same node group, 1 for the same zone. */
int k8s_shape_score(const json_t *want, const json_t *node, char **why);

/* The nodes a run with --nodes-from wants, substituted where needed. report: the saved run
 * (borrowed); all: every Node of the cluster, eligible: those that may run agents (filtered by
 * f), both borrowed. *a, *b: the names to use (caller frees; *b NULL when the report had no
 * client node). *subst: new array of {"role","was","now","why"} for each node replaced (empty
 * when none). Returns 0, or -1 with err when a named node is gone and no eligible node has its
 * shape. */
KP_MUST_CHECK int k8s_shape_nodes_from(const json_t *report, const json_t *all,
                                       const json_t *eligible, const struct k8s_node_filter *f,
                                       char **a, char **b, json_t **subst, struct kp_err *err);

/* The ranked table of the cluster's nodes (all, borrowed) for a run: [{"name", "rank" (1 = first
 * choice, eligible nodes only), "instance_type", "zone", "arch", "node_group", "excluded" (why,
 * absent when eligible)}], eligible nodes first (those of want's shape by score, then by name;
 * want NULL: by name), then the excluded ones by name. f: the run's filter. New reference. */
json_t *k8s_shape_rank(const json_t *all, const struct k8s_node_filter *f, const json_t *want);

/* The table as text, one line per node (new string, caller frees), for the log. */
char *k8s_shape_table(const json_t *rank);

/* The nodes --nodes (ro->node_a, node_b) or --nodes-from (ro->nodes_from, read here, shapes
 * substituted: k8s_shape_nodes_from) name, into *a and *b (caller frees; NULL when not named).
 * all, eligible, f as above. With --nodes-from: logs the ranked table (info) and each
 * substitution (warn), and records metadata "node_table" and, when any, "nodes_substituted" in
 * facts (borrowed). Returns 0, or -1 with err. */
KP_MUST_CHECK int k8s_shape_wanted(const struct run_options *ro, const json_t *all,
                                   const json_t *eligible, const struct k8s_node_filter *f,
                                   char **a, char **b, json_t *facts, struct kp_err *err);

/* Sets "in_place_of" (the replaced node's name) on each metadata "nodes" entry of facts
 * (borrowed) that metadata "nodes_substituted" says stands in for another. */
void k8s_shape_mark(json_t *facts);

#endif
