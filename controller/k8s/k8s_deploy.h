/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_deploy.h - what one run deploys, decided from the flags and the plan: the shared object
 * options (run id, namespace, image, tolerations) and which servers are needed (the client Job
 * of a group is k8s_client_make_job). Used by k8s_prepare.c (to create them) and `kperf
 * manifests` (to print them).
 * Knows nothing of HTTP or waiting. */
#ifndef KPERF_K8S_K8S_DEPLOY_H
#define KPERF_K8S_K8S_DEPLOY_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_pullsecret.h"
#include "controller/plan.h"
#include "controller/run_options.h"

#define K8S_JOB_TTL_S 600 /* the TTL controller reaps what a killed kperf left behind */

struct k8s_deploy {
    char run_id[K8S_RUN_ID_MAX + 1];
    char *ns;                    /* owned: -n, or kperf-<run-id> */
    char *host_ns;               /* owned: --host-namespace, NULL = ns (no split) */
    int create_namespace;        /* 1 unless -n named one */
    json_t *tolerations;         /* owned array (maybe empty) */
    struct k8s_objects_opts obj; /* strings borrowed from this struct and the run options */
    struct k8s_server_set set;   /* node_a borrowed from node_a_host below */
    char *node_a_host;           /* owned: kubernetes.io/hostname of node A */
    uint64_t timeout_ms;         /* --timeout */
    struct k8s_pull_secret pull; /* --image-pull-secret */
    json_t *pull_copy;           /* owned: its copy (pull.copy), placeholder data until
                                  * k8s_deploy_pull_secret read the source; obj borrows it */
    /* the pod template settings (obj borrows them), owned; NULL = none */
    json_t *pod_labels;      /* --pod-labels */
    json_t *pod_annotations; /* --pod-annotations */
    json_t *agent_resources; /* --agent-requests, --agent-limits */
    json_t *pod_overlay;     /* --pod-overlay FILE, loaded and checked */
};

/* Fills d for a run with these flags and plan. run_id NULL = a fresh one; node_a_host is the
 * kubernetes.io/hostname label value of node A (copied). Returns 0, or -1 with the reason
 * (bad image, namespace, pull policy, a kperf label in --pod-labels, an overlay that breaks a
 * pod template, requests above limits...). Release with k8s_deploy_cleanup (also after -1). */
KP_MUST_CHECK int k8s_deploy_init(struct k8s_deploy *d, const struct run_options *ro,
                                  const struct plan *plan, const char *run_id,
                                  const char *node_a_host, struct kp_err *err);
void k8s_deploy_cleanup(struct k8s_deploy *d);

/* When the pull secret is copied: reads the source Secret (k8s_pullsecret_fetch; ctx_ns = the
 * context's namespace) so that the copy created with the servers carries its data. Before
 * anything is created: a missing source is one line and nothing is left. 0 or -1. */
KP_MUST_CHECK int k8s_deploy_pull_secret(struct k8s_deploy *d, struct kube_client *kc,
                                         const char *ctx_ns, struct kp_err *err);

/* The servers and shared objects in creation order (see k8s_objects_server_objects). New
 * array, caller releases. token NULL = placeholder text. */
json_t *k8s_deploy_server_objects(const struct k8s_deploy *d, const char *token);

/* Sweep mode (--all-nodes): the server DaemonSet of `network` ("pod" or "host"), slot "sweep",
 * on the nodes whose kubernetes.io/hostname is in hosts (array of strings, borrowed; node A's
 * own servers serve A). New reference. */
json_t *k8s_deploy_sweep_daemonset(const struct k8s_deploy *d, const char *network,
                                   const json_t *hosts);

/* The servers' --max-idle (docs/kubernetes.md, "A killed controller"): --agent-max-idle when
 * given, else the longest a live run leaves a server without a test: 2 x --timeout (the next
 * client's pod start, and the API calls around it, are each bounded by it) + 30 s, plus, in a
 * sweep, the planned measurement time (a node's server waits for its pair's turn), and with
 * --services N, N x 100 ms + 3 min (the Services' creation at 10 per second or more, then the
 * programming probes). */
uint64_t k8s_deploy_max_idle_ms(const struct run_options *ro, const struct plan *plan);

/* Core/v1 Tolerations from the parsed --tolerations. New array, caller releases. */
json_t *k8s_deploy_tolerations(const struct run_toleration *t, size_t n);

#endif
