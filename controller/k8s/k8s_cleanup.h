/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_cleanup.h - removes what kperf runs created, found by label, in the order that survives
 * policy engines: Jobs and DaemonSets first (background propagation), their pods awaited
 * until gone (watch), then NetworkPolicies (--netpol-readiness), Services, Secrets,
 * ServiceAccounts, the run's Lease, then the namespace
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
#include "controller/k8s/k8s_lease.h"
#include "controller/kube/kube.h"

extern const struct kube_resource K8S_RES_SERVICEACCOUNTS;
extern const struct kube_resource K8S_RES_NETWORKPOLICIES; /* networking.k8s.io/v1 */

enum k8s_lease_state {
    K8S_LEASE_NONE = 0, /* no (readable) Lease: an older kperf, or --keep */
    K8S_LEASE_FOUND,    /* found, not watched yet (k8s_cleanup_find) */
    K8S_LEASE_HELD,     /* renewed while watched: the run is in progress */
    K8S_LEASE_EXPIRED,  /* not renewed during a whole lease period of watching: its kperf died */
    K8S_LEASE_GONE,     /* deleted while watched: its kperf (or another cleanup) removes it */
};

/* One run's objects: namespace and run id, and whether the namespace itself is kperf's. */
struct k8s_leftover {
    char *ns;                   /* owned */
    char *run_id;               /* owned; "" when the objects carry no run id */
    int ns_owned;               /* the namespace is labelled managed-by=kperf: delete it too */
    enum k8s_lease_state lease; /* the run's Lease (k8s_lease.h) */
    char *lease_name;           /* owned; NULL without a Lease */
    char *renewed;              /* its spec.renewTime as last read (its holder's clock); owned */
    char *holder;               /* its spec.holderIdentity as last read; owned */
    struct k8s_lease_obs obs;   /* the watching (k8s_cleanup_observe) */
};

/* Finds the runs that left objects: kperf namespaces (cluster-wide) and kperf DaemonSets,
 * Jobs, Services, Secrets, Leases (each run's state from its Lease) in `ns` (NULL = all namespaces;
 * falls back to the client's default namespace when listing all is forbidden). run_id NULL = every
 * run. On 0, *out is a new array (caller frees with k8s_cleanup_leftovers_free) of *n entries. */
KP_MUST_CHECK int k8s_cleanup_find(struct kube_client *kc, const char *ns, const char *run_id,
                                   struct k8s_leftover **out, size_t *n, struct kp_err *err);
void k8s_cleanup_leftovers_free(struct k8s_leftover *l, size_t n);

/* The longest lease period among the runs whose Lease is K8S_LEASE_FOUND (what
 * k8s_cleanup_observe may take), 0 when none. */
uint64_t k8s_cleanup_observe_ms(const struct k8s_leftover *l, size_t n);

/* Watches the Lease of every run in K8S_LEASE_FOUND (reads it every half second) until each
 * is decided: K8S_LEASE_HELD at its first renewal, K8S_LEASE_EXPIRED after a whole lease
 * period without one, K8S_LEASE_GONE when deleted meanwhile. Time is this machine's monotonic
 * clock; the Leases' timestamps are never compared with it. Gives up after max_ms (0 = no
 * bound), leaving the runs not decided yet FOUND (not to be removed). Returns 0, or -1 with
 * err when a Lease cannot be read (its run stays FOUND too). */
KP_MUST_CHECK int k8s_cleanup_observe(struct kube_client *kc, struct k8s_leftover *l, size_t n,
                                      uint64_t max_ms, struct kp_err *err);

/* Deletes the Lease of l (if any) first: a kperf still running that run learns at once that
 * it is being removed (--force). Returns 0 or -1 with err. */
KP_MUST_CHECK int k8s_cleanup_drop_lease(struct kube_client *kc, const struct k8s_leftover *l,
                                         struct kp_err *err);

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
