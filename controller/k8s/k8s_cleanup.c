/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_cleanup.c - label-based removal of kperf objects (see k8s_cleanup.h). */
#include "controller/k8s/k8s_cleanup.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_lease.h"
#include "controller/k8s/k8s_netpol.h"
#include "controller/k8s/k8s_objects.h"

const struct kube_resource K8S_RES_SERVICEACCOUNTS = {"v1", "serviceaccounts", 1};
const struct kube_resource K8S_RES_NETWORKPOLICIES = {"networking.k8s.io/v1", "networkpolicies", 1};

static const char *meta_str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

static const char *label_of(const json_t *o, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), k));
}

void k8s_cleanup_leftovers_free(struct k8s_leftover *l, size_t n)
{
    for (size_t i = 0; l && i < n; i++) {
        free(l[i].ns);
        free(l[i].run_id);
        free(l[i].lease_name);
        free(l[i].renewed);
        free(l[i].holder);
        k8s_lease_obs_cleanup(&l[i].obs);
    }
    free(l);
}

static struct k8s_leftover *add_leftover(struct k8s_leftover **out, size_t *n, const char *ns,
                                         const char *run_id, int ns_owned)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp((*out)[i].ns, ns) == 0 && strcmp((*out)[i].run_id, run_id) == 0) {
            (*out)[i].ns_owned |= ns_owned;
            return &(*out)[i];
        }
    }
    *out = kp_xrealloc(*out, (*n + 1) * sizeof(**out));
    memset(&(*out)[*n], 0, sizeof(**out));
    (*out)[*n].ns = kp_xstrdup(ns);
    (*out)[*n].run_id = kp_xstrdup(run_id);
    (*out)[*n].ns_owned = ns_owned;
    return &(*out)[(*n)++];
}

/* "what" of a Lease (renewTime or holderIdentity) as a new string, NULL when absent */
static char *lease_spec_str(const json_t *lease, const char *key)
{
    const char *v = json_string_value(json_object_get(json_object_get(lease, "spec"), key));

    return v ? kp_xstrdup(v) : NULL;
}

static void note_lease(struct k8s_leftover *l, const json_t *lease)
{
    free(l->renewed);
    free(l->holder);
    l->renewed = lease_spec_str(lease, "renewTime");
    if (!l->renewed)
        l->renewed = lease_spec_str(lease, "acquireTime");
    l->holder = lease_spec_str(lease, "holderIdentity");
}

/* the run Leases in items: each run with a readable one is K8S_LEASE_FOUND, its watching
 * started now */
static void add_leases(const json_t *items, struct k8s_leftover **out, size_t *n)
{
    uint64_t now = clock_now_ms();
    size_t i;
    json_t *it;

    json_array_foreach(items, i, it)
    {
        const char *rid = label_of(it, K8S_LABEL_RUN_ID);
        const char *ns = meta_str(it, "namespace");
        if (!ns || !rid || !meta_str(it, "name"))
            continue;
        struct k8s_leftover *l = add_leftover(out, n, ns, rid, 0);
        if (l->lease != K8S_LEASE_NONE || k8s_lease_obs_start(&l->obs, it, now) != 0)
            continue;
        l->lease = K8S_LEASE_FOUND;
        l->lease_name = kp_xstrdup(meta_str(it, "name"));
        note_lease(l, it);
    }
}

uint64_t k8s_cleanup_observe_ms(const struct k8s_leftover *l, size_t n)
{
    uint64_t most = 0;

    for (size_t i = 0; i < n; i++)
        if (l[i].lease == K8S_LEASE_FOUND && l[i].obs.period_ms > most)
            most = l[i].obs.period_ms;
    return most;
}

/* reads l's Lease once and updates its state; 1 while still undecided, 0 decided, -1 err */
static int observe_one(struct kube_client *kc, struct k8s_leftover *l, struct kp_err *err)
{
    json_t *o = NULL;
    enum k8s_lease_seen seen;

    if (kube_get(kc, &K8S_RES_LEASES, l->ns, l->lease_name, &o, err) != 0) {
        if (kube_client_last(kc)->http_status != 404)
            return kp_err_prefix(err, "watching the lease of run %s", l->run_id);
        kp_err_clear(err);
        o = NULL;
    }
    seen = k8s_lease_obs_update(&l->obs, o, clock_now_ms());
    if (o)
        note_lease(l, o);
    json_decref(o);
    switch (seen) {
    case K8S_LEASE_RENEWED:
        l->lease = K8S_LEASE_HELD;
        return 0;
    case K8S_LEASE_STILL:
        l->lease = K8S_LEASE_EXPIRED;
        return 0;
    case K8S_LEASE_DELETED:
        l->lease = K8S_LEASE_GONE;
        return 0;
    default:
        return 1;
    }
}

int k8s_cleanup_observe(struct kube_client *kc, struct k8s_leftover *l, size_t n, uint64_t max_ms,
                        struct kp_err *err)
{
    uint64_t end = clock_now_ms() + max_ms;

    for (;;) {
        int undecided = 0;
        for (size_t i = 0; i < n; i++) {
            int r;
            if (l[i].lease != K8S_LEASE_FOUND)
                continue;
            r = observe_one(kc, &l[i], err);
            if (r < 0)
                return -1;
            undecided |= r;
        }
        if (!undecided || (max_ms && clock_now_ms() >= end))
            return 0;
        clock_sleep_ms(500);
    }
}

int k8s_cleanup_drop_lease(struct kube_client *kc, const struct k8s_leftover *l, struct kp_err *err)
{
    struct kube_delete_opts d = {.missing_ok = 1, .grace_period_s = -1};

    if (!l->lease_name)
        return 0;
    if (kube_delete(kc, &K8S_RES_LEASES, l->ns, l->lease_name, &d, NULL, err) != 0)
        return kp_err_prefix(err, "deleting the lease of run %s", l->run_id);
    return 0;
}

/* adds the (namespace, run id) of every item; items borrowed */
static void add_items(const json_t *items, int namespaces, struct k8s_leftover **out, size_t *n)
{
    size_t i;
    json_t *it;

    json_array_foreach(items, i, it)
    {
        const char *rid = label_of(it, K8S_LABEL_RUN_ID);
        const char *ns = meta_str(it, namespaces ? "name" : "namespace");
        if (ns)
            add_leftover(out, n, ns, rid ? rid : "", namespaces);
    }
}

int k8s_cleanup_find(struct kube_client *kc, const char *ns, const char *run_id,
                     struct k8s_leftover **out, size_t *n, struct kp_err *err)
{
    static const struct kube_resource *const kinds[] = {
        &KUBE_RES_DAEMONSETS, &KUBE_RES_JOBS,    &KUBE_RES_PODS,
        &KUBE_RES_SERVICES,   &KUBE_RES_SECRETS, &K8S_RES_SERVICEACCOUNTS,
    };
    char *sel = k8s_objects_selector(run_id);
    struct kube_list_opts lo = {.label_selector = sel};
    const char *where = ns;
    json_t *items = NULL;
    int rc = -1;

    *out = NULL;
    *n = 0;
    /* namespaces kperf created; fine to lack the right when runs use -n */
    if (kube_list_all(kc, &KUBE_RES_NAMESPACES, NULL, &lo, &items, err) == 0) {
        add_items(items, 1, out, n);
        json_decref(items);
        items = NULL;
    } else if (kube_client_last(kc)->http_status != 403) {
        goto out;
    }
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        if (kube_list_all(kc, kinds[k], where, &lo, &items, err) != 0) {
            if (kube_client_last(kc)->http_status != 403 || where)
                goto out;
            /* cannot list all namespaces: look in the default one */
            where = kube_client_config(kc)->ns;
            k--;
            continue;
        }
        add_items(items, 0, out, n);
        json_decref(items);
        items = NULL;
    }
    /* NetworkPolicies of --netpol-readiness; lacking the right to list them (RBAC of an older
     * kperf) means none was created either */
    if (kube_list_all(kc, &K8S_RES_NETWORKPOLICIES, where, &lo, &items, err) == 0) {
        add_items(items, 0, out, n);
        json_decref(items);
        items = NULL;
    } else if (kube_client_last(kc)->http_status == 403 ||
               kube_client_last(kc)->http_status == 404) {
        kp_err_clear(err);
    } else {
        goto out;
    }
    /* the runs' Leases: which runs are still held by a live controller; lacking the right to
     * read them (RBAC of an older kperf) only loses that knowledge */
    if (kube_list_all(kc, &K8S_RES_LEASES, where, &lo, &items, err) == 0) {
        add_leases(items, out, n);
        json_decref(items);
        items = NULL;
    } else if (kube_client_last(kc)->http_status == 403 ||
               kube_client_last(kc)->http_status == 404) {
        kp_log(KP_LOG_INFO, "cannot read the runs' leases: %s", kp_err_msg(err));
        kp_err_clear(err);
    } else {
        goto out;
    }
    rc = 0;
out:
    if (rc != 0) {
        k8s_cleanup_leftovers_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    json_decref(items);
    free(sel);
    return rc;
}

/* Watch callback state: wait until a label/field selector matches nothing. */
struct gone_wait {
    json_t *present; /* name -> true */
    int synced;
};

static int gone_cb(void *arg, enum kube_event_type type, json_t *o, struct kp_err *err)
{
    struct gone_wait *g = arg;
    (void)err;

    if (type == KUBE_EVENT_ADDED || type == KUBE_EVENT_MODIFIED)
        json_object_set_new(g->present, meta_str(o, "name") ? meta_str(o, "name") : "",
                            json_true());
    else if (type == KUBE_EVENT_DELETED)
        json_object_del(g->present, meta_str(o, "name") ? meta_str(o, "name") : "");
    else if (type == KUBE_EVENT_SYNCED)
        g->synced = 1;
    return g->synced && json_object_size(g->present) == 0 ? 1 : 0;
}

/* Waits until nothing of res matches (label or field selector). 0 gone, -1 with err. */
static int wait_gone(struct kube_client *kc, const struct kube_resource *res, const char *ns,
                     const char *label_sel, const char *field_sel, uint64_t timeout_ms,
                     struct kp_err *err)
{
    struct gone_wait g = {.present = json_object()};
    struct kube_watch_opts wo = {.label_selector = label_sel,
                                 .field_selector = field_sel,
                                 .deadline_ms = timeout_ms,
                                 .stream_timeout_s = 60};
    int rc = kube_watch(kc, res, ns, &wo, gone_cb, &g, err);

    if (rc == 1) {
        const char *name;
        json_t *v;
        char left[256] = "";
        json_object_foreach(g.present, name, v)
        {
            if (strlen(left) + strlen(name) + 3 < sizeof(left)) {
                strcat(left, *left ? ", " : "");
                strcat(left, name);
            }
        }
        kp_err_set(err, "%s still present after %llu s: %s", res->plural,
                   (unsigned long long)(timeout_ms / 1000), left);
        rc = -1;
    }
    json_decref(g.present);
    return rc;
}

/* 1 when the object's spec.nodeName is one of nodes (NULL: none) */
static int on_nodes(const json_t *obj, const json_t *nodes)
{
    const char *node = json_string_value(json_object_get(json_object_get(obj, "spec"), "nodeName"));
    size_t i;
    json_t *n;

    json_array_foreach(nodes, i, n)
    {
        if (node && json_string_value(n) && strcmp(node, json_string_value(n)) == 0)
            return 1;
    }
    return 0;
}

static int delete_all_forcing(struct kube_client *kc, const struct kube_resource *res,
                              const char *ns, const char *sel, unsigned *n_deleted,
                              const json_t *force_nodes, struct kp_err *err);

static int delete_all(struct kube_client *kc, const struct kube_resource *res, const char *ns,
                      const char *sel, unsigned *n_deleted, struct kp_err *err)
{
    return delete_all_forcing(kc, res, ns, sel, n_deleted, NULL, err);
}

static int delete_all_forcing(struct kube_client *kc, const struct kube_resource *res,
                              const char *ns, const char *sel, unsigned *n_deleted,
                              const json_t *force_nodes, struct kp_err *err)
{
    struct kube_list_opts lo = {.label_selector = sel};
    struct kube_delete_opts dopts = {
        .propagation = KUBE_PROPAGATION_BACKGROUND, .grace_period_s = 1, .missing_ok = 1};
    json_t *items = NULL;
    size_t i;
    json_t *it;
    int rc = 0;

    /* list + delete by name: works with plain "delete" rights (no deletecollection) */
    if (kube_list_all(kc, res, ns, &lo, &items, err) != 0)
        return kp_err_prefix(err, "listing %s to delete", res->plural);
    json_array_foreach(items, i, it)
    {
        int gone = 0;
        dopts.grace_period_s = on_nodes(it, force_nodes) ? 0 : 1;
        if (kube_delete(kc, res, ns, meta_str(it, "name"), &dopts, &gone, err) != 0) {
            kp_err_prefix(err, "deleting %s %s/%s", res->plural, ns, meta_str(it, "name"));
            rc = -1;
            break;
        }
        if (n_deleted)
            (*n_deleted)++;
    }
    json_decref(items);
    return rc;
}

/* The run's Services in one request (deletecollection: --services makes thousands); -1 when
 * refused (RBAC of an older kperf, an API without it): delete_all then deletes them by name */
static int delete_services(struct kube_client *kc, const char *ns, const char *sel,
                           unsigned *n_deleted)
{
    struct kube_list_opts lo = {.label_selector = sel};
    struct kube_delete_opts dopts = {.propagation = KUBE_PROPAGATION_BACKGROUND,
                                     .grace_period_s = -1};
    struct kp_err derr;
    long count = 0;

    if (kube_delete_collection(kc, &KUBE_RES_SERVICES, ns, &lo, &dopts, &count, &derr) != 0) {
        kp_log(KP_LOG_DEBUG, "deletecollection of services: %s", kp_err_msg(&derr));
        return -1;
    }
    if (n_deleted && count > 0)
        *n_deleted += (unsigned)count;
    return 0;
}

static int delete_namespace(struct kube_client *kc, const char *ns, const char *sel,
                            uint64_t timeout_ms, unsigned *n_deleted, struct kp_err *err)
{
    struct kube_delete_opts dopts = {
        .propagation = KUBE_PROPAGATION_BACKGROUND, .grace_period_s = -1, .missing_ok = 1};
    char *field = kp_xasprintf("metadata.name=%s", ns);
    int rc = -1;

    for (int attempt = 0; attempt < 3; attempt++) {
        struct kp_err derr;
        if (kube_delete(kc, &KUBE_RES_NAMESPACES, NULL, ns, &dopts, NULL, &derr) == 0)
            break;
        /* a policy engine may refuse while anything is inside: empty it and retry */
        kp_log(KP_LOG_WARN,
               "deleting namespace %s was refused (%s); removing what is left "
               "inside and retrying",
               ns, kp_err_msg(&derr));
        if (attempt == 2 || kube_client_last(kc)->http_status == 0) {
            kp_err_set(err, "%s", kp_err_msg(&derr));
            goto out;
        }
        if (delete_all(kc, &KUBE_RES_PODS, ns, sel, n_deleted, err) != 0 ||
            wait_gone(kc, &KUBE_RES_PODS, ns, sel, NULL, timeout_ms, err) != 0)
            goto out;
    }
    if (n_deleted)
        (*n_deleted)++;
    if (wait_gone(kc, &KUBE_RES_NAMESPACES, NULL, NULL, field, timeout_ms, err) != 0)
        goto out;
    rc = 0;
out:
    free(field);
    return rc;
}

int k8s_cleanup_run(struct kube_client *kc, const char *ns, const char *run_id, int delete_ns,
                    uint64_t timeout_ms, unsigned *n_deleted, struct kp_err *err)
{
    return k8s_cleanup_run_forcing(kc, ns, run_id, delete_ns, timeout_ms, n_deleted, NULL, err);
}

int k8s_cleanup_run_forcing(struct kube_client *kc, const char *ns, const char *run_id,
                            int delete_ns, uint64_t timeout_ms, unsigned *n_deleted,
                            const json_t *force_nodes, struct kp_err *err)
{
    static const struct kube_resource *const workloads[] = {&KUBE_RES_JOBS, &KUBE_RES_DAEMONSETS};
    static const struct kube_resource *const rest[] = {&KUBE_RES_SERVICES, &KUBE_RES_SECRETS,
                                                       &K8S_RES_SERVICEACCOUNTS};
    char *sel = k8s_objects_selector(run_id);
    int rc = -1;

    for (size_t k = 0; k < 2; k++) {
        if (delete_all(kc, workloads[k], ns, sel, n_deleted, err) != 0)
            goto out;
    }
    /* pods of Jobs deleted with orphan semantics elsewhere, or bare pods: delete them too;
     * without the right to, the garbage collector still removes the workloads' pods */
    if (delete_all_forcing(kc, &KUBE_RES_PODS, ns, sel, n_deleted, force_nodes, err) != 0) {
        if (kube_client_last(kc)->http_status != 403)
            goto out;
        kp_log(KP_LOG_INFO, "%s; waiting for the garbage collector instead", kp_err_msg(err));
        kp_err_clear(err);
    }
    if (wait_gone(kc, &KUBE_RES_PODS, ns, sel, NULL, timeout_ms, err) != 0)
        goto out;
    /* before the Services, Secrets and ServiceAccounts: a run killed here is still found by
     * them (k8s_cleanup_find), and its policy with it */
    if (delete_all(kc, &K8S_RES_NETWORKPOLICIES, ns, sel, n_deleted, err) != 0) {
        if (kube_client_last(kc)->http_status != 403 && kube_client_last(kc)->http_status != 404)
            goto out;
        kp_err_clear(err); /* RBAC of an older kperf: no NetworkPolicy was created either */
    }
    for (size_t k = 0; k < 3; k++) {
        if (k == 0 && delete_services(kc, ns, sel, n_deleted) == 0)
            continue;
        if (delete_all(kc, rest[k], ns, sel, n_deleted, err) != 0)
            goto out;
    }
    if (delete_all(kc, &K8S_RES_LEASES, ns, sel, n_deleted, err) != 0) {
        if (kube_client_last(kc)->http_status != 403 && kube_client_last(kc)->http_status != 404)
            goto out;
        kp_err_clear(err); /* RBAC of an older kperf: no Lease was created either */
    }
    if (delete_ns && delete_namespace(kc, ns, sel, timeout_ms, n_deleted, err) != 0)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        kp_err_prefix(err, "cleaning up run %s in namespace %s", run_id ? run_id : "(all)", ns);
    free(sel);
    return rc;
}
