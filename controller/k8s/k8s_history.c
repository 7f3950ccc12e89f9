/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_history.c - the run history as ConfigMaps (see k8s_history.h). */
#include "controller/k8s/k8s_history.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/kube/kube.h"

bool k8s_history_is_cm(const char *loc)
{
    return loc && strncmp(loc, K8S_HISTORY_SCHEME, strlen(K8S_HISTORY_SCHEME)) == 0;
}

int k8s_history_name(const char *loc, const char **name, struct kp_err *err)
{
    const char *n = loc + strlen(K8S_HISTORY_SCHEME);
    size_t len = strlen(n);
    bool ok = len > 0 && len <= K8S_HISTORY_NAME_MAX && isalnum((unsigned char)n[0]) &&
              isalnum((unsigned char)n[len - 1]);

    for (size_t i = 0; ok && i < len; i++)
        ok = islower((unsigned char)n[i]) || isdigit((unsigned char)n[i]) || n[i] == '-';
    if (!ok)
        return kp_err_set(err,
                          "'%s': NAME of configmap:NAME must be 1-%d lower-case letters, digits "
                          "or '-' (e.g. configmap:kperf-history)",
                          loc, K8S_HISTORY_NAME_MAX);
    *name = n;
    return 0;
}

void k8s_history_hash(const char *s, char out[17])
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    snprintf(out, 17, "%016" PRIx64, h);
}

static const char *annot(const json_t *cm, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(cm, "metadata"), "annotations"), key));
}

static int by_file(const void *a, const void *b)
{
    const char *fa = annot(*(json_t *const *)a, K8S_HISTORY_ANNOT_FILE);
    const char *fb = annot(*(json_t *const *)b, K8S_HISTORY_ANNOT_FILE);
    return strcmp(fa ? fa : "", fb ? fb : "");
}

/* Deletes the oldest runs of one key beyond keep. */
static int retain(struct kube_client *kc, const char *ns, const char *name, const char *keyhash,
                  size_t keep, struct kp_err *err)
{
    char *sel =
        kp_xasprintf("%s=%s,%s=%s", K8S_HISTORY_LABEL, name, K8S_HISTORY_LABEL_KEY, keyhash);
    struct kube_list_opts lo = {.label_selector = sel};
    struct kube_delete_opts del = {.grace_period_s = -1, .missing_ok = 1};
    json_t *items = NULL;
    json_t **v = NULL;
    size_t n, i;
    int rc = -1;

    if (kube_list_all(kc, &KUBE_RES_CONFIGMAPS, ns, &lo, &items, err) != 0)
        goto out;
    n = json_array_size(items);
    v = kp_xcalloc(n ? n : 1, sizeof(*v));
    for (i = 0; i < n; i++)
        v[i] = json_array_get(items, i);
    qsort(v, n, sizeof(*v), by_file);
    rc = 0;
    for (i = 0; i + keep < n && rc == 0; i++) {
        const char *obj =
            json_string_value(json_object_get(json_object_get(v[i], "metadata"), "name"));
        if (obj && (rc = kube_delete(kc, &KUBE_RES_CONFIGMAPS, ns, obj, &del, NULL, err)) == 0)
            kp_log(KP_LOG_INFO, "history %s: removed the older run configmap/%s", name, obj);
    }
out:
    free(v);
    json_decref(items);
    free(sel);
    return rc;
}

int k8s_history_add(struct kube_client *kc, const char *ns, const char *name, const char *key,
                    const char *file, const char *text, size_t keep, char **obj_out,
                    struct kp_err *err)
{
    char keyhash[17], objhash[17], *both, *obj_name;
    size_t len = strlen(text);
    json_t *cm = NULL;
    int rc = -1;

    both = kp_xasprintf("%s/%s", key, file);
    k8s_history_hash(key, keyhash);
    k8s_history_hash(both, objhash);
    obj_name = kp_xasprintf("%s-%s", name, objhash);
    if (len > K8S_HISTORY_MAX_BYTES) {
        kp_err_set(err,
                   "the report is %zu KiB, more than a ConfigMap holds (%u KiB): keep this "
                   "history on a volume (--history DIR, docs/history-volume.md)",
                   len / 1024, K8S_HISTORY_MAX_BYTES / 1024);
        goto out;
    }
    cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s}}, s:{s:s}}",
                   "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", obj_name,
                   "namespace", ns, "labels", "app.kubernetes.io/name", "kperf", K8S_HISTORY_LABEL,
                   name, K8S_HISTORY_LABEL_KEY, keyhash, "annotations", K8S_HISTORY_ANNOT_KEY, key,
                   K8S_HISTORY_ANNOT_FILE, file, "data", K8S_HISTORY_DATA_KEY, text);
    if (!cm) {
        kp_err_set(err, "the report is not valid UTF-8 text");
        goto out;
    }
    if (kube_create(kc, &KUBE_RES_CONFIGMAPS, ns, cm, NULL, NULL, err) != 0) {
        kp_err_prefix(err, "storing configmap/%s in namespace %s", obj_name, ns);
        goto out;
    }
    if (retain(kc, ns, name, keyhash, keep < 1 ? 1 : keep, err) != 0) {
        kp_err_prefix(err, "pruning history %s", name);
        goto out;
    }
    if (obj_out)
        *obj_out = kp_xasprintf("configmap/%s (%zu KiB)", obj_name, (len + 1023) / 1024);
    rc = 0;
out:
    json_decref(cm);
    free(obj_name);
    free(both);
    return rc;
}

/* "a/b/c/d": four components of [A-Za-z0-9._-], none empty or starting with '.' (the key
 * folders of controller/report/history.h), so it names folders under a directory safely. */
static bool key_ok(const char *key)
{
    int parts = 1;
    size_t n = key ? strlen(key) : 0;

    if (n == 0 || key[0] == '/' || key[0] == '.' || key[n - 1] == '/' || strstr(key, "//") ||
        strstr(key, "/."))
        return false;
    for (const char *p = key; *p; p++)
        if (*p == '/')
            parts++;
        else if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
            return false;
    return parts == 4;
}

/* A run's file name as history_file_name makes it: [A-Za-z0-9._-], ends in .json. */
static bool file_ok(const char *f)
{
    size_t n = f ? strlen(f) : 0;

    if (n < 6 || n > 200 || f[0] == '.' || strcmp(f + n - 5, ".json") != 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)f[i]) && f[i] != '.' && f[i] != '_' && f[i] != '-')
            return false;
    return true;
}

/* One ConfigMap as {"key", "file", "text"} (new reference), or NULL when it is not a run's. */
static json_t *run_of(const json_t *cm)
{
    const char *key = annot(cm, K8S_HISTORY_ANNOT_KEY), *file = annot(cm, K8S_HISTORY_ANNOT_FILE);
    const char *text =
        json_string_value(json_object_get(json_object_get(cm, "data"), K8S_HISTORY_DATA_KEY));
    const char *obj = json_string_value(json_object_get(json_object_get(cm, "metadata"), "name"));

    if (!key_ok(key) || !file_ok(file) || !text) {
        kp_log(KP_LOG_WARN,
               "configmap/%s is not a kperf history run (annotations %s, %s, data %s): skipped",
               obj ? obj : "?", K8S_HISTORY_ANNOT_KEY, K8S_HISTORY_ANNOT_FILE,
               K8S_HISTORY_DATA_KEY);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:s, s:s}", "key", key, "file", file, "text", text, "object",
                     obj ? obj : "?");
}

static int by_run_file(const void *a, const void *b)
{
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "file")),
                  json_string_value(json_object_get(*(json_t *const *)b, "file")));
}

int k8s_history_runs(struct kube_client *kc, const char *ns, const char *name, json_t **runs,
                     size_t *skipped, struct kp_err *err)
{
    char *sel = kp_xasprintf("%s=%s", K8S_HISTORY_LABEL, name);
    struct kube_list_opts lo = {.label_selector = sel};
    json_t *items = NULL, *cm, **v;
    size_t i, n = 0;

    *runs = NULL;
    *skipped = 0;
    if (kube_list_all(kc, &KUBE_RES_CONFIGMAPS, ns, &lo, &items, err) != 0) {
        free(sel);
        return kp_err_prefix(err, "reading history %s in namespace %s", name, ns);
    }
    v = kp_xcalloc(json_array_size(items) + 1, sizeof(*v));
    json_array_foreach(items, i, cm)
    {
        if ((v[n] = run_of(cm)) != NULL)
            n++;
        else
            (*skipped)++;
    }
    qsort(v, n, sizeof(*v), by_run_file);
    *runs = json_array();
    for (i = 0; i < n; i++)
        json_array_append_new(*runs, v[i]);
    free(v);
    json_decref(items);
    free(sel);
    return 0;
}

static const struct kube_resource storage_classes = {"storage.k8s.io/v1", "storageclasses", 0};

/* The default StorageClass's name (new string), or NULL when there is none. */
static int default_class(struct kube_client *kc, char **name, struct kp_err *err)
{
    json_t *items = NULL, *sc;
    size_t i;

    *name = NULL;
    if (kube_list_all(kc, &storage_classes, NULL, NULL, &items, err) != 0)
        return kp_err_prefix(err, "listing StorageClasses (kubectl get storageclass)");
    json_array_foreach(items, i, sc)
    {
        const char *def = annot(sc, "storageclass.kubernetes.io/is-default-class");
        if (def && strcmp(def, "true") == 0 && !*name)
            *name = kp_xstrdup(
                json_string_value(json_object_get(json_object_get(sc, "metadata"), "name")));
    }
    json_decref(items);
    return 0;
}

json_t *k8s_history_claim(struct kube_client *kc, const char *ns, const char *storage_class,
                          struct kp_err *err)
{
    char *def = NULL;
    json_t *obj = NULL, *pvc;

    if (storage_class) {
        if (kube_get(kc, &storage_classes, NULL, storage_class, &obj, err) != 0) {
            if (kube_client_last(kc)->http_status == 404)
                kp_err_set(err,
                           "StorageClass %s does not exist in this cluster: name one that does "
                           "(kubectl get storageclass), or keep the history in ConfigMaps "
                           "(--history configmap:NAME, manifests/cronjob.yaml)",
                           storage_class);
            return NULL;
        }
        json_decref(obj);
    } else {
        if (default_class(kc, &def, err) != 0)
            return NULL;
        if (!def) {
            kp_err_set(err,
                       "this cluster has no default StorageClass (a new EKS cluster has none): "
                       "a claim naming none stays Pending; name one with --storage-class "
                       "(kubectl get storageclass), or keep the history in ConfigMaps "
                       "(--history configmap:NAME, manifests/cronjob.yaml)");
            return NULL;
        }
        kp_log(KP_LOG_INFO, "the claim gets the default StorageClass %s", def);
        free(def);
    }
    pvc = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:[s], s:{s:{s:s}}}}", "apiVersion", "v1",
                    "kind", "PersistentVolumeClaim", "metadata", "name", K8S_HISTORY_CLAIM,
                    "namespace", ns, "labels", "app.kubernetes.io/name", "kperf", "spec",
                    "accessModes", "ReadWriteOnce", "resources", "requests", "storage", "1Gi");
    if (storage_class)
        json_object_set_new(json_object_get(pvc, "spec"), "storageClassName",
                            json_string(storage_class));
    return pvc;
}
