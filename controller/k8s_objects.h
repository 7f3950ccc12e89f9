/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_objects.h - builders of the Kubernetes objects one kperf run creates, as jansson JSON.
 * Owns names, labels, the pod security posture of agent pods and the placement rules; knows
 * nothing of HTTP (kube/), of what the tests measure (plan) or of waiting (backend_k8s).
 *
 * Placement design (why one DaemonSet per node "slot"): a ClusterIP Service must reach exactly
 * the server on one intended node (pod-to-service same-node vs other-node). A DaemonSet's pods
 * all share one template, so no label tells them apart by node. kperf therefore runs one
 * single-node DaemonSet per (network, slot): slot "a" is the reference node (node A of the
 * pair), slot "b" the other node. Each is pinned by required node affinity on
 * kubernetes.io/hostname, its pods carry kperf.io/slot=<slot>, and Service kperf-svc-<slot>
 * selects (run-id, role=server, network=pod, slot). Same-node service traffic = client on A to
 * kperf-svc-a; other-node = client on A to kperf-svc-b. No EndpointSlice writes are needed,
 * and the DaemonSet controller recreates a server pod that dies. */
#ifndef KPERF_CONTROLLER_K8S_OBJECTS_H
#define KPERF_CONTROLLER_K8S_OBJECTS_H

#include <jansson.h>

#include "agent/base/kp_err.h"
#include "controller/backend.h"

#define K8S_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define K8S_LABEL_NAME       "app.kubernetes.io/name"
#define K8S_LABEL_RUN_ID     "kperf.io/run-id"
#define K8S_LABEL_ROLE       "kperf.io/role"
#define K8S_LABEL_NETWORK    "kperf.io/network"
#define K8S_LABEL_SLOT       "kperf.io/slot"
#define K8S_MANAGED_BY       "kperf"
#define K8S_HOSTNAME_LABEL   "kubernetes.io/hostname"
#define K8S_PSA_ENFORCE      "pod-security.kubernetes.io/enforce"
#define K8S_TOKEN_DIR        "/var/run/kperf"
#define K8S_TOKEN_FILE       K8S_TOKEN_DIR "/token"
#define K8S_AGENT_UID        65532
#define K8S_RUN_ID_MAX       40 /* keeps every derived name a valid DNS-1123 label */

/* What every object of one run shares. Strings are borrowed for the duration of each call. */
struct k8s_objects_opts {
    const char *run_id;          /* [a-z0-9-], <= K8S_RUN_ID_MAX; see k8s_objects_run_id */
    const char *ns;              /* namespace the namespaced objects go to */
    const char *image;           /* kperf-agent image */
    const char *pull_policy;     /* Always|IfNotPresent|Never, or NULL (server default) */
    const char *pull_secret;     /* name of an existing docker-registry Secret, or NULL */
    const json_t *tolerations;   /* array of core/v1 Toleration, or NULL */
    int port;                    /* agent TCP+UDP port */
    int host_network_used;       /* label the namespace Pod Security enforce=privileged */
    int job_deadline_s;          /* client Job activeDeadlineSeconds (> 0) */
    int job_ttl_s;               /* client Job ttlSecondsAfterFinished (>= 0) */
    const char *service_account; /* NULL = K8S_SERVICE_ACCOUNT */
};

#define K8S_SERVICE_ACCOUNT "kperf-agent"
#define K8S_SECRET_NAME     "kperf-token"

/* A client Job: one per (scenario, placement). Strings borrowed for the call. */
struct k8s_client_job {
    const char *name;          /* DNS-1123 label, e.g. from k8s_objects_job_name */
    const char *node_hostname; /* value of kubernetes.io/hostname on the client's node */
    const char *scenario;      /* pod-to-pod, host-to-host, ... (label value) */
    const char *placement;     /* same-node | other-node | node name (sweep) (annotation) */
    int host_network;
    const char *const *args; /* NULL-terminated argv after the binary: client --server ... */
};

/* Fills buf (>= K8S_RUN_ID_MAX + 1 bytes) with a fresh run id "YYYYMMDD-HHMMSS-xxxxxx"
 * (UTC time + random hex). Returns 0, or -1 with the reason (no randomness). */
int k8s_objects_run_id(char *buf, size_t len, struct kp_err *err);

/* Checks opts: a valid run id, namespace and image, a port in 1..65535. Returns 0 or -1. */
int k8s_objects_check(const struct k8s_objects_opts *opts, struct kp_err *err);

/* The labels every object carries (managed-by, name, run-id). New reference, caller releases. */
json_t *k8s_objects_labels(const struct k8s_objects_opts *opts);

/* "app.kubernetes.io/managed-by=kperf,kperf.io/run-id=<id>" (run_id NULL: all kperf runs).
 * Caller frees with free(). */
char *k8s_objects_selector(const char *run_id);

/* Each builder returns a new reference (caller releases) to one complete object with apiVersion,
 * kind, metadata.name, metadata.namespace (namespaced kinds) and the run labels. */
json_t *k8s_objects_namespace(const struct k8s_objects_opts *opts);
json_t *k8s_objects_service_account(const struct k8s_objects_opts *opts);
/* token is embedded as stringData (a secret: never print the result; NULL = placeholder) */
json_t *k8s_objects_secret(const struct k8s_objects_opts *opts, const char *token);
/* network "pod" or "host", slot "a" or "b"; name kperf-server-<network>-<slot> */
json_t *k8s_objects_server_daemonset(const struct k8s_objects_opts *opts, const char *network,
                                     const char *slot, const char *node_hostname);
/* ClusterIP Service kperf-svc-<slot> selecting the pod-network server of that slot */
json_t *k8s_objects_service(const struct k8s_objects_opts *opts, const char *slot);
json_t *k8s_objects_client_job(const struct k8s_objects_opts *opts,
                               const struct k8s_client_job *job);

/* Which servers a run needs: decided from the plan by the backend (and by `kperf manifests`). */
struct k8s_server_set {
    const char *node_a; /* hostname label of node A (servers of slot a; same-node clients) */
    const char *node_b; /* of node B (slot b), or NULL when no other-node group runs */
    int pod_network;    /* pod-to-pod: kperf-server-pod-{a,b} */
    int host_network;   /* host-to-host: kperf-server-host-{a,b} */
    int services;       /* pod-to-service: kperf-svc-{a,b} (implies the pod servers) */
};

/* Every object of the run in creation order: Namespace (when create_namespace), ServiceAccount,
 * Secret, DaemonSets, Services. New array (caller releases). token as for k8s_objects_secret. */
json_t *k8s_objects_server_objects(const struct k8s_objects_opts *opts,
                                   const struct k8s_server_set *set, int create_namespace,
                                   const char *token);

/* argv (after the binary) of `kperf-agent client` for spec against server:port, reading the
 * token from K8S_TOKEN_FILE and printing JSON. New NULL-terminated array; free with
 * k8s_objects_argv_free. */
char **k8s_objects_client_argv(const struct run_spec *spec, const char *server, int port);
void k8s_objects_argv_free(char **argv); /* NULL is a no-op */

/* The name of a server DaemonSet / Service / client Job. Caller frees with free(). */
char *k8s_objects_daemonset_name(const char *network, const char *slot);
char *k8s_objects_service_name(const char *slot);
/* "kperf-c-<scenario>-<placement>" cut and cleaned to a DNS-1123 label with a 4-hex hash of the
 * full text appended, so long node names (sweep) stay unique. */
char *k8s_objects_job_name(const char *scenario, const char *placement);

#endif
