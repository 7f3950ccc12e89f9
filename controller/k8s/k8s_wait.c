/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_wait.c - watch-based waits for agent pods and the diagnosis of pods that do not start
 * (see k8s_wait.h). */
#include "controller/k8s/k8s_wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_podfail.h"

static const char *s_at(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int pod_ready(const json_t *pod)
{
    const json_t *c = k8s_podfail_condition(pod, "Ready");
    return c && strcmp(or_empty(s_at(c, "status")), "True") == 0 &&
           !json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp");
}

/* waiting reasons that do not fix themselves (image pulls: k8s_podfail) */
static int fatal_reason(const char *r)
{
    static const char *const reasons[] = {"CreateContainerConfigError", "CreateContainerError",
                                          "CrashLoopBackOff", "RunContainerError", NULL};

    for (const char *const *p = reasons; *p; p++) {
        if (strcmp(r, *p) == 0)
            return 1;
    }
    return 0;
}

static char *pod_prefix(const json_t *pod)
{
    const char *node = s_at(json_object_get(pod, "spec"), "nodeName");
    return kp_xasprintf("pod %s on node %s",
                        or_empty(s_at(json_object_get(pod, "metadata"), "name")),
                        node ? node : "(not scheduled)");
}

static char *container_problem(const json_t *pod, const json_t *cs, int *fatal)
{
    const json_t *state = json_object_get(cs, "state");
    const json_t *w = json_object_get(state, "waiting");
    const json_t *t = json_object_get(state, "terminated");
    char *pre = pod_prefix(pod);
    char *out = NULL;

    if (w && s_at(w, "reason") && fatal_reason(s_at(w, "reason"))) {
        const char *r = s_at(w, "reason");
        *fatal = 1;
        out = kp_xasprintf("%s: container %s: %s: %s", pre, or_empty(s_at(cs, "name")), r,
                           or_empty(s_at(w, "message")));
    } else if (t && json_integer_value(json_object_get(t, "exitCode")) != 0) {
        out = kp_xasprintf("%s: container %s exited with code %lld (%s) %s", pre,
                           or_empty(s_at(cs, "name")),
                           (long long)json_integer_value(json_object_get(t, "exitCode")),
                           or_empty(s_at(t, "reason")), or_empty(s_at(t, "message")));
    }
    free(pre);
    return out;
}

const char *k8s_wait_pinned_node(const json_t *pod)
{
    const json_t *terms = json_object_get(
        json_object_get(json_object_get(json_object_get(json_object_get(pod, "spec"), "affinity"),
                                        "nodeAffinity"),
                        "requiredDuringSchedulingIgnoredDuringExecution"),
        "nodeSelectorTerms");
    const json_t *t = json_array_get(terms, 0);
    static const char *const lists[][2] = {{"matchFields", "metadata.name"},
                                           {"matchExpressions", K8S_HOSTNAME_LABEL}};
    size_t i;
    json_t *r;

    if (json_array_size(terms) != 1)
        return NULL;
    for (size_t k = 0; k < 2; k++) {
        json_array_foreach(json_object_get(t, lists[k][0]), i, r)
        {
            const json_t *v = json_object_get(r, "values");
            if (strcmp(or_empty(s_at(r, "key")), lists[k][1]) == 0 &&
                strcmp(or_empty(s_at(r, "operator")), "In") == 0 && json_array_size(v) == 1)
                return json_string_value(json_array_get(v, 0));
        }
    }
    return NULL;
}

char *k8s_wait_pod_problem(const json_t *pod, int *fatal)
{
    const json_t *status = json_object_get(pod, "status");
    const json_t *sched = k8s_podfail_condition(pod, "PodScheduled");
    const char *phase = or_empty(s_at(status, "phase"));
    size_t i;
    json_t *cs;
    char *pre;
    char *out = NULL;
    struct k8s_podfail f;

    *fatal = 0;
    if (k8s_podfail_classify(pod, NULL, NULL, &f) != K8S_PODFAIL_NONE) {
        *fatal = f.fatal;
        out = f.message;
        f.message = NULL;
        k8s_podfail_cleanup(&f);
        return out;
    }
    json_array_foreach(json_object_get(status, "containerStatuses"), i, cs)
    {
        if ((out = container_problem(pod, cs, fatal)) != NULL)
            break;
    }
    if (strcmp(phase, "Failed") == 0)
        *fatal = 1;
    if (out)
        return out;
    pre = pod_prefix(pod);
    /* (Unschedulable is k8s_podfail's: a pod pinned to one node is fatal at once, since no new
     * node can take it; waiting for --timeout would only hide the scheduler's reason) */
    if (sched && strcmp(or_empty(s_at(sched, "status")), "False") == 0)
        out = kp_xasprintf("%s: %s: %s", pre, or_empty(s_at(sched, "reason")),
                           or_empty(s_at(sched, "message")));
    else if (*fatal)
        out = kp_xasprintf("%s: pod failed: %s %s", pre, or_empty(s_at(status, "reason")),
                           or_empty(s_at(status, "message")));
    free(pre);
    return out;
}

char *k8s_wait_events_summary(const json_t *events, const char *ns)
{
    size_t n = json_array_size(events);
    char *out = NULL;
    int psa = 0;

    for (size_t i = n > 3 ? n - 3 : 0; i < n; i++) {
        const json_t *e = json_array_get(events, i);
        const char *msg = or_empty(s_at(e, "message"));
        char *next = kp_xasprintf("%s%s%s: %s", out ? out : "", out ? "; " : "",
                                  or_empty(s_at(e, "reason")), msg);
        free(out);
        out = next;
        if (strstr(msg, "violates PodSecurity"))
            psa = 1;
    }
    if (psa) {
        char *next = kp_xasprintf("%s. Pod Security refuses the agent pods in namespace %s: "
                                  "label it with 'kubectl label namespace %s "
                                  "%s=privileged' (host-to-host needs hostNetwork), or run "
                                  "without host-to-host",
                                  out, ns, ns, K8S_PSA_ENFORCE);
        free(out);
        out = next;
    }
    return out;
}

/* events of one object by name; NULL on error or none. Caller frees. */
static char *events_of(struct kube_client *kc, const char *ns, const char *name)
{
    char *field = kp_xasprintf("involvedObject.name=%s", name);
    struct kube_list_opts lo = {.field_selector = field};
    json_t *items = NULL;
    char *out = NULL;
    struct kp_err err;

    if (kube_list_all(kc, &KUBE_RES_EVENTS, ns, &lo, &items, &err) == 0)
        out = k8s_wait_events_summary(items, ns);
    json_decref(items);
    free(field);
    return out;
}

/* the last lines the crashed container printed (e.g. "address already in use"), or NULL */
static char *crash_log(struct kube_client *kc, const char *ns, const char *pod, const char *problem)
{
    struct kube_log_opts lo = {.previous = 1, .tail_lines = 2, .limit_bytes = 4096};
    char *log = NULL;
    size_t len = 0;
    struct kp_err err;

    if (!strstr(problem, "CrashLoopBackOff"))
        return NULL;
    if (kube_pod_logs(kc, ns, pod, &lo, &log, &len, &err) != 0) {
        free(log);
        log = NULL;
    }
    for (size_t i = 0; log && i < len; i++) {
        if (log[i] == '\n')
            log[i] = i + 1 == len ? '\0' : ' ';
    }
    return log;
}

struct pod_wait {
    const struct k8s_wait_opts *o;
    struct kube_client *kc;
    int rescanning;     /* wait_cb is called from rescan(), outside the watch */
    json_t *was_ready;  /* pod name -> true: seen Ready (since its node was last read) */
    char *suspect_node; /* a running pod of it turned not Ready: read it (between streams) */
    char *node_down;    /* "node n-2 is NotReady: ..." ends the wait */
    json_t *pods;       /* name -> last state */
    json_t *ready;      /* name -> true: the pods of `pods` Ready now */
    json_t *finished;   /* name -> true: the pods of `pods` Succeeded or Failed */
    json_t *done;       /* result array */
    char *fatal;        /* diagnosis that ends the wait */
    char fatal_cause[K8S_CAUSE_MAX]; /* its k8s_podfail cause, "" when not a classified one */
    char *fatal_pod;
    char *last_problem;
};

int k8s_wait_pod_counts(const json_t *pod, const char *owner_uid)
{
    const json_t *md = json_object_get(pod, "metadata");
    size_t i;
    json_t *ref;

    if (json_object_get(md, "deletionTimestamp"))
        return 0; /* being deleted: an old pod the garbage collector has not removed yet */
    if (!owner_uid)
        return 1;
    json_array_foreach(json_object_get(md, "ownerReferences"), i, ref)
    {
        if (strcmp(or_empty(s_at(ref, "uid")), owner_uid) == 0)
            return 1;
    }
    return 0;
}

int k8s_wait_pod_stage(const json_t *pod)
{
    const json_t *st = json_object_get(pod, "status");
    const char *phase = or_empty(s_at(st, "phase"));
    const json_t *c = k8s_podfail_condition(pod, "PodScheduled");
    const json_t *cs;
    size_t i;

    if (strcmp(phase, "Running") == 0 || strcmp(phase, "Succeeded") == 0 ||
        strcmp(phase, "Failed") == 0)
        return 2;
    json_array_foreach(json_object_get(st, "containerStatuses"), i, cs)
    {
        const json_t *state = json_object_get(cs, "state");
        if (json_object_get(state, "running") || json_object_get(state, "terminated"))
            return 2;
    }
    if (s_at(json_object_get(pod, "spec"), "nodeName") ||
        (c && strcmp(or_empty(s_at(c, "status")), "True") == 0))
        return 1;
    return 0;
}

void k8s_wait_observe(struct k8s_pod_times *t, const json_t *pod)
{
    int stage = k8s_wait_pod_stage(pod);
    double now = clock_unix_s();

    if (stage >= 1 && t->scheduled_s <= 0)
        t->scheduled_s = now;
    if (stage >= 2 && t->running_s <= 0)
        t->running_s = now;
    if (t->sandbox_s <= 0) {
        const json_t *c = k8s_podfail_condition(pod, "PodReadyToStartContainers");
        if (c && strcmp(or_empty(s_at(c, "status")), "True") == 0)
            t->sandbox_s = now;
    }
}

/* the entry of stage_times for pod, NULL when it is not one the wait is for */
static json_t *stage_entry(json_t *all, const json_t *pod)
{
    const json_t *md = json_object_get(pod, "metadata");
    const char *key = s_at(json_object_get(md, "labels"), K8S_LABEL_JOB);

    return key ? json_object_get(all, key) : NULL;
}

static void observe_stage_times(json_t *all, const json_t *pod)
{
    json_t *e = stage_entry(all, pod);
    struct k8s_pod_times t = {0, 0, 0};

    if (!e)
        return;
    t.scheduled_s = json_number_value(json_array_get(e, 0));
    t.running_s = json_number_value(json_array_get(e, 1));
    k8s_wait_observe(&t, pod);
    json_array_set_new(e, 0, json_real(t.scheduled_s));
    json_array_set_new(e, 1, json_real(t.running_s));
}

static int finished(const json_t *pod)
{
    const char *phase = or_empty(s_at(json_object_get(pod, "status"), "phase"));
    return strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0;
}

/* What is wrong with pod (caller frees; NULL: nothing yet): k8s_podfail with the pod's events
 * first, then k8s_wait_pod_problem. cause: the k8s_podfail cause ("" when not one). can_read:
 * the API client is free (not inside a watch callback) for one read of the pod's node. */
static char *diagnose(const struct pod_wait *w, const json_t *pod, int *fatal,
                      char cause[K8S_CAUSE_MAX], int can_read)
{
    const char *name = or_empty(s_at(json_object_get(pod, "metadata"), "name"));
    json_t *ev = k8s_podevents_of(w->o->events, name);
    volatile sig_atomic_t *wake = k8s_podevents_wake(w->o->events);
    struct k8s_podfail f;
    char *out;

    *cause = '\0';
    if (k8s_podfail_classify(pod, ev, NULL, &f) == K8S_PODFAIL_NONE) {
        json_decref(ev);
        return k8s_wait_pod_problem(pod, fatal);
    }
    if (f.cause == K8S_PODFAIL_UNSCHEDULABLE && f.node && strstr(f.message, "not-ready")) {
        /* a node that is not Ready: one read tells whether its CNI is why. Inside the watch
         * the client is busy: wake the watch and judge the pod again from rescan() */
        json_t *n = NULL;
        struct kp_err ne;
        if (!can_read && wake) {
            *wake = 1;
            f.fatal = 0;
        } else if (can_read && kube_get(w->kc, &KUBE_RES_NODES, NULL, f.node, &n, &ne) == 0) {
            k8s_podfail_cleanup(&f);
            (void)k8s_podfail_classify(pod, ev, n, &f);
        }
        json_decref(n);
    }
    *fatal = f.fatal;
    snprintf(cause, K8S_CAUSE_MAX, "%s", k8s_podfail_cause_name(f.cause));
    if (f.fatal && f.since_s > 0)
        kp_log(KP_LOG_INFO, "%s: %s (diagnosed %.1f s after the first sign, by this clock)",
               w->o->what, k8s_podfail_cause_name(f.cause), clock_unix_s() - f.since_s);
    out = f.message;
    f.message = NULL;
    k8s_podfail_cleanup(&f);
    json_decref(ev);
    return out;
}

/* With o->failed_nodes: a pinned pod that cannot start (a classified, fatal problem) is
 * recorded there (its node -> {why, cause}) instead of ending the wait, and dropped again once
 * it no longer says so. */
static void note_failed_node(json_t *all, const json_t *pod, const char *problem, const char *cause,
                             int *fatal)
{
    const char *node = k8s_wait_pinned_node(pod);

    if (!node)
        return;
    if (problem && *fatal && *cause) {
        json_object_set_new(all, node, json_pack("{s:s, s:s}", "why", problem, "cause", cause));
        *fatal = 0;
    } else {
        json_object_del(all, node);
    }
}

/* One event: only the pod it is about is looked at (the others did not change), and the
 * Ready and finished pods are counted as they change, so a wait for N pods costs O(N) in all,
 * not O(N) per event (500 sweep servers send thousands of events). */
static int wait_cb(void *arg, enum kube_event_type type, json_t *pod, struct kp_err *err)
{
    struct pod_wait *w = arg;
    const char *name = or_empty(s_at(json_object_get(pod, "metadata"), "name"));
    const char *k;
    json_t *p;
    int fatal = 0;
    char *problem;
    char cause[K8S_CAUSE_MAX];
    const char *phase;
    (void)err;

    if (type == KUBE_EVENT_DELETED || !k8s_wait_pod_counts(pod, w->o->owner_uid) ||
        (w->o->stage_times && !stage_entry(w->o->stage_times, pod))) {
        json_object_del(w->pods, name);
        json_object_del(w->ready, name);
        json_object_del(w->finished, name);
    } else if (type == KUBE_EVENT_ADDED || type == KUBE_EVENT_MODIFIED) {
        json_object_set(w->pods, name, pod);
        if (w->o->times)
            k8s_wait_observe(w->o->times, pod);
        if (w->o->stage_times)
            observe_stage_times(w->o->stage_times, pod);
        p = pod;
        problem = diagnose(w, p, &fatal, cause, w->rescanning);
        phase = or_empty(s_at(json_object_get(p, "status"), "phase"));
        if (w->o->goal == K8S_WAIT_FINISHED &&
            (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) {
            free(problem);
            json_array_clear(w->done);
            json_array_append(w->done, p);
            return 1;
        }
        if (pod_ready(p)) {
            json_object_set_new(w->was_ready, name, json_true());
            json_object_set_new(w->ready, name, json_true());
        } else {
            json_object_del(w->ready, name);
        }
        if (finished(p))
            json_object_set_new(w->finished, name, json_true());
        else
            json_object_del(w->finished, name);
        if (w->o->goal == K8S_WAIT_FINISHED && strcmp(phase, "Running") == 0 && !pod_ready(p) &&
            json_object_get(w->was_ready, name)) {
            /* a running client that stops being Ready (it has no readiness probe): what the
             * node lifecycle controller does to the pods of a node that stopped reporting.
             * One read of the node tells (after this stream: the client has one connection);
             * the pod will never finish if it is down. Read again only if it is Ready again
             * and then not. */
            const char *node = or_empty(s_at(json_object_get(p, "spec"), "nodeName"));
            json_object_del(w->was_ready, name);
            if (*node) {
                free(problem);
                w->suspect_node = kp_xstrdup(node);
                return 1;
            }
        }
        if (w->o->failed_nodes)
            note_failed_node(w->o->failed_nodes, p, problem, cause, &fatal);
        if (problem && fatal && !(w->o->goal == K8S_WAIT_ALL_FINISHED && finished(p))) {
            snprintf(w->fatal_cause, sizeof(w->fatal_cause), "%s", cause);
            w->fatal = problem;
            w->fatal_pod = kp_xstrdup(name);
            return 1;
        }
        if (problem) {
            free(w->last_problem);
            w->last_problem = problem;
        }
    }
    if (w->o->goal == K8S_WAIT_ALL_FINISHED)
        return json_object_size(w->finished) >= w->o->want;
    if (w->o->goal == K8S_WAIT_READY &&
        json_object_size(w->ready) + json_object_size(w->o->failed_nodes) >= w->o->want) {
        json_array_clear(w->done);
        json_object_foreach(w->pods, k, p)
        {
            if (json_object_get(w->ready, k))
                json_array_append(w->done, p);
        }
        return 1;
    }
    return 0;
}

/* The node of a pod the wait counts that is neither Ready nor finished, NULL when there is
 * none. A client whose node stops reporting before the client was ever Ready sends no event
 * (its Ready condition was False already), so a finish wait reads that node between slices. */
static char *unready_node(const struct pod_wait *w)
{
    const char *k;
    json_t *p;

    json_object_foreach(w->pods, k, p)
    {
        const char *node = s_at(json_object_get(p, "spec"), "nodeName");
        if (node && *node && !json_object_get(w->ready, k) && !json_object_get(w->finished, k))
            return kp_xstrdup(node);
    }
    return NULL;
}

/* An event of the run's pods was kept (k8s_podevents): the pods seen so far are judged again
 * with it, as if each had changed. Returns 1 when that ends the wait (as wait_cb). */
static int rescan(struct pod_wait *w, struct kp_err *err)
{
    json_t *snap = json_copy(w->pods); /* wait_cb updates w->pods */
    const char *k;
    json_t *p;
    int rc = 0;

    w->rescanning = 1;
    json_object_foreach(snap, k, p)
    {
        if (json_object_get(w->ready, k) || json_object_get(w->finished, k))
            continue;
        if ((rc = wait_cb(w, KUBE_EVENT_MODIFIED, p, err)) != 0)
            break;
    }
    w->rescanning = 0;
    json_decref(snap);
    return rc;
}

/* The wait's outcome as k8s_wait_pods returns it: rc 0 (goal met), 1 (--timeout) or -1 (the
 * watch failed) becomes 0, or -1 with err naming the pod, node, cause and events. */
static int wait_result(struct kube_client *kc, const struct k8s_wait_opts *o,
                       const struct pod_wait *w, int rc, struct kp_err *err)
{
    char *ev = NULL;

    if (rc == 0 && w->node_down) {
        if (o->cause_out && strstr(w->node_down, "NetworkReady=false"))
            snprintf(o->cause_out, K8S_CAUSE_MAX, "%s", "cni-not-ready");
        kp_err_set(err, "%s: %s", o->what, w->node_down);
        rc = -1;
    } else if (rc == 0 && w->fatal) {
        char *logtail = crash_log(kc, o->ns, w->fatal_pod, w->fatal);
        ev = events_of(kc, o->ns, w->fatal_pod);
        if (o->cause_out && *w->fatal_cause)
            snprintf(o->cause_out, K8S_CAUSE_MAX, "%s", w->fatal_cause);
        kp_err_set(err, "%s did not start: %s%s%s%s%s", o->what, w->fatal,
                   logtail ? "; last log: " : "", logtail ? logtail : "", ev ? "; events: " : "",
                   ev ? ev : "");
        free(logtail);
        rc = -1;
    } else if (rc == 1) {
        ev = events_of(kc, o->ns, o->owner);
        if (!ev && w->last_problem == NULL && json_object_size(w->pods) == 0)
            ev = kp_xstrdup("no pod was created");
        kp_err_set(err, "%s: not %s after %llu s (--timeout)%s%s%s%s", o->what,
                   o->goal == K8S_WAIT_READY ? "ready" : "finished",
                   (unsigned long long)(o->timeout_ms / 1000), w->last_problem ? ": " : "",
                   w->last_problem ? w->last_problem : "", ev ? "; events: " : "", ev ? ev : "");
        rc = -1;
    } else if (rc != 0) {
        kp_err_prefix(err, "waiting for %s", o->what);
    }
    free(ev);
    return rc;
}

int k8s_wait_pods(struct kube_client *kc, const struct k8s_wait_opts *o, json_t **pods,
                  struct kp_err *err)
{
    struct pod_wait w = {.o = o,
                         .kc = kc,
                         .was_ready = json_object(),
                         .pods = json_object(),
                         .ready = json_object(),
                         .finished = json_object(),
                         .done = json_array()};
    char *resume = NULL; /* where the next slice's watch starts: no list again */
    volatile sig_atomic_t *wake = k8s_podevents_wake(o->events);
    struct kube_watch_opts wo = {
        .label_selector = o->selector, .stream_timeout_s = 60, .resume_rv = &resume, .wake = wake};
    uint64_t end = clock_now_ms() + o->timeout_ms;
    int rc;

    for (;;) {
        json_t *n = NULL;
        struct kp_err ne;
        uint64_t now = clock_now_ms();
        uint64_t left = end > now ? end - now : 0;
        int slice = o->goal == K8S_WAIT_FINISHED && left > K8S_WAIT_NODE_CHECK_MS;

        if (o->timeout_ms && left == 0) {
            rc = 1;
            break;
        }
        wo.deadline_ms = slice ? K8S_WAIT_NODE_CHECK_MS : left;
        wo.resource_version = resume; /* NULL the first time: list */
        rc = kube_watch(kc, &KUBE_RES_PODS, o->ns, &wo, wait_cb, &w, err);
        if (rc == 1 && wake && *wake) {
            *wake = 0; /* before looking: an event kept from now on wakes the next watch */
            if (rescan(&w, err) == 0)
                continue; /* watch on from where it stopped (the deadline is checked first) */
            rc = 0;       /* the wait ends (or a node is to be read, below) */
        } else if (rc == 1 && slice) {
            /* a slice ended, not the wait: read the node of a pod not Ready yet, if any */
            w.suspect_node = unready_node(&w);
            if (!w.suspect_node)
                continue;
            rc = 0;
        }
        if (rc != 0 || !w.suspect_node)
            break;
        if (kube_get(kc, &KUBE_RES_NODES, NULL, w.suspect_node, &n, &ne) == 0) {
            char *why = k8s_facts_node_not_ready(n);
            if (why)
                w.node_down = kp_xasprintf("node %s is NotReady: %s", w.suspect_node, why);
            free(why);
        }
        json_decref(n);
        free(w.suspect_node);
        w.suspect_node = NULL;
        if (w.node_down || clock_now_ms() >= end) {
            rc = w.node_down ? 0 : 1;
            break;
        }
        /* the node is fine: watch on from where the last watch stopped (no new list) */
    }

    rc = wait_result(kc, o, &w, rc, err);
    if (rc == 0 && pods) {
        *pods = w.done;
        w.done = NULL;
    }
    free(resume);
    free(w.fatal);
    free(w.node_down);
    free(w.suspect_node);
    json_decref(w.was_ready);
    free(w.fatal_pod);
    free(w.last_problem);
    json_decref(w.done);
    json_decref(w.pods);
    json_decref(w.ready);
    json_decref(w.finished);
    return rc;
}
