/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_netpol.c - the run's NetworkPolicy for --netpol-rules (k8s_netpol.h). */
#include "controller/k8s/k8s_netpol.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_cleanup.h"

static char *policy_name(const struct k8s_objects_opts *o)
{
    return kp_xasprintf("kperf-netpol-%s", o->run_id);
}

json_t *k8s_netpol_object(const struct k8s_objects_opts *o, unsigned rules)
{
    char *name = policy_name(o);
    json_t *labels = k8s_objects_labels(o);
    json_t *ingress = json_array();
    json_t *pol;

    /* the rule that admits the run's clients, every port */
    json_array_append_new(ingress, json_pack("{s:[{s:{s:{s:s, s:s}}}]}", "from", "podSelector",
                                             "matchLabels", K8S_LABEL_RUN_ID, o->run_id,
                                             K8S_LABEL_ROLE, "client"));
    for (unsigned i = 1; i < rules; i++) { /* and the ones that admit nothing of kperf's */
        char cidr[32];
        snprintf(cidr, sizeof(cidr), "192.0.2.%u/32", i % 256);
        json_array_append_new(ingress, json_pack("{s:[{s:{s:s}}], s:[{s:s, s:i}]}", "from",
                                                 "ipBlock", "cidr", cidr, "ports", "protocol",
                                                 "TCP", "port", (int)(10000 + i % 50000)));
    }
    pol = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:{s:{s:s, s:s, s:s}}, s:[s], s:o}}",
                    "apiVersion", "networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata",
                    "name", name, "namespace", o->ns, "labels", labels, "spec", "podSelector",
                    "matchLabels", K8S_LABEL_RUN_ID, o->run_id, K8S_LABEL_ROLE, "server",
                    K8S_LABEL_NETWORK, "pod", "policyTypes", "Ingress", "ingress", ingress);
    free(name);
    return pol;
}

/* Sleeps ms, in 100 ms steps, until *stop. Returns 0, or -1 when stopped. */
static int settle(uint64_t ms, volatile sig_atomic_t *stop)
{
    struct timespec step = {0, 100 * 1000 * 1000};

    for (uint64_t t = 0; t < ms; t += 100) {
        if (stop && *stop)
            return -1;
        nanosleep(&step, NULL);
    }
    return stop && *stop ? -1 : 0;
}

int k8s_netpol_apply(struct kube_client *kc, const struct k8s_objects_opts *o, unsigned rules,
                     volatile sig_atomic_t *stop, struct kp_err *err)
{
    char *name = policy_name(o);
    json_t *pol = NULL;
    int rc;

    if (rules == 0) {
        struct kube_delete_opts d = {.grace_period_s = -1, .missing_ok = 1};
        rc = kube_delete(kc, &K8S_RES_NETWORKPOLICIES, o->ns, name, &d, NULL, err);
        goto out;
    }
    pol = k8s_netpol_object(o, rules);
    rc = kube_create(kc, &K8S_RES_NETWORKPOLICIES, o->ns, pol, NULL, NULL, err);
    if (rc != 0 && kube_client_last(kc)->http_status == 409) { /* the size before: replaced */
        json_t *patch = json_pack("{s:O}", "spec", json_object_get(pol, "spec"));
        kp_err_clear(err);
        rc = kube_patch(kc, &K8S_RES_NETWORKPOLICIES, o->ns, name, patch, NULL, NULL, err);
        json_decref(patch);
    }
    if (rc == 0 && settle(K8S_NETPOL_SETTLE_MS, stop) != 0)
        rc = kp_err_set(err, "interrupted");
out:
    if (rc != 0)
        kp_err_prefix(err, "NetworkPolicy %s/%s", o->ns, name);
    json_decref(pol);
    free(name);
    return rc;
}
