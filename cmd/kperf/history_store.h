/* SPDX-License-Identifier: Apache-2.0 */
/* history_store.h - where a run history is kept: a directory (controller/report/history.h) or,
 * as "configmap:NAME", ConfigMaps of the cluster (controller/k8s/k8s_history.h). The commands
 * that take a history (kperf run --history, kperf compare --baseline) go through these calls
 * and need not know which. */
#ifndef KPERF_CMD_HISTORY_STORE_H
#define KPERF_CMD_HISTORY_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/kp_err.h"
#include "controller/report/history.h"

struct report;

/* The cluster of a configmap: history (unused for a directory). NULLs: kubectl's defaults
 * ($KUBECONFIG, ~/.kube/config or in-cluster; the current context; its namespace). */
struct history_cluster {
    const char *kubeconfig;
    const char *context;
    const char *ns;
};

/* Whether loc is in the cluster (configmap:NAME), not a directory. */
bool history_store_in_cluster(const char *loc);

/* Checks loc's syntax (a configmap: NAME is a DNS label). Returns 0 or -1 with err. */
KP_MUST_CHECK int history_store_check(const char *loc, struct kp_err *err);

/* Adds rep to the history at loc, keeping the newest keep runs of its key; *where (caller
 * frees) says where it went. Returns 0 or -1 with err. */
KP_MUST_CHECK int history_store_add(const char *loc, const struct history_cluster *hc,
                                    const struct report *rep, const char *cluster, size_t keep,
                                    char **where, struct kp_err *err);

/* The runs of loc comparable with rep (history_comparable's rule), loaded as
 * history_load_runs does (the newest `want`, an unreadable one skipped or with strict an
 * error). runs.paths name each run: its file name in the history. Clean up with
 * history_store_runs_free. Returns 0 or -1 with err. */
struct history_store_runs {
    struct history_runs runs;
    char **names; /* what runs.paths point into */
    long n_names;
};
KP_MUST_CHECK int history_store_load(const char *loc, const struct history_cluster *hc,
                                     const struct report *rep, const char *cluster, size_t want,
                                     bool strict, struct history_store_runs *out,
                                     struct kp_err *err);
void history_store_runs_free(struct history_store_runs *r);

#endif
