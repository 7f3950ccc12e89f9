/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_netready.c - NetworkPolicy enforcement readiness per node (k8s_netready.h). */
#include "controller/k8s/k8s_netready.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/agent_args.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_cleanup.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_wait.h"
#include "controller/k8s/k8s_watch.h"

#define TARGET_LABEL "kperf.io/netpol-target"
#define MAX_NODES    2

struct target {
    const char *node; /* borrowed from the node facts */
    char slot[8];     /* np-a, np-b */
    char *hostport;   /* the target server's pod IP and port */
    struct backend_probe *probe;
};

/* The target server of t on its node, Ready: its address into t->hostport. */
static int start_target(struct k8s_backend *b, struct target *t, struct kp_err *err)
{
    json_t *ds = k8s_objects_server_daemonset(&b->d.obj, "pod", t->slot,
                                              k8s_client_node_hostname(b, t->node));
    json_t *labels = json_object_get(
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "metadata"),
        "labels");
    char *sel = kp_xasprintf("%s=%s,%s=%s", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_SLOT, t->slot);
    char *what = kp_xasprintf("netpol target %s on node %s", t->slot, t->node);
    json_t *pods = NULL;
    int rc;

    json_object_set_new(labels, TARGET_LABEL, json_string("true"));
    rc = kube_create(b->kc, &KUBE_RES_DAEMONSETS, b->d.obj.ns, ds, NULL, NULL, err);
    json_decref(ds);
    if (rc == 0) {
        struct k8s_wait_opts wo = {.ns = b->d.obj.ns,
                                   .selector = sel,
                                   .what = what,
                                   .goal = K8S_WAIT_READY,
                                   .want = 1,
                                   .timeout_ms = b->ro->timeout_ms,
                                   .events = b->podevents};
        rc = k8s_wait_pods(b->kc, &wo, &pods, err);
    }
    if (rc == 0) {
        const json_t *st = json_object_get(json_array_get(pods, 0), "status");
        const char *ip = json_string_value(json_object_get(st, "podIP"));
        if (ip)
            t->hostport = agent_args_host_port(ip, b->ro->port);
        else
            rc = kp_err_set(err, "its pod has no address");
    }
    if (rc != 0)
        kp_err_prefix(err, "%s", what);
    json_decref(pods);
    free(sel);
    free(what);
    return rc;
}

/* The deny-all (allow false) or allow-from-the-run's-clients policy over the targets. */
static json_t *policy(const struct k8s_backend *b, bool allow, char **name)
{
    json_t *ingress = json_array();

    *name = kp_xasprintf("kperf-netready-%s-%s", allow ? "allow" : "deny", b->d.run_id);
    if (allow)
        json_array_append_new(ingress, json_pack("{s:[{s:{s:{s:s, s:s}}}]}", "from", "podSelector",
                                                 "matchLabels", K8S_LABEL_RUN_ID, b->d.run_id,
                                                 K8S_LABEL_ROLE, "client"));
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:{s:{s:s, s:s}}, s:[s], s:o}}",
                     "apiVersion", "networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata",
                     "name", *name, "namespace", b->d.obj.ns, "labels",
                     k8s_objects_labels(&b->d.obj), "spec", "podSelector", "matchLabels",
                     K8S_LABEL_RUN_ID, b->d.run_id, TARGET_LABEL, "true", "policyTypes", "Ingress",
                     "ingress", ingress);
}

/* Creates the policy; the time its request was sent (the controller's clock: the policy can
 * take effect no earlier, and may before the API server's answer arrives) into *at. */
static int create_policy(struct k8s_backend *b, bool allow, double *at, struct kp_err *err)
{
    char *name;
    json_t *pol = policy(b, allow, &name);
    int rc;

    *at = clock_unix_s();
    rc = kube_create(b->kc, &K8S_RES_NETWORKPOLICIES, b->d.obj.ns, pol, NULL, NULL, err);
    if (rc != 0)
        kp_err_prefix(err, "NetworkPolicy %s", name);
    json_decref(pol);
    free(name);
    return rc;
}

static void delete_named(struct k8s_backend *b, const struct kube_resource *r, const char *name)
{
    struct kube_delete_opts d = {.grace_period_s = -1, .missing_ok = 1};
    struct kp_err err = {{0}};

    kube_client_reset_abort(b->kc);
    if (kube_delete(b->kc, r, b->d.obj.ns, name, &d, NULL, &err) != 0)
        kp_log(KP_LOG_WARN, "deleting %s: %s (cleanup retries)", name, kp_err_msg(&err));
}

static int window(struct k8s_backend *b, unsigned ms, struct kp_err *err)
{
    struct timespec step = {0, 100 * 1000 * 1000};

    for (unsigned t = 0; t < ms; t += 100) {
        if (b->stop)
            return kp_err_set(err, "interrupted");
        nanosleep(&step, NULL);
    }
    return 0;
}

static int start_probe(struct k8s_backend *b, struct target *t, size_t i, struct kp_err *err)
{
    const char *args[] = {
        "--kinds", "connect", "--connect-every", K8S_NETREADY_EVERY, "--connect-timeout",
        "1s",      NULL};
    struct backend_probe_opts o = {.args = args, .index = 1000 + i, .deadline_s = 300};

    return k8s_watch_probe_start_at(&b->base, t->node, t->hostport, &o, &t->probe, err);
}

/* Stops t's probe: {"node", "probe": its document} or {"node", "error"}. */
static json_t *node_record(struct k8s_backend *b, struct target *t)
{
    json_t *rec = json_pack("{s:s}", "node", t->node), *doc;
    struct kp_err err = {{0}};
    json_error_t jerr;

    k8s_watch_probe_stop(&b->base, t->probe);
    if (k8s_watch_probe_wait(t->probe, &err) != 0)
        kp_log(KP_LOG_WARN, "netpol-readiness: %s", kp_err_msg(&err));
    doc = k8s_watch_probe_doc(t->probe, &jerr);
    if (!doc)
        json_object_set_new(rec, "error", json_sprintf("the prober's document: %s", jerr.text));
    else
        json_object_set_new(rec, "probe", doc);
    return rec;
}

static int measure(struct k8s_backend *b, struct target *ts, size_t n, json_t *nodes, double *at,
                   struct kp_err *err)
{
    double deny_at = 0, allow_at = 0;

    for (size_t i = 0; i < n; i++)
        if (start_target(b, &ts[i], err) != 0)
            return -1;
    for (size_t i = 0; i < n; i++)
        if (start_probe(b, &ts[i], i, err) != 0)
            return -1;
    if (window(b, K8S_NETREADY_LEAD_MS, err) != 0 || create_policy(b, false, &deny_at, err) != 0 ||
        window(b, K8S_NETREADY_WINDOW_MS, err) != 0 ||
        create_policy(b, true, &allow_at, err) != 0 || window(b, K8S_NETREADY_WINDOW_MS, err) != 0)
        return -1;
    kp_log(KP_LOG_INFO, "netpol-readiness: deny at %.3f, allow at %.3f", deny_at, allow_at);
    at[0] = deny_at;
    at[1] = allow_at;
    for (size_t i = 0; i < n; i++)
        json_array_append_new(nodes, node_record(b, &ts[i]));
    return 0;
}

json_t *k8s_netready_run(struct backend *base, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct target ts[MAX_NODES] = {{0}};
    size_t n = 0;
    json_t *nodes = json_array(), *out = NULL;
    char *name;
    double at[2];

    ts[n].node = k8s_facts_node_name(b->node_a);
    snprintf(ts[n++].slot, sizeof(ts[0].slot), "np-a");
    if (b->node_b) {
        ts[n].node = k8s_facts_node_name(b->node_b);
        snprintf(ts[n++].slot, sizeof(ts[0].slot), "np-b");
    }
    if (measure(b, ts, n, nodes, at, err) == 0)
        out = json_pack("{s:f, s:f, s:O}", "deny_at", at[0], "allow_at", at[1], "nodes", nodes);
    for (size_t i = 0; i < n; i++) {
        char *ds = k8s_objects_daemonset_name("pod", ts[i].slot);
        if (ts[i].probe) {
            k8s_watch_probe_stop(base, ts[i].probe);
            k8s_watch_probe_free(base, ts[i].probe);
        }
        delete_named(b, &KUBE_RES_DAEMONSETS, ds);
        free(ds);
        free(ts[i].hostport);
    }
    for (int allow = 0; allow < 2; allow++) {
        json_decref(policy(b, allow, &name));
        delete_named(b, &K8S_RES_NETWORKPOLICIES, name);
        free(name);
    }
    json_decref(nodes);
    return out;
}
