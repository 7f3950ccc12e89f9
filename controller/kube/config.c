/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - see config.h. Each file is parsed into a JSON tree (base/yaml_load), its relative
 * paths are made absolute against its own directory, and it is merged into named maps where the
 * first definition of a name wins (kubectl's rule). One context is then resolved and validated into
 * struct kube_config (config_user.c does the user stanza). */
#include "controller/kube/config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/portable.h"
#include "base/yaml_load.h"
#include "controller/kube/codec.h"
#include "controller/kube/config_int.h"
#include "controller/kube/userinfo.h"

/* The merged view: name -> stanza maps plus the first non-empty current-context. */
struct merged {
    json_t *clusters; /* ours */
    json_t *users;
    json_t *contexts;
    char *current; /* ours or NULL */
    char *source;  /* "a:b" of files merged; ours */
};

const char *cfg_str(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s && *s ? s : NULL;
}

int cfg_bool(json_t *obj, const char *key)
{
    return json_is_true(json_object_get(obj, key));
}

/* Moves the first n bytes of *buf into a fresh buffer of cap + 1 bytes and wipes the old one:
 * realloc would leave a copy of tokens and keys in freed memory. */
static void grow_wiped(char **buf, size_t n, size_t old_cap, size_t cap)
{
    char *b = kp_xmalloc(cap + 1);

    memcpy(b, *buf, n);
    kp_wipe(*buf, old_cap + 1);
    free(*buf);
    *buf = b;
}

int cfg_read_file(const char *path, size_t max, char **out, size_t *len, struct kp_err *err)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    char *buf = NULL;
    size_t n = 0, cap = 4096;
    int rc = -1;

    if (!f)
        return kp_err_set(err, "cannot read %s: %s", path, strerror(errno));
    /* one allocation for a regular file; growth only for files that change or lie (procfs) */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        cap = (size_t)st.st_size + 1 > max + 1 ? max + 1 : (size_t)st.st_size + 1;
    buf = kp_xmalloc(cap + 1);
    for (;;) {
        size_t r;
        if (n == cap) {
            size_t more = cap * 2 > max + 1 ? max + 1 : cap * 2;
            if (cap >= max + 1)
                break;
            grow_wiped(&buf, n, cap, more);
            cap = more;
        }
        r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    if (n > max) {
        kp_err_set(err, "%s is larger than %zu bytes", path, max);
        goto out;
    }
    if (ferror(f)) {
        kp_err_set(err, "cannot read %s: %s", path, strerror(errno));
        goto out;
    }
    buf[n] = '\0';
    *out = buf;
    buf = NULL;
    if (len)
        *len = n;
    rc = 0;
out:
    fclose(f);
    if (buf) {
        kp_wipe(buf, cap + 1);
        free(buf);
    }
    return rc;
}

/* Makes obj[key] absolute against dir when it is a relative path. */
static void resolve_path(json_t *obj, const char *key, const char *dir, int only_with_slash)
{
    const char *p = cfg_str(obj, key);

    if (!p || !dir || p[0] == '/' || (only_with_slash && !strchr(p, '/')))
        return;
    while (p[0] == '.' && p[1] == '/')
        p += 2;
    json_object_set_new(obj, key, json_sprintf("%s/%s", dir, p));
}

static void resolve_paths(json_t *doc, const char *dir)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(doc, "clusters"), i, e)
    {
        resolve_path(json_object_get(e, "cluster"), "certificate-authority", dir, 0);
    }
    json_array_foreach(json_object_get(doc, "users"), i, e)
    {
        json_t *u = json_object_get(e, "user");
        resolve_path(u, "client-certificate", dir, 0);
        resolve_path(u, "client-key", dir, 0);
        resolve_path(u, "tokenFile", dir, 0);
        resolve_path(json_object_get(u, "exec"), "command", dir, 1);
    }
}

/* Adds doc's named list `list` (entries {name, <field>: {...}}) to map, first name wins. */
static int merge_list(json_t *map, json_t *doc, const char *list, const char *field,
                      const char *name, struct kp_err *err)
{
    json_t *arr = json_object_get(doc, list);
    json_t *seen;
    size_t i;
    json_t *e;
    int rc = 0;

    if (!arr || json_is_null(arr))
        return 0;
    if (!json_is_array(arr))
        return kp_err_set(err, "%s: \"%s\" must be a list", name, list);
    seen = json_object();
    json_array_foreach(arr, i, e)
    {
        const char *n = json_is_object(e) ? json_string_value(json_object_get(e, "name")) : NULL;
        json_t *body = json_object_get(e, field);
        if (json_is_null(e))
            continue;
        if (!n || !*n) {
            rc = kp_err_set(err, "%s: %s[%zu] has no name", name, list, i);
            break;
        }
        if (body && json_is_null(body))
            body = NULL;
        if (body && !json_is_object(body)) {
            rc = kp_err_set(err, "%s: %s \"%s\": \"%s\" must be a mapping", name, list, n, field);
            break;
        }
        if (json_object_get(seen, n)) { /* kubectl refuses the file, whatever the merge */
            rc = kp_err_set(err,
                            "%s: duplicate name \"%s\" in %s; each name may appear once per "
                            "file",
                            name, n, list);
            break;
        }
        json_object_set_new(seen, n, json_true());
        if (!json_object_get(map, n))
            json_object_set_new(map, n, body ? json_incref(body) : json_object());
    }
    json_decref(seen);
    return rc;
}

/* Merges one parsed file into m. name is used in messages; dir resolves relative paths. */
static int merge_doc(struct merged *m, json_t *doc, const char *name, const char *dir,
                     struct kp_err *err)
{
    const char *cur;

    if (!json_is_object(doc))
        return kp_err_set(err, "%s: not a kubeconfig (expected a mapping at the top)", name);
    resolve_paths(doc, dir);
    if (merge_list(m->clusters, doc, "clusters", "cluster", name, err) != 0 ||
        merge_list(m->users, doc, "users", "user", name, err) != 0 ||
        merge_list(m->contexts, doc, "contexts", "context", name, err) != 0)
        return -1;
    cur = cfg_str(doc, "current-context");
    if (!m->current && cur)
        m->current = kp_xstrdup(cur);
    if (!m->source) {
        m->source = kp_xstrdup(name);
    } else {
        char *s = kp_xasprintf("%s:%s", m->source, name);
        free(m->source);
        m->source = s;
    }
    return 0;
}

static void merged_init(struct merged *m)
{
    memset(m, 0, sizeof(*m));
    m->clusters = json_object();
    m->users = json_object();
    m->contexts = json_object();
}

static void merged_cleanup(struct merged *m)
{
    json_decref(m->clusters);
    json_decref(m->users);
    json_decref(m->contexts);
    free(m->current);
    free(m->source);
}

/* "a, b, c" of the map's names for messages (caller frees). */
static char *names_of(json_t *map)
{
    char *out = kp_xstrdup("");
    const char *k;
    json_t *v;

    json_object_foreach(map, k, v)
    {
        char *s = kp_xasprintf("%s%s%s", out, *out ? ", " : "", k);
        free(out);
        out = s;
        (void)v;
    }
    return out;
}

static int parse_doc(const char *buf, size_t len, const char *name, json_t **doc,
                     struct kp_err *err)
{
    /* typed as kubectl's decoder reads it (go-yaml v2 to JSON): true, yes, 443 and null are
     * typed, quoted scalars are strings; cfg_check_types then refuses the wrong types */
    static const struct yaml_load_opts o = {
        .max_bytes = KUBE_CONFIG_MAX_BYTES,
        .max_depth = KUBE_CONFIG_MAX_DEPTH,
        .max_nodes = KUBE_CONFIG_MAX_NODES,
        .typed_scalars = true,
        .yaml11_bools = true,
        .doc_kind = "a kubeconfig",
    };
    if (yaml_load(buf, len, &o, doc, err) != 0 ||
        (json_is_object(*doc) && cfg_check_types(*doc, err) != 0)) {
        json_decref(*doc);
        *doc = NULL;
        return kp_err_prefix(err, "%s", name);
    }
    return 0;
}

/* Takes a "user:password@" out of the server URL into c->server_user/server_password, so
 * that the server can be printed anywhere (errors, -vv, provenance) without its password. A
 * server libcurl cannot parse is kept as given, unless it may hold user-info. */
static int set_server(struct kube_config *c, const char *server, struct kp_err *err)
{
    char *bare, *user, *password;

    if (userinfo_split(server, &bare, &user, &password, err) != 0) {
        if (strchr(server, '@'))
            return kp_err_prefix(err, "cluster \"%s\": server (not shown: it has user-info)",
                                 c->cluster_name);
        c->server = kp_xstrdup(server);
        return 0;
    }
    if (!user && !password) {
        free(bare);
        c->server = kp_xstrdup(server);
        return 0;
    }
    c->server = bare;
    c->server_user = user;
    c->server_password = password;
    return 0;
}

/* kubectl reads the files a kubeconfig names when it loads it: a missing one fails at once. */
int cfg_file_readable(const char *what, const char *path, const char *owner, struct kp_err *err)
{
    FILE *f = fopen(path, "rb");

    if (!f)
        return kp_err_set(err, "unable to read %s %s for %s due to %s", what, path, owner,
                          strerror(errno));
    fclose(f);
    return 0;
}

static int resolve_cluster(struct kube_config *c, json_t *cl, struct kp_err *err)
{
    const char *server = cfg_str(cl, "server");
    const char *ca = cfg_str(cl, "certificate-authority");
    const char *ca_data = cfg_str(cl, "certificate-authority-data");
    const char *proxy = cfg_str(cl, "proxy-url");
    size_t n;

    if (!server)
        return kp_err_set(err, "cluster \"%s\" has no server; set clusters[].cluster.server",
                          c->cluster_name);
    if (set_server(c, server, err) != 0)
        return -1;
    if (!strncasecmp(c->server, "https://", 8) || !strncasecmp(c->server, "http://", 7))
        for (char *p = c->server; *p != ':'; p++) /* Go's url.Parse: HTTPS:// is https:// */
            *p = (char)tolower((unsigned char)*p);
    if (strncmp(c->server, "https://", 8) != 0 && strncmp(c->server, "http://", 7) != 0)
        return kp_err_set(err,
                          "cluster \"%s\": server \"%s\" must start with https:// (or http:// "
                          "for kubectl proxy)",
                          c->cluster_name, c->server);
    n = strlen(c->server);
    while (n > 0 && c->server[n - 1] == '/')
        c->server[--n] = '\0';
    if (ca && ca_data)
        return kp_err_set(err,
                          "cluster \"%s\": certificate-authority and certificate-authority-data "
                          "are both set; keep one",
                          c->cluster_name);
    c->insecure = cfg_bool(cl, "insecure-skip-tls-verify");
    c->disable_compression = cfg_bool(cl, "disable-compression");
    if (c->insecure && (ca || ca_data))
        return kp_err_set(err,
                          "cluster \"%s\": insecure-skip-tls-verify together with a certificate "
                          "authority is not allowed; remove one",
                          c->cluster_name);
    if (ca && cfg_file_readable("certificate-authority", ca, c->cluster_name, err) != 0)
        return -1;
    if (ca)
        c->ca_file = kp_xstrdup(ca);
    if (ca_data && codec_b64_decode(ca_data, strlen(ca_data), &c->ca_data, &c->ca_data_len))
        return kp_err_set(err, "cluster \"%s\": certificate-authority-data is not valid base64",
                          c->cluster_name);
    if (cfg_str(cl, "tls-server-name"))
        c->tls_server_name = kp_xstrdup(cfg_str(cl, "tls-server-name"));
    if (proxy) {
        if (strncmp(proxy, "http://", 7) && strncmp(proxy, "https://", 8) &&
            strncmp(proxy, "socks5://", 9) && strncmp(proxy, "socks5h://", 10)) {
            char *shown = userinfo_shown(proxy);

            kp_err_set(err,
                       "cluster \"%s\": proxy-url \"%s\" must be http://, https:// or "
                       "socks5://",
                       c->cluster_name, shown);
            free(shown);
            return -1;
        }
        c->proxy_url = kp_xstrdup(proxy); /* user-info and all: libcurl sends it to the proxy */
    }
    return cfg_exec_extension(c, cl);
}

/* kubectl prompts for a username and password (basic auth, removed from Kubernetes in 1.19)
 * when an https server's user has no credential at all, and fails without a terminal; kperf
 * is never interactive, so it fails the same way, at once, saying what to add. */
static int check_identity(const struct kube_config *c, struct kp_err *err)
{
    if (strncmp(c->server, "https://", 8) != 0 || c->token || c->token_file || c->cert_file ||
        c->cert_data || c->exec || c->oidc)
        return 0;
    if (!*c->user_name)
        return kp_err_set(err,
                          "context \"%s\" names no user, so kubectl would prompt for a username "
                          "and password (kperf never prompts); set contexts[].context.user to a "
                          "user with a token, client certificate or exec plugin",
                          c->context_name);
    return kp_err_set(err,
                      "user \"%s\" has no credentials, so kubectl would prompt for a username "
                      "and password (kperf never prompts); give it a token, tokenFile, client "
                      "certificate or exec plugin",
                      c->user_name);
}

/* Picks the context and fills a new config from the merged maps. */
static int resolve(struct merged *m, const char *ctx_name, const char *ns_override,
                   struct kube_config **out, struct kp_err *err)
{
    struct kube_config *c = kp_xcalloc(1, sizeof(*c));
    json_t *ctx, *cl, *user = NULL;
    const char *ns;
    char *names = NULL;
    int rc = -1;

    c->source = kp_xstrdup(m->source ? m->source : "kubeconfig");
    if (!ctx_name)
        ctx_name = m->current;
    names = names_of(m->contexts);
    if (!*names) {
        /* no --context can help: say what the file lacks */
        kp_err_set(err, "defines no contexts; add one under contexts: (kubectl config "
                        "set-context) or pass another --kubeconfig");
        goto out;
    }
    if (!ctx_name) {
        kp_err_set(err, "no current-context is set; pass --context NAME (contexts: %s)", names);
        goto out;
    }
    c->context_name = kp_xstrdup(ctx_name);
    ctx = json_object_get(m->contexts, ctx_name);
    if (!ctx) {
        kp_err_set(err, "context \"%s\" not found; pass --context with one of: %s", ctx_name,
                   names);
        goto out;
    }
    if (!cfg_str(ctx, "cluster")) {
        kp_err_set(err, "context \"%s\" names no cluster; set contexts[].context.cluster",
                   ctx_name);
        goto out;
    }
    c->cluster_name = kp_xstrdup(cfg_str(ctx, "cluster"));
    cl = json_object_get(m->clusters, c->cluster_name);
    if (!cl) {
        kp_err_set(err, "context \"%s\" refers to cluster \"%s\", which is not defined", ctx_name,
                   c->cluster_name);
        goto out;
    }
    if (cfg_str(ctx, "user")) {
        c->user_name = kp_xstrdup(cfg_str(ctx, "user"));
        user = json_object_get(m->users, c->user_name);
        if (!user) {
            kp_err_set(err, "context \"%s\" refers to user \"%s\", which is not defined", ctx_name,
                       c->user_name);
            goto out;
        }
    } else {
        c->user_name = kp_xstrdup("");
    }
    ns = ns_override && *ns_override ? ns_override : cfg_str(ctx, "namespace");
    c->ns = kp_xstrdup(ns ? ns : "default");
    if (resolve_cluster(c, cl, err) != 0 || (user && cfg_resolve_user(c, user, err) != 0) ||
        check_identity(c, err) != 0)
        goto out;
    if (!strncmp(c->server, "http://", 7))
        cfg_drop_user_creds(c); /* kubectl: credentials only over https */
    *out = c;
    c = NULL;
    rc = 0;
out:
    if (rc != 0)
        kp_err_prefix(err, "%s", m->source ? m->source : "kubeconfig");
    free(names);
    kube_config_free(c);
    return rc;
}

/* Names and values from the file may hold control characters: keep the message one line. */
static int one_line(struct kp_err *err)
{
    for (char *p = err ? err->msg : NULL; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return -1;
}

static char *dir_of(const char *path)
{
    char *copy = kp_xstrdup(path);
    char *slash = strrchr(copy, '/');
    char *abs;

    if (!slash) {
        free(copy);
        copy = kp_xstrdup(".");
    } else if (slash == copy) {
        slash[1] = '\0';
    } else {
        *slash = '\0';
    }
    abs = realpath(copy, NULL);
    if (abs) {
        free(copy);
        return abs;
    }
    return copy;
}

/* Reads, parses and merges one file. */
static int add_file(struct merged *m, const char *path, struct kp_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    json_t *doc = NULL;
    char *dir = NULL;
    struct kp_err why = {{0}};
    int rc = -1;

    if (cfg_read_file(path, KUBE_CONFIG_MAX_BYTES, &buf, &len, &why) != 0) {
        kp_err_set(err, "kubeconfig: %s; pass --kubeconfig (or KUBECONFIG) a readable kubeconfig",
                   why.msg);
        goto out;
    }
    if (parse_doc(buf, len, path, &doc, err) != 0)
        goto out;
    dir = dir_of(path);
    rc = merge_doc(m, doc, path, dir, err);
out:
    json_decref(doc);
    kp_free_secret(buf);
    free(dir);
    return rc;
}

int kube_config_parse(const char *buf, size_t len, const char *name, const char *dir,
                      const char *context, struct kube_config **out, struct kp_err *err)
{
    struct merged m;
    json_t *doc = NULL;
    int rc = -1;

    *out = NULL;
    merged_init(&m);
    if (parse_doc(buf, len, name, &doc, err) != 0 || merge_doc(&m, doc, name, dir, err) != 0)
        goto out;
    rc = resolve(&m, context, NULL, out, err);
out:
    json_decref(doc);
    merged_cleanup(&m);
    if (rc != 0)
        one_line(err);
    return rc;
}

/* Files named by $KUBECONFIG that exist, in order, duplicates dropped (caller frees). */
static char **kubeconfig_env_files(const char *env, size_t *n)
{
    char *copy = kp_xstrdup(env);
    char **files = kp_xcalloc(strlen(env) / 2 + 2, sizeof(*files));
    char *save = NULL;

    *n = 0;
    for (char *p = strtok_r(copy, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        struct stat st;
        int dup = 0;
        for (size_t i = 0; i < *n; i++)
            dup |= !strcmp(files[i], p);
        if (dup || stat(p, &st) != 0)
            continue;
        files[(*n)++] = kp_xstrdup(p);
    }
    free(copy);
    return files;
}

static int load_files(const struct kube_config_opts *opts, struct merged *m, int *found,
                      struct kp_err *err)
{
    const char *env = getenv("KUBECONFIG");
    const char *home = getenv("HOME");
    char **files = NULL;
    size_t n = 0;
    int rc = 0;

    *found = 0;
    if (opts->kubeconfig) {
        *found = 1;
        return add_file(m, opts->kubeconfig, err);
    }
    if (env && *env) {
        files = kubeconfig_env_files(env, &n);
    } else if (home && *home) {
        struct stat st;
        char *p = kp_xasprintf("%s/.kube/config", home);
        files = kp_xcalloc(2, sizeof(*files));
        if (stat(p, &st) == 0)
            files[n++] = p;
        else
            free(p);
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = add_file(m, files[i], err);
    for (size_t i = 0; files && i < n; i++)
        free(files[i]);
    free(files);
    *found = n > 0;
    return rc;
}

int kube_config_load(const struct kube_config_opts *opts, struct kube_config **out,
                     struct kp_err *err)
{
    static const struct kube_config_opts none = {0};
    struct merged m;
    int found = 0;
    int rc = -1;

    *out = NULL;
    if (!opts)
        opts = &none;
    if (opts->in_cluster_only)
        return kube_config_in_cluster(out, err);
    merged_init(&m);
    if (load_files(opts, &m, &found, err) != 0)
        goto out;
    if (!found) {
        if (getenv("KUBERNETES_SERVICE_HOST")) {
            rc = kube_config_in_cluster(out, err);
            if (rc == 0 && opts->ns && *opts->ns) {
                free((*out)->ns);
                (*out)->ns = kp_xstrdup(opts->ns);
            }
            goto out;
        }
        kp_err_set(err,
                   "no kubeconfig found ($KUBECONFIG is %s, ~/.kube/config is missing) and "
                   "not running in a cluster; pass --kubeconfig FILE",
                   getenv("KUBECONFIG") && *getenv("KUBECONFIG") ? "set but none exist" : "unset");
        goto out;
    }
    rc = resolve(&m, opts->context, opts->ns, out, err);
out:
    merged_cleanup(&m);
    if (rc != 0)
        one_line(err);
    return rc;
}
