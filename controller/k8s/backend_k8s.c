/* SPDX-License-Identifier: Apache-2.0 */
/* backend_k8s.c - the Kubernetes backend's table of operations (see backend_k8s.h) and the glue
 * around it: run_client hands a group to the sweep (k8s_sweep.c) or runs its client Job
 * (k8s_client.c); describe, readiness, interrupt, cleanup and destroy. Preflight and deployment
 * live in k8s_prepare.c. Nothing below calls back into this file but for the warning about
 * agent pods' CPU limits, which prepare and the sweep's deployment give. */
#include "controller/k8s/backend_k8s.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/portable.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_cleanup.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_dns.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_lock.h"
#include "controller/k8s/k8s_netpol.h"
#include "controller/k8s/k8s_netready.h"
#include "controller/k8s/k8s_nodewatch.h"
#include "controller/k8s/k8s_podevents.h"
#include "controller/k8s/k8s_services.h"
#include "controller/k8s/k8s_sweep.h"
#include "controller/k8s/k8s_watch.h"
#include "controller/k8s/k8s_watch_ready.h"

unsigned backend_k8s_requests(const struct backend *base)
{
    const struct k8s_backend *b = (const struct k8s_backend *)base;

    return b->kc ? (unsigned)kube_request_count(b->kc) : 0;
}

static int run_client(struct backend *base, const struct run_spec *spec, json_t **doc,
                      struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct k8s_client_run *cr = NULL;

    *doc = NULL;
    b->fail_cause[0] = '\0';
    if (spec->group->scenario == SCENARIO_POD_TO_DNS)
        return k8s_dns_run(b, spec, doc, err);
    if (spec->group->placement == PLACEMENT_NODE && b->sweep)
        return k8s_sweep_run_client(b, spec, doc, err);
    if (k8s_client_start(b, spec, NULL, &cr, err) != 0)
        return -1;
    return k8s_client_finish(b, cr, doc, err);
}

void k8s_backend_note_cpu_limit(struct k8s_backend *b, const json_t *pods, const char *who)
{
    const char *cpu = NULL, *why = NULL;
    size_t i;
    json_t *p;

    if (b->cpu_limit_noted)
        return;
    json_array_foreach(pods, i, p)
    {
        if ((cpu = k8s_facts_pod_cpu_limit(p, &why)))
            break;
    }
    if (!cpu)
        return;
    b->cpu_limit_noted = 1;
    if (b->facts)
        json_object_set_new(b->facts, "agent_cpu_limit", json_string(cpu));
    kp_log(KP_LOG_WARN,
           "%s have a CPU limit of %s that kperf did not set (%s): stream rates measure that "
           "limit as much as the network; remove the LimitRange default of namespace %s, or run "
           "kperf in a namespace without one (-n)",
           who, cpu, why ? why : "a LimitRange default or a mutating webhook", b->d.ns);
}

static json_t *describe(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;

    k8s_sweep_sync_nodes(b);
    return b->facts ? json_deep_copy(b->facts) : json_object();
}

static json_t *readiness(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    return b->readiness ? json_incref(b->readiness) : NULL;
}

static void interrupt(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;

    if (b->cleaning)
        return; /* cleanup always finishes; a third signal makes the runner quit at once */
    b->stop = 1;
    if (b->kc)
        kube_client_abort(b->kc);
}

void k8s_backend_lost(void *arg)
{
    struct k8s_backend *b = arg;

    b->stop = 1; /* before the abort: a delete that resets it aborts again (client_run_end) */
    if (b->kc)
        kube_client_abort(b->kc);
}

static const char *failure_cause(struct backend *base)
{
    const struct k8s_backend *b = (const struct k8s_backend *)base;

    return b->fail_cause[0] ? b->fail_cause : NULL;
}

void k8s_backend_watch_events(struct k8s_backend *b)
{
    struct kube_client_opts ko;
    struct kp_err err;

    if (b->podevents)
        return;
    k8s_backend_client_opts(b, &ko);
    ko.ns = b->d.ns;
    if (k8s_podevents_start(&ko, b->d.ns, &b->podevents, &err) != 0)
        kp_log(KP_LOG_INFO, "%s (pods that cannot start are then found at --timeout)",
               kp_err_msg(&err));
    if (b->ro->all_nodes && !b->nodewatch) {
        json_t *names = json_array();
        size_t i;
        json_t *n;
        json_array_foreach(b->nodes, i, n)
            json_array_append_new(names, json_string(k8s_facts_node_name(n)));
        if (k8s_nodewatch_start(&ko, names, &b->nodewatch, &err) != 0)
            kp_log(KP_LOG_INFO, "%s (a node whose network fails is then found by its pair)",
                   kp_err_msg(&err));
        json_decref(names);
    }
}

static const char *lost(struct backend *base)
{
    return k8s_lease_lost(((struct k8s_backend *)base)->lease);
}

int k8s_backend_lock(struct k8s_backend *b, struct kp_err *err)
{
    struct k8s_lease_hold_opts ho = {.duration_s = (int)(b->ro->lease_ms / 1000)};
    struct kube_client_opts ko;
    struct k8s_lock_opts lo;
    char holder[400];
    json_t *stored = NULL;
    int rc;

    if (k8s_objects_run_id(b->run_id, sizeof(b->run_id), err) != 0)
        return -1;
    k8s_lock_holder(b->run_id, holder, sizeof(holder));
    lo = (struct k8s_lock_opts){.holder = holder,
                                .run_id = b->run_id,
                                .duration_s = ho.duration_s,
                                .wait_ms = b->ro->wait_lock_ms,
                                .stop = &b->stop};
    rc = k8s_lock_acquire(b->kc, &lo, &stored, err);
    if (rc == 1) { /* RBAC without leases where the lock lives: measure anyway, say so */
        kp_log(KP_LOG_WARN,
               "%s: running without the cluster lock, another run may share the nodes (grant "
               "leases in namespace kperf as manifests/rbac.yaml does)",
               kp_err_msg(err));
        kp_err_clear(err);
        return 0;
    }
    if (rc != 0)
        return -1;
    k8s_backend_client_opts(b, &ko);
    if (k8s_lease_keep(&ko, stored, &ho, &b->lock, err) != 0)
        return kp_err_prefix(err, "the cluster lock");
    kp_log(KP_LOG_INFO, "run %s holds the cluster lock as %s", b->run_id, holder);
    return 0;
}

static int cleanup_run(struct k8s_backend *b, struct kp_err *err);

/* The run's objects, then the cluster lock (released whatever the removal did: what is left
 * has the run's Lease, which expires, and the next run removes it). */
static int cleanup(struct backend *base, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    int rc = cleanup_run(b, err);

    if (b->lock && b->kc)
        kube_client_reset_abort(b->kc);
    k8s_lease_release(b->lock, b->kc);
    b->lock = NULL;
    return rc;
}

static int cleanup_run(struct k8s_backend *b, struct kp_err *err)
{
    unsigned n = 0;
    int rc;

    json_t *down;

    b->cleaning = 1;
    k8s_podevents_stop(b->podevents); /* nothing waits for a pod any more */
    b->podevents = NULL;
    k8s_nodewatch_stop(b->nodewatch);
    b->nodewatch = NULL;
    down = k8s_sweep_down_nodes(b); /* before k8s_sweep_free */
    k8s_sweep_free(b);              /* Jobs started ahead and never collected */
    if (!b->kc || !b->created) {
        json_decref(down);
        return 0;
    }
    kube_client_reset_abort(b->kc);
    if (k8s_lease_lost(b->lease)) { /* whoever deleted it removes the rest; waiting for
                                     * them would only hold the run up */
        kp_log(KP_LOG_WARN,
               "run %s: left the removal of namespace %s's objects to whoever deleted the "
               "run's lease ('kperf cleanup' removes anything left)",
               b->d.run_id, b->d.ns);
        json_decref(down);
        return 0;
    }
    /* stop renewing: from here the run ends; a cleanup that fails leaves a Lease that expires,
     * and the next run removes what is left. --keep: the objects stay on purpose, the Lease
     * goes (a kept run is not a crashed one). */
    k8s_lease_release(b->lease, b->ro->keep ? b->kc : NULL);
    b->lease = NULL;
    if (b->ro->keep) {
        json_decref(down);
        kp_log(
            KP_LOG_WARN,
            "--keep: left run %s in namespace %s. Remove it with 'kperf cleanup --run-id %s%s%s'",
            b->d.run_id, b->d.ns, b->d.run_id, b->ns_created || b->d.host_ns ? "" : " -n ",
            b->ns_created || b->d.host_ns ? "" : b->d.ns); /* split: look everywhere */
        return 0;
    }
    rc = 0;
    if (b->d.host_ns && b->d.set.host_network) /* the host-network agents' namespace stays */
        rc = k8s_cleanup_run_forcing(b->kc, b->d.host_ns, b->d.run_id, 0, b->ro->timeout_ms, &n,
                                     down, err);
    if (rc == 0)
        rc = k8s_cleanup_run_forcing(b->kc, b->d.ns, b->d.run_id, b->ns_created, b->ro->timeout_ms,
                                     &n, down, err);
    json_decref(down);
    if (rc == 0) {
        b->created = 0;
        kp_log(KP_LOG_INFO, "removed run %s (%u objects; %u API requests in all)", b->d.run_id, n,
               (unsigned)kube_request_count(b->kc));
    }
    return rc;
}

static void destroy(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;

    if (!b)
        return;
    k8s_podevents_stop(b->podevents);
    k8s_nodewatch_stop(b->nodewatch);
    k8s_sweep_free(b); /* before the client: it deletes the Jobs started ahead */
    k8s_lease_release(b->lease, NULL);
    k8s_lease_release(b->lock, NULL); /* not released by cleanup: it expires */
    kube_client_free(b->kc);
    k8s_deploy_cleanup(&b->d);
    kp_free_secret(b->token);
    json_decref(b->nodes);
    json_decref(b->net_down);
    json_decref(b->facts);
    json_decref(b->sweep_servers);
    json_decref(b->readiness);
    if (b->watch_dir) /* its probes' logs are gone (k8s_watch_probe_free) */
        (void)rmdir(b->watch_dir);
    free(b->watch_dir);
    for (int f = 0; f < 2; f++) {
        free(b->pod_server_ip[f]);
        free(b->host_server_ip[f]);
        free(b->service_ip[f]);
        free(b->dns_ip[f]);
    }
    json_decref(b->dns_jobs);
    free(b);
}

/* kperf watch --readiness-every: k8s_watch_ready.h behind the ops' opaque type */
static int ready_start(struct backend *b, uint64_t every_ms, struct backend_ready **out,
                       struct kp_err *err)
{
    struct k8s_ready_watch *rw = NULL;
    int rc = k8s_watch_ready_start(b, every_ms, &rw, err);

    *out = (struct backend_ready *)rw;
    return rc;
}

static json_t *ready_stop(struct backend_ready *r)
{
    return k8s_watch_ready_stop((struct k8s_ready_watch *)r);
}

static int netpol_apply(struct backend *base, unsigned rules, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;

    return k8s_netpol_apply(b->kc, &b->d.obj, rules, &b->stop, err);
}

static const struct backend_ops k8s_ops = {
    .name = "k8s",
    .batches_tests = true,
    .prepare = k8s_prepare,
    .run_client = run_client,
    .describe = describe,
    .readiness = readiness,
    .interrupt = interrupt,
    .lost = lost,
    .failure_cause = failure_cause,
    .netpol_apply = netpol_apply,
    .services_apply = k8s_services_apply,
    .netpol_readiness = k8s_netready_run,
    .cleanup = cleanup,
    .destroy = destroy,
    .probe_start = k8s_watch_probe_start,
    .probe_log = k8s_watch_probe_log,
    .probe_running = k8s_watch_probe_running,
    .probe_stop = k8s_watch_probe_stop,
    .probe_wait = k8s_watch_probe_wait,
    .probe_doc = k8s_watch_probe_doc,
    .probe_describe = k8s_watch_probe_describe,
    .probe_node = k8s_watch_probe_node,
    .probe_free = k8s_watch_probe_free,
    .watch_env = k8s_watch_env,
    .ready_start = ready_start,
    .ready_stop = ready_stop,
};

struct backend *backend_k8s_new(const struct run_options *opts, struct kp_err *err)
{
    struct k8s_backend *b = kp_xcalloc(1, sizeof(*b));
    unsigned char rnd[24];

    if (kp_random_bytes(rnd, sizeof(rnd)) != 0) {
        free(b);
        kp_err_set(err, "cannot read random bytes for the run token");
        return NULL;
    }
    b->base.ops = &k8s_ops;
    b->ro = opts;
    b->token = kp_xmalloc(sizeof(rnd) * 2 + 1);
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(b->token + 2 * i, 3, "%02x", rnd[i]);
    kp_wipe(rnd, sizeof(rnd));
    return &b->base;
}
