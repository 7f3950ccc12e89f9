/* SPDX-License-Identifier: Apache-2.0 */
/* watch_probes.c - the probes of `kperf watch` through the backend's probe operations (see
 * watch_probes.h). */
#include "cmd/kperf/watch_probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"

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
    return p->probe && wp->b->ops->probe_running(p->probe);
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
                p->ended = true;
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

int watch_probes_start(struct watch_probes *wp, const struct plan *plan,
                       const struct watch_probe_opts *o, struct kp_err *err)
{
    const struct backend_ops *ops = wp->b->ops;
    char rate[16];
    const char *args[] = {"--rate", rate, "--status", "500ms", NULL};

    if (!ops->probe_start)
        return kp_err_set(err, "the %s backend cannot run kperf watch", ops->name);
    snprintf(rate, sizeof(rate), "%u", o->rate);
    for (size_t i = 0; i < plan_group_count(plan) && wp->n < WATCH_MAX_PATHS; i++) {
        const struct plan_group *g = plan_group_get(plan, i);
        struct watch_path *p = &wp->paths[wp->n];
        struct backend_probe_opts po = {.args = args, .index = wp->n, .deadline_s = o->deadline_s};
        int rc;
        if (g->skipped || g->reverse || g->placement == PLACEMENT_NODE)
            continue;
        p->g = g;
        p->name = kp_xasprintf("%s/%s", plan_scenario_name(g->scenario), g->placement_label);
        rc = ops->probe_start(wp->b, g, &po, &p->probe, err);
        p->log = p->probe ? ops->probe_log(p->probe) : NULL;
        wp->n++;
        if (rc != 0)
            return kp_err_prefix(err, "probe of %s", p->name);
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

    if (p->ended || !p->probe || running(wp, p))
        return !p->ended && p->probe;
    kp_log(KP_LOG_WARN, "the probe of %s ended early", p->name);
    p->ended = true;
    return false;
}

void watch_probes_stop(struct watch_probes *wp)
{
    const struct backend_ops *ops = wp->b ? wp->b->ops : NULL;

    for (size_t i = 0; i < wp->n; i++)
        if (wp->paths[i].probe)
            ops->probe_stop(wp->b, wp->paths[i].probe);
    for (size_t i = 0; i < wp->n; i++) {
        struct watch_path *p = &wp->paths[i];
        struct kp_err err;
        if (p->probe && ops->probe_wait(p->probe, &err) != 0)
            kp_log(KP_LOG_WARN, "%s: %s", p->name, kp_err_msg(&err));
    }
}

json_t *watch_probes_doc(const struct watch_probes *wp, const struct watch_path *p, char *why,
                         size_t len)
{
    const struct backend_ops *ops = wp->b->ops;
    json_error_t jerr;
    json_t *doc = NULL;
    const char *schema;

    snprintf(jerr.text, sizeof(jerr.text), "the probe did not start");
    if (p->probe)
        doc = ops->probe_doc(p->probe, &jerr);
    schema = json_string_value(json_object_get(doc, "schema"));
    if (doc && (!schema || strcmp(schema, "kperf.probe/v1") != 0)) {
        json_decref(doc);
        doc = NULL;
        snprintf(jerr.text, sizeof(jerr.text), "not a kperf.probe/v1 document");
    }
    if (!doc) {
        char line[300] = "", who[300];
        if (!p->log || !log_line(p->log, NULL, line, sizeof(line)))
            snprintf(line, sizeof(line), "%s", jerr.text);
        if (p->probe && ops->probe_describe) { /* which pod, and whether its log is complete */
            ops->probe_describe(p->probe, who, sizeof(who));
            snprintf(why, len, "no probe document from %s (the log's last line: %s)", who, line);
        } else {
            snprintf(why, len, "no probe document (%s)", line);
        }
    }
    return doc;
}

const char *watch_probes_node(const struct watch_probes *wp, const struct watch_path *p,
                              bool server)
{
    if (!p->probe || !wp->b->ops->probe_node)
        return NULL;
    return wp->b->ops->probe_node(p->probe, server);
}

char **watch_probes_env(struct watch_probes *wp)
{
    return wp->b->ops->watch_env(wp->b);
}

void watch_probes_free(struct watch_probes *wp)
{
    for (size_t i = 0; i < wp->n; i++) {
        struct watch_path *p = &wp->paths[i];
        if (p->probe)
            wp->b->ops->probe_free(wp->b, p->probe);
        free(p->name);
    }
    memset(wp, 0, sizeof(*wp));
}
