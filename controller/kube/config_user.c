/* SPDX-License-Identifier: Apache-2.0 */
/* config_user.c - the user stanza of a kubeconfig: certificates, tokens, exec plugins and the
 * legacy auth-provider, validated the way client-go does (see config.h). */
#include "controller/kube/config_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/portable.h"
#include "controller/kube/codec.h"

#define EXEC_V1      "client.authentication.k8s.io/v1"
#define EXEC_V1BETA1 "client.authentication.k8s.io/v1beta1"
#define EXEC_EXT     "client.authentication.k8s.io/exec"

static int pem_field(struct kube_config *c, json_t *u, const char *file_key, const char *data_key,
                     char **file, char **data, size_t *len, struct kp_err *err)
{
    const char *f = cfg_str(u, file_key);
    const char *d = cfg_str(u, data_key);

    if (f && d)
        return kp_err_set(err, "user \"%s\": %s and %s are both set; keep one", c->user_name,
                          file_key, data_key);
    if (f && cfg_file_readable(!strcmp(file_key, "client-key") ? "client-key" : "client-cert", f,
                               c->user_name, err) != 0)
        return -1;
    if (f)
        *file = kp_xstrdup(f);
    if (d && codec_b64_decode(d, strlen(d), data, len) != 0)
        return kp_err_set(err, "user \"%s\": %s is not valid base64", c->user_name, data_key);
    return 0;
}

static char **string_list(json_t *arr)
{
    size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
    char **out = kp_xcalloc(n + 1, sizeof(*out));
    size_t o = 0;

    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (s)
            out[o++] = kp_xstrdup(s);
    }
    return out;
}

static int exec_env(struct kube_config *c, struct kube_exec_config *e, json_t *env,
                    struct kp_err *err)
{
    size_t n = json_is_array(env) ? json_array_size(env) : 0;
    size_t i;
    json_t *v;

    e->env = kp_xcalloc(n + 1, sizeof(*e->env));
    json_array_foreach(env, i, v)
    {
        const char *name = cfg_str(v, "name");
        const char *val = json_string_value(json_object_get(v, "value"));
        if (!name || strchr(name, '='))
            return kp_err_set(err, "user \"%s\": exec.env[%zu] needs a name without '='",
                              c->user_name, i);
        e->env[i] = kp_xasprintf("%s=%s", name, val ? val : "");
    }
    return 0;
}

static int resolve_exec(struct kube_config *c, json_t *x, struct kp_err *err)
{
    struct kube_exec_config *e = kp_xcalloc(1, sizeof(*e));
    const char *api = cfg_str(x, "apiVersion");
    const char *mode = cfg_str(x, "interactiveMode");

    c->exec = e;
    e->args = string_list(json_object_get(x, "args"));
    if (exec_env(c, e, json_object_get(x, "env"), err) != 0)
        return -1;
    if (!api)
        return kp_err_set(err, "user \"%s\": exec.apiVersion is missing; use %s", c->user_name,
                          EXEC_V1BETA1);
    if (strcmp(api, EXEC_V1) != 0 && strcmp(api, EXEC_V1BETA1) != 0)
        return kp_err_set(err,
                          "user \"%s\": exec.apiVersion \"%s\" is not supported (v1alpha1 was "
                          "removed); use %s or %s and update the plugin",
                          c->user_name, api, EXEC_V1, EXEC_V1BETA1);
    e->api_version = kp_xstrdup(api);
    if (!cfg_str(x, "command"))
        return kp_err_set(err, "user \"%s\": exec.command is missing", c->user_name);
    e->command = kp_xstrdup(cfg_str(x, "command"));
    if (cfg_str(x, "installHint"))
        e->install_hint = kp_xstrdup(cfg_str(x, "installHint"));
    e->provide_cluster_info = cfg_bool(x, "provideClusterInfo");
    if (!mode && !strcmp(api, EXEC_V1))
        return kp_err_set(err,
                          "user \"%s\": exec.interactiveMode must be set for %s (Never, "
                          "IfAvailable or Always)",
                          c->user_name, EXEC_V1);
    if (!mode || !strcmp(mode, "IfAvailable"))
        e->interactive_mode = 1;
    else if (!strcmp(mode, "Never"))
        e->interactive_mode = 0;
    else if (!strcmp(mode, "Always"))
        e->interactive_mode = 2;
    else
        return kp_err_set(err,
                          "user \"%s\": exec.interactiveMode \"%s\" is not one of Never, "
                          "IfAvailable, Always",
                          c->user_name, mode);
    if (e->interactive_mode == 2)
        return kp_err_set(err,
                          "user \"%s\": exec.interactiveMode is Always but kperf never runs "
                          "plugins interactively; log in first, then set IfAvailable",
                          c->user_name);
    return 0;
}

static int resolve_auth_provider(struct kube_config *c, json_t *ap, struct kp_err *err)
{
    const char *name = cfg_str(ap, "name");
    json_t *cfg = json_object_get(ap, "config");
    const char *tok = cfg_str(cfg, "id-token");

    if (name && !strcmp(name, "oidc")) {
        /* client-go's oidc provider: both are required before any request */
        if (!cfg_str(cfg, "idp-issuer-url") || !cfg_str(cfg, "client-id"))
            return kp_err_set(err, "user \"%s\": auth-provider oidc: Must provide %s", c->user_name,
                              !cfg_str(cfg, "idp-issuer-url") ? "idp-issuer-url" : "client-id");
        c->token = tok ? kp_xstrdup(tok) : NULL;
        /* the id-token's expiry is checked before each use (auth.c) */
        c->oidc = cfg_str(cfg, "refresh-token") ? 2 : 1;
        return 0;
    }
    return kp_err_set(err,
                      "user \"%s\": auth-provider \"%s\" is not supported (gcp and azure were "
                      "removed from kubectl); use an exec plugin such as gke-gcloud-auth-plugin "
                      "or kubelogin",
                      c->user_name, name ? name : "?");
}

static void drop_key(struct kube_config *c)
{
    free(c->key_file);
    c->key_file = NULL;
    if (c->key_data)
        kp_wipe(c->key_data, c->key_data_len);
    free(c->key_data);
    c->key_data = NULL;
    c->key_data_len = 0;
}

/* A header value Go's client would send: no control characters but tab. */
static int header_value_ok(const char *v)
{
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return 0;
    return 1;
}

/* "Impersonate-Extra-<key>: <value>", the key %-escaped as client-go's headerKeyEscape does:
 * every byte that is not an HTTP token character, and '%' itself. */
static char *extra_line(const char *key, const char *value)
{
    static const char token_punct[] = "!#$&'*+-.^_`|~";
    size_t n = strlen(key);
    char *esc = kp_xmalloc(n * 3 + 1);
    char *o = esc;
    char *line;

    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        if (isalnum(*p) || (*p && strchr(token_punct, *p)))
            *o++ = (char)*p;
        else
            o += sprintf(o, "%%%02X", *p);
    }
    *o = '\0';
    line = kp_xasprintf("Impersonate-Extra-%s: %s", esc, value);
    free(esc);
    return line;
}

static int extra_lines(struct kube_config *c, json_t *extra, struct kp_err *err)
{
    size_t n = 0, o = 0, i;
    const char *k;
    json_t *vals, *v;

    json_object_foreach(extra, k, vals) n += json_array_size(vals);
    if (n == 0)
        return 0;
    c->impersonate_extra = kp_xcalloc(n + 1, sizeof(*c->impersonate_extra));
    json_object_foreach(extra, k, vals)
    {
        json_array_foreach(vals, i, v)
        {
            const char *s = json_string_value(v);
            if (!s || !header_value_ok(s))
                return kp_err_set(err,
                                  "user \"%s\": as-user-extra \"%s\" has a value with a control "
                                  "character; remove it",
                                  c->user_name, k);
            c->impersonate_extra[o++] = extra_line(k, s);
        }
    }
    return 0;
}

/* as, as-groups, as-uid, as-user-extra: Impersonate-* headers, sent over http:// too. */
static int resolve_impersonation(struct kube_config *c, json_t *u, struct kp_err *err)
{
    json_t *groups = json_object_get(u, "as-groups");
    json_t *extra = json_object_get(u, "as-user-extra");

    if (cfg_str(u, "as"))
        c->impersonate_user = kp_xstrdup(cfg_str(u, "as"));
    if (cfg_str(u, "as-uid"))
        c->impersonate_uid = kp_xstrdup(cfg_str(u, "as-uid"));
    if (json_array_size(groups) > 0)
        c->impersonate_groups = string_list(groups);
    if (json_is_object(extra) && extra_lines(c, extra, err) != 0)
        return -1;
    if (!c->impersonate_user &&
        (c->impersonate_uid || c->impersonate_groups || c->impersonate_extra))
        return kp_err_set(err,
                          "user \"%s\": requesting uid, groups or user-extra for %s without "
                          "impersonating a user; set as: too (kubectl refuses this file too)",
                          c->user_name, c->user_name);
    for (char **g = c->impersonate_groups; g && *g; g++)
        if (!header_value_ok(*g))
            return kp_err_set(err, "user \"%s\": as-groups has a control character; remove it",
                              c->user_name);
    if ((c->impersonate_user && !header_value_ok(c->impersonate_user)) ||
        (c->impersonate_uid && !header_value_ok(c->impersonate_uid)))
        return kp_err_set(err, "user \"%s\": as or as-uid has a control character; remove it",
                          c->user_name);
    return 0;
}

int cfg_resolve_user(struct kube_config *c, json_t *u, struct kp_err *err)
{
    json_t *x = json_object_get(u, "exec");
    json_t *ap = json_object_get(u, "auth-provider");
    int has_cert, has_key;

    if (pem_field(c, u, "client-certificate", "client-certificate-data", &c->cert_file,
                  &c->cert_data, &c->cert_data_len, err) != 0 ||
        pem_field(c, u, "client-key", "client-key-data", &c->key_file, &c->key_data,
                  &c->key_data_len, err) != 0)
        return -1;
    has_cert = c->cert_file || c->cert_data;
    has_key = c->key_file || c->key_data;
    if (has_key && !has_cert) { /* client-go: no certificate, no client-certificate auth */
        drop_key(c);
        has_key = 0;
    }
    if (has_cert != has_key)
        return kp_err_set(err,
                          "user \"%s\": a client certificate needs its key (set both "
                          "client-certificate and client-key, or both -data fields)",
                          c->user_name);
    if (cfg_str(u, "token"))
        c->token = kp_xstrdup(cfg_str(u, "token"));
    if (cfg_str(u, "tokenFile"))
        c->token_file = kp_xstrdup(cfg_str(u, "tokenFile"));
    if ((cfg_str(u, "username") || cfg_str(u, "password")) && !c->token && !c->token_file &&
        !has_cert && !x)
        return kp_err_set(err,
                          "user \"%s\": basic auth (username/password) was removed from "
                          "Kubernetes in 1.19; use a token, a client certificate or an exec "
                          "plugin",
                          c->user_name);
    if (resolve_impersonation(c, u, err) != 0)
        return -1;
    if (json_is_object(x) && json_is_object(ap))
        return kp_err_set(err, "user \"%s\": exec and auth-provider are both set; keep one",
                          c->user_name);
    if (json_is_object(x)) {
        if (resolve_exec(c, x, err) != 0)
            return -1;
        /* client-go: a token, token file, basic auth or client certificate is what the user
         * meant; the plugin is not run at all */
        if (c->token || c->token_file || has_cert || cfg_str(u, "username")) {
            cfg_exec_free(c->exec);
            c->exec = NULL;
        }
        return 0;
    }
    if (json_is_object(ap))
        return resolve_auth_provider(c, ap, err);
    return 0;
}

void cfg_drop_user_creds(struct kube_config *c)
{
    kp_free_secret(c->token);
    c->token = NULL;
    free(c->token_file);
    c->token_file = NULL;
    cfg_exec_free(c->exec);
    c->exec = NULL;
    free(c->cert_file);
    c->cert_file = NULL;
    free(c->cert_data);
    c->cert_data = NULL;
    c->cert_data_len = 0;
    drop_key(c);
}

int cfg_exec_extension(struct kube_config *c, json_t *cluster)
{
    json_t *exts = json_object_get(cluster, "extensions");
    size_t i;
    json_t *e;

    (void)c;
    json_array_foreach(exts, i, e)
    {
        const char *name = cfg_str(e, "name");
        json_t *ext = json_object_get(e, "extension");
        if (name && !strcmp(name, EXEC_EXT) && ext) {
            free(c->exec_cluster_config);
            c->exec_cluster_config = json_dumps(ext, JSON_COMPACT);
        }
    }
    return 0;
}
