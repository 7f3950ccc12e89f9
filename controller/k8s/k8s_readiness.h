/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_readiness.h - pod network readiness of one pod (issue 13): the time from its creation to
 * its first answered packet, split into scheduling (created -> scheduled), sandbox/network
 * set-up (scheduled -> a container started, i.e. the CNI ADD is done) and first packet
 * (started -> the agent's first answered connection, its document's first_answer_unix_s).
 * Instants are CLOCK_REALTIME seconds: created is when kperf asked the API server for the
 * object, scheduled/running when kperf's watch first saw the pod there (sub-second, unlike the
 * API's 1 s timestamps), the first answer the agent's own clock. docs/report.md. */
#ifndef KPERF_K8S_K8S_READINESS_H
#define KPERF_K8S_K8S_READINESS_H

#include <jansson.h>

#include "controller/k8s/k8s_wait.h"

/* The record of metadata.readiness.pods[] (new reference): {pod, node, kind, created_unix_s,
 * scheduling_s, network_s, first_packet_s, total_s, time_to_ip_s (created -> the pod's
 * PodReadyToStartContainers condition seen True: its sandbox has its IP)}. A segment whose end was
 * never seen is left out (and total_s with it); a negative segment (clock skew between the agent's
 * node and kperf, or a watch event that arrived after the agent's first packet) counts as 0. doc
 * may be NULL. */
json_t *k8s_readiness_record(const char *pod, const char *node, const char *kind, double created_s,
                             const struct k8s_pod_times *t, const json_t *doc);

#endif
