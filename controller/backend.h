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
 * interrupt() may come at any moment from a signal handler (SIGINT/SIGTERM).
 * `kperf watch` (cmd/kperf/cmd_watch.c) drives the same life cycle, but instead of run_client
 * it starts a probe per path (probe_*, between prepare and cleanup) and, with
 * --readiness-every, readiness pods (ready_*). cmd/ names a concrete backend only where it
 * picks one (cmd/kperf/backend_pick.c); everything else goes through these ops. */
#ifndef KPERF_CONTROLLER_BACKEND_H
#define KPERF_CONTROLLER_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "controller/plan.h"

struct progress; /* controller/progress.h */

struct kp_err;
struct backend;
struct backend_probe; /* one probe of `kperf watch`: the backend's own (opaque) */
struct backend_ready; /* the readiness pods of `kperf watch --readiness-every`: the backend's */

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
    bool no_counters;        /* the agent's --no-counters */
    unsigned profile_tests;  /* the agent's --profile: mask of 1u << enum test_kind */
    int streams;             /* TCP_STREAM_MULTI */
    int parallel;            /* TCP_CRR concurrent clients (the capacity ramp); 0 = not given */
    uint64_t msg_size_bytes; /* 0 = agent default */
    uint64_t udp_rate_bps;   /* 0 = agent default */
    uint64_t timeout_ms;     /* the whole client run must end within this (start-up, tests) */
};

struct run_options;

/* Fills spec for group g from the run's flags (tests borrowed; timeout_ms left 0 for the
 * caller, which knows how long the client may take). */
void run_spec_init(struct run_spec *spec, const struct run_options *ro, const struct plan_group *g,
                   const enum test_kind *tests, size_t n_tests, int samples);

/* One probe of `kperf watch`. Pointers borrowed during probe_start. */
struct backend_probe_opts {
    const char *const *args; /* flags after `probe --server HOST:PORT [--token-file F]` */
    size_t index;            /* the probe's number in the watch (names its files) */
    uint64_t deadline_s;     /* a cluster Job's activeDeadlineSeconds: it ends by itself then */
};

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
    /* Optional. When the last prepare() or run_client() failed because the cluster could not
     * start a pod (no pod network: IP exhaustion, CNI not ready, ADD timeout, a plugin error;
     * unschedulable; an image that will not pull), the cause's short name ("ip-exhaustion",
     * docs/kubernetes.md), else NULL. Borrowed until the next call. */
    const char *(*failure_cause)(struct backend *b);
    /* Optional (NULL: --netpol-rules is refused with this backend). Puts the run's policy of
     * `rules` rules selecting its pod-network servers in place (replacing the one before), or
     * with 0 removes it, and returns once the datapath has it: 0, or -1 with err. The rules
     * (docs/kubernetes.md, "NetworkPolicy datapath cost"): one that admits kperf's own clients,
     * then rules - 1 that match nothing kperf sends; what no rule admits is dropped. */
    int (*netpol_apply)(struct backend *b, unsigned rules, struct kp_err *err);
    /* Optional (NULL: --services with several sizes is refused with this backend). Puts
     * `count` extra Services selecting the run's servers in place (creating only those still
     * missing: the sizes come ascending), then measures each node's Service programming latency
     * with a fresh probe Service (docs/kubernetes.md, "Services at scale"). Returns 0 with *md
     * (new reference: {"count", "qps", "create_s", "create_api_requests", "programming":
     * {node: {"latency_s"}}, "api_requests"}, one entry of metadata.services_sizes), or -1 with
     * err (*md NULL). */
    int (*services_apply)(struct backend *b, unsigned count, json_t **md, struct kp_err *err);
    /* Optional (NULL: --netpol-readiness is refused with this backend). After the rows:
     * NetworkPolicy enforcement readiness per node: a deny-all ingress policy created at
     * deny_at, an allow at allow_at (Unix s), and per node the kperf.probe/v1 document of a
     * connect prober at a target there ("probe", or "error"), and of a new prober started
     * there under an egress deny that already selected it ("pod_probe", or "pod_error"):
     * {"deny_at", "allow_at", "nodes": [{"node", ...}]} (new reference; runner_netpol.h makes
     * metadata.netpol of it), or NULL with err. */
    json_t *(*netpol_readiness)(struct backend *b, struct kp_err *err);
    /* Removes everything the backend created (unless told to keep it). Idempotent, safe
     * after a failed or interrupted prepare() and when nothing was created. Returns -1 with
     * err when something could not be removed (the runner reports it; the run still fails). */
    int (*cleanup)(struct backend *b, struct kp_err *err);
    /* Frees the backend (after cleanup). NULL is a no-op. */
    void (*destroy)(struct backend *b);

    /* ---- `kperf watch` (cmd/kperf/watch_probes.c): optional, NULL when the backend cannot
     * watch (probe_start .. watch_env come together; probe_describe, probe_node, ready_start
     * and ready_stop are optional by themselves). After prepare, from one thread. ---- */
    /* Starts `kperf-agent probe --server <g's server> [--token-file <the run's token>]
     * o->args... [what the backend adds]` as g's client; its stderr (status lines) reaches the
     * local file probe_log, its kperf.probe/v1 document that file's end or a file of its own
     * (probe_doc reads it). Returns 0 with *out (free with probe_free, also after -1 when *out
     * is set), or -1 with err (no such path, its server not running, Job refused). */
    int (*probe_start)(struct backend *b, const struct plan_group *g,
                       const struct backend_probe_opts *o, struct backend_probe **out,
                       struct kp_err *err);
    /* The local file with the probe's stderr lines. Borrowed until probe_free. */
    const char *(*probe_log)(const struct backend_probe *p);
    /* true while the probe runs; once false, false for good. */
    bool (*probe_running)(struct backend_probe *p);
    /* Asks the probe to stop and print its document (SIGTERM; deleting its Job and pod).
     * Returns at once; errors are logged; idempotent. */
    void (*probe_stop)(struct backend *b, struct backend_probe *p);
    /* Waits for a stopped probe to end, bounded by the backend's grace (a process: 5 s; a
     * pod: 20 s). Returns 0, or -1 with err when it did not end in time. */
    int (*probe_wait)(struct backend_probe *p, struct kp_err *err);
    /* The probe's document (new reference, not checked), or NULL with jerr->text. */
    json_t *(*probe_doc)(const struct backend_probe *p, json_error_t *jerr);
    /* Optional: who the probe is, for an error about its document ("probe pod N on node M",
     * and why its log may be incomplete), into buf. */
    void (*probe_describe)(struct backend_probe *p, char *buf, size_t len);
    /* Optional: the name of the probe's client node, or (server) its server's (NULL: the
     * external server). Borrowed until probe_free. */
    const char *(*probe_node)(const struct backend_probe *p, bool server);
    /* Ends and frees p (and the files the backend made for it). NULL is a no-op. */
    void (*probe_free)(struct backend *b, struct backend_probe *p);
    /* NULL-terminated "NAME=value" entries naming the run for a command run beside the watch.
     * Caller frees each entry and the array. */
    char **(*watch_env)(struct backend *b);
    /* Optional: new pods timed until their network answers, every every_ms on every eligible
     * node. Returns 0 with *out (stop with ready_stop, also after -1 when *out is set), or -1
     * with err. */
    int (*ready_start)(struct backend *b, uint64_t every_ms, struct backend_ready **out,
                       struct kp_err *err);
    /* Stops them, frees r and returns their records (new reference; watch_readiness.h reads
     * them), or NULL when r is NULL. */
    json_t *(*ready_stop)(struct backend_ready *r);
};

/* Every backend struct starts with this, so the runner can reach the ops. */
struct backend {
    const struct backend_ops *ops;
    /* the runner's progress lines, set before prepare (NULL outside a run): a backend's long
     * steps say where they are with progress_phase (kperf run --services) */
    struct progress *progress;
};

#endif
