/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_facts_cni.h - the datapath settings of a CNI that most often explain a difference between
 * two runs, read from its DaemonSet (agent flags, env) and ConfigMaps: Cilium (routing mode,
 * tunnel protocol, host routing eBPF or legacy, kube-proxy replacement, bandwidth manager, BBR,
 * MTU, IPAM, WireGuard, IPsec, LB mode), the AWS VPC CNI (custom networking, prefix delegation,
 * security-group and network-policy enforcing modes, external SNAT, IPv6, pod ENI, network
 * policy agent, MTU, WARM_* targets) and TKE's variants (tke-eni-agent VPC-CNI in shared
 * "tke-route-eni" or exclusive "tke-direct-eni" mode, tke-bridge-agent Global Router, Global Router
 * with VPC-CNI mixed in, Cilium on TKE). Pure functions over objects the caller fetched
 * (k8s_facts.h's k8s_facts_cni calls the per-CNI part); unit-tested with fixtures in
 * test/unit/data/k8s/. */
#ifndef KPERF_K8S_K8S_FACTS_CNI_H
#define KPERF_K8S_K8S_FACTS_CNI_H

#include <jansson.h>

/* Adds to settings (an object) what DaemonSet ds (borrowed) and the API's answer cm for its
 * ConfigMap (cilium-config for "cilium", amazon-vpc-cni for "aws-vpc-cni": the ConfigMap, the
 * Status of a refused GET, or NULL when not asked) say for the CNI named cni. Agent flags
 * ("--routing-mode=native") override the ConfigMap, as they do in the agent. The settings issue
 * 31 lists are always there: the value, "unset (...)" when the object does not set it, or
 * "unknown (forbidden: ...)" / "unknown (not found: ...)" when it could not be read. */
void k8s_facts_cni_settings(json_t *settings, const char *cni, const json_t *ds, const json_t *cm);

/* TKE: the network mode of the CNI object k8s_facts_cni returned (cni, changed in place) from
 * the kube-system DaemonSets and the API's answer for ConfigMap tke-cni-agent-conf (the
 * ConfigMap, a Status, or NULL when not asked). Sets settings.platform "tke" when any CNI image
 * comes from a TKE registry, and settings.network_mode one of "global-router",
 * "vpc-cni-route-eni" (shared ENI), "vpc-cni-direct-eni" (exclusive ENI), both from the first
 * name of the ConfigMap's defaultDelegates, "global-router+vpc-cni" (both agents: pods choose
 * with tke.cloud.tencent.com/networks), "cilium-overlay", "cilium+vpc-cni", or "unknown (...)"
 * with the reason when the ConfigMap was refused, missing or names neither. Does nothing on
 * other clusters. */
void k8s_facts_cni_tke(json_t *cni, const json_t *daemonsets, const json_t *tke_conf);

#endif
