/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_churn.c - see k8s_churn.h. */
#include "controller/k8s/k8s_churn.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_deploy.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_sweep.h"
#include "controller/k8s/k8s_wait.h"

#define CHURN_TEST_MS 1000

struct churn {
    struct k8s_backend *b;
    struct plan_group *groups; /* one per node, borrowed node names */
    struct run_spec *specs;
    size_t n_nodes;
    enum test_kind tests[1];
    unsigned ok, failed;
};

/* A watch of the run's client pods in a thread of its own (with its own API client), started
 * before a wave's Jobs are created, so that the stages of pods that start while the wave is
 * still being created are timed when they happen, not when a later wait first sees them. */
struct watcher {
    pthread_t thread;
    struct kube_client *kc;
    volatile sig_atomic_t stop;
    char *selector, *ns;
    json_t *times; /* kperf.io/job label -> [scheduled_s, running_s]; the thread's until joined */
    int started;
};

static int watcher_cb(void *arg, enum kube_event_type type, json_t *pod, struct kp_err *err)
{
    struct watcher *w = arg;
    const char *job = json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "labels"), K8S_LABEL_JOB));
    json_t *e;
    struct k8s_pod_times t = {0, 0, 0};

    (void)err;
    if (!job || (type != KUBE_EVENT_ADDED && type != KUBE_EVENT_MODIFIED))
        return w->stop != 0;
    e = json_object_get(w->times, job);
    if (e) {
        t.scheduled_s = json_number_value(json_array_get(e, 0));
        t.running_s = json_number_value(json_array_get(e, 1));
    }
    k8s_wait_observe(&t, pod);
    json_object_set_new(w->times, job, json_pack("[f, f]", t.scheduled_s, t.running_s));
    return w->stop != 0;
}

static void *watcher_main(void *arg)
{
    struct watcher *w = arg;
    struct kube_watch_opts wo = {
        .label_selector = w->selector, .deadline_ms = 3600000, .stream_timeout_s = 60};
    struct kp_err err;

    kp_err_clear(&err);
    if (kube_watch(w->kc, &KUBE_RES_PODS, w->ns, &wo, watcher_cb, w, &err) < 0 && !w->stop)
        kp_log(KP_LOG_DEBUG, "pod churn watch: %s", kp_err_msg(&err));
    return NULL;
}

/* starts the watcher; on failure the wave is timed by its own wait alone (logged) */
static void watcher_start(struct k8s_backend *b, struct watcher *w, const char *selector)
{
    struct kube_client_opts ko;
    struct kp_err err;
    sigset_t all, old;

    memset(w, 0, sizeof(*w));
    w->times = json_object();
    w->selector = kp_xstrdup(selector);
    w->ns = kp_xstrdup(b->d.ns);
    k8s_backend_client_opts(b, &ko);
    ko.abort_flag = &w->stop;
    kp_err_clear(&err);
    if (kube_client_new(&ko, &w->kc, &err) != 0) {
        kp_log(KP_LOG_WARN, "pod churn: no watch of its own (%s): stages are timed later",
               kp_err_msg(&err));
        return;
    }
    /* signals stay with the main thread, whose waits they must wake */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    w->started = pthread_create(&w->thread, NULL, watcher_main, w) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* stops and joins the watcher; its times stay in w->times until watcher_free */
static void watcher_stop(struct watcher *w)
{
    w->stop = 1;
    if (w->kc)
        kube_client_abort(w->kc);
    if (w->started)
        pthread_join(w->thread, NULL);
    w->started = 0;
}

static void watcher_free(struct watcher *w)
{
    kube_client_free(w->kc);
    json_decref(w->times);
    free(w->selector);
    free(w->ns);
}

/* the earlier of two sightings of a stage (0 = not seen) */
static double earlier(double a, double b)
{
    if (a <= 0)
        return b;
    if (b <= 0)
        return a;
    return a < b ? a : b;
}

/* collects the n runs of one wave (all started): one watch times them all, then each is
 * finished (its log read, its Job deleted) */
static int collect_wave(struct churn *c, struct k8s_client_run **runs, size_t n,
                        struct watcher *watch, struct kp_err *err)
{
    struct k8s_backend *b = c->b;
    json_t *times = json_object();
    char *sel = kp_xasprintf("%s=%s,%s=client", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_ROLE);
    struct k8s_wait_opts wo = {
        .ns = b->d.ns,
        .selector = sel,
        .owner = "pod-churn",
        .what = "the --pod-churn burst",
        .goal = K8S_WAIT_ALL_FINISHED,
        .want = n,
        .timeout_ms = k8s_client_spec_ms(&c->specs[0]) + b->ro->timeout_ms,
        .stage_times = times,
        .events = b->podevents,
    };
    struct kp_err werr;
    int rc = 0;

    for (size_t i = 0; i < n; i++)
        json_object_set_new(times, k8s_client_job_name(runs[i]), json_pack("[f, f]", 0.0, 0.0));
    kp_err_clear(&werr);
    if (k8s_wait_pods(b->kc, &wo, NULL, &werr) != 0) {
        if (b->stop) {
            rc = kp_err_set(err, "interrupted");
        } else {
            kp_log(KP_LOG_WARN, "pod churn: %s", kp_err_msg(&werr));
        }
    }
    watcher_stop(watch);
    for (size_t i = 0; i < n; i++) {
        json_t *doc = NULL;
        const char *job = k8s_client_job_name(runs[i]);
        const json_t *t = json_object_get(times, job);
        const json_t *early = json_object_get(watch->times, job);
        struct k8s_pod_times pt = {earlier(json_number_value(json_array_get(early, 0)),
                                           json_number_value(json_array_get(t, 0))),
                                   earlier(json_number_value(json_array_get(early, 1)),
                                           json_number_value(json_array_get(t, 1))),
                                   0};
        struct kp_err e;

        if (rc != 0) {
            k8s_client_abandon(b, runs[i]);
            continue;
        }
        k8s_client_set_times(runs[i], &pt);
        kp_err_clear(&e);
        if (k8s_client_finish(b, runs[i], &doc, &e) != 0) {
            kp_log(KP_LOG_WARN, "pod churn: %s", kp_err_msg(&e));
            c->failed++;
            if (b->stop)
                rc = kp_err_set(err, "interrupted");
        } else {
            c->ok++;
        }
        json_decref(doc);
    }
    json_decref(times);
    free(sel);
    return rc;
}

/* starts up to `want` runs from number *next on (round robin over the nodes) */
static int start_wave(struct churn *c, size_t *next, size_t want, struct k8s_client_run **runs,
                      size_t *started, struct kp_err *err)
{
    *started = 0;
    while (*started < want) {
        struct k8s_client_run *cr = NULL;
        const struct run_spec *spec = &c->specs[*next % c->n_nodes];
        /* a sweep's ring partner serves a node's churn pods as it serves its pair */
        if (k8s_client_start(c->b, spec, k8s_sweep_server(c->b, spec->group, "pod"), &cr, err) != 0)
            return -1;
        k8s_client_mark_churn(cr);
        runs[(*started)++] = cr;
        (*next)++;
    }
    return 0;
}

int k8s_churn_run(struct k8s_backend *b, struct kp_err *err)
{
    struct churn c = {.b = b, .tests = {TEST_TCP_RR}};
    size_t total, next = 0;
    struct k8s_client_run *runs[K8S_CHURN_WAVE];
    char *sel;
    int rc = 0;

    if (b->ro->pod_churn <= 0)
        return 0;
    c.n_nodes = json_array_size(b->nodes);
    c.groups = kp_xcalloc(c.n_nodes + 1, sizeof(*c.groups));
    c.specs = kp_xcalloc(c.n_nodes + 1, sizeof(*c.specs));
    for (size_t i = 0; i < c.n_nodes; i++) {
        struct plan_group *g = &c.groups[i];
        g->scenario = SCENARIO_POD_TO_POD;
        g->placement = PLACEMENT_NODE;
        g->node = (char *)k8s_facts_node_name(json_array_get(b->nodes, i));
        g->placement_label = (char *)"churn";
        g->tests[0] = TEST_TCP_RR;
        g->n_tests = 1;
        g->ip_family = b->ip_families[0];
        run_spec_init(&c.specs[i], b->ro, g, c.tests, 1, 1);
        c.specs[i].duration_ms = CHURN_TEST_MS;
        c.specs[i].omit_ms = 0;
        c.specs[i].interval_ms = 0;
    }
    total = c.n_nodes * (size_t)b->ro->pod_churn;
    kp_log(KP_LOG_INFO, "pod churn: %zu pods (%d per node on %zu nodes), at most %d at once", total,
           b->ro->pod_churn, c.n_nodes, K8S_CHURN_WAVE);
    sel = kp_xasprintf("%s=%s,%s=client", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_ROLE);
    while (rc == 0 && next < total) {
        size_t want = total - next < K8S_CHURN_WAVE ? total - next : K8S_CHURN_WAVE, started;
        struct watcher watch;
        int src;

        watcher_start(b, &watch, sel);
        src = start_wave(&c, &next, want, runs, &started, err);
        if (started > 0 && collect_wave(&c, runs, started, &watch, err) != 0)
            rc = -1;
        watcher_stop(&watch);
        watcher_free(&watch);
        if (src != 0) {
            kp_err_prefix(err, "pod churn");
            rc = -1;
        }
    }
    if (rc == 0)
        kp_log(KP_LOG_INFO, "pod churn: %u pods measured, %u failed", c.ok, c.failed);
    free(c.groups);
    free(c.specs);
    free(sel);
    return rc;
}
