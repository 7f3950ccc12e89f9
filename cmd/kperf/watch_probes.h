/* SPDX-License-Identifier: Apache-2.0 */
/* watch_probes.h - the probes of `kperf watch`: one `kperf-agent probe` per path of the plan
 * (every scenario and placement that is not skipped, forward direction only), started through
 * the probe operations of the backend the watch runs on (backend.h: processes in the local
 * cluster's namespaces, or Jobs on a cluster). Either way each probe's stderr reaches a local
 * log file (status lines), which cmd_watch.c reads for the live status; the backend gives its
 * kperf.probe/v1 document. Owns the probes; names no backend. */
#ifndef KPERF_CMD_WATCH_PROBES_H
#define KPERF_CMD_WATCH_PROBES_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"
#include "controller/plan.h"

#define WATCH_MAX_PATHS 16

struct watch_path {
    const struct plan_group *g;
    char *name;                  /* "pod-to-pod/same-node" */
    const char *log;             /* its stderr (the backend's file; NULL: not started) */
    struct backend_probe *probe; /* the backend's; NULL: not started */
    bool ready;                  /* printed its "probing" line */
    bool ended;                  /* seen ended (warned once) */
};

struct watch_probes {
    struct backend *b; /* borrowed */
    struct watch_path paths[WATCH_MAX_PATHS];
    size_t n;
};

struct watch_probe_opts {
    unsigned rate;                 /* probes per second per path */
    uint64_t timeout_ms;           /* to start every probe */
    uint64_t deadline_s;           /* a cluster's Jobs' activeDeadlineSeconds */
    volatile sig_atomic_t *signal; /* non-zero: stop waiting ("interrupted") */
};

/* Starts a probe on every path of plan (after prepare) and waits until each is probing.
 * Returns 0, or -1 with err (no path, a probe that would not start, a backend that cannot
 * watch). wp->b must be set; whatever started is stopped by watch_probes_stop. */
KP_MUST_CHECK int watch_probes_start(struct watch_probes *wp, const struct plan *plan,
                                     const struct watch_probe_opts *o, struct kp_err *err);

/* false once path i's probe ended (logs a warning the first time). */
bool watch_probes_alive(struct watch_probes *wp, size_t i);

/* Stops every probe at once (the backend's probe_stop) and waits for their documents. */
void watch_probes_stop(struct watch_probes *wp);

/* The kperf.probe/v1 document of path p (new reference), or NULL with why filled in. */
json_t *watch_probes_doc(const struct watch_probes *wp, const struct watch_path *p, char *why,
                         size_t len);

/* On a cluster: the name of path p's client node, or (server) its server's node (NULL for the
 * external server); NULL when the backend has no nodes to name (local). Borrowed. */
const char *watch_probes_node(const struct watch_probes *wp, const struct watch_path *p,
                              bool server);

/* NULL-terminated "NAME=value" entries for the command run beside the watch (caller frees each
 * and the array). */
char **watch_probes_env(struct watch_probes *wp);

/* Frees the probes (the backend removes their files). */
void watch_probes_free(struct watch_probes *wp);

#endif
