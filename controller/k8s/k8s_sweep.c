/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_sweep.c - ring pairs and per-node servers of sweep mode (see k8s_sweep.h). */
#include "controller/k8s/k8s_sweep.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_wait.h"

static int by_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

json_t *k8s_sweep_ring(const json_t *names)
{
    size_t n = json_array_size(names);
    const char **v = kp_xcalloc(n ? n : 1, sizeof(*v));
    json_t *ring = json_array();

    for (size_t i = 0; i < n; i++)
        v[i] = json_string_value(json_array_get(names, i));
    qsort(v, n, sizeof(*v), by_str);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(ring,
                              json_pack("{s:s, s:s}", "client", v[i], "server", v[(i + 1) % n]));
    free(v);
    return ring;
}

void k8s_sweep_plan(struct k8s_backend *b, struct plan *plan)
{
    size_t n = json_array_size(b->nodes), i;
    json_t *names = json_array(), *infos = json_array(), *ring;
    const char **clients;
    json_t *node, *p;

    json_array_foreach(b->nodes, i, node)
    {
        json_array_append_new(names, json_string(k8s_facts_node_name(node)));
        json_array_append_new(infos, k8s_facts_node_info(node, "swept"));
    }
    ring = k8s_sweep_ring(names);
    clients = kp_xcalloc(n ? n : 1, sizeof(*clients));
    json_array_foreach(ring, i, p) clients[i] = json_string_value(json_object_get(p, "client"));
    plan_expand_sweep(plan, clients, n);
    free(clients);
    json_object_set_new(
        b->facts, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", ring, "nodes", infos));
    json_decref(names);
}

/* the ring successor of client (a name), from the facts' pairs */
static const char *partner(const struct k8s_backend *b, const char *client)
{
    size_t i;
    json_t *p;

    json_array_foreach(json_object_get(json_object_get(b->facts, "sweep"), "pairs"), i, p)
    {
        const char *c = json_string_value(json_object_get(p, "client"));
        if (c && strcmp(c, client) == 0)
            return json_string_value(json_object_get(p, "server"));
    }
    return NULL;
}

const char *k8s_sweep_server(const struct k8s_backend *b, const struct plan_group *g,
                             const char *network)
{
    const char *server;

    if (g->placement != PLACEMENT_NODE || !g->node || !network)
        return NULL;
    server = partner(b, g->node);
    if (!server)
        return NULL;
    if (strcmp(server, k8s_facts_node_name(b->node_a)) == 0)
        return strcmp(network, "host") == 0 ? b->host_server_ip : b->pod_server_ip;
    return json_string_value(json_object_get(json_object_get(b->sweep_servers, network), server));
}

/* the DaemonSet of `network` on every eligible node but A (A's own servers serve A) */
static json_t *sweep_daemonset(struct k8s_backend *b, const char *network)
{
    json_t *ds = k8s_objects_server_daemonset(&b->d.obj, network, "sweep", b->d.node_a_host);
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
    json_t *values = json_array();
    size_t i;
    json_t *node;

    json_array_foreach(b->nodes, i, node)
    {
        if (node != b->node_a)
            json_array_append_new(values, json_string(k8s_facts_node_hostname(node)));
    }
    json_object_set_new(
        json_array_get(json_object_get(json_array_get(terms, 0), "matchExpressions"), 0), "values",
        values);
    return ds;
}

static int deploy_network(struct k8s_backend *b, const char *network, size_t want,
                          struct kp_err *err)
{
    json_t *ds = sweep_daemonset(b, network), *stored = NULL, *pods = NULL, *ips = json_object();
    const char *name = json_string_value(json_object_get(json_object_get(ds, "metadata"), "name"));
    char *sel = kp_xasprintf("%s=%s,%s=server,%s=%s,%s=sweep", K8S_LABEL_RUN_ID, b->d.run_id,
                             K8S_LABEL_ROLE, K8S_LABEL_NETWORK, network, K8S_LABEL_SLOT);
    char *what = kp_xasprintf("%s-network sweep servers on %zu nodes", network, want);
    size_t i;
    json_t *p;
    int rc = -1;

    if (kube_create(b->kc, &KUBE_RES_DAEMONSETS, b->d.ns, ds, NULL, &stored, err) != 0) {
        kp_err_prefix(err, "creating DaemonSet %s", name ? name : "?");
        goto out;
    }
    struct k8s_wait_opts wo = {
        .ns = b->d.ns,
        .selector = sel,
        .owner = name,
        .owner_uid = json_string_value(json_object_get(json_object_get(stored, "metadata"), "uid")),
        .what = what,
        .goal = K8S_WAIT_READY,
        .want = want,
        .timeout_ms = b->ro->timeout_ms};
    if (k8s_wait_pods(b->kc, &wo, &pods, err) != 0)
        goto out;
    json_array_foreach(pods, i, p)
    {
        const json_t *st = json_object_get(p, "status");
        const char *node =
            json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        const char *ip = json_string_value(
            json_object_get(st, strcmp(network, "host") == 0 ? "hostIP" : "podIP"));
        if (!ip)
            ip = json_string_value(json_object_get(st, "podIP"));
        if (node && ip)
            json_object_set_new(ips, node, json_string(ip));
    }
    if (json_object_size(ips) < want) {
        kp_err_set(err, "%s: %zu of %zu ready pods have a node and an address", what,
                   json_object_size(ips), want);
        goto out;
    }
    json_object_set(b->sweep_servers, network, ips);
    rc = 0;
out:
    json_decref(ips);
    json_decref(pods);
    json_decref(stored);
    json_decref(ds);
    free(sel);
    free(what);
    return rc;
}

int k8s_sweep_deploy(struct k8s_backend *b, struct kp_err *err)
{
    size_t others = json_array_size(b->nodes) - (b->node_a ? 1 : 0);

    if (!b->ro->all_nodes || others == 0)
        return 0;
    if (!b->sweep_servers)
        b->sweep_servers = json_object();
    if (b->d.set.pod_network && deploy_network(b, "pod", others, err) != 0)
        return -1;
    if (b->d.set.host_network && deploy_network(b, "host", others, err) != 0)
        return -1;
    kp_log(KP_LOG_INFO, "sweep: servers ready on %zu more nodes (%u API requests so far)", others,
           (unsigned)kube_request_count(b->kc));
    return 0;
}
