/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_pullsecret.h - --image-pull-secret [NS/]NAME. With -n naming NS (or no NS), the agent
 * pods reference NAME in that namespace, as a Pod must. Otherwise (a per-run namespace, or NS
 * other than -n's) kperf reads the Secret from NS (default: the kubeconfig context's
 * namespace) before creating anything and creates a copy, K8S_PULL_SECRET_NAME, in the run's
 * namespace: same type and data, kperf's run labels (so it goes with the namespace and `kperf
 * cleanup` finds it) and the annotation kperf.io/copied-from=NS/NAME. Every agent pod then
 * references the copy. Reading needs get on that one Secret (manifests/rbac-pull-secret.yaml). */
#ifndef KPERF_K8S_K8S_PULLSECRET_H
#define KPERF_K8S_K8S_PULLSECRET_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/kube/kube.h"

#define K8S_PULL_SECRET_NAME   "kperf-pull-secret"
#define K8S_PULL_COPIED_FROM   "kperf.io/copied-from"
#define K8S_DOCKER_CONFIG_JSON "kubernetes.io/dockerconfigjson"

/* What --image-pull-secret asks for. Strings owned (k8s_pullsecret_cleanup). */
struct k8s_pull_secret {
    char *src_ns; /* NS of NS/NAME; NULL = the context's namespace (or -n's when not copying) */
    char *name;   /* the Secret's name there */
    int copy;     /* 1: copied into the run's namespace as K8S_PULL_SECRET_NAME */
};

/* Parses flag ("NAME" or "NS/NAME"; NULL = no pull secret: out zeroed) for a run whose -n is
 * run_ns (NULL = a namespace per run). Returns 0, or -1 naming the bad part. */
KP_MUST_CHECK int k8s_pullsecret_parse(const char *flag, const char *run_ns,
                                       struct k8s_pull_secret *out, struct kp_err *err);
void k8s_pullsecret_cleanup(struct k8s_pull_secret *ps);

/* The copy in opts->ns, from source (a core/v1 Secret, borrowed; NULL = placeholder data for
 * `kperf manifests`), "from" its NS/NAME. New reference (holds secret data: never print it). */
json_t *k8s_pullsecret_object(const struct k8s_objects_opts *opts, const json_t *source,
                              const char *from);

/* Reads the source Secret (ps->src_ns, else ctx_ns) and checks it can pull images (type
 * kubernetes.io/dockerconfigjson or dockercfg). Returns 0 with *secret (caller releases), or
 * -1 with one line: not found (where to create it), forbidden (the RBAC to grant), wrong type.
 * *from gets "NS/NAME" (caller frees) either way. */
KP_MUST_CHECK int k8s_pullsecret_fetch(struct kube_client *kc, const struct k8s_pull_secret *ps,
                                       const char *ctx_ns, json_t **secret, char **from,
                                       struct kp_err *err);

#endif
