/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_facts_proxy.h - kube-proxy's mode from the objects that set it: EKS's ConfigMap
 * kube-proxy-config (key "config"), kubeadm's ConfigMap kube-proxy (key "config.conf"), both a
 * KubeProxyConfiguration in YAML read with base/yaml_load, and the DaemonSet's --proxy-mode flag,
 * which overrides them. Pure: the caller fetched the objects (k8s_provenance.c); an object the
 * API refused arrives as its Status (k8s_facts_answer) and makes the mode "unknown (...)". */
#ifndef KPERF_K8S_K8S_FACTS_PROXY_H
#define KPERF_K8S_K8S_FACTS_PROXY_H

#include <jansson.h>

/* {"mode": M, "source": S}, new reference. daemonsets: kube-system's (items array, borrowed);
 * eks_cm, kubeadm_cm: the API's answers for kube-system/kube-proxy-config and
 * kube-system/kube-proxy (a ConfigMap, a Status, or NULL when not asked = not found).
 * Later sources override earlier ones: kube-proxy-config, then kube-proxy (only when it holds
 * config.conf: EKS's holds a kubeconfig only), then --proxy-mode. M is the mode as written
 * ("iptables", "ipvs", "nftables", "kernelspace"); "iptables" with S saying so when the winning
 * source leaves it empty (kube-proxy's documented default on Linux); "none" without a kube-proxy
 * DaemonSet; "unknown (forbidden: ...)" / "unknown (not found: ...)" when the source that would
 * decide could not be read. S names the object, key or flag the mode came from. */
json_t *k8s_facts_kube_proxy(const json_t *daemonsets, const json_t *eks_cm,
                             const json_t *kubeadm_cm);

#endif
