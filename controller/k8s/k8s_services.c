/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_services.c - see k8s_services.h. */
#include "controller/k8s/k8s_services.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_deploy.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/progress.h"

#define PROBE_SCENARIO "svc-programming"
#define WAIT_TIMEOUT_S 120

static double wall_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* a line of the run's progress (kperf: ...), or an INFO log line outside a run */
static void say(struct k8s_backend *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct k8s_backend *b, const char *fmt, ...)
{
    char line[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (b->base.progress)
        progress_phase(b->base.progress, "%s", line);
    else
        kp_log(KP_LOG_INFO, "%s", line);
}

static void sleep_ms(uint64_t ms)
{
    struct timespec d = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
}

/* One programming probe's names: the one of a single --services size keeps its plain names;
 * with several sizes, each size's has its own (a fresh probe Service per size) */
struct probe_id {
    char scenario[48]; /* its pods' kperf.io/scenario */
    char svc[48];      /* the probe Service */
    char job[48];      /* its Jobs' name prefix */
};

static void probe_id_init(struct probe_id *id, const struct k8s_backend *b, unsigned count)
{
    if (b->ro->n_services_sizes <= 1) {
        snprintf(id->scenario, sizeof(id->scenario), "%s", PROBE_SCENARIO);
        snprintf(id->svc, sizeof(id->svc), "kperf-svcprobe");
        snprintf(id->job, sizeof(id->job), "kperf-svcwait-");
        return;
    }
    snprintf(id->scenario, sizeof(id->scenario), "%s-%u", PROBE_SCENARIO, count);
    snprintf(id->svc, sizeof(id->svc), "kperf-svcprobe-%u", count);
    snprintf(id->job, sizeof(id->job), "kperf-svcwait-%u-", count);
}

/* A Service of the run: name, selecting the pod-network servers of slot `slot`. */
static json_t *service(const struct k8s_backend *b, const char *name, const char *slot)
{
    json_t *svc = k8s_objects_service(&b->d.obj, "a");
    json_t *md = json_object_get(svc, "metadata");
    json_t *sel = json_object_get(json_object_get(svc, "spec"), "selector");

    json_object_set_new(md, "name", json_string(name));
    json_object_set_new(sel, K8S_LABEL_SLOT, json_string(slot));
    /* one port: what the probe connects to, and half the Endpoints per Service */
    json_array_remove(json_object_get(json_object_get(svc, "spec"), "ports"), 1);
    return svc;
}

/* Creates the Services kperf-svcx-<b->svc_made> .. <n - 1>, paced at K8S_SERVICES_QPS;
 * progress every tenth. fig gets count, qps, create_s, create_api_requests. */
static int create_many(struct k8s_backend *b, unsigned n, json_t *fig, struct kp_err *err)
{
    uint64_t t0 = clock_now_ms(), req0 = kube_request_count(b->kc);
    unsigned from = b->svc_made < n ? b->svc_made : n;
    unsigned step = n - from >= 10 ? (n - from) / 10 : 1;

    if (from < n)
        say(b, "creating %u Services (%u to %u) at up to %d API requests per second", n - from,
            from, n - 1, K8S_SERVICES_QPS);
    for (unsigned i = from; i < n; i++) {
        char *name = kp_xasprintf("kperf-svcx-%u", i);
        json_t *svc = service(b, name, "a");
        /* paced by the API client's token bucket (K8S_SERVICES_QPS, k8s_prepare.c) */
        int rc =
            b->stop ? -1 : kube_create(b->kc, &KUBE_RES_SERVICES, b->d.ns, svc, NULL, NULL, err);

        json_decref(svc);
        free(name);
        if (rc != 0) {
            if (b->stop)
                kp_err_set(err, "interrupted");
            return kp_err_prefix(err, "creating Service %u of %u", i + 1, n);
        }
        b->svc_made = i + 1;
        if ((i + 1 - from) % step == 0 || i + 1 == n)
            say(b, "Services: %u of %u created (%.1f s)", i + 1, n,
                (double)(clock_now_ms() - t0) / 1000.0);
    }
    json_object_set_new(fig, "count", json_integer(n));
    json_object_set_new(fig, "qps", json_integer(K8S_SERVICES_QPS));
    json_object_set_new(fig, "create_s", json_real((double)(clock_now_ms() - t0) / 1000.0));
    json_object_set_new(fig, "create_api_requests",
                        json_integer((json_int_t)(kube_request_count(b->kc) - req0)));
    return 0;
}

/* The probe's pods by phase: *running and *done (Succeeded or Failed) of the run's probe
 * pods; items (may be NULL) gets them. */
static int probe_pods(struct k8s_backend *b, const struct probe_id *id, size_t *running,
                      size_t *done, json_t **items, struct kp_err *err)
{
    char *sel =
        kp_xasprintf("%s=%s,kperf.io/scenario=%s", K8S_LABEL_RUN_ID, b->d.run_id, id->scenario);
    struct kube_list_opts lo = {.label_selector = sel};
    json_t *list = NULL, *p;
    size_t i;
    int rc = kube_list_all(b->kc, &KUBE_RES_PODS, b->d.ns, &lo, &list, err);

    free(sel);
    if (rc != 0)
        return -1;
    *running = *done = 0;
    json_array_foreach(list, i, p)
    {
        const char *ph = json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
        if (ph && strcmp(ph, "Running") == 0)
            (*running)++;
        else if (ph && (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0))
            (*done)++;
    }
    if (items)
        *items = list;
    else
        json_decref(list);
    return 0;
}

/* Polls until the probe pods are `want` running (done = 0) or done (done = 1). */
static int wait_probe(struct k8s_backend *b, const struct probe_id *id, size_t want, int done,
                      struct kp_err *err)
{
    uint64_t end = clock_now_ms() + (done ? WAIT_TIMEOUT_S * 1000u + 30000u : b->d.timeout_ms);

    for (;;) {
        size_t r, d;
        if (probe_pods(b, id, &r, &d, NULL, err) != 0)
            return -1;
        if ((done ? d : r + d) >= want)
            return 0;
        if (b->stop)
            return kp_err_set(err, "interrupted");
        if (clock_now_ms() > end)
            return kp_err_set(err, "%zu of %zu probe pods %s in time", done ? d : r, want,
                              done ? "finished" : "running");
        sleep_ms(done ? 500 : 200);
    }
}

/* One connect-wait Job on node (its hostname label), against ip. */
static int start_probe(struct k8s_backend *b, const struct probe_id *id, const json_t *node,
                       size_t k, const char *ip, struct kp_err *err)
{
    char *name = kp_xasprintf("%s%zu-%s", id->job, k, b->d.run_id + strlen(b->d.run_id) - 6);
    char port[8], timeout[16];
    const char *args[] = {"connect-wait", "--target",  ip,      "--port",
                          port,           "--timeout", timeout, NULL};
    struct k8s_client_job job = {.name = name,
                                 .node_hostname = k8s_facts_node_hostname(node),
                                 .scenario = id->scenario,
                                 .placement = k8s_facts_node_name(node),
                                 .args = args};
    json_t *obj;
    int rc;

    snprintf(port, sizeof(port), "%d", b->d.obj.port);
    snprintf(timeout, sizeof(timeout), "%ds", WAIT_TIMEOUT_S);
    obj = k8s_objects_client_job(&b->d.obj, &job);
    /* the Job outlives connect-wait's own timeout: it ends by itself, with its document */
    json_object_set_new(json_object_get(obj, "spec"), "activeDeadlineSeconds",
                        json_integer(WAIT_TIMEOUT_S + 60));
    rc = kube_create(b->kc, &KUBE_RES_JOBS, b->d.ns, obj, NULL, NULL, err);
    json_decref(obj);
    free(name);
    return rc;
}

/* Each node's latency from t0 (its pod's log: the connect-wait document). */
static json_t *read_latencies(struct k8s_backend *b, const struct probe_id *id, double t0,
                              struct kp_err *err)
{
    json_t *items = NULL, *out = json_object(), *p;
    size_t r, d, i;

    if (probe_pods(b, id, &r, &d, &items, err) != 0) {
        json_decref(out);
        return NULL;
    }
    json_array_foreach(items, i, p)
    {
        const char *pod =
            json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
        const char *node =
            json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName"));
        char *log = NULL, *nl;
        json_t *doc = NULL;
        struct kp_err lerr;

        if (!pod || !node)
            continue;
        if (kube_pod_logs(b->kc, b->d.ns, pod, NULL, &log, NULL, &lerr) == 0) {
            nl = strrchr(log, '{');
            doc = nl ? json_loads(nl, 0, NULL) : NULL;
        }
        if (json_is_true(json_object_get(doc, "connected"))) {
            double at = json_number_value(json_object_get(doc, "connected_unix_s"));
            json_object_set_new(out, node, json_pack("{s:f}", "latency_s", at - t0));
            say(b, "Service programming on %s: %.3f s", node, at - t0);
        } else {
            json_object_set_new(out, node, json_pack("{s:n}", "latency_s"));
            kp_log(KP_LOG_WARN, "Service programming on %s: no connection within %d s", node,
                   WAIT_TIMEOUT_S);
        }
        json_decref(doc);
        free(log);
    }
    json_decref(items);
    return out;
}

/* The probe Service (no endpoints), a Job per node, the PATCH, the latencies into fig */
static int measure(struct k8s_backend *b, const struct probe_id *id, json_t *fig,
                   struct kp_err *err)
{
    json_t *svc = service(b, id->svc, "none"), *made = NULL, *patch, *lat;
    size_t n = json_array_size(b->nodes), i;
    const json_t *node;
    const char *ip;
    double t0;

    if (kube_create(b->kc, &KUBE_RES_SERVICES, b->d.ns, svc, NULL, &made, err) != 0) {
        json_decref(svc);
        return kp_err_prefix(err, "creating the probe Service");
    }
    json_decref(svc);
    ip = json_string_value(json_object_get(json_object_get(made, "spec"), "clusterIP"));
    if (!ip) {
        json_decref(made);
        return kp_err_set(err, "the probe Service has no ClusterIP");
    }
    json_array_foreach(b->nodes, i, node)
    {
        if (start_probe(b, id, node, i, ip, err) != 0) {
            json_decref(made);
            return kp_err_prefix(err, "creating a probe Job");
        }
    }
    json_decref(made);
    say(b, "Service programming: a probe Job on each of %zu nodes", n);
    if (wait_probe(b, id, n, 0, err) != 0)
        return kp_err_prefix(err, "Service programming probes");
    sleep_ms(1000); /* their first connects are refused: the probe Service has no endpoints */
    patch = json_pack("{s:{s:{s:s}}}", "spec", "selector", K8S_LABEL_SLOT, "a");
    t0 = wall_s();
    if (kube_patch(b->kc, &KUBE_RES_SERVICES, b->d.ns, id->svc, patch, NULL, NULL, err) != 0) {
        json_decref(patch);
        return kp_err_prefix(err, "pointing the probe Service at the servers");
    }
    json_decref(patch);
    if (wait_probe(b, id, n, 1, err) != 0 || !(lat = read_latencies(b, id, t0, err)))
        return kp_err_prefix(err, "Service programming probes");
    json_object_set_new(fig, "programming", lat);
    return 0;
}

/* count extra Services in place, then their programming latency: fig's figures */
static int services_at(struct k8s_backend *b, unsigned count, json_t *fig, struct kp_err *err)
{
    uint64_t req0 = kube_request_count(b->kc);
    struct probe_id id;

    if (!b->d.set.pod_network && !b->d.set.services)
        return kp_err_set(err, "--services: the run has no pod-network servers for them to "
                               "select; keep the pod-to-pod or pod-to-service scenario");
    probe_id_init(&id, b, count);
    if (create_many(b, count, fig, err) != 0 || measure(b, &id, fig, err) != 0)
        return -1;
    json_object_set_new(fig, "api_requests",
                        json_integer((json_int_t)(kube_request_count(b->kc) - req0)));
    return 0;
}

int k8s_services_run(struct k8s_backend *b, struct kp_err *err)
{
    json_t *fig;

    if (b->ro->services <= 0 || b->ro->n_services_sizes > 1)
        return 0; /* several sizes: the runner asks for each (k8s_services_apply) */
    fig = json_object();
    json_object_set_new(b->facts, "services", fig);
    return services_at(b, (unsigned)b->ro->services, fig, err);
}

int k8s_services_apply(struct backend *base, unsigned count, json_t **md, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct kube_delete_opts del = {.grace_period_s = -1, .missing_ok = 1};
    struct probe_id id;
    json_t *fig = json_object();
    struct kp_err derr;
    unsigned before = b->svc_made;

    *md = NULL;
    if (services_at(b, count, fig, err) != 0) {
        json_decref(fig);
        return -1;
    }
    json_object_set_new(fig, "created", json_integer(b->svc_made - before));
    /* this size's probe goes: the next size's is a fresh one (its pods stay until cleanup) */
    probe_id_init(&id, b, count);
    if (kube_delete(b->kc, &KUBE_RES_SERVICES, b->d.ns, id.svc, &del, NULL, &derr) != 0)
        kp_log(KP_LOG_WARN, "removing the probe Service %s: %s (cleanup removes it)", id.svc,
               kp_err_msg(&derr));
    *md = fig;
    return 0;
}
