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

#include "base/kp_alloc.h"
#include "base/kp_log.h"

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

/* seconds since the epoch of "YYYY-MM-DDTHH:MM:SS[.frac]Z"; -1 when unreadable */
static time_t parse_time(const char *s)
{
    struct tm tm = {0};
    const char *end;

    if (!s)
        return -1;
    end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return -1;
    if (*end == '.')
        for (end++; *end >= '0' && *end <= '9'; end++)
            ;
    if (strcmp(end, "Z") != 0)
        return -1;
    return timegm(&tm);
}

int k8s_lease_expired(const json_t *lease, time_t now, long *age_s)
{
    const json_t *spec = json_object_get(lease, "spec");
    const json_t *dur = json_object_get(spec, "leaseDurationSeconds");
    time_t t = parse_time(json_string_value(json_object_get(spec, "renewTime")));

    if (t < 0)
        t = parse_time(json_string_value(json_object_get(spec, "acquireTime")));
    if (t < 0 || !json_is_integer(dur) || json_integer_value(dur) <= 0)
        return -1;
    if (age_s)
        *age_s = (long)(now - t);
    return now > t + (time_t)json_integer_value(dur) ? 1 : 0;
}

struct k8s_lease_keeper {
    struct kube_client *kc; /* the thread's own */
    char *ns;
    char *name;
    json_t *lease; /* last stored state (for PUT with its resourceVersion) */
    int renew_s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    volatile sig_atomic_t abort;
};

/* one renewal: PUT with a fresh renewTime; on a conflict, read it again and retry once */
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
        if (kube_client_last(k->kc)->http_status == 409 &&
            kube_get(k->kc, &K8S_RES_LEASES, k->ns, k->name, &out, &err) == 0) {
            json_decref(k->lease);
            k->lease = out;
            continue;
        }
        kp_log(KP_LOG_WARN, "renewing lease %s/%s: %s", k->ns, k->name, kp_err_msg(&err));
        break;
    }
    free(path);
}

static void *keeper_main(void *arg)
{
    struct k8s_lease_keeper *k = arg;

    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += k->renew_s;
        while (!k->stop && pthread_cond_timedwait(&k->cv, &k->mu, &until) != ETIMEDOUT)
            ;
        if (k->stop)
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
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

int k8s_lease_hold(struct kube_client *kc, const struct kube_client_opts *ko,
                   const struct k8s_objects_opts *opts, int duration_s,
                   struct k8s_lease_keeper **out, struct kp_err *err)
{
    struct k8s_lease_keeper *k = kp_xcalloc(1, sizeof(*k));
    struct kube_client_opts own = *ko;
    pthread_condattr_t ca;
    struct timespec now;
    char holder[300], host[256] = "";
    json_t *obj;

    *out = NULL;
    pthread_mutex_init(&k->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&k->cv, &ca);
    pthread_condattr_destroy(&ca);
    k->ns = kp_xstrdup(opts->ns);
    k->name = k8s_lease_name(opts->run_id);
    k->renew_s = duration_s / 3 > 0 ? duration_s / 3 : 1;
    own.abort_flag = &k->abort;
    if (kube_client_new(&own, &k->kc, err) != 0) {
        keeper_free(k);
        return kp_err_prefix(err, "lease");
    }
    gethostname(host, sizeof(host) - 1);
    snprintf(holder, sizeof(holder), "kperf@%s/%ld", host, (long)getpid());
    clock_gettime(CLOCK_REALTIME, &now);
    obj = k8s_lease_object(opts, holder, duration_s, &now);
    if (kube_create(kc, &K8S_RES_LEASES, opts->ns, obj, NULL, &k->lease, err) != 0) {
        json_decref(obj);
        kp_err_prefix(err, "creating lease %s/%s", opts->ns, k->name);
        keeper_free(k);
        return -1;
    }
    json_decref(obj);
    /* signals (SIGINT, SIGTERM) stay with the main thread, whose waits they must wake */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int prc = pthread_create(&k->thread, NULL, keeper_main, k);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (prc != 0) {
        struct kube_delete_opts d = {.missing_ok = 1, .grace_period_s = -1};
        if (kube_delete(kc, &K8S_RES_LEASES, k->ns, k->name, &d, NULL, err) != 0)
            kp_err_clear(err);
        keeper_free(k);
        return kp_err_set(err, "cannot start the thread that renews the run's lease");
    }
    *out = k;
    return 0;
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
    if (kc) {
        struct kube_delete_opts d = {.missing_ok = 1, .grace_period_s = -1};
        struct kp_err err;
        if (kube_delete(kc, &K8S_RES_LEASES, k->ns, k->name, &d, NULL, &err) != 0)
            kp_log(KP_LOG_WARN, "deleting lease %s/%s: %s", k->ns, k->name, kp_err_msg(&err));
    }
    keeper_free(k);
}
