/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_nodewatch.c - see k8s_nodewatch.h. */
#include "controller/k8s/k8s_nodewatch.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_podfail.h"

struct k8s_nodewatch {
    struct kube_client *kc;
    json_t *watched; /* name -> true; read-only once the thread runs */
    pthread_t thread;
    bool started;
    volatile sig_atomic_t stop;
    pthread_mutex_t mu;
    json_t *down; /* guarded by mu */
};

int k8s_nodewatch_keep(json_t *down, const json_t *watched, const json_t *node, double now_s)
{
    const char *name = k8s_facts_node_name(node);
    const json_t *ready = k8s_podfail_condition(node, "Ready");
    char *why;

    if (!*name || !json_object_get(watched, name) || json_object_get(down, name))
        return 0;
    why = k8s_facts_node_not_ready(node);
    if (!why || !strstr(why, "NetworkReady=false")) {
        free(why);
        return 0;
    }
    json_object_set_new(
        down, name,
        json_pack("{s:s, s:f, s:f}", "why", why, "since_unix_s",
                  k8s_podfail_time(json_string_value(json_object_get(ready, "lastTransitionTime"))),
                  "detected_unix_s", now_s));
    free(why);
    return 1;
}

static double now_unix_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int on_node(void *arg, enum kube_event_type type, json_t *node, struct kp_err *err)
{
    struct k8s_nodewatch *nw = arg;
    double now_s = now_unix_s();
    int kept;

    (void)err;
    if (type != KUBE_EVENT_ADDED && type != KUBE_EVENT_MODIFIED)
        return nw->stop != 0;
    pthread_mutex_lock(&nw->mu);
    kept = k8s_nodewatch_keep(nw->down, nw->watched, node, now_s);
    if (kept) {
        const json_t *d = json_object_get(nw->down, k8s_facts_node_name(node));
        double since_s = json_real_value(json_object_get(d, "since_unix_s"));
        char seen[64] = "";
        if (since_s > 0)
            snprintf(seen, sizeof(seen), ", seen %.1f s after its Ready transition",
                     now_s - since_s);
        kp_log(KP_LOG_WARN,
               "sweep: node %s is NotReady (cni-not-ready: the CNI is not ready on the node)%s: "
               "%s; the pairs whose client runs there fail at once, the sweep goes on",
               k8s_facts_node_name(node), seen, json_string_value(json_object_get(d, "why")));
    }
    pthread_mutex_unlock(&nw->mu);
    return nw->stop != 0;
}

static void *watch_main(void *arg)
{
    struct k8s_nodewatch *nw = arg;
    struct kube_watch_opts wo = {.stream_timeout_s = 60};
    struct kp_err err;

    kp_err_clear(&err);
    if (kube_watch(nw->kc, &KUBE_RES_NODES, NULL, &wo, on_node, nw, &err) < 0 && !nw->stop)
        kp_log(KP_LOG_INFO,
               "the watch of the sweep's nodes ended (a node whose network fails mid-run is "
               "then found when its pair fails): %s",
               kp_err_msg(&err));
    return NULL;
}

int k8s_nodewatch_start(const struct kube_client_opts *ko, const json_t *names,
                        struct k8s_nodewatch **out, struct kp_err *err)
{
    struct k8s_nodewatch *nw = kp_xcalloc(1, sizeof(*nw));
    struct kube_client_opts o = *ko;
    sigset_t all, old;
    size_t i;
    json_t *n;

    *out = NULL;
    o.abort_flag = &nw->stop;
    if (kube_client_new(&o, &nw->kc, err) != 0) {
        free(nw);
        return kp_err_prefix(err, "watching the sweep's nodes");
    }
    nw->watched = json_object();
    json_array_foreach(names, i, n)
    {
        if (json_string_value(n))
            json_object_set_new(nw->watched, json_string_value(n), json_true());
    }
    nw->down = json_object();
    pthread_mutex_init(&nw->mu, NULL);
    /* the thread blocks every signal: they stay with the main thread */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    nw->started = pthread_create(&nw->thread, NULL, watch_main, nw) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!nw->started) {
        k8s_nodewatch_stop(nw);
        return kp_err_set(err, "watching the sweep's nodes: cannot start a thread");
    }
    *out = nw;
    return 0;
}

void k8s_nodewatch_stop(struct k8s_nodewatch *nw)
{
    if (!nw)
        return;
    nw->stop = 1;
    kube_client_abort(nw->kc);
    if (nw->started)
        pthread_join(nw->thread, NULL);
    kube_client_free(nw->kc);
    pthread_mutex_destroy(&nw->mu);
    json_decref(nw->down);
    json_decref(nw->watched);
    free(nw);
}

json_t *k8s_nodewatch_down(struct k8s_nodewatch *nw)
{
    json_t *copy;

    if (!nw)
        return json_object();
    pthread_mutex_lock(&nw->mu);
    copy = json_deep_copy(nw->down);
    pthread_mutex_unlock(&nw->mu);
    return copy;
}
