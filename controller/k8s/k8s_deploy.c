/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_deploy.c - the objects of one run, from flags and plan (see k8s_deploy.h). */
#include "controller/k8s/k8s_deploy.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

json_t *k8s_deploy_sweep_daemonset(const struct k8s_deploy *d, const char *network,
                                   const json_t *hosts)
{
    json_t *ds = k8s_objects_server_daemonset(&d->obj, network, "sweep", d->node_a_host);
    json_t *terms = json_object_get(
        json_object_get(
            json_object_get(
                json_object_get(
                    json_object_get(json_object_get(json_object_get(ds, "spec"), "template"),
                                    "spec"),
                    "affinity"),
                "nodeAffinity"),
            "requiredDuringSchedulingIgnoredDuringExecution"),
        "nodeSelectorTerms");

    json_object_set_new(
        json_array_get(json_object_get(json_array_get(terms, 0), "matchExpressions"), 0), "values",
        json_deep_copy(hosts));
    return ds;
}

json_t *k8s_deploy_tolerations(const struct run_toleration *t, size_t n)
{
    json_t *arr = json_array();

    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        if (t[i].key && *t[i].key)
            json_object_set_new(o, "key", json_string(t[i].key));
        if (t[i].value && t[i].key && *t[i].key) {
            json_object_set_new(o, "operator", json_string("Equal"));
            json_object_set_new(o, "value", json_string(t[i].value));
        } else {
            json_object_set_new(o, "operator", json_string("Exists"));
        }
        if (t[i].effect && *t[i].effect)
            json_object_set_new(o, "effect", json_string(t[i].effect));
        json_array_append_new(arr, o);
    }
    return arr;
}

static void servers_needed(const struct plan *plan, struct k8s_server_set *set)
{
    for (size_t i = 0; i < plan_group_count(plan); i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        if (g->skipped)
            continue;
        if (g->scenario == SCENARIO_POD_TO_POD)
            set->pod_network = 1;
        else if (g->scenario == SCENARIO_HOST_TO_HOST)
            set->host_network = 1;
        else if (g->scenario == SCENARIO_POD_TO_SERVICE)
            set->services = 1;
    }
}

uint64_t k8s_deploy_max_idle_ms(const struct run_options *ro, const struct plan *plan)
{
    uint64_t ms = 2 * ro->timeout_ms + 30000;

    if (ro->agent_max_idle_ms)
        return ro->agent_max_idle_ms;
    if (ro->all_nodes && plan)
        ms += plan_expected_ms(plan);
    return ms;
}

int k8s_deploy_init(struct k8s_deploy *d, const struct run_options *ro, const struct plan *plan,
                    const char *run_id, const char *node_a_host, struct kp_err *err)
{
    memset(d, 0, sizeof(*d));
    if (run_id) {
        if (strlen(run_id) > K8S_RUN_ID_MAX)
            return kp_err_set(err, "run id '%s' is longer than %d characters", run_id,
                              K8S_RUN_ID_MAX);
        strcpy(d->run_id, run_id);
    } else if (k8s_objects_run_id(d->run_id, sizeof(d->run_id), err) != 0) {
        return -1;
    }
    d->create_namespace = ro->namespace_name == NULL;
    d->ns =
        ro->namespace_name ? kp_xstrdup(ro->namespace_name) : kp_xasprintf("kperf-%s", d->run_id);
    d->tolerations = k8s_deploy_tolerations(ro->tolerations, ro->n_tolerations);
    d->node_a_host = kp_xstrdup(node_a_host ? node_a_host : "node-a");
    d->timeout_ms = ro->timeout_ms;
    servers_needed(plan, &d->set);
    d->set.node_a = d->node_a_host;
    d->obj.run_id = d->run_id;
    d->obj.ns = d->ns;
    d->obj.image = ro->image ? ro->image : run_options_default_image();
    d->obj.pull_policy = ro->image_pull_policy;
    if (k8s_pullsecret_parse(ro->image_pull_secret, ro->namespace_name, &d->pull, err) != 0)
        return -1;
    d->obj.pull_secret = d->pull.copy ? K8S_PULL_SECRET_NAME : d->pull.name;
    if (d->pull.copy) {
        char *from =
            kp_xasprintf("%s/%s", d->pull.src_ns ? d->pull.src_ns : "(context)", d->pull.name);
        d->pull_copy = k8s_pullsecret_object(&d->obj, NULL, from);
        d->obj.pull_secret_copy = d->pull_copy;
        free(from);
    }
    d->obj.tolerations = d->tolerations;
    d->obj.port = ro->port;
    d->obj.udp_rate_bps = ro->udp_rate_bps;
    d->obj.external_token = ro->external_token; /* borrowed: the run options outlive d */
    d->obj.host_network_used = d->set.host_network;
    d->obj.job_deadline_s = 60;
    d->obj.server_max_idle_ms = k8s_deploy_max_idle_ms(ro, plan);
    d->obj.job_ttl_s = K8S_JOB_TTL_S;
    return k8s_objects_check(&d->obj, err);
}

void k8s_deploy_cleanup(struct k8s_deploy *d)
{
    free(d->ns);
    free(d->node_a_host);
    json_decref(d->tolerations);
    json_decref(d->pull_copy);
    k8s_pullsecret_cleanup(&d->pull);
    memset(d, 0, sizeof(*d));
}

int k8s_deploy_pull_secret(struct k8s_deploy *d, struct kube_client *kc, const char *ctx_ns,
                           struct kp_err *err)
{
    json_t *src = NULL;
    char *from = NULL;
    int rc = -1;

    if (!d->pull.copy)
        return 0;
    if (k8s_pullsecret_fetch(kc, &d->pull, ctx_ns, &src, &from, err) != 0)
        goto out;
    json_decref(d->pull_copy);
    d->pull_copy = k8s_pullsecret_object(&d->obj, src, from);
    d->obj.pull_secret_copy = d->pull_copy;
    rc = 0;
out:
    json_decref(src); /* holds the registry credentials: released at once */
    free(from);
    return rc;
}

json_t *k8s_deploy_server_objects(const struct k8s_deploy *d, const char *token)
{
    return k8s_objects_server_objects(&d->obj, &d->set, d->create_namespace, token);
}
