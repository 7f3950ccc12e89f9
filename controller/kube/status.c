/* SPDX-License-Identifier: Apache-2.0 */
/* status.c - see status.h. */
#include "controller/kube/status.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define MSG_MAX 400

/* The first line of a non-JSON body, printable characters only. */
static void text_line(const char *body, size_t len, char *out, size_t cap)
{
    size_t o = 0;

    for (size_t i = 0; i < len && o + 1 < cap && o < 200; i++) {
        unsigned char c = (unsigned char)body[i];
        if (c == '\n' || c == '\r') {
            if (o)
                break;
            continue;
        }
        out[o++] = isprint(c) ? (char)c : '?';
    }
    while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '.'))
        o--;
    out[o] = '\0';
}

/* "; invalid fields: a (Required value), b (...)" from details.causes. */
static void causes(json_t *st, const char *msg, char *out, size_t cap)
{
    json_t *arr = json_object_get(json_object_get(st, "details"), "causes");
    size_t i, o = 0;
    json_t *c;

    out[0] = '\0';
    json_array_foreach(arr, i, c)
    {
        const char *f = json_string_value(json_object_get(c, "field"));
        const char *m = json_string_value(json_object_get(c, "message"));
        int n;
        if ((!f && !m) || (f && *f && strstr(msg, f)))
            continue; /* nothing to say, or the message names the field already */
        n = snprintf(out + o, cap - o, "%s%s%s%s%s", o ? ", " : "; invalid fields: ", f ? f : "",
                     f && m ? " (" : "", m ? m : "", f && m ? ")" : "");
        if (n < 0 || (size_t)n >= cap - o)
            break;
        o += (size_t)n;
    }
}

static const char *label(long code, const char *reason)
{
    switch (code) {
    case 400:
        return "bad request";
    case 401:
        return "unauthorized";
    case 403:
        return "forbidden";
    case 404:
        return "not found";
    case 409:
        return !strcmp(reason, "AlreadyExists") ? "already exists" : "conflict";
    case 410:
        return "expired";
    case 413:
        return "request too large";
    case 422:
        return "invalid";
    case 429:
        return "too many requests";
    default:
        return code >= 500 ? "server error" : "unexpected response";
    }
}

static int has_cause(json_t *st, const char *reason)
{
    json_t *arr = json_object_get(json_object_get(st, "details"), "causes");
    size_t i;
    json_t *c;

    json_array_foreach(arr, i, c)
    {
        const char *r = json_string_value(json_object_get(c, "reason"));
        if (r && !strcmp(r, reason))
            return 1;
    }
    return 0;
}

static void advice(long code, json_t *st, const struct kube_config *cfg, unsigned retries,
                   char *out, size_t cap)
{
    out[0] = '\0';
    if (code == 401)
        snprintf(out, cap,
                 ". The credentials of user \"%s\" (context \"%s\") were rejected: log in again "
                 "or refresh the token/certificate in the kubeconfig",
                 cfg && cfg->user_name ? cfg->user_name : "?",
                 cfg && cfg->context_name ? cfg->context_name : "?");
    else if (code == 403 && has_cause(st, "NamespaceTerminating"))
        snprintf(out, cap,
                 ". The namespace is being deleted; wait until it is gone or use "
                 "another one");
    else if (code == 403)
        snprintf(out, cap,
                 ". Grant the permission with manifests/rbac.yaml (kubectl apply -f "
                 "manifests/rbac.yaml) or use an account that has it");
    else if (code == 410)
        snprintf(out, cap, ". The resourceVersion or continue token is too old; list again");
    else if (code == 429)
        snprintf(out, cap,
                 " (after %u retries). The API server is shedding load (priority and "
                 "fairness); try again later or lower --qps",
                 retries);
    else if (code >= 500)
        snprintf(out, cap,
                 " (after %u retries). The API server is failing or overloaded; try "
                 "again later",
                 retries);
}

int status_error(long code, const char *ctype, const char *body, size_t len, const char *what,
                 const struct kube_config *cfg, unsigned retries, char reason[64],
                 struct kp_err *err)
{
    json_t *st = NULL;
    char msg[MSG_MAX] = "";
    char extra[600];
    char adv[300];
    const char *r = "";

    reason[0] = '\0';
    if (body && len > 0 && (!ctype || !*ctype || strstr(ctype, "json")) && body[0] == '{')
        st = json_loadb(body, len, 0, NULL);
    if (st && json_is_object(st)) {
        const char *m = json_string_value(json_object_get(st, "message"));
        r = json_string_value(json_object_get(st, "reason"));
        r = r ? r : "";
        snprintf(msg, sizeof(msg), "%s", m ? m : "");
        snprintf(reason, 64, "%s", r);
    } else if (body) {
        text_line(body, len, msg, sizeof(msg));
    }
    causes(st, msg, extra, sizeof(extra));
    advice(code, st, cfg, retries, adv, sizeof(adv));
    kp_err_set(err, "%s: %s (%ld%s%s)%s%s%s%s", what, label(code, reason), code, *r ? " " : "", r,
               *msg ? ": " : "", msg, extra, adv);
    json_decref(st);
    return -1;
}
