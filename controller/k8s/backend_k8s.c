/* SPDX-License-Identifier: Apache-2.0 */
/* backend_k8s.c - the Kubernetes backend (see backend_k8s.h): prepare (facts, nodes,
 * preflight, deploy, wait), run_client (one Job per group, logs parsed before deletion),
 * describe, interrupt and cleanup. Preflight and deployment live in k8s_prepare.c. */
#include "controller/k8s/backend_k8s.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/logdoc.h"
#include "base/result.h"
#include "controller/agent_args.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_cleanup.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_readiness.h"
#include "controller/k8s/k8s_sweep.h"
#include "controller/k8s/k8s_wait.h"

#define LOG_MAX_BYTES (16L << 20)

unsigned backend_k8s_requests(const struct backend *base)
{
    const struct k8s_backend *b = (const struct k8s_backend *)base;

    return b->kc ? (unsigned)kube_request_count(b->kc) : 0;
}

const char *k8s_backend_node_hostname(const struct k8s_backend *b, const char *name)
{
    size_t i;
    json_t *n;

    json_array_foreach(b->nodes, i, n)
    {
        if (strcmp(k8s_facts_node_name(n), name) == 0)
            return k8s_facts_node_hostname(n);
    }
    return name;
}

const char *k8s_backend_client_node(const struct k8s_backend *b, const struct plan_group *g,
                                    const struct k8s_group_target *t)
{
    if (g->placement == PLACEMENT_NODE && g->node)
        return g->node;
    if (t->client_on_a || !b->node_b)
        return k8s_facts_node_name(b->node_a);
    return k8s_facts_node_name(b->node_b);
}

const char *k8s_backend_server_addr(const struct k8s_backend *b, const struct k8s_group_target *t,
                                    const char *ip_family)
{
    int f = K8S_FAM(ip_family ? ip_family : b->ip_families[0]);

    if (!t->server_network)
        return b->ro->external_host;
    if (t->via_service)
        return b->service_ip[f];
    return strcmp(t->server_network, "host") == 0 ? b->host_server_ip[f] : b->pod_server_ip[f];
}

/* The JSON document in a client pod's log, without the agent's stderr lines that the runtime
 * merged into it (base/logdoc.h); validates exactly those bytes. New reference or NULL with
 * err. */
static json_t *doc_from_log(const char *log, size_t len, const char *pod, struct kp_err *err)
{
    size_t n;
    char *text = logdoc_extract(log, len, &n); /* ours */
    json_t *doc = NULL;

    if (!text) {
        kp_err_set(err, "client pod %s printed no result document", pod);
        return NULL;
    }
    if (result_parse(text, n, &doc, err) != 0) {
        kp_err_prefix(err, "client pod %s printed a malformed result", pod);
        doc = NULL;
    }
    free(text);
    return doc;
}

/* The last line of a log (for messages), at most 200 bytes. Caller frees. */
static char *last_line(const char *log, size_t len)
{
    while (len > 0 && (log[len - 1] == '\n' || log[len - 1] == '\r'))
        len--;
    size_t start = len;
    while (start > 0 && log[start - 1] != '\n')
        start--;
    if (len - start > 200)
        start = len - 200;
    return kp_xstrndup(log + start, len - start);
}

static int is_blocked_text(const char *s)
{
    return strstr(s, "timed out") || strstr(s, "timeout") || strstr(s, "no answer") ||
           strstr(s, "unreachable") || strstr(s, "No route") || strstr(s, "EHOSTUNREACH") ||
           strstr(s, "ETIMEDOUT");
}

/* Rewrites errors[] entries that mean "no answer" as "blocked: ...": a firewall or security
 * group that drops the port must not look like a slow network. */
static void mark_blocked(json_t *doc, const char *server, int port, const char *from)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(doc, "errors"), i, e)
    {
        const char *msg = json_string_value(json_object_get(e, "error"));
        if (!msg || strncmp(msg, "blocked", 7) == 0 || !is_blocked_text(msg))
            continue;
        char *text = kp_xasprintf("blocked: no answer from %s port %d from node %s (a security "
                                  "group or firewall may drop it): %s",
                                  server, port, from, msg);
        json_object_set_new(e, "error", json_string(text));
        free(text);
    }
}

struct client_run {
    char *job;
    char *selector;
    char *what;
    char *log;
    size_t log_len;
    json_t *pods;
    json_t *created; /* the Job as the API server stored it */
    const char *uid; /* its metadata.uid, borrowed from created */
};

static void client_run_free(struct client_run *r)
{
    free(r->job);
    free(r->selector);
    free(r->what);
    free(r->log);
    json_decref(r->pods);
    json_decref(r->created);
}

/* checks the finished pod ran where planned; -1 with err otherwise */
static int check_placement(const json_t *pod, const char *node, int host_network,
                           struct kp_err *err)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *ran = json_string_value(json_object_get(spec, "nodeName"));

    if (!ran || strcmp(ran, node) != 0)
        return kp_err_set(err, "client pod ran on node %s, not on %s as planned",
                          ran ? ran : "(none)", node);
    if (host_network != json_is_true(json_object_get(spec, "hostNetwork")))
        return kp_err_set(err, "client pod network is not the planned one");
    return 0;
}

struct k8s_client_run {
    struct run_spec spec; /* a copy; its pointers are the plan's */
    struct k8s_group_target t;
    const char *node, *server; /* borrowed from the backend */
    int port;
    json_t *job;
    struct client_run r;
    const char *kind;           /* readiness kind: "client", or "churn" (k8s_churn.c) */
    double created_s;           /* CLOCK_REALTIME when the Job was asked for */
    struct k8s_pod_times times; /* when the wait saw its pod scheduled and running */
};

void k8s_client_mark_churn(struct k8s_client_run *cr)
{
    cr->kind = "churn";
}

void k8s_client_skip_readiness(struct k8s_client_run *cr)
{
    cr->kind = NULL;
}

const char *k8s_client_job_name(const struct k8s_client_run *cr)
{
    return cr->r.job;
}

void k8s_client_set_times(struct k8s_client_run *cr, const struct k8s_pod_times *t)
{
    cr->times = *t;
}

/* appends the readiness of the run's pod to b->readiness */
static void record_readiness(struct k8s_backend *b, const struct k8s_client_run *cr,
                             const char *pod, const json_t *doc)
{
    if (!cr->kind)
        return;
    if (!b->readiness)
        b->readiness = json_array();
    json_array_append_new(b->readiness, k8s_readiness_record(pod, cr->node, cr->kind, cr->created_s,
                                                             &cr->times, doc));
}

/* deletes the Job (unless --keep) and frees the run */
static void client_run_end(struct k8s_backend *b, struct k8s_client_run *cr)
{
    struct kube_delete_opts dopts = {
        .propagation = KUBE_PROPAGATION_BACKGROUND, .grace_period_s = 0, .missing_ok = 1};

    if (cr->r.job && !b->ro->keep) {
        struct kp_err derr;
        kube_client_reset_abort(b->kc); /* delete even when interrupted */
        if (kube_delete(b->kc, &KUBE_RES_JOBS, b->d.ns, cr->r.job, &dopts, NULL, &derr) != 0)
            kp_log(KP_LOG_WARN, "deleting job %s: %s (cleanup will retry)", cr->r.job,
                   kp_err_msg(&derr));
        if (b->stop)
            kube_client_abort(b->kc);
    }
    json_decref(cr->job);
    client_run_free(&cr->r);
    free(cr);
}

int k8s_client_start(struct k8s_backend *b, const struct run_spec *spec,
                     struct k8s_client_run **out, struct kp_err *err)
{
    struct k8s_client_run *cr;
    const struct plan_group *g = spec->group;

    *out = NULL;
    if (b->stop)
        return kp_err_set(err, "interrupted");
    cr = kp_xcalloc(1, sizeof(*cr));
    cr->spec = *spec;
    k8s_objects_group_target(g, &cr->t);
    cr->node = k8s_backend_client_node(b, g, &cr->t);
    cr->server = cr->t.via_service ? NULL : k8s_sweep_server(b, g, cr->t.server_network);
    if (!cr->server)
        cr->server = k8s_backend_server_addr(b, &cr->t, g->ip_family);
    cr->port = cr->t.server_network ? b->ro->port : b->ro->external_port;
    if (!cr->server) {
        free(cr);
        return kp_err_set(err, "no server address for %s", plan_scenario_name(g->scenario));
    }
    cr->job =
        k8s_deploy_client_job(&b->d, spec, b->n_steps++, k8s_backend_node_hostname(b, cr->node),
                              cr->server, cr->port, &cr->r.job);
    cr->r.what = kp_xasprintf("client job %s on node %s", cr->r.job, cr->node);
    cr->kind = "client";
    cr->created_s = clock_unix_s();
    if (kube_create(b->kc, &KUBE_RES_JOBS, b->d.ns, cr->job, NULL, &cr->r.created, err) != 0) {
        kp_err_prefix(err, "creating %s", cr->r.what);
        client_run_end(b, cr);
        return -1;
    }
    cr->r.uid =
        json_string_value(json_object_get(json_object_get(cr->r.created, "metadata"), "uid"));
    if (!cr->r.uid) {
        kp_err_set(err, "creating %s: the API server returned no metadata.uid", cr->r.what);
        client_run_end(b, cr);
        return -1;
    }
    *out = cr;
    return 0;
}

int k8s_client_finish(struct k8s_backend *b, struct k8s_client_run *cr, json_t **doc,
                      struct kp_err *err)
{
    const struct run_spec *spec = &cr->spec;
    struct client_run *r = &cr->r;
    const char *node = cr->node, *server = cr->server;
    int port = cr->port;
    struct kube_log_opts lopts = {.container = "client", .limit_bytes = LOG_MAX_BYTES};
    const json_t *pod;
    const char *pod_name;
    int rc = -1;

    *doc = NULL;
    r->selector = kp_xasprintf("%s=%s,%s=%s", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_JOB, r->job);
    struct k8s_wait_opts wo = {
        .ns = b->d.ns,
        .selector = r->selector,
        .owner = r->job,
        .owner_uid = r->uid,
        .what = r->what,
        .goal = K8S_WAIT_FINISHED,
        .timeout_ms =
            spec->timeout_ms ? spec->timeout_ms : k8s_deploy_spec_ms(spec) + b->ro->timeout_ms,
        .times = &cr->times,
    };
    if (k8s_wait_pods(b->kc, &wo, &r->pods, err) != 0)
        goto out;
    pod = json_array_get(r->pods, 0);
    pod_name = json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    if (kube_pod_logs(b->kc, b->d.ns, pod_name, &lopts, &r->log, &r->log_len, err) != 0) {
        kp_err_prefix(err, "reading the log of client pod %s", pod_name);
        goto out;
    }
    if (check_placement(pod, node, cr->t.client_host_network, err) != 0) {
        kp_err_prefix(err, "pod %s", pod_name);
        goto out;
    }
    *doc = doc_from_log(r->log, r->log_len, pod_name, err);
    if (!*doc) {
        char *last = last_line(r->log, r->log_len);
        if (is_blocked_text(last))
            kp_err_set(err,
                       "blocked: client pod %s on node %s got no answer from %s port %d "
                       "(a security group or firewall may drop it): %s",
                       pod_name, node, server, port, last);
        else if (*last)
            kp_err_prefix(err, "last log line: %s", last);
        free(last);
        goto out;
    }
    if (agent_args_check_doc(spec, port, *doc, err) != 0) {
        kp_err_prefix(err, "client pod %s of job %s", pod_name, r->job);
        json_decref(*doc);
        *doc = NULL;
        goto out;
    }
    mark_blocked(*doc, server, port, node);
    record_readiness(b, cr, pod_name, *doc);
    rc = 0;
out:
    client_run_end(b, cr);
    return rc;
}

void k8s_client_abandon(struct k8s_backend *b, struct k8s_client_run *cr)
{
    if (cr)
        client_run_end(b, cr);
}

static int run_client(struct backend *base, const struct run_spec *spec, json_t **doc,
                      struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct k8s_client_run *cr = NULL;

    *doc = NULL;
    if (spec->group->placement == PLACEMENT_NODE && b->sweep)
        return k8s_sweep_run_client(b, spec, doc, err);
    if (k8s_client_start(b, spec, &cr, err) != 0)
        return -1;
    return k8s_client_finish(b, cr, doc, err);
}

void k8s_backend_note_cpu_limit(struct k8s_backend *b, const json_t *pods, const char *who)
{
    const char *cpu = NULL, *why = NULL;
    size_t i;
    json_t *p;

    if (b->cpu_limit_noted)
        return;
    json_array_foreach(pods, i, p)
    {
        if ((cpu = k8s_facts_pod_cpu_limit(p, &why)))
            break;
    }
    if (!cpu)
        return;
    b->cpu_limit_noted = 1;
    if (b->facts)
        json_object_set_new(b->facts, "agent_cpu_limit", json_string(cpu));
    kp_log(KP_LOG_WARN,
           "%s have a CPU limit of %s that kperf did not set (%s): stream rates measure that "
           "limit as much as the network; remove the LimitRange default of namespace %s, or run "
           "kperf in a namespace without one (-n)",
           who, cpu, why ? why : "a LimitRange default or a mutating webhook", b->d.ns);
}

static json_t *describe(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    return b->facts ? json_deep_copy(b->facts) : json_object();
}

static json_t *readiness(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    return b->readiness ? json_incref(b->readiness) : NULL;
}

static void interrupt(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;

    if (b->cleaning)
        return; /* cleanup always finishes; a third signal makes the runner quit at once */
    b->stop = 1;
    if (b->kc)
        kube_client_abort(b->kc);
}

void k8s_backend_lost(void *arg)
{
    struct k8s_backend *b = arg;

    b->stop = 1; /* before the abort: a delete that resets it aborts again (client_run_end) */
    if (b->kc)
        kube_client_abort(b->kc);
}

static const char *lost(struct backend *base)
{
    return k8s_lease_lost(((struct k8s_backend *)base)->lease);
}

static int cleanup(struct backend *base, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    unsigned n = 0;
    int rc;

    json_t *down;

    b->cleaning = 1;
    down = k8s_sweep_down_nodes(b); /* before k8s_sweep_free */
    k8s_sweep_free(b);              /* Jobs started ahead and never collected */
    if (!b->kc || !b->created) {
        json_decref(down);
        return 0;
    }
    kube_client_reset_abort(b->kc);
    if (k8s_lease_lost(b->lease)) { /* whoever deleted it removes the rest; waiting for
                                     * them would only hold the run up */
        kp_log(KP_LOG_WARN,
               "run %s: left the removal of namespace %s's objects to whoever deleted the "
               "run's lease ('kperf cleanup' removes anything left)",
               b->d.run_id, b->d.ns);
        json_decref(down);
        return 0;
    }
    /* stop renewing: from here the run ends; a cleanup that fails leaves a Lease that expires,
     * and the next run removes what is left. --keep: the objects stay on purpose, the Lease
     * goes (a kept run is not a crashed one). */
    k8s_lease_release(b->lease, b->ro->keep ? b->kc : NULL);
    b->lease = NULL;
    if (b->ro->keep) {
        json_decref(down);
        kp_log(
            KP_LOG_WARN,
            "--keep: left run %s in namespace %s. Remove it with 'kperf cleanup --run-id %s%s%s'",
            b->d.run_id, b->d.ns, b->d.run_id, b->ns_created ? "" : " -n ",
            b->ns_created ? "" : b->d.ns);
        return 0;
    }
    rc = k8s_cleanup_run_forcing(b->kc, b->d.ns, b->d.run_id, b->ns_created, b->ro->timeout_ms, &n,
                                 down, err);
    json_decref(down);
    if (rc == 0) {
        b->created = 0;
        kp_log(KP_LOG_INFO, "removed run %s (%u objects; %u API requests in all)", b->d.run_id, n,
               (unsigned)kube_request_count(b->kc));
    }
    return rc;
}

static void destroy(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;

    if (!b)
        return;
    k8s_sweep_free(b); /* before the client: it deletes the Jobs started ahead */
    k8s_lease_release(b->lease, NULL);
    kube_client_free(b->kc);
    k8s_deploy_cleanup(&b->d);
    kp_free_secret(b->token);
    json_decref(b->nodes);
    json_decref(b->facts);
    json_decref(b->sweep_servers);
    json_decref(b->readiness);
    for (int f = 0; f < 2; f++) {
        free(b->pod_server_ip[f]);
        free(b->host_server_ip[f]);
        free(b->service_ip[f]);
    }
    free(b);
}

static const struct backend_ops k8s_ops = {
    .name = "k8s",
    .batches_tests = true,
    .prepare = k8s_prepare,
    .run_client = run_client,
    .describe = describe,
    .readiness = readiness,
    .interrupt = interrupt,
    .lost = lost,
    .cleanup = cleanup,
    .destroy = destroy,
};

struct backend *backend_k8s_new(const struct run_options *opts, struct kp_err *err)
{
    struct k8s_backend *b = kp_xcalloc(1, sizeof(*b));
    unsigned char rnd[24];

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        free(b);
        kp_err_set(err, "cannot read random bytes for the run token");
        return NULL;
    }
    b->base.ops = &k8s_ops;
    b->ro = opts;
    b->token = kp_xmalloc(sizeof(rnd) * 2 + 1);
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(b->token + 2 * i, 3, "%02x", rnd[i]);
    explicit_bzero(rnd, sizeof(rnd));
    return &b->base;
}
