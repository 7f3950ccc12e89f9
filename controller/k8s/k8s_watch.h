/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_watch.h - the probe clients of `kperf watch` on a cluster (docs/watch.md): for one plan
 * group, a Job pinned to the group's client node (the same restricted pod as a `kperf run`
 * client) running `kperf-agent probe` against the group's server, with its log (stderr status
 * lines, then the kperf.probe/v1 document on stdout) streamed into a local file by a thread
 * with its own API client, so the caller reads it like a local probe's log. Stopping deletes
 * the Job (orphaning its pod) and then the pod, whose SIGTERM makes the probe print its
 * document; the stream ends when the container exits. Owns the Jobs, the threads and the log
 * files; leaves servers, the Lease and cleanup to the backend (backend_k8s.h), whose ops table
 * is the only user of this header (cmd/kperf/watch_probes.c goes through the ops). */
#ifndef KPERF_K8S_K8S_WATCH_H
#define KPERF_K8S_K8S_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"

/* The probe operations of the Kubernetes backend's ops table (backend.h says what each does):
 * b must be a Kubernetes backend, after prepare. The probe's log is
 * /tmp/kperf-watch-XXXXXX/probe-<index>.log (the directory made at the first probe and removed
 * by the backend's destroy, each log by probe_free); the probe runs with --connect-timeout 3s
 * added to o->args. start: creates the Job (activeDeadlineSeconds = o->deadline_s), waits up
 * to --timeout until its pod is Ready (the diagnosis names the pod, node and reason), and
 * starts streaming its log. */
KP_MUST_CHECK int k8s_watch_probe_start(struct backend *b, const struct plan_group *g,
                                        const struct backend_probe_opts *o,
                                        struct backend_probe **out, struct kp_err *err);
/* The same in two steps, so that several start at once: creates the Job on node `node` against
 * server "HOST:PORT" (a pod-network agent server of the run, with its token), in the run's
 * namespace: `probe --server S --token-file F o->args...` only, the Job and its pod labelled
 * kperf.io/scenario=`scenario` (also its name's prefix; k8s_netready.c: its policies select
 * the probers by it); *out is set even on error (the caller stops and frees it). Then
 * started: waits up to --timeout until its pod is Ready and starts streaming its log. */
KP_MUST_CHECK int k8s_watch_probe_create_at(struct backend *b, const char *node, const char *server,
                                            const char *scenario,
                                            const struct backend_probe_opts *o,
                                            struct backend_probe **out, struct kp_err *err);
KP_MUST_CHECK int k8s_watch_probe_started(struct backend *b, struct backend_probe *p,
                                          struct kp_err *err);
const char *k8s_watch_probe_log(const struct backend_probe *p);
/* true while the probe's container runs (its log stream is open). */
bool k8s_watch_probe_running(struct backend_probe *p);
/* Deletes its Job (orphaning the pod, so nothing replaces it) and then the pod (gracefully:
 * SIGTERM, on which the probe prints its document). Errors are logged; the backend's cleanup
 * retries. Idempotent. */
void k8s_watch_probe_stop(struct backend *b, struct backend_probe *p);
/* Waits up to 20 s for the probe's log stream to end (its container exited); -1 with err
 * when it did not (the log file holds what came so far). */
KP_MUST_CHECK int k8s_watch_probe_wait(struct backend_probe *p, struct kp_err *err);
/* The document at the end of the log (its last 64 MiB), without the agent's stderr lines. */
json_t *k8s_watch_probe_doc(const struct backend_probe *p, json_error_t *jerr);
/* "probe pod NAME on node N", then why its log may be incomplete when known (the stream
 * failed, or was still open when wait gave up), into buf. */
void k8s_watch_probe_describe(struct backend_probe *p, char *buf, size_t len);
/* The name of the probe's client node, or (server) of its server's node: NULL for the
 * external server. */
const char *k8s_watch_probe_node(const struct backend_probe *p, bool server);
/* Ends the log thread (aborting its stream), removes the log file and frees p. NULL is a
 * no-op. Deletes nothing in the cluster: the backend's cleanup removes every object of the
 * run. */
void k8s_watch_probe_free(struct backend *b, struct backend_probe *p);

/* NULL-terminated "NAME=value" entries for a command run beside the watch: KPERF_RUN_ID,
 * KPERF_NAMESPACE (the run's namespace). Caller frees each entry and the array. */
char **k8s_watch_env(struct backend *b);

#endif
