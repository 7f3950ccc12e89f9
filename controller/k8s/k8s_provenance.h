/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_provenance.h - reads the kube-system objects the CNI and kube-proxy facts come from (the
 * DaemonSets, cilium-config, amazon-vpc-cni, tke-cni-agent-conf, kube-proxy-config, kube-proxy)
 * and records the facts. A GET the API refuses becomes its Status, so the fact reads
 * "unknown (forbidden: ...)" rather than a default (k8s_facts_unread); the rules themselves are
 * the pure functions of k8s_facts.h, k8s_facts_cni.h and k8s_facts_proxy.h. */
#ifndef KPERF_K8S_K8S_PROVENANCE_H
#define KPERF_K8S_K8S_PROVENANCE_H

#include <jansson.h>

#include "controller/kube/kube.h"

/* The API's answer for GET kube-system/name of res: the object, or the Status of the refusal
 * (k8s_facts_status: HTTP code and reason from the client, a short message naming the
 * object). Never NULL; caller json_decrefs. */
json_t *k8s_provenance_get(struct kube_client *kc, const struct kube_resource *res,
                           const char *name);

/* Sets facts' "cni", "kube_proxy_mode" and "kube_proxy_mode_source" (facts borrowed, an
 * object) from what kube-system holds. Best effort: a DaemonSet list the API refuses makes both
 * "unknown (...)" with the reason; nothing here fails the run. */
void k8s_provenance_collect(struct kube_client *kc, json_t *facts);

#endif
