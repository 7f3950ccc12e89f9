/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_sweep.c - ring pairs and per-node servers of sweep mode (see k8s_sweep.h). */
#include "controller/k8s/k8s_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/rowkey.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_nodewatch.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_wait.h"

/* A Job started ahead of the runner's call for its group, and what it gave once collected. */
struct ahead {
    const struct plan_group *g;
    struct run_spec spec;      /* as started: a later call must ask for the same */
    struct k8s_client_run *cr; /* NULL once collected */
    json_t *doc;
    int rc;
    struct kp_err err;
    char cause[K8S_CAUSE_MAX]; /* why its pod could not start (k8s_podfail), "" if not that */
};

struct k8s_sweep_state {
    struct plan *plan; /* the runner's: pairs of a node found NotReady are marked skipped */
    json_t *down;      /* node name -> why it is not Ready (found after a pair failed) */
    json_t *unsched;   /* node name -> {why, cause}: its sweep server pod cannot start */
    json_t *lost;      /* node name -> {why, cause}: its network failed mid-run (as client) */
    json_t *by_client; /* client node name -> its pair of the facts' "pairs" (borrowed) */
    struct ahead *ahead;
    size_t n_ahead;
    const struct plan_group **started; /* groups whose first Job was made (never again ahead) */
    size_t n_started;
};

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
    for (size_t i = 0; i < n; i++) {
        /* the first round in which neither end is busy (pairs before it, in ring order) */
        int round = 0;
        for (size_t k = 0; k < i; k++) {
            const json_t *p = json_array_get(ring, k);
            const char *c = json_string_value(json_object_get(p, "client"));
            const char *sv = json_string_value(json_object_get(p, "server"));
            int r = (int)json_integer_value(json_object_get(p, "round"));
            if (r == round && (strcmp(c, v[i]) == 0 || strcmp(sv, v[i]) == 0 ||
                               strcmp(c, v[(i + 1) % n]) == 0 || strcmp(sv, v[(i + 1) % n]) == 0)) {
                round++;
                k = (size_t)-1; /* rescan the pairs for the next round */
            }
        }
        json_array_append_new(ring, json_pack("{s:s, s:s, s:i}", "client", v[i], "server",
                                              v[(i + 1) % n], "round", round));
    }
    free(v);
    return ring;
}

void k8s_sweep_cni_versions(json_t *infos, const json_t *pods, const char *container)
{
    size_t i, k;
    json_t *pod, *info, *c;

    json_array_foreach(pods, i, pod)
    {
        const json_t *spec = json_object_get(pod, "spec");
        const char *node = json_string_value(json_object_get(spec, "nodeName"));
        const json_t *use = json_array_get(json_object_get(spec, "containers"), 0);
        json_array_foreach(json_object_get(spec, "containers"), k, c)
        {
            const char *n = json_string_value(json_object_get(c, "name"));
            if (container && n && strcmp(n, container) == 0)
                use = c;
        }
        const char *image = json_string_value(json_object_get(use, "image"));
        if (!node || !image)
            continue;
        json_array_foreach(infos, k, info)
        {
            const char *name = json_string_value(json_object_get(info, "name"));
            if (name && strcmp(name, node) == 0) {
                char *tag = k8s_facts_image_tag(image);
                json_object_set_new(info, "cni_version", json_string(tag));
                free(tag);
            }
        }
    }
}

/* the CNI agent's DaemonSets in kube-system, most specific first, and their agent container */
static const char *const cni_daemonsets[][2] = {
    {"cilium", "cilium-agent"},
    {"calico-node", "calico-node"},
    {"aws-node", "aws-node"},
    {"kube-flannel-ds", "kube-flannel"},
    {"antrea-agent", "antrea-agent"},
    {"tke-eni-agent", "tke-eni-agent"},
    {"tke-bridge-agent", "tke-bridge-agent"},
    {"weave-net", "weave"},
    {"kube-router", "kube-router"},
    {"kindnet", "kindnet-cni"},
};

/* best effort: the CNI version per node from its DaemonSet's pods (two list calls) */
static void node_cni_versions(struct k8s_backend *b, json_t *infos)
{
    const char *cni = json_string_value(json_object_get(json_object_get(b->facts, "cni"), "name"));
    json_t *ds = NULL, *pods = NULL;
    struct kp_err e;

    if (!cni || strcmp(cni, "unknown") == 0)
        return;
    for (size_t k = 0; k < sizeof(cni_daemonsets) / sizeof(cni_daemonsets[0]); k++) {
        json_t *labels;
        const char *key;
        json_t *v;
        char sel[512] = "";
        struct kube_list_opts lo = {.label_selector = sel};
        if (kube_get(b->kc, &KUBE_RES_DAEMONSETS, "kube-system", cni_daemonsets[k][0], &ds, &e) !=
            0) {
            ds = NULL;
            continue;
        }
        labels = json_object_get(json_object_get(json_object_get(ds, "spec"), "selector"),
                                 "matchLabels");
        json_object_foreach(labels, key, v)
        {
            size_t len = strlen(sel);
            snprintf(sel + len, sizeof(sel) - len, "%s%s=%s", len ? "," : "", key,
                     json_string_value(v) ? json_string_value(v) : "");
        }
        if (*sel && kube_list_all(b->kc, &KUBE_RES_PODS, "kube-system", &lo, &pods, &e) == 0)
            k8s_sweep_cni_versions(infos, pods, cni_daemonsets[k][1]);
        else if (*sel)
            kp_log(KP_LOG_INFO, "CNI version per node not recorded: %s", kp_err_msg(&e));
        json_decref(pods);
        json_decref(ds);
        return;
    }
}

static void mark_unschedulable(struct k8s_backend *b, const char *name, json_t *f);

/* the nodes kept with their network not ready (b->net_down): their pairs fail at once */
static void mark_net_down(struct k8s_backend *b)
{
    size_t i;
    json_t *node;

    json_array_foreach(b->net_down, i, node)
    {
        const char *name = k8s_facts_node_name(node);
        char *nr = k8s_facts_node_not_ready(node);
        char *why = kp_xasprintf("node %s is NotReady (cni-not-ready): %s", name,
                                 nr ? nr : "NetworkReady=false");
        json_t *f = json_pack("{s:s, s:s}", "why", why, "cause", "cni-not-ready");
        free(why);
        free(nr);
        mark_unschedulable(b, name, f);
        json_decref(f);
    }
}

void k8s_sweep_plan(struct k8s_backend *b, struct plan *plan)
{
    size_t n = json_array_size(b->nodes) + json_array_size(b->net_down), i;
    json_t *names = json_array(), *infos = json_array(), *ring;
    const char **clients;
    json_t *node, *p;

    json_array_foreach(b->nodes, i, node)
    {
        json_array_append_new(names, json_string(k8s_facts_node_name(node)));
        json_array_append_new(infos, k8s_facts_node_info(node, "swept"));
    }
    json_array_foreach(b->net_down, i, node)
    {
        json_array_append_new(names, json_string(k8s_facts_node_name(node)));
        json_array_append_new(infos, k8s_facts_node_info(node, "swept"));
    }
    node_cni_versions(b, infos);
    ring = k8s_sweep_ring(names);
    clients = kp_xcalloc(n ? n : 1, sizeof(*clients));
    json_array_foreach(ring, i, p) clients[i] = json_string_value(json_object_get(p, "client"));
    plan_expand_sweep(plan, clients, n);
    free(clients);
    json_object_set_new(b->facts, "sweep",
                        json_pack("{s:s, s:i, s:o, s:o}", "pairing", "ring", "parallel",
                                  b->ro->parallel, "pairs", ring, "nodes", infos));
    json_decref(names);
    if (!b->sweep)
        b->sweep = kp_xcalloc(1, sizeof(*b->sweep));
    b->sweep->plan = plan;
    /* partner() and round_of() are asked for every group when pairs are started ahead: a
     * lookup, not a scan of the ring (that made starting a 500-node sweep's pairs cubic) */
    json_decref(b->sweep->by_client);
    b->sweep->by_client = json_object();
    json_array_foreach(ring, i, p)
    {
        const char *c = json_string_value(json_object_get(p, "client"));
        if (c)
            json_object_set(b->sweep->by_client, c, p);
    }
    mark_net_down(b);
}

/* the pair whose client is `client`, or NULL */
static const json_t *pair_of(const struct k8s_backend *b, const char *client)
{
    size_t i;
    json_t *p;

    if (b->sweep && b->sweep->by_client)
        return json_object_get(b->sweep->by_client, client);
    json_array_foreach(json_object_get(json_object_get(b->facts, "sweep"), "pairs"), i, p)
    {
        const char *c = json_string_value(json_object_get(p, "client"));
        if (c && strcmp(c, client) == 0)
            return p;
    }
    return NULL;
}

/* the ring successor of client (a name), from the facts' pairs */
static const char *partner(const struct k8s_backend *b, const char *client)
{
    return json_string_value(json_object_get(pair_of(b, client), "server"));
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
    if (strcmp(server, k8s_facts_node_name(b->node_a)) == 0) {
        /* an address, not a row key: a group always has its family (plan_set_families in
         * k8s_prepare); the run's first stands in as k8s_backend_int.h's NULL does */
        int f = K8S_FAM(g->ip_family ? g->ip_family : b->ip_families[0]);
        return strcmp(network, "host") == 0 ? b->host_server_ip[f] : b->pod_server_ip[f];
    }
    /* the other nodes' sweep servers: their primary address (one family per sweep for now) */
    return json_string_value(json_object_get(json_object_get(b->sweep_servers, network), server));
}

/* the server a client Job of group g measures against: its sweep pair's, or NULL (the
 * group's usual one: a Service, the external server, a group that is not a sweep pair) */
static const char *server_of(const struct k8s_backend *b, const struct plan_group *g)
{
    struct k8s_group_target t;

    k8s_objects_group_target(g, &t);
    return t.via_service ? NULL : k8s_sweep_server(b, g, t.server_network);
}

/* the DaemonSet of `network` on every eligible node but A (A's own servers serve A) */
static json_t *sweep_daemonset(struct k8s_backend *b, const char *network)
{
    json_t *values = json_array(), *ds;
    size_t i;
    json_t *node;

    json_array_foreach(b->nodes, i, node)
    {
        if (node != b->node_a)
            json_array_append_new(values, json_string(k8s_facts_node_hostname(node)));
    }
    ds = k8s_deploy_sweep_daemonset(&b->d, network, values);
    json_decref(values);
    return ds;
}

/* A node whose sweep server pod cannot start (k8s_podfail: the scheduler cannot place it, a
 * full node, max-pods reached; no pod network; an image that will not pull): its pairs, as
 * client or server, fail at once with why (k8s_sweep_run_client) and its node fact says so;
 * the other pairs run. f: {why, cause} (borrowed). */
static void mark_unschedulable(struct k8s_backend *b, const char *name, json_t *f)
{
    const char *why = json_string_value(json_object_get(f, "why"));
    size_t i;
    json_t *info;

    if (!b->sweep || json_object_get(b->sweep->unsched, name))
        return;
    if (!b->sweep->unsched)
        b->sweep->unsched = json_object();
    json_object_set(b->sweep->unsched, name, f);
    json_array_foreach(json_object_get(json_object_get(b->facts, "sweep"), "nodes"), i, info)
    {
        const char *nm = json_string_value(json_object_get(info, "name"));
        if (nm && strcmp(nm, name) == 0) {
            json_object_set_new(info, "skipped", json_string(why));
            json_object_set(info, "cause", json_object_get(f, "cause"));
        }
    }
    kp_log(KP_LOG_WARN, "sweep: %s; the pairs of node %s fail at once, the sweep goes on", why,
           name);
}

static int deploy_network(struct k8s_backend *b, const char *network, size_t want,
                          struct kp_err *err)
{
    json_t *ds = sweep_daemonset(b, network), *stored = NULL, *pods = NULL, *ips = json_object();
    json_t *unsched = json_object();
    const char *k;
    json_t *v;
    const char *name = json_string_value(json_object_get(json_object_get(ds, "metadata"), "name"));
    char *sel = kp_xasprintf("%s=%s,%s=server,%s=%s,%s=sweep", K8S_LABEL_RUN_ID, b->d.run_id,
                             K8S_LABEL_ROLE, K8S_LABEL_NETWORK, network, K8S_LABEL_SLOT);
    char *what = kp_xasprintf("%s-network sweep servers on %zu nodes", network, want);
    size_t i;
    json_t *p;
    int rc = -1;

    const char *ns = k8s_objects_ns(&b->d.obj, strcmp(network, "host") == 0);
    if (kube_create(b->kc, &KUBE_RES_DAEMONSETS, ns, ds, NULL, &stored, err) != 0) {
        kp_err_prefix(err, "creating DaemonSet %s", name ? name : "?");
        goto out;
    }
    struct k8s_wait_opts wo = {
        .ns = ns,
        .selector = sel,
        .owner = name,
        .owner_uid = json_string_value(json_object_get(json_object_get(stored, "metadata"), "uid")),
        .what = what,
        .goal = K8S_WAIT_READY,
        .want = want,
        .timeout_ms = b->ro->timeout_ms,
        .failed_nodes = unsched,
        .events = b->podevents,
        .cause_out = b->fail_cause};
    if (k8s_wait_pods(b->kc, &wo, &pods, err) != 0)
        goto out;
    json_object_foreach(unsched, k, v) mark_unschedulable(b, k, v);
    k8s_backend_note_cpu_limit(b, pods, "sweep server pods");
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
    if (json_object_size(ips) + json_object_size(unsched) < want) {
        kp_err_set(err, "%s: %zu of %zu ready pods have a node and an address", what,
                   json_object_size(ips), want - json_object_size(unsched));
        goto out;
    }
    json_object_set(b->sweep_servers, network, ips);
    rc = 0;
out:
    json_decref(unsched);
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

void k8s_sweep_sync_nodes(struct k8s_backend *b)
{
    json_t *down, *d, *info;
    const char *name;
    size_t i;

    if (!b->sweep || !b->nodewatch)
        return;
    if (!b->sweep->lost)
        b->sweep->lost = json_object();
    down = k8s_nodewatch_down(b->nodewatch);
    json_object_foreach(down, name, d)
    {
        if (json_object_get(b->sweep->lost, name))
            continue;
        json_object_set_new(b->sweep->lost, name,
                            json_pack("{s:o, s:s}", "why",
                                      json_sprintf("node %s is NotReady (cni-not-ready): %s", name,
                                                   json_string_value(json_object_get(d, "why"))),
                                      "cause", "cni-not-ready"));
        /* the figures a test or a person checks the time to diagnosis with */
        json_array_foreach(json_object_get(json_object_get(b->facts, "sweep"), "nodes"), i, info)
        {
            const char *nm = json_string_value(json_object_get(info, "name"));
            if (!nm || strcmp(nm, name) != 0 || json_object_get(info, "skipped"))
                continue;
            json_object_set_new(info, "skipped",
                                json_sprintf("node %s turned NotReady mid-run (cni-not-ready): %s",
                                             name, json_string_value(json_object_get(d, "why"))));
            json_object_set_new(info, "cause", json_string("cni-not-ready"));
            json_object_set(info, "not_ready_since_unix_s", json_object_get(d, "since_unix_s"));
            json_object_set(info, "diagnosed_unix_s", json_object_get(d, "detected_unix_s"));
        }
    }
    json_decref(down);
}

/* Why a pair cannot run because one of its nodes cannot take its pod: "server node n-3: pod
 * ... is unschedulable: ..." (new string), or NULL; *cause (may be NULL): its k8s_podfail
 * cause, borrowed from the sweep's state. A node whose network failed mid-run (the node watch)
 * fails the pairs whose client runs there (a new pod); its sweep server, up already, keeps its
 * network (a missing conflist blocks new sandboxes only), so pairs towards it still run. */
static char *unschedulable_end(const struct k8s_backend *b, const struct plan_group *g,
                               const char **cause)
{
    const char *ends[2] = {g->node, g->node ? partner(b, g->node) : NULL};

    if (!b->sweep || g->placement != PLACEMENT_NODE)
        return NULL;
    for (int k = 0; k < 2; k++) {
        const json_t *f = ends[k] ? json_object_get(b->sweep->unsched, ends[k]) : NULL;
        if (!f && k == 0 && ends[0])
            f = json_object_get(b->sweep->lost, ends[0]);
        if (f) {
            if (cause)
                *cause = json_string_value(json_object_get(f, "cause"));
            return kp_xasprintf("%s node %s: %s", k == 0 ? "client" : "server", ends[k],
                                json_string_value(json_object_get(f, "why")));
        }
    }
    return NULL;
}

/* the round of the pair whose client is `client` (-1 when unknown) */
static int round_of(const struct k8s_backend *b, const char *client)
{
    const json_t *p = pair_of(b, client);

    return p ? (int)json_integer_value(json_object_get(p, "round")) : -1;
}

static int was_started(const struct k8s_sweep_state *st, const struct plan_group *g)
{
    for (size_t i = 0; i < st->n_started; i++)
        if (st->started[i] == g)
            return 1;
    return 0;
}

static void mark_started(struct k8s_sweep_state *st, const struct plan_group *g)
{
    if (was_started(st, g))
        return;
    st->started = kp_xrealloc(st->started, (st->n_started + 1) * sizeof(*st->started));
    st->started[st->n_started++] = g;
}

static int same_spec(const struct run_spec *a, const struct run_spec *b)
{
    return a->n_tests == b->n_tests &&
           memcmp(a->tests, b->tests, a->n_tests * sizeof(*a->tests)) == 0 &&
           a->samples == b->samples && a->duration_ms == b->duration_ms &&
           a->omit_ms == b->omit_ms && a->timeout_ms == b->timeout_ms;
}

static void collect(struct k8s_backend *b, struct ahead *a)
{
    struct k8s_client_run *cr = a->cr;

    if (!cr)
        return;
    a->cr = NULL;
    kp_err_clear(&a->err);
    b->fail_cause[0] = '\0';
    a->rc = k8s_client_finish(b, cr, &a->doc, &a->err);
    snprintf(a->cause, sizeof(a->cause), "%s", a->rc != 0 ? b->fail_cause : "");
    b->fail_cause[0] = '\0';
}

static void drop_ahead(struct k8s_sweep_state *st, size_t i)
{
    json_decref(st->ahead[i].doc);
    st->ahead[i] = st->ahead[--st->n_ahead];
}

/* The key of the rows group g gives, without its tests (base/rowkey.h): groups of one sweep
 * series differ only in their placement ("node:<client>"). */
static void group_key(const struct plan_group *g, struct rowkey *k)
{
    rowkey_make(k, plan_scenario_name(g->scenario), g->placement_label, "", g->reverse,
                g->ip_family);
}

/* Jobs for up to parallel-1 more groups of g's round and series (scenario, direction, family) */
static void start_ahead(struct k8s_backend *b, const struct run_spec *spec)
{
    struct k8s_sweep_state *st = b->sweep;
    const struct plan_group *g = spec->group;
    int round = round_of(b, g->node);
    size_t more = (size_t)b->ro->parallel - 1;
    struct rowkey kg;

    group_key(g, &kg);
    kp_log(KP_LOG_DEBUG, "sweep: %s is round %d; up to %zu more pairs of it at once",
           g->placement_label, round, more);

    for (size_t i = 0; more > 0 && i < plan_group_count(st->plan) && !b->stop; i++) {
        const struct plan_group *o = plan_group_get(st->plan, i);
        struct ahead a = {.g = o};
        struct kp_err e;
        struct rowkey ko;
        char *no = unschedulable_end(b, o, NULL);
        int cannot = no != NULL;
        free(no);
        group_key(o, &ko);
        if (cannot || o == g || o->skipped || o->placement != PLACEMENT_NODE || !o->node ||
            !rowkey_same_series(&ko, &kg) || was_started(st, o) || round_of(b, o->node) != round)
            continue;
        a.spec = *spec;
        a.spec.group = o;
        a.spec.tests = o->tests; /* the group's own array: same kinds, its lifetime */
        if (o->n_tests != spec->n_tests ||
            memcmp(o->tests, spec->tests, spec->n_tests * sizeof(*spec->tests)) != 0)
            continue;
        if (k8s_client_start(b, &a.spec, server_of(b, o), &a.cr, &e) != 0) {
            kp_log(KP_LOG_INFO, "sweep: not starting %s ahead: %s", o->placement_label,
                   kp_err_msg(&e));
            break;
        }
        k8s_client_skip_readiness(a.cr); /* first watched when collected: stages untimed */
        mark_started(st, o);
        st->ahead = kp_xrealloc(st->ahead, (st->n_ahead + 1) * sizeof(*st->ahead));
        st->ahead[st->n_ahead++] = a;
        more--;
    }
}

/* Marks node `name` down: its pairs not run yet (as client or server) are skipped, and the
 * sweep's node facts say why. */
static void mark_down(struct k8s_backend *b, const char *name, const char *why)
{
    struct k8s_sweep_state *st = b->sweep;
    size_t n = plan_group_count(st->plan), n_extra = 0, i, skipped;
    size_t *extra = kp_xcalloc(n + 1, sizeof(*extra));
    /* a node whose runtime network is not ready (no conflist, the CNI agent down) */
    int cni = strstr(why, "NetworkReady=false") != NULL;
    char *reason =
        kp_xasprintf("node %s is NotReady%s: %s", name,
                     cni ? " (cni-not-ready: the CNI is not ready on the node)" : "", why);
    json_t *info;

    json_object_set_new(st->down, name, json_string(why));
    for (i = 0; i < n; i++) {
        const struct plan_group *o = plan_group_get(st->plan, i);
        const char *server = o->placement == PLACEMENT_NODE && o->node ? partner(b, o->node) : NULL;
        /* its pairs as client or server that were not started (the ones running end alone) */
        if (server && !was_started(st, o) &&
            (strcmp(server, name) == 0 || strcmp(o->node, name) == 0))
            extra[n_extra++] = i;
    }
    skipped = plan_skip_node(st->plan, NULL, extra, n_extra, reason);
    json_array_foreach(json_object_get(json_object_get(b->facts, "sweep"), "nodes"), i, info)
    {
        const char *nm = json_string_value(json_object_get(info, "name"));
        if (nm && strcmp(nm, name) == 0)
            json_object_set_new(info, "skipped", json_string(reason));
    }
    kp_log(KP_LOG_WARN, "sweep: %s; %zu of its pairs not run yet are skipped, the sweep goes on",
           reason, skipped);
    free(reason);
    free(extra);
}

/* After a pair failed: its two nodes, read once each (a node known down is not read again); a
 * NotReady one is marked down. Returns what the pair's error should say first ("server node
 * n-3 is NotReady (...)"), or NULL when both nodes are Ready. Caller frees. */
static char *check_pair_nodes(struct k8s_backend *b, const struct plan_group *g)
{
    struct k8s_sweep_state *st = b->sweep;
    const char *ends[2] = {g->node, g->node ? partner(b, g->node) : NULL};
    char *note = NULL;

    if (!st->down)
        st->down = json_object();
    for (int k = 0; k < 2; k++) {
        const char *known;
        json_t *n = NULL;
        struct kp_err ne;
        char *why = NULL;
        if (!ends[k])
            continue;
        known = json_string_value(json_object_get(st->down, ends[k]));
        if (!known && kube_get(b->kc, &KUBE_RES_NODES, NULL, ends[k], &n, &ne) == 0) {
            why = k8s_facts_node_not_ready(n);
            if (why)
                mark_down(b, ends[k], why);
        }
        json_decref(n);
        if ((known || why) && !note)
            note = kp_xasprintf(
                "%s node %s is NotReady %s(%s)", k == 0 ? "client" : "server", ends[k],
                strstr(known ? known : why, "NetworkReady=false") ? "(cni-not-ready) " : "",
                known ? known : why);
        free(why);
    }
    return note;
}

/* a measurement that ran but failed (the agent's errors in doc): each error starts with note */
static void prefix_doc_errors(json_t *doc, const char *note)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(doc, "errors"), i, e)
    {
        const char *msg = json_string_value(json_object_get(e, "error"));
        json_object_set_new(e, "error", json_sprintf("%s: %s", note, msg ? msg : ""));
        if (strstr(note, "NetworkReady=false")) /* the cluster's failure (docs/report.md) */
            json_object_set_new(e, "cause", json_string("cni-not-ready"));
    }
}

static int run_client(struct k8s_backend *b, const struct run_spec *spec, json_t **doc,
                      struct kp_err *err);

int k8s_sweep_run_client(struct k8s_backend *b, const struct run_spec *spec, json_t **doc,
                         struct kp_err *err)
{
    const char *cause = NULL;
    char *note;
    int rc;

    k8s_sweep_sync_nodes(b);
    note = unschedulable_end(b, spec->group, &cause);

    if (note) { /* no Job: its pod would not start either */
        *doc = NULL;
        snprintf(b->fail_cause, sizeof(b->fail_cause), "%s", cause ? cause : "");
        kp_err_set(err, "%s", note);
        free(note);
        return -1;
    }
    rc = run_client(b, spec, doc, err);

    if (b->stop || !b->sweep || spec->group->placement != PLACEMENT_NODE)
        return rc;
    if (rc != 0 || json_array_size(json_object_get(*doc, "errors")) > 0)
        note = check_pair_nodes(b, spec->group);
    if (note && rc != 0 && strstr(note, "NetworkReady=false"))
        snprintf(b->fail_cause, sizeof(b->fail_cause), "%s", "cni-not-ready");
    if (note && rc != 0 && !strstr(kp_err_msg(err), "is NotReady"))
        kp_err_prefix(err, "%s", note);
    else if (note)
        prefix_doc_errors(*doc, note);
    free(note);
    return rc;
}

static int run_client(struct k8s_backend *b, const struct run_spec *spec, json_t **doc,
                      struct kp_err *err)
{
    struct k8s_sweep_state *st = b->sweep;
    struct k8s_client_run *cr = NULL;
    int round;

    *doc = NULL;
    if (!st) {
        if (k8s_client_start(b, spec, server_of(b, spec->group), &cr, err) != 0)
            return -1;
        return k8s_client_finish(b, cr, doc, err);
    }
    for (size_t i = 0; i < st->n_ahead; i++) {
        struct ahead *a = &st->ahead[i];
        if (a->g != spec->group)
            continue;
        if (!same_spec(&a->spec, spec)) { /* the runner wants something else: start afresh */
            if (a->cr)
                k8s_client_abandon(b, a->cr);
            a->cr = NULL;
            drop_ahead(st, i);
            break;
        }
        collect(b, a);
        *doc = a->doc;
        a->doc = NULL;
        int rc = a->rc;
        if (rc != 0) {
            kp_err_set(err, "%s", kp_err_msg(&a->err));
            snprintf(b->fail_cause, sizeof(b->fail_cause), "%s", a->cause);
        }
        drop_ahead(st, i);
        return rc;
    }
    /* pairs of another round still running would share a node with this one: collect them */
    round = round_of(b, spec->group->node);
    for (size_t i = 0; i < st->n_ahead; i++)
        if (round_of(b, st->ahead[i].g->node) != round)
            collect(b, &st->ahead[i]);
    if (k8s_client_start(b, spec, server_of(b, spec->group), &cr, err) != 0)
        return -1;
    if (!was_started(st, spec->group)) {
        mark_started(st, spec->group);
        start_ahead(b, spec);
    }
    return k8s_client_finish(b, cr, doc, err);
}

json_t *k8s_sweep_down_nodes(const struct k8s_backend *b)
{
    json_t *out = json_array();
    const char *k;
    json_t *v;

    if (b->sweep)
        json_object_foreach(b->sweep->down, k, v) json_array_append_new(out, json_string(k));
    return out;
}

void k8s_sweep_free(struct k8s_backend *b)
{
    struct k8s_sweep_state *st = b->sweep;

    if (!st)
        return;
    for (size_t i = 0; i < st->n_ahead; i++) {
        if (st->ahead[i].cr)
            k8s_client_abandon(b, st->ahead[i].cr);
        json_decref(st->ahead[i].doc);
    }
    free(st->ahead);
    free(st->started);
    json_decref(st->down);
    json_decref(st->unsched);
    json_decref(st->lost);
    json_decref(st->by_client);
    free(st);
    b->sweep = NULL;
}
