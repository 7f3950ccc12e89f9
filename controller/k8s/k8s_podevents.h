/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_podevents.h - the events of the run's pods, watched while the run lasts (issue 29): a
 * thread with an API client of its own watches core/v1 Events in the run's namespace
 * (fieldSelector involvedObject.kind=Pod) and keeps, per pod, the last few that can explain a
 * pod that does not start (FailedCreatePodSandBox, NetworkNotReady, image pull failures:
 * k8s_podfail.h reads them). A sandbox failure changes nothing in the pod object, so a wait
 * that watches pods alone would not see it: each kept event sets a wake flag that ends the
 * current pod watch early (kube_watch_opts.wake), and the wait classifies its pods again.
 * Costs one watch stream, no polling. Knows nothing of waits or the report. */
#ifndef KPERF_K8S_K8S_PODEVENTS_H
#define KPERF_K8S_K8S_PODEVENTS_H

#include <jansson.h>
#include <signal.h>

#include "base/kp_err.h"
#include "controller/kube/kube.h"

struct k8s_podevents;

/* Starts watching namespace ns (copied) with a client made from ko (its pointers borrowed for
 * the call). Returns 0 with *out, or -1 with err (no client, no thread). */
KP_MUST_CHECK int k8s_podevents_start(const struct kube_client_opts *ko, const char *ns,
                                      struct k8s_podevents **out, struct kp_err *err);

/* Stops the thread and frees pe. NULL is a no-op. */
void k8s_podevents_stop(struct k8s_podevents *pe);

/* The flag set on each event kept (borrowed; the waiter resets it to 0 before it looks). pe
 * NULL: NULL. */
volatile sig_atomic_t *k8s_podevents_wake(struct k8s_podevents *pe);

/* A copy of the events kept for pod (new reference, oldest first), or NULL when none (or pe
 * NULL). */
json_t *k8s_podevents_of(struct k8s_podevents *pe, const char *pod);

/* Keeps event e (borrowed) in by_pod (pod name -> array) when it can explain a pod that does
 * not start; returns 1 when kept. At most K8S_PODEVENTS_PER_POD per pod, an updated event
 * (same metadata.name: a repeat, count+1) replacing its old copy. The thread's callback; public
 * for the unit test. */
#define K8S_PODEVENTS_PER_POD 8
int k8s_podevents_keep(json_t *by_pod, const json_t *e);

#endif
