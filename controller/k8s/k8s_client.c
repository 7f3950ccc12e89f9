/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_client.c - the client Jobs of the Kubernetes backend (see k8s_client.h): their object,
 * where they run, and their start, finish and abandon. Calls nothing above it. */
#include "controller/k8s/k8s_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/logdoc.h"
#include "base/result.h"
#include "controller/agent_args.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_readiness.h"

#define LOG_MAX_BYTES (16L << 20)

uint64_t k8s_client_spec_ms(const struct run_spec *spec)
{
    uint64_t per = spec->duration_ms + spec->omit_ms;
    uint64_t n = (uint64_t)spec->n_tests * (uint64_t)(spec->samples > 0 ? spec->samples : 1);

    return per * n;
}

json_t *k8s_client_make_job(const struct k8s_deploy *d, const struct run_spec *spec, unsigned step,
                            const char *client_host, const char *server, int port, char **name_out)
{
    const struct plan_group *g = spec->group;
    struct k8s_group_target t;
    struct k8s_objects_opts o = d->obj;
    struct agent_args_opts ao = {.host = server, .port = port, .token_file = K8S_TOKEN_FILE};
    char **argv;
    char *name =
        k8s_objects_job_name(plan_scenario_name(g->scenario), g->placement_label, g->reverse, step);
    struct k8s_client_job job = {
        .name = name,
        .node_hostname = client_host,
        .scenario = plan_scenario_name(g->scenario),
        .placement = g->placement_label,
    };
    json_t *obj;

    k8s_objects_group_target(g, &t);
    /* The external host's agent cannot know the per-run token (it is made in the cluster): it
     * runs with the --external-token-file's token, which only these pods see, or without one
     * (then a client holding a token would refuse it: mutual auth). */
    if (!t.server_network) {
        ao.token_file = d->obj.external_token ? K8S_EXTERNAL_TOKEN_FILE : NULL;
        job.token_key = d->obj.external_token ? K8S_EXTERNAL_TOKEN_KEY : NULL;
    }
    argv = agent_args_client(spec, &ao);
    job.host_network = t.client_host_network;
    o.job_deadline_s = (int)((k8s_client_spec_ms(spec) + d->timeout_ms) / 1000 + 1);
    job.args = (const char *const *)argv;
    obj = k8s_objects_client_job(&o, &job);
    agent_args_free(argv);
    if (name_out)
        *name_out = name;
    else
        free(name);
    return obj;
}

const char *k8s_client_node_hostname(const struct k8s_backend *b, const char *name)
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

const char *k8s_client_node(const struct k8s_backend *b, const struct plan_group *g,
                            const struct k8s_group_target *t)
{
    if (g->placement == PLACEMENT_NODE && g->node)
        return g->node;
    if (t->client_on_a || !b->node_b)
        return k8s_facts_node_name(b->node_a);
    return k8s_facts_node_name(b->node_b);
}

const char *k8s_client_server_addr(const struct k8s_backend *b, const struct k8s_group_target *t,
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
        if (kube_delete(b->kc, &KUBE_RES_JOBS, k8s_objects_ns(&b->d.obj, cr->t.client_host_network),
                        cr->r.job, &dopts, NULL, &derr) != 0)
            kp_log(KP_LOG_WARN, "deleting job %s: %s (cleanup will retry)", cr->r.job,
                   kp_err_msg(&derr));
        if (b->stop)
            kube_client_abort(b->kc);
    }
    json_decref(cr->job);
    client_run_free(&cr->r);
    free(cr);
}

int k8s_client_start(struct k8s_backend *b, const struct run_spec *spec, const char *server,
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
    cr->node = k8s_client_node(b, g, &cr->t);
    cr->server = server ? server : k8s_client_server_addr(b, &cr->t, g->ip_family);
    cr->port = cr->t.server_network ? b->ro->port : b->ro->external_port;
    if (!cr->server) {
        free(cr);
        return kp_err_set(err, "no server address for %s", plan_scenario_name(g->scenario));
    }
    cr->job = k8s_client_make_job(&b->d, spec, b->n_steps++, k8s_client_node_hostname(b, cr->node),
                                  cr->server, cr->port, &cr->r.job);
    cr->r.what = kp_xasprintf("client job %s on node %s", cr->r.job, cr->node);
    cr->kind = "client";
    cr->created_s = clock_unix_s();
    if (kube_create(b->kc, &KUBE_RES_JOBS, k8s_objects_ns(&b->d.obj, cr->t.client_host_network),
                    cr->job, NULL, &cr->r.created, err) != 0) {
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
    const char *ns = k8s_objects_ns(&b->d.obj, cr->t.client_host_network);
    struct k8s_wait_opts wo = {
        .ns = ns,
        .selector = r->selector,
        .owner = r->job,
        .owner_uid = r->uid,
        .what = r->what,
        .goal = K8S_WAIT_FINISHED,
        .timeout_ms =
            spec->timeout_ms ? spec->timeout_ms : k8s_client_spec_ms(spec) + b->ro->timeout_ms,
        .times = &cr->times,
        .events = b->podevents,
        .cause_out = b->fail_cause,
    };
    if (k8s_wait_pods(b->kc, &wo, &r->pods, err) != 0)
        goto out;
    pod = json_array_get(r->pods, 0);
    pod_name = json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    if (kube_pod_logs(b->kc, ns, pod_name, &lopts, &r->log, &r->log_len, err) != 0) {
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
