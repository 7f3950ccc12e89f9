/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_deploy.c - the objects of one run, from flags and plan (see k8s_deploy.h). */
#include "controller/k8s/k8s_deploy.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_overlay.h"
#include "controller/kube/kube_names.h"

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
        else if (g->scenario == SCENARIO_POD_TO_SERVICE || g->scenario == SCENARIO_POD_TO_DNS)
            set->services = 1; /* pod-to-dns looks kperf-svc-a's name up */
    }
}

uint64_t k8s_deploy_max_idle_ms(const struct run_options *ro, const struct plan *plan)
{
    uint64_t ms = 2 * ro->timeout_ms + 30000;

    if (ro->agent_max_idle_ms)
        return ro->agent_max_idle_ms;
    if (ro->all_nodes && plan)
        ms += plan_expected_ms(plan);
    /* --services: the servers idle while the Services are made (100 ms each: a slow API's 10
     * per second) and the programming probes run (up to 3 min) */
    if (ro->services > 0)
        ms += (uint64_t)ro->services * 100u + 180000u;
    return ms;
}

/* labels[n] as a JSON object of strings (new), or NULL for none; flag names it in errors */
static int labels_json(const struct run_label *l, size_t n, const char *flag, int reserved_check,
                       json_t **out, struct kp_err *err)
{
    *out = NULL;
    if (n == 0)
        return 0;
    *out = json_object();
    for (size_t i = 0; i < n; i++) {
        if (reserved_check && k8s_overlay_reserved_label(l[i].key))
            return kp_err_set(err,
                              "--%s: %s is kperf's own label and cannot be overridden; "
                              "choose another key",
                              flag, l[i].key);
        json_object_set_new(*out, l[i].key, json_string(l[i].value));
    }
    return 0;
}

static json_t *resources_json(const struct run_options *ro)
{
    json_t *r = json_object();
    json_t *req = NULL, *lim = NULL;
    struct kp_err ignored; /* no kperf label check for resource names */

    if (labels_json(ro->agent_requests, ro->n_agent_requests, "agent-requests", 0, &req,
                    &ignored) == 0 &&
        req)
        json_object_set_new(r, "requests", req);
    if (labels_json(ro->agent_limits, ro->n_agent_limits, "agent-limits", 0, &lim, &ignored) == 0 &&
        lim)
        json_object_set_new(r, "limits", lim);
    if (json_object_size(r) == 0) {
        json_decref(r);
        return NULL;
    }
    return r;
}

/* the template's own container: every request at most its limit, as the API server wants */
static int check_requests(const json_t *tmpl, const char *own, struct kp_err *err)
{
    size_t i;
    json_t *c;

    json_array_foreach(json_object_get(json_object_get(tmpl, "spec"), "containers"), i, c)
    {
        json_t *res = json_object_get(c, "resources");
        json_t *lims = json_object_get(res, "limits");
        const char *key;
        json_t *v;

        if (strcmp(json_string_value(json_object_get(c, "name")), own) != 0)
            continue;
        json_object_foreach(json_object_get(res, "requests"), key, v)
        {
            const char *lim = json_string_value(json_object_get(lims, key));
            double q_req = 0, q_lim = 0;
            if (!lim || !json_is_string(v) ||
                kube_names_parse_quantity(json_string_value(v), &q_req, err) != 0 ||
                kube_names_parse_quantity(lim, &q_lim, err) != 0)
                continue;
            if (q_req > q_lim)
                return kp_err_set(err,
                                  "the agent's %s request %s is above its limit %s; raise "
                                  "--agent-limits %s=... or lower --agent-requests",
                                  key, json_string_value(v), lim, key);
        }
    }
    return 0;
}

/* Applies the pod template settings to one server and one client template, so that an overlay
 * or resources that break either are refused before anything is created. */
static int pod_template_check(const struct k8s_deploy *d, struct kp_err *err)
{
    struct k8s_objects_opts plain = d->obj;
    const char *args[] = {"client", NULL};
    struct k8s_client_job cj = {.name = "kperf-c-check",
                                .node_hostname = d->node_a_host,
                                .scenario = "pod-to-pod",
                                .placement = "same-node",
                                .args = args};
    json_t *objs[2];
    const char *own[2] = {K8S_OVERLAY_SERVER_CONTAINER, K8S_OVERLAY_CLIENT_CONTAINER};
    int rc = 0;

    plain.pod_overlay = NULL; /* applied below, where its failure is seen */
    objs[0] = k8s_objects_server_daemonset(&plain, "pod", "a", d->node_a_host);
    objs[1] = k8s_objects_client_job(&plain, &cj);
    for (int i = 0; i < 2 && rc == 0; i++) {
        json_t *tmpl = json_object_get(json_object_get(objs[i], "spec"), "template");
        if (k8s_objects_pod_template(&d->obj, tmpl, own[i], err) != 0) {
            rc = kp_err_prefix(err, "--pod-overlay (%s pods)", i == 0 ? "server" : "client");
            break;
        }
        rc = check_requests(tmpl, own[i], err);
    }
    json_decref(objs[0]);
    json_decref(objs[1]);
    return rc;
}

static int pod_template_init(struct k8s_deploy *d, const struct run_options *ro, struct kp_err *err)
{
    if (labels_json(ro->pod_labels, ro->n_pod_labels, "pod-labels", 1, &d->pod_labels, err) != 0 ||
        labels_json(ro->pod_annotations, ro->n_pod_annotations, "pod-annotations", 0,
                    &d->pod_annotations, err) != 0)
        return -1;
    d->agent_resources = resources_json(ro);
    if (ro->pod_overlay && k8s_overlay_load(ro->pod_overlay, &d->pod_overlay, err) != 0)
        return kp_err_prefix(err, "--pod-overlay");
    d->obj.pod_labels = d->pod_labels;
    d->obj.pod_annotations = d->pod_annotations;
    d->obj.priority_class = ro->priority_class;
    d->obj.agent_resources = d->agent_resources;
    d->obj.pod_overlay = d->pod_overlay;
    return pod_template_check(d, err);
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
    if (ro->host_namespace_name && strcmp(ro->host_namespace_name, d->ns) != 0)
        d->host_ns = kp_xstrdup(ro->host_namespace_name);
    d->obj.host_ns = d->host_ns;
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
    /* the run's own namespace (made when no -n) needs "privileged" only when the host-network
     * agents go there too */
    d->obj.host_network_used = d->set.host_network && !d->host_ns;
    d->obj.job_deadline_s = 60;
    d->obj.server_max_idle_ms = k8s_deploy_max_idle_ms(ro, plan);
    d->obj.job_ttl_s = K8S_JOB_TTL_S;
    if (k8s_objects_check(&d->obj, err) != 0)
        return -1;
    return pod_template_init(d, ro, err);
}

void k8s_deploy_cleanup(struct k8s_deploy *d)
{
    free(d->ns);
    free(d->host_ns);
    free(d->node_a_host);
    json_decref(d->tolerations);
    json_decref(d->pull_copy);
    json_decref(d->pod_labels);
    json_decref(d->pod_annotations);
    json_decref(d->agent_resources);
    json_decref(d->pod_overlay);
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
