/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_client.h - the client Jobs of the Kubernetes backend: the Job of a run_spec (the agent's
 * command line, its node, its deadline), and its life in two steps so that several can run at
 * once: start (create the Job), then finish (wait for its pod, read the agent's document from
 * its log, delete the Job) or abandon (delete it). Also where a group's client runs and what it
 * talks to (node A's servers, the Service, the external server).
 * Sits below the sweep (k8s_sweep.c), the pod churn (k8s_churn.c), the watch's readiness pods
 * and backend_k8s.c: they call it and it calls none of them back; a caller that measures
 * against another server (a sweep pair's) passes that address to start. */
#ifndef KPERF_K8S_K8S_CLIENT_H
#define KPERF_K8S_K8S_CLIENT_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"
#include "controller/k8s/k8s_deploy.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_wait.h"

struct k8s_backend;
struct k8s_client_run;

/* The planned measurement time of spec in milliseconds (tests x samples x (duration + omit)). */
uint64_t k8s_client_spec_ms(const struct run_spec *spec);

/* The client Job for spec, run step `step` of the run (named by k8s_objects_job_name): runs
 * on the node whose hostname label is client_host, talks to server (an IP or DNS name) on
 * port. activeDeadlineSeconds covers the planned measurement time plus --timeout. *name_out
 * (may be NULL): the Job name (caller frees). New reference. Pure (kperf manifests prints it). */
json_t *k8s_client_make_job(const struct k8s_deploy *d, const struct run_spec *spec, unsigned step,
                            const char *client_host, const char *server, int port, char **name_out);

/* The kubernetes.io/hostname label of the node called name (name itself when unknown). */
const char *k8s_client_node_hostname(const struct k8s_backend *b, const char *name);
/* The client node (name) of group g, whose target is t. */
const char *k8s_client_node(const struct k8s_backend *b, const struct plan_group *g,
                            const struct k8s_group_target *t);
/* The server address of target t in ip_family (NULL = the run's first), or NULL. Borrowed. */
const char *k8s_client_server_addr(const struct k8s_backend *b, const struct k8s_group_target *t,
                                   const char *ip_family);

/* Creates the client Job for spec (copied; its pointers must outlive the run) against server
 * (borrowed for the run's life; NULL: the group's usual one, k8s_client_server_addr). Returns
 * 0 with *out (end it with finish or abandon), or -1 with err (interrupted, no address, the
 * API server refused the Job: then nothing is left behind). */
KP_MUST_CHECK int k8s_client_start(struct k8s_backend *b, const struct run_spec *spec,
                                   const char *server, struct k8s_client_run **out,
                                   struct kp_err *err);
/* Waits for the run's pod to finish, reads its log and checks it ran where planned; on 0 *doc
 * is the agent's document (new reference; "no answer" errors rewritten as "blocked: ..."),
 * its readiness recorded in b->readiness. Always deletes the Job (unless --keep) and frees cr.
 * Returns 0, or -1 with err. */
KP_MUST_CHECK int k8s_client_finish(struct k8s_backend *b, struct k8s_client_run *cr, json_t **doc,
                                    struct kp_err *err);
/* Deletes the Job (unless --keep) and frees cr. NULL is a no-op. */
void k8s_client_abandon(struct k8s_backend *b, struct k8s_client_run *cr);
/* Records the run's readiness as kind "churn" instead of "client" (--pod-churn). */
void k8s_client_mark_churn(struct k8s_client_run *cr);
/* Records no readiness for the run: a sweep's Job started ahead is first watched when it is
 * collected, so its stages could not be timed (k8s_sweep.c). */
void k8s_client_skip_readiness(struct k8s_client_run *cr);
/* The run's Job name (its pods' kperf.io/job label). Borrowed, valid until finish/abandon. */
const char *k8s_client_job_name(const struct k8s_client_run *cr);
/* Stage times seen by a wait over several runs (k8s_churn.c): finish keeps them. */
void k8s_client_set_times(struct k8s_client_run *cr, const struct k8s_pod_times *t);

#endif
