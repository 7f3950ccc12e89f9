/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_prepare.c - backend_k8s's prepare(): connect, leftovers of earlier runs, cluster facts,
 * node pair, preflight (permissions, namespace Pod Security, server-side dry run of the agent
 * pods), deployment and the watch-based wait for the servers. Every failure is one line that
 * says what to do; whatever was created is removed by cleanup(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_arch.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_churn.h"
#include "controller/k8s/k8s_cleanup.h"
#include "controller/k8s/k8s_dns.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_lease.h"
#include "controller/k8s/k8s_provenance.h"
#include "controller/k8s/k8s_services.h"
#include "controller/k8s/k8s_shape.h"
#include "controller/k8s/k8s_sweep.h"
#include "controller/k8s/k8s_wait.h"

void k8s_backend_client_opts(const struct k8s_backend *b, struct kube_client_opts *ko)
{
    *ko = (struct kube_client_opts){
        .kubeconfig = b->ro->kubeconfig,
        .context = b->ro->context,
        .ns = b->ro->namespace_name,
        /* a run sends ~50 requests; client-go's 5/s would add seconds. --services: its
         * thousands of creates at K8S_SERVICES_QPS */
        .qps = b->ro->services > 0 ? K8S_SERVICES_QPS : 50,
        .burst = 100,
        /* --timeout bounds the retries too: a server failing every request for that long
         * fails the call, and the calls after it at once, until it answers again */
        .give_up_ms = b->ro->timeout_ms,
        .timeout_ms = b->ro->timeout_ms < 60000 ? (long)b->ro->timeout_ms : 0,
    };
}

static int connect_cluster(struct k8s_backend *b, struct kp_err *err)
{
    struct kube_client_opts ko;
    struct kube_version v;

    k8s_backend_client_opts(b, &ko);
    if (kube_client_new(&ko, &b->kc, err) != 0)
        return -1;
    if (kube_version(b->kc, &v, err) != 0) {
        return kp_err_prefix(err, "cannot reach the cluster of context '%s' (%s)",
                             kube_client_config(b->kc)->context_name,
                             kube_client_config(b->kc)->server);
    }
    json_object_set_new(b->facts, "kubernetes_version", json_string(v.git_version));
    return 0;
}

/* Watches the Leases of the runs found for a lease period (bounded by --timeout), so that only
 * runs whose kperf died are removed. 0, or -1 (said at INFO) when they could not be watched. */
static int watch_leftovers(struct k8s_backend *b, struct k8s_leftover *l, size_t n)
{
    uint64_t ms = k8s_cleanup_observe_ms(l, n);
    struct kp_err e;

    if (!ms)
        return 0;
    kp_log(KP_LOG_INFO,
           "watching the leases of earlier runs for up to %llu s: only those nobody renews are "
           "removed",
           (unsigned long long)((ms < b->ro->timeout_ms ? ms : b->ro->timeout_ms) / 1000));
    if (k8s_cleanup_observe(b->kc, l, n, b->ro->timeout_ms, &e) == 0)
        return 0;
    kp_log(KP_LOG_INFO, "cannot tell whether earlier runs are alive: %s", kp_err_msg(&e));
    return -1;
}

static int leftovers(struct k8s_backend *b, struct kp_err *err)
{
    struct k8s_leftover *l = NULL;
    size_t n = 0;
    int rc = 0;

    if (k8s_cleanup_find(b->kc, b->ro->namespace_name, NULL, &l, &n, err) != 0) {
        kp_log(KP_LOG_INFO, "cannot look for leftovers of earlier runs: %s", kp_err_msg(err));
        kp_err_clear(err);
        return 0;
    }
    if (watch_leftovers(b, l, n) != 0) {
        k8s_cleanup_leftovers_free(l, n);
        return 0;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *rid = *l[i].run_id ? l[i].run_id : "?";
        if (l[i].lease == K8S_LEASE_HELD || l[i].lease == K8S_LEASE_FOUND ||
            l[i].lease == K8S_LEASE_GONE) {
            kp_log(KP_LOG_INFO,
                   "run %s in namespace %s is in progress (its lease %s; last "
                   "renewed at %s)",
                   rid, l[i].ns,
                   l[i].lease == K8S_LEASE_HELD   ? "was renewed while watched"
                   : l[i].lease == K8S_LEASE_GONE ? "was deleted: it is being removed"
                                                  : "was not watched for a whole period",
                   l[i].renewed ? l[i].renewed : "?");
            continue;
        }
        if (l[i].lease == K8S_LEASE_EXPIRED) {
            /* its controller died: nobody else will remove it */
            kp_log(KP_LOG_WARN,
                   "removing run %s in namespace %s: its lease expired (not renewed during %llu "
                   "s of watching; last renewed at %s; its kperf was killed)",
                   rid, l[i].ns, (unsigned long long)(l[i].obs.period_ms / 1000),
                   l[i].renewed ? l[i].renewed : "?");
        } else if (!b->ro->cleanup_leftovers) {
            kp_log(KP_LOG_WARN,
                   "found objects of an earlier kperf run (namespace %s, run %s); remove them "
                   "with 'kperf cleanup' or --cleanup-leftovers",
                   l[i].ns, rid);
            continue;
        } else {
            kp_log(KP_LOG_INFO, "removing leftovers of run %s in namespace %s", rid, l[i].ns);
        }
        rc = k8s_cleanup_run(b->kc, l[i].ns, *l[i].run_id ? l[i].run_id : NULL, l[i].ns_owned,
                             b->ro->timeout_ms, NULL, err);
        if (rc == 0 && b->d.host_ns && *l[i].run_id) /* its host-network agents, if any */
            rc = k8s_cleanup_run(b->kc, b->d.host_ns, l[i].run_id, 0, b->ro->timeout_ms, NULL, err);
    }
    k8s_cleanup_leftovers_free(l, n);
    return rc;
}

/* optional GET: NULL when missing or forbidden */
static json_t *get_optional(struct k8s_backend *b, const struct kube_resource *res, const char *ns,
                            const char *name)
{
    json_t *o = NULL;
    struct kp_err e;

    if (kube_get(b->kc, res, ns, name, &o, &e) != 0)
        o = NULL;
    return o;
}

/* explains why a named node cannot be used */
static int named_node_error(const json_t *all, const struct k8s_node_filter *f, const char *name,
                            struct kp_err *err)
{
    size_t i;
    json_t *n;

    json_array_foreach(all, i, n)
    {
        char *why = NULL;
        if (strcmp(k8s_facts_node_name(n), name) != 0)
            continue;
        if (!k8s_facts_node_eligible(n, f, &why))
            kp_err_set(err, "node %s cannot run agents: %s", name, why);
        free(why);
        return -1;
    }
    return kp_err_set(err, "node %s does not exist", name);
}

/* A node that is not Ready only because its runtime network is not (NetworkReady=false: no
 * conflist, the CNI agent down): a sweep keeps it, its pairs fail at once with the cause
 * (issue 29), where any other ineligible node is left out. why: k8s_facts_node_eligible's. */
static int net_not_ready(const json_t *node, const char *why)
{
    char *nr;
    int yes;

    if (!why || strcmp(why, "not Ready") != 0)
        return 0;
    nr = k8s_facts_node_not_ready(node);
    yes = nr && strstr(nr, "NetworkReady=false") != NULL;
    free(nr);
    return yes;
}

static void skip_other_node(struct plan *plan, const char *why)
{
    for (int s = 0; s < SCENARIO_COUNT; s++)
        plan_skip(plan, (enum scenario)s, PLACEMENT_OTHER_NODE, "%s", why);
}

/* The cluster's families, from node A's InternalIP addresses (in their order: the primary
 * first), and the ones the run measures (--ip-family): recorded in the facts, the plan's
 * groups marked (or doubled, one per family), the Service asked for them. */
static int choose_families(struct k8s_backend *b, struct plan *plan, struct kp_err *err)
{
    const json_t *addrs = json_object_get(json_object_get(b->node_a, "status"), "addresses");
    json_t *cf = json_array(), *mf = json_array();
    size_t i;
    json_t *a;

    b->n_cluster_families = 0;
    json_array_foreach(addrs, i, a)
    {
        const char *type = json_string_value(json_object_get(a, "type"));
        const char *ip = json_string_value(json_object_get(a, "address"));
        const char *f = ip && strchr(ip, ':') ? "IPv6" : "IPv4";
        if (!type || strcmp(type, "InternalIP") != 0 || !ip || b->n_cluster_families == 2 ||
            (b->n_cluster_families == 1 && b->cluster_families[0] == f))
            continue;
        b->cluster_families[b->n_cluster_families++] = f;
    }
    if (run_ip_families_choose(b->ro->ip_family, b->cluster_families, b->n_cluster_families,
                               b->ip_families, &b->n_ip_families, err) != 0) {
        json_decref(cf);
        json_decref(mf);
        return -1;
    }
    for (i = 0; i < b->n_cluster_families; i++)
        json_array_append_new(cf, json_string(b->cluster_families[i]));
    for (i = 0; i < b->n_ip_families; i++)
        json_array_append_new(mf, json_string(b->ip_families[i]));
    json_object_set_new(b->facts, "cluster_ip_families", cf);
    json_object_set_new(b->facts, "ip_families", mf);
    plan_set_families(plan, b->ip_families, b->n_ip_families);
    kp_log(KP_LOG_INFO, "cluster families %s%s%s; measuring %s%s%s",
           b->n_cluster_families ? b->cluster_families[0] : "unknown (IPv4)",
           b->n_cluster_families > 1 ? "," : "",
           b->n_cluster_families > 1 ? b->cluster_families[1] : "", b->ip_families[0],
           b->n_ip_families > 1 ? "," : "", b->n_ip_families > 1 ? b->ip_families[1] : "");
    return 0;
}

/* One address per family into slot[] (K8S_FAM), from a podIPs/hostIPs list ([{"ip": ...}])
 * or, without one, the single address. */
static void pick_ips(char *slot[2], const json_t *list, const char *single)
{
    size_t i;
    json_t *e;

    if (!list) {
        if (single) {
            free(slot[strchr(single, ':') != NULL]);
            slot[strchr(single, ':') != NULL] = kp_xstrdup(single);
        }
        return;
    }
    json_array_foreach(list, i, e)
    {
        const char *ip = json_string_value(json_object_get(e, "ip"));
        if (ip) {
            free(slot[strchr(ip, ':') != NULL]);
            slot[strchr(ip, ':') != NULL] = kp_xstrdup(ip);
        }
    }
}

/* The ClusterIP of each family of the Service as stored (clusterIPs, else clusterIP). */
static void service_ips(struct k8s_backend *b, const json_t *spec)
{
    const json_t *ips = json_object_get(spec, "clusterIPs");
    size_t i;
    json_t *e;

    if (!json_array_size(ips)) {
        pick_ips(b->service_ip, NULL, json_string_value(json_object_get(spec, "clusterIP")));
        return;
    }
    json_array_foreach(ips, i, e)
    {
        const char *ip = json_string_value(e);
        if (ip && strcmp(ip, "None") != 0) {
            free(b->service_ip[strchr(ip, ':') != NULL]);
            b->service_ip[strchr(ip, ':') != NULL] = kp_xstrdup(ip);
        }
    }
}

static int choose_nodes(struct k8s_backend *b, struct plan *plan, struct kp_err *err)
{
    json_t *all = NULL, *tol = k8s_deploy_tolerations(b->ro->tolerations, b->ro->n_tolerations);
    struct k8s_node_filter f = {
        .selector = b->ro->node_selector, .n_selector = b->ro->n_node_selector, .tolerations = tol};
    char *want_a = NULL, *want_b = NULL;
    const char *note = NULL;
    int mixed = b->ro->arch && strcmp(b->ro->arch, "mixed") == 0;
    size_t i;
    json_t *n;
    int rc = -1;

    if (kube_list_all(b->kc, &KUBE_RES_NODES, NULL, NULL, &all, err) != 0) {
        kp_err_prefix(err, "listing nodes");
        goto out;
    }
    b->nodes = json_array();
    b->net_down = json_array();
    json_array_foreach(all, i, n)
    {
        char *why = NULL;
        if (k8s_facts_node_eligible(n, &f, &why))
            json_array_append(b->nodes, n);
        else if (b->ro->all_nodes && net_not_ready(n, why))
            json_array_append(b->net_down, n);
        else
            kp_log(KP_LOG_INFO, "node %s skipped: %s", k8s_facts_node_name(n), why);
        free(why);
    }
    if (k8s_shape_wanted(b->ro, all, b->nodes, &f, &want_a, &want_b, b->facts, err) != 0 ||
        k8s_arch_apply(&b->nodes, b->ro->arch, want_a, &f.arch, err) != 0)
        goto out;
    if (f.arch || b->ro->arch) /* the --arch rule's outcome (docs/kubernetes.md) */
        json_object_set_new(b->facts, "arch", json_string(f.arch ? f.arch : b->ro->arch));
    if (k8s_facts_choose_pair(b->nodes, want_a, want_b, &b->node_a, &b->node_b, &note, err) != 0 ||
        (mixed && !b->ro->all_nodes &&
         k8s_arch_cross_partner(b->nodes, b->node_a, &b->node_b, want_b != NULL, err) != 0)) {
        if (want_a && !b->node_a)
            named_node_error(all, &f, want_a, err);
        else if (want_b && !b->node_b)
            named_node_error(all, &f, want_b, err);
        goto out;
    }
    if (note)
        kp_log(KP_LOG_WARN, "%s", note);
    kp_log(KP_LOG_INFO, "node A %s (%s), node B %s (%s)", k8s_facts_node_name(b->node_a),
           k8s_facts_node_arch(b->node_a) ? k8s_facts_node_arch(b->node_a) : "arch unknown",
           b->node_b ? k8s_facts_node_name(b->node_b) : "none",
           b->node_b && k8s_facts_node_arch(b->node_b) ? k8s_facts_node_arch(b->node_b) : "-");
    json_t *nodes = json_pack("[o]", k8s_facts_node_info(b->node_a, "server"));
    if (b->node_b)
        json_array_append_new(nodes, k8s_facts_node_info(b->node_b, "client"));
    json_object_set_new(b->facts, "nodes", nodes);
    k8s_shape_mark(b->facts);
    if (choose_families(b, plan, err) != 0)
        goto out;
    if (b->ro->all_nodes)
        k8s_sweep_plan(b, plan);
    else if (!b->node_b)
        skip_other_node(plan, "only one eligible node");
    rc = 0;
out:
    free(want_a);
    free(want_b);
    json_decref(all);
    json_decref(tol);
    return rc;
}

static const struct kube_resource *resource_of(const char *kind)
{
    if (strcmp(kind, "Namespace") == 0)
        return &KUBE_RES_NAMESPACES;
    if (strcmp(kind, "ServiceAccount") == 0)
        return &K8S_RES_SERVICEACCOUNTS;
    if (strcmp(kind, "Secret") == 0)
        return &KUBE_RES_SECRETS;
    if (strcmp(kind, "DaemonSet") == 0)
        return &KUBE_RES_DAEMONSETS;
    if (strcmp(kind, "Service") == 0)
        return &KUBE_RES_SERVICES;
    return &KUBE_RES_JOBS;
}

/* server-side dry run of an agent pod: catches Pod Security and admission webhooks, which
 * reject DaemonSet pods only as events */
static int dry_run_pod(struct k8s_backend *b, const char *network, struct kp_err *err)
{
    json_t *ds = k8s_objects_server_daemonset(&b->d.obj, network, "a", b->d.node_a_host);
    json_t *tmpl = json_object_get(json_object_get(ds, "spec"), "template");
    json_t *pod =
        json_pack("{s:s, s:s, s:O, s:O}", "apiVersion", "v1", "kind", "Pod", "metadata",
                  json_object_get(tmpl, "metadata"), "spec", json_object_get(tmpl, "spec"));
    struct kube_write_opts wo = {.dry_run = 1};
    const char *ns = k8s_objects_ns(&b->d.obj, strcmp(network, "host") == 0);
    int rc;

    json_object_set_new(json_object_get(pod, "metadata"), "name",
                        json_sprintf("kperf-preflight-%s", network));
    json_object_set_new(json_object_get(pod, "metadata"), "namespace", json_string(ns));
    rc = kube_create(b->kc, &KUBE_RES_PODS, ns, pod, &wo, NULL, err);
    if (rc != 0) {
        if (strstr(kp_err_msg(err), "PodSecurity"))
            kp_err_prefix(err,
                          "Pod Security refuses the %s-network agent pod in namespace %s "
                          "(label it %s=privileged for host-to-host)",
                          network, ns, K8S_PSA_ENFORCE);
        else
            kp_err_prefix(err, "the cluster refuses the %s-network agent pod (dry run)", network);
    }
    json_decref(pod);
    json_decref(ds);
    return rc;
}

/* The run's Lease, before its first namespaced object (right after the namespace it
 * creates): whatever a killed controller leaves is found through it. */
static int hold_lease(struct k8s_backend *b, struct kp_err *err)
{
    struct kube_client_opts ko;
    struct k8s_lease_hold_opts ho = {
        .duration_s = (int)(b->ro->lease_ms / 1000), .on_lost = k8s_backend_lost, .arg = b};

    k8s_backend_client_opts(b, &ko);
    if (k8s_lease_hold(b->kc, &ko, &b->d.obj, &ho, &b->lease, err) == 0)
        return 0;
    if (kube_client_last(b->kc)->http_status != 403)
        return -1;
    /* RBAC of an older kperf: measure anyway, say what is lost */
    kp_log(KP_LOG_WARN,
           "%s: if this kperf is killed, its objects stay until 'kperf cleanup' (grant leases "
           "as in manifests/rbac.yaml)",
           kp_err_msg(err));
    kp_err_clear(err);
    return 0;
}

static int create_all(struct k8s_backend *b, struct kp_err *err)
{
    json_t *objs = k8s_deploy_server_objects(&b->d, b->token);
    size_t i;
    json_t *o;
    int rc = -1;

    json_array_foreach(objs, i, o)
    {
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *name =
            json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        int is_ns = strcmp(kind, "Namespace") == 0;
        const char *ons =
            json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
        json_t *stored = NULL;
        if (b->stop) {
            kp_err_set(err, "interrupted");
            goto out;
        }
        b->created = 1;
        if (!is_ns && !b->lease && hold_lease(b, err) != 0)
            goto out;
        if (kube_create(b->kc, resource_of(kind), is_ns ? NULL : ons, o, NULL, &stored, err) != 0) {
            kp_err_prefix(err, "creating %s %s", kind, name);
            if (kube_client_last(b->kc)->http_status == 409)
                kp_err_prefix(err,
                              "namespace %s holds objects of another kperf run (one run per "
                              "namespace at a time); remove them with 'kperf cleanup -n %s' "
                              "or --cleanup-leftovers",
                              ons, ons);
            goto out;
        }
        if (is_ns) {
            b->ns_created = 1;
            if (hold_lease(b, err) != 0) {
                json_decref(stored);
                goto out;
            }
            if (dry_run_pod(b, "pod", err) != 0 ||
                (b->d.set.host_network && dry_run_pod(b, "host", err) != 0)) {
                json_decref(stored);
                goto out;
            }
        }
        if (strcmp(kind, "Service") == 0)
            service_ips(b, json_object_get(stored, "spec"));
        json_decref(stored);
    }
    if (!b->ns_created && (dry_run_pod(b, "pod", err) != 0 ||
                           (b->d.set.host_network && dry_run_pod(b, "host", err) != 0)))
        goto out;
    for (size_t k = 0; b->d.set.services && k < b->n_ip_families; k++)
        if (!b->service_ip[K8S_FAM(b->ip_families[k])]) {
            kp_err_set(err, "Service kperf-svc-a has no %s ClusterIP", b->ip_families[k]);
            goto out;
        }
    rc = 0;
out:
    json_decref(objs);
    return rc;
}

/* why a server DaemonSet has no pod on node A, from its status (appended to err) */
static void daemonset_coverage(struct k8s_backend *b, const char *network, struct kp_err *err)
{
    char *name = k8s_objects_daemonset_name(network, "a");
    json_t *ds = get_optional(b, &KUBE_RES_DAEMONSETS,
                              k8s_objects_ns(&b->d.obj, strcmp(network, "host") == 0), name);
    const json_t *st = json_object_get(ds, "status");

    if (ds && json_integer_value(json_object_get(st, "desiredNumberScheduled")) == 0)
        kp_err_prefix(err,
                      "DaemonSet %s schedules no pod on node %s (desiredNumberScheduled=0: "
                      "is the node still Ready and its taints tolerated?)",
                      name, k8s_facts_node_name(b->node_a));
    json_decref(ds);
    free(name);
}

/* Waits for want server pods of the run in namespace ns (owner: the DaemonSet named in
 * messages) and takes their addresses. */
static int wait_servers_in(struct k8s_backend *b, const char *ns, size_t want, const char *owner,
                           struct kp_err *err)
{
    char *sel = kp_xasprintf("%s=%s,%s=server", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_ROLE);
    char *what = kp_xasprintf("agent servers on node %s", k8s_facts_node_name(b->node_a));
    struct k8s_wait_opts wo = {.ns = ns,
                               .selector = sel,
                               .owner = owner,
                               .what = what,
                               .goal = K8S_WAIT_READY,
                               .want = want,
                               .timeout_ms = b->ro->timeout_ms,
                               .events = b->podevents,
                               .cause_out = b->fail_cause};
    json_t *pods = NULL;
    size_t i;
    json_t *p;
    int rc = -1;

    if (want == 0) {
        rc = 0;
        goto out;
    }
    if (k8s_wait_pods(b->kc, &wo, &pods, err) != 0) {
        if (kube_client_last(b->kc)->http_status != 0 || !b->stop) {
            if (b->d.set.host_network && strcmp(ns, k8s_objects_ns(&b->d.obj, 1)) == 0)
                daemonset_coverage(b, "host", err);
            if ((b->d.set.pod_network || b->d.set.services) && strcmp(ns, b->d.ns) == 0)
                daemonset_coverage(b, "pod", err);
        }
        goto out;
    }
    k8s_backend_note_cpu_limit(b, pods, "server pods");
    json_array_foreach(pods, i, p)
    {
        const json_t *st = json_object_get(p, "status");
        const char *net = json_string_value(json_object_get(
            json_object_get(json_object_get(p, "metadata"), "labels"), K8S_LABEL_NETWORK));
        const char *node =
            json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        const json_t *ips = json_object_get(st, "podIPs");
        if (!node || strcmp(node, k8s_facts_node_name(b->node_a)) != 0) {
            kp_err_set(err, "server pod runs on node %s, not on %s", node ? node : "(none)",
                       k8s_facts_node_name(b->node_a));
            goto out;
        }
        if (!json_array_size(ips))
            ips = NULL;
        if (net && strcmp(net, "host") == 0)
            pick_ips(b->host_server_ip,
                     json_array_size(json_object_get(st, "hostIPs"))
                         ? json_object_get(st, "hostIPs")
                         : ips,
                     json_string_value(json_object_get(st, "hostIP")));
        else
            pick_ips(b->pod_server_ip, ips, json_string_value(json_object_get(st, "podIP")));
    }
    rc = 0;
out:
    json_decref(pods);
    free(sel);
    free(what);
    return rc;
}

static int wait_servers(struct k8s_backend *b, struct kp_err *err)
{
    size_t pod = (size_t)(b->d.set.pod_network || b->d.set.services);
    size_t host = (size_t)b->d.set.host_network;

    if (!b->d.host_ns) {
        if (wait_servers_in(b, b->d.ns, pod + host,
                            host ? "kperf-server-host-a" : "kperf-server-pod-a", err) != 0)
            return -1;
    } else if (wait_servers_in(b, b->d.ns, pod, "kperf-server-pod-a", err) != 0 ||
               wait_servers_in(b, b->d.host_ns, host, "kperf-server-host-a", err) != 0) {
        return -1;
    }
    for (size_t k = 0; k < b->n_ip_families; k++) {
        int f = K8S_FAM(b->ip_families[k]);
        if ((pod && !b->pod_server_ip[f]) || (host && !b->host_server_ip[f]))
            return kp_err_set(err, "a ready server pod has no %s address", b->ip_families[k]);
    }
    return 0;
}

/* After the servers are Ready: their DaemonSets cover exactly node A, and nodes A and B are
 * still Ready and schedulable (pod readiness alone can lag behind a node going NotReady). */
static int verify_coverage(struct k8s_backend *b, struct kp_err *err)
{
    const char *nets[2] = {"pod", "host"};
    int need[2] = {b->d.set.pod_network || b->d.set.services, b->d.set.host_network};
    const json_t *nodes[2] = {b->node_a, b->node_b};
    struct k8s_node_filter f = {.tolerations = b->d.tolerations};

    for (int i = 0; i < 2; i++) {
        char *name;
        json_t *ds;
        const json_t *st;
        if (!need[i])
            continue;
        name = k8s_objects_daemonset_name(nets[i], "a");
        ds = get_optional(b, &KUBE_RES_DAEMONSETS, k8s_objects_ns(&b->d.obj, i == 1), name);
        st = json_object_get(ds, "status");
        /* numberReady lags behind the pod's Ready condition, which the wait already saw */
        if (ds && json_integer_value(json_object_get(st, "desiredNumberScheduled")) != 1) {
            kp_err_set(err, "DaemonSet %s covers %lld node(s), want exactly node %s", name,
                       (long long)json_integer_value(json_object_get(st, "desiredNumberScheduled")),
                       k8s_facts_node_name(b->node_a));
            json_decref(ds);
            free(name);
            return -1;
        }
        json_decref(ds);
        free(name);
    }
    for (int i = 0; i < 2; i++) {
        json_t *now;
        char *why = NULL;
        int ok;
        if (!nodes[i])
            continue;
        now = get_optional(b, &KUBE_RES_NODES, NULL, k8s_facts_node_name(nodes[i]));
        ok = now && k8s_facts_node_eligible(now, &f, &why);
        if (!ok)
            kp_err_set(err, "node %s became unusable during set-up: %s",
                       k8s_facts_node_name(nodes[i]), why ? why : "gone");
        free(why);
        json_decref(now);
        if (!ok)
            return -1;
    }
    return 0;
}

int k8s_prepare(struct backend *base, struct plan *plan, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;

    b->facts = json_object();
    if (connect_cluster(b, err) != 0 || k8s_backend_lock(b, err) != 0 || leftovers(b, err) != 0)
        return -1;
    k8s_provenance_collect(b->kc, b->facts); /* CNI, kube-proxy: best effort */
    if (choose_nodes(b, plan, err) != 0)
        return -1;
    k8s_dns_plan(b, plan);
    if (!b->ro->external_host)
        plan_skip(plan, SCENARIO_POD_TO_EXTERNAL, PLACEMENT_COUNT, "no --external-server given");
    else {
        int v6 = strchr(b->ro->external_host, ':') != NULL; /* an IPv6 literal: bracket it */
        json_object_set_new(b->facts, "external_server",
                            json_sprintf("%s%s%s:%d", v6 ? "[" : "", b->ro->external_host,
                                         v6 ? "]" : "", b->ro->external_port));
    }
    if (k8s_deploy_init(&b->d, b->ro, plan, b->run_id, k8s_facts_node_hostname(b->node_a), err) !=
        0)
        return -1;
    b->deployed = 1;
    b->d.obj.ip_families = b->ip_families;
    b->d.obj.n_ip_families = b->n_ip_families;
    json_object_set_new(b->facts, "run_id", json_string(b->d.run_id));
    json_object_set_new(b->facts, "namespace", json_string(b->d.ns));
    json_object_set_new(b->facts, "image", json_string(b->d.obj.image));
    if (k8s_deploy_pull_secret(&b->d, b->kc, kube_client_config(b->kc)->ns, err) != 0 ||
        k8s_preflight_namespace(b, err) != 0 || k8s_preflight_rbac(b, err) != 0)
        return kp_err_prefix(err, "preflight");
    b->fail_cause[0] = '\0';
    if (create_all(b, err) != 0)
        return -1;
    k8s_backend_watch_events(b);
    if (wait_servers(b, err) != 0 || verify_coverage(b, err) != 0 || k8s_sweep_deploy(b, err) != 0)
        return -1;
    kp_log(KP_LOG_INFO, "run %s: servers ready on node %s (%u API requests so far)", b->d.run_id,
           k8s_facts_node_name(b->node_a), (unsigned)kube_request_count(b->kc));
    if (k8s_churn_run(b, err) != 0)
        return -1;
    return k8s_services_run(b, err);
}
