/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_watch_ready.c - see k8s_watch_ready.h. */
#include "controller/k8s/k8s_watch_ready.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/logdoc.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_deploy.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_podfail.h"
#include "controller/k8s/k8s_readiness.h"
#include "controller/k8s/k8s_wait.h"

#define READY_TEST_MS 1000       /* the TCP_RR of a readiness pod, as a --pod-churn pod's */
#define READY_TICK_MS 100        /* how often the driver looks at its slots */
#define READY_LOG_MAX (1u << 20) /* bytes of a readiness pod's log read */

/* One node: at most one readiness pod in flight. */
struct slot {
    const char *node; /* borrowed from the backend's nodes */
    char *job;        /* the Job in flight, or NULL */
    double created_s; /* when it was asked for (CLOCK_REALTIME) */
    double next_s;    /* when the next one is due */
};

struct k8s_ready_watch {
    struct k8s_backend *b;
    double every_s, bound_s;
    size_t n;
    struct slot *slots;
    struct plan_group *groups; /* one per node */
    struct run_spec *specs;
    enum test_kind tests[1];
    const char *server; /* the pod server's address, borrowed from the backend */
    volatile sig_atomic_t stop;
    struct kube_client *wkc, *dkc; /* the watcher's and the driver's */
    pthread_t wthread, dthread;
    bool wstarted, dstarted;
    pthread_mutex_t mu;
    json_t *seen;    /* guarded by mu: job -> {"s", "r", "pod", "done", "problem", "fatal"} */
    json_t *records; /* the driver's until joined */
};

/* ---- the watcher thread: stage times of the run's client pods, by Job ---- */

static int watcher_cb(void *arg, enum kube_event_type type, json_t *pod, struct kp_err *err)
{
    struct k8s_ready_watch *rw = arg;
    const json_t *md = json_object_get(pod, "metadata");
    const char *job =
        json_string_value(json_object_get(json_object_get(md, "labels"), K8S_LABEL_JOB));
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    struct k8s_pod_times t = {0, 0, 0};
    int fatal = 0;
    char *problem;
    json_t *e;

    (void)err;
    if (!job || (type != KUBE_EVENT_ADDED && type != KUBE_EVENT_MODIFIED))
        return rw->stop != 0;
    problem = k8s_wait_pod_problem(pod, &fatal);
    pthread_mutex_lock(&rw->mu);
    e = json_object_get(rw->seen, job);
    if (!e && json_object_get(md, "deletionTimestamp")) {
        /* a pod going away after its Job was judged and forgotten: not remembered again, so
         * that hours of watching keep `seen` to the pods in flight */
        pthread_mutex_unlock(&rw->mu);
        free(problem);
        return rw->stop != 0;
    }
    if (!e) {
        e = json_object();
        json_object_set_new(rw->seen, job, e);
    }
    t.scheduled_s = json_number_value(json_object_get(e, "s"));
    t.running_s = json_number_value(json_object_get(e, "r"));
    t.sandbox_s = json_number_value(json_object_get(e, "i"));
    k8s_wait_observe(&t, pod);
    json_object_set_new(e, "s", json_real(t.scheduled_s));
    json_object_set_new(e, "r", json_real(t.running_s));
    json_object_set_new(e, "i", json_real(t.sandbox_s));
    /* a copy: the event's objects are the watcher's, `seen` is shared */
    json_object_set_new(e, "pod", json_string(json_string_value(json_object_get(md, "name"))));
    json_object_set_new(
        e, "done",
        json_boolean(phase && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)));
    json_object_set_new(e, "problem", problem ? json_string(problem) : json_null());
    json_object_set_new(e, "fatal", json_boolean(fatal));
    pthread_mutex_unlock(&rw->mu);
    free(problem);
    return rw->stop != 0;
}

static void *watcher_main(void *arg)
{
    struct k8s_ready_watch *rw = arg;
    char *sel = kp_xasprintf("%s=%s,%s=client", K8S_LABEL_RUN_ID, rw->b->d.run_id, K8S_LABEL_ROLE);
    struct kube_watch_opts wo = {.label_selector = sel, .stream_timeout_s = 60};
    struct kp_err err;

    kp_err_clear(&err);
    if (kube_watch(rw->wkc, &KUBE_RES_PODS, rw->b->d.ns, &wo, watcher_cb, rw, &err) < 0 &&
        !rw->stop)
        kp_log(KP_LOG_WARN, "readiness: the watch of the pods ended: %s", kp_err_msg(&err));
    free(sel);
    return NULL;
}

/* ---- the driver thread: creates, judges and deletes the readiness pods ---- */

/* cause (may be NULL): the k8s_podfail cause when the pod could not start */
static void record_error_cause(struct k8s_ready_watch *rw, const struct slot *s, const char *why,
                               const char *cause)
{
    json_t *r = json_pack("{s:s, s:s, s:s, s:f, s:s}", "node", s->node, "job", s->job ? s->job : "",
                          "kind", "watch", "created_unix_s", s->created_s, "error", why);

    if (cause)
        json_object_set_new(r, "cause", json_string(cause));
    json_array_append_new(rw->records, r);
    kp_log(KP_LOG_INFO, "readiness on %s: failed: %s", s->node, why);
}

static void record_error(struct k8s_ready_watch *rw, const struct slot *s, const char *why)
{
    record_error_cause(rw, s, why, NULL);
}

/* The pod's sandbox failed (its events, k8s_podevents): the failure's text (caller frees) and
 * cause, or NULL. A pod that failed to get a network counts as failed at once, though the
 * kubelet retries it: a rollout that breaks the CNI for a moment shows on its node. */
static char *sandbox_failed(struct k8s_ready_watch *rw, const char *pod, const char **cause)
{
    json_t *ev = k8s_podevents_of(rw->b->podevents, pod), *e;
    char *out = NULL;
    size_t i;

    json_array_foreach(ev, i, e)
    {
        const char *m = json_string_value(json_object_get(e, "message"));
        enum k8s_podfail_cause c =
            k8s_podfail_text_cause(json_string_value(json_object_get(e, "reason")), m);
        if (c == K8S_PODFAIL_NONE || c >= K8S_PODFAIL_UNSCHEDULABLE)
            continue;
        free(out);
        out = kp_xasprintf("no pod network (%s): %s", k8s_podfail_cause_name(c), m ? m : "");
        *cause = k8s_podfail_cause_name(c);
    }
    json_decref(ev);
    return out;
}

static void delete_job(struct kube_client *kc, const char *ns, const char *job)
{
    struct kube_delete_opts dopts = {
        .propagation = KUBE_PROPAGATION_BACKGROUND, .grace_period_s = 0, .missing_ok = 1};
    struct kp_err err;

    if (kube_delete(kc, &KUBE_RES_JOBS, ns, job, &dopts, NULL, &err) != 0)
        kp_log(KP_LOG_WARN, "deleting readiness job %s: %s (cleanup will retry)", job,
               kp_err_msg(&err));
}

/* ends the slot's pod: its Job deleted, its sightings forgotten */
static void slot_end(struct k8s_ready_watch *rw, struct slot *s)
{
    if (rw->stop)
        return; /* the driver's client is aborted: k8s_watch_ready_stop deletes s->job */
    if (!rw->b->ro->keep)
        delete_job(rw->dkc, rw->b->d.ns, s->job);
    pthread_mutex_lock(&rw->mu);
    json_object_del(rw->seen, s->job);
    pthread_mutex_unlock(&rw->mu);
    free(s->job);
    s->job = NULL;
}

static void slot_start(struct k8s_ready_watch *rw, size_t i, double now)
{
    struct k8s_backend *b = rw->b;
    struct slot *s = &rw->slots[i];
    json_t *job =
        k8s_client_make_job(&b->d, &rw->specs[i], b->n_steps++,
                            k8s_client_node_hostname(b, s->node), rw->server, b->ro->port, &s->job);
    struct kp_err err;

    s->created_s = clock_unix_s();
    s->next_s = now + rw->every_s;
    if (kube_create(rw->dkc, &KUBE_RES_JOBS, b->d.ns, job, NULL, NULL, &err) != 0) {
        if (!rw->stop)
            record_error(rw, s, kp_err_msg(&err));
        free(s->job);
        s->job = NULL;
    }
    json_decref(job);
}

/* The first answered packet of a finished pod: its agent document's first_answer_unix_s.
 * Returns the document (new reference), or NULL with why. */
static json_t *pod_doc(struct k8s_ready_watch *rw, const char *pod, char *why, size_t len)
{
    struct kube_log_opts lo = {.container = "client", .limit_bytes = READY_LOG_MAX};
    char *log = NULL, *text, *last;
    size_t n = 0, tn;
    json_error_t jerr;
    json_t *doc = NULL;
    struct kp_err err;

    if (kube_pod_logs(rw->dkc, rw->b->d.ns, pod, &lo, &log, &n, &err) != 0) {
        snprintf(why, len, "reading the log of pod %s: %s", pod, kp_err_msg(&err));
        return NULL;
    }
    text = logdoc_extract(log, n, &tn);
    if (text)
        doc = json_loadb(text, tn, 0, &jerr);
    free(text);
    if (!json_is_number(json_object_get(doc, "first_answer_unix_s"))) {
        json_decref(doc);
        doc = NULL;
        while (n > 0 && log[n - 1] == '\n')
            log[--n] = '\0';
        last = strrchr(log, '\n');
        snprintf(why, len, "no answer (pod %s: %.200s)", pod, last ? last + 1 : log);
    }
    free(log);
    return doc;
}

/* Looks at the slot's pod: finished (recorded), failed for good, or past the bound. */
static void slot_check(struct k8s_ready_watch *rw, struct slot *s, double now)
{
    struct k8s_pod_times t;
    char why[512] = "", *pod = NULL, *problem = NULL, *nonet = NULL;
    const char *cause = NULL;
    bool done, fatal;
    const json_t *e;

    pthread_mutex_lock(&rw->mu);
    e = json_object_get(rw->seen, s->job);
    t.scheduled_s = json_number_value(json_object_get(e, "s"));
    t.running_s = json_number_value(json_object_get(e, "r"));
    t.sandbox_s = json_number_value(json_object_get(e, "i"));
    done = json_is_true(json_object_get(e, "done"));
    fatal = json_is_true(json_object_get(e, "fatal"));
    if (json_is_string(json_object_get(e, "pod")))
        pod = kp_xstrdup(json_string_value(json_object_get(e, "pod")));
    if (json_is_string(json_object_get(e, "problem")))
        problem = kp_xstrdup(json_string_value(json_object_get(e, "problem")));
    pthread_mutex_unlock(&rw->mu);
    if (done && pod) {
        json_t *doc = pod_doc(rw, pod, why, sizeof(why));
        if (doc) {
            json_t *r = k8s_readiness_record(pod, s->node, "watch", s->created_s, &t, doc);
            json_object_set_new(r, "job", json_string(s->job));
            kp_log(KP_LOG_INFO, "readiness on %s: %.3f s", s->node,
                   json_number_value(json_object_get(r, "total_s")));
            json_array_append_new(rw->records, r);
            json_decref(doc);
        } else {
            record_error(rw, s, why);
        }
    } else if (fatal && problem) {
        record_error(rw, s, problem);
    } else if (pod && (nonet = sandbox_failed(rw, pod, &cause)) != NULL) {
        record_error_cause(rw, s, nonet, cause);
    } else if (now - s->created_s > rw->bound_s) {
        snprintf(why, sizeof(why), "%s within %.0f s%s%s",
                 t.scheduled_s <= 0 ? "not scheduled"
                 : t.running_s <= 0 ? "no network (not running)"
                                    : "no answer",
                 rw->bound_s, problem ? ": " : "", problem ? problem : "");
        record_error(rw, s, why);
    } else {
        goto out; /* still on its way */
    }
    slot_end(rw, s);
out:
    free(nonet);
    free(pod);
    free(problem);
}

static void *driver_main(void *arg)
{
    struct k8s_ready_watch *rw = arg;

    while (!rw->stop) {
        double now = clock_unix_s();
        for (size_t i = 0; i < rw->n && !rw->stop; i++) {
            struct slot *s = &rw->slots[i];
            if (s->job)
                slot_check(rw, s, now);
            if (!s->job && now >= s->next_s && !rw->stop)
                slot_start(rw, i, now);
        }
        clock_sleep_ms(READY_TICK_MS);
    }
    return NULL;
}

/* ---- start and stop ---- */

static void setup_nodes(struct k8s_ready_watch *rw)
{
    struct k8s_backend *b = rw->b;

    rw->n = json_array_size(b->nodes);
    rw->slots = kp_xcalloc(rw->n + 1, sizeof(*rw->slots));
    rw->groups = kp_xcalloc(rw->n + 1, sizeof(*rw->groups));
    rw->specs = kp_xcalloc(rw->n + 1, sizeof(*rw->specs));
    rw->tests[0] = TEST_TCP_RR;
    for (size_t i = 0; i < rw->n; i++) {
        struct plan_group *g = &rw->groups[i];
        rw->slots[i].node = k8s_facts_node_name(json_array_get(b->nodes, i));
        g->scenario = SCENARIO_POD_TO_POD;
        g->placement = PLACEMENT_NODE;
        g->node = (char *)rw->slots[i].node;
        g->placement_label = (char *)"ready";
        g->tests[0] = TEST_TCP_RR;
        g->n_tests = 1;
        g->ip_family = b->ip_families[0];
        run_spec_init(&rw->specs[i], b->ro, g, rw->tests, 1, 1);
        rw->specs[i].duration_ms = READY_TEST_MS;
        rw->specs[i].omit_ms = 0;
        rw->specs[i].interval_ms = 0;
    }
}

/* starts fn in a thread that blocks every signal (they stay with the main thread) */
static bool thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    bool ok;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ok = pthread_create(t, NULL, fn, arg) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

int k8s_watch_ready_start(struct backend *base, uint64_t every_ms, struct k8s_ready_watch **out,
                          struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct k8s_ready_watch *rw = kp_xcalloc(1, sizeof(*rw));
    struct kube_client_opts ko;
    struct k8s_group_target t;

    *out = NULL;
    rw->b = b;
    rw->every_s = (double)every_ms / 1000.0;
    rw->bound_s = (double)b->ro->timeout_ms / 1000.0;
    rw->seen = json_object();
    rw->records = json_array();
    pthread_mutex_init(&rw->mu, NULL);
    setup_nodes(rw);
    *out = rw; /* from here the caller stops it */
    if (rw->n == 0)
        return kp_err_set(err, "--readiness-every: no eligible node");
    k8s_objects_group_target(&rw->groups[0], &t);
    rw->server = k8s_client_server_addr(b, &t, rw->groups[0].ip_family);
    if (!rw->server)
        return kp_err_set(err, "--readiness-every needs the pod server: add pod-to-pod to "
                               "--scenarios");
    k8s_backend_client_opts(b, &ko);
    ko.ns = b->d.ns;
    ko.abort_flag = &rw->stop;
    if (kube_client_new(&ko, &rw->wkc, err) != 0 || kube_client_new(&ko, &rw->dkc, err) != 0)
        return kp_err_prefix(err, "--readiness-every");
    rw->wstarted = thread_start(&rw->wthread, watcher_main, rw);
    rw->dstarted = rw->wstarted && thread_start(&rw->dthread, driver_main, rw);
    if (!rw->dstarted)
        return kp_err_set(err, "--readiness-every: cannot start a thread");
    kp_log(KP_LOG_INFO, "readiness: a pod per node (%zu nodes) every %.1f s", rw->n, rw->every_s);
    return 0;
}

json_t *k8s_watch_ready_stop(struct k8s_ready_watch *rw)
{
    struct k8s_backend *b;
    json_t *records;

    if (!rw)
        return NULL;
    b = rw->b;
    rw->stop = 1;
    if (rw->dkc)
        kube_client_abort(rw->dkc);
    if (rw->wkc)
        kube_client_abort(rw->wkc);
    if (rw->dstarted)
        pthread_join(rw->dthread, NULL);
    if (rw->wstarted)
        pthread_join(rw->wthread, NULL);
    /* the pods still in flight: dropped, their Jobs deleted with the main client (the
     * threads' clients are aborted) */
    kube_client_reset_abort(b->kc);
    for (size_t i = 0; i < rw->n; i++) {
        if (rw->slots[i].job && !b->ro->keep)
            delete_job(b->kc, b->d.ns, rw->slots[i].job);
        free(rw->slots[i].job);
    }
    if (b->stop)
        kube_client_abort(b->kc);
    kube_client_free(rw->dkc);
    kube_client_free(rw->wkc);
    pthread_mutex_destroy(&rw->mu);
    json_decref(rw->seen);
    records = rw->records;
    free(rw->slots);
    free(rw->groups);
    free(rw->specs);
    free(rw);
    return records;
}
