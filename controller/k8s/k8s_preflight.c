/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_preflight.c - before anything is created: the run's namespaces exist with the Pod Security
 * level their pods need, and the user holds every right the run uses (SelfSubjectAccessReviews).
 * Split from k8s_prepare.c, which calls these two checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_log.h"
#include "controller/k8s/k8s_backend_int.h"

struct need {
    const char *verb, *group, *resource, *sub;
    int cluster; /* cluster-scoped check */
};

static int preflight_rbac_in(struct k8s_backend *b, const char *ns, struct kp_err *err)
{
    const struct need needs[] = {
        {"create", "", "namespaces", NULL, 1},
        {"delete", "", "namespaces", NULL, 1},
        {"create", "apps", "daemonsets", NULL, 0},
        {"delete", "apps", "daemonsets", NULL, 0},
        {"create", "batch", "jobs", NULL, 0},
        {"delete", "batch", "jobs", NULL, 0},
        {"watch", "", "pods", NULL, 0},
        {"create", "", "pods", NULL, 0},
        {"get", "", "pods", "log", 0},
        {"list", "", "events", NULL, 0},
        {"create", "", "secrets", NULL, 0},
        {"delete", "", "secrets", NULL, 0},
        {"create", "", "serviceaccounts", NULL, 0},
        {"create", "", "services", NULL, 0},
        {"patch", "", "services", NULL, 0}, /* --services: the probe Service */
    };
    char missing[600] = "";

    for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
        const struct need *q = &needs[i];
        struct kube_access a = {.verb = q->verb,
                                .group = q->group,
                                .resource = q->resource,
                                .subresource = q->sub,
                                .ns = q->cluster ? NULL : ns};
        int allowed = 0;
        struct kp_err e;
        if (q->cluster && (!b->d.create_namespace || ns != b->d.ns))
            continue;
        if (strcmp(q->resource, "services") == 0 &&
            ((!b->d.set.services && b->ro->services <= 0) || ns != b->d.ns ||
             (strcmp(q->verb, "patch") == 0 && b->ro->services <= 0)))
            continue;
        if (kube_ssar(b->kc, &a, &allowed, NULL, &e) != 0) {
            kp_log(KP_LOG_INFO, "permission preflight skipped: %s", kp_err_msg(&e));
            return 0;
        }
        if (!allowed && strlen(missing) < sizeof(missing) - 80)
            snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
                     "%s%s %s%s%s%s%s", *missing ? ", " : "", q->verb, q->resource,
                     q->sub ? "/" : "", q->sub ? q->sub : "", *q->group ? "." : "", q->group);
    }
    if (*missing)
        return kp_err_set(err,
                          "missing permissions%s%s: %s. Grant them with manifests/rbac.yaml "
                          "(rbac-host.yaml for --host-namespace kperf-host, rbac-namespaces.yaml "
                          "for runs without -n)",
                          b->d.create_namespace && ns == b->d.ns ? "" : " in namespace ",
                          b->d.create_namespace && ns == b->d.ns ? "" : ns, missing);
    return 0;
}

/* in the run's namespace, and in --host-namespace's (manifests/rbac-host.yaml) */
int k8s_preflight_rbac(struct k8s_backend *b, struct kp_err *err)
{
    if (preflight_rbac_in(b, b->d.ns, err) != 0)
        return -1;
    if (b->d.host_ns && b->d.set.host_network && preflight_rbac_in(b, b->d.host_ns, err) != 0)
        return -1;
    return 0;
}

/* The hostNetwork pods of host-to-host need Pod Security "privileged" in namespace name (ns,
 * borrowed, released here). */
static int check_privileged(struct k8s_backend *b, const char *name, json_t *ns, struct kp_err *err)
{
    const char *enforce = json_string_value(json_object_get(
        json_object_get(json_object_get(ns, "metadata"), "labels"), K8S_PSA_ENFORCE));
    int rc = 0;

    if (b->d.set.host_network && enforce && strcmp(enforce, "privileged") != 0)
        rc = kp_err_set(err,
                        "namespace %s enforces Pod Security '%s', which refuses the hostNetwork "
                        "pods of host-to-host: label it with 'kubectl label namespace %s "
                        "%s=privileged --overwrite', put them elsewhere with --host-namespace, "
                        "or leave host-to-host out of --scenarios",
                        name, enforce, name, K8S_PSA_ENFORCE);
    json_decref(ns);
    return rc;
}

/* --host-namespace NS: it must exist (kperf never creates or deletes it) and be privileged */
static int check_host_namespace(struct k8s_backend *b, struct kp_err *err)
{
    json_t *ns = NULL;

    if (!b->d.host_ns || !b->d.set.host_network)
        return 0;
    if (kube_get(b->kc, &KUBE_RES_NAMESPACES, NULL, b->d.host_ns, &ns, err) != 0) {
        if (kube_client_last(b->kc)->http_status == 404) {
            kp_err_clear(err);
            return kp_err_set(err,
                              "--host-namespace %s does not exist: create it "
                              "(manifests/namespace-host.yaml makes kperf-host)",
                              b->d.host_ns);
        }
        return -1;
    }
    return check_privileged(b, b->d.host_ns, ns, err);
}

/* -n NAME: use it if it exists (checking Pod Security for hostNetwork), else create it */
int k8s_preflight_namespace(struct k8s_backend *b, struct kp_err *err)
{
    json_t *ns = NULL;

    if (check_host_namespace(b, err) != 0)
        return -1;
    if (b->d.create_namespace)
        return 0;
    if (kube_get(b->kc, &KUBE_RES_NAMESPACES, NULL, b->d.ns, &ns, err) != 0) {
        if (kube_client_last(b->kc)->http_status != 404)
            return -1;
        kp_err_clear(err);
        b->d.create_namespace = 1;
        return 0;
    }
    if (b->d.host_ns) {
        json_decref(ns); /* no hostNetwork pod goes to -n's namespace */
        return 0;
    }
    return check_privileged(b, b->d.ns, ns, err);
}
