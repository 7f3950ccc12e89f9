/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_wait.h - waiting for agent pods with watches (never sleeps or polling loops), bounded by
 * a deadline, and explaining pods that do not start: the pod, its node, the waiting reason
 * and the last events (ImagePullBackOff with the image, Unschedulable with the scheduler's
 * message, Pod Security FailedCreate with the namespace label to set). The diagnosis of one
 * pod is a pure function, unit-tested with fixtures. */
#ifndef KPERF_K8S_K8S_WAIT_H
#define KPERF_K8S_K8S_WAIT_H

#include <jansson.h>
#include <stdint.h>

#include "base/kp_err.h"
#include "controller/k8s/k8s_podevents.h"
#include "controller/kube/kube.h"

/* What is wrong with a pod (borrowed), or NULL when nothing is (yet). *fatal = 1 when it will
 * not fix itself (a permanent image pull error, config errors, crash loops, a failed pod, a
 * pod pinned to one node that the scheduler finds Unschedulable: "pod P for node N is
 * unschedulable: <the scheduler's message>"; k8s_podfail.h for the pulls and the scheduler,
 * without events). Caller frees. */
char *k8s_wait_pod_problem(const json_t *pod, int *fatal);

/* The one node a pod's required node affinity names (matchFields metadata.name or
 * matchExpressions kubernetes.io/hostname, operator In, one value: DaemonSet pods and kperf's
 * own pods), or NULL. Borrowed from pod. */
const char *k8s_wait_pinned_node(const json_t *pod);

/* One line from the events of an object (array of core/v1 Event, borrowed): the last three
 * "reason: message" texts, oldest first, plus a hint for Pod Security rejections naming the
 * label to set on ns. NULL when there are none. Caller frees. */
char *k8s_wait_events_summary(const json_t *events, const char *ns);

/* 1 when a pod counts for a wait on the object whose metadata.uid is owner_uid (NULL = any
 * owner): it has no deletionTimestamp and one of its ownerReferences names that uid. A pod of
 * an earlier object of the same name (deleted, its pods not yet collected) does not count. */
int k8s_wait_pod_counts(const json_t *pod, const char *owner_uid);

/* How far a pod got towards running (pod network readiness): 0 not yet scheduled, 1 scheduled
 * (spec.nodeName set or PodScheduled True), 2 sandbox and network set up (a container has
 * started: phase Running, a running or terminated container, or a finished pod). */
int k8s_wait_pod_stage(const json_t *pod);

struct k8s_pod_times;
/* Sets the stages of t that pod has reached and t has not seen yet to now. */
void k8s_wait_observe(struct k8s_pod_times *t, const json_t *pod);

/* When a wait first saw its pod reach each stage (CLOCK_REALTIME seconds, 0 = not seen). The
 * watch starts after the pod's creation, so a stage already reached at its first sight is
 * timed at that sight: an upper bound. */
struct k8s_pod_times {
    double scheduled_s;
    double running_s;
    double sandbox_s; /* its PodReadyToStartContainers condition True: the pod has its IP */
};

enum k8s_wait_goal {
    K8S_WAIT_READY,        /* `want` pods Ready */
    K8S_WAIT_FINISHED,     /* one pod Succeeded or Failed */
    K8S_WAIT_ALL_FINISHED, /* `want` pods Succeeded or Failed (a burst of client Jobs) */
};

/* A finish wait watches in slices of this length; between slices it reads the node of a pod
 * that is not Ready yet (a node that stops reporting before its client was Ready sends no pod
 * event). The node lifecycle controller takes 40-50 s to mark a silent node, so 15 s adds
 * little to that; each slice costs one watch request, resumed from the last resourceVersion
 * seen (no new list). */
#define K8S_WAIT_NODE_CHECK_MS 15000

struct k8s_wait_opts {
    const char *ns;
    const char *selector;  /* pods to watch */
    const char *owner;     /* DaemonSet/Job name, for its events when no pod appears */
    const char *owner_uid; /* metadata.uid of that object: only its pods count (NULL = any) */
    const char *what;      /* "server kperf-server-pod-a on node n-1", for messages */
    enum k8s_wait_goal goal;
    size_t want;                 /* READY: how many pods */
    uint64_t timeout_ms;         /* overall deadline */
    struct k8s_pod_times *times; /* optional: filled with the first counting pod's stages */
    /* optional (borrowed object): the pods that count, keyed by their kperf.io/job label, each
     * [scheduled_s, running_s] (as k8s_pod_times, 0 = not seen; the caller puts [0, 0] for
     * each pod it waits for, the wait fills them in). Other pods are ignored. */
    json_t *stage_times;
    /* optional (borrowed object), READY only: a pinned pod that cannot start (k8s_podfail.h:
     * Unschedulable, no pod network, an image that will not pull) does not end the wait; it is
     * recorded here (node name -> {"why": the diagnosis, "cause": its k8s_podfail cause name})
     * and counts towards `want`, so the pods of the other nodes are still waited for. */
    json_t *failed_nodes;
    /* optional (borrowed): the run's pod events (k8s_podevents.h): a sandbox failure, which
     * the pod object does not show, ends the wait within seconds of its first event */
    struct k8s_podevents *events;
    /* optional (K8S_CAUSE_MAX bytes): on -1 because a pod cannot start, its k8s_podfail cause
     * name ("ip-exhaustion", ...); else left as it was */
    char *cause_out;
};

#define K8S_CAUSE_MAX 32

/* Watches the pods until the goal is met. On 0, *pods (may be NULL) is a new array of the
 * matching pods' last states (READY: the ready ones; FINISHED: the finished one). On -1, err
 * names the pod, node, reason and events, or says the wait timed out and why. */
KP_MUST_CHECK int k8s_wait_pods(struct kube_client *kc, const struct k8s_wait_opts *o,
                                json_t **pods, struct kp_err *err);

#endif
