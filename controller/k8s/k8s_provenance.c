/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_provenance.c - the CNI and kube-proxy facts from kube-system (see k8s_provenance.h). */
#include "controller/k8s/k8s_provenance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_facts_cni.h"
#include "controller/k8s/k8s_facts_proxy.h"

/* A refusal as a Status: the client keeps the code and reason, not the body, so the message
 * names the object and what grants it. */
static json_t *refusal(struct kube_client *kc, const char *verb, const char *plural,
                       const char *name, const struct kp_err *e)
{
    const struct kube_last *l = kube_client_last(kc);
    char *msg;
    json_t *st;

    if (l->http_status == 403)
        msg = kp_xasprintf("cannot %s %s%s%s in namespace kube-system; manifests/rbac.yaml "
                           "grants it",
                           verb, plural, name ? " " : "", name ? name : "");
    else
        msg = kp_xstrdup(kp_err_msg(e));
    st = k8s_facts_status(l->http_status, *l->reason ? l->reason : NULL, msg, plural, name);
    free(msg);
    return st;
}

json_t *k8s_provenance_get(struct kube_client *kc, const struct kube_resource *res,
                           const char *name)
{
    json_t *o = NULL;
    struct kp_err e;

    if (kube_get(kc, res, "kube-system", name, &o, &e) == 0)
        return o;
    return refusal(kc, "get", res->plural, name, &e);
}

/* kube_proxy_mode and its source; left out when there is no kube-proxy and no CNI known to
 * replace it (a cluster kperf cannot describe) */
static void kube_proxy_facts(struct kube_client *kc, json_t *facts, const json_t *ds,
                             const char *cni_name)
{
    json_t *none = k8s_facts_kube_proxy(ds, NULL, NULL);
    json_t *eks = NULL, *kubeadm = NULL, *kp;

    if (strcmp(json_string_value(json_object_get(none, "mode")), "none") != 0) {
        eks = k8s_provenance_get(kc, &KUBE_RES_CONFIGMAPS, "kube-proxy-config");
        kubeadm = k8s_provenance_get(kc, &KUBE_RES_CONFIGMAPS, "kube-proxy");
    }
    kp = k8s_facts_kube_proxy(ds, eks, kubeadm);
    if (strcmp(json_string_value(json_object_get(kp, "mode")), "none") != 0 ||
        strcmp(cni_name, "unknown") != 0) {
        json_object_set(facts, "kube_proxy_mode", json_object_get(kp, "mode"));
        json_object_set(facts, "kube_proxy_mode_source", json_object_get(kp, "source"));
    }
    json_decref(kp);
    json_decref(none);
    json_decref(eks);
    json_decref(kubeadm);
}

void k8s_provenance_collect(struct kube_client *kc, json_t *facts)
{
    json_t *ds = NULL, *cilium = NULL, *vpc = NULL, *tke = NULL, *cni;
    struct kp_err e;
    char name[32];

    if (kube_list_all(kc, &KUBE_RES_DAEMONSETS, "kube-system", NULL, &ds, &e) != 0) {
        json_t *st = refusal(kc, "list", "daemonsets", NULL, &e);
        char *why = k8s_facts_unread(st);
        kp_log(KP_LOG_INFO, "CNI and kube-proxy mode not recorded: %s", kp_err_msg(&e));
        json_object_set_new(facts, "cni", json_pack("{s:s}", "name", why));
        json_object_set_new(facts, "kube_proxy_mode", json_string(why));
        free(why);
        json_decref(st);
        return;
    }
    cni = k8s_facts_cni(ds, NULL, NULL);
    snprintf(name, sizeof(name), "%s", json_string_value(json_object_get(cni, "name")));
    json_decref(cni);
    if (strcmp(name, "cilium") == 0)
        cilium = k8s_provenance_get(kc, &KUBE_RES_CONFIGMAPS, "cilium-config");
    else if (strcmp(name, "aws-vpc-cni") == 0)
        vpc = k8s_provenance_get(kc, &KUBE_RES_CONFIGMAPS, "amazon-vpc-cni");
    if (strncmp(name, "tke-", 4) == 0)
        tke = k8s_provenance_get(kc, &KUBE_RES_CONFIGMAPS, "tke-cni-agent-conf");
    cni = k8s_facts_cni(ds, cilium, vpc);
    k8s_facts_cni_tke(cni, ds, tke); /* a no-op off TKE */
    json_object_set_new(facts, "cni", cni);
    kube_proxy_facts(kc, facts, ds, name);
    json_decref(ds);
    json_decref(cilium);
    json_decref(vpc);
    json_decref(tke);
}
