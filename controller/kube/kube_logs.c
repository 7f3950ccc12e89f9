/* SPDX-License-Identifier: Apache-2.0 */
/* kube_logs.c - pods/log: plain-text bodies (JSON Status on errors), read whole or streamed.
 * See kube.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/kube/kube.h"
#include "controller/kube/kube_int.h"

static char *log_path(const char *ns, const char *pod, const struct kube_log_opts *o, int follow)
{
    char *base = kube_path(&KUBE_RES_PODS, ns, pod, "log");
    char *q = NULL, *path;
    char num[32];

    if (o && o->container)
        kube_query_add(&q, "container", o->container);
    if (o && o->tail_lines > 0) {
        snprintf(num, sizeof(num), "%ld", o->tail_lines);
        kube_query_add(&q, "tailLines", num);
    }
    if (o && o->limit_bytes > 0) {
        snprintf(num, sizeof(num), "%ld", o->limit_bytes);
        kube_query_add(&q, "limitBytes", num);
    }
    if (o && o->previous)
        kube_query_add(&q, "previous", "true");
    if (o && o->timestamps)
        kube_query_add(&q, "timestamps", "true");
    if (follow)
        kube_query_add(&q, "follow", "true");
    path = q ? kp_xasprintf("%s?%s", base, q) : kp_xstrdup(base);
    free(q);
    free(base);
    return path;
}

static int run(struct kube_client *c, const char *ns, const char *pod,
               const struct kube_log_opts *o, kube_data_fn *fn, void *arg, char **out, size_t *len,
               struct kp_err *err)
{
    int follow = fn && o && o->follow;
    char *path = log_path(ns, pod, o, follow);
    char *what = kube_what("get", &KUBE_RES_PODS, ns, pod);
    struct http_request rq = {0};
    struct http_response rs;
    uint64_t sent = http_request_count(c->http);
    int rc = -1;

    {
        char *w2 = kp_xasprintf("%s log", what);
        free(what);
        what = w2;
    }
    memset(&c->last, 0, sizeof(c->last));
    rq.method = "GET";
    rq.path = path;
    rq.accept = "*/*";
    rq.retry = HTTP_RETRY_IDEMPOTENT;
    rq.timeout_ms = follow ? -1 : 0;
    if (follow && o->deadline_ms)
        rq.deadline_ms = http_now_ms(c->http) + o->deadline_ms;
    rq.on_data = fn;
    rq.data_arg = arg;
    if (http_do(c->http, &rq, &rs, err) != 0) {
        c->last.http_status = (int)rs.status;
        c->last.requests = (unsigned)(http_request_count(c->http) - sent);
        kp_err_prefix(err, "%s", what);
        goto out;
    }
    c->last.http_status = (int)rs.status;
    c->last.retries = rs.retries;
    c->last.requests = (unsigned)(http_request_count(c->http) - sent);
    if (rs.deadline_reached && (rs.status == 0 || rs.status == 200)) {
        rc = 0; /* a follow that ran out of time is not an error */
        goto out;
    }
    if (rs.status < 200 || rs.status >= 300) {
        status_error(rs.status, rs.content_type, rs.body, rs.len, what, c->cfg, rs.retries,
                     c->last.reason, err);
        goto out;
    }
    if (out) {
        *out = rs.body;
        rs.body = NULL;
        if (len)
            *len = rs.len;
    }
    rc = 0;
out:
    free(rs.body);
    free(what);
    free(path);
    return rc;
}

int kube_pod_logs(struct kube_client *c, const char *ns, const char *pod,
                  const struct kube_log_opts *opts, char **out, size_t *len, struct kp_err *err)
{
    *out = NULL;
    if (len)
        *len = 0;
    return run(c, ns, pod, opts, NULL, NULL, out, len, err);
}

int kube_pod_logs_stream(struct kube_client *c, const char *ns, const char *pod,
                         const struct kube_log_opts *opts, kube_data_fn *fn, void *arg,
                         struct kp_err *err)
{
    return run(c, ns, pod, opts, fn, arg, NULL, NULL, err);
}
