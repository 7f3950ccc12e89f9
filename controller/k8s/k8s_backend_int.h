/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_backend_int.h - the Kubernetes backend's private state, shared by backend_k8s.c (client
 * runs, cleanup) and k8s_prepare.c (facts, nodes, preflight, deployment). Not for other users. */
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
    const json_t *node_a; /* borrowed from nodes: servers, same-node clients */
    const json_t *node_b; /* borrowed from nodes: other-node clients, or NULL */
    json_t *facts;        /* describe(): ours */
    /* [0] IPv4, [1] IPv6 (K8S_FAM): the addresses of each family measured */
    char *pod_server_ip[2];          /* pod IP of kperf-server-pod-a */
    char *host_server_ip[2];         /* node A's IP as kperf-server-host-a sees it */
    char *service_ip[2];             /* ClusterIP of kperf-svc-a */
    const char *cluster_families[2]; /* the cluster's ("IPv4"/"IPv6"), primary first */
    size_t n_cluster_families;
    const char *ip_families[2]; /* what the run measures (run_ip_families_choose) */
    size_t n_ip_families;
    int created;                    /* something may exist in the cluster */
    int ns_created;                 /* we created d.ns: delete it at the end */
    struct k8s_lease_keeper *lease; /* the run's Lease, held from before its first object */
    unsigned n_steps;               /* client runs so far: the step number in the next Job's name */
    json_t *sweep_servers;          /* --all-nodes: {"pod"|"host": {node: IP}} (k8s_sweep.c) */
    struct k8s_sweep_state *sweep;  /* --all-nodes --parallel: jobs started ahead (k8s_sweep.c) */
    json_t *readiness;              /* readiness records of the pods run so far (k8s_readiness.h) */
    int cpu_limit_noted;            /* k8s_backend_note_cpu_limit warned already */
};

/* Index of a family in the [2] arrays above: 1 for "IPv6", else 0. */
#define K8S_FAM(f) ((f) && (f)[3] == '6')

/* The options every API client of the run is made with (main client, lease keeper). */
void k8s_backend_client_opts(const struct k8s_backend *b, struct kube_client_opts *ko);

/* One client Job, in two steps (backend_k8s.c), so that a sweep can start several at once:
 * start creates the Job for spec (copied; its pointers must outlive the run); finish waits for
 * its pod, reads the result, deletes the Job and frees the run; abandon only deletes and frees.
 * run_client is start + finish. */
struct k8s_client_run;
KP_MUST_CHECK int k8s_client_start(struct k8s_backend *b, const struct run_spec *spec,
                                   struct k8s_client_run **out, struct kp_err *err);
KP_MUST_CHECK int k8s_client_finish(struct k8s_backend *b, struct k8s_client_run *cr, json_t **doc,
                                    struct kp_err *err);
void k8s_client_abandon(struct k8s_backend *b, struct k8s_client_run *cr);
/* Records the run's readiness as kind "churn" instead of "client" (--pod-churn). */
void k8s_client_mark_churn(struct k8s_client_run *cr);
/* Records no readiness for the run: a sweep's Job started ahead is first watched when it is
 * collected, so its stages could not be timed (k8s_sweep.c). */
void k8s_client_skip_readiness(struct k8s_client_run *cr);
/* The run's Job name (its pods' kperf.io/job label). */
const char *k8s_client_job_name(const struct k8s_client_run *cr);
/* Stage times seen by a wait over several runs (k8s_churn.c): finish keeps them. */
void k8s_client_set_times(struct k8s_client_run *cr, const struct k8s_pod_times *t);

/* Agent pods (a ready server set: who = "server pods") that carry a CPU limit kperf did not
 * ask for: warns once per run, naming the limit and its source, and records it in the
 * report's metadata as agent_cpu_limit (a compare provenance setting). */
void k8s_backend_note_cpu_limit(struct k8s_backend *b, const json_t *pods, const char *who);

/* The kubernetes.io/hostname label of the node called name (name itself when unknown). */
const char *k8s_backend_node_hostname(const struct k8s_backend *b, const char *name);
/* The client node (name) of group g, whose target is t. */
const char *k8s_backend_client_node(const struct k8s_backend *b, const struct plan_group *g,
                                    const struct k8s_group_target *t);
/* The server address of target t in ip_family (NULL = the run's first), or NULL. Borrowed. */
const char *k8s_backend_server_addr(const struct k8s_backend *b, const struct k8s_group_target *t,
                                    const char *ip_family);

/* The lease keeper's k8s_lease_lost_fn (arg: the backend): the run's namespace or Lease was
 * deleted under it; stops the run at once (its waits are aborted). backend_k8s.c. */
void k8s_backend_lost(void *arg);

/* backend_ops.prepare (k8s_prepare.c). */
KP_MUST_CHECK int k8s_prepare(struct backend *base, struct plan *plan, struct kp_err *err);

#endif
