/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_lease.h - the Lease (coordination.k8s.io/v1) one kperf run holds while it runs, so that a
 * run whose controller died (kill -9, a lost laptop) can be told from one in progress: the
 * controller renews spec.renewTime every third of spec.leaseDurationSeconds from a thread of its
 * own (with its own API client: the main one blocks in watches); a Lease whose renewTime plus
 * duration is in the past belongs to a run nobody is running any more, and `kperf run` and
 * `kperf cleanup` remove that run's objects (k8s_cleanup). The Lease is named
 * kperf-run-<run-id>, lives in the run's namespace and carries the run labels. The builder and
 * the expiry test are pure functions (unit-tested); the keeper does I/O. */
#ifndef KPERF_K8S_K8S_LEASE_H
#define KPERF_K8S_K8S_LEASE_H

#include <jansson.h>
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

/* Whether the Lease expired at wall-clock time now (seconds since the epoch): 1 expired (its
 * renewTime, or acquireTime, plus leaseDurationSeconds is before now), 0 still held, -1 not
 * readable (no duration or no time: not ours to judge). *age_s (may be NULL): seconds since it
 * was last renewed. */
int k8s_lease_expired(const json_t *lease, time_t now, long *age_s);

/* A held Lease and the thread renewing it. */
struct k8s_lease_keeper;

/* Creates the Lease through kc in opts->ns and starts renewing it every duration_s / 3 with a
 * client of its own made from ko. Returns 0 with *out, or -1 with err (nothing created or the
 * Lease deleted again). */
KP_MUST_CHECK int k8s_lease_hold(struct kube_client *kc, const struct kube_client_opts *ko,
                                 const struct k8s_objects_opts *opts, int duration_s,
                                 struct k8s_lease_keeper **out, struct kp_err *err);

/* Stops renewing (joins the thread). With kc, also deletes the Lease (a run that ends
 * normally, or one kept on purpose with --keep). Frees k; NULL is a no-op. */
void k8s_lease_release(struct k8s_lease_keeper *k, struct kube_client *kc);

#endif
