/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_dns.c - pod-to-dns on Kubernetes (k8s_dns.h): the cluster DNS, the groups per node, the
 * Job of two `kperf-agent dns` containers and its two documents. */
#include "controller/k8s/k8s_dns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/dnsresult.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/logdoc.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_overlay.h"

#define LOG_MAX_BYTES (4L << 20)

static bool has_dns(const struct plan *plan)
{
    for (size_t i = 0; i < plan_group_count(plan); i++)
        if (plan_group_get(plan, i)->scenario == SCENARIO_POD_TO_DNS)
            return true;
    return false;
}

void k8s_dns_plan(struct k8s_backend *b, struct plan *plan)
{
    json_t *svc = NULL, *ips;
    struct kp_err err;
    const char **names;
    size_t i, n = json_array_size(b->nodes);
    json_t *v;

    if (!has_dns(plan))
        return;
    if (kube_get(b->kc, &KUBE_RES_SERVICES, K8S_DNS_SERVICE_NS, K8S_DNS_SERVICE, &svc, &err) != 0) {
        plan_skip(plan, SCENARIO_POD_TO_DNS, PLACEMENT_COUNT, "no cluster DNS: Service %s/%s: %s",
                  K8S_DNS_SERVICE_NS, K8S_DNS_SERVICE, kp_err_msg(&err));
        return;
    }
    ips = json_object_get(json_object_get(svc, "spec"), "clusterIPs");
    if (!json_array_size(ips))
        ips = json_pack("[O]", json_object_get(json_object_get(svc, "spec"), "clusterIP"));
    else
        json_incref(ips);
    json_array_foreach(ips, i, v)
    {
        const char *ip = json_string_value(v);
        if (ip && *ip && strcmp(ip, "None") != 0 && !b->dns_ip[strchr(ip, ':') ? 1 : 0])
            b->dns_ip[strchr(ip, ':') ? 1 : 0] = kp_xstrdup(ip);
    }
    json_decref(ips);
    json_decref(svc);
    if (!b->dns_ip[0] && !b->dns_ip[1]) {
        plan_skip(plan, SCENARIO_POD_TO_DNS, PLACEMENT_COUNT,
                  "no cluster DNS: Service %s/%s has no ClusterIP", K8S_DNS_SERVICE_NS,
                  K8S_DNS_SERVICE);
        return;
    }
    names = kp_xcalloc(n ? n : 1, sizeof(*names));
    json_array_foreach(b->nodes, i, v) names[i] = k8s_facts_node_name(v);
    plan_expand_dns(plan, names, n);
    free(names);
    b->dns_plan = plan;
    kp_log(KP_LOG_INFO, "pod-to-dns: cluster DNS %s%s%s, %zu nodes",
           b->dns_ip[0] ? b->dns_ip[0] : "", b->dns_ip[0] && b->dns_ip[1] ? "," : "",
           b->dns_ip[1] ? b->dns_ip[1] : "", n);
}

/* the argv of one `kperf-agent dns` (caller frees the strings it made: [6], [8]) */
static void dns_args(const char **a, const char *proto, const struct run_spec *spec,
                     const char *server, const char *name, int aaaa)
{
    int tcp = proto[0] == 't';
    char *rate = kp_xasprintf("%d", tcp ? K8S_DNS_TCP_RATE : K8S_DNS_UDP_RATE);
    char *dur = kp_xasprintf("%llums", (unsigned long long)spec->duration_ms);
    const char *v[] = {"dns",    "--name",  name,         "--server", server,
                       "--rate", rate,      "--duration", dur,        "--timeout",
                       "3s",     "--proto", proto,        "--type",   aaaa ? "AAAA" : "A",
                       NULL};

    memcpy(a, v, sizeof(v));
}

json_t *k8s_dns_make_job(const struct k8s_deploy *d, const struct run_spec *spec, unsigned step,
                         const char *client_host, const char *server, const char *name, int aaaa,
                         char **name_out)
{
    const struct plan_group *g = spec->group;
    struct k8s_objects_opts o = d->obj;
    const char *a[16];
    char *job_name =
        k8s_objects_job_name(plan_scenario_name(g->scenario), g->placement_label, 0, step);
    struct k8s_client_job job = {
        .name = job_name,
        .node_hostname = client_host,
        .scenario = plan_scenario_name(g->scenario),
        .placement = g->placement_label,
        .args = a,
    };
    json_t *obj, *containers, *tcp;

    dns_args(a, "udp", spec, server, name, aaaa);
    o.job_deadline_s = (int)((spec->duration_ms + K8S_DNS_TIMEOUT_MS + d->timeout_ms) / 1000 + 1);
    obj = k8s_objects_client_job(&o, &job);
    free((char *)a[6]);
    free((char *)a[8]);
    containers = json_object_get(
        json_object_get(json_object_get(json_object_get(obj, "spec"), "template"), "spec"),
        "containers");
    tcp = json_deep_copy(json_array_get(containers, 0));
    dns_args(a, "tcp", spec, server, name, aaaa);
    json_object_set_new(tcp, "name", json_string(K8S_DNS_TCP_CONTAINER));
    json_t *args = json_array();
    for (size_t i = 0; a[i]; i++)
        json_array_append_new(args, json_string(a[i]));
    json_object_set_new(tcp, "args", args);
    free((char *)a[6]);
    free((char *)a[8]);
    json_array_append_new(containers, tcp);
    if (name_out)
        *name_out = job_name;
    else
        free(job_name);
    return obj;
}

/* The dns document in container c's log of pod; new reference or NULL with err. */
static json_t *read_doc(struct k8s_backend *b, const char *pod, const char *c, struct kp_err *err)
{
    struct kube_log_opts lopts = {.container = c, .limit_bytes = LOG_MAX_BYTES};
    char *log = NULL, *text;
    size_t len = 0, n;
    json_t *doc = NULL;

    if (kube_pod_logs(b->kc, b->d.ns, pod, &lopts, &log, &len, err) != 0) {
        kp_err_prefix(err, "reading the log of DNS pod %s (%s)", pod, c);
        return NULL;
    }
    text = logdoc_extract(log, len, &n);
    if (!text)
        kp_err_set(err, "DNS pod %s (%s) printed no document", pod, c);
    else if (dnsresult_parse(text, n, &doc, err) != 0)
        kp_err_prefix(err, "DNS pod %s (%s)", pod, c);
    free(text);
    free(log);
    return doc;
}

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* waits for the Job's pod, checks its node, reads both documents into *doc */
static int collect(struct k8s_backend *b, const struct run_spec *spec, const char *job,
                   const char *uid, const char *what, const char *start, json_t **doc,
                   struct kp_err *err)
{
    char *sel = kp_xasprintf("%s=%s,%s=%s", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_JOB, job);
    struct k8s_wait_opts wo = {
        .ns = b->d.ns,
        .selector = sel,
        .owner = job,
        .owner_uid = uid,
        .what = what,
        .goal = K8S_WAIT_FINISHED,
        .timeout_ms = spec->duration_ms + K8S_DNS_TIMEOUT_MS + b->ro->timeout_ms,
        .events = b->podevents,
        .cause_out = b->fail_cause,
    };
    json_t *pods = NULL, *d[2] = {NULL, NULL};
    const json_t *pod;
    const char *pod_name, *ran;
    int rc = -1;

    if (k8s_wait_pods(b->kc, &wo, &pods, err) != 0)
        goto out;
    pod = json_array_get(pods, 0);
    pod_name = json_string_value(json_object_get(json_object_get(pod, "metadata"), "name"));
    ran = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    if (!ran || strcmp(ran, spec->group->node) != 0) {
        kp_err_set(err, "DNS pod %s ran on node %s, not on %s as planned", pod_name,
                   ran ? ran : "(none)", spec->group->node);
        goto out;
    }
    if (!(d[0] = read_doc(b, pod_name, K8S_OVERLAY_CLIENT_CONTAINER, err)) ||
        !(d[1] = read_doc(b, pod_name, K8S_DNS_TCP_CONTAINER, err)))
        goto out;
    *doc = dnsresult_doc((const json_t *const *)d, 2, spec->group->node, start);
    rc = 0;
out:
    json_decref(d[0]);
    json_decref(d[1]);
    json_decref(pods);
    free(sel);
    return rc;
}

/* the key of a group's started Job in b->dns_jobs */
static char *group_key(const struct plan_group *g)
{
    return kp_xasprintf("%s|%s", g->ip_family ? g->ip_family : "", g->placement_label);
}

/* Creates the Job of group g (spec's settings) and records it in b->dns_jobs as {job, uid,
 * start}. 0, or -1 with err. */
static int start_job(struct k8s_backend *b, const struct run_spec *spec, const struct plan_group *g,
                     struct kp_err *err)
{
    struct run_spec s = *spec;
    int v6 = K8S_FAM(g->ip_family);
    char start[32], *job_name = NULL, *name, *key;
    json_t *job, *created = NULL;
    int rc;

    if (!g->node || !b->dns_ip[v6])
        return kp_err_set(err, "pod-to-dns: no %s address of the cluster DNS",
                          v6 ? "IPv6" : "IPv4");
    s.group = g;
    name = kp_xasprintf("kperf-svc-a.%s.svc.cluster.local", b->d.ns);
    job = k8s_dns_make_job(&b->d, &s, b->n_steps++, k8s_client_node_hostname(b, g->node),
                           b->dns_ip[v6], name, v6, &job_name);
    utc_now(start, sizeof(start));
    rc = kube_create(b->kc, &KUBE_RES_JOBS, b->d.ns, job, NULL, &created, err);
    if (rc != 0)
        kp_err_prefix(err, "creating DNS job %s on node %s", job_name, g->node);
    else {
        if (!b->dns_jobs)
            b->dns_jobs = json_object();
        key = group_key(g);
        json_object_set_new(b->dns_jobs, key,
                            json_pack("{s:s, s:O, s:s}", "job", job_name, "uid",
                                      json_object_get(json_object_get(created, "metadata"), "uid"),
                                      "start", start));
        free(key);
    }
    json_decref(created);
    json_decref(job);
    free(job_name);
    free(name);
    return rc;
}

/* Starts the Jobs of up to K8S_DNS_PARALLEL - 1 more pod-to-dns groups of g's family not
 * started yet, in plan order (each node measures at once: a node's pod start is not paid
 * again per node). A Job that cannot be created now is tried again when its group comes. */
static void start_ahead(struct k8s_backend *b, const struct run_spec *spec)
{
    const struct plan_group *g = spec->group;
    size_t n = 1;

    for (size_t i = 0; b->dns_plan && i < plan_group_count(b->dns_plan) && !b->stop; i++) {
        const struct plan_group *o = plan_group_get(b->dns_plan, i);
        char *key;
        struct kp_err e;
        if (n >= K8S_DNS_PARALLEL)
            break;
        if (o == g || o->scenario != SCENARIO_POD_TO_DNS || o->skipped || !o->node ||
            K8S_FAM(o->ip_family) != K8S_FAM(g->ip_family))
            continue;
        key = group_key(o);
        if (!json_object_get(b->dns_jobs, key)) {
            if (start_job(b, spec, o, &e) != 0)
                kp_log(KP_LOG_INFO, "pod-to-dns: not starting %s ahead: %s", o->placement_label,
                       kp_err_msg(&e));
            else
                n++;
        }
        free(key);
    }
}

int k8s_dns_run(struct k8s_backend *b, const struct run_spec *spec, json_t **doc,
                struct kp_err *err)
{
    const struct plan_group *g = spec->group;
    struct kube_delete_opts dopts = {
        .propagation = KUBE_PROPAGATION_BACKGROUND, .grace_period_s = 0, .missing_ok = 1};
    char *key = group_key(g), *what;
    json_t *j;
    const char *job_name;
    int rc = -1;

    *doc = NULL;
    if (b->stop) {
        free(key);
        return kp_err_set(err, "interrupted");
    }
    if (!json_object_get(b->dns_jobs, key)) {
        if (start_job(b, spec, g, err) != 0) {
            free(key);
            return -1;
        }
        start_ahead(b, spec);
    }
    j = json_incref(json_object_get(b->dns_jobs, key));
    json_object_del(b->dns_jobs, key);
    job_name = json_string_value(json_object_get(j, "job"));
    what = kp_xasprintf("DNS job %s on node %s", job_name, g->node);
    rc = collect(b, spec, job_name, json_string_value(json_object_get(j, "uid")), what,
                 json_string_value(json_object_get(j, "start")), doc, err);
    if (!b->ro->keep) {
        struct kp_err derr;
        kube_client_reset_abort(b->kc); /* delete even when interrupted */
        if (kube_delete(b->kc, &KUBE_RES_JOBS, b->d.ns, job_name, &dopts, NULL, &derr) != 0)
            kp_log(KP_LOG_WARN, "deleting job %s: %s (cleanup will retry)", job_name,
                   kp_err_msg(&derr));
        if (b->stop)
            kube_client_abort(b->kc);
    }
    json_decref(j);
    free(what);
    free(key);
    return rc;
}
