/* SPDX-License-Identifier: Apache-2.0 */
/* kube_watch.c - list-then-watch with client-go's reflector behaviour: re-watch from the last
 * resourceVersion when a stream ends or drops (with backoff 800 ms .. 30 s), relist on 410
 * Gone (HTTP or ERROR event) and turn the difference into ADDED/MODIFIED/DELETED events so that
 * nothing is lost. Holds the current event plus a "ns/name" -> resourceVersion index. */
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/kube/kube.h"
#include "controller/kube/kube_int.h"

#define WATCH_BACKOFF_MS     800
#define WATCH_BACKOFF_CAP_MS 30000
#define WATCH_MAX_FAILURES   10 /* consecutive stream failures without any event */

struct watch {
    struct kube_client *c;
    const struct kube_resource *res;
    const char *ns;
    const struct kube_watch_opts *opts;
    kube_watch_fn *fn;
    void *arg;
    struct kp_err *err;
    json_t *index; /* "ns/name" -> resourceVersion string; ours */
    json_t *seen;  /* keys met during a relist; ours while relisting */
    char *rv;      /* where the next watch starts; ours */
    char *line;    /* partial event bytes; ours */
    size_t len, cap, max;
    unsigned events;      /* events handled in the current stream */
    int stop;             /* fn returned 1 */
    int failed;           /* fn returned -1, or a bad event */
    int gone;             /* ERROR 410 */
    char status_msg[512]; /* other ERROR events */
};

/* "ns/name"; the watched namespace stands in when an object omits its own. */
static char *key_of(const struct watch *w, json_t *obj)
{
    json_t *m = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(m, "namespace"));

    if (!ns && w->res->namespaced)
        ns = w->ns;
    const char *name = json_string_value(json_object_get(m, "name"));
    return kp_xasprintf("%s/%s", ns ? ns : "", name ? name : "");
}

static const char *rv_of(json_t *obj)
{
    const char *rv =
        json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    return rv ? rv : "";
}

static void set_rv(struct watch *w, const char *rv)
{
    if (!rv || !*rv)
        return;
    free(w->rv);
    w->rv = kp_xstrdup(rv);
}

static int emit(struct watch *w, enum kube_event_type t, json_t *obj)
{
    int r = w->fn(w->arg, t, obj, w->err);
    if (r > 0)
        w->stop = 1;
    else if (r < 0)
        w->failed = 1;
    return r;
}

/* Relist callback: ADDED for new keys, MODIFIED for new versions, nothing for unchanged. */
static int relist_item(void *arg, json_t *item, struct kp_err *err)
{
    struct watch *w = arg;
    char *key = key_of(w, item);
    const char *old = json_string_value(json_object_get(w->index, key));
    const char *rv = rv_of(item);
    int r = 0;

    (void)err;
    json_object_set_new(w->seen, key, json_true());
    if (!old || strcmp(old, rv) != 0) {
        json_object_set_new(w->index, key, json_string(rv));
        r = emit(w, old ? KUBE_EVENT_MODIFIED : KUBE_EVENT_ADDED, item);
    }
    free(key);
    return r;
}

/* DELETED for objects that vanished while we were not watching. */
static int relist_deleted(struct watch *w)
{
    const char *k;
    json_t *v;
    void *tmp;

    json_object_foreach_safe(w->index, tmp, k, v)
    {
        const char *slash = strchr(k, '/');
        json_t *obj;
        int r;
        if (json_object_get(w->seen, k))
            continue;
        obj = json_pack("{s:{s:s%, s:s, s:s}}", "metadata", "namespace", k, (size_t)(slash - k),
                        "name", slash + 1, "resourceVersion", json_string_value(v));
        json_object_del(w->index, k);
        r = emit(w, KUBE_EVENT_DELETED, obj);
        json_decref(obj);
        if (r != 0)
            return r;
    }
    return 0;
}

static int relist(struct watch *w)
{
    struct kube_list_opts lo = {w->opts->label_selector, w->opts->field_selector, 0, NULL};
    char *rv = NULL;
    int r;

    w->seen = json_object();
    r = kube_list(w->c, w->res, w->ns, &lo, relist_item, w, &rv, w->err);
    if (r == 0 && !w->stop)
        r = relist_deleted(w);
    json_decref(w->seen);
    w->seen = NULL;
    if (r < 0)
        return -1;
    set_rv(w, rv);
    free(rv);
    if (!w->stop && emit(w, KUBE_EVENT_SYNCED, NULL) < 0)
        return -1;
    return 0;
}

static int on_event(struct watch *w, json_t *ev)
{
    const char *type = json_string_value(json_object_get(ev, "type"));
    json_t *obj = json_object_get(ev, "object");
    char *key;

    if (!type || !json_is_object(obj))
        return kp_err_set(w->err, "watch sent an event without type or object");
    if (!strcmp(type, "ERROR")) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        const char *m = json_string_value(json_object_get(obj, "message"));
        if (code == 410) {
            w->gone = 1;
            return 1;
        }
        snprintf(w->status_msg, sizeof(w->status_msg), "watch error %lld: %s", (long long)code,
                 m ? m : "");
        return 1;
    }
    set_rv(w, rv_of(obj));
    if (!strcmp(type, "BOOKMARK"))
        return w->opts->bookmarks ? emit(w, KUBE_EVENT_BOOKMARK, obj) : 0;
    key = key_of(w, obj);
    if (!strcmp(type, "DELETED"))
        json_object_del(w->index, key);
    else
        json_object_set_new(w->index, key, json_string(rv_of(obj)));
    free(key);
    w->events++;
    if (!strcmp(type, "ADDED"))
        return emit(w, KUBE_EVENT_ADDED, obj);
    if (!strcmp(type, "MODIFIED"))
        return emit(w, KUBE_EVENT_MODIFIED, obj);
    if (!strcmp(type, "DELETED"))
        return emit(w, KUBE_EVENT_DELETED, obj);
    return 0; /* unknown types are ignored, as client-go does */
}

/* Stream sink: splits on newlines, one event parsed and delivered at a time. */
static int on_data(void *arg, const char *p, size_t n)
{
    struct watch *w = arg;

    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n') {
            if (w->len + 1 >= w->cap) {
                if (w->cap >= w->max) {
                    kp_err_set(w->err, "watch event larger than %zu bytes", w->max);
                    w->failed = 1;
                    return 1;
                }
                w->cap = w->cap ? w->cap * 2 : 16384;
                w->line = kp_xrealloc(w->line, w->cap);
            }
            w->line[w->len++] = p[i];
            continue;
        }
        if (w->len > 0) {
            json_t *ev = json_loadb(w->line, w->len, 0, NULL);
            int r;
            w->len = 0;
            if (!ev) {
                kp_err_set(w->err, "watch sent invalid JSON");
                w->failed = 1;
                return 1;
            }
            r = on_event(w, ev);
            json_decref(ev);
            if (r < 0)
                w->failed = 1;
            if (r != 0)
                return 1;
        }
    }
    return 0;
}

static char *watch_path(struct watch *w, long timeout_s)
{
    char *base = kube_path(w->res, w->ns, NULL, NULL);
    char *q = NULL, *path;
    char t[32];

    snprintf(t, sizeof(t), "%ld", timeout_s);
    kube_query_add(&q, "watch", "1");
    kube_query_add(&q, "resourceVersion", w->rv);
    kube_query_add(&q, "allowWatchBookmarks", "true");
    kube_query_add(&q, "timeoutSeconds", t);
    kube_query_add(&q, "labelSelector", w->opts->label_selector);
    kube_query_add(&q, "fieldSelector", w->opts->field_selector);
    path = kp_xasprintf("%s?%s", base, q);
    free(q);
    free(base);
    return path;
}

/* Outcome of one stream. */
enum stream_end {
    STREAM_EOF,
    STREAM_GONE,
    STREAM_DROPPED,
    STREAM_STOP,
    STREAM_DEADLINE,
    STREAM_FAIL
};

static enum stream_end one_stream(struct watch *w, long timeout_s, uint64_t deadline,
                                  const char *what)
{
    struct kube_client *c = w->c;
    struct http_request rq = {0};
    struct http_response rs;
    char *path;
    int r;

    path = watch_path(w, timeout_s);
    rq.method = "GET";
    rq.path = path;
    rq.retry = HTTP_RETRY_IDEMPOTENT;
    rq.timeout_ms = (timeout_s + 30) * 1000;
    rq.deadline_ms = deadline;
    rq.wake = w->opts->wake;
    rq.on_data = on_data;
    rq.data_arg = w;
    w->len = 0;
    w->events = 0;
    r = http_do(c->http, &rq, &rs, w->err);
    free(path);
    c->last.http_status = (int)rs.status;
    if (w->failed) {
        free(rs.body);
        return STREAM_FAIL;
    }
    if (w->stop) {
        free(rs.body);
        return STREAM_STOP;
    }
    if (r != 0) {
        free(rs.body);
        if (http_aborted(c->http))
            return STREAM_FAIL;
        if (rs.status == 200) /* the stream broke after it had started */
            return STREAM_DROPPED;
        kp_err_prefix(w->err, "%s", what);
        return STREAM_FAIL;
    }
    if (rs.deadline_reached) {
        free(rs.body);
        return STREAM_DEADLINE;
    }
    if (rs.status == 410) {
        free(rs.body);
        return STREAM_GONE;
    }
    if (rs.status != 200) {
        status_error(rs.status, rs.content_type, rs.body, rs.len, what, c->cfg, rs.retries,
                     c->last.reason, w->err);
        free(rs.body);
        return STREAM_FAIL;
    }
    free(rs.body);
    if (w->gone)
        return STREAM_GONE;
    if (w->status_msg[0]) {
        kp_err_set(w->err, "%s: %s", what, w->status_msg);
        return STREAM_FAIL;
    }
    return STREAM_EOF;
}

static int watch_loop(struct watch *w, uint64_t deadline, const char *what)
{
    struct kube_client *c = w->c;
    unsigned failures = 0;
    uint64_t backoff = WATCH_BACKOFF_MS;
    int need_list = w->rv == NULL;

    for (;;) {
        enum stream_end e;
        long timeout_s = w->opts->stream_timeout_s;
        uint64_t t0;

        if (http_aborted(c->http))
            return kp_err_set(w->err, "%s: interrupted", what);
        if ((deadline && http_now_ms(c->http) >= deadline) || (w->opts->wake && *w->opts->wake))
            return 1;
        if (need_list) {
            if (relist(w) != 0)
                return -1;
            if (w->stop)
                return 0;
            need_list = 0;
        }
        w->gone = 0;
        if (timeout_s <= 0) /* spread reconnects like client-go: 5 to 10 minutes */
            timeout_s = 300 + (long)(http_now_ms(c->http) % 301);
        t0 = http_now_ms(c->http);
        e = one_stream(w, timeout_s, deadline, what);
        switch (e) {
        case STREAM_STOP:
            return 0;
        case STREAM_DEADLINE:
            return 1;
        case STREAM_FAIL:
            return -1;
        case STREAM_GONE:
            kp_log(KP_LOG_DEBUG, "%s: resourceVersion %s expired (410); listing again", what,
                   w->rv ? w->rv : "");
            need_list = 1;
            break;
        case STREAM_DROPPED:
        case STREAM_EOF:
            kp_log(KP_LOG_DEBUG, "%s: stream %s after %u events; watching again from %s", what,
                   e == STREAM_EOF ? "ended" : "dropped", w->events, w->rv ? w->rv : "");
            break;
        }
        /* a stream that delivered events, or that lasted until about its timeout on a quiet
         * collection, was healthy */
        if (w->events > 0 ||
            (e == STREAM_EOF && http_now_ms(c->http) - t0 >= (uint64_t)timeout_s * 500u)) {
            failures = 0;
            backoff = WATCH_BACKOFF_MS;
            continue;
        }
        if (e == STREAM_GONE && failures == 0) {
            failures++;
            continue; /* the first relist goes straight away */
        }
        if (++failures > WATCH_MAX_FAILURES)
            return kp_err_set(w->err, "%s: %u streams in a row ended without events; giving up",
                              what, failures - 1);
        http_sleep_ms(c->http, backoff);
        backoff = backoff * 2 > WATCH_BACKOFF_CAP_MS ? WATCH_BACKOFF_CAP_MS : backoff * 2;
    }
}

int kube_watch(struct kube_client *c, const struct kube_resource *res, const char *ns,
               const struct kube_watch_opts *opts, kube_watch_fn *fn, void *arg, struct kp_err *err)
{
    static const struct kube_watch_opts none = {0};
    struct watch w;
    char *what = kube_what("watch", res, ns, NULL);
    uint64_t sent = http_request_count(c->http), deadline;
    int rc;

    memset(&w, 0, sizeof(w));
    memset(&c->last, 0, sizeof(c->last));
    w.c = c;
    w.res = res;
    w.ns = ns;
    w.opts = opts ? opts : &none;
    w.fn = fn;
    w.arg = arg;
    w.err = err;
    w.index = json_object();
    w.max = http_max_body(c->http);
    if (w.opts->resource_version && *w.opts->resource_version)
        w.rv = kp_xstrdup(w.opts->resource_version);
    deadline = w.opts->deadline_ms ? http_now_ms(c->http) + w.opts->deadline_ms : 0;
    rc = watch_loop(&w, deadline, what);
    c->last.requests = (unsigned)(http_request_count(c->http) - sent); /* lists, streams, retries */
    if (w.opts->resume_rv && w.rv) {
        free(*w.opts->resume_rv);
        *w.opts->resume_rv = w.rv;
        w.rv = NULL;
    }
    json_decref(w.index);
    free(w.rv);
    free(w.line);
    free(what);
    return rc;
}
