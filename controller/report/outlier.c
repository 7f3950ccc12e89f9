/* SPDX-License-Identifier: Apache-2.0 */
/* outlier.c - sweep verdicts from median and MAD per instance type (see outlier.h). */
#include "controller/report/outlier.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/rowkey.h"
#include "controller/report/stats.h"

static int same_group(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

void outlier_judge(const double *v, const char *const *group, size_t n, bool higher_better,
                   int *verdict, double *z)
{
    double *members = kp_xcalloc(n ? n : 1, sizeof(double));
    double *dev = kp_xcalloc(n ? n : 1, sizeof(double));

    for (size_t i = 0; i < n; i++) {
        size_t m = 0;
        double med, mad, d, score;
        for (size_t k = 0; k < n; k++)
            if (same_group(group[i], group[k]) && isfinite(v[k]))
                members[m++] = v[k];
        verdict[i] = OUTLIER_NOT_JUDGED;
        if (z)
            z[i] = 0;
        if (m < OUTLIER_MIN_GROUP || !isfinite(v[i]))
            continue;
        med = stats_median(members, m);
        for (size_t k = 0; k < m; k++)
            dev[k] = fabs(members[k] - med);
        mad = stats_median(dev, m);
        d = higher_better ? med - v[i] : v[i] - med; /* > 0: worse than the median */
        score = mad > 0 ? 0.6745 * d / mad : (d > 0 ? HUGE_VAL : (d < 0 ? -HUGE_VAL : 0));
        if (z)
            z[i] = score;
        verdict[i] =
            score > OUTLIER_Z && d >= OUTLIER_MIN_REL * fabs(med) ? OUTLIER_YES : OUTLIER_OK;
    }
    free(members);
    free(dev);
}

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* a finite number at key k of o, or NAN */
static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);

    return json_is_number(v) && isfinite(json_number_value(v)) ? json_number_value(v) : NAN;
}

/* The key figure of a row: p50 latency for RR tests, throughput for streams; NAN if absent. The
 * best of the row's samples (lowest p50, highest throughput), as a node's value is the better
 * of its pairs: a node is judged on the best it showed, so it is an outlier only when it was
 * slow every time it was measured (the runner's second look adds a sample). */
static double row_value(const json_t *row, bool *higher_better, const char **what)
{
    const json_t *agg = json_object_get(row, "aggregate"), *s;
    double tp = num(agg, "throughput_mbps");
    double lat = num(json_object_get(agg, "latency_us"), "p50");
    double best;
    size_t i;

    if (strcmp(str(row, "status") ? str(row, "status") : "", "failed") == 0)
        return NAN;
    if (tp > 0) {
        *higher_better = true;
        *what = "Mb/s";
        best = tp;
    } else if (!isnan(lat)) {
        *higher_better = false;
        *what = "p50 us";
        best = lat;
    } else {
        return NAN;
    }
    json_array_foreach(json_object_get(row, "samples"), i, s)
    {
        double x = *higher_better ? num(s, "throughput_mbps")
                                  : num(json_object_get(s, "latency_us"), "p50");
        if (!isnan(x) && x > 0 && (*higher_better ? x > best : x < best))
            best = x;
    }
    return best;
}

static int node_index(const json_t *nodes, const char *name)
{
    size_t i;
    json_t *n;

    json_array_foreach(nodes, i, n)
    {
        if (name && str(n, "name") && strcmp(str(n, "name"), name) == 0)
            return (int)i;
    }
    return -1;
}

/* the pair whose client is `client` */
static const char *server_of(const json_t *pairs, const char *client)
{
    size_t i;
    json_t *p;

    json_array_foreach(pairs, i, p)
    {
        if (str(p, "client") && strcmp(str(p, "client"), client) == 0)
            return str(p, "server");
    }
    return NULL;
}

/* one metric (the sweep rows of first's series, rowkey_same_series: one scenario, test,
 * direction and family, one row per node): each node's value */
static void judge_metric(json_t *nodes, const json_t *pairs, const json_t *rows, const char *key,
                         const struct rowkey *first)
{
    size_t n = json_array_size(nodes), i;
    double *v = kp_xcalloc(n ? n : 1, sizeof(double)), *z = kp_xcalloc(n ? n : 1, sizeof(double));
    const char **grp = kp_xcalloc(n ? n : 1, sizeof(char *));
    int *verdict = kp_xcalloc(n ? n : 1, sizeof(int));
    bool hb = false;
    const char *what = "";
    const json_t *row;

    for (i = 0; i < n; i++) {
        v[i] = NAN;
        grp[i] = str(json_array_get(nodes, i), "instance_type");
    }
    json_array_foreach(rows, i, row)
    {
        struct rowkey k;
        const char *client;
        bool h = false;
        const char *w = NULL;
        double x;
        rowkey_of(row, &k);
        if (!(client = rowkey_sweep_node(&k)) || !rowkey_same_series(&k, first))
            continue;
        x = row_value(row, &h, &w);
        if (isnan(x))
            continue;
        hb = h;
        what = w;
        /* the better of the node's two pairs: as client (this row's client) and as server */
        int ends[2] = {node_index(nodes, client), node_index(nodes, server_of(pairs, client))};
        for (int e = 0; e < 2; e++) {
            int at = ends[e];
            if (at < 0)
                continue;
            if (isnan(v[at]) || (hb ? x > v[at] : x < v[at]))
                v[at] = x;
        }
    }
    outlier_judge(v, grp, n, hb, verdict, z);
    for (i = 0; i < n; i++) {
        json_t *node = json_array_get(nodes, i);
        json_t *metrics = json_object_get(node, "metrics");
        if (isnan(v[i]))
            continue;
        if (!metrics) {
            metrics = json_object();
            json_object_set_new(node, "metrics", metrics);
        }
        char *name = kp_xasprintf("%s %s", key, what);
        json_object_set_new(metrics, name,
                            json_pack("{s:f, s:s}", "value", v[i], "verdict",
                                      verdict[i] == OUTLIER_YES  ? "outlier"
                                      : verdict[i] == OUTLIER_OK ? "ok"
                                                                 : "not judged"));
        if (isfinite(z[i]))
            json_object_set_new(json_object_get(metrics, name), "z", json_real(z[i]));
        free(name);
    }
    free(v);
    free(z);
    free(grp);
    free(verdict);
}

void outlier_annotate(json_t *metadata, const json_t *rows)
{
    json_t *sweep = json_object_get(metadata, "sweep");
    json_t *nodes = json_object_get(sweep, "nodes");
    const json_t *pairs = json_object_get(sweep, "pairs");
    json_t *seen, *outliers;
    size_t i;
    const json_t *row;
    json_t *node;

    if (!json_is_array(nodes))
        return;
    seen = json_object();
    outliers = json_array();
    json_array_foreach(rows, i, row)
    {
        struct rowkey k;
        char *series, *name;
        rowkey_of(row, &k);
        if (!rowkey_sweep_node(&k) || !rowkey_valid(&k))
            continue;
        k.placement = ROWKEY_SWEEP_PREFIX; /* the series: every node's row of this metric */
        series = rowkey_text(&k);
        if (!json_object_get(seen, series)) {
            const char *f = rowkey_family_label(&k);
            json_object_set_new(seen, series, json_true());
            name = kp_xasprintf("%s %s%s%s%s", k.scenario, k.test, k.reverse ? " reverse" : "",
                                *f ? " " : "", f);
            judge_metric(nodes, pairs, rows, name, &k);
            free(name);
        }
        free(series);
    }
    json_array_foreach(nodes, i, node)
    {
        const char *k;
        json_t *m;
        int judged = 0, out = 0;
        json_object_foreach(json_object_get(node, "metrics"), k, m)
        {
            judged += strcmp(str(m, "verdict"), "not judged") != 0;
            out += strcmp(str(m, "verdict"), "outlier") == 0;
        }
        if (str(node, "skipped")) { /* went NotReady mid-sweep: its figures are not judged */
            json_object_set_new(node, "verdict", json_string("skipped"));
            continue;
        }
        json_object_set_new(node, "verdict",
                            json_string(out      ? "outlier"
                                        : judged ? "ok"
                                                 : "not judged"));
        if (out)
            json_array_append_new(outliers,
                                  json_string(str(node, "name") ? str(node, "name") : "?"));
    }
    json_object_set_new(sweep, "outliers", outliers);
    json_object_set_new(sweep, "rule",
                        json_sprintf("per instance type: modified z-score > %.1f and >= %.0f%% "
                                     "worse than the median (groups of >= %d nodes)",
                                     OUTLIER_Z, OUTLIER_MIN_REL * 100, OUTLIER_MIN_GROUP));
    json_decref(seen);
}

void outlier_print(const json_t *metadata, bool markdown, FILE *out)
{
    const json_t *sweep = json_object_get(metadata, "sweep");
    const json_t *nodes = json_object_get(sweep, "nodes");
    size_t i;
    const json_t *node;

    if (!json_is_array(nodes))
        return;
    fprintf(out, "%sSweep: %zu nodes in %s pairs, %zu outlier%s (%s)\n", markdown ? "\n### " : "\n",
            json_array_size(nodes), str(sweep, "pairing") ? str(sweep, "pairing") : "?",
            json_array_size(json_object_get(sweep, "outliers")),
            json_array_size(json_object_get(sweep, "outliers")) == 1 ? "" : "s",
            str(sweep, "rule") ? str(sweep, "rule") : "no verdict");
    json_array_foreach(nodes, i, node)
    {
        const char *k;
        const json_t *m;
        fprintf(out, "%s%-10s %-24s %s, %s, kernel %s", markdown ? "- " : "  ",
                str(node, "verdict") ? str(node, "verdict") : "?",
                str(node, "name") ? str(node, "name") : "?",
                str(node, "instance_type") ? str(node, "instance_type") : "type ?",
                str(node, "zone") ? str(node, "zone") : "zone ?",
                str(node, "kernel") ? str(node, "kernel") : "?");
        if (str(node, "cni_version"))
            fprintf(out, ", CNI %s", str(node, "cni_version"));
        if (str(node, "skipped"))
            fprintf(out, "; %s", str(node, "skipped"));
        json_object_foreach((json_t *)json_object_get(node, "metrics"), k, m)
        {
            if (strcmp(str(m, "verdict"), "outlier") == 0)
                fprintf(out, "; %s %.1f (z %.1f)", k,
                        json_number_value(json_object_get(m, "value")),
                        json_is_number(json_object_get(m, "z"))
                            ? json_number_value(json_object_get(m, "z"))
                            : INFINITY);
        }
        fputc('\n', out);
    }
}

static void html_esc(const char *s, FILE *out)
{
    for (; s && *s; s++) {
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '>')
            fputs("&gt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else if (*s == '"')
            fputs("&quot;", out);
        else
            fputc(*s, out);
    }
}

/* the median of one metric across the sweep's nodes (NAN when none) */
static double metric_median(const json_t *nodes, const char *metric)
{
    size_t n = json_array_size(nodes), k = 0, i;
    double *v = kp_xcalloc(n ? n : 1, sizeof(double)), med = NAN;
    const json_t *node;

    json_array_foreach(nodes, i, node)
    {
        const json_t *m = json_object_get(json_object_get(node, "metrics"), metric);
        if (json_is_number(json_object_get(m, "value")))
            v[k++] = json_number_value(json_object_get(m, "value"));
    }
    if (k > 0)
        med = stats_median(v, k);
    free(v);
    return med;
}

void outlier_html(const json_t *metadata, FILE *out)
{
    const json_t *sweep = json_object_get(metadata, "sweep");
    const json_t *nodes = json_object_get(sweep, "nodes"), *node, *m;
    json_t *metrics; /* the union of metric names, in first-seen order */
    const char *k;
    size_t i;

    if (!json_is_array(nodes))
        return;
    metrics = json_object();
    json_array_foreach(nodes, i, node)
    {
        json_object_foreach((json_t *)json_object_get(node, "metrics"), k, m)
        {
            if (!json_object_get(metrics, k))
                json_object_set_new(metrics, k, json_real(metric_median(nodes, k)));
        }
    }
    fprintf(out, "<h3>Sweep: %zu nodes, %zu outlier%s</h3>\n<p>", json_array_size(nodes),
            json_array_size(json_object_get(sweep, "outliers")),
            json_array_size(json_object_get(sweep, "outliers")) == 1 ? "" : "s");
    html_esc(str(sweep, "rule"), out);
    fputs("</p>\n<table class=\"heat\"><tr><th>node</th><th>verdict</th><th>instance</th>"
          "<th>zone</th><th>kernel</th>",
          out);
    json_object_foreach(metrics, k, m)
    {
        fputs("<th>", out);
        html_esc(k, out);
        fputs("</th>", out);
    }
    fputs("</tr>\n", out);
    json_array_foreach(nodes, i, node)
    {
        const char *verdict = str(node, "verdict") ? str(node, "verdict") : "?";
        const char *cols[] = {str(node, "name"), verdict, str(node, "instance_type"),
                              str(node, "zone"), str(node, "kernel")};
        json_t *med;
        fprintf(out, "<tr%s>", strcmp(verdict, "outlier") == 0 ? " class=\"outlier\"" : "");
        for (size_t c = 0; c < 5; c++) {
            fputs(c == 1 && strcmp(verdict, "outlier") == 0 ? "<td><b>" : "<td>", out);
            html_esc(cols[c] ? cols[c] : "-", out);
            fputs(c == 1 && strcmp(verdict, "outlier") == 0 ? "</b></td>" : "</td>", out);
        }
        json_object_foreach(metrics, k, med)
        {
            const json_t *cell = json_object_get(json_object_get(node, "metrics"), k);
            double x = json_number_value(json_object_get(cell, "value"));
            double md = json_number_value(med), bad = 0;
            bool hb = strstr(k, "Mb/s") != NULL; /* throughput: higher is better */
            if (!cell) {
                fputs("<td>-</td>", out);
                continue;
            }
            if (md > 0 && x > 0) /* 0 at the median or better, 1 at twice as bad */
                bad = hb ? md / x - 1 : x / md - 1;
            bad = bad < 0 ? 0 : bad > 1 ? 1 : bad;
            fprintf(out, "<td style=\"background:rgb(%d,%d,120)\" title=\"%s\">%s%.1f%s</td>",
                    (int)(120 + 135 * bad), (int)(220 - 140 * bad),
                    str(cell, "verdict") ? str(cell, "verdict") : "",
                    strcmp(str(cell, "verdict") ? str(cell, "verdict") : "", "outlier") == 0
                        ? "<b>&#9888; "
                        : "",
                    x,
                    strcmp(str(cell, "verdict") ? str(cell, "verdict") : "", "outlier") == 0
                        ? "</b>"
                        : "");
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
    json_decref(metrics);
}
