/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_cleanup.h - removes what kperf runs created, found by label, in the order that survives
 * policy engines: Jobs and DaemonSets first (background propagation), their pods awaited
 * until gone (watch), then Services, Secrets, ServiceAccounts, the run's Lease, then the namespace
 * when kperf created it (a refused namespace delete, e.g. a Gatekeeper rule against non-empty
 * namespaces, is retried once the workloads are gone), and the namespace awaited until gone.
 * Used by backend_k8s at the end of a run, by --cleanup-leftovers and by `kperf cleanup`.
 * Knows nothing of plans or measurements. */
#ifndef KPERF_K8S_K8S_CLEANUP_H
#define KPERF_K8S_K8S_CLEANUP_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "base/kp_err.h"
#include "controller/kube/kube.h"

extern const struct kube_resource K8S_RES_SERVICEACCOUNTS;

enum k8s_lease_state {
    K8S_LEASE_NONE = 0, /* no (readable) Lease: an older kperf, or --keep */
    K8S_LEASE_HELD,     /* renewed within its duration: the run is in progress */
    K8S_LEASE_EXPIRED,  /* not renewed: its controller died; safe to remove */
};

/* One run's objects: namespace and run id, and whether the namespace itself is kperf's. */
struct k8s_leftover {
    char *ns;                   /* owned */
    char *run_id;               /* owned; "" when the objects carry no run id */
    int ns_owned;               /* the namespace is labelled managed-by=kperf: delete it too */
    enum k8s_lease_state lease; /* the run's Lease (k8s_lease.h) */
    long lease_age_s;           /* seconds since it was last renewed (HELD, EXPIRED) */
};

/* Finds the runs that left objects: kperf namespaces (cluster-wide) and kperf DaemonSets,
 * Jobs, Services, Secrets, Leases (each run's state from its Lease) in `ns` (NULL = all namespaces;
 * falls back to the client's default namespace when listing all is forbidden). run_id NULL = every
 * run. On 0, *out is a new array (caller frees with k8s_cleanup_leftovers_free) of *n entries. */
KP_MUST_CHECK int k8s_cleanup_find(struct kube_client *kc, const char *ns, const char *run_id,
                                   struct k8s_leftover **out, size_t *n, struct kp_err *err);
void k8s_cleanup_leftovers_free(struct k8s_leftover *l, size_t n);

/* Removes the objects of run_id (NULL = every kperf object) in ns, then ns itself when
 * delete_ns. Waits (watches) at most timeout_ms for pods and the namespace to be gone.
 * *n_deleted (may be NULL) counts delete calls that removed something. Returns 0 when nothing
 * of ours is left, -1 with what is left and why. */
KP_MUST_CHECK int k8s_cleanup_run(struct kube_client *kc, const char *ns, const char *run_id,
                                  int delete_ns, uint64_t timeout_ms, unsigned *n_deleted,
                                  struct kp_err *err);

/* k8s_cleanup_run, with the pods on the nodes named in force_nodes (array of strings, borrowed;
 * NULL = none) deleted at once (grace period 0): nodes that went NotReady, whose kubelet will
 * never confirm a graceful deletion (their pods would stay Terminating). */
KP_MUST_CHECK int k8s_cleanup_run_forcing(struct kube_client *kc, const char *ns,
                                          const char *run_id, int delete_ns, uint64_t timeout_ms,
                                          unsigned *n_deleted, const json_t *force_nodes,
                                          struct kp_err *err);

#endif
