/* SPDX-License-Identifier: Apache-2.0 */
/* runner.h - executes a plan on a backend, one measurement at a time, into a report.
 * Owns the order of things (prepare, describe, each group's client runs, cleanup), the
 * --samples auto loop, progress, and SIGINT/SIGTERM handling: a signal interrupts the current
 * measurement through the backend, the run stops, cleanup still runs, and what was measured so
 * far stays in the report. A second signal during cleanup only warns; a third quits at once
 * (the next run removes what was left). Knows nothing of how a backend places its agents. */
#ifndef KPERF_CONTROLLER_RUNNER_H
#define KPERF_CONTROLLER_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/kp_err.h"

struct backend;
struct plan;
struct report;
struct run_options;

struct runner_opts {
    const struct run_options *ro; /* borrowed: measurement parameters and the command line */
    FILE *progress_out;           /* borrowed; usually stderr */
    bool tty;                     /* progress_out is a terminal */
    bool quiet;                   /* no progress at all */
    bool handle_signals;          /* install SIGINT/SIGTERM handlers for the run */
};

struct runner_outcome {
    int signal;           /* the SIGINT/SIGTERM that stopped the run, or 0 */
    size_t n_client_runs; /* client runs attempted */
    size_t n_failed;      /* client runs that failed or reported test errors */
    /* of those, or prepare: failed because the cluster could not start a pod
     * (backend_ops.failure_cause); cause: the first one's ("ip-exhaustion", ...) */
    size_t n_cluster_failed;
    char cause[32];
    bool cleanup_failed; /* the backend could not remove everything */
    /* client runs with a stream test whose client was held to a CPU quota (the result's
     * placement.client_cpu_quota_millicores: a pod's limits.cpu, a cgroup's cpu.max), and the
     * smallest such quota: those rates measure the quota as much as the path */
    size_t n_cpu_limited;
    unsigned min_cpu_quota_millis;
    struct kp_err cleanup_err;
    /* set when the backend lost what it measures in (backend_ops.lost) and the run stopped
     * early: why (the run fails; what was measured before is still reported) */
    struct kp_err stopped;
};

/* Runs plan on b and fills rep (metadata, rows, skips, errors; report_finish is called).
 * Returns 0 when the run went through (even with failed measurements or an interrupt: see
 * out), or -1 with err when nothing could be measured (prepare failed). The backend is always
 * cleaned up before returning. */
KP_MUST_CHECK int runner_run(struct backend *b, struct plan *plan, struct report *rep,
                             const struct runner_opts *o, struct runner_outcome *out,
                             struct kp_err *err);

/* Formats "2026-11-30T09:00:00Z" for now (UTC) into buf (>= 21 bytes). */
void runner_utc_now(char *buf, size_t len);

#endif
