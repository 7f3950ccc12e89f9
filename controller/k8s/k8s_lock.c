/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_lock.c - the cluster lock (see k8s_lock.h). */
#include "controller/k8s/k8s_lock.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/k8s/k8s_objects.h"

#define LOCK_POLL_MS     500   /* a read of the lock every half second, as cleanup's watching */
#define LOCK_PROGRESS_MS 15000 /* --wait-for-lock: one line this often */

static const char *spec_str(const json_t *lock, const char *key)
{
    return json_string_value(json_object_get(json_object_get(lock, "spec"), key));
}

enum k8s_lock_view k8s_lock_judge(struct k8s_lock_watch *w, const json_t *lock, uint64_t now_ms)
{
    const char *h = spec_str(lock, "holderIdentity");

    if (!lock || !h || !*h) {
        k8s_lock_watch_cleanup(w);
        return K8S_LOCK_FREE;
    }
    if (!w->started) {
        if (k8s_lease_obs_start(&w->obs, lock, now_ms) != 0)
            return K8S_LOCK_EXPIRED; /* no lease period: not a lock anyone renews */
        w->started = 1;
        return K8S_LOCK_WATCHING;
    }
    switch (k8s_lease_obs_update(&w->obs, lock, now_ms)) {
    case K8S_LEASE_RENEWED:
        k8s_lease_obs_cleanup(&w->obs);
        if (k8s_lease_obs_start(&w->obs, lock, now_ms) != 0)
            w->started = 0;
        return K8S_LOCK_HELD;
    case K8S_LEASE_STILL:
        return K8S_LOCK_EXPIRED;
    case K8S_LEASE_DELETED:
        k8s_lock_watch_cleanup(w);
        return K8S_LOCK_FREE;
    default:
        return K8S_LOCK_WATCHING;
    }
}

void k8s_lock_watch_cleanup(struct k8s_lock_watch *w)
{
    k8s_lease_obs_cleanup(&w->obs);
    w->started = 0;
}

json_t *k8s_lock_object(const char *ns, const json_t *old, const char *holder, const char *run_id,
                        int duration_s, const struct timespec *now)
{
    const json_t *old_md = json_object_get(old, "metadata");
    const char *rv = json_string_value(json_object_get(old_md, "resourceVersion"));
    json_int_t moves =
        json_integer_value(json_object_get(json_object_get(old, "spec"), "leaseTransitions"));
    char t[40];
    json_t *o;

    k8s_lease_microtime(now, t, sizeof(t));
    /* no managed-by label: the lock is not a run's object (kperf cleanup and the leftovers
     * search leave it alone); its run-id label says whose it is */
    o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:{s:s, s:i, s:s, s:s, s:I}}",
                  "apiVersion", "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name",
                  K8S_LOCK_NAME, "namespace", ns, "labels", "app.kubernetes.io/name", "kperf",
                  K8S_LABEL_RUN_ID, run_id, "spec", "holderIdentity", holder,
                  "leaseDurationSeconds", duration_s, "acquireTime", t, "renewTime", t,
                  "leaseTransitions", old ? moves + 1 : (json_int_t)0);
    if (rv)
        json_object_set_new(json_object_get(o, "metadata"), "resourceVersion", json_string(rv));
    return o;
}

void k8s_lock_describe(const json_t *lock, char *buf, size_t len)
{
    const json_t *md = json_object_get(lock, "metadata");
    const char *h = spec_str(lock, "holderIdentity");
    const char *since = spec_str(lock, "acquireTime");

    const char *ns = json_string_value(json_object_get(md, "namespace"));

    snprintf(buf, len, "the cluster lock %s/%s is held by %s since %s", ns ? ns : "?",
             K8S_LOCK_NAME, h ? h : "?", since ? since : "?");
}

void k8s_lock_holder(const char *run_id, char *buf, size_t len)
{
    char host[256] = "";
    const struct passwd *pw = getpwuid(getuid());
    const char *user = getenv("USER");

    if (!user || !*user)
        user = pw ? pw->pw_name : "kperf";
    gethostname(host, sizeof(host) - 1);
    snprintf(buf, len, "%s@%s run %s", user, host, run_id);
}

/* One attempt to write the lock as ours: create (old NULL) or replace old. 0 taken; 1 lost the
 * race (409: read it again); 2 namespace missing (create 404); 3 forbidden; -1 err. */
static int take(struct kube_client *kc, const char *ns, const json_t *old,
                const struct k8s_lock_opts *o, json_t **stored, struct kp_err *err)
{
    struct timespec now;
    json_t *obj;
    int rc = 0;
    long status;

    clock_gettime(CLOCK_REALTIME, &now);
    obj = k8s_lock_object(ns, old, o->holder, o->run_id, o->duration_s, &now);
    if (!old) {
        rc = kube_create(kc, &K8S_RES_LEASES, ns, obj, NULL, stored, err);
    } else {
        char *path = kube_path(&K8S_RES_LEASES, ns, K8S_LOCK_NAME, NULL);
        rc = kube_request(kc, "PUT", path, obj, stored, err);
        free(path);
    }
    json_decref(obj);
    if (rc == 0)
        return 0;
    status = kube_client_last(kc)->http_status;
    if (status == 409 || (old && status == 404)) {
        kp_err_clear(err);
        return 1;
    }
    if (status == 404)
        return 2;
    if (status == 403)
        return 3;
    return -1;
}

/* One look at the lock in ns: 0 taken (*stored), 1 not yet (*view says why; *last the lock
 * read, replaced), 2 no namespace, 3 forbidden, -1 err. */
static int attempt(struct kube_client *kc, const char *ns, const struct k8s_lock_opts *o,
                   struct k8s_lock_watch *w, json_t **last, enum k8s_lock_view *view,
                   json_t **stored, struct kp_err *err)
{
    json_t *cur = NULL;

    if (kube_get(kc, &K8S_RES_LEASES, ns, K8S_LOCK_NAME, &cur, err) != 0) {
        long status = kube_client_last(kc)->http_status;
        if (status == 403)
            return 3;
        if (status != 404)
            return -1;
        kp_err_clear(err);
        cur = NULL;
    }
    *view = k8s_lock_judge(w, cur, clock_now_ms());
    json_decref(*last);
    *last = cur;
    if (*view == K8S_LOCK_FREE || *view == K8S_LOCK_EXPIRED) {
        int rc = take(kc, ns, cur, o, stored, err);
        if (rc == 0 && *view == K8S_LOCK_EXPIRED)
            kp_log(KP_LOG_WARN,
                   "took over the cluster lock from %s: not renewed during %llu s of watching "
                   "(its kperf was killed)",
                   spec_str(cur, "holderIdentity"), (unsigned long long)(w->obs.period_ms / 1000));
        if (rc != 1)
            return rc;
        k8s_lock_watch_cleanup(w);
    }
    return 1;
}

/* the lock's lease period in ms (0 when unreadable) */
static uint64_t w_period_ms(const json_t *lock)
{
    json_int_t s =
        json_integer_value(json_object_get(json_object_get(lock, "spec"), "leaseDurationSeconds"));

    return s > 0 ? (uint64_t)s * 1000u : 0;
}

/* The wait between looks: says, when it is time, who holds the lock; -1 with err when the run
 * must stop (a live holder and no --wait-for-lock, the wait is over, a signal). */
static int between(const struct k8s_lock_opts *o, const json_t *last, enum k8s_lock_view view,
                   uint64_t start, uint64_t *said, struct kp_err *err)
{
    uint64_t now = clock_now_ms();
    char who[400];

    k8s_lock_describe(last, who, sizeof(who));
    if (o->stop && *o->stop)
        return kp_err_set(err, "interrupted while waiting for the cluster lock (%s)", who);
    if (view == K8S_LOCK_HELD && !o->wait_ms)
        return kp_err_set(err,
                          "%s (renewed while watched: that run is in progress); one run at a time "
                          "per cluster: wait for it with --wait-for-lock DUR, or run later",
                          who);
    if (o->wait_ms && now - start >= o->wait_ms)
        return kp_err_set(err, "%s; gave up after --wait-for-lock %llu s", who,
                          (unsigned long long)(o->wait_ms / 1000));
    if (o->wait_ms && (*said == 0 || now - *said >= LOCK_PROGRESS_MS)) {
        kp_log(KP_LOG_WARN, "waiting for the cluster lock: %s (%llu s of %llu s waited)", who,
               (unsigned long long)((now - start) / 1000), (unsigned long long)(o->wait_ms / 1000));
        *said = now;
    } else if (!o->wait_ms && *said == 0) {
        kp_log(KP_LOG_WARN, "%s: watching it (up to %llu s) to see whether that run is alive", who,
               (unsigned long long)(w_period_ms(last) / 1000));
        *said = now;
    }
    clock_sleep_ms(LOCK_POLL_MS);
    return 0;
}

int k8s_lock_acquire(struct kube_client *kc, const struct k8s_lock_opts *o, json_t **stored,
                     struct kp_err *err)
{
    const char *ns = K8S_LOCK_NS;
    struct k8s_lock_watch w = {0};
    enum k8s_lock_view view = K8S_LOCK_FREE;
    json_t *last = NULL;
    uint64_t start = clock_now_ms(), said = 0;
    int rc;

    *stored = NULL;
    for (;;) {
        rc = attempt(kc, ns, o, &w, &last, &view, stored, err);
        if (rc == 2 && strcmp(ns, K8S_LOCK_NS) == 0) { /* no namespace kperf: the fallback */
            kp_err_clear(err);
            ns = K8S_LOCK_NS_FALLBACK;
            k8s_lock_watch_cleanup(&w);
            continue;
        }
        if (rc == 3) {
            kp_err_prefix(err, "the cluster lock %s/%s", ns, K8S_LOCK_NAME);
            rc = 1;
            break;
        }
        if (rc != 1)
            break;
        if (between(o, last, view, start, &said, err) != 0) {
            rc = -1;
            break;
        }
    }
    if (rc == -1 && kube_client_last(kc)->http_status == 404 && !*stored)
        kp_err_prefix(err, "cluster lock in namespace %s", ns);
    k8s_lock_watch_cleanup(&w);
    json_decref(last);
    return rc;
}

int k8s_lock_forget(struct kube_client *kc, const char *run_id, struct kp_err *err)
{
    static const char *const where[] = {K8S_LOCK_NS, K8S_LOCK_NS_FALLBACK};

    for (size_t i = 0; i < 2; i++) {
        json_t *lock = NULL;
        const char *rid;
        struct kube_delete_opts d = {.missing_ok = 1, .grace_period_s = -1};
        if (kube_get(kc, &K8S_RES_LEASES, where[i], K8S_LOCK_NAME, &lock, err) != 0) {
            kp_err_clear(err); /* none there, or no right to look: nothing of ours to drop */
            continue;
        }
        rid = json_string_value(json_object_get(
            json_object_get(json_object_get(lock, "metadata"), "labels"), K8S_LABEL_RUN_ID));
        if (rid && strcmp(rid, run_id) == 0 &&
            kube_delete(kc, &K8S_RES_LEASES, where[i], K8S_LOCK_NAME, &d, NULL, err) != 0) {
            json_decref(lock);
            return kp_err_prefix(err, "deleting the cluster lock of run %s", run_id);
        }
        json_decref(lock);
    }
    return 0;
}
