/* SPDX-License-Identifier: Apache-2.0 */
/* local_ready.h - pod network readiness of `kperf run --local` (issue 13): a few short-lived
 * pods per node (localnet.h), each timed from its creation to its first answered packet, as
 * the Kubernetes backend times its pods (controller/k8s/k8s_readiness.h; docs/report.md).
 * For each pod: created (just before its namespace is made) -> network set up (namespace,
 * the cni-add-delay of its node if any, veth, addresses, routes: the analogue of Running)
 * -> the first answered connection of a `kperf-agent client` TCP_RR run in it against a pod
 * server (first_answer_unix_s of its document). There is no scheduler: scheduling_s is 0.
 * The two nodes run at once (a thread for node 2); on a node the pods run one at a time, each
 * removed before the next is made. */
#ifndef KPERF_LOCAL_LOCAL_READY_H
#define KPERF_LOCAL_LOCAL_READY_H

#include <signal.h>
#include <stdint.h>

#include <jansson.h>

struct localnet;

#define LOCAL_READY_DEFAULT_PODS 3  /* per node, when --pod-churn is not given */
#define LOCAL_READY_TEST_MS      20 /* the TCP_RR of a readiness pod */

struct local_ready_opts {
    struct localnet *ln;           /* the built cluster */
    const char *agent;             /* kperf-agent */
    const char *token_file;        /* the server's token */
    const char *server;            /* the pod server's address the pods dial */
    int port;                      /* its port */
    int pods_per_node;             /* >= 1 */
    uint64_t delay_ms[2];          /* network set-up delay of node1, node2 (cni-add-delay) */
    uint64_t timeout_ms;           /* bound on one pod's agent run */
    volatile sig_atomic_t *cancel; /* stop early, killing a running agent (interrupted) */
};

/* Measures pods_per_node pods on each node. Returns the records (new reference; an array of
 * {pod, node ("node1"/"node2"), kind "churn", created_unix_s, scheduling_s, network_s,
 * first_packet_s, total_s}; a segment a failed pod never reached is left out, and logged). A
 * pod is removed whatever happens; one that cannot be removed is logged and left to the run's
 * cleanup (localnet_destroy). */
json_t *local_ready_measure(const struct local_ready_opts *o);

#endif
