/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_overlay.c - the pod template overlay (see k8s_overlay.h). The field lists are those of
 * test/kube-sim/schemas (Kubernetes 1.35); test_k8s_overlay compares them with that file. */
#include "controller/k8s/k8s_overlay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_yaml.h"
#include "controller/kube/kube_names.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *const podspec_fields[] = {
    "activeDeadlineSeconds",
    "affinity",
    "automountServiceAccountToken",
    "containers",
    "dnsConfig",
    "dnsPolicy",
    "enableServiceLinks",
    "ephemeralContainers",
    "hostAliases",
    "hostIPC",
    "hostNetwork",
    "hostPID",
    "hostUsers",
    "hostname",
    "hostnameOverride",
    "imagePullSecrets",
    "initContainers",
    "nodeName",
    "nodeSelector",
    "os",
    "overhead",
    "preemptionPolicy",
    "priority",
    "priorityClassName",
    "readinessGates",
    "resourceClaims",
    "resources",
    "restartPolicy",
    "runtimeClassName",
    "schedulerName",
    "schedulingGates",
    "securityContext",
    "serviceAccount",
    "serviceAccountName",
    "setHostnameAsFQDN",
    "shareProcessNamespace",
    "subdomain",
    "terminationGracePeriodSeconds",
    "tolerations",
    "topologySpreadConstraints",
    "volumes",
    "workloadRef",
};

static const char *const container_fields[] = {
    "args",
    "command",
    "env",
    "envFrom",
    "image",
    "imagePullPolicy",
    "lifecycle",
    "livenessProbe",
    "name",
    "ports",
    "readinessProbe",
    "resizePolicy",
    "resources",
    "restartPolicy",
    "restartPolicyRules",
    "securityContext",
    "startupProbe",
    "stdin",
    "stdinOnce",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "tty",
    "volumeDevices",
    "volumeMounts",
    "workingDir",
};

/* PodSpec fields that decide where and how kperf's pods run: the run's, never the overlay's */
static const char *const placement_fields[] = {"hostNetwork", "nodeName", "restartPolicy"};

/* what kperf's own containers run: an overlay that changed it would measure something else */
static const char *const own_container_fields[] = {"image", "command", "args"};

const char *const *k8s_overlay_known_fields(const char *type, size_t *n)
{
    if (strcmp(type, "PodSpec") == 0) {
        *n = N_OF(podspec_fields);
        return podspec_fields;
    }
    if (strcmp(type, "Container") == 0) {
        *n = N_OF(container_fields);
        return container_fields;
    }
    *n = 0;
    return NULL;
}

static int in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s, list[i]) == 0)
            return 1;
    }
    return 0;
}

int k8s_overlay_reserved_label(const char *key)
{
    return strncmp(key, "kperf.io/", 9) == 0 || strcmp(key, "app.kubernetes.io/name") == 0 ||
           strcmp(key, "app.kubernetes.io/managed-by") == 0;
}

static int is_merge_by_name(const char *key)
{
    return strcmp(key, "containers") == 0 || strcmp(key, "initContainers") == 0;
}

static int check_metadata(const json_t *md, struct kp_err *err)
{
    const char *key;
    json_t *v;

    if (!json_is_object(md))
        return kp_err_set(err, "metadata must be a map");
    json_object_foreach((json_t *)md, key, v)
    {
        const char *k2;
        json_t *v2;
        int labels = strcmp(key, "labels") == 0;

        if (!labels && strcmp(key, "annotations") != 0)
            return kp_err_set(err, "metadata.%s: only labels and annotations may be set", key);
        if (!json_is_object(v))
            return kp_err_set(err, "metadata.%s must be a map", key);
        json_object_foreach(v, k2, v2)
        {
            if (kube_names_check_key(k2, err) != 0)
                return kp_err_prefix(err, "metadata.%s", key);
            if (labels && k8s_overlay_reserved_label(k2))
                return kp_err_set(err,
                                  "metadata.labels: %s is kperf's own label and cannot be "
                                  "overridden; choose another key",
                                  k2);
            if (!json_is_string(v2) && !json_is_null(v2))
                return kp_err_set(err, "metadata.%s.%s must be a string", key, k2);
            if (labels && json_is_string(v2) &&
                kube_names_check_label_value(json_string_value(v2), err) != 0)
                return kp_err_prefix(err, "metadata.labels.%s", k2);
        }
    }
    return 0;
}

static int check_containers(const char *list, const json_t *arr, struct kp_err *err)
{
    size_t i;
    json_t *c;

    if (!json_is_array(arr))
        return kp_err_set(err, "spec.%s must be a list", list);
    json_array_foreach(arr, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        const char *key;
        json_t *v;

        if (!json_is_object(c) || !name)
            return kp_err_set(err, "spec.%s[%zu] needs a name (entries merge by name)", list, i);
        json_object_foreach(c, key, v)
        {
            if (!in_list(key, container_fields, N_OF(container_fields)))
                return kp_err_set(err, "spec.%s[%s].%s is not a Container field", list, name, key);
            if (strcmp(list, "containers") == 0 &&
                (strcmp(name, K8S_OVERLAY_SERVER_CONTAINER) == 0 ||
                 strcmp(name, K8S_OVERLAY_CLIENT_CONTAINER) == 0) &&
                in_list(key, own_container_fields, N_OF(own_container_fields)))
                return kp_err_set(err,
                                  "spec.containers[%s].%s: kperf's own container runs the "
                                  "kperf-agent of --image; use --image to change it",
                                  name, key);
        }
    }
    return 0;
}

static int check_spec(const json_t *spec, struct kp_err *err)
{
    const char *key;
    json_t *v;

    if (!json_is_object(spec))
        return kp_err_set(err, "spec must be a map (a PodSpec)");
    json_object_foreach((json_t *)spec, key, v)
    {
        if (!in_list(key, podspec_fields, N_OF(podspec_fields)))
            return kp_err_set(err, "spec.%s is not a PodSpec field", key);
        if (in_list(key, placement_fields, N_OF(placement_fields)))
            return kp_err_set(err, "spec.%s is decided by kperf (the scenario and --nodes)", key);
        if (strcmp(key, "affinity") == 0 && json_object_get(v, "nodeAffinity"))
            return kp_err_set(err, "spec.affinity.nodeAffinity is decided by kperf (--nodes, "
                                   "--node-selector)");
        if (is_merge_by_name(key) && check_containers(key, v, err) != 0)
            return -1;
    }
    return 0;
}

int k8s_overlay_check(const json_t *overlay, struct kp_err *err)
{
    const char *key;
    json_t *v;

    if (!json_is_object(overlay))
        return kp_err_set(err, "the overlay must be a map with metadata and/or spec");
    json_object_foreach((json_t *)overlay, key, v)
    {
        if (strcmp(key, "metadata") == 0) {
            if (check_metadata(v, err) != 0)
                return -1;
        } else if (strcmp(key, "spec") == 0) {
            if (check_spec(v, err) != 0)
                return -1;
        } else {
            return kp_err_set(err,
                              "unknown top-level field '%s': a pod template overlay has only "
                              "metadata and spec",
                              key);
        }
    }
    return 0;
}

static json_t *find_named(json_t *arr, const char *name)
{
    size_t i;
    json_t *e;

    json_array_foreach(arr, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && strcmp(n, name) == 0)
            return e;
    }
    return NULL;
}

/* a patch value as it lands where nothing was: its nulls mean nothing to delete */
static json_t *without_nulls(const json_t *v)
{
    json_t *copy = json_deep_copy(v);

    if (json_is_object(copy)) {
        json_t *empty = json_object();
        k8s_overlay_merge(empty, copy);
        json_decref(copy);
        return empty;
    }
    return copy;
}

static int is_own_container(const char *name)
{
    return name && (strcmp(name, K8S_OVERLAY_SERVER_CONTAINER) == 0 ||
                    strcmp(name, K8S_OVERLAY_CLIENT_CONTAINER) == 0);
}

static void merge_by_name(json_t *target, const json_t *patch)
{
    size_t i;
    json_t *e;

    json_array_foreach(patch, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        json_t *have = name ? find_named(target, name) : NULL;

        if (have)
            k8s_overlay_merge(have, e);
        else if (!is_own_container(name))
            json_array_append_new(target, without_nulls(e));
        /* else: kperf's other container (the server's entry on a client pod): not this one */
    }
}

void k8s_overlay_merge(json_t *target, const json_t *patch)
{
    const char *key;
    json_t *v;

    json_object_foreach((json_t *)patch, key, v)
    {
        json_t *have = json_object_get(target, key);

        if (json_is_null(v)) {
            json_object_del(target, key);
        } else if (json_is_object(v) && json_is_object(have)) {
            k8s_overlay_merge(have, v);
        } else if (json_is_array(v) && json_is_array(have) && is_merge_by_name(key)) {
            merge_by_name(have, v);
        } else {
            json_object_set_new(target, key, without_nulls(v));
        }
    }
}

/* every volumeMount of every container names a volume of the pod */
static int check_mounts(const json_t *spec, const char *list, struct kp_err *err)
{
    const json_t *vols = json_object_get(spec, "volumes");
    size_t i, j;
    json_t *c, *m;

    json_array_foreach(json_object_get(spec, list), i, c)
    {
        const char *cname = json_string_value(json_object_get(c, "name"));
        if (!cname)
            return kp_err_set(err, "spec.%s[%zu] has no name", list, i);
        if (!json_is_string(json_object_get(c, "image")))
            return kp_err_set(err, "spec.%s[%s] has no image", list, cname);
        json_array_foreach(json_object_get(c, "volumeMounts"), j, m)
        {
            const char *vname = json_string_value(json_object_get(m, "name"));
            if (!vname || !find_named((json_t *)vols, vname))
                return kp_err_set(err,
                                  "spec.%s[%s] mounts volume '%s', which spec.volumes no longer "
                                  "has (a list in the overlay replaces the whole list)",
                                  list, cname, vname ? vname : "");
        }
    }
    return 0;
}

int k8s_overlay_apply(json_t *tmpl, const json_t *overlay, struct kp_err *err)
{
    json_t *spec;

    k8s_overlay_merge(tmpl, overlay);
    spec = json_object_get(tmpl, "spec");
    if (json_array_size(json_object_get(spec, "containers")) == 0)
        return kp_err_set(err, "the pod template has no container left");
    if (check_mounts(spec, "containers", err) != 0 ||
        check_mounts(spec, "initContainers", err) != 0)
        return -1;
    return 0;
}

int k8s_overlay_load(const char *path, json_t **out, struct kp_err *err)
{
    json_t *docs = NULL;
    int rc = -1;

    *out = NULL;
    if (k8s_yaml_parse_file(path, &docs, err) != 0)
        return -1;
    if (json_array_size(docs) != 1) {
        kp_err_set(err, "%s: holds %zu documents; an overlay is one pod template", path,
                   json_array_size(docs));
        goto out;
    }
    if (k8s_overlay_check(json_array_get(docs, 0), err) != 0) {
        kp_err_prefix(err, "%s", path);
        goto out;
    }
    *out = json_incref(json_array_get(docs, 0));
    rc = 0;
out:
    json_decref(docs);
    return rc;
}
