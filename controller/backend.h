/* SPDX-License-Identifier: Apache-2.0 */
/* backend.h - the one interface between the runner and a place to measure: `local` (network
 * namespaces on this machine, backend_local.c) and `k8s` (a cluster, backend_k8s.c).
 * A backend places servers, runs clients and cleans up; the runner decides what runs when.
 *
 * Life cycle, driven by runner.c:
 *   b = backend_<kind>_new(opts, err)       cheap; nothing created yet
 *   ops->prepare(b, plan, err)              create servers etc.; mark groups it cannot run
 *                                           with plan_skip(plan, ..., "reason"); -1 = fatal
 *   ops->describe(b)                        metadata for the report (after prepare)
 *   ops->run_client(b, spec, &doc, err)     once per spec, one at a time, in plan order
 *   ops->cleanup(b, err)                    always, also after errors and interrupts
 *   ops->destroy(b)                         frees memory only
 * interrupt() may come at any moment from a signal handler (SIGINT/SIGTERM). */
#ifndef KPERF_CONTROLLER_BACKEND_H
#define KPERF_CONTROLLER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "controller/plan.h"

struct kp_err;
struct backend;

/* One client run: the tests of one plan group (or a subset), each `samples` times. All
 * pointers are borrowed for the duration of the call. */
struct run_spec {
    const struct plan_group *group; /* scenario, placement, node, reverse */
    const enum test_kind *tests;    /* in run order */
    size_t n_tests;
    int samples;             /* >= 1: the agent's --samples */
    uint64_t duration_ms;    /* per test and sample */
    uint64_t omit_ms;        /* 0 = none */
    uint64_t interval_ms;    /* 0 = agent default */
    int streams;             /* TCP_STREAM_MULTI */
    uint64_t msg_size_bytes; /* 0 = agent default */
    uint64_t udp_rate_bps;   /* 0 = agent default */
    uint64_t timeout_ms;     /* the whole client run must end within this (start-up, tests) */
};

struct run_options;

/* Fills spec for group g from the run's flags (tests borrowed; timeout_ms left 0 for the
 * caller, which knows how long the client may take). */
void run_spec_init(struct run_spec *spec, const struct run_options *ro, const struct plan_group *g,
                   const enum test_kind *tests, size_t n_tests, int samples);

struct backend_ops {
    const char *name; /* "local", "k8s": the report's metadata.backend */
    /* true: run a whole group with one client (fewer pod starts); false: the runner gives
     * one test per run_client (finer progress, prompt interrupts). */
    bool batches_tests;
    /* Creates what the measurements need (topology, namespace, servers) and marks groups it
     * cannot serve with plan_skip(plan, s, pl, reason). Returns 0, or -1 with err when nothing
     * can run at all (not root, no cluster access). May be interrupted (-1, "interrupted"). */
    int (*prepare)(struct backend *b, struct plan *plan, struct kp_err *err);
    /* Runs one client for spec. On 0, *doc is the agent's kperf.result/v1 document (new
     * reference, caller releases); a document whose errors[] is not empty still returns 0.
     * Returns -1 with err when no document could be obtained (client never started, timed
     * out, crashed without output, interrupted). */
    int (*run_client)(struct backend *b, const struct run_spec *spec, json_t **doc,
                      struct kp_err *err);
    /* Facts for the report metadata (new reference, caller releases; never NULL): an object
     * whose members the runner copies into report_metadata() (report.h names the keys):
     * "nodes": [{"name", "role", "kernel", "os_image", "container_runtime", "instance_type",
     * "zone", "mtu"}], "kubernetes_version", "cni": {"name", "version", "settings": {}},
     * "kube_proxy_mode", "mtu": {"pod": N, "host": N}, "external_server", "run_id". */
    json_t *(*describe)(struct backend *b);
    /* Optional (NULL: the backend cannot measure it). Pod network readiness of the pods run so
     * far: an array of k8s_readiness_record objects {pod, node, kind, created_unix_s,
     * scheduling_s, network_s, first_packet_s, total_s} (new reference) or NULL for none.
     * The runner summarises it per node into metadata.readiness (report/readiness.h). */
    json_t *(*readiness)(struct backend *b);
    /* Asks the running prepare() / run_client() to stop as soon as possible and return -1.
     * Called from a signal handler: must be async-signal-safe (set a volatile sig_atomic_t,
     * write() to a pipe, kill() a child). Idempotent. */
    void (*interrupt)(struct backend *b);
    /* Optional. Why the backend can no longer measure anything (the run's namespace or Lease
     * was deleted under it: "namespace NS was deleted ..."), or NULL. Once non-NULL, the
     * backend has already made its waits return (-1) and the runner stops at once: the rest
     * is listed as not run, the run fails with this reason. Borrowed until destroy(). */
    const char *(*lost)(struct backend *b);
    /* Removes everything the backend created (unless told to keep it). Idempotent, safe
     * after a failed or interrupted prepare() and when nothing was created. Returns -1 with
     * err when something could not be removed (the runner reports it; the run still fails). */
    int (*cleanup)(struct backend *b, struct kp_err *err);
    /* Frees the backend (after cleanup). NULL is a no-op. */
    void (*destroy)(struct backend *b);
};

/* Every backend struct starts with this, so the runner can reach the ops. */
struct backend {
    const struct backend_ops *ops;
};

#endif
