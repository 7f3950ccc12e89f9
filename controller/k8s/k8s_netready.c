/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_netready.c - NetworkPolicy enforcement readiness per node (k8s_netready.h). */
#include "controller/k8s/k8s_netready.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

#define TARGET_LABEL   "kperf.io/netpol-target"
#define SCENARIO_LABEL "kperf.io/scenario"
#define POLICY_PROBER  "netpol-readiness"
#define NEWPOD_PROBER  "netpol-newpod"
#define MAX_NODES      8

enum { DENY, ALLOW, EGRESS, N_POLICIES };
static const char *const policy_kind[N_POLICIES] = {"deny", "allow", "newpod"};

struct target {
    const char *node;            /* borrowed from the node facts */
    char slot[8];                /* np-0 ... np-7 */
    char *hostport;              /* the target server's pod IP and port */
    struct backend_probe *probe; /* the policy phase's prober */
    struct backend_probe *pod;   /* the new-pod phase's */
    long off;                    /* how far its log was read for status lines */
};

/* Creates the target server DaemonSet of t on its node. */
static int create_target(struct k8s_backend *b, struct target *t, struct kp_err *err)
{
    json_t *ds = k8s_objects_server_daemonset(&b->d.obj, "pod", t->slot,
                                              k8s_client_node_hostname(b, t->node));
    json_t *labels = json_object_get(
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "metadata"),
        "labels");
    int rc;

    json_object_set_new(labels, TARGET_LABEL, json_string("true"));
    rc = kube_create(b->kc, &KUBE_RES_DAEMONSETS, b->d.obj.ns, ds, NULL, NULL, err);
    json_decref(ds);
    if (rc != 0)
        kp_err_prefix(err, "netpol target %s on node %s", t->slot, t->node);
    return rc;
}

/* Waits for t's target to be Ready: its address into t->hostport. */
static int wait_target(struct k8s_backend *b, struct target *t, struct kp_err *err)
{
    char *sel = kp_xasprintf("%s=%s,%s=%s", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_SLOT, t->slot);
    char *what = kp_xasprintf("netpol target %s on node %s", t->slot, t->node);
    struct k8s_wait_opts wo = {.ns = b->d.obj.ns,
                               .selector = sel,
                               .what = what,
                               .goal = K8S_WAIT_READY,
                               .want = 1,
                               .timeout_ms = b->ro->timeout_ms,
                               .events = b->podevents};
    json_t *pods = NULL;
    int rc = k8s_wait_pods(b->kc, &wo, &pods, err);

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

/* The policy of kind k: DENY, deny-all ingress over the targets; ALLOW, ingress to them from
 * the run's client pods (the probers among them); EGRESS, deny-all egress but DNS over the
 * new-pod probers (the pods of the new-pod phase: started while it already selects them). */
static json_t *policy(const struct k8s_backend *b, int k, char **name)
{
    json_t *rules = json_array(), *sel;
    const char *type = k == EGRESS ? "Egress" : "Ingress";

    *name = kp_xasprintf("kperf-netready-%s-%s", policy_kind[k], b->d.run_id);
    if (k == ALLOW)
        json_array_append_new(rules, json_pack("{s:[{s:{s:{s:s, s:s}}}]}", "from", "podSelector",
                                               "matchLabels", K8S_LABEL_RUN_ID, b->d.run_id,
                                               K8S_LABEL_ROLE, "client"));
    if (k == EGRESS) /* what a pod needs: its name look-ups (the probe itself needs none) */
        json_array_append_new(rules, json_pack("{s:[{s:s, s:i}, {s:s, s:i}]}", "ports", "protocol",
                                               "UDP", "port", 53, "protocol", "TCP", "port", 53));
    sel =
        k == EGRESS
            ? json_pack("{s:s, s:s}", K8S_LABEL_RUN_ID, b->d.run_id, SCENARIO_LABEL, NEWPOD_PROBER)
            : json_pack("{s:s, s:s}", K8S_LABEL_RUN_ID, b->d.run_id, TARGET_LABEL, "true");
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:{s:o}, s:[s], s:o}}", "apiVersion",
                     "networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata", "name", *name,
                     "namespace", b->d.obj.ns, "labels", k8s_objects_labels(&b->d.obj), "spec",
                     "podSelector", "matchLabels", sel, "policyTypes", type,
                     k == EGRESS ? "egress" : "ingress", rules);
}

/* Creates the policy; the time its request was sent (the controller's clock: the policy can
 * take effect no earlier, and may before the API server's answer arrives) into *at. */
static int create_policy(struct k8s_backend *b, int k, double *at, struct kp_err *err)
{
    char *name;
    json_t *pol = policy(b, k, &name);
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

static int create_probe(struct k8s_backend *b, struct target *t, size_t i, bool newpod,
                        struct kp_err *err)
{
    const char *args[] = {"--kinds",          "connect",           "--connect-every",
                          K8S_NETREADY_EVERY, "--connect-timeout", "1s",
                          "--status",         K8S_NETREADY_STATUS, NULL};
    struct backend_probe_opts o = {
        .args = args, .index = (newpod ? 2000 : 1000) + i, .deadline_s = 300};

    return k8s_watch_probe_create_at(&b->base, t->node, t->hostport,
                                     newpod ? NEWPOD_PROBER : POLICY_PROBER, &o,
                                     newpod ? &t->pod : &t->probe, err);
}

static struct backend_probe *prober(const struct target *t, bool newpod)
{
    return newpod ? t->pod : t->probe;
}

/* Starts the probers of one phase on every node: their Jobs at once, then each Ready. */
static int start_probers(struct k8s_backend *b, struct target *ts, size_t n, bool newpod,
                         struct kp_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (create_probe(b, &ts[i], i, newpod, err) != 0)
            return -1;
    for (size_t i = 0; i < n; i++)
        if (k8s_watch_probe_started(&b->base, prober(&ts[i], newpod), err) != 0)
            return -1;
    return 0;
}

/* Where the prober's log ends now: status lines from there on are after this moment. */
static void mark(struct target *t, bool newpod)
{
    struct stat st;

    t->off = stat(k8s_watch_probe_log(prober(t, newpod)), &st) == 0 ? (long)st.st_size : 0;
}

/* Whether a status line of the prober's log after t->off says its connect probes are down
 * (down) or not down; t->off moves past the whole lines read. */
static bool seen(struct target *t, bool newpod, bool down)
{
    FILE *f = fopen(k8s_watch_probe_log(prober(t, newpod)), "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    bool found = false;

    if (!f)
        return false;
    if (fseek(f, t->off, SEEK_SET) == 0)
        while (!found && (n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') {
            const char *c = strstr(line, "kperf-agent: status");
            t->off += (long)n;
            if (c && (c = strstr(c, " connect ")) != NULL)
                found = (strncmp(c + 9, "down ", 5) == 0) == down;
        }
    free(line);
    fclose(f);
    return found;
}

/* Waits until every node's prober has seen the change (down: its probes refused; else admitted
 * again) since mark(), at most K8S_NETREADY_WINDOW_MS (a node slower than that shows in its
 * figures or error), then K8S_NETREADY_SETTLE_MS more. */
static int wait_seen(struct k8s_backend *b, struct target *ts, size_t n, bool newpod, bool down,
                     struct kp_err *err)
{
    bool done[MAX_NODES] = {false};
    size_t left = n;
    uint64_t t0 = clock_now_ns();

    while (left > 0 && clock_now_ns() - t0 < (uint64_t)K8S_NETREADY_WINDOW_MS * 1000000) {
        if (window(b, 100, err) != 0)
            return -1;
        for (size_t i = 0; i < n; i++)
            if (!done[i] && seen(&ts[i], newpod, down)) {
                done[i] = true;
                left--;
            }
    }
    kp_log(left ? KP_LOG_WARN : KP_LOG_INFO,
           "netpol-readiness: %zu of %zu %s probers saw %s in %.1f s", n - left, n,
           newpod ? "new-pod" : "policy", down ? "the deny" : "the allow",
           (double)(clock_now_ns() - t0) / 1e9);
    return window(b, K8S_NETREADY_SETTLE_MS, err);
}

/* Stops the probers of one phase and puts each document into its node's record under key
 * ("probe", "pod_probe"), or an error ("error", "pod_error"). */
static void collect(struct k8s_backend *b, struct target *ts, size_t n, bool newpod, json_t *nodes)
{
    for (size_t i = 0; i < n; i++)
        k8s_watch_probe_stop(&b->base, prober(&ts[i], newpod));
    for (size_t i = 0; i < n; i++) {
        json_t *rec = json_array_get(nodes, i), *doc;
        struct kp_err err = {{0}};
        json_error_t jerr;

        if (k8s_watch_probe_wait(prober(&ts[i], newpod), &err) != 0)
            kp_log(KP_LOG_WARN, "netpol-readiness: %s", kp_err_msg(&err));
        doc = k8s_watch_probe_doc(prober(&ts[i], newpod), &jerr);
        if (!doc)
            json_object_set_new(rec, newpod ? "pod_error" : "error",
                                json_sprintf("the prober's document: %s", jerr.text));
        else
            json_object_set_new(rec, newpod ? "pod_probe" : "probe", doc);
    }
}

/* The new-pod phase: a new prober on every node, started while the egress deny (created before
 * the targets) already selects it, until each sees its probes refused. */
static int pod_phase(struct k8s_backend *b, struct target *ts, size_t n, json_t *nodes,
                     struct kp_err *err)
{
    if (start_probers(b, ts, n, true, err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        ts[i].off = 0; /* its probes are refused from its start when all is well */
    if (wait_seen(b, ts, n, true, true, err) != 0)
        return -1;
    collect(b, ts, n, true, nodes);
    return 0;
}

static int measure(struct k8s_backend *b, struct target *ts, size_t n, json_t *nodes, double *at,
                   struct kp_err *err)
{
    uint64_t lead;

    if (create_policy(b, EGRESS, &at[2], err) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (create_target(b, &ts[i], err) != 0)
            return -1;
    for (size_t i = 0; i < n; i++)
        if (wait_target(b, &ts[i], err) != 0)
            return -1;
    if (start_probers(b, ts, n, false, err) != 0)
        return -1;
    lead = clock_now_ns();
    if (pod_phase(b, ts, n, nodes, err) != 0)
        return -1;
    lead = (clock_now_ns() - lead) / 1000000;
    if (lead < K8S_NETREADY_LEAD_MS && window(b, K8S_NETREADY_LEAD_MS - (unsigned)lead, err) != 0)
        return -1;
    for (int k = DENY; k <= ALLOW; k++) {
        for (size_t i = 0; i < n; i++)
            mark(&ts[i], false);
        if (create_policy(b, k, &at[k], err) != 0 ||
            wait_seen(b, ts, n, false, k == DENY, err) != 0)
            return -1;
    }
    kp_log(KP_LOG_INFO, "netpol-readiness: deny at %.3f, allow at %.3f", at[DENY], at[ALLOW]);
    collect(b, ts, n, false, nodes);
    return 0;
}

json_t *k8s_netready_run(struct backend *base, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct target ts[MAX_NODES] = {{0}};
    size_t n = 0, i;
    json_t *nodes = json_array(), *out = NULL, *v;
    char *name;
    double at[N_POLICIES];

    json_array_foreach(b->nodes, i, v)
    {
        if (n == MAX_NODES)
            break;
        ts[n].node = k8s_facts_node_name(v);
        json_array_append_new(nodes, json_pack("{s:s}", "node", ts[n].node));
        snprintf(ts[n].slot, sizeof(ts[0].slot), "np-%zu", n);
        n++;
    }
    if (json_array_size(b->nodes) > MAX_NODES)
        kp_log(KP_LOG_INFO, "netpol-readiness: the first %d of %zu nodes", MAX_NODES,
               json_array_size(b->nodes));
    if (measure(b, ts, n, nodes, at, err) == 0)
        out = json_pack("{s:f, s:f, s:O}", "deny_at", at[DENY], "allow_at", at[ALLOW], "nodes",
                        nodes);
    for (i = 0; i < n; i++) {
        char *ds = k8s_objects_daemonset_name("pod", ts[i].slot);
        for (int np = 0; np < 2; np++) {
            struct backend_probe *p = prober(&ts[i], np);
            if (p) {
                k8s_watch_probe_stop(base, p);
                k8s_watch_probe_free(base, p);
            }
        }
        delete_named(b, &KUBE_RES_DAEMONSETS, ds);
        free(ds);
        free(ts[i].hostport);
    }
    for (int k = 0; k < N_POLICIES; k++) {
        json_decref(policy(b, k, &name));
        delete_named(b, &K8S_RES_NETWORKPOLICIES, name);
        free(name);
    }
    json_decref(nodes);
    return out;
}
