/* SPDX-License-Identifier: Apache-2.0 */
/* watch_probes.c - the probes of `kperf watch` on either backend (see watch_probes.h). */
#include "cmd/kperf/watch_probes.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/logdoc.h"
#include "base/subproc.h"
#include "controller/k8s/k8s_watch.h"
#include "controller/local/backend_local.h"

#define PROBE_GRACE   5000        /* ms a probe may take to write its document after SIGTERM */
#define K8S_GRACE     20000       /* ms for a pod's deletion to reach it and its log to end */
#define PROBE_LOG_MAX (64L << 20) /* bytes of a probe's log end read for its document */

/* The first line of path containing mark (or the last line when mark is NULL) into buf. */
static bool log_line(const char *path, const char *mark, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    char line[512];
    bool found = false;

    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!mark || strstr(line, mark)) {
            size_t n = strlen(line) < len ? strlen(line) : len - 1; /* truncated to fit buf */
            memcpy(buf, line, n);
            buf[n] = '\0';
            found = true;
            if (mark)
                break;
        }
    }
    fclose(f);
    return found;
}

static bool running(const struct watch_probes *wp, const struct watch_path *p)
{
    if (wp->local)
        return p->pid > 0 && subproc_alive(p->pid);
    return p->kp && k8s_watch_probe_running(p->kp);
}

/* Waits until every probe printed its "probing" line. */
static int wait_probes(struct watch_probes *wp, const struct watch_probe_opts *o,
                       struct kp_err *err)
{
    uint64_t end = clock_now_ms() + o->timeout_ms;
    char line[512];

    for (;;) {
        bool all = true;
        for (size_t i = 0; i < wp->n; i++) {
            struct watch_path *p = &wp->paths[i];
            if (p->ready)
                continue;
            p->ready = log_line(p->log, "kperf-agent: probing", line, sizeof(line));
            if (p->ready)
                continue;
            if (!running(wp, p)) {
                p->pid = 0;
                if (!log_line(p->log, NULL, line, sizeof(line)))
                    snprintf(line, sizeof(line), "no output");
                return kp_err_set(err, "probe of %s exited at start: %s", p->name, line);
            }
            all = false;
        }
        if (all)
            return 0;
        if (*o->signal)
            return kp_err_set(err, "interrupted");
        if (clock_now_ms() >= end)
            return kp_err_set(err, "probes not running after %llums",
                              (unsigned long long)o->timeout_ms);
        clock_sleep_ms(20);
    }
}

static int start_one(struct watch_probes *wp, struct watch_path *p, const char **args,
                     const struct watch_probe_opts *o, struct kp_err *err)
{
    if (wp->local) {
        p->out = kp_xasprintf("%s/probe-%zu.json", backend_local_run_dir(wp->b), wp->n);
        p->log = kp_xasprintf("%s/probe-%zu.log", backend_local_run_dir(wp->b), wp->n);
        args[4] = "--output";
        args[5] = p->out;
        return backend_local_spawn_probe(wp->b, p->g, args, p->log, &p->pid, err);
    }
    /* a new pod's first SYN may go unanswered (its network still settling): 3 s covers its
     * retransmission (a `kperf run` client allows 5 s); also the bound of each reconnect */
    args[4] = "--connect-timeout";
    args[5] = "3s";
    struct k8s_probe_opts ko = {.args = args, .deadline_s = o->deadline_s};
    p->log = kp_xasprintf("%s/probe-%zu.log", wp->dir, wp->n);
    ko.log_path = p->log;
    return k8s_watch_probe_start(wp->b, p->g, &ko, &p->kp, err);
}

int watch_probes_start(struct watch_probes *wp, const struct plan *plan,
                       const struct watch_probe_opts *o, struct kp_err *err)
{
    char rate[16];
    const char *args[] = {"--rate", rate, "--status", "500ms", NULL, NULL, NULL};

    snprintf(rate, sizeof(rate), "%u", o->rate);
    if (!wp->local && !wp->dir) {
        char tmpl[] = "/tmp/kperf-watch-XXXXXX";
        if (!mkdtemp(tmpl))
            return kp_err_set(err, "cannot create a directory for the probe logs: %s",
                              strerror(errno));
        wp->dir = kp_xstrdup(tmpl);
    }
    for (size_t i = 0; i < plan_group_count(plan) && wp->n < WATCH_MAX_PATHS; i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        struct watch_path *p = &wp->paths[wp->n];
        if (g->skipped || g->reverse || g->placement == PLACEMENT_NODE)
            continue;
        p->g = g;
        p->name = kp_xasprintf("%s/%s", plan_scenario_name(g->scenario), g->placement_label);
        args[4] = args[5] = args[6] = NULL;
        if (start_one(wp, p, args, o, err) != 0) {
            wp->n++;
            return kp_err_prefix(err, "probe of %s", p->name);
        }
        wp->n++;
        if (*o->signal)
            return kp_err_set(err, "interrupted");
    }
    if (wp->n == 0)
        return kp_err_set(err, "no path to probe (every scenario was skipped)");
    return wait_probes(wp, o, err);
}

bool watch_probes_alive(struct watch_probes *wp, size_t i)
{
    struct watch_path *p = &wp->paths[i];
    bool was = wp->local ? p->pid > 0 : p->ready;

    if (!was || running(wp, p))
        return was;
    kp_log(KP_LOG_WARN, "the probe of %s ended early", p->name);
    if (wp->local)
        p->pid = 0;
    else
        p->ready = false;
    return false;
}

void watch_probes_stop(struct watch_probes *wp)
{
    for (size_t i = 0; i < wp->n; i++) {
        struct watch_path *p = &wp->paths[i];
        if (wp->local && p->pid > 0)
            kill(p->pid, SIGTERM);
        else if (p->kp)
            k8s_watch_probe_signal(wp->b, p->kp);
    }
    for (size_t i = 0; i < wp->n; i++) {
        struct watch_path *p = &wp->paths[i];
        struct kp_err err;
        if (wp->local && p->pid > 0)
            (void)subproc_stop(p->pid, PROBE_GRACE);
        else if (p->kp && k8s_watch_probe_wait(p->kp, K8S_GRACE, &err) != 0)
            kp_log(KP_LOG_WARN, "%s: %s", p->name, kp_err_msg(&err));
        p->pid = 0;
    }
}

/* The probe's document in its log file, without the agent's lines merged into it
 * (base/logdoc.h). The document is the log's end: reads at most the last PROBE_LOG_MAX
 * bytes (hours of status lines come before it). */
static json_t *doc_in_log(const char *path, json_error_t *jerr)
{
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

json_t *watch_probes_doc(const struct watch_path *p, char *why, size_t len)
{
    json_error_t jerr;
    json_t *doc = p->out ? json_load_file(p->out, 0, &jerr) : doc_in_log(p->log, &jerr);
    const char *schema = json_string_value(json_object_get(doc, "schema"));

    if (doc && (!schema || strcmp(schema, "kperf.probe/v1") != 0)) {
        json_decref(doc);
        doc = NULL;
        snprintf(jerr.text, sizeof(jerr.text), "not a kperf.probe/v1 document");
    }
    if (!doc) {
        char line[300] = "", who[300];
        if (!log_line(p->log, NULL, line, sizeof(line)))
            snprintf(line, sizeof(line), "%s", jerr.text);
        if (p->kp) { /* which pod, and whether its log is complete */
            k8s_watch_probe_describe(p->kp, who, sizeof(who));
            snprintf(why, len, "no probe document from %s (the log's last line: %s)", who, line);
        } else {
            snprintf(why, len, "no probe document (%s)", line);
        }
    }
    return doc;
}

const char *watch_probes_node(const struct watch_path *p, bool server)
{
    return p->kp ? k8s_watch_probe_node(p->kp, server) : NULL;
}

char **watch_probes_env(struct watch_probes *wp)
{
    return wp->local ? backend_local_env(wp->b) : k8s_watch_env(wp->b);
}

void watch_probes_free(struct watch_probes *wp)
{
    for (size_t i = 0; i < wp->n; i++) {
        struct watch_path *p = &wp->paths[i];
        k8s_watch_probe_free(p->kp);
        if (wp->dir && p->log)
            (void)unlink(p->log);
        free(p->name);
        free(p->out);
        free(p->log);
    }
    if (wp->dir)
        (void)rmdir(wp->dir);
    free(wp->dir);
    memset(wp, 0, sizeof(*wp));
}
