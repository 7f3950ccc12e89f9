/* SPDX-License-Identifier: Apache-2.0 */
/* run_flags_podtmpl.c - see run_flags_podtmpl.h. */
#include "cmd/kperf/run_flags_podtmpl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "controller/kube/kube_names.h"
#include "controller/run_options.h"

/* What one K=V list fills and how its items are checked. */
struct kv_target {
    const char *flag;
    struct run_label **arr;
    size_t *n;
    int (*check)(const char *key, const char *value, struct kp_err *err);
};

static int check_label(const char *key, const char *value, struct kp_err *err)
{
    if (kube_names_check_key(key, err) != 0)
        return -1;
    return kube_names_check_label_value(value, err);
}

static int check_annotation(const char *key, const char *value, struct kp_err *err)
{
    (void)value; /* any text */
    return kube_names_check_key(key, err);
}

static int check_resource(const char *key, const char *value, struct kp_err *err)
{
    double q;

    if (strcmp(key, "cpu") != 0 && strcmp(key, "memory") != 0 &&
        strcmp(key, "ephemeral-storage") != 0)
        return kp_err_set(err, "'%s' is not cpu, memory or ephemeral-storage", key);
    if (kube_names_parse_quantity(value, &q, err) != 0)
        return -1;
    if (q <= 0)
        return kp_err_set(err, "%s=%s: the quantity must be above zero", key, value);
    return 0;
}

static int add_kv(void *ctx, const char *item, struct kp_err *err)
{
    struct kv_target *t = ctx;
    const char *eq = strchr(item, '=');
    char *key;

    if (!eq || eq == item)
        return kp_err_set(err, "--%s: '%s' is not KEY=VALUE", t->flag, item);
    key = kp_xstrndup(item, (size_t)(eq - item));
    if (t->check(key, eq + 1, err) != 0) {
        free(key);
        return kp_err_prefix(err, "--%s", t->flag);
    }
    for (size_t i = 0; i < *t->n; i++) { /* a key given twice: the last value */
        if (strcmp((*t->arr)[i].key, key) == 0) {
            free((*t->arr)[i].value);
            (*t->arr)[i].value = kp_xstrdup(eq + 1);
            free(key);
            return 0;
        }
    }
    *t->arr = kp_xrealloc(*t->arr, (*t->n + 1) * sizeof(**t->arr));
    (*t->arr)[*t->n].key = key;
    (*t->arr)[*t->n].value = kp_xstrdup(eq + 1);
    (*t->n)++;
    return 0;
}

/* a comma list of K=V; annotation values may hold commas only through --pod-overlay */
static int kv_list(struct kv_target *t, const char *v, struct kp_err *err)
{
    char *copy = kp_xstrdup(v);
    char *save = NULL;
    int rc = 0;

    for (char *it = strtok_r(copy, ",", &save); it && rc == 0; it = strtok_r(NULL, ",", &save))
        rc = add_kv(t, it, err);
    free(copy);
    return rc;
}

int run_flags_pod(struct run_options *o, int id, const char *name, const char *v,
                  struct kp_err *err)
{
    struct kv_target t = {.flag = name};

    switch (id) {
    case RUN_POD_LABELS:
        t = (struct kv_target){name, &o->pod_labels, &o->n_pod_labels, check_label};
        return kv_list(&t, v, err);
    case RUN_POD_ANNOTATIONS:
        t = (struct kv_target){name, &o->pod_annotations, &o->n_pod_annotations, check_annotation};
        return kv_list(&t, v, err);
    case RUN_POD_REQUESTS:
        t = (struct kv_target){name, &o->agent_requests, &o->n_agent_requests, check_resource};
        return kv_list(&t, v, err);
    case RUN_POD_LIMITS:
        t = (struct kv_target){name, &o->agent_limits, &o->n_agent_limits, check_resource};
        return kv_list(&t, v, err);
    case RUN_POD_PRIORITY_CLASS:
        if (kube_names_check_subdomain(v, err) != 0)
            return kp_err_prefix(err, "--%s", name);
        free(o->priority_class);
        o->priority_class = kp_xstrdup(v);
        return 0;
    default: /* RUN_POD_OVERLAY: read by the backend; a missing file is a usage error now */
        if (access(v, R_OK) != 0)
            return kp_err_set(err, "--%s: cannot read %s", name, v);
        free(o->pod_overlay);
        o->pod_overlay = kp_xstrdup(v);
        return 0;
    }
}
