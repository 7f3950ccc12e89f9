/* SPDX-License-Identifier: Apache-2.0 */
/* local_cni.c - see local_cni.h. */
#include "controller/local/local_cni.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/kp_log.h"
#include "base/subproc.h"

#define MAX_CONF   (256u * 1024u)
#define MAX_BINS   16
#define CNI_MSG    512
#define MAX_RESULT (1024u * 1024u)

/* A plugin binary: a "type" of the list or of an "ipam". */
struct cni_bin {
    char *type; /* owned */
    char *path; /* owned: where it was found */
    char sha256[65];
    char *about;       /* owned: its `about` line ("CNI bridge plugin v1.1.1"), or NULL */
    json_t *supported; /* its VERSION answer's supportedVersions, or NULL */
};

struct local_cni {
    char *text;      /* owned: the file as given */
    char *cni_path;  /* owned */
    json_t *list;    /* the parsed list */
    const char *ver; /* the list's cniVersion, borrowed from list */
    struct cni_bin bins[MAX_BINS];
    size_t n_bins;
    uint64_t timeout_ms;
};

static char *read_file(const char *path, struct kp_err *err)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t n;

    if (!f)
        return kp_err_set(err, "cannot read %s: %s", path, strerror(errno)), NULL;
    buf = kp_xmalloc(MAX_CONF + 1);
    n = fread(buf, 1, MAX_CONF + 1, f);
    fclose(f);
    if (n > MAX_CONF) {
        free(buf);
        return kp_err_set(err, "%s is larger than %u bytes", path, MAX_CONF), NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* The first directory of cni_path holding an executable `type`; NULL when none. */
static char *find_bin(const char *cni_path, const char *type)
{
    char *copy = kp_xstrdup(cni_path), *save = NULL, *found = NULL;

    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = kp_xasprintf("%s/%s", d, type);
        if (access(p, X_OK) == 0)
            found = p;
        else
            free(p);
    }
    free(copy);
    return found;
}

static int add_bin(struct local_cni *c, const char *type, struct kp_err *err)
{
    char *path;

    for (size_t i = 0; i < c->n_bins; i++)
        if (strcmp(c->bins[i].type, type) == 0)
            return 0;
    if (c->n_bins >= MAX_BINS)
        return kp_err_set(err, "more than %d plugin types", MAX_BINS);
    path = find_bin(c->cni_path, type);
    if (!path)
        return kp_err_set(err,
                          "CNI plugin type \"%s\" not found in %s. Install it, or pass "
                          "--cni-path DIR[:DIR...] where it is",
                          type, c->cni_path);
    c->bins[c->n_bins].type = kp_xstrdup(type);
    c->bins[c->n_bins++].path = path;
    return 0;
}

struct local_cni *local_cni_load(const char *path, const char *cni_path, uint64_t timeout_ms,
                                 struct kp_err *err)
{
    struct local_cni *c = kp_xcalloc(1, sizeof(*c));
    size_t i;
    const json_t *p;

    c->cni_path = kp_xstrdup(cni_path && *cni_path ? cni_path : LOCAL_CNI_DEFAULT_PATH);
    c->timeout_ms = timeout_ms;
    c->text = read_file(path, err);
    if (!c->text)
        goto fail;
    c->list = cni_conflist_parse(c->text, strlen(c->text), err);
    if (!c->list) {
        kp_err_prefix(err, "--cni-conf %s", path);
        goto fail;
    }
    c->ver = json_string_value(json_object_get(c->list, "cniVersion"));
    json_array_foreach(json_object_get(c->list, "plugins"), i, p)
    {
        const char *ipam = json_string_value(json_object_get(json_object_get(p, "ipam"), "type"));
        if (add_bin(c, json_string_value(json_object_get(p, "type")), err) != 0 ||
            (ipam && add_bin(c, ipam, err) != 0)) {
            kp_err_prefix(err, "--cni-conf %s", path);
            goto fail;
        }
    }
    return c;
fail:
    local_cni_free(c);
    return NULL;
}

void local_cni_free(struct local_cni *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_bins; i++) {
        free(c->bins[i].type);
        free(c->bins[i].path);
        free(c->bins[i].about);
        json_decref(c->bins[i].supported);
    }
    json_decref(c->list);
    free(c->cni_path);
    free(c->text);
    free(c);
}

const char *local_cni_text(const struct local_cni *c)
{
    return c->text;
}

const char *local_cni_path(const struct local_cni *c)
{
    return c->cni_path;
}

const char *local_cni_name(const struct local_cni *c)
{
    return json_string_value(json_object_get(c->list, "name"));
}

/* One call of a plugin: what it printed and how it ended. */
struct call {
    const char *bin;                 /* the binary's path */
    const char *type;                /* its type, for messages */
    const char *command;             /* ADD, DEL, CHECK, VERSION */
    const struct local_cni_pod *pod; /* NULL for VERSION (runs where we are) */
    const char *config;              /* stdin */
    volatile sig_atomic_t *cancel;
};

/* Runs one plugin call. Returns 0 with r (caller cleans it up) when it ran, -1 with err when
 * it could not be started. */
static int call_plugin(const struct local_cni *c, const struct call *k, struct subproc_result *r,
                       struct kp_err *err)
{
    char *env[8] = {NULL};
    const char *argv[] = {"ip", "netns", "exec", k->pod ? k->pod->node_ns : "", k->bin, NULL};
    struct subproc_opts o = {
        .timeout_ms = c->timeout_ms, .max_out = MAX_RESULT, .cancel = k->cancel};
    int fd = memfd_create("kperf-cni-stdin", MFD_CLOEXEC), rc = -1;
    size_t len = strlen(k->config), n = 0;

    memset(r, 0, sizeof(*r));
    if (fd < 0)
        return kp_err_set(err, "memfd_create: %s", strerror(errno));
    if (write(fd, k->config, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) {
        kp_err_set(err, "cannot write the CNI config to a memfd: %s", strerror(errno));
        goto out;
    }
    env[n++] = kp_xasprintf("CNI_COMMAND=%s", k->command);
    env[n++] = kp_xasprintf("CNI_PATH=%s", c->cni_path);
    if (k->pod) {
        env[n++] = kp_xasprintf("CNI_CONTAINERID=%s", k->pod->id);
        env[n++] = kp_xasprintf("CNI_NETNS=/run/netns/%s", k->pod->pod_ns);
        env[n++] = kp_xasprintf("CNI_IFNAME=%s", k->pod->ifname);
        env[n++] = kp_xasprintf("CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=kperf-local;"
                                "K8S_POD_NAME=%s;K8S_POD_INFRA_CONTAINER_ID=%s",
                                k->pod->pod_ns, k->pod->id);
    }
    o.env = (const char *const *)env;
    o.stdin_fd = fd;
    kp_log(KP_LOG_DEBUG, "CNI %s %s%s%s", k->command, k->type, k->pod ? " for " : "",
           k->pod ? k->pod->pod_ns : "");
    rc = subproc_run(k->pod ? argv : argv + 4, &o, r, err);
out:
    for (size_t i = 0; i < n; i++)
        free(env[i]);
    close(fd);
    return rc;
}

/* A failed call in one line: the plugin's CNI error ({code, msg}), else its last stderr line,
 * else how it ended. */
static int call_failure(const struct call *k, const struct subproc_result *r, struct kp_err *err)
{
    char msg[CNI_MSG], *lc = kp_xstrdup(k->command);
    const char *who = k->pod ? k->pod->pod_ns : "";
    long code = 0;

    for (char *p = lc; *p; p++)
        *p = (char)(*p - 'A' + 'a');
    if (r->cancelled)
        kp_err_set(err, "interrupted");
    else if (r->timed_out)
        kp_err_set(err, "CNI plugin \"%s\" did not answer %s for pod %s within the timeout",
                   k->type, k->command, who);
    else if (cni_error_parse(r->out, r->out_len, &code, msg, sizeof(msg)))
        kp_err_set(err, "CNI plugin \"%s\" failed (%s) for pod %s: %s (code %ld)", k->type, lc, who,
                   msg, code);
    else {
        const char *e = r->err ? r->err : "";
        const char *last = e;
        for (const char *p = e; *p; p++) /* the last non-empty line of stderr */
            if (p[0] == '\n' && p[1] && p[1] != '\n')
                last = p + 1;
        if (strstr(e, "panic: ")) /* a Go plugin's crash: its reason, not the stack's end */
            last = strstr(e, "panic: ");
        kp_err_set(err, "CNI plugin \"%s\" failed (%s) for pod %s: %.*s", k->type, lc, who,
                   *last ? (int)strcspn(last, "\n") : 40,
                   *last ? last : (r->term_signal ? "killed by a signal" : "exited non-zero"));
    }
    free(lc);
    return -1;
}

/* Runs k; 0 with the output in r when it exited 0, else -1 with err (r cleaned up). */
static int call_ok(const struct local_cni *c, const struct call *k, struct subproc_result *r,
                   struct kp_err *err)
{
    if (call_plugin(c, k, r, err) != 0)
        return -1;
    if (r->exit_code == 0 && !r->timed_out && !r->cancelled && !r->out_truncated)
        return 0;
    call_failure(k, r, err);
    subproc_result_cleanup(r);
    return -1;
}

static const struct cni_bin *bin_of(const struct local_cni *c, const char *type)
{
    for (size_t i = 0; i < c->n_bins; i++)
        if (strcmp(c->bins[i].type, type) == 0)
            return &c->bins[i];
    return NULL; /* not reached: local_cni_load found every type */
}

/* sha256 of the binary (sha256sum: coreutils; the agent's SHA-256 is not the controller's). */
static void hash_bin(struct cni_bin *b)
{
    const char *argv[] = {"sha256sum", b->path, NULL};
    struct subproc_opts o = {.timeout_ms = 10000, .stdin_null = true};
    struct subproc_result r;

    snprintf(b->sha256, sizeof(b->sha256), "unknown");
    if (subproc_run(argv, &o, &r, NULL) == 0 && r.exit_code == 0 && r.out_len >= 64)
        snprintf(b->sha256, sizeof(b->sha256), "%.64s", r.out);
    subproc_result_cleanup(&r);
}

/* The plugin's `about` (run with no CNI_COMMAND it prints "CNI bridge plugin v1.1.1" and the
 * versions it speaks on stderr, then exits non-zero): its first line. */
static void about_bin(const struct local_cni *c, struct cni_bin *b)
{
    const char *argv[] = {b->path, NULL};
    const char *env[] = {"CNI_COMMAND=", NULL};
    struct subproc_opts o = {.timeout_ms = c->timeout_ms, .stdin_null = true, .env = env};
    struct subproc_result r;

    if (subproc_run(argv, &o, &r, NULL) == 0 && r.err && strncmp(r.err, "CNI ", 4) == 0)
        b->about = kp_xstrndup(r.err, strcspn(r.err, "\n"));
    subproc_result_cleanup(&r);
}

int local_cni_identify(struct local_cni *c, struct kp_err *err)
{
    char *config = kp_xasprintf("{\"cniVersion\":\"%s\"}", c->ver);
    int rc = -1;

    for (size_t i = 0; i < c->n_bins; i++) {
        struct cni_bin *b = &c->bins[i];
        struct call k = {.bin = b->path, .type = b->type, .command = "VERSION", .config = config};
        struct subproc_result r;
        bool supports = false;
        if (call_ok(c, &k, &r, err) != 0)
            goto out;
        if (!cni_version_parse(r.out, r.out_len, c->ver, &b->supported, &supports)) {
            kp_err_set(err, "CNI plugin \"%s\" (%s) gave no VERSION answer", b->type, b->path);
            subproc_result_cleanup(&r);
            goto out;
        }
        subproc_result_cleanup(&r);
        if (!supports) {
            char *v = json_dumps(b->supported, JSON_COMPACT);
            kp_err_set(err,
                       "CNI plugin \"%s\" (%s) does not support cniVersion %s (it supports %s). "
                       "Change the conflist's cniVersion",
                       b->type, b->path, c->ver, v ? v : "?");
            free(v);
            goto out;
        }
        hash_bin(b);
        about_bin(c, b);
    }
    rc = 0;
out:
    free(config);
    return rc;
}

/* "bridge+portmap": the list's types. Caller frees. */
static char *types_joined(const struct local_cni *c)
{
    char *s = kp_xstrdup("");
    size_t i;
    const json_t *p;

    json_array_foreach(json_object_get(c->list, "plugins"), i, p)
    {
        char *t =
            kp_xasprintf("%s%s%s", s, i ? "+" : "", json_string_value(json_object_get(p, "type")));
        free(s);
        s = t;
    }
    return s;
}

json_t *local_cni_describe(const struct local_cni *c, int mtu)
{
    json_t *plugins = json_array(), *d;
    char *version;
    char *types = types_joined(c), *name = kp_xasprintf("%s (%s)", local_cni_name(c), types);
    const struct cni_bin *first =
        bin_of(c, json_string_value(json_object_get(
                      json_array_get(json_object_get(c->list, "plugins"), 0), "type")));

    for (size_t i = 0; i < c->n_bins; i++) {
        const struct cni_bin *b = &c->bins[i];
        char *sup = kp_xstrdup(""); /* "0.3.0,0.4.0,1.0.0": one field for compare, not six */
        size_t k;
        const json_t *v;
        json_array_foreach(b->supported, k, v)
        {
            char *t = kp_xasprintf("%s%s%s", sup, k ? "," : "", json_string_value(v));
            free(sup);
            sup = t;
        }
        json_array_append_new(plugins,
                              json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s}", "type", b->type, "path",
                                        b->path, "sha256", b->sha256, "about", b->about,
                                        "cniVersion", c->ver, "supportedVersions", sup));
        free(sup);
    }
    /* the first plugin's own version when it tells one, else its binary's sha256: two builds of
     * a plugin then differ here too, and --history keeps them in two folders */
    if (first && first->about && !strstr(first->about, "version unknown"))
        version = kp_xstrdup(first->about);
    else
        version = kp_xasprintf("sha256:%.12s", first ? first->sha256 : "unknown");
    d = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:O, s:s, s:s, s:s, s:i}, s:o}", "name", name, "version",
        version, "settings", "pod_network",
        "your CNI conflist (--cni-conf), plugins called as a container runtime does", "plugins",
        types, "cni_version", c->ver, "conflist", c->list, "node_routing",
        "each pod address routed to its node across a veth underlay (proxy ARP/NDP on the nodes)",
        "service_proxy", "nftables DNAT (kube-proxy style), bridged traffic through netfilter",
        "egress", "SNAT (masquerade) at the node for pod traffic to other than pods", "mtu", mtu,
        "plugins", plugins);
    free(version);
    free(types);
    free(name);
    return d ? d : json_object();
}

json_t *local_cni_add(struct local_cni *c, const struct local_cni_pod *p, struct cni_result *r,
                      volatile sig_atomic_t *cancel, struct kp_err *err)
{
    json_t *plugins = json_object_get(c->list, "plugins"), *prev = NULL;
    size_t i;
    const json_t *pl;

    json_array_foreach(plugins, i, pl)
    {
        const char *type = json_string_value(json_object_get(pl, "type"));
        char *config = cni_plugin_config(c->list, i, prev);
        struct call k = {.bin = bin_of(c, type)->path,
                         .type = type,
                         .command = "ADD",
                         .pod = p,
                         .config = config,
                         .cancel = cancel};
        struct subproc_result out;
        struct kp_err perr;
        int rc = call_ok(c, &k, &out, err);
        free(config);
        if (rc == 0) {
            json_decref(prev);
            prev = cni_result_parse(out.out, out.out_len, r, &perr);
            subproc_result_cleanup(&out);
            if (!prev)
                kp_err_set(err, "CNI plugin \"%s\" (add) for pod %s: %s", type, p->pod_ns,
                           kp_err_msg(&perr));
        }
        if (!prev) { /* as a runtime does: DEL through the list, so nothing stays reserved */
            struct kp_err del;
            kp_err_clear(&del);
            if (local_cni_del(c, p, NULL, &del) != 0)
                kp_log(KP_LOG_WARN, "after the failed ADD: %s", kp_err_msg(&del));
            return NULL;
        }
    }
    return prev;
}

/* CHECK or DEL of plugin i with prevResult prev. */
static int call_one(struct local_cni *c, const struct local_cni_pod *p, size_t i,
                    const char *command, const json_t *prev, struct kp_err *err)
{
    const json_t *pl = json_array_get(json_object_get(c->list, "plugins"), i);
    const char *type = json_string_value(json_object_get(pl, "type"));
    char *config = cni_plugin_config(c->list, i, prev);
    struct call k = {
        .bin = bin_of(c, type)->path, .type = type, .command = command, .pod = p, .config = config};
    struct subproc_result r;
    int rc = call_ok(c, &k, &r, err);

    if (rc == 0)
        subproc_result_cleanup(&r);
    free(config);
    return rc;
}

int local_cni_check(struct local_cni *c, const struct local_cni_pod *p, const json_t *prev,
                    struct kp_err *err)
{
    size_t n = json_array_size(json_object_get(c->list, "plugins"));

    for (size_t i = 0; i < n; i++)
        if (call_one(c, p, i, "CHECK", prev, err) != 0)
            return -1;
    return 0;
}

int local_cni_del(struct local_cni *c, const struct local_cni_pod *p, const json_t *prev,
                  struct kp_err *err)
{
    size_t n = json_array_size(json_object_get(c->list, "plugins"));
    struct kp_err one;
    int rc = 0;

    for (size_t i = n; i-- > 0;) {
        kp_err_clear(&one);
        if (call_one(c, p, i, "DEL", prev, &one) != 0 && rc == 0) {
            kp_err_set(err, "%s", kp_err_msg(&one));
            rc = -1;
        }
    }
    return rc;
}
