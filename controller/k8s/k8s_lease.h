/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_lease.h - the Lease (coordination.k8s.io/v1) one kperf run holds while it runs, so that a
 * run whose controller died (kill -9, a lost laptop) can be told from one in progress: the
 * controller renews spec.renewTime every third of spec.leaseDurationSeconds from a thread of its
 * own (with its own API client: the main one blocks in watches); a Lease that was not renewed while
 * watched for a full lease period belongs to a run nobody is running any more, and `kperf run` and
 * `kperf cleanup` remove that run's objects (k8s_cleanup). The thread also notices when the Lease
 * or the namespace is deleted under the run and tells the run at once (on_lost). The Lease is named
 * kperf-run-<run-id>, lives in the run's namespace and carries the run labels. The builder and
 * the observer (k8s_lease_obs) are pure functions (unit-tested); the keeper does I/O. */
#ifndef KPERF_K8S_K8S_LEASE_H
#define KPERF_K8S_K8S_LEASE_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "base/kp_err.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/kube/kube.h"

extern const struct kube_resource K8S_RES_LEASES; /* coordination.k8s.io/v1 leases */

#define K8S_LEASE_DURATION_S 30 /* default; renewed every third */

/* "kperf-run-<run-id>". Caller frees. */
char *k8s_lease_name(const char *run_id);

/* "2026-12-01T19:30:00.123456Z" (a MicroTime) for t, into buf (>= 28 bytes). */
void k8s_lease_microtime(const struct timespec *t, char *buf, size_t len);

/* The run's Lease: holder `holder` (e.g. "kperf@host/pid"), acquired and renewed at now.
 * New reference. */
json_t *k8s_lease_object(const struct k8s_objects_opts *opts, const char *holder, int duration_s,
                         const struct timespec *now);

/* Telling a live run from a dead one by watching its Lease, as client-go's leader election
 * does: a renewal is a change of the Lease's record (holder, renewTime, transitions) seen
 * here; a Lease has expired only once it stayed unchanged for a whole leaseDurationSeconds
 * measured on this machine's monotonic clock. Its timestamps are never compared with this
 * machine's time: they come from another clock (a controller on a skewed laptop). */
enum k8s_lease_seen {
    K8S_LEASE_WATCHING = 0, /* unchanged so far, for less than a lease period */
    K8S_LEASE_RENEWED,      /* changed while watched: a kperf is renewing it */
    K8S_LEASE_STILL,        /* unchanged for a whole lease period of watching: expired */
    K8S_LEASE_DELETED,      /* deleted while watched */
};

struct k8s_lease_obs {
    char *record;       /* holder, renewTime, transitions as first seen; owned */
    uint64_t since_ms;  /* when the watching started (monotonic ms) */
    uint64_t period_ms; /* its leaseDurationSeconds */
    enum k8s_lease_seen seen;
};

/* Starts watching lease (borrowed) at now_ms. Returns 0, or -1 when it has no readable
 * leaseDurationSeconds (then not ours to judge; nothing to clean up). */
int k8s_lease_obs_start(struct k8s_lease_obs *o, const json_t *lease, uint64_t now_ms);

/* What a later read at now_ms shows (lease NULL: not found). Once decided (not WATCHING),
 * the state stays. */
enum k8s_lease_seen k8s_lease_obs_update(struct k8s_lease_obs *o, const json_t *lease,
                                         uint64_t now_ms);

void k8s_lease_obs_cleanup(struct k8s_lease_obs *o);

/* A held Lease and the thread renewing it. */
struct k8s_lease_keeper;

/* Called once, from the keeper's thread, when the run lost its Lease or its namespace
 * (deleted by someone else: kperf cleanup --force, kubectl). Must only set flags and call
 * kube_client_abort(); the reason is k8s_lease_lost(). */
typedef void k8s_lease_lost_fn(void *arg);

struct k8s_lease_hold_opts {
    int duration_s;             /* leaseDurationSeconds; renewed every third */
    k8s_lease_lost_fn *on_lost; /* may be NULL */
    void *arg;
};

/* Creates the Lease through kc in opts->ns and starts renewing it every duration_s / 3 with a
 * client of its own made from ko. Between renewals the thread watches the Lease (or, without
 * the right to watch, reads it every second): when it is deleted, or a renewal finds it gone,
 * it calls ho->on_lost. Returns 0 with *out, or -1 with err (nothing created or the Lease
 * deleted again). */
KP_MUST_CHECK int k8s_lease_hold(struct kube_client *kc, const struct kube_client_opts *ko,
                                 const struct k8s_objects_opts *opts,
                                 const struct k8s_lease_hold_opts *ho,
                                 struct k8s_lease_keeper **out, struct kp_err *err);

/* Starts renewing stored (a Lease as the API server returned it, held by us; takes ownership)
 * as k8s_lease_hold does, for a Lease made elsewhere (the cluster lock, k8s_lock.h). On a
 * conflict the Lease is read again; held by another holder by then, it is lost (on_lost).
 * Returns 0 with *out, or -1 with err (stored released). */
KP_MUST_CHECK int k8s_lease_keep(const struct kube_client_opts *ko, json_t *stored,
                                 const struct k8s_lease_hold_opts *ho,
                                 struct k8s_lease_keeper **out, struct kp_err *err);

/* Why the run lost its Lease ("namespace NS was deleted (by kperf cleanup --force?)"), or NULL
 * while it holds it. Borrowed until k8s_lease_release. k NULL: NULL. */
const char *k8s_lease_lost(struct k8s_lease_keeper *k);

/* Stops renewing (joins the thread). With kc, also deletes the Lease (a run that ends
 * normally, or one kept on purpose with --keep). Frees k; NULL is a no-op. */
void k8s_lease_release(struct k8s_lease_keeper *k, struct kube_client *kc);

#endif
