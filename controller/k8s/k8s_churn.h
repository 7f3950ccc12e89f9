/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_churn.h - `--pod-churn N`: pod network readiness under a burst. After the servers are
 * ready, N short-lived client Jobs per eligible node are created at once (in waves of at most
 * K8S_CHURN_WAVE pods), each a 1 s TCP_RR to the pod server; one watch over the burst times
 * every pod's scheduling and network set-up, the agents' documents give the first answered
 * packet, and each Job is deleted as soon as its log is read. Their readiness records have
 * kind "churn". The Jobs carry the run's labels, so an interrupted burst is removed by the run's
 * cleanup like everything else. */
#ifndef KPERF_K8S_K8S_CHURN_H
#define KPERF_K8S_K8S_CHURN_H

#include "base/kp_err.h"

struct k8s_backend;

#define K8S_CHURN_WAVE 64 /* pods in flight at once, over all nodes */

/* Runs the burst when b->ro->pod_churn > 0. A churn pod that fails is logged and left out of
 * the readiness records; returns -1 with err only when interrupted or nothing could be
 * created. */
KP_MUST_CHECK int k8s_churn_run(struct k8s_backend *b, struct kp_err *err);

#endif
