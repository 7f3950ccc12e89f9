/* SPDX-License-Identifier: Apache-2.0 */
/* history_store.c - a history in a directory or in ConfigMaps (see history_store.h). */
#include "cmd/kperf/history_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_history.h"
#include "controller/kube/config.h"
#include "controller/kube/kube.h"
#include "controller/report/history.h"
#include "controller/report/report.h"

bool history_store_in_cluster(const char *loc)
{
    return k8s_history_is_cm(loc);
}

int history_store_check(const char *loc, struct kp_err *err)
{
    const char *name;

    if (!loc || !*loc)
        return kp_err_set(err, "empty history location (a directory or configmap:NAME)");
    return k8s_history_is_cm(loc) ? k8s_history_name(loc, &name, err) : 0;
}

static int client(const struct history_cluster *hc, struct kube_client **kc, const char **ns,
                  struct kp_err *err)
{
    struct kube_client_opts ko = {
        .kubeconfig = hc ? hc->kubeconfig : NULL,
        .context = hc ? hc->context : NULL,
        .ns = hc ? hc->ns : NULL,
    };

    if (kube_client_new(&ko, kc, err) != 0)
        return -1;
    *ns = kube_client_config(*kc)->ns;
    return 0;
}

int history_store_add(const char *loc, const struct history_cluster *hc, const struct report *rep,
                      const char *cluster, size_t keep, char **where, struct kp_err *err)
{
    struct kube_client *kc = NULL;
    const char *name, *ns;
    char *obj = NULL;
    int rc;

    if (!k8s_history_is_cm(loc))
        return history_add(loc, rep, cluster, keep, where, err);
    if (k8s_history_name(loc, &name, err) != 0 || client(hc, &kc, &ns, err) != 0)
        return -1;
    char *key = history_key(rep, cluster), *file = history_file_name(rep);
    size_t len;
    char *text = history_compact_json(rep, &len);
    rc = k8s_history_add(kc, ns, name, key, file, text, keep, &obj, err);
    free(key);
    free(file);
    free(text);
    if (rc == 0)
        *where = kp_xasprintf("%s in namespace %s", obj, ns);
    free(obj);
    kube_client_free(kc);
    return rc;
}

/* The ConfigMap runs' loader: "path" is a run's file name, its text found in arg's runs. */
static struct report *load_text(void *arg, const char *file, struct kp_err *err)
{
    const json_t *runs = arg, *r;
    size_t i;

    json_array_foreach(runs, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "file")), file) != 0)
            continue;
        json_error_t je;
        json_t *doc = json_loads(json_string_value(json_object_get(r, "text")), 0, &je);
        struct report *rep = NULL;
        if (!doc)
            kp_err_set(err, "configmap/%s: not JSON (%s)",
                       json_string_value(json_object_get(r, "object")), je.text);
        else if (!(rep = report_from_json(doc, err)))
            kp_err_prefix(err, "configmap/%s", json_string_value(json_object_get(r, "object")));
        json_decref(doc);
        return rep;
    }
    kp_err_set(err, "%s: no such run", file);
    return NULL;
}

/* The comparable runs of a configmap: history, oldest first, rep's own left out. */
static int cm_load(const char *loc, const struct history_cluster *hc, const struct report *rep,
                   const char *cluster, size_t want, bool strict, struct history_store_runs *out,
                   struct kp_err *err)
{
    struct kube_client *kc = NULL;
    const char *name, *ns;
    json_t *runs = NULL, *r;
    size_t skipped, i;
    char *prefix = history_comparable_prefix(rep, cluster), *own = history_file_name(rep);
    int rc = -1;

    if (k8s_history_name(loc, &name, err) != 0 || client(hc, &kc, &ns, err) != 0 ||
        k8s_history_runs(kc, ns, name, &runs, &skipped, err) != 0)
        goto out;
    out->names = kp_xcalloc(json_array_size(runs) + 1, sizeof(*out->names));
    json_array_foreach(runs, i, r)
    {
        const char *key = json_string_value(json_object_get(r, "key"));
        const char *file = json_string_value(json_object_get(r, "file"));
        /* comparable: the same cluster, node pair and CNI (one more component: its version) */
        if (strncmp(key, prefix, strlen(prefix)) == 0 && !strchr(key + strlen(prefix), '/') &&
            strcmp(file, own) != 0)
            out->names[out->n_names++] = kp_xstrdup(file);
    }
    kp_log(KP_LOG_INFO, "history %s in namespace %s: %zu run(s), %ld comparable%s", name, ns,
           json_array_size(runs), out->n_names,
           skipped ? " (ConfigMaps that are not runs skipped)" : "");
    rc = history_load_runs_with(out->names, out->n_names, want, strict, load_text, runs, &out->runs,
                                err);
    if (rc != 0)
        kp_err_prefix(err, "a run of %s cannot be read (--strict)", loc);
out:
    json_decref(runs);
    kube_client_free(kc);
    free(prefix);
    free(own);
    return rc;
}

int history_store_load(const char *loc, const struct history_cluster *hc, const struct report *rep,
                       const char *cluster, size_t want, bool strict,
                       struct history_store_runs *out, struct kp_err *err)
{
    memset(out, 0, sizeof(*out));
    if (history_store_in_cluster(loc))
        return cm_load(loc, hc, rep, cluster, want, strict, out, err);
    out->n_names = history_comparable(loc, rep, cluster, &out->names, err);
    if (out->n_names < 0) {
        out->n_names = 0;
        return -1;
    }
    if (history_load_runs(out->names, out->n_names, want, strict, &out->runs, err) != 0)
        return kp_err_prefix(err, "a run of %s cannot be read (--strict)", loc);
    return 0;
}

void history_store_runs_free(struct history_store_runs *r)
{
    history_runs_cleanup(&r->runs);
    history_paths_free(r->names, r->n_names);
    memset(r, 0, sizeof(*r));
}
