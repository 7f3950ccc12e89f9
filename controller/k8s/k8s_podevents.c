/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_podevents.c - see k8s_podevents.h. */
#include "controller/k8s/k8s_podevents.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_podfail.h"

struct k8s_podevents {
    struct kube_client *kc;
    char *ns;
    pthread_t thread;
    bool started;
    volatile sig_atomic_t stop;
    volatile sig_atomic_t wake;
    pthread_mutex_t mu;
    json_t *by_pod; /* guarded by mu */
};

int k8s_podevents_keep(json_t *by_pod, const json_t *e)
{
    const char *pod =
        json_string_value(json_object_get(json_object_get(e, "involvedObject"), "name"));
    const char *name = json_string_value(json_object_get(json_object_get(e, "metadata"), "name"));
    json_t *list, *x;
    size_t i;

    if (!pod || k8s_podfail_text_cause(json_string_value(json_object_get(e, "reason")),
                                       json_string_value(json_object_get(e, "message"))) ==
                    K8S_PODFAIL_NONE)
        return 0;
    list = json_object_get(by_pod, pod);
    if (!list) {
        list = json_array();
        json_object_set_new(by_pod, pod, list);
    }
    json_array_foreach(list, i, x)
    {
        const char *n = json_string_value(json_object_get(json_object_get(x, "metadata"), "name"));
        if (name && n && strcmp(n, name) == 0) {
            json_array_set_new(list, i, json_deep_copy(e));
            return 1;
        }
    }
    if (json_array_size(list) >= K8S_PODEVENTS_PER_POD)
        json_array_remove(list, 1); /* keep the first: it dates the failure */
    json_array_append_new(list, json_deep_copy(e));
    return 1;
}

static int on_event(void *arg, enum kube_event_type type, json_t *e, struct kp_err *err)
{
    struct k8s_podevents *pe = arg;
    int kept;

    (void)err;
    if (type != KUBE_EVENT_ADDED && type != KUBE_EVENT_MODIFIED)
        return pe->stop != 0;
    pthread_mutex_lock(&pe->mu);
    kept = k8s_podevents_keep(pe->by_pod, e);
    pthread_mutex_unlock(&pe->mu);
    if (kept)
        pe->wake = 1;
    return pe->stop != 0;
}

static void *watch_main(void *arg)
{
    struct k8s_podevents *pe = arg;
    struct kube_watch_opts wo = {.field_selector = "involvedObject.kind=Pod",
                                 .stream_timeout_s = 60};
    struct kp_err err;

    kp_err_clear(&err);
    if (kube_watch(pe->kc, &KUBE_RES_EVENTS, pe->ns, &wo, on_event, pe, &err) < 0 && !pe->stop)
        kp_log(KP_LOG_INFO,
               "the watch of the pods' events ended (pods that cannot start are "
               "then found at --timeout): %s",
               kp_err_msg(&err));
    return NULL;
}

int k8s_podevents_start(const struct kube_client_opts *ko, const char *ns,
                        struct k8s_podevents **out, struct kp_err *err)
{
    struct k8s_podevents *pe = kp_xcalloc(1, sizeof(*pe));
    struct kube_client_opts o = *ko;
    sigset_t all, old;

    *out = NULL;
    o.abort_flag = &pe->stop;
    if (kube_client_new(&o, &pe->kc, err) != 0) {
        free(pe);
        return kp_err_prefix(err, "watching the pods' events");
    }
    pe->ns = kp_xstrdup(ns);
    pe->by_pod = json_object();
    pthread_mutex_init(&pe->mu, NULL);
    /* the thread blocks every signal: they stay with the main thread */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pe->started = pthread_create(&pe->thread, NULL, watch_main, pe) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!pe->started) {
        k8s_podevents_stop(pe);
        return kp_err_set(err, "watching the pods' events: cannot start a thread");
    }
    *out = pe;
    return 0;
}

void k8s_podevents_stop(struct k8s_podevents *pe)
{
    if (!pe)
        return;
    pe->stop = 1;
    kube_client_abort(pe->kc);
    if (pe->started)
        pthread_join(pe->thread, NULL);
    kube_client_free(pe->kc);
    pthread_mutex_destroy(&pe->mu);
    json_decref(pe->by_pod);
    free(pe->ns);
    free(pe);
}

volatile sig_atomic_t *k8s_podevents_wake(struct k8s_podevents *pe)
{
    return pe ? &pe->wake : NULL;
}

json_t *k8s_podevents_of(struct k8s_podevents *pe, const char *pod)
{
    json_t *copy = NULL, *list;

    if (!pe || !pod)
        return NULL;
    pthread_mutex_lock(&pe->mu);
    list = json_object_get(pe->by_pod, pod);
    if (list)
        copy = json_deep_copy(list);
    pthread_mutex_unlock(&pe->mu);
    return copy;
}
