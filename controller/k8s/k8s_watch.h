/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_watch.h - the probe clients of `kperf watch` on a cluster (docs/watch.md): for one plan
 * group, a Job pinned to the group's client node (the same restricted pod as a `kperf run`
 * client) running `kperf-agent probe` against the group's server, with its log (stderr status
 * lines, then the kperf.probe/v1 document on stdout) streamed into a local file by a thread
 * with its own API client, so the caller reads it like a local probe's log. Stopping deletes
 * the Job (orphaning its pod) and then the pod, whose SIGTERM makes the probe print its
 * document; the stream ends when the container exits. Owns the Jobs, the threads and the log
 * files' contents; leaves servers, the Lease and cleanup to the backend (backend_k8s.h). */
#ifndef KPERF_K8S_K8S_WATCH_H
#define KPERF_K8S_K8S_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/kp_err.h"
#include "controller/backend.h"

struct k8s_probe;

struct k8s_probe_opts {
    const char *const *args; /* after `probe --server HOST:PORT [--token-file F]`; borrowed */
    const char *log_path;    /* created (truncated) and written by the log thread */
    uint64_t deadline_s;     /* the Job's activeDeadlineSeconds (> 0): its pod is then stopped */
};

/* After prepare (b must be a Kubernetes backend): creates the probe Job of group g, waits
 * (up to --timeout) until its pod is Ready, and starts streaming its log. Returns 0 with *out
 * (free with k8s_watch_probe_free), or -1 with err (Job refused, pod not starting: the
 * diagnosis names the pod, node and reason). */
KP_MUST_CHECK int k8s_watch_probe_start(struct backend *b, const struct plan_group *g,
                                        const struct k8s_probe_opts *o, struct k8s_probe **out,
                                        struct kp_err *err);

/* true while the probe's container runs (its log stream is open). */
bool k8s_watch_probe_running(struct k8s_probe *p);

/* Stops the probe: deletes its Job (orphaning the pod, so nothing replaces it) and then the pod
 * (gracefully: SIGTERM, on which the probe prints its document). Errors are logged; the
 * backend's cleanup retries. Idempotent. */
void k8s_watch_probe_signal(struct backend *b, struct k8s_probe *p);

/* Waits up to timeout_ms for the probe's log stream to end (its container exited). Returns 0,
 * or -1 with err when it did not end in time (the log file holds what came so far). */
KP_MUST_CHECK int k8s_watch_probe_wait(struct k8s_probe *p, uint64_t timeout_ms,
                                       struct kp_err *err);

/* For an error about the probe's log (no document in it): "probe pod NAME on node N", then
 * why its log may be incomplete when known (the stream failed, or was still open when
 * k8s_watch_probe_wait gave up), into buf. */
void k8s_watch_probe_describe(struct k8s_probe *p, char *buf, size_t len);

/* The name of the probe's client node, or (server) of its server's node: NULL for the
 * external server. Borrowed, valid until free. */
const char *k8s_watch_probe_node(const struct k8s_probe *p, bool server);

/* Ends the log thread (aborting its stream) and frees p. NULL is a no-op. Deletes nothing:
 * the backend's cleanup removes every object of the run. */
void k8s_watch_probe_free(struct k8s_probe *p);

/* NULL-terminated "NAME=value" entries for a command run beside the watch: KPERF_RUN_ID,
 * KPERF_NAMESPACE (the run's namespace). Caller frees each entry and the array. */
char **k8s_watch_env(struct backend *b);

#endif
