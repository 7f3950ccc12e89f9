/* SPDX-License-Identifier: Apache-2.0 */
/* kube_ops.c - list (paged, one page held at a time), create (strict, reconciled on retry),
 * patch, delete and deletecollection. See kube.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/kube/kube.h"
#include "controller/kube/kube_int.h"

#define DEFAULT_PAGE 500

static char *with_query(const char *path, const char *q)
{
    return q && *q ? kp_xasprintf("%s?%s", path, q) : kp_xstrdup(path);
}

/* Delivers a page's items to fn. Returns 0, 1 (stop) or -1. */
static int deliver(json_t *page, kube_item_fn *fn, void *arg, struct kp_err *err)
{
    json_t *items = json_object_get(page, "items");
    size_t i;
    json_t *it;

    json_array_foreach(items, i, it)
    {
        int r = fn(arg, it, err);
        if (r != 0)
            return r;
    }
    return 0;
}

static char *page_path(const char *base, const struct kube_list_opts *o, const char *cont)
{
    char limit[32];
    char *q = NULL, *path;

    snprintf(limit, sizeof(limit), "%u", o->page_size ? o->page_size : DEFAULT_PAGE);
    kube_query_add(&q, "labelSelector", o->label_selector);
    kube_query_add(&q, "fieldSelector", o->field_selector);
    kube_query_add(&q, "limit", limit);
    if (cont)
        kube_query_add(&q, "continue", cont);
    else
        kube_query_add(&q, "resourceVersion", o->resource_version);
    path = with_query(base, q);
    free(q);
    return path;
}

/* Replaces *s with a copy of page.metadata[key] (NULL when absent or empty). */
static void take_meta(char **s, json_t *page, const char *key)
{
    const char *v = json_string_value(json_object_get(json_object_get(page, "metadata"), key));
    free(*s);
    *s = v && *v ? kp_xstrdup(v) : NULL;
}

int kube_list(struct kube_client *c, const struct kube_resource *res, const char *ns,
              const struct kube_list_opts *opts, kube_item_fn *fn, void *arg, char **rv_out,
              struct kp_err *err)
{
    static const struct kube_list_opts none = {0};
    char *base = kube_path(res, ns, NULL, NULL);
    char *what = kube_what("list", res, ns, NULL);
    char *cont = NULL, *rv = NULL;
    uint64_t sent = http_request_count(c->http);
    unsigned retries = 0;
    int r, rc = -1;

    if (rv_out)
        *rv_out = NULL;
    if (!opts)
        opts = &none;
    do {
        char *path = page_path(base, opts, cont);
        struct kube_call call = {"GET", path, NULL, NULL, HTTP_RETRY_IDEMPOTENT, what};
        json_t *page = NULL;

        r = kube_call(c, &call, &page, err);
        free(path);
        retries += c->last.retries;
        if (r != 0)
            goto out;
        take_meta(&rv, page, "resourceVersion");
        take_meta(&cont, page, "continue");
        r = deliver(page, fn, arg, err); /* one page at a time: the only one we hold */
        json_decref(page);
        if (r < 0) {
            kp_err_prefix(err, "%s", what);
            goto out;
        }
    } while (r == 0 && cont);
    if (rv_out) {
        *rv_out = rv;
        rv = NULL;
    }
    rc = 0;
out:
    c->last.requests = (unsigned)(http_request_count(c->http) - sent); /* pages + retries */
    c->last.retries = retries;
    free(cont);
    free(rv);
    free(what);
    free(base);
    return rc;
}

static int collect(void *arg, json_t *item, struct kp_err *err)
{
    (void)err;
    json_array_append(arg, item);
    return 0;
}

int kube_list_all(struct kube_client *c, const struct kube_resource *res, const char *ns,
                  const struct kube_list_opts *opts, json_t **items, struct kp_err *err)
{
    json_t *arr = json_array();

    *items = NULL;
    if (kube_list(c, res, ns, opts, collect, arr, NULL, err) != 0) {
        json_decref(arr);
        return -1;
    }
    *items = arr;
    return 0;
}

static char *write_query(const struct kube_write_opts *o)
{
    char *q = NULL;

    kube_query_add(&q, "fieldValidation", "Strict");
    kube_query_add(&q, "fieldManager", o && o->field_manager ? o->field_manager : "kperf");
    if (o && o->dry_run)
        kube_query_add(&q, "dryRun", "All");
    return q;
}

/* After a retried create met 409: the existing object is ours when it carries every label of
 * the one we sent (at least one). Returns 0 with *out (new reference) or -1. */
static int reconcile(struct kube_client *c, const struct kube_resource *res, const char *ns,
                     json_t *obj, json_t **out)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    json_t *want = json_object_get(meta, "labels");
    json_t *have = NULL, *hl;
    struct kp_err ignored;
    const char *k;
    json_t *v;
    int ours = 1;

    /* without labels nothing proves the object is ours */
    if (!name || json_object_size(want) == 0 || kube_get(c, res, ns, name, &have, &ignored) != 0)
        return -1;
    hl = json_object_get(json_object_get(have, "metadata"), "labels");
    json_object_foreach(want, k, v)
    {
        if (!json_equal(json_object_get(hl, k), v))
            ours = 0;
    }
    if (!ours) {
        json_decref(have);
        return -1;
    }
    *out = have;
    return 0;
}

int kube_create(struct kube_client *c, const struct kube_resource *res, const char *ns, json_t *obj,
                const struct kube_write_opts *opts, json_t **out, struct kp_err *err)
{
    char *base = kube_path(res, ns, NULL, NULL);
    char *what =
        kube_what("create", res, ns,
                  json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")));
    char *q = write_query(opts);
    char *path = with_query(base, q);
    struct kube_call call = {"POST", path, obj, NULL, HTTP_RETRY_CREATE, what};
    json_t *created = NULL;
    int rc;

    if (out)
        *out = NULL;
    rc = kube_call(c, &call, &created, err);
    if (rc != 0 && c->last.http_status == 409 && !strcmp(c->last.reason, "AlreadyExists") &&
        c->last_maybe_done && !(opts && opts->dry_run)) {
        struct kube_last keep = c->last;
        if (reconcile(c, res, ns, obj, &created) == 0) {
            kp_err_clear(err);
            rc = 0;
        }
        c->last = keep;
    }
    if (rc == 0 && out)
        *out = created;
    else
        json_decref(created);
    free(path);
    free(q);
    free(what);
    free(base);
    return rc;
}

int kube_patch(struct kube_client *c, const struct kube_resource *res, const char *ns,
               const char *name, json_t *patch, const struct kube_write_opts *opts, json_t **out,
               struct kp_err *err)
{
    char *base = kube_path(res, ns, name, NULL);
    char *what = kube_what("patch", res, ns, name);
    char *q = write_query(opts);
    char *path = with_query(base, q);
    struct kube_call call = {
        "PATCH", path, patch, "application/merge-patch+json", HTTP_RETRY_IDEMPOTENT, what};
    int rc = kube_call(c, &call, out, err);

    free(path);
    free(q);
    free(what);
    free(base);
    return rc;
}

static char *delete_query(const struct kube_delete_opts *o, const struct kube_list_opts *sel)
{
    static const char *const policies[] = {NULL, "Background", "Foreground", "Orphan"};
    char *q = NULL;
    char grace[32];

    if (sel) {
        kube_query_add(&q, "labelSelector", sel->label_selector);
        kube_query_add(&q, "fieldSelector", sel->field_selector);
    }
    kube_query_add(&q, "propagationPolicy",
                   o ? policies[o->propagation & 3] : policies[KUBE_PROPAGATION_BACKGROUND]);
    if (o && o->grace_period_s >= 0) {
        snprintf(grace, sizeof(grace), "%ld", o->grace_period_s);
        kube_query_add(&q, "gracePeriodSeconds", grace);
    }
    if (o && o->dry_run)
        kube_query_add(&q, "dryRun", "All");
    return q;
}

int kube_delete(struct kube_client *c, const struct kube_resource *res, const char *ns,
                const char *name, const struct kube_delete_opts *opts, int *gone,
                struct kp_err *err)
{
    char *base = kube_path(res, ns, name, NULL);
    char *what = kube_what("delete", res, ns, name);
    char *q = delete_query(opts, NULL);
    char *path = with_query(base, q);
    struct kube_call call = {"DELETE", path, NULL, NULL, HTTP_RETRY_IDEMPOTENT, what};
    json_t *doc = NULL;
    int rc;

    if (gone)
        *gone = 0;
    rc = kube_call(c, &call, &doc, err);
    if (rc != 0 && c->last.http_status == 404 &&
        ((opts && opts->missing_ok) || c->last_maybe_done)) {
        kp_err_clear(err);
        rc = 0;
        if (gone)
            *gone = 1;
    } else if (rc == 0 && gone) {
        const char *kind = json_string_value(json_object_get(doc, "kind"));
        json_t *meta = json_object_get(doc, "metadata");
        *gone = (kind && !strcmp(kind, "Status")) || !json_object_get(meta, "deletionTimestamp");
    }
    json_decref(doc);
    free(path);
    free(q);
    free(what);
    free(base);
    return rc;
}

int kube_delete_collection(struct kube_client *c, const struct kube_resource *res, const char *ns,
                           const struct kube_list_opts *sel, const struct kube_delete_opts *opts,
                           long *count, struct kp_err *err)
{
    char *base = kube_path(res, ns, NULL, NULL);
    char *what = kube_what("deletecollection", res, ns, NULL);
    char *q = delete_query(opts, sel);
    char *path = with_query(base, q);
    struct kube_call call = {"DELETE", path, NULL, NULL, HTTP_RETRY_IDEMPOTENT, what};
    json_t *doc = NULL;
    int rc = kube_call(c, &call, &doc, err);

    if (rc == 0 && count) {
        json_t *items = json_object_get(doc, "items");
        *count = json_is_array(items) ? (long)json_array_size(items) : -1;
    }
    json_decref(doc);
    free(path);
    free(q);
    free(what);
    free(base);
    return rc;
}
