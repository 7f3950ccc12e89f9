/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_facts.h - cluster facts from API JSON: which nodes may run agents (Ready, schedulable,
 * matching --node-selector, taints tolerated), the node pair, per-node facts for the report,
 * the CNI and its settings (per CNI: k8s_facts_cni.h; kube-proxy's mode: k8s_facts_proxy.h),
 * and what an object the API refused leaves: "unknown (forbidden: ...)". Pure functions over
 * objects the caller fetched (k8s_provenance.c); no I/O, so every rule is unit-tested with
 * fixtures. */
#ifndef KPERF_K8S_K8S_FACTS_H
#define KPERF_K8S_K8S_FACTS_H

#include <jansson.h>
#include <stddef.h>

#include "base/kp_err.h"
#include "controller/run_options.h"

/* What makes a node eligible. Arrays borrowed for the calls. */
struct k8s_node_filter {
    const struct run_label *selector; /* every key=value must be a node label */
    size_t n_selector;
    const json_t *tolerations; /* core/v1 Toleration array or NULL */
    const char *arch; /* --arch's choice (k8s_arch_pick): other architectures are ineligible;
                       * NULL = any */
};

/* Whether agents may run on node (a core/v1 Node). Returns 1 when eligible; 0 with *why set
 * (static text or a caller-freed string in *why_owned) when not: "not Ready", "cordoned
 * (unschedulable)", "taint dedicated=x:NoSchedule not tolerated", "OS windows, not linux ...",
 * "virtual node (eks.amazonaws.com/compute-type=fargate) ...", "does not match
 * --node-selector a=b", "architecture arm64, not amd64 (--arch)". why_owned may be NULL (then the
 * reason is dropped). */
int k8s_facts_node_eligible(const json_t *node, const struct k8s_node_filter *f, char **why_owned);

/* NULL when the node (core/v1 Node, borrowed) is Ready; else why not, from its Ready condition:
 * "Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)", or "no Ready
 * condition". Caller frees. */
char *k8s_facts_node_not_ready(const json_t *node);

/* The node's kubernetes.io/hostname label (borrowed), or its name when the label is missing. */
const char *k8s_facts_node_hostname(const json_t *node);
const char *k8s_facts_node_name(const json_t *node); /* borrowed; "" when missing */
const char *k8s_facts_node_zone(const json_t *node); /* topology.kubernetes.io/zone or NULL */
/* The node's CPU architecture (borrowed): its kubernetes.io/arch label, else
 * status.nodeInfo.architecture; NULL when it has neither (then no --arch rule excludes it). */
const char *k8s_facts_node_arch(const json_t *node);

/* Report facts of one node: {"name","role","kernel","os_image","container_runtime","instance_type",
 * "zone","internal_ip","arch","node_group"} (absent fields omitted; node_group "key=value" of
 * k8s_shape.h's labels). role borrowed. New reference. */
json_t *k8s_facts_node_info(const json_t *node, const char *role);

/* Chooses node A (servers, same-node clients) and node B (other-node clients) among eligible
 * nodes (array of Node objects, borrowed). want_a/want_b: names from --nodes (either NULL).
 * Default: the first pair in name order that shares a zone, else the first two nodes (with
 * *note set to "no two eligible nodes share a zone; ..."). With a single eligible node, *b is
 * NULL (other-node groups are skipped by the caller). *a and *b are borrowed from nodes, *note is
 * static. Returns 0, or -1 with the reason (no eligible node, a named node missing or ineligible).
 */
KP_MUST_CHECK int k8s_facts_choose_pair(const json_t *nodes, const char *want_a, const char *want_b,
                                        const json_t **a, const json_t **b, const char **note,
                                        struct kp_err *err);

/* The node pair of an earlier report (--nodes-from): metadata.nodes[] entries with role
 * "server" (A) and "client" (B). *a, *b: caller frees (*b may be NULL). Returns 0 or -1. */
KP_MUST_CHECK int k8s_facts_nodes_from_report(const json_t *report, char **a, char **b,
                                              struct kp_err *err);

/* A GET the API refused, as the core/v1 Status it answers with: {"kind": "Status", "status":
 * "Failure", "code": http_status, "reason": reason, "message": message, "details": {"kind":
 * plural, "name": name}} (reason, message may be NULL). New reference. */
json_t *k8s_facts_status(int http_status, const char *reason, const char *message,
                         const char *plural, const char *name);

/* Why answer (borrowed: an object or the Status of a failed GET) could not be read: NULL for an
 * object or NULL; else "unknown (forbidden: MESSAGE)", "unknown (not found: configmaps NAME)" or
 * "unknown (HTTP 500 REASON: MESSAGE)". Caller frees. Facts kperf could not read are recorded
 * with this text, never as a default. */
char *k8s_facts_unread(const json_t *answer);

/* The CNI from kube-system DaemonSets (items array, borrowed) and the API's answers for the
 * cilium-config / amazon-vpc-cni ConfigMaps (a ConfigMap, the Status of a failed GET, or NULL
 * when not asked). New object {"name": "aws-vpc-cni"|"cilium"|"calico"|"flannel"|"weave"|
 * "kube-router"|"antrea"|"canal"|"tke-vpc-cni"|"tke-global-router"|...|"unknown", "version":
 * tag, "settings": {"image", and per CNI (k8s_facts_cni.h)}}. Several CNIs (chaining) are listed
 * in "also". A setting whose ConfigMap the API refused is "unknown (forbidden: ...)". */
json_t *k8s_facts_cni(const json_t *daemonsets, const json_t *cilium_config,
                      const json_t *vpc_cni_config);

/* The CPU limit an admitted pod's containers carry (the first container's
 * resources.limits.cpu; kperf's agents ask for none, so a LimitRange default or a mutating
 * webhook put it there), NULL when none; *why (may be NULL) gets the pod's
 * kubernetes.io/limit-ranger annotation, or NULL. Both borrowed from pod. */
const char *k8s_facts_pod_cpu_limit(const json_t *pod, const char **why);

/* The tag of an image reference ("repo/x:v1.2@sha256:..." -> "v1.2"; no tag -> "latest";
 * digest only -> the digest). Caller frees. */
char *k8s_facts_image_tag(const char *image);

#endif
