/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_lock.h - the cluster lock: one kperf run at a time per cluster. A Lease
 * (coordination.k8s.io/v1) named kperf-lock in namespace kperf (the shipped manifests'; "default"
 * when the cluster has none), held by "user@host run <run-id>" from before the run deploys
 * anything until its cleanup ends, and renewed by the run's lease keeper (k8s_lease.h). One lock
 * per cluster rather than per node set: a sweep takes every node, node A's host-network port and
 * the figures of two runs on shared links interfere whatever their pairs, and a run's nodes are
 * chosen after it must hold the lock. Who holds it is judged as client-go's leader election
 * does (k8s_lease_obs: a change seen here, or none for a whole leaseDurationSeconds on this
 * machine's monotonic clock); its timestamps are shown, never compared with this clock. The
 * judge is a pure function (unit-tested with a fake clock); k8s_lock_acquire does the I/O. */
#ifndef KPERF_K8S_K8S_LOCK_H
#define KPERF_K8S_K8S_LOCK_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "base/kp_err.h"
#include "controller/k8s/k8s_lease.h"
#include "controller/kube/kube.h"

#define K8S_LOCK_NAME        "kperf-lock"
#define K8S_LOCK_NS          "kperf"   /* where the shipped manifests put runs */
#define K8S_LOCK_NS_FALLBACK "default" /* a cluster without namespace kperf */

enum k8s_lock_view {
    K8S_LOCK_FREE = 0, /* absent, released (no holderIdentity) or deleted meanwhile: take it */
    K8S_LOCK_WATCHING, /* held, unchanged for less than a lease period of watching */
    K8S_LOCK_HELD,     /* renewed while watched: a live run holds it */
    K8S_LOCK_EXPIRED,  /* unchanged for a whole lease period of watching: its run died */
};

/* Watching one lock. Zero it before the first k8s_lock_judge; k8s_lock_watch_cleanup after. */
struct k8s_lock_watch {
    struct k8s_lease_obs obs;
    int started;
};

/* What a read of the lock at now_ms (this machine's monotonic ms) shows; lock NULL = absent.
 * HELD restarts the watching from that read, so a holder that dies later is seen EXPIRED one
 * lease period after its last renewal seen here. */
enum k8s_lock_view k8s_lock_judge(struct k8s_lock_watch *w, const json_t *lock, uint64_t now_ms);
void k8s_lock_watch_cleanup(struct k8s_lock_watch *w);

/* The lock held by holder for run_id in ns at now (wall time, only written), taking over old
 * (borrowed; NULL = a new lock): old's resourceVersion kept (a PUT fails if it changed
 * meanwhile) and leaseTransitions counted up. New reference. */
json_t *k8s_lock_object(const char *ns, const json_t *old, const char *holder, const char *run_id,
                        int duration_s, const struct timespec *now);

/* "the cluster lock kperf/kperf-lock is held by H since T" for the lock (borrowed), into buf. */
void k8s_lock_describe(const json_t *lock, char *buf, size_t len);

struct k8s_lock_opts {
    const char *holder;          /* "user@host run <run-id>" (k8s_lock_holder) */
    const char *run_id;          /* the run's id: label kperf.io/run-id of the lock */
    int duration_s;              /* leaseDurationSeconds (the run's --lease-duration) */
    uint64_t wait_ms;            /* --wait-for-lock; 0 = refuse once a holder is live */
    volatile sig_atomic_t *stop; /* set (by a signal): give up at once; may be NULL */
};

/* "user@host run <run-id>" for this process, into buf. */
void k8s_lock_holder(const char *run_id, char *buf, size_t len);

/* Takes the cluster lock through kc: creates it, takes a released or expired one, or (held by
 * a live run) refuses, or waits up to o->wait_ms saying so every 15 s. Returns 0 with *stored
 * (the Lease as stored, new reference: hand it to k8s_lease_keep), 1 when it may not be taken
 * here (403: RBAC without leases in that namespace; err says why, *stored NULL), -1 with err
 * (held by another run: who and since when; interrupted; an API error). */
KP_MUST_CHECK int k8s_lock_acquire(struct kube_client *kc, const struct k8s_lock_opts *o,
                                   json_t **stored, struct kp_err *err);

/* kperf cleanup: deletes the lock when the run holding it is run_id (removed as dead). Returns 0
 * (also when there is no such lock or no right to read it), -1 with err. */
KP_MUST_CHECK int k8s_lock_forget(struct kube_client *kc, const char *run_id, struct kp_err *err);

#endif
