/* SPDX-License-Identifier: Apache-2.0 */
/* history_html.c - the history trend page (history_html.h). A series is the reports whose
 * paths share DIR/<cluster>/<node pair>/<cni>/ (history.h), ordered by file name, which is the
 * start time. Rows are matched across runs by their key (base/rowkey.h), as compare matches
 * them. */
#include "controller/report/history_html.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/rowkey.h"
#include "controller/report/history.h"
#include "controller/report/html_chart.h"
#include "controller/report/html_util.h"
#include "controller/report/report.h"

struct series {
    const char *key; /* cluster/pair/cni, borrowed from the first path */
    size_t key_len;
    char **paths; /* borrowed from the listing, oldest first */
    size_t n;
    struct report **reps; /* ours */
    json_t **judged;      /* ours: compare_to_json of run i against the runs before, or NULL */
};

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The rowkey_text of a report row or a compare row: the key compare matches rows by
 * (base/rowkey.h). Caller frees; NULL for a row without scenario, placement or test. */
static char *row_id(const json_t *r)
{
    struct rowkey k;

    rowkey_of(r, &k);
    return rowkey_text(&k);
}

/* The length of the series part of a listed path (up to the CNI folder, without the version
 * folder and the file). */
static size_t series_len(const char *path)
{
    const char *file = strrchr(path, '/'), *version = file;

    while (version > path && version[-1] != '/')
        version--;
    return version > path ? (size_t)(version - path) : 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(strrchr(*(char *const *)a, '/'), strrchr(*(char *const *)b, '/'));
}

/* Groups the sorted listing into series (caller frees *out and each paths array). */
static size_t group(char **paths, long n, struct series **out)
{
    struct series *s = kp_xcalloc((size_t)n + 1, sizeof(*s));
    size_t ns = 0;

    for (long i = 0; i < n; i++) {
        size_t len = series_len(paths[i]);
        struct series *g = NULL;
        for (size_t k = 0; k < ns && !g; k++)
            if (s[k].key_len == len && strncmp(s[k].key, paths[i], len) == 0)
                g = &s[k];
        if (!g) {
            g = &s[ns++];
            g->key = paths[i];
            g->key_len = len;
            g->paths = kp_xcalloc((size_t)n, sizeof(*g->paths));
        }
        g->paths[g->n++] = paths[i];
    }
    for (size_t k = 0; k < ns; k++)
        qsort(s[k].paths, s[k].n, sizeof(*s[k].paths), by_name);
    *out = s;
    return ns;
}

static void series_cleanup(struct series *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (s->reps)
            report_free(s->reps[i]);
        if (s->judged)
            json_decref(s->judged[i]);
    }
    free(s->reps);
    free(s->judged);
    free(s->paths);
}

/* Loads the runs (an unreadable one is skipped, named through o->on_skip and counted in
 * *skipped, unless o->strict) and judges each against up to o->runs runs before it. */
static int load(struct series *s, const struct history_trend_opts *o, size_t *skipped,
                struct kp_err *err)
{
    struct history_runs h;

    if (history_load_runs(s->paths, (long)s->n, 0, o->strict, &h, err) != 0)
        return kp_err_prefix(err, "a run cannot be read (--strict)");
    for (size_t i = 0; i < h.n_skipped; i++)
        if (o->on_skip)
            o->on_skip(h.skipped[i], h.why[i], o->arg);
    *skipped += h.n_skipped;
    for (size_t i = 0; i < h.n; i++)
        s->paths[i] = (char *)h.paths[i]; /* borrowed from the listing either way */
    s->n = h.n;
    s->reps = h.reps; /* ours now */
    h.reps = NULL;
    h.n = 0;
    history_runs_cleanup(&h);
    s->judged = kp_xcalloc(s->n + 1, sizeof(*s->judged));
    for (size_t i = 1; i < s->n; i++) {
        size_t k = i < o->runs ? i : o->runs;
        struct kp_err ignored = {{0}}; /* no shared row: nothing to mark */
        struct compare *c = compare_history((const struct report *const *)s->reps + (i - k), k,
                                            s->reps[i], o->compare, &ignored);
        if (c)
            s->judged[i] = compare_to_json(c);
        compare_free(c);
    }
    return 0;
}

/* The verdict of metric in row rid of run i's judgement ("" when not judged). */
static const char *verdict_of(const struct series *s, size_t i, const char *rid, const char *metric)
{
    const json_t *r, *m;
    size_t a, b;

    json_array_foreach(json_object_get(s->judged[i], "rows"), a, r)
    {
        char *id = row_id(r);
        bool same = id && strcmp(id, rid) == 0;
        free(id);
        if (!same)
            continue;
        json_array_foreach(json_object_get(r, "metrics"), b, m)
        {
            if (strcmp(str(m, "metric"), metric) == 0)
                return str(m, "verdict");
        }
    }
    return "";
}

/* row_id of row i of rep from its report_row_info (the row itself is not read: a loaded row
 * is parsed when read, report.h); NULL when the row has no samples. Caller frees. */
static char *measured_row_id(const struct report *rep, size_t i)
{
    struct report_row_info ri;
    struct rowkey k;

    report_row_info(rep, i, &ri);
    if (ri.n_samples == 0)
        return NULL;
    rowkey_make(&k, ri.scenario, ri.placement, ri.test, ri.reverse, ri.ip_family);
    return rowkey_text(&k);
}

/* The measured row rid of run i, or NULL. Borrowed. */
static const json_t *row_of(const struct report *rep, const char *rid)
{
    for (size_t i = 0; i < report_row_count(rep); i++) {
        char *id = measured_row_id(rep, i);
        bool same = id && strcmp(id, rid) == 0;
        free(id);
        if (same)
            return report_row(rep, i);
    }
    return NULL;
}

struct counts {
    size_t charts, marks;
};

/* One chart of metric m of row rid over the series; nothing when no run has a value. */
static void metric_chart(const struct series *s, const char *rid, const struct cmp_metric *m,
                         struct counts *c, FILE *out)
{
    double *x = kp_xcalloc(s->n, sizeof(*x)), *y = kp_xcalloc(s->n, sizeof(*y));
    bool *mark = kp_xcalloc(s->n, sizeof(*mark)), any = false;
    size_t marks = 0;
    char title[200];

    for (size_t i = 0; i < s->n; i++) {
        const json_t *r = row_of(s->reps[i], rid);
        x[i] = (double)i + 1;
        y[i] = NAN;
        if (r && cmp_row_value(r, m, &y[i]))
            any = true;
        else
            y[i] = NAN;
        mark[i] = strcmp(verdict_of(s, i, rid, m->name), "regression") == 0;
        marks += mark[i];
    }
    if (any) {
        snprintf(title, sizeof(title), "%s over %zu runs (%s is better)", m->name, s->n,
                 m->higher_is_better ? "higher" : "lower");
        fprintf(out, "<figure class=\"metric%s\" data-metric=\"", marks ? " regressed" : "");
        html_esc(m->name, out);
        fprintf(out, "\" data-regressions=\"%zu\"><figcaption>", marks);
        html_esc(m->name, out);
        fprintf(out, " <small>%s is better%s</small></figcaption>\n",
                m->higher_is_better ? "higher" : "lower", marks ? ", regression marked" : "");
        html_chart_line(&(struct html_line){.x = x,
                                            .y = y,
                                            .n = s->n,
                                            .marked = mark,
                                            .width = 230,
                                            .height = 90,
                                            .css = "trend",
                                            .title = title,
                                            .x_lo = "run 1",
                                            .x_hi = s->n > 1 ? "newest" : "run 1"},
                        out);
        fputs("</figure>\n", out);
        c->charts++;
        c->marks += marks;
    }
    free(x);
    free(y);
    free(mark);
}

/* The row ids of the series in order of first appearance (caller frees each and *ids). */
static size_t row_ids(const struct series *s, char ***ids)
{
    size_t n = 0, cap = 8;
    char **v = kp_xcalloc(cap, sizeof(*v));

    for (size_t i = 0; i < s->n; i++)
        for (size_t r = 0; r < report_row_count(s->reps[i]); r++) {
            char *id = measured_row_id(s->reps[i], r);
            bool seen = false;
            if (!id)
                continue;
            for (size_t k = 0; k < n && !seen; k++)
                seen = strcmp(v[k], id) == 0;
            if (seen) {
                free(id);
                continue;
            }
            if (n == cap)
                v = kp_xrealloc(v, (cap *= 2) * sizeof(*v));
            v[n++] = id;
        }
    *ids = v;
    return n;
}

/* The runs of the series: when, which CNI version, which file. */
/* How many of rep's rows are marked by their counters (evidence.h: a drop, shaping or overflow
 * counter moved). */
static size_t marked_rows(const struct report *rep)
{
    size_t n = 0;

    for (size_t j = 0; j < report_row_count(rep); j++)
        n += json_array_size(
                 json_object_get(json_object_get(report_row(rep, j), "evidence"), "moved")) > 0;
    return n;
}

static void runs_table(const struct series *s, FILE *out)
{
    fputs("<table class=\"runs\"><tr><th>run</th><th>started</th><th>CNI version</th>"
          "<th>regressions</th><th title=\"rows whose drop, shaping or overflow counters moved "
          "(the report's Evidence)\">marked rows</th><th>file</th></tr>\n",
          out);
    for (size_t i = 0; i < s->n; i++) {
        const json_t *md = report_metadata_const(s->reps[i]);
        const json_t *sum = json_object_get(s->judged[i], "summary");
        fprintf(out, "<tr><td>%zu</td><td>", i + 1);
        html_esc(str(md, "start_time"), out);
        fputs("</td><td>", out);
        html_esc(str(json_object_get(md, "cni"), "version"), out);
        if (s->judged[i])
            fprintf(out, "</td><td>%lld",
                    (long long)json_integer_value(json_object_get(sum, "regressions")));
        else
            fputs("</td><td>-", out);
        fprintf(out, "</td><td>%zu</td><td>", marked_rows(s->reps[i]));
        html_esc(strrchr(s->paths[i], '/') + 1, out);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void series_section(const struct series *s, const char *dir, struct counts *c, FILE *out)
{
    size_t count, nrows;
    const struct cmp_metric *m = cmp_metrics(&count);
    char **ids, label[256];

    char *name =
        kp_xasprintf("%.*s", (int)(s->key_len - strlen(dir) - 2), s->key + strlen(dir) + 1);

    fputs("<h2 class=\"series\">", out);
    html_esc(name, out);
    free(name);
    fprintf(out, " <small>(%zu run%s)</small></h2>\n", s->n, s->n == 1 ? "" : "s");
    runs_table(s, out);
    nrows = row_ids(s, &ids);
    for (size_t r = 0; r < nrows; r++) {
        const json_t *row = NULL;
        struct rowkey key;
        for (size_t i = s->n; i-- > 0 && !row;)
            row = row_of(s->reps[i], ids[r]);
        rowkey_of(row, &key);
        fputs("<section class=\"row\"><h3>", out);
        html_esc(rowkey_label(&key, label, sizeof(label)), out);
        fputs("</h3>\n<div class=\"charts\">\n", out);
        for (size_t k = 0; k < count; k++)
            metric_chart(s, ids[r], &m[k], c, out);
        fputs("</div></section>\n", out);
        free(ids[r]);
    }
    free(ids);
}

static void page_head(const char *dir, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kperf "
          "history ",
          out);
    html_esc(dir, out);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1200px}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;"
          "padding:2px 8px;text-align:left;font-size:90%}svg text{font:10px sans-serif}"
          ".charts{display:flex;flex-wrap:wrap;gap:.6em}figure{margin:0}"
          "figcaption{font-size:85%}figure.regressed figcaption{color:#cc3333;font-weight:bold}"
          "#summary{font-weight:bold}#summary.fail{color:#cc3333}#summary.ok{color:#060}"
          "</style></head><body>\n<h1>kperf history: trends</h1>\n",
          out);
}

int history_trend_html(const char *dir, const struct history_trend_opts *o, FILE *out,
                       struct kp_err *err)
{
    char **paths;
    long n = history_list(dir, &paths, err);
    struct series *s = NULL;
    size_t ns = 0;
    struct counts c = {0, 0};
    size_t skipped = 0, body_len = 0;
    char *body = NULL; /* ours: the series sections */
    FILE *mem;
    int rc = -1;

    if (n < 0)
        return -1;
    if (n == 0) {
        kp_err_set(err, "%s holds no report (add runs with 'kperf history add')", dir);
        goto out;
    }
    ns = group(paths, n, &s);
    for (size_t k = 0; k < ns; k++)
        if (load(&s[k], o, &skipped, err) != 0)
            goto out;
    if (skipped == (size_t)n) {
        kp_err_set(err, "no run in %s can be read (%zu skipped)", dir, skipped);
        goto out;
    }
    /* the sections go to memory first: the verdict, which counts their marks, leads the page */
    mem = open_memstream(&body, &body_len);
    if (!mem) {
        kp_err_set(err, "cannot buffer the trend page");
        goto out;
    }
    for (size_t k = 0; k < ns; k++)
        if (s[k].n > 0)
            series_section(&s[k], dir, &c, mem);
    fclose(mem);
    page_head(dir, out);
    fprintf(out,
            "<p id=\"summary\" class=\"%s\" data-runs=\"%zu\" data-series=\"%zu\" "
            "data-charts=\"%zu\" data-regressions=\"%zu\" data-skipped=\"%zu\">%zu "
            "regression mark%s in %zu charts.</p>\n",
            c.marks ? "fail" : "ok", (size_t)n - skipped, ns, c.charts, c.marks, skipped, c.marks,
            c.marks == 1 ? "" : "s", c.charts);
    fprintf(out,
            "<p>%zu runs in %zu series (cluster / node pair / CNI). Each run from the second on "
            "is judged against up to %zu runs before it, as <code>kperf compare --baseline</code> "
            "does; a metric it calls a regression is marked <span style=\"color:#cc3333\">"
            "&#9679;</span> on that run.</p>\n",
            (size_t)n - skipped, ns, o->runs);
    if (skipped)
        fprintf(out, "<p id=\"skipped\">%zu unreadable run%s skipped (named on stderr).</p>\n",
                skipped, skipped == 1 ? "" : "s");
    fputs(body, out);
    fputs("</body></html>\n", out);
    rc = 0;
out:
    free(body);
    for (size_t k = 0; k < ns; k++)
        series_cleanup(&s[k]);
    free(s);
    history_paths_free(paths, n);
    return rc;
}
