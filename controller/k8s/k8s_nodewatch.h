/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_nodewatch.h - the sweep's nodes, watched while the run lasts (issue 29): a thread with an
 * API client of its own watches core/v1 Nodes and records each watched node whose Ready
 * condition turns False with NetworkReady=false (its CNI conflist gone, the CNI agent down):
 * the kubelet's message, the condition's lastTransitionTime and when kperf saw it. The sweep
 * (k8s_sweep.c) then fails the pairs that need a new pod on that node at once, with cause
 * cni-not-ready, instead of waiting for their client pod's sandbox to fail; the thread logs the
 * diagnosis when it sees it. A node stays recorded for the rest of the run even if it
 * recovers. Costs one watch stream, no polling. Knows nothing of pairs, waits or the report. */
#ifndef KPERF_K8S_K8S_NODEWATCH_H
#define KPERF_K8S_K8S_NODEWATCH_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/kube/kube.h"

struct k8s_nodewatch;

/* Starts watching the nodes named in names (array of strings, copied) with a client made from ko
 * (its pointers borrowed for the call). Returns 0 with *out, or -1 with err (no client, no
 * thread). */
KP_MUST_CHECK int k8s_nodewatch_start(const struct kube_client_opts *ko, const json_t *names,
                                      struct k8s_nodewatch **out, struct kp_err *err);

/* Stops the thread and frees nw. NULL is a no-op. */
void k8s_nodewatch_stop(struct k8s_nodewatch *nw);

/* The nodes recorded so far: {name: {"why", "since_unix_s", "detected_unix_s"}} (a copy, new
 * reference; {} when none or nw NULL). */
json_t *k8s_nodewatch_down(struct k8s_nodewatch *nw);

/* Records node (core/v1 Node, borrowed) in down (as above) when it is one of watched (object
 * name -> anything), its network is not ready (Ready not True, its message saying
 * NetworkReady=false) and it is not recorded yet; now_s: when it was seen (Unix seconds).
 * Returns 1 when recorded. The thread's callback; public for the unit test. */
int k8s_nodewatch_keep(json_t *down, const json_t *watched, const json_t *node, double now_s);

#endif
