/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_watch_ready.h - pod network readiness during `kperf watch --readiness-every DUR` on a
 * cluster (issue 13, docs/watch.md): every DUR, one short-lived client Job per eligible node
 * (the `--pod-churn` pod: a 1 s TCP_RR to the pod server, the same restricted pod as every
 * client), at most one per node in flight; each is timed from its creation to scheduled, to
 * running (sandbox and network set up) and to its agent's first answered packet
 * (k8s_readiness.h), or fails when it has no answer within --timeout. Two threads with API
 * clients of their own: one watches the run's client pods (stage times, sub-second), one creates
 * the Jobs, reads their logs and deletes them, so the watch's main loop never waits on them.
 * Owns those Jobs while they run; an interrupted Job is removed by the backend's cleanup (it
 * carries the run's labels). Knows nothing of the report (controller/report/watch_readiness.h). */
#ifndef KPERF_K8S_K8S_WATCH_READY_H
#define KPERF_K8S_K8S_WATCH_READY_H

#include <stdint.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"

struct k8s_ready_watch;

/* After prepare (b must be a Kubernetes backend whose plan deployed the pod server): starts
 * measuring every every_ms on every eligible node, the first pods at once. Returns 0 with *out
 * (stop with k8s_watch_ready_stop), or -1 with err (no pod server, no API client, no thread). */
KP_MUST_CHECK int k8s_watch_ready_start(struct backend *b, uint64_t every_ms,
                                        struct k8s_ready_watch **out, struct kp_err *err);

/* Stops measuring (a pod still in flight is dropped and its Job deleted), frees rw and returns
 * the records (new reference, in creation order): per pod {node, job, pod, kind: "watch",
 * created_unix_s, scheduling_s, network_s, first_packet_s, total_s} (k8s_readiness_record), or
 * {node, job, kind, created_unix_s, error} when it got no answer within the bound. rw NULL:
 * returns NULL. */
json_t *k8s_watch_ready_stop(struct k8s_ready_watch *rw);

#endif
