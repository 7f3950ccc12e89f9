/* SPDX-License-Identifier: Apache-2.0 */
/* kube.c - see kube.h. The client, paths, and the one-shot operations (version, get, list,
 * create, patch, delete, deletecollection, SSAR, raw requests). Watch is in kube_watch.c and
 * logs in kube_logs.c; HTTP is kube/http.c, error text kube/status.c. */
#include "controller/kube/kube.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/kube/codec.h"
#include "controller/kube/http.h"
#include "controller/kube/kube_int.h"

const struct kube_resource KUBE_RES_NAMESPACES = {"v1", "namespaces", 0};
const struct kube_resource KUBE_RES_NODES = {"v1", "nodes", 0};
const struct kube_resource KUBE_RES_PODS = {"v1", "pods", 1};
const struct kube_resource KUBE_RES_SERVICES = {"v1", "services", 1};
const struct kube_resource KUBE_RES_SECRETS = {"v1", "secrets", 1};
const struct kube_resource KUBE_RES_EVENTS = {"v1", "events", 1};
const struct kube_resource KUBE_RES_CONFIGMAPS = {"v1", "configmaps", 1};
const struct kube_resource KUBE_RES_DAEMONSETS = {"apps/v1", "daemonsets", 1};
const struct kube_resource KUBE_RES_JOBS = {"batch/v1", "jobs", 1};

int kube_client_new_from_config(struct kube_config *cfg, const struct kube_client_opts *opts,
                                struct kube_client **out, struct kp_err *err)
{
    struct kube_client *c;

    *out = NULL;
    c = kp_xcalloc(1, sizeof(*c));
    c->cfg = cfg;
    c->http = http_new(cfg, opts, err);
    if (!c->http) {
        kp_err_prefix(err, "context \"%s\"", cfg->context_name);
        kube_client_free(c); /* frees cfg too */
        return -1;
    }
    if (cfg->insecure)
        kp_log(KP_LOG_WARN,
               "TLS verification is off for %s (insecure-skip-tls-verify in %s); anyone on the "
               "path can read and change the traffic",
               cfg->server, cfg->source);
    kp_log(KP_LOG_DEBUG, "kube: context \"%s\", server %s, namespace %s (from %s)",
           cfg->context_name, cfg->server, cfg->ns, cfg->source);
    *out = c;
    return 0;
}

int kube_client_new(const struct kube_client_opts *opts, struct kube_client **out,
                    struct kp_err *err)
{
    struct kube_config_opts co = {0};
    struct kube_config *cfg = NULL;

    *out = NULL;
    if (opts) {
        co.kubeconfig = opts->kubeconfig;
        co.context = opts->context;
        co.ns = opts->ns;
    }
    if (kube_config_load(&co, &cfg, err) != 0)
        return -1;
    return kube_client_new_from_config(cfg, opts, out, err);
}

void kube_client_free(struct kube_client *c)
{
    if (!c)
        return;
    http_free(c->http);
    kube_config_free(c->cfg);
    free(c);
}

const struct kube_config *kube_client_config(const struct kube_client *c)
{
    return c->cfg;
}

void kube_client_abort(struct kube_client *c)
{
    http_abort(c->http);
}

void kube_client_reset_abort(struct kube_client *c)
{
    http_reset_abort(c->http);
}

const struct kube_last *kube_client_last(const struct kube_client *c)
{
    return &c->last;
}

uint64_t kube_request_count(const struct kube_client *c)
{
    return http_request_count(c->http);
}

char *kube_path(const struct kube_resource *res, const char *ns, const char *name, const char *sub)
{
    const char *root = strchr(res->group_version, '/') ? "/apis/" : "/api/";
    char *nspart =
        res->namespaced && ns && *ns ? kp_xasprintf("/namespaces/%s", ns) : kp_xstrdup("");
    char *p = kp_xasprintf("%s%s%s/%s%s%s%s%s", root, res->group_version, nspart, res->plural,
                           name ? "/" : "", name ? name : "", sub ? "/" : "", sub ? sub : "");
    free(nspart);
    return p;
}

/* "list pods in namespace "x"" for messages (caller frees). */
char *kube_what(const char *verb, const struct kube_resource *res, const char *ns, const char *name)
{
    const char *g = strchr(res->group_version, '/') ? res->group_version : NULL;
    char *gv = g ? kp_xasprintf(".%.*s", (int)(strchr(g, '/') - g), g) : kp_xstrdup("");
    char *s;

    if (res->namespaced && ns && *ns)
        s = kp_xasprintf("%s %s%s%s%s in namespace \"%s\"", verb, res->plural, gv, name ? " " : "",
                         name ? name : "", ns);
    else
        s = kp_xasprintf("%s %s%s%s%s%s", verb, res->plural, gv, name ? " " : "", name ? name : "",
                         res->namespaced ? " in all namespaces" : "");
    free(gv);
    return s;
}

/* Appends "&k=v" (v escaped) to *q. */
void kube_query_add(char **q, const char *k, const char *v)
{
    char *e, *s;

    if (!v)
        return;
    e = codec_query_escape(v);
    s = kp_xasprintf("%s%s%s=%s", *q ? *q : "", *q && **q ? "&" : "", k, e);
    free(e);
    free(*q);
    *q = s;
}

int kube_call(struct kube_client *c, const struct kube_call *call, json_t **out, struct kp_err *err)
{
    struct http_request rq = {0};
    struct http_response rs;
    uint64_t sent = http_request_count(c->http);
    char *body = NULL;
    int rc = -1;

    if (out)
        *out = NULL;
    memset(&c->last, 0, sizeof(c->last));
    c->last_maybe_done = 0;
    rq.method = call->method;
    rq.path = call->path;
    rq.retry = call->retry;
    rq.content_type = call->content_type;
    if (call->body) {
        body = json_dumps(call->body, JSON_COMPACT);
        rq.body = body;
        rq.body_len = strlen(body);
    }
    if (http_do(c->http, &rq, &rs, err) != 0) {
        c->last.http_status = (int)rs.status;
        c->last.requests = (unsigned)(http_request_count(c->http) - sent);
        c->last_maybe_done = rs.maybe_done;
        kp_err_prefix(err, "%s", call->what);
        goto out;
    }
    c->last.http_status = (int)rs.status;
    c->last.retries = rs.retries;
    c->last.requests = (unsigned)(http_request_count(c->http) - sent);
    c->last_maybe_done = rs.maybe_done;
    if (rs.status < 200 || rs.status >= 300) {
        status_error(rs.status, rs.content_type, rs.body, rs.len, call->what, c->cfg, rs.retries,
                     c->last.reason, err);
        if (rs.failing_ms)
            kp_err_prefix(err, "gave up after %llu s of failures",
                          (unsigned long long)(rs.failing_ms / 1000));
        goto out;
    }
    if (out && rs.len > 0) {
        json_error_t je;
        *out = json_loadb(rs.body, rs.len, 0, &je);
        if (!*out) {
            kp_err_set(err, "%s: the server sent invalid JSON (%s at byte %d)", call->what, je.text,
                       je.position);
            goto out;
        }
    }
    rc = 0;
out:
    free(rs.body);
    free(body);
    return rc;
}

static int parse_int_prefix(const char *s)
{
    int v = 0;
    while (s && isdigit((unsigned char)*s))
        v = v * 10 + (*s++ - '0');
    return v;
}

int kube_version(struct kube_client *c, struct kube_version *v, struct kp_err *err)
{
    struct kube_call call = {
        "GET", "/version", NULL, NULL, HTTP_RETRY_IDEMPOTENT, "get server version"};
    json_t *doc = NULL;
    const char *s;

    memset(v, 0, sizeof(*v));
    if (kube_call(c, &call, &doc, err) != 0)
        return -1;
    v->major = parse_int_prefix(json_string_value(json_object_get(doc, "major")));
    v->minor = parse_int_prefix(json_string_value(json_object_get(doc, "minor")));
    s = json_string_value(json_object_get(doc, "gitVersion"));
    snprintf(v->git_version, sizeof(v->git_version), "%s", s ? s : "");
    s = json_string_value(json_object_get(doc, "platform"));
    snprintf(v->platform, sizeof(v->platform), "%s", s ? s : "");
    if (v->major == 0 && s == NULL && v->git_version[0] == 'v') {
        v->major = parse_int_prefix(v->git_version + 1);
        s = strchr(v->git_version, '.');
        v->minor = s ? parse_int_prefix(s + 1) : 0;
    }
    json_decref(doc);
    return 0;
}

int kube_get(struct kube_client *c, const struct kube_resource *res, const char *ns,
             const char *name, json_t **out, struct kp_err *err)
{
    char *path = kube_path(res, ns, name, NULL);
    char *what = kube_what("get", res, ns, name);
    struct kube_call call = {"GET", path, NULL, NULL, HTTP_RETRY_IDEMPOTENT, what};
    int rc = kube_call(c, &call, out, err);

    free(path);
    free(what);
    return rc;
}

int kube_request(struct kube_client *c, const char *method, const char *path, json_t *body,
                 json_t **out, struct kp_err *err)
{
    char *what = kp_xasprintf("%s %s", method, path);
    int post = !strcmp(method, "POST");
    struct kube_call call = {method,
                             path,
                             body,
                             !strcmp(method, "PATCH") ? "application/merge-patch+json" : NULL,
                             post ? HTTP_RETRY_UNSAFE : HTTP_RETRY_IDEMPOTENT,
                             what};
    int rc = kube_call(c, &call, out, err);

    free(what);
    return rc;
}

int kube_ssar(struct kube_client *c, const struct kube_access *q, int *allowed, char **reason,
              struct kp_err *err)
{
    json_t *attrs = json_pack("{s:s, s:s, s:s}", "verb", q->verb, "group", q->group ? q->group : "",
                              "resource", q->resource);
    json_t *body, *doc = NULL;
    struct kube_call call = {"POST",
                             "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                             NULL,
                             NULL,
                             HTTP_RETRY_IDEMPOTENT,
                             "create selfsubjectaccessreviews.authorization.k8s.io"};
    const char *r;
    int rc;

    if (q->subresource)
        json_object_set_new(attrs, "subresource", json_string(q->subresource));
    if (q->ns)
        json_object_set_new(attrs, "namespace", json_string(q->ns));
    if (q->name)
        json_object_set_new(attrs, "name", json_string(q->name));
    body = json_pack("{s:s, s:s, s:{s:o}}", "apiVersion", "authorization.k8s.io/v1", "kind",
                     "SelfSubjectAccessReview", "spec", "resourceAttributes", attrs);
    call.body = body;
    *allowed = 0;
    if (reason)
        *reason = NULL;
    rc = kube_call(c, &call, &doc, err);
    if (rc == 0) {
        json_t *st = json_object_get(doc, "status");
        *allowed = json_is_true(json_object_get(st, "allowed"));
        r = json_string_value(json_object_get(st, "reason"));
        if (reason)
            *reason = kp_xstrdup(r ? r : "");
    }
    json_decref(doc);
    json_decref(body);
    return rc;
}
