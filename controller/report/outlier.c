/* SPDX-License-Identifier: Apache-2.0 */
/* outlier.c - sweep verdicts per instance type: the floor, the MAD tail and its edge, suspects,
 * the spread (see outlier.h). */
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* the q-quantile (0..1) of n sorted values, interpolated (n > 0) */
static double quantile(const double *sorted, size_t n, double q)
{
    double at = q * (double)(n - 1);
    size_t lo = (size_t)at;

    return lo + 1 < n ? sorted[lo] + (at - (double)lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
}

/* The edge of the group's spread on the worse side, without node i itself (so a 5-node group's
 * edge is not dragged by the very node judged): the 90th percentile of the others' latencies,
 * the 10th of their throughputs. members[] holds the group's values with v_i among them. */
static double worse_edge(const double *members, size_t m, double v_i, bool higher_better)
{
    double *o = kp_xcalloc(m, sizeof(double)), edge;
    size_t k = 0;
    bool skipped = false;

    for (size_t j = 0; j < m; j++) {
        if (!skipped && members[j] == v_i) {
            skipped = true;
            continue;
        }
        o[k++] = members[j];
    }
    qsort(o, k, sizeof(double), cmp_double);
    edge = k ? quantile(o, k, higher_better ? 1 - OUTLIER_EDGE_Q : OUTLIER_EDGE_Q) : v_i;
    free(o);
    return edge;
}

/* one value x against its group's median, MAD and edge: an enum outlier_verdict */
static int verdict_of(double x, double med, double score, double edge, bool higher_better)
{
    /* how far worse, as a factor (>= 1): the median over the value for throughput */
    double worse = higher_better ? (x > 0 ? med / x : HUGE_VAL) : (med > 0 ? x / med : HUGE_VAL);
    double beyond = higher_better ? (x > 0 ? edge / x : HUGE_VAL) : (edge > 0 ? x / edge : 1);

    if (med > 0 && worse >= OUTLIER_FLOOR)
        return OUTLIER_YES;
    if (score > OUTLIER_Z && (higher_better ? med - x : x - med) >= OUTLIER_MIN_REL * fabs(med) &&
        beyond >= OUTLIER_EDGE_GAP)
        return OUTLIER_SUSPECT;
    return OUTLIER_OK;
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
        verdict[i] = verdict_of(v[i], med, score, worse_edge(members, m, v[i], higher_better),
                                higher_better);
    }
    free(members);
    free(dev);
}

json_t *outlier_spread(const double *v, size_t n)
{
    double *s = kp_xcalloc(n ? n : 1, sizeof(double)), *dev = kp_xcalloc(n ? n : 1, sizeof(double));
    double med;
    size_t m = 0;
    json_t *o;

    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            s[m++] = v[i];
    if (m == 0) {
        free(s);
        free(dev);
        return json_pack("{s:i}", "nodes", 0);
    }
    qsort(s, m, sizeof(double), cmp_double);
    med = stats_median(s, m);
    for (size_t i = 0; i < m; i++)
        dev[i] = fabs(s[i] - med);
    o = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f}", "nodes", (json_int_t)m, "median", med,
                  "mad", stats_median(dev, m), "p10", quantile(s, m, 0.1), "p90",
                  quantile(s, m, 0.9), "min", s[0], "max", s[m - 1]);
    free(s);
    free(dev);
    return o;
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

static bool in_list(const json_t *names, const char *name)
{
    size_t i;
    const json_t *v;

    json_array_foreach(names, i, v)
    {
        if (name && json_string_value(v) && strcmp(json_string_value(v), name) == 0)
            return true;
    }
    return false;
}

/* After a second look (the runner sets sweep.confirmed: the nodes it measured again), a node is
 * an outlier only when it was measured again and is still flagged: a flagged node beyond the
 * look's cap was slow once, a suspect. Before it (or without one), the floor stands alone. */
static const char *verdict_name(int verdict, const json_t *confirmed, const char *node)
{
    bool again = in_list(confirmed, node);

    switch (verdict) {
    case OUTLIER_YES:
        return !confirmed || again ? "outlier" : "suspect";
    case OUTLIER_SUSPECT:
        return again ? "outlier" : "suspect";
    case OUTLIER_OK:
        return "ok";
    default:
        return "not judged";
    }
}

/* the median of the finite values of group g (NAN when none) */
static double group_median(const double *v, const char *const *grp, size_t n, const char *g)
{
    double *m = kp_xcalloc(n ? n : 1, sizeof(double)), med = NAN;
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (same_group(grp[i], g) && isfinite(v[i]))
            m[k++] = v[i];
    if (k)
        med = stats_median(m, k);
    free(m);
    return med;
}

/* sweep.spread gets one entry per instance type of this metric: how spread its nodes are */
static void add_spreads(json_t *sweep, const char *key, const char *what, const double *v,
                        const char *const *grp, size_t n)
{
    json_t *spreads = json_object_get(sweep, "spread");
    double *g = kp_xcalloc(n ? n : 1, sizeof(double));

    for (size_t i = 0; i < n; i++) {
        bool first = true;
        json_t *s;
        for (size_t j = 0; j < i && first; j++)
            first = !same_group(grp[i], grp[j]);
        if (!first)
            continue;
        for (size_t j = 0; j < n; j++)
            g[j] = same_group(grp[i], grp[j]) ? v[j] : NAN;
        s = outlier_spread(g, n);
        if (json_integer_value(json_object_get(s, "nodes")) == 0) {
            json_decref(s);
            continue;
        }
        json_object_set_new(s, "metric", json_sprintf("%s %s", key, what));
        json_object_set_new(s, "instance_type", grp[i] ? json_string(grp[i]) : json_null());
        json_array_append_new(spreads, s);
    }
    free(g);
}

/* one metric (the sweep rows of first's series, rowkey_same_series: one scenario, test,
 * direction and family, one row per node): each node's value */
static void judge_metric(json_t *sweep, const json_t *rows, const char *key,
                         const struct rowkey *first)
{
    json_t *nodes = json_object_get(sweep, "nodes");
    const json_t *pairs = json_object_get(sweep, "pairs");
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
    add_spreads(sweep, key, what, v, grp, n);
    for (i = 0; i < n; i++) {
        json_t *node = json_array_get(nodes, i);
        json_t *metrics = json_object_get(node, "metrics"), *m;
        double med = group_median(v, grp, n, grp[i]);
        if (isnan(v[i]))
            continue;
        if (!metrics) {
            metrics = json_object();
            json_object_set_new(node, "metrics", metrics);
        }
        char *name = kp_xasprintf("%s %s", key, what);
        m = json_pack(
            "{s:f, s:s}", "value", v[i], "verdict",
            verdict_name(verdict[i], json_object_get(sweep, "confirmed"), str(node, "name")));
        if (isfinite(z[i]))
            json_object_set_new(m, "z", json_real(z[i]));
        if (verdict[i] != OUTLIER_NOT_JUDGED && med > 0)
            json_object_set_new(m, "ratio", json_real(v[i] / med));
        json_object_set_new(metrics, name, m);
        free(name);
    }
    free(v);
    free(z);
    free(grp);
    free(verdict);
}

/* how many times worse than its group's median a node's worst flagged metric is (0: none) */
static double severity(const json_t *node)
{
    const char *k;
    const json_t *m;
    double worst = 0;

    json_object_foreach((json_t *)json_object_get(node, "metrics"), k, m)
    {
        double r = json_number_value(json_object_get(m, "ratio")), x;
        const char *verdict = str(m, "verdict") ? str(m, "verdict") : "";
        if (r <= 0 || (strcmp(verdict, "outlier") != 0 && strcmp(verdict, "suspect") != 0))
            continue;
        x = strstr(k, "Mb/s") ? 1 / r : r; /* throughput: higher is better */
        worst = x > worst ? x : worst;
    }
    return worst;
}

static int by_severity(const void *a, const void *b)
{
    double x = severity(*(json_t *const *)a), y = severity(*(json_t *const *)b);

    return x > y ? -1 : x < y;
}

/* the names of the nodes with verdict `verdict`, the worst first (new array) */
static json_t *names_with(const json_t *nodes, const char *verdict)
{
    size_t n = json_array_size(nodes), k = 0, i;
    const json_t **pick = kp_xcalloc(n ? n : 1, sizeof(*pick));
    const json_t *node;
    json_t *out = json_array();

    json_array_foreach(nodes, i, node)
    {
        if (strcmp(str(node, "verdict"), verdict) == 0)
            pick[k++] = node;
    }
    qsort(pick, k, sizeof(*pick), by_severity);
    for (i = 0; i < k; i++)
        json_array_append_new(out, json_string(str(pick[i], "name") ? str(pick[i], "name") : "?"));
    free(pick);
    return out;
}

void outlier_annotate(json_t *metadata, const json_t *rows)
{
    json_t *sweep = json_object_get(metadata, "sweep");
    json_t *nodes = json_object_get(sweep, "nodes");
    json_t *seen;
    size_t i;
    const json_t *row;
    json_t *node;

    if (!json_is_array(nodes))
        return;
    seen = json_object();
    json_object_set_new(sweep, "spread", json_array());
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
            judge_metric(sweep, rows, name, &k);
            free(name);
        }
        free(series);
    }
    json_array_foreach(nodes, i, node)
    {
        const char *k;
        json_t *m;
        int judged = 0, out = 0, sus = 0;
        json_object_foreach(json_object_get(node, "metrics"), k, m)
        {
            judged += strcmp(str(m, "verdict"), "not judged") != 0;
            out += strcmp(str(m, "verdict"), "outlier") == 0;
            sus += strcmp(str(m, "verdict"), "suspect") == 0;
        }
        if (str(node, "skipped")) { /* went NotReady mid-sweep: its figures are not judged */
            json_object_set_new(node, "verdict", json_string("skipped"));
            continue;
        }
        json_object_set_new(node, "verdict",
                            json_string(out      ? "outlier"
                                        : sus    ? "suspect"
                                        : judged ? "ok"
                                                 : "not judged"));
    }
    json_object_set_new(sweep, "outliers", names_with(nodes, "outlier"));
    json_object_set_new(sweep, "suspects", names_with(nodes, "suspect"));
    json_object_set_new(
        sweep, "rule",
        json_sprintf("per instance type: %.0fx worse than the median or more; or modified "
                     "z-score > %.1f, >= %.0f%% worse than the median and %.2fx beyond the "
                     "worst %.0f%% of the others, and so again when measured a second time "
                     "(groups of >= %d nodes)",
                     OUTLIER_FLOOR, OUTLIER_Z, OUTLIER_MIN_REL * 100, OUTLIER_EDGE_GAP,
                     (1 - OUTLIER_EDGE_Q) * 100, OUTLIER_MIN_GROUP));
    json_decref(seen);
}

/* one line per metric and instance type: the spread the verdict was made against */
static void print_spreads(const json_t *sweep, bool markdown, FILE *out)
{
    size_t i;
    const json_t *s;

    json_array_foreach(json_object_get(sweep, "spread"), i, s)
    {
        double med = json_number_value(json_object_get(s, "median"));
        double p10 = json_number_value(json_object_get(s, "p10"));
        double p90 = json_number_value(json_object_get(s, "p90"));
        fprintf(out, "%sspread     %s, %s: %lld nodes, median %.1f, 10-90%% %.1f-%.1f",
                markdown ? "- " : "  ", str(s, "metric") ? str(s, "metric") : "?",
                str(s, "instance_type") ? str(s, "instance_type") : "type ?",
                (long long)json_integer_value(json_object_get(s, "nodes")), med, p10, p90);
        if (med > 0)
            fprintf(out, " (%.2f-%.2fx the median)", p10 / med, p90 / med);
        fprintf(out, ", MAD %.1f\n", json_number_value(json_object_get(s, "mad")));
    }
}

void outlier_print(const json_t *metadata, bool markdown, FILE *out)
{
    const json_t *sweep = json_object_get(metadata, "sweep");
    const json_t *nodes = json_object_get(sweep, "nodes");
    size_t i;
    const json_t *node;

    if (!json_is_array(nodes))
        return;
    size_t n_sus = json_array_size(json_object_get(sweep, "suspects"));

    fprintf(out, "%sSweep: %zu nodes in %s pairs, %zu outlier%s", markdown ? "\n### " : "\n",
            json_array_size(nodes), str(sweep, "pairing") ? str(sweep, "pairing") : "?",
            json_array_size(json_object_get(sweep, "outliers")),
            json_array_size(json_object_get(sweep, "outliers")) == 1 ? "" : "s");
    if (n_sus)
        fprintf(out, ", %zu suspect%s (slow once, not measured again)", n_sus,
                n_sus == 1 ? "" : "s");
    fprintf(out, " (%s)\n", str(sweep, "rule") ? str(sweep, "rule") : "no verdict");
    print_spreads(sweep, markdown, out);
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
            if (strcmp(str(m, "verdict"), "outlier") == 0 ||
                strcmp(str(m, "verdict"), "suspect") == 0)
                fprintf(out, "; %s %.1f (%.2fx the median, z %.1f)", k,
                        json_number_value(json_object_get(m, "value")),
                        json_number_value(json_object_get(m, "ratio")),
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
    fprintf(out, "<h3>Sweep: %zu nodes, %zu outlier%s, %zu suspect%s</h3>\n<p>",
            json_array_size(nodes), json_array_size(json_object_get(sweep, "outliers")),
            json_array_size(json_object_get(sweep, "outliers")) == 1 ? "" : "s",
            json_array_size(json_object_get(sweep, "suspects")),
            json_array_size(json_object_get(sweep, "suspects")) == 1 ? "" : "s");
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
