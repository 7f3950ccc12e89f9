/* SPDX-License-Identifier: Apache-2.0 */
/* run_options.h - what `kperf run` was asked to do: every flag's value, the defaults, and the
 * checks that combine values (run_options_validate). cmd/kperf/run_flags.c parses the command
 * line into it (`kperf run` and `kperf manifests`); the local and the Kubernetes backends read
 * it; neither parses flags itself. Knows nothing of backends or reports. */
#ifndef KPERF_CONTROLLER_RUN_OPTIONS_H
#define KPERF_CONTROLLER_RUN_OPTIONS_H

#include "base/kp_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kp_err;

enum run_output {
    RUN_OUTPUT_TABLE = 0,
    RUN_OUTPUT_MARKDOWN,
    RUN_OUTPUT_JSON,
    RUN_OUTPUT_CSV,
    RUN_OUTPUT_OPENMETRICS = 5, /* the values are those of enum report_format */
};

/* --ip-family: the address families the run measures. DEFAULT: a cluster's every family (both
 * on dual-stack), IPv4 with --local. */
enum run_ip_family {
    RUN_IP_DEFAULT = 0,
    RUN_IPV4,
    RUN_IPV6,
    RUN_IP_BOTH,
};

/* --node-selector key=value[,key=value...] */
struct run_label {
    char *key;   /* owned */
    char *value; /* owned; "" allowed */
};

/* --tolerations key[=value][:Effect][,...]; no value means operator Exists, "" key with no
 * value (":NoSchedule" or "*") tolerates every taint of that effect (or every taint). */
struct run_toleration {
    char *key;    /* owned; NULL = any key */
    char *value;  /* owned; NULL = operator Exists */
    char *effect; /* owned; NULL = any effect; else NoSchedule|PreferNoSchedule|NoExecute */
};

#define RUN_NETPOL_LEVELS_MAX  8     /* --netpol-rules: at most this many sizes */
#define RUN_NETPOL_RULES_MAX   10000 /* and none above this */
#define RUN_SERVICES_SIZES_MAX 8     /* --services: at most this many sizes */
#define RUN_SERVICES_MAX       20000 /* and none above this */

struct run_options {
    /* what to measure */
    unsigned scenarios;      /* mask of 1u << enum scenario (plan.h) */
    unsigned placements;     /* mask of 1u << PLACEMENT_SAME_NODE / PLACEMENT_OTHER_NODE */
    unsigned tests;          /* mask of 1u << enum test_kind */
    uint64_t duration_ms;    /* --duration, default 10s */
    int samples;             /* --samples N (default 1); with auto, the minimum (3) */
    bool samples_auto;       /* --samples auto */
    int samples_max;         /* auto only: upper bound (10) */
    int streams;             /* --streams, default 4 (TCP_STREAM_MULTI) */
    uint64_t msg_size_bytes; /* --msg-size; 0 = agent default */
    uint64_t udp_rate_bps;   /* --udp-rate; 0 = agent default */
    uint64_t omit_ms;        /* --omit, default 0 */
    uint64_t interval_ms;    /* --interval; 0 = agent default */
    bool no_counters;        /* --no-counters: the agents read no kernel and NIC counters */
    /* --profile ROWS: the rows whose client samples the kernel (agent/kprof.h), each item a
     * pattern "[SCENARIO/[PLACEMENT/]]TEST" (fnmatch(3) on each part; docs/profile.md);
     * owned; none by default */
    char **profile_rows;
    size_t n_profile_rows;
    bool netpol_readiness; /* --netpol-readiness: NetworkPolicy enforcement readiness per node
                              (backend.h, netpol_readiness) into metadata.netpol */
    bool capacity;         /* --capacity: a TCP_CRR connection-capacity ramp per group
                              (controller/capacity_ramp.h); adds TCP_CRR to the tests */
    uint64_t timeout_ms;   /* --timeout: bound on every wait (start-up, one client run);
                              default 2m */
    /* output */
    enum run_output output; /* -o/--output, default table */
    char *output_dir;       /* --output-dir; owned; NULL = none */
    char *history_dir;      /* --history; owned; NULL = none (controller/report/history.h) */
    char *push_gateway;     /* --push-gateway URL; owned; NULL = none */
    char *push_gateway_password_file; /* --push-gateway-password-file; owned; NULL = none */
    /* --termination-message-path FILE: the one-line outcome; owned; NULL = /dev/termination-log
     * when it exists and is writable (a pod), "" = none (docs/exit-status.md) */
    char *termination_message_path;
    char *push_gateway_password; /* read from that file or $KPERF_PUSHGATEWAY_PASSWORD (pushgw.h)
                                    by the flag parser; kp_free_secret; NULL = the URL's, if any */
    char *cluster_name;          /* --cluster-name: metadata.cluster; owned; NULL = none */
    unsigned keep_runs;          /* --keep-runs: with --output-dir DIR/{time} (0 = keep all) and/or
                                    --history (0 = HISTORY_DEFAULT_KEEP runs per version folder) */
    int verbose;                 /* -v count (-v info, -vv debug) */
    /* local backend */
    bool local;                   /* --local */
    int mtu;                      /* --mtu, default 1500 (local only; 576..65000) */
    enum run_ip_family ip_family; /* --ip-family (run_ip_families_choose) */
    char **local_faults;          /* --local-fault SPEC, test-only (local_fault.h); owned */
    size_t n_local_faults;
    char *cni_conf; /* --cni-conf FILE: the pods' network by this CNI conflist;
                       owned; NULL = the hand-built bridge+veth */
    char *cni_path; /* --cni-path DIRS: where its plugins are; owned; NULL =
                       /opt/cni/bin:/usr/lib/cni */
    /* Kubernetes backend (consumed by backend_k8s) */
    char *kubeconfig;                /* owned; NULL = $KUBECONFIG / ~/.kube/config / in-cluster */
    char *context;                   /* owned; NULL = current-context */
    char *namespace_name;            /* -n/--namespace; owned; NULL = create kperf-<run-id> */
    char *host_namespace_name;       /* --host-namespace: the host-network agents' existing
                                      * namespace; owned; NULL = the run's namespace */
    char *image;                     /* --image; owned; NULL = run_options_default_image() */
    char *image_pull_secret;         /* NAME or NS/NAME (k8s_pullsecret.h); owned; NULL = none */
    char *image_pull_policy;         /* owned; NULL = cluster default; Always|IfNotPresent|Never */
    struct run_label *node_selector; /* owned array */
    size_t n_node_selector;
    struct run_toleration *tolerations; /* owned array */
    size_t n_tolerations;
    char *node_a;        /* --nodes A,B: server node and other-node client node; owned; or NULL */
    char *node_b;        /* owned; NULL when not given (then A is used for same-node only) */
    char *nodes_from;    /* --nodes-from BASE.json; owned; NULL = none */
    char *arch;          /* --arch amd64|arm64|any|mixed (k8s_arch.h); owned; NULL = default */
    int port;            /* --port, default TESTKIND_DEFAULT_PORT */
    char *external_host; /* --external-server HOST[:PORT]; owned; NULL = none */
    int external_port;   /* default TESTKIND_DEFAULT_PORT */
    char *external_name; /* the name given to --external-server when the controller resolved
                          * it to external_host (controller/resolve.h); owned; NULL = none */
    /* --external-token-file: the external agent's token (both backends); owned */
    char *external_token_file; /* the path; NULL = none (the external agent runs without auth) */
    char *external_token;      /* its bytes as base/token.h reads them (kp_free_secret) */
    size_t external_token_len;
    bool keep;              /* --keep */
    bool cleanup_leftovers; /* --cleanup-leftovers */
    uint64_t lease_ms;      /* --lease-duration: the run's Lease (k8s), renewed every third */
    uint64_t wait_lock_ms;  /* --wait-for-lock: wait this long for the cluster lock (0: refuse) */
    uint64_t agent_max_idle_ms; /* --agent-max-idle: the servers' --max-idle; 0 = from --timeout */
    /* --netpol-rules: the policy sizes the pod rows are measured at, ascending, distinct
     * (controller/plan.h, "NetworkPolicy datapath cost"); n_netpol_rules 0 = off */
    unsigned netpol_rules[RUN_NETPOL_LEVELS_MAX];
    size_t n_netpol_rules;
    bool all_nodes;       /* --all-nodes: sweep every node in ring pairs (k8s_sweep.h) */
    int parallel;         /* --parallel: sweep pairs measured at once (node-disjoint), 1..64 */
    int confirm_outliers; /* --confirm-outliers: sweep nodes flagged that are re-measured
                             alone before the verdict, 0..64 (0 = off) */
    int services;         /* --services: extra Services in the run's namespace, 0..20000 (0 = none;
                             docs/kubernetes.md "Services at scale"); with several sizes, the
                             largest */
    /* --services LIST: the sizes, ascending, distinct; with two or more, the pod-to-service rows
     * are measured at each (controller/plan.h, "Services at scale"); else n_services_sizes <= 1
     * and `services` is the one size */
    unsigned services_sizes[RUN_SERVICES_SIZES_MAX];
    size_t n_services_sizes;
    int pod_churn; /* --pod-churn: short-lived readiness pods per node, 0..100 (0 = off);
                      -1 = not given (none on Kubernetes, 3 with --local) */
    /* the agent pods' template (docs/kubernetes.md "Pod template"); syntax checked by the flag
     * parser, kperf's labels and the overlay's contents by the Kubernetes backend */
    struct run_label *pod_labels; /* --pod-labels K=V,...; owned array */
    size_t n_pod_labels;
    struct run_label *pod_annotations; /* --pod-annotations K=V,...; owned array */
    size_t n_pod_annotations;
    char *priority_class;             /* --priority-class; owned; NULL = none */
    struct run_label *agent_requests; /* --agent-requests cpu=Q,memory=Q; owned array */
    size_t n_agent_requests;
    struct run_label *agent_limits; /* --agent-limits; owned array */
    size_t n_agent_limits;
    char *pod_overlay; /* --pod-overlay FILE; owned; NULL = none */
    /* the command line as given (for report metadata): argv[0..argc) borrowed from main */
    int argc;
    char **argv;
};

/* The default --image: KPERF_AGENT_IMAGE_REPO:KPERF_VERSION, pinned with "@sha256:..." when
 * the build set KPERF_AGENT_IMAGE_DIGEST (the release's image index). Static string. */
const char *run_options_default_image(void);

/* Defaults as documented in --help. */
void run_options_init(struct run_options *o);
void run_options_cleanup(struct run_options *o); /* frees owned strings and arrays */

struct plan_group;
/* The tests of group g (mask of 1u << enum test_kind) that --profile selects. */
unsigned run_profile_tests(const struct run_options *o, const struct plan_group *g);

/* Checks the values that go together (--mtu only with --local, --nodes or --nodes-from,
 * --omit below 1h, --interval within --duration) and normalises: the default 1s series is
 * dropped from a sub-second run. Call once, after setting the fields. Returns 0, or -1 with
 * one line naming the flag in err (a usage error). */
KP_MUST_CHECK int run_options_validate(struct run_options *o, struct kp_err *err);

/* The families a run measures, from --ip-family and the cluster's families (cluster: "IPv4"
 * and/or "IPv6", the primary first; n_cluster 0 = not known, taken as IPv4). DEFAULT: every
 * family of the cluster; BOTH: both, on a dual-stack cluster only; IPV4/IPV6: that one, which
 * the cluster must have. out[] gets static strings in the cluster's order. Returns 0, or -1
 * with err naming the cluster's families. */
KP_MUST_CHECK int run_ip_families_choose(enum run_ip_family want, const char *const *cluster,
                                         size_t n_cluster, const char *out[2], size_t *n_out,
                                         struct kp_err *err);

#endif
