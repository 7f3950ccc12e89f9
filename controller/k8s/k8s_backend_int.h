/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_backend_int.h - the Kubernetes backend's private state, shared by the files of
 * controller/k8s/: backend_k8s.c (the ops table, cleanup), k8s_prepare.c (facts, nodes,
 * preflight, deployment), k8s_client.c (client Jobs) and the sweep, churn and watch code above
 * it. Not for other users. */
#ifndef KPERF_K8S_K8S_BACKEND_INT_H
#define KPERF_K8S_K8S_BACKEND_INT_H

#include <jansson.h>
#include <signal.h>

#include "base/kp_err.h"
#include "controller/backend.h"
#include "controller/k8s/k8s_deploy.h"
#include "controller/k8s/k8s_lease.h"
#include "controller/k8s/k8s_wait.h"
#include "controller/kube/kube.h"
#include "controller/run_options.h"

struct k8s_backend {
    struct backend base;
    const struct run_options *ro;   /* borrowed for the backend's life */
    struct kube_client *kc;         /* ours */
    volatile sig_atomic_t stop;     /* set by interrupt() */
    volatile sig_atomic_t cleaning; /* cleanup() runs: interrupt() must not abort it */
    struct k8s_deploy d;            /* valid once `deployed` */
    int deployed;
    char *token;          /* per-run agent token (secret) */
    json_t *nodes;        /* eligible Node objects, ours */
    json_t *net_down;     /* --all-nodes: NotReady nodes with NetworkReady=false, ours (or NULL):
                           * swept, their pairs fail at once with cni-not-ready (k8s_sweep.c) */
    const json_t *node_a; /* borrowed from nodes: servers, same-node clients */
    const json_t *node_b; /* borrowed from nodes: other-node clients, or NULL */
    json_t *facts;        /* describe(): ours */
    /* [0] IPv4, [1] IPv6 (K8S_FAM): the addresses of each family measured */
    char *pod_server_ip[2];      /* pod IP of kperf-server-pod-a */
    char *host_server_ip[2];     /* node A's IP as kperf-server-host-a sees it */
    char *service_ip[2];         /* ClusterIP of kperf-svc-a */
    char *dns_ip[2];             /* pod-to-dns: ClusterIPs of kube-system/kube-dns */
    const struct plan *dns_plan; /* pod-to-dns: the run's plan (borrowed), k8s_dns.c */
    json_t *dns_jobs; /* pod-to-dns: Jobs started, "family|placement" -> {job, uid, start} */
    const char *cluster_families[2]; /* the cluster's ("IPv4"/"IPv6"), primary first */
    size_t n_cluster_families;
    const char *ip_families[2]; /* what the run measures (run_ip_families_choose) */
    size_t n_ip_families;
    int created;                     /* something may exist in the cluster */
    int ns_created;                  /* we created d.ns: delete it at the end */
    struct k8s_lease_keeper *lease;  /* the run's Lease, held from before its first object */
    struct k8s_lease_keeper *lock;   /* the cluster lock (k8s_lock.h), held from before the
                                      * leftovers' removal to the end of cleanup; NULL without */
    char run_id[K8S_RUN_ID_MAX + 1]; /* made with the lock, before deploying (k8s_deploy_init) */
    unsigned svc_made;     /* --services: kperf-svcx-0 .. svc_made - 1 exist (k8s_services.c) */
    unsigned n_steps;      /* client runs so far: the step number in the next Job's name */
    json_t *sweep_servers; /* --all-nodes: {"pod"|"host": {node: IP}} (k8s_sweep.c) */
    struct k8s_sweep_state *sweep; /* --all-nodes --parallel: jobs started ahead (k8s_sweep.c) */
    json_t *readiness;             /* readiness records of the pods run so far (k8s_readiness.h) */
    int cpu_limit_noted;           /* k8s_backend_note_cpu_limit warned already */
    char *watch_dir;               /* kperf watch: the probes' log files (k8s_watch.c) */
    struct k8s_podevents *podevents; /* the run's pod events, from its namespace's creation */
    struct k8s_nodewatch *nodewatch; /* --all-nodes: the swept nodes' network (k8s_nodewatch.h) */
    /* why the last prepare or run_client failed when a pod could not start (the k8s_podfail
     * cause name: backend_ops.failure_cause), "" otherwise */
    char fail_cause[K8S_CAUSE_MAX];
};

/* Index of a family in the [2] arrays above: 1 for "IPv6", else 0. */
#define K8S_FAM(f) ((f) && (f)[3] == '6')

/* The options every API client of the run is made with (main client, lease keeper). */
void k8s_backend_client_opts(const struct k8s_backend *b, struct kube_client_opts *ko);

/* Agent pods (a ready server set: who = "server pods") that carry a CPU limit kperf did not
 * ask for: warns once per run, naming the limit and its source, and records it in the
 * report's metadata as agent_cpu_limit (a compare provenance setting). */
void k8s_backend_note_cpu_limit(struct k8s_backend *b, const json_t *pods, const char *who);

/* The lease keeper's k8s_lease_lost_fn (arg: the backend): the run's namespace or Lease was
 * deleted under it; stops the run at once (its waits are aborted). backend_k8s.c. */
void k8s_backend_lost(void *arg);

/* Starts watching the run's pod events (k8s_podevents.h) once its namespace exists, and with
 * --all-nodes the swept nodes (k8s_nodewatch.h); without them (no thread, no client) pods that
 * cannot start are found at --timeout, a node whose network fails when its pair fails. */
void k8s_backend_watch_events(struct k8s_backend *b);

/* Makes the run id and takes the cluster lock (k8s_lock.h) with --wait-for-lock, renewed by a
 * keeper thread until cleanup; without the right to (403) says so and goes on. 0 or -1. */
KP_MUST_CHECK int k8s_backend_lock(struct k8s_backend *b, struct kp_err *err);

/* backend_ops.prepare (k8s_prepare.c). */
KP_MUST_CHECK int k8s_prepare(struct backend *base, struct plan *plan, struct kp_err *err);

/* Preflight (k8s_preflight.c): the namespace (and --host-namespace) exist with the Pod Security
 * the run's pods need; the user may do every verb the run needs, asked with
 * SelfSubjectAccessReviews. 0, or -1 with one line that says what to do. */
KP_MUST_CHECK int k8s_preflight_namespace(struct k8s_backend *b, struct kp_err *err);
KP_MUST_CHECK int k8s_preflight_rbac(struct k8s_backend *b, struct kp_err *err);

#endif
