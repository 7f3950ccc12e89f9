/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_objects.h - builders of the Kubernetes objects one kperf run creates, as jansson JSON.
 * Owns names, labels, the pod security posture of agent pods and the placement rules; knows
 * nothing of HTTP (kube/), of what the tests measure (plan) or of waiting (backend_k8s).
 *
 * Placement design: servers run on node A only (the reference node: --nodes A,B, or the first
 * of the chosen pair); the client's node decides the placement (same-node = a client on A,
 * other-node = a client on B, sweep = a client on each node). Each server is a DaemonSet pinned
 * to A by required node affinity on kubernetes.io/hostname (the controller recreates a pod that
 * dies; coverage is checkable per node). Its pods carry kperf.io/slot=a, and the pod-to-service
 * Service kperf-svc-a selects (run-id, role=server, network=pod, slot=a), so its only backend is
 * the server on A whatever the cluster size: no EndpointSlice writes, no per-pod labelling.
 * The slot label leaves room for an "every node as server" sweep (slot per node). */
#ifndef KPERF_K8S_K8S_OBJECTS_H
#define KPERF_K8S_K8S_OBJECTS_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"

#define K8S_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define K8S_LABEL_NAME       "app.kubernetes.io/name"
#define K8S_LABEL_RUN_ID     "kperf.io/run-id"
#define K8S_LABEL_ROLE       "kperf.io/role"
#define K8S_LABEL_NETWORK    "kperf.io/network"
#define K8S_LABEL_SLOT       "kperf.io/slot"
#define K8S_LABEL_JOB        "kperf.io/job" /* on client pods: their Job's name */
#define K8S_MANAGED_BY       "kperf"
#define K8S_HOSTNAME_LABEL   "kubernetes.io/hostname"
#define K8S_PSA_ENFORCE      "pod-security.kubernetes.io/enforce"
#define K8S_TOKEN_DIR        "/var/run/kperf"
#define K8S_TOKEN_FILE       K8S_TOKEN_DIR "/token"
/* --external-token-file's token: the Secret's second key, projected (alone) into the
 * pod-to-external client pods at this path */
#define K8S_EXTERNAL_TOKEN_KEY  "external-token"
#define K8S_EXTERNAL_TOKEN_FILE K8S_TOKEN_DIR "/" K8S_EXTERNAL_TOKEN_KEY
#define K8S_AGENT_UID           65532
#define K8S_RUN_ID_MAX          40 /* keeps every derived name a valid DNS-1123 label */

/* What every object of one run shares. Strings are borrowed for the duration of each call. */
struct k8s_objects_opts {
    const char *run_id; /* [a-z0-9-], <= K8S_RUN_ID_MAX; see k8s_objects_run_id */
    const char *ns;     /* namespace the namespaced objects go to */
    /* --host-namespace: the host-network agents (server DaemonSet, client Jobs) go there, with
     * a copy of the ServiceAccount, the Secret and the pull secret's copy; NULL = ns */
    const char *host_ns;
    const char *image;              /* kperf-agent image */
    const char *pull_policy;        /* Always|IfNotPresent|Never, or NULL (server default) */
    const char *pull_secret;        /* name of the docker-registry Secret the pods use, or NULL */
    const json_t *pull_secret_copy; /* the Secret to create for them (k8s_pullsecret.h), or NULL */
    const json_t *tolerations;      /* array of core/v1 Toleration, or NULL */
    int port;                       /* agent TCP+UDP port */
    uint64_t udp_rate_bps;       /* the run's --udp-rate (0 = default): the server's --max-rate */
    int host_network_used;       /* label the namespace Pod Security enforce=privileged */
    int job_deadline_s;          /* client Job activeDeadlineSeconds (> 0) */
    uint64_t server_max_idle_ms; /* the servers' --max-idle (0 = none): k8s_deploy_max_idle_ms */
    int job_ttl_s;               /* client Job ttlSecondsAfterFinished (>= 0) */
    const char *service_account; /* NULL = K8S_SERVICE_ACCOUNT */
    /* the Service's spec.ipFamilies ("IPv4"/"IPv6"; 2 = RequireDualStack); 0 = the cluster's
     * default (no ipFamilies, no ipFamilyPolicy) */
    const char *const *ip_families;
    size_t n_ip_families;
    /* --external-token-file: the Secret gets K8S_EXTERNAL_TOKEN_KEY (its bytes, a secret; the
     * placeholder where the run token is one); NULL = no such key */
    const char *external_token;
    /* the pod template of every agent pod (docs/kubernetes.md "Pod template"), all borrowed,
     * NULL = none: --pod-labels and --pod-annotations (objects of strings; no kperf label),
     * --priority-class, --agent-requests/--agent-limits ({"requests": {...}, "limits": {...}}
     * merged into kperf's container) and --pod-overlay (checked by k8s_overlay_check and
     * applied last: k8s_deploy_init has applied it once to each kind of template) */
    const json_t *pod_labels;
    const json_t *pod_annotations;
    const char *priority_class;
    const json_t *agent_resources;
    const json_t *pod_overlay;
};

#define K8S_SERVICE_ACCOUNT "kperf-agent"
#define K8S_SECRET_NAME     "kperf-token"

/* A client Job: one per run step (k8s_objects_job_name). Strings borrowed for the call. */
struct k8s_client_job {
    const char *name;          /* DNS-1123 label, e.g. from k8s_objects_job_name */
    const char *node_hostname; /* value of kubernetes.io/hostname on the client's node */
    const char *scenario;      /* pod-to-pod, host-to-host, ... (label value) */
    const char *placement;     /* same-node | other-node | node name (sweep) (annotation) */
    int host_network;
    const char *const *args; /* NULL-terminated argv after the binary: client --server ... */
    const char *token_key;   /* the Secret key projected into K8S_TOKEN_DIR: NULL = "token";
                              * K8S_EXTERNAL_TOKEN_KEY for pod-to-external with a token */
};

/* Fills buf (>= K8S_RUN_ID_MAX + 1 bytes) with a fresh run id "YYYYMMDD-HHMMSS-xxxxxx"
 * (UTC time + random hex). Returns 0, or -1 with the reason (no randomness). */
KP_MUST_CHECK int k8s_objects_run_id(char *buf, size_t len, struct kp_err *err);

/* Checks opts: a valid run id, namespace and image, a port in 1..65535. Returns 0 or -1. */
KP_MUST_CHECK int k8s_objects_check(const struct k8s_objects_opts *opts, struct kp_err *err);

/* The labels every object carries (managed-by, name, run-id). New reference, caller releases. */
json_t *k8s_objects_labels(const struct k8s_objects_opts *opts);

/* "app.kubernetes.io/managed-by=kperf,kperf.io/run-id=<id>" (run_id NULL: all kperf runs).
 * Caller frees with free(). */
char *k8s_objects_selector(const char *run_id);

/* The namespace of the agents of that network: opts->host_ns for host network when set, else
 * opts->ns. */
const char *k8s_objects_ns(const struct k8s_objects_opts *opts, int host_network);

/* Each builder returns a new reference (caller releases) to one complete object with apiVersion,
 * kind, metadata.name, metadata.namespace (namespaced kinds) and the run labels. */
json_t *k8s_objects_namespace(const struct k8s_objects_opts *opts);
json_t *k8s_objects_service_account(const struct k8s_objects_opts *opts);
/* token is embedded as stringData (a secret: never print the result; NULL = placeholder), and
 * opts->external_token under K8S_EXTERNAL_TOKEN_KEY when set. Every pod projects one key only
 * (the servers and in-cluster clients "token"), so a pod never sees the other token. */
json_t *k8s_objects_secret(const struct k8s_objects_opts *opts, const char *token);
/* network "pod" or "host", slot "a" or "b"; name kperf-server-<network>-<slot> */
json_t *k8s_objects_server_daemonset(const struct k8s_objects_opts *opts, const char *network,
                                     const char *slot, const char *node_hostname);
/* ClusterIP Service kperf-svc-<slot> selecting the pod-network server of that slot */
json_t *k8s_objects_service(const struct k8s_objects_opts *opts, const char *slot);
json_t *k8s_objects_client_job(const struct k8s_objects_opts *opts,
                               const struct k8s_client_job *job);

/* Applies the pod template settings of opts (labels, annotations, priority class, resources,
 * then the overlay) to tmpl ({metadata, spec}, modified), whose kperf container is named
 * own_container. The builders above call it; k8s_deploy_init calls it once per kind of
 * template to refuse an overlay that breaks one. Returns 0, or -1 with why. */
KP_MUST_CHECK int k8s_objects_pod_template(const struct k8s_objects_opts *opts, json_t *tmpl,
                                           const char *own_container, struct kp_err *err);

/* Which servers a run needs: decided from the plan by the backend (and by `kperf manifests`). */
struct k8s_server_set {
    const char *node_a; /* hostname label of node A: every server runs there (slot a) */
    int pod_network;    /* pod-to-pod: kperf-server-pod-a */
    int host_network;   /* host-to-host: kperf-server-host-a */
    int services;       /* pod-to-service: kperf-svc-a (implies the pod server) */
};

/* Every object of the run in creation order: Namespace (when create_namespace), ServiceAccount,
 * Secret, the pull secret's copy (opts->pull_secret_copy), the same three in opts->host_ns when
 * it differs from ns and host-network servers are wanted, DaemonSets, Services. New array
 * (caller releases). token as for k8s_objects_secret. */
json_t *k8s_objects_server_objects(const struct k8s_objects_opts *opts,
                                   const struct k8s_server_set *set, int create_namespace,
                                   const char *token);

/* Where one plan group runs: which server it talks to and where its client goes. */
struct k8s_group_target {
    const char *server_network; /* "pod" | "host" | NULL (pod-to-external) */
    int via_service;            /* talk to kperf-svc-a's ClusterIP, not the pod IP */
    int client_host_network;    /* client Job in the node's network namespace */
    int client_on_a;            /* 1: node A; 0: node B, or group->node in sweep mode */
};
void k8s_objects_group_target(const struct plan_group *g, struct k8s_group_target *out);

/* The name of a server DaemonSet / Service / client Job. Caller frees with free(). */
char *k8s_objects_daemonset_name(const char *network, const char *slot);
char *k8s_objects_service_name(const char *slot);
/* "kperf-c-<scenario>-<placement>[-r]-<hash>-<step>": the scenario and placement cut and
 * cleaned (at most K8S_JOB_BODY_MAX characters), "-r" for the reverse direction, a 4-hex hash
 * of the full text (long node names in sweep stay distinct) and the run step (every client run
 * of a run has its own number: direction, sample, attempt), so no two client Jobs of a run
 * share a name, and a pod of a deleted Job that the garbage collector has not yet removed can
 * never be taken for the pod of a new one. Always a DNS-1123 label of <= 63 characters. */
#define K8S_JOB_BODY_MAX 37
char *k8s_objects_job_name(const char *scenario, const char *placement, int reverse, unsigned step);

#endif
