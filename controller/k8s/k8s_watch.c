/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_watch.c - the probe Jobs of `kperf watch` on a cluster and their log threads (see
 * k8s_watch.h). */
#include "controller/k8s/k8s_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/logdoc.h"
#include "controller/agent_args.h"
#include "controller/k8s/k8s_backend_int.h"
#include "controller/k8s/k8s_client.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_wait.h"

#define K8S_GRACE     20000       /* ms for a pod's deletion to reach it and its log to end */
#define PROBE_LOG_MAX (64L << 20) /* bytes of a probe's log end read for its document */

struct k8s_probe {
    char *job, *uid, *pod, *node, *ns;
    char *log_path;         /* in b->watch_dir: removed by free */
    char *server_node;      /* NULL: the external server */
    struct kube_client *kc; /* the log thread's own client */
    FILE *log;
    pthread_t thread;
    bool started;             /* the thread was created */
    volatile int running;     /* the stream is open; written by the thread */
    pthread_mutex_t mu;       /* guards running with cv */
    pthread_cond_t cv;        /* signalled when the stream ends */
    bool stopped;             /* stop() deleted the Job and the pod */
    bool wait_timed_out;      /* wait() gave up before the stream ended */
    int stream_rc;            /* the stream's result: != 0 with stream_err; written by the thread */
    struct kp_err stream_err; /* why the stream ended, when it failed */
};

static int on_chunk(void *arg, const char *data, size_t len)
{
    struct k8s_probe *p = arg;

    if (len && fwrite(data, 1, len, p->log) != len)
        return 1;
    fflush(p->log);
    return 0;
}

static void *log_thread(void *arg)
{
    struct k8s_probe *p = arg;
    struct kube_log_opts lo = {.container = "client", .follow = 1};

    int rc = kube_pod_logs_stream(p->kc, p->ns, p->pod, &lo, on_chunk, p, &p->stream_err);

    if (rc != 0)
        kp_log(KP_LOG_DEBUG, "log of probe pod %s: %s", p->pod, kp_err_msg(&p->stream_err));
    pthread_mutex_lock(&p->mu);
    p->stream_rc = rc;
    p->running = 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* The probe Job of g: `probe --server T [--token-file F] args...` on g's client node. */
static json_t *probe_job(struct k8s_backend *b, const struct plan_group *g,
                         const struct backend_probe_opts *o, const char *node, char **name)
{
    struct k8s_group_target t;
    struct k8s_objects_opts oo = b->d.obj;
    const char *server;
    char *hp;
    size_t n = 0, i = 0;
    json_t *job;

    k8s_objects_group_target(g, &t);
    server = k8s_client_server_addr(b, &t, g->ip_family);
    if (!server)
        return NULL;
    hp = agent_args_host_port(server, t.server_network ? b->ro->port : b->ro->external_port);
    while (o->args && o->args[n])
        n++;
    const char **argv = kp_xcalloc(n + 8, sizeof(*argv));
    argv[i++] = "probe";
    argv[i++] = "--server";
    argv[i++] = hp;
    if (t.server_network) { /* the external server cannot know the run's token */
        argv[i++] = "--token-file";
        argv[i++] = K8S_TOKEN_FILE;
    }
    for (size_t k = 0; k < n; k++)
        argv[i++] = o->args[k];
    /* a new pod's first SYN may go unanswered (its network still settling): 3 s covers its
     * retransmission (a `kperf run` client allows 5 s); also the bound of each reconnect */
    argv[i++] = "--connect-timeout";
    argv[i++] = "3s";
    *name =
        k8s_objects_job_name(plan_scenario_name(g->scenario), g->placement_label, 0, b->n_steps++);
    struct k8s_client_job cj = {
        .name = *name,
        .node_hostname = k8s_client_node_hostname(b, node),
        .scenario = plan_scenario_name(g->scenario),
        .placement = g->placement_label,
        .host_network = t.client_host_network,
        .args = argv,
    };
    oo.job_deadline_s = (int)o->deadline_s;
    job = k8s_objects_client_job(&oo, &cj);
    free(argv);
    free(hp);
    return job;
}

static int wait_ready(struct k8s_backend *b, struct k8s_probe *p, struct kp_err *err)
{
    char *sel = kp_xasprintf("%s=%s,%s=%s", K8S_LABEL_RUN_ID, b->d.run_id, K8S_LABEL_JOB, p->job);
    char *what = kp_xasprintf("probe job %s on node %s", p->job, p->node);
    struct k8s_wait_opts wo = {.ns = p->ns,
                               .selector = sel,
                               .owner = p->job,
                               .owner_uid = p->uid,
                               .what = what,
                               .goal = K8S_WAIT_READY,
                               .want = 1,
                               .timeout_ms = b->ro->timeout_ms,
                               .events = b->podevents};
    json_t *pods = NULL;
    int rc = k8s_wait_pods(b->kc, &wo, &pods, err);

    if (rc == 0) {
        const json_t *md = json_object_get(json_array_get(pods, 0), "metadata");
        const char *name = json_string_value(json_object_get(md, "name"));
        if (name)
            p->pod = kp_xstrdup(name);
        else
            rc = kp_err_set(err, "%s: its pod has no name", what);
    }
    json_decref(pods);
    free(sel);
    free(what);
    return rc;
}

static int start_thread(struct k8s_backend *b, struct k8s_probe *p, const char *log_path,
                        struct kp_err *err)
{
    struct kube_client_opts ko;

    /* a log that grows while it is read, so not base/safefile.h's rename: a new file only,
     * never through a link (its folder is kperf's own mkdtemp one) */
    int fd = open(log_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

    p->log = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!p->log) {
        kp_err_set(err, "cannot create %s: %s", log_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    k8s_backend_client_opts(b, &ko);
    ko.ns = p->ns;
    if (kube_client_new(&ko, &p->kc, err) != 0)
        return -1;
    p->running = 1;
    if (pthread_create(&p->thread, NULL, log_thread, p) != 0) {
        p->running = 0;
        return kp_err_set(err, "cannot start a thread for the log of %s", p->pod);
    }
    p->started = true;
    return 0;
}

/* the directory of the watch's probe logs (made at the first probe, removed by destroy) */
static const char *watch_dir(struct k8s_backend *b, struct kp_err *err)
{
    char tmpl[] = "/tmp/kperf-watch-XXXXXX";

    if (b->watch_dir)
        return b->watch_dir;
    if (!mkdtemp(tmpl)) {
        kp_err_set(err, "cannot create a directory for the probe logs: %s", strerror(errno));
        return NULL;
    }
    b->watch_dir = kp_xstrdup(tmpl);
    return b->watch_dir;
}

/* The probe of log index `index` (its node, namespace and optional server node set by the
 * caller): creates job (consumed), waits for its pod and starts streaming its log. */
static struct k8s_probe *probe_new(struct k8s_backend *b, size_t index, const char *node,
                                   const char *ns, struct kp_err *err)
{
    const char *dir = watch_dir(b, err);
    struct k8s_probe *p;

    if (!dir)
        return NULL;
    p = kp_xcalloc(1, sizeof(*p));
    p->log_path = kp_xasprintf("%s/probe-%zu.log", dir, index);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->node = kp_xstrdup(node);
    p->ns = kp_xstrdup(ns);
    return p;
}

/* Creates the probe's Job (job consumed). */
static int probe_create(struct k8s_backend *b, struct k8s_probe *p, json_t *job, struct kp_err *err)
{
    json_t *created = NULL;

    if (kube_create(b->kc, &KUBE_RES_JOBS, p->ns, job, NULL, &created, err) != 0) {
        json_decref(job);
        return kp_err_prefix(err, "creating probe job %s on node %s", p->job, p->node);
    }
    json_decref(job);
    const char *uid =
        json_string_value(json_object_get(json_object_get(created, "metadata"), "uid"));
    p->uid = uid ? kp_xstrdup(uid) : NULL;
    json_decref(created);
    return 0;
}

static int probe_launch(struct k8s_backend *b, struct k8s_probe *p, json_t *job, struct kp_err *err)
{
    if (probe_create(b, p, job, err) != 0 || wait_ready(b, p, err) != 0)
        return -1;
    return start_thread(b, p, p->log_path, err);
}

int k8s_watch_probe_start(struct backend *base, const struct plan_group *g,
                          const struct backend_probe_opts *o, struct backend_probe **out,
                          struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct k8s_probe *p;
    struct k8s_group_target t;
    json_t *job;

    *out = NULL;
    k8s_objects_group_target(g, &t);
    p = probe_new(b, o->index, k8s_client_node(b, g, &t),
                  k8s_objects_ns(&b->d.obj, t.client_host_network), err);
    if (!p)
        return -1;
    if (t.server_network)
        p->server_node = kp_xstrdup(k8s_facts_node_name(b->node_a));
    job = probe_job(b, g, o, p->node, &p->job);
    if (!job) {
        k8s_watch_probe_free(base, (struct backend_probe *)p);
        return kp_err_set(err, "no server address for %s", plan_scenario_name(g->scenario));
    }
    *out = (struct backend_probe *)p; /* from here the caller stops and frees it */
    return probe_launch(b, p, job, err);
}

int k8s_watch_probe_create_at(struct backend *base, const char *node, const char *server,
                              const char *scenario, const struct backend_probe_opts *o,
                              struct backend_probe **out, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct k8s_probe *p = probe_new(b, o->index, node, b->d.obj.ns, err);
    size_t n = 0, i = 0;
    struct k8s_objects_opts oo = b->d.obj;

    *out = NULL;
    if (!p)
        return -1;
    while (o->args && o->args[n])
        n++;
    const char **argv = kp_xcalloc(n + 6, sizeof(*argv));
    argv[i++] = "probe";
    argv[i++] = "--server";
    argv[i++] = server;
    argv[i++] = "--token-file";
    argv[i++] = K8S_TOKEN_FILE;
    for (size_t k = 0; k < n; k++)
        argv[i++] = o->args[k];
    p->job = k8s_objects_job_name(scenario, node, 0, b->n_steps++);
    struct k8s_client_job cj = {.name = p->job,
                                .node_hostname = k8s_client_node_hostname(b, node),
                                .scenario = scenario,
                                .placement = node,
                                .args = argv};
    oo.job_deadline_s = (int)o->deadline_s;
    json_t *job = k8s_objects_client_job(&oo, &cj);
    free(argv);
    *out = (struct backend_probe *)p;
    return probe_create(b, p, job, err);
}

int k8s_watch_probe_started(struct backend *base, struct backend_probe *bp, struct kp_err *err)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct k8s_probe *p = (struct k8s_probe *)bp;

    if (wait_ready(b, p, err) != 0)
        return -1;
    return start_thread(b, p, p->log_path, err);
}

const char *k8s_watch_probe_log(const struct backend_probe *bp)
{
    return ((const struct k8s_probe *)bp)->log_path;
}

bool k8s_watch_probe_running(struct backend_probe *bp)
{
    struct k8s_probe *p = (struct k8s_probe *)bp;
    bool r;

    pthread_mutex_lock(&p->mu);
    r = p->running != 0;
    pthread_mutex_unlock(&p->mu);
    return r;
}

const char *k8s_watch_probe_node(const struct backend_probe *bp, bool server)
{
    const struct k8s_probe *p = (const struct k8s_probe *)bp;

    return server ? p->server_node : p->node;
}

void k8s_watch_probe_stop(struct backend *base, struct backend_probe *bp)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    struct k8s_probe *p = (struct k8s_probe *)bp;
    struct kube_delete_opts orphan = {
        .propagation = KUBE_PROPAGATION_ORPHAN, .grace_period_s = -1, .missing_ok = 1};
    struct kube_delete_opts graceful = {.grace_period_s = -1, .missing_ok = 1};
    struct kp_err derr;

    if (p->stopped || !p->job)
        return;
    p->stopped = true;
    kube_client_reset_abort(b->kc); /* stop even when interrupted */
    /* the Job first (orphaning its pod), so that no controller replaces the pod */
    if (kube_delete(b->kc, &KUBE_RES_JOBS, p->ns, p->job, &orphan, NULL, &derr) != 0)
        kp_log(KP_LOG_WARN, "deleting probe job %s: %s", p->job, kp_err_msg(&derr));
    if (p->pod && kube_delete(b->kc, &KUBE_RES_PODS, p->ns, p->pod, &graceful, NULL, &derr) != 0)
        kp_log(KP_LOG_WARN, "deleting probe pod %s: %s", p->pod, kp_err_msg(&derr));
    if (b->stop)
        kube_client_abort(b->kc);
}

int k8s_watch_probe_wait(struct backend_probe *bp, struct kp_err *err)
{
    struct k8s_probe *p = (struct k8s_probe *)bp;
    uint64_t timeout_ms = K8S_GRACE;
    struct timespec until;
    int rc = 0;

    if (!p->started)
        return 0;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(timeout_ms / 1000);
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&p->mu);
    while (p->running && pthread_cond_timedwait(&p->cv, &p->mu, &until) != ETIMEDOUT)
        ;
    if (p->running) {
        p->wait_timed_out = true;
        rc = kp_err_set(err, "the log of probe pod %s did not end within %llums", p->pod,
                        (unsigned long long)timeout_ms);
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void k8s_watch_probe_describe(struct backend_probe *bp, char *buf, size_t len)
{
    struct k8s_probe *p = (struct k8s_probe *)bp;
    int n = snprintf(buf, len, "probe pod %s on node %s", p->pod ? p->pod : p->job, p->node);

    if (n < 0 || (size_t)n >= len)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->wait_timed_out)
        snprintf(buf + n, len - (size_t)n, ", its log still open after the stop");
    else if (p->stream_rc != 0)
        snprintf(buf + n, len - (size_t)n, ", its log stream failed: %s",
                 kp_err_msg(&p->stream_err));
    pthread_mutex_unlock(&p->mu);
}

/* The probe's document in its log file, without the agent's lines merged into it
 * (base/logdoc.h). The document is the log's end: reads at most the last PROBE_LOG_MAX
 * bytes (hours of status lines come before it). */
json_t *k8s_watch_probe_doc(const struct backend_probe *bp, json_error_t *jerr)
{
    const char *path = ((const struct k8s_probe *)bp)->log_path;
    FILE *f = fopen(path, "r");
    char *log = NULL, *text = NULL;
    size_t len = 0, n;
    long size;
    json_t *doc = NULL;

    snprintf(jerr->text, sizeof(jerr->text), "no document in the log");
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
        fseek(f, size > PROBE_LOG_MAX ? size - PROBE_LOG_MAX : 0, SEEK_SET) == 0) {
        log = kp_xmalloc((size_t)(size > PROBE_LOG_MAX ? PROBE_LOG_MAX : size) + 1); /* ours */
        len = fread(log, 1, (size_t)(size > PROBE_LOG_MAX ? PROBE_LOG_MAX : size), f);
        text = logdoc_extract(log, len, &n); /* ours */
    }
    fclose(f);
    free(log);
    if (text)
        doc = json_loadb(text, n, 0, jerr);
    free(text);
    return doc;
}

void k8s_watch_probe_free(struct backend *base, struct backend_probe *bp)
{
    struct k8s_probe *p = (struct k8s_probe *)bp;

    (void)base;
    if (!p)
        return;
    if (p->started) {
        kube_client_abort(p->kc); /* ends a stream still open */
        pthread_join(p->thread, NULL);
    }
    kube_client_free(p->kc);
    if (p->log)
        fclose(p->log);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->job);
    free(p->uid);
    free(p->pod);
    free(p->node);
    free(p->ns);
    free(p->server_node);
    if (p->log_path)
        (void)unlink(p->log_path);
    free(p->log_path);
    free(p);
}

char **k8s_watch_env(struct backend *base)
{
    struct k8s_backend *b = (struct k8s_backend *)base;
    char **env = kp_xcalloc(3, sizeof(*env));

    env[0] = kp_xasprintf("KPERF_RUN_ID=%s", b->d.run_id);
    env[1] = kp_xasprintf("KPERF_NAMESPACE=%s", b->d.ns);
    return env;
}
