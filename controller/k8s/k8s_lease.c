/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_lease.c - the run's Lease and its renewal thread (see k8s_lease.h). */
#include "controller/k8s/k8s_lease.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/portable.h"

const struct kube_resource K8S_RES_LEASES = {"coordination.k8s.io/v1", "leases", 1};

char *k8s_lease_name(const char *run_id)
{
    return kp_xasprintf("kperf-run-%s", run_id);
}

void k8s_lease_microtime(const struct timespec *t, char *buf, size_t len)
{
    struct tm tm;
    size_t n;

    gmtime_r(&t->tv_sec, &tm);
    n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    if (n > 0 && n < len)
        snprintf(buf + n, len - n, ".%06dZ", (int)((t->tv_nsec / 1000) % 1000000));
}

json_t *k8s_lease_object(const struct k8s_objects_opts *opts, const char *holder, int duration_s,
                         const struct timespec *now)
{
    char *name = k8s_lease_name(opts->run_id);
    char t[40];
    json_t *o;

    k8s_lease_microtime(now, t, sizeof(t));
    o = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:{s:s, s:i, s:s, s:s, s:i}}", "apiVersion",
                  "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", name, "namespace",
                  opts->ns, "labels", k8s_objects_labels(opts), "spec", "holderIdentity", holder,
                  "leaseDurationSeconds", duration_s, "acquireTime", t, "renewTime", t,
                  "leaseTransitions", 0);
    free(name);
    return o;
}

/* "holder|renewTime|transitions": what a renewal changes. Caller frees. */
static char *lease_record(const json_t *lease)
{
    const json_t *spec = json_object_get(lease, "spec");
    const char *h = json_string_value(json_object_get(spec, "holderIdentity"));
    const char *r = json_string_value(json_object_get(spec, "renewTime"));

    return kp_xasprintf("%s|%s|%lld", h ? h : "", r ? r : "",
                        (long long)json_integer_value(json_object_get(spec, "leaseTransitions")));
}

int k8s_lease_obs_start(struct k8s_lease_obs *o, const json_t *lease, uint64_t now_ms)
{
    const json_t *dur = json_object_get(json_object_get(lease, "spec"), "leaseDurationSeconds");

    memset(o, 0, sizeof(*o));
    if (!json_is_integer(dur) || json_integer_value(dur) <= 0)
        return -1;
    o->record = lease_record(lease);
    o->since_ms = now_ms;
    o->period_ms = (uint64_t)json_integer_value(dur) * 1000u;
    return 0;
}

enum k8s_lease_seen k8s_lease_obs_update(struct k8s_lease_obs *o, const json_t *lease,
                                         uint64_t now_ms)
{
    char *rec;

    if (o->seen != K8S_LEASE_WATCHING || !o->record)
        return o->seen;
    if (!lease)
        return o->seen = K8S_LEASE_DELETED;
    rec = lease_record(lease);
    if (strcmp(rec, o->record) != 0)
        o->seen = K8S_LEASE_RENEWED;
    else if (now_ms - o->since_ms >= o->period_ms)
        o->seen = K8S_LEASE_STILL;
    free(rec);
    return o->seen;
}

void k8s_lease_obs_cleanup(struct k8s_lease_obs *o)
{
    free(o->record);
    o->record = NULL;
}

struct k8s_lease_keeper {
    struct kube_client *kc; /* the thread's own */
    char *ns;
    char *name;
    char *holder;  /* our holderIdentity: another one on a conflict means we lost the Lease */
    json_t *lease; /* last stored state (for PUT with its resourceVersion) */
    int renew_s;
    k8s_lease_lost_fn *on_lost;
    void *arg;
    int deleted;  /* the watch saw the Lease deleted */
    int no_watch; /* the watch was refused (RBAC of an older kperf): read every second */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    char *lost; /* why the run lost its Lease; set once, under mu */
    volatile sig_atomic_t abort;
};

/* Records why the Lease is lost (once) and tells the run. The namespace is read to say
 * whether the Lease went alone or with the whole namespace. */
static void lost(struct k8s_lease_keeper *k)
{
    json_t *ns = NULL;
    struct kp_err err;
    int gone = 0;
    char *why;

    if (kube_get(k->kc, &KUBE_RES_NAMESPACES, NULL, k->ns, &ns, &err) != 0)
        gone = kube_client_last(k->kc)->http_status == 404;
    else
        gone = json_object_get(json_object_get(ns, "metadata"), "deletionTimestamp") != NULL;
    json_decref(ns);
    if (gone)
        why = kp_xasprintf("namespace %s was deleted (by kperf cleanup --force?) while the run "
                           "was using it",
                           k->ns);
    else
        why = kp_xasprintf("the run's lease %s in namespace %s was deleted (by kperf cleanup "
                           "--force?): its objects are being removed under it",
                           k->name, k->ns);
    pthread_mutex_lock(&k->mu);
    if (k->lost || k->stop) {
        pthread_mutex_unlock(&k->mu);
        free(why);
        return;
    }
    k->lost = why;
    pthread_mutex_unlock(&k->mu);
    kp_log(KP_LOG_DEBUG, "lease keeper: %s", why);
    if (k->on_lost)
        k->on_lost(k->arg);
}

/* one renewal: PUT with a fresh renewTime; on a conflict, read it again and retry once.
 * A Lease that is gone (404) is lost. */
static void renew(struct k8s_lease_keeper *k)
{
    char *path = kube_path(&K8S_RES_LEASES, k->ns, k->name, NULL);
    struct kp_err err;

    for (int attempt = 0; attempt < 2; attempt++) {
        struct timespec now;
        char t[40];
        json_t *out = NULL;

        clock_gettime(CLOCK_REALTIME, &now);
        k8s_lease_microtime(&now, t, sizeof(t));
        json_object_set_new(json_object_get(k->lease, "spec"), "renewTime", json_string(t));
        if (kube_request(k->kc, "PUT", path, k->lease, &out, &err) == 0 && out) {
            json_decref(k->lease);
            k->lease = out;
            break;
        }
        json_decref(out);
        if (kube_client_last(k->kc)->http_status == 404) {
            lost(k);
            break;
        }
        if (kube_client_last(k->kc)->http_status == 409 &&
            kube_get(k->kc, &K8S_RES_LEASES, k->ns, k->name, &out, &err) == 0) {
            const char *h =
                json_string_value(json_object_get(json_object_get(out, "spec"), "holderIdentity"));
            json_decref(k->lease);
            k->lease = out;
            if (!h || strcmp(h, k->holder) != 0) { /* taken over: it is someone else's now */
                lost(k);
                break;
            }
            continue;
        }
        if (!k->abort)
            kp_log(KP_LOG_WARN, "renewing lease %s/%s: %s", k->ns, k->name, kp_err_msg(&err));
        break;
    }
    free(path);
}

static int lease_event(void *arg, enum kube_event_type type, json_t *o, struct kp_err *err)
{
    struct k8s_lease_keeper *k = arg;
    (void)o, (void)err;

    if (type != KUBE_EVENT_DELETED)
        return 0;
    k->deleted = 1; /* lost() reads the namespace: not from inside this client's transfer */
    return 1;
}

/* Watches the Lease for ms (from the last version this thread stored); returns early when it
 * is deleted (lost) or the keeper stops. */
static void watch_lease(struct k8s_lease_keeper *k, uint64_t ms)
{
    char *field = kp_xasprintf("metadata.name=%s", k->name);
    const char *rv = json_string_value(
        json_object_get(json_object_get(k->lease, "metadata"), "resourceVersion"));
    char *resume = rv ? kp_xstrdup(rv) : NULL;
    struct kube_watch_opts wo = {.field_selector = field,
                                 .resource_version = resume,
                                 .stream_timeout_s = (long)(ms / 1000) + 1,
                                 .deadline_ms = ms};
    struct kp_err err;

    if (kube_watch(k->kc, &K8S_RES_LEASES, k->ns, &wo, lease_event, k, &err) < 0 && !k->abort) {
        if (kube_client_last(k->kc)->http_status == 403) {
            kp_log(KP_LOG_INFO,
                   "%s; reading the lease every second instead (grant watch on "
                   "leases as in manifests/rbac.yaml)",
                   kp_err_msg(&err));
            k->no_watch = 1;
        } else {
            kp_log(KP_LOG_DEBUG, "watching the run's lease: %s", kp_err_msg(&err));
            k->no_watch = 2; /* this period only: read it instead */
        }
    }
    if (k->deleted)
        lost(k);
    free(resume);
    free(field);
}

/* Without a watch: reads the Lease once (404: lost). */
static void read_lease(struct k8s_lease_keeper *k)
{
    json_t *o = NULL;
    struct kp_err err;

    if (kube_get(k->kc, &K8S_RES_LEASES, k->ns, k->name, &o, &err) != 0 &&
        kube_client_last(k->kc)->http_status == 404)
        lost(k);
    json_decref(o);
}

/* waits on the condition variable until `until` or a stop; 1 when stopping. mu held. */
static int wait_until(struct k8s_lease_keeper *k, const struct timespec *until)
{
    while (!k->stop && !k->lost && kp_cond_timedwait_monotonic(&k->cv, &k->mu, until) != ETIMEDOUT)
        ;
    return k->stop || k->lost;
}

/* The time until the next renewal, spent watching (or reading) the Lease. mu held. */
static void between_renewals(struct k8s_lease_keeper *k)
{
    uint64_t start = clock_now_ms(), end = start + (uint64_t)k->renew_s * 1000u;

    while (!k->stop && !k->lost) {
        uint64_t now = clock_now_ms();
        struct timespec until;
        if (now >= end)
            return;
        if (!k->no_watch) {
            pthread_mutex_unlock(&k->mu);
            watch_lease(k, end - now);
            pthread_mutex_lock(&k->mu);
            continue;
        }
        until = clock_ns_to_ts((now + (end - now < 1000 ? end - now : 1000)) * CLOCK_NS_PER_MS);
        if (wait_until(k, &until))
            return;
        pthread_mutex_unlock(&k->mu);
        read_lease(k);
        pthread_mutex_lock(&k->mu);
    }
}

static void *keeper_main(void *arg)
{
    struct k8s_lease_keeper *k = arg;

    pthread_mutex_lock(&k->mu);
    while (!k->stop && !k->lost) {
        if (k->no_watch == 2)
            k->no_watch = 0;
        between_renewals(k);
        if (k->stop || k->lost)
            break;
        pthread_mutex_unlock(&k->mu);
        renew(k);
        pthread_mutex_lock(&k->mu);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

static void keeper_free(struct k8s_lease_keeper *k)
{
    kube_client_free(k->kc);
    json_decref(k->lease);
    free(k->ns);
    free(k->name);
    free(k->holder);
    free(k->lost);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

int k8s_lease_keep(const struct kube_client_opts *ko, json_t *stored,
                   const struct k8s_lease_hold_opts *ho, struct k8s_lease_keeper **out,
                   struct kp_err *err)
{
    struct k8s_lease_keeper *k = kp_xcalloc(1, sizeof(*k));
    struct kube_client_opts own = *ko;
    const json_t *md = json_object_get(stored, "metadata");
    const char *holder =
        json_string_value(json_object_get(json_object_get(stored, "spec"), "holderIdentity"));
    sigset_t all, old;
    int prc;

    *out = NULL;
    pthread_mutex_init(&k->mu, NULL);
    kp_cond_init_monotonic(&k->cv);
    k->lease = stored;
    k->ns = kp_xstrdup(json_string_value(json_object_get(md, "namespace")));
    k->name = kp_xstrdup(json_string_value(json_object_get(md, "name")));
    k->holder = kp_xstrdup(holder ? holder : "");
    k->renew_s = ho->duration_s / 3 > 0 ? ho->duration_s / 3 : 1;
    k->on_lost = ho->on_lost;
    k->arg = ho->arg;
    own.abort_flag = &k->abort;
    if (kube_client_new(&own, &k->kc, err) != 0) {
        keeper_free(k);
        return kp_err_prefix(err, "lease");
    }
    /* signals (SIGINT, SIGTERM) stay with the main thread, whose waits they must wake */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    prc = pthread_create(&k->thread, NULL, keeper_main, k);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc != 0) {
        keeper_free(k);
        return kp_err_set(err, "cannot start the thread that renews the lease");
    }
    *out = k;
    return 0;
}

int k8s_lease_hold(struct kube_client *kc, const struct kube_client_opts *ko,
                   const struct k8s_objects_opts *opts, const struct k8s_lease_hold_opts *ho,
                   struct k8s_lease_keeper **out, struct kp_err *err)
{
    char *name = k8s_lease_name(opts->run_id);
    struct timespec now;
    char holder[300], host[256] = "";
    json_t *obj, *stored = NULL;
    int rc = -1;

    *out = NULL;
    gethostname(host, sizeof(host) - 1);
    snprintf(holder, sizeof(holder), "kperf@%s/%ld", host, (long)getpid());
    clock_gettime(CLOCK_REALTIME, &now);
    obj = k8s_lease_object(opts, holder, ho->duration_s, &now);
    if (kube_create(kc, &K8S_RES_LEASES, opts->ns, obj, NULL, &stored, err) != 0) {
        kp_err_prefix(err, "creating lease %s/%s", opts->ns, name);
        goto out;
    }
    if (k8s_lease_keep(ko, stored, ho, out, err) != 0) {
        struct kube_delete_opts d = {.missing_ok = 1, .grace_period_s = -1};
        struct kp_err derr;
        if (kube_delete(kc, &K8S_RES_LEASES, opts->ns, name, &d, NULL, &derr) != 0)
            kp_log(KP_LOG_DEBUG, "deleting lease %s: %s", name, kp_err_msg(&derr));
        goto out;
    }
    rc = 0;
out:
    json_decref(obj);
    free(name);
    return rc;
}

void k8s_lease_release(struct k8s_lease_keeper *k, struct kube_client *kc)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    k->abort = 1; /* a renewal in flight gives up at once */
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    if (kc && !k->lost) {
        struct kube_delete_opts d = {.missing_ok = 1, .grace_period_s = -1};
        struct kp_err err;
        if (kube_delete(kc, &K8S_RES_LEASES, k->ns, k->name, &d, NULL, &err) != 0)
            kp_log(KP_LOG_WARN, "deleting lease %s/%s: %s", k->ns, k->name, kp_err_msg(&err));
    }
    keeper_free(k);
}

const char *k8s_lease_lost(struct k8s_lease_keeper *k)
{
    const char *why;

    if (!k)
        return NULL;
    pthread_mutex_lock(&k->mu);
    why = k->lost;
    pthread_mutex_unlock(&k->mu);
    return why;
}
