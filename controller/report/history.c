/* SPDX-License-Identifier: Apache-2.0 */
/* history.c - the history directory of reports: key folders, safe writes (base/safefile.h),
 * retention, and loading runs that skips an unreadable one unless asked to be strict. */
#include "controller/report/history.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/safefile.h"
#include "controller/report/report.h"
#include "controller/report/report_file.h"

#define DEPTH 4 /* cluster/pair/cni/version */

/* s reduced to [A-Za-z0-9._-], never empty, never starting with '.'. Caller frees. */
static char *component(const char *s)
{
    char *out;

    if (!s || !*s)
        s = "unknown";
    out = kp_xstrdup(s);
    for (char *p = out; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            *p = '_';
    if (out[0] == '.')
        out[0] = '_';
    if (strlen(out) > 64)
        out[64] = 0;
    return out;
}

static const char *str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* The node of a role (or position when roles are not recorded): instance type, else name. A
 * role names the node exactly ("server") or among others ("client+server" on a node that is
 * both); the exact one wins. */
static const char *node_id(const json_t *nodes, const char *role, size_t pos)
{
    const json_t *n, *exact = NULL, *part = NULL, *pick;
    size_t i;

    json_array_foreach(nodes, i, n)
    {
        const char *r = str(n, "role");
        if (r && strcmp(r, role) == 0 && !exact)
            exact = n;
        if (r && strstr(r, role) && !part)
            part = n;
    }
    pick = exact ? exact : part ? part : json_array_get(nodes, pos);
    return str(pick, "instance_type") ? str(pick, "instance_type") : str(pick, "name");
}

/* The key's components: cluster, pair, cni, version (each allocated). */
static void key_parts(const struct report *rep, const char *cluster, char *part[DEPTH])
{
    const json_t *md = report_metadata_const(rep), *nodes = json_object_get(md, "nodes");
    const json_t *cni = json_object_get(md, "cni");
    const char *client = node_id(nodes, "client", 1), *server = node_id(nodes, "server", 0);
    char *pair = kp_xasprintf("%s_%s", client ? client : "unknown", server ? server : "unknown");

    part[0] = component(cluster              ? cluster
                        : str(md, "cluster") ? str(md, "cluster")
                                             : str(md, "backend"));
    part[1] = component(pair);
    part[2] = component(str(cni, "name"));
    part[3] = component(str(cni, "version"));
    free(pair);
}

char *history_comparable_prefix(const struct report *rep, const char *cluster)
{
    char *p[DEPTH], *prefix;

    key_parts(rep, cluster, p);
    prefix = kp_xasprintf("%s/%s/%s/", p[0], p[1], p[2]);
    for (int i = 0; i < DEPTH; i++)
        free(p[i]);
    return prefix;
}

char *history_key(const struct report *rep, const char *cluster)
{
    char *p[DEPTH], *key;

    key_parts(rep, cluster, p);
    key = kp_xasprintf("%s/%s/%s/%s", p[0], p[1], p[2], p[3]);
    for (int i = 0; i < DEPTH; i++)
        free(p[i]);
    return key;
}

/* "<start time>[-<run id>].json" of a report. Caller frees. */
char *history_file_name(const struct report *rep)
{
    const json_t *md = report_metadata_const(rep);
    char now[32], *t, *id = NULL, *name;
    time_t tt = time(NULL);
    struct tm tm;

    gmtime_r(&tt, &tm);
    strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
    t = component(str(md, "start_time") ? str(md, "start_time") : now);
    for (char *p = t; *p; p++)
        if (*p == '_')
            *p = '-'; /* the ':' of the time */
    if (str(md, "run_id"))
        id = component(str(md, "run_id"));
    name = kp_xasprintf("%s%s%s.json", t, id ? "-" : "", id ? id : "");
    free(t);
    free(id);
    return name;
}

static bool is_report_name(const char *n)
{
    size_t len = strlen(n);
    return n[0] != '.' && len > 5 && strcmp(n + len - 5, ".json") == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Report files directly in dir, appended to *v (as dir/name), sorted by name among themselves. */
static void files_in(const char *dir, char ***v, long *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    long first = *n;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!is_report_name(e->d_name))
            continue;
        *v = kp_xrealloc(*v, (size_t)(*n + 1) * sizeof(**v));
        (*v)[(*n)++] = kp_xasprintf("%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (*n - first > 1)
        qsort(*v + first, (size_t)(*n - first), sizeof(**v), cmp_str);
}

/* Drops the oldest report files of folder beyond keep. */
static int retain(const char *folder, size_t keep, struct kp_err *err)
{
    char **v = NULL;
    long n = 0;
    int rc = 0;

    files_in(folder, &v, &n);
    for (long i = 0; i + (long)keep < n && rc == 0; i++)
        if (unlink(v[i]) != 0 && errno != ENOENT)
            rc = kp_err_set(err, "cannot remove %s: %s", v[i], strerror(errno));
    history_paths_free(v, n);
    return rc;
}

int history_add(const char *dir, const struct report *rep, const char *cluster, size_t keep,
                char **path_out, struct kp_err *err)
{
    char *key = history_key(rep, cluster), *folder = kp_xasprintf("%s/%s", dir, key);
    char *name = history_file_name(rep), *path = kp_xasprintf("%s/%s", folder, name);
    struct safefile *sf = NULL;
    int rc = -1;

    if (keep < 1)
        keep = 1;
    if (report_make_dirs(folder, err) != 0)
        goto out;
    /* the output folder's writer and lock: leftovers of a killed add go on the next one */
    if (safefile_begin(path, NULL, &sf, err) != 0)
        goto out;
    if (report_render(rep, REPORT_JSON, safefile_stream(sf), err) != 0 ||
        safefile_commit(sf, err) != 0) {
        kp_err_prefix(err, "storing %s", path);
        goto out;
    }
    rc = retain(folder, keep, err); /* still under the folder's lock */
    if (rc == 0 && path_out) {
        *path_out = path;
        path = NULL;
    }
out:
    safefile_close(sf);
    free(key);
    free(folder);
    free(name);
    free(path);
    return rc;
}

/* Walks dir down to the version folders (depth levels left), collecting report files. */
static void walk(const char *dir, int depth, char ***v, long *n)
{
    DIR *d;
    struct dirent *e;
    char **subs = NULL;
    long ns = 0;

    if (depth == 0) {
        files_in(dir, v, n);
        return;
    }
    if (!(d = opendir(dir)))
        return;
    while ((e = readdir(d)) != NULL) {
        char *sub;
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        sub = kp_xasprintf("%s/%s", dir, e->d_name);
        if (lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode)) {
            free(sub);
            continue;
        }
        subs = kp_xrealloc(subs, (size_t)(ns + 1) * sizeof(*subs));
        subs[ns++] = sub;
    }
    closedir(d);
    if (ns > 1) /* qsort's base must not be NULL, even for 0 elements */
        qsort(subs, (size_t)ns, sizeof(*subs), cmp_str);
    for (long i = 0; i < ns; i++)
        walk(subs[i], depth - 1, v, n);
    history_paths_free(subs, ns);
}

long history_list(const char *dir, char ***paths, struct kp_err *err)
{
    struct stat st;
    long n = 0;

    *paths = NULL;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return kp_err_set(err, "%s: not a history directory (%s)", dir,
                          errno ? strerror(errno) : "not a directory");
    walk(dir, DEPTH, paths, &n);
    return n;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int cmp_by_time(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int c = strcmp(base_name(x), base_name(y));
    return c ? c : strcmp(x, y);
}

long history_comparable(const char *dir, const struct report *rep, const char *cluster,
                        char ***paths, struct kp_err *err)
{
    char *p[DEPTH], *folder, *own = history_file_name(rep);
    long n = 0, k = 0;
    struct stat st;

    *paths = NULL;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(own);
        return kp_err_set(err, "%s: not a history directory (%s)", dir,
                          errno ? strerror(errno) : "not a directory");
    }
    key_parts(rep, cluster, p);
    folder = kp_xasprintf("%s/%s/%s/%s", dir, p[0], p[1], p[2]);
    walk(folder, 1, paths, &n);
    if (n > 1)
        qsort(*paths, (size_t)n, sizeof(**paths), cmp_by_time);
    for (long i = 0; i < n; i++) { /* leave out the run itself */
        if (strcmp(base_name((*paths)[i]), own) == 0)
            free((*paths)[i]);
        else
            (*paths)[k++] = (*paths)[i];
    }
    for (int i = 0; i < DEPTH; i++)
        free(p[i]);
    free(folder);
    free(own);
    return k;
}

void history_paths_free(char **paths, long n)
{
    for (long i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

static struct report *load_file(void *arg, const char *path, struct kp_err *err)
{
    (void)arg;
    return report_load(path, err);
}

int history_load_runs(char *const *paths, long n, size_t want, bool strict,
                      struct history_runs *out, struct kp_err *err)
{
    return history_load_runs_with(paths, n, want, strict, load_file, NULL, out, err);
}

int history_load_runs_with(char *const *paths, long n, size_t want, bool strict,
                           history_loader_fn *load, void *arg, struct history_runs *out,
                           struct kp_err *err)
{
    memset(out, 0, sizeof(*out));
    out->reps = kp_xcalloc((size_t)n + 1, sizeof(*out->reps));
    out->paths = kp_xcalloc((size_t)n + 1, sizeof(*out->paths));
    out->skipped = kp_xcalloc((size_t)n + 1, sizeof(*out->skipped));
    out->why = kp_xcalloc((size_t)n + 1, sizeof(*out->why));
    /* newest first until want are loaded, so one bad run does not shorten the baseline */
    for (long i = n - 1; i >= 0 && (want == 0 || out->n < want); i--) {
        struct kp_err e = {{0}};
        struct report *r = load(arg, paths[i], &e);
        if (r) {
            out->reps[out->n] = r;
            out->paths[out->n++] = paths[i];
            continue;
        }
        if (strict) {
            kp_err_set(err, "%s", kp_err_msg(&e));
            history_runs_cleanup(out);
            return -1;
        }
        out->skipped[out->n_skipped] = paths[i];
        out->why[out->n_skipped++] = kp_xstrdup(kp_err_msg(&e));
    }
    for (size_t a = 0, b = out->n; a + 1 < b; a++, b--) { /* oldest first again */
        struct report *r = out->reps[a];
        const char *p = out->paths[a];
        out->reps[a] = out->reps[b - 1];
        out->paths[a] = out->paths[b - 1];
        out->reps[b - 1] = r;
        out->paths[b - 1] = p;
    }
    return 0;
}

void history_runs_cleanup(struct history_runs *r)
{
    for (size_t i = 0; r->reps && i < r->n; i++)
        report_free(r->reps[i]);
    for (size_t i = 0; r->why && i < r->n_skipped; i++)
        free(r->why[i]);
    free(r->reps);
    free(r->paths);
    free(r->skipped);
    free(r->why);
    memset(r, 0, sizeof(*r));
}

char *history_compact_json(const struct report *rep, size_t *len)
{
    json_t *doc = report_to_json(rep), *row, *sample;
    size_t i, j;
    char *text;

    json_array_foreach(json_object_get(doc, "results"), i, row)
    {
        json_array_foreach(json_object_get(row, "samples"), j, sample)
        {
            json_object_del(sample, "intervals"); /* per-second series: charts only */
            /* each sample's ~200 kernel and NIC counters: the row's "evidence" keeps their sums
             * and what moved, which is all compare and the trends read */
            json_object_del(sample, "counters");
            json_object_del(sample, "profile"); /* the row's "profile" sums them */
        }
    }
    text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!text)
        abort(); /* jansson allocates through kp_alloc, which fails first */
    *len = strlen(text);
    return text;
}
