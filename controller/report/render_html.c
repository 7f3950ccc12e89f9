/* SPDX-License-Identifier: Apache-2.0 */
/* render_html.c - one self-contained HTML page with inline SVG bar charts. Every string that
 * comes from the report is escaped; the page loads nothing from anywhere. */
#include "controller/report/render_html.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/rowkey.h"
#include "controller/report/evidence.h"
#include "controller/report/html_chart.h"
#include "controller/report/html_util.h"
#include "controller/report/outlier.h"
#include "controller/report/pathmtu.h"
#include "controller/report/render_text.h"
#include "controller/report/report.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/report_pack.h"

#define BAR_W   520 /* px of the longest bar */
#define LABEL_W 330 /* px for row labels */

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* A metadata value as readable text: strings as they are, numbers in plain notation with their
 * unit (html_number_for_key), yes/no, lists of scalars joined with ", ", objects as a nested
 * key/value table (provenance: cni.settings, mtu, parameters). Never a raw JSON string. */
static void meta_value(const char *key, const json_t *v, FILE *out)
{
    const char *k;
    const json_t *e;
    size_t i;

    switch (json_typeof(v)) {
    case JSON_STRING:
        html_esc(json_string_value(v), out);
        return;
    case JSON_INTEGER:
    case JSON_REAL:
        html_number_for_key(key, json_number_value(v), out);
        return;
    case JSON_TRUE:
    case JSON_FALSE:
        fputs(json_is_true(v) ? "yes" : "no", out);
        return;
    case JSON_NULL:
        fputs("-", out);
        return;
    case JSON_ARRAY:
        json_array_foreach(v, i, e)
        {
            fputs(i ? (json_is_object(e) ? "" : ", ") : "", out);
            meta_value(key, e, out);
        }
        if (json_array_size(v) == 0)
            fputs("-", out);
        return;
    case JSON_OBJECT:
        if (json_object_size(v) == 0) {
            fputs("-", out);
            return;
        }
        fputs("<table class=\"kv\">", out);
        json_object_foreach((json_t *)v, k, e)
        {
            fputs("<tr><th>", out);
            html_esc(k, out);
            fputs("</th><td>", out);
            meta_value(k, e, out);
            fputs("</td></tr>", out);
        }
        fputs("</table>", out);
        return;
    }
}

static void meta_row(const char *name, const json_t *v, FILE *out)
{
    if (!v)
        return;
    fputs("<tr><th>", out);
    html_esc(name, out);
    fputs("</th><td>", out);
    meta_value(name, v, out);
    fputs("</td></tr>\n", out);
}

/* Pod network readiness per node (metadata.readiness.nodes): one bar per node and kind, the
 * p50 of total_s, and the slowest pod (max) as a thinner bar behind it. */
static void readiness_chart(const json_t *md, FILE *out)
{
    const json_t *nodes = json_object_get(json_object_get(md, "readiness"), "nodes"), *n;
    double hi = 0;
    size_t i, count = json_array_size(nodes);

    if (count == 0)
        return;
    json_array_foreach(nodes, i, n)
    {
        double mx = json_number_value(json_object_get(json_object_get(n, "total_s"), "max"));
        hi = mx > hi ? mx : hi;
    }
    fputs("<h2>Pod network readiness per node</h2>\n", out);
    fprintf(out, "<svg class=\"readiness\" width=\"%d\" height=\"%zu\" role=\"img\">\n",
            LABEL_W + BAR_W + 120, count * 22 + 6);
    json_array_foreach(nodes, i, n)
    {
        const json_t *t = json_object_get(n, "total_s");
        double p50 = json_number_value(json_object_get(t, "p50"));
        double mx = json_number_value(json_object_get(t, "max"));
        double y = 4 + (double)i * 22;

        fprintf(out, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", LABEL_W - 6, y + 13);
        html_esc(str(n, "node"), out);
        fputs(" (", out);
        html_esc(str(n, "kind"), out);
        fprintf(out, ", %lld pods)</text>\n",
                (long long)json_integer_value(json_object_get(n, "pods")));
        fprintf(out,
                "<rect class=\"max\" x=\"%d\" y=\"%.0f\" width=\"%.1f\" height=\"6\" "
                "fill=\"#f28e2b\"><title>slowest pod</title></rect>\n",
                LABEL_W, y + 10, hi > 0 ? mx / hi * BAR_W : 0);
        fprintf(out,
                "<rect class=\"p50\" x=\"%d\" y=\"%.0f\" width=\"%.1f\" height=\"10\" "
                "fill=\"#4e79a7\"><title>median pod</title></rect>\n",
                LABEL_W, y, hi > 0 ? p50 / hi * BAR_W : 0);
        fprintf(out, "<text class=\"v\" x=\"%.1f\" y=\"%.0f\">",
                LABEL_W + 6 + (hi > 0 ? mx / hi * BAR_W : 0), y + 13);
        html_number(p50, out);
        fputs(" s p50, ", out);
        html_number(mx, out);
        fputs(" s max</text>\n", out);
    }
    fputs("</svg>\n<p>Creation to the first packet through the pod's network (total_s): "
          "the median pod (blue) and the slowest (orange).</p>\n",
          out);
}

/* The provenance card: what ran where, in one compact block after the results. */
static void run_card(const json_t *md, FILE *out)
{
    static const char *const keys[] = {"cluster",         "start_time",   "end_time",
                                       "backend",         "run_id",       "kubernetes_version",
                                       "kube_proxy_mode", "kperf_version"};
    const json_t *cni = json_object_get(md, "cni");
    const json_t *nodes = json_object_get(md, "nodes");
    const json_t *n;
    size_t i;

    fputs("<h2 id=\"provenance\">Run</h2>\n<dl class=\"card\">", out);
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const json_t *v = json_object_get(md, keys[k]);
        if (!v || json_is_object(v) || json_is_array(v))
            continue;
        fputs("<dt>", out);
        html_esc(keys[k], out);
        fputs("</dt><dd>", out);
        meta_value(keys[k], v, out);
        fputs("</dd>", out);
    }
    if (json_is_object(cni)) {
        fputs("<dt>cni</dt><dd>", out);
        html_esc(str(cni, "name"), out);
        fputs(" ", out);
        html_esc(str(cni, "version"), out);
        fputs("</dd>", out);
    }
    json_array_foreach(nodes, i, n)
    {
        fputs("<dt>", out);
        html_esc(str(n, "role"), out);
        fputs(" node</dt><dd>", out);
        html_esc(str(n, "name"), out);
        if (*str(n, "instance_type")) {
            fputs(", ", out);
            html_esc(str(n, "instance_type"), out);
        }
        if (*str(n, "kernel")) {
            fputs(", kernel ", out);
            html_esc(str(n, "kernel"), out);
        }
        fputs("</dd>", out);
    }
    fputs("</dl>\n", out);
}

static void print_metadata(const struct report *rep, FILE *out)
{
    const json_t *md = report_metadata_const(rep), *v;
    const char *key;

    fputs("<details id=\"metadata\"><summary>All run metadata</summary>\n"
          "<table class=\"meta\">\n",
          out);
    json_object_foreach((json_t *)md, key, v)
    {
        if (strcmp(key, "nodes") != 0 && strcmp(key, "sweep") != 0) /* both below */
            meta_row(key, v, out);
    }
    fputs("</table>\n", out);
    v = json_object_get(md, "nodes");
    if (json_array_size(v) == 0) {
        fputs("</details>\n", out);
        return;
    }
    fputs("<h3>Nodes</h3>\n<table><tr><th>name</th><th>role</th><th>arch</th><th>kernel</"
          "th><th>OS</th>"
          "<th>runtime</th><th>instance</th><th>zone</th><th>MTU</th></tr>\n",
          out);
    size_t i;
    const json_t *n;
    json_array_foreach(v, i, n)
    {
        static const char *const keys[] = {"name",          "role",     "arch",
                                           "kernel",        "os_image", "container_runtime",
                                           "instance_type", "zone"};
        fputs("<tr>", out);
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            fputs("<td>", out);
            html_esc(str(n, keys[k]), out);
            fputs("</td>", out);
        }
        if (json_is_integer(json_object_get(n, "mtu")))
            fprintf(out, "<td>%lld</td></tr>\n",
                    (long long)json_integer_value(json_object_get(n, "mtu")));
        else
            fputs("<td>-</td></tr>\n", out);
    }
    fputs("</table>\n</details>\n", out);
}

/* rowkey_label: the family is named when it is not IPv4 (base/rowkey.h) */
static void row_label(const json_t *row, FILE *out)
{
    char label[256];
    struct rowkey k;

    rowkey_of(row, &k);
    html_esc(rowkey_label(&k, label, sizeof(label)), out);
}

struct series {
    const char *name;  /* legend and tooltip */
    const char *field; /* in the aggregate */
    const char *sub;
    const char *color;
};

static const struct series lat_series[] = {
    {"p50", "latency_us", "p50", "#4e79a7"},
    {"p90", "latency_us", "p90", "#f28e2b"},
    {"p99", "latency_us", "p99", "#e15759"},
};
static const struct series tput_series[] = {
    {"Mb/s", "throughput_mbps", NULL, "#59a14f"},
};

static bool in_chart(const json_t *row, const char *scenario, const char *kind)
{
    return json_object_get(row, "aggregate") && strcmp(str(row, "scenario"), scenario) == 0 &&
           strcmp(str(row, "kind"), kind) == 0;
}

/* The throughput row's 95% interval, when it has one. */
static bool tput_ci(const json_t *row, double *lo, double *hi)
{
    const json_t *ci =
        json_object_get(json_object_get(json_object_get(row, "stats"), "throughput_mbps"), "ci95");

    if (!json_is_array(ci))
        return false;
    *lo = json_number_value(json_array_get(ci, 0));
    *hi = json_number_value(json_array_get(ci, 1));
    return true;
}

/* Bar length in px: linear from 0, or logarithmic from lo when the values span more than a
 * factor of 20 (latency tails), so that p50 bars stay visible next to p99. */
static double scale(double v, double lo, double hi, bool log_scale)
{
    if (v <= 0 || hi <= 0)
        return 0;
    if (!log_scale)
        return v / hi * BAR_W;
    if (v <= lo)
        return 2;
    return 2 + (BAR_W - 2) * log(v / lo) / log(hi / lo);
}

/* Horizontal bar chart of the rows of one scenario and kind: one bar per series, with the 95%
 * interval as a line for throughput. Prints nothing when there is no such row. `idx` holds the
 * indices of the scenario's rows, in report order (charts() walks the rows once, not once per
 * scenario: a loaded row is parsed when read, report_lazy.h). */
static void chart(const struct report *rep, const json_t *idx, const char *scenario,
                  const char *kind, FILE *out)
{
    bool lat = strcmp(kind, "latency") == 0, log_scale;
    const struct series *ser = lat ? lat_series : tput_series;
    size_t nser = lat ? 3 : 1, rows = 0, y = 5;
    double lo = 0, hi = 0, v, clo, chi;
    const json_t *row;

    for (size_t j = 0; j < json_array_size(idx); j++) {
        row = report_row(rep, (size_t)json_integer_value(json_array_get(idx, j)));
        if (!row || !in_chart(row, scenario, kind))
            continue;
        rows++;
        for (size_t k = 0; k < nser; k++) {
            if (!report_get_number(json_object_get(row, "aggregate"), ser[k].field, ser[k].sub,
                                   &v) ||
                v <= 0)
                continue;
            lo = lo == 0 || v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        if (!lat && tput_ci(row, &clo, &chi) && chi > hi)
            hi = chi;
    }
    if (rows == 0 || hi <= 0)
        return;
    log_scale = lat && hi / lo > 20;
    lo /= 2;
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
            "role=\"img\" class=\"chart\">\n",
            LABEL_W + BAR_W + 90, rows * (nser * 14 + 10) + 30);
    for (size_t j = 0; j < json_array_size(idx); j++) {
        row = report_row(rep, (size_t)json_integer_value(json_array_get(idx, j)));
        if (!row || !in_chart(row, scenario, kind))
            continue;
        fprintf(out, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">", LABEL_W - 8,
                y + nser * 7 + 4);
        row_label(row, out);
        fputs("</text>\n", out);
        bool has_ci = !lat && tput_ci(row, &clo, &chi);
        for (size_t k = 0; k < nser; k++) {
            if (!report_get_number(json_object_get(row, "aggregate"), ser[k].field, ser[k].sub, &v))
                continue;
            double w = scale(v, lo, hi, log_scale), text_x = w;
            if (has_ci && scale(chi, lo, hi, false) > text_x)
                text_x = scale(chi, lo, hi, false); /* value right of the interval line */
            fprintf(out,
                    "<rect x=\"%d\" y=\"%zu\" width=\"%.1f\" height=\"12\" fill=\"%s\">"
                    "<title>%s %.2f</title></rect><text x=\"%.1f\" y=\"%zu\" class=\"v\">%.1f"
                    "</text>\n",
                    LABEL_W, y + k * 14, w, ser[k].color, ser[k].name, v, LABEL_W + text_x + 4,
                    y + k * 14 + 10, v);
        }
        if (has_ci)
            fprintf(out,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%zu\" y2=\"%zu\" stroke=\"#222\" "
                    "stroke-width=\"1.5\"><title>95%% CI %.1f - %.1f</title></line>\n",
                    LABEL_W + scale(clo, lo, hi, false), LABEL_W + scale(chi, lo, hi, false), y + 6,
                    y + 6, clo, chi);
        y += nser * 14 + 10;
    }
    fprintf(out, "<text x=\"%d\" y=\"%zu\">", LABEL_W, y + 12);
    for (size_t k = 0; lat && k < nser; k++)
        fprintf(out, "<tspan fill=\"%s\">&#9632; %s</tspan> ", ser[k].color, ser[k].name);
    fputs(lat ? (log_scale ? "microseconds, merged histograms, log scale"
                           : "microseconds, merged histograms")
              : "Mb/s, median of samples; line: 95% CI of the mean",
          out);
    fputs("</text>\n</svg>\n", out);
}

/* One section per scenario, in report order, with its latency and throughput charts. */
static void charts(const struct report *rep, FILE *out)
{
    json_t *order = json_array(), *rows_of = json_object(); /* scenarios; scenario -> [index] */
    size_t i;
    json_t *sc;

    for (i = 0; i < report_row_count(rep); i++) {
        const char *name = str(report_row(rep, i), "scenario");
        json_t *idx = json_object_get(rows_of, name);
        if (!idx) {
            idx = json_array();
            json_object_set_new(rows_of, name, idx);
            json_array_append_new(order, json_string(name));
        }
        json_array_append_new(idx, json_integer((json_int_t)i));
    }
    json_array_foreach(order, i, sc)
    {
        const json_t *idx = json_object_get(rows_of, json_string_value(sc));
        fputs("<h2>", out);
        html_esc(json_string_value(sc), out);
        fputs("</h2>\n", out);
        chart(rep, idx, json_string_value(sc), "latency", out);
        chart(rep, idx, json_string_value(sc), "throughput", out);
    }
    json_decref(order);
    json_decref(rows_of);
}

/* Latency distribution of one row: the CDF of its merged histogram (aggregate.histogram, all
 * samples), read at fixed percentiles, x on a log scale from min to max. */
static void cdf(const json_t *row, FILE *out)
{
    static const double ps[] = {0,  1,  2,  5,  10, 20, 30, 40,   50,   60,    70,
                                80, 85, 90, 95, 97, 98, 99, 99.5, 99.9, 99.99, 100};
    enum { NP = sizeof(ps) / sizeof(ps[0]) };
    json_t *hj = report_unpacked(json_object_get(row, "aggregate"), "histogram"); /* ours */
    struct kp_err err = {{0}};
    struct hist *h = hj ? hist_from_json(hj, &err) : NULL;
    double x[NP], y[NP];
    char title[320], label[256], lo[32], hi[32];
    struct rowkey k;

    json_decref(hj);
    if (!h || hist_count(h) == 0) {
        hist_free(h);
        return;
    }
    for (size_t i = 0; i < NP; i++) {
        x[i] = (double)hist_percentile(h, ps[i]) / 1e3;
        y[i] = ps[i];
    }
    snprintf(lo, sizeof(lo), "%.1f us", x[0]);
    snprintf(hi, sizeof(hi), "%.1f us", x[NP - 1]);
    rowkey_of(row, &k);
    snprintf(title, sizeof(title), "%s: latency CDF, %llu transactions",
             rowkey_label(&k, label, sizeof(label)), (unsigned long long)hist_count(h));
    fputs("<figure class=\"dist\"><figcaption>", out);
    row_label(row, out);
    fprintf(out, " <small>(%llu transactions)</small></figcaption>\n",
            (unsigned long long)hist_count(h));
    html_chart_line(&(struct html_line){.x = x,
                                        .y = y,
                                        .n = NP,
                                        .log_x = x[0] > 0,
                                        .width = 360,
                                        .height = 150,
                                        .css = "cdf",
                                        .title = title,
                                        .x_lo = lo,
                                        .x_hi = hi,
                                        .y_unit = "%"},
                    out);
    fputs("</figure>\n", out);
    hist_free(h);
}

/* One CDF per measured latency row (TCP_RR, UDP_RR, TCP_CRR), in report order. */
static void distributions(const struct report *rep, FILE *out)
{
    bool any = false;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        const json_t *row = report_row(rep, i);
        if (strcmp(str(row, "kind"), "latency") != 0 ||
            !json_object_get(json_object_get(row, "aggregate"), "histogram"))
            continue;
        if (!any)
            fputs("<h2>Latency distribution</h2>\n<p>Share of transactions (y) completed within a "
                  "latency (x, log scale), from the merged histogram of all samples.</p>\n"
                  "<div class=\"cdfs\">\n",
                  out);
        any = true;
        cdf(row, out);
    }
    if (any)
        fputs("</div>\n", out);
}

/* The verdict in one line, before anything else: how many rows were measured, failed or
 * skipped, how many a drop, shaping or overflow counter marks (evidence.h), and a sweep's
 * outlier nodes. Class "bad" when a row failed or one is marked. */
static void verdict(const struct report *rep, FILE *out)
{
    size_t measured = 0, failed = json_array_size(report_errors(rep)), marked = 0;
    size_t skipped = json_array_size(report_skipped(rep));
    const json_t *outliers =
        json_object_get(json_object_get(report_metadata_const(rep), "sweep"), "outliers");

    for (size_t i = 0; i < report_row_count(rep); i++) {
        struct report_row_info ri;
        report_row_info(rep, i, &ri);
        measured += ri.n_samples > 0;
        failed += strcmp(ri.status, "failed") == 0;
        skipped += strcmp(ri.status, "skipped") == 0;
        if (ri.n_samples > 0)
            marked += json_array_size(json_object_get(
                          json_object_get(report_row(rep, i), "evidence"), "moved")) > 0;
    }
    fprintf(out,
            "<p id=\"verdict\" class=\"%s\" data-measured=\"%zu\" data-failed=\"%zu\" "
            "data-marked=\"%zu\">%zu row%s measured, %zu failed, %zu skipped",
            failed || marked ? "bad" : "ok", measured, failed, marked, measured,
            measured == 1 ? "" : "s", failed, skipped);
    if (marked)
        fprintf(out, ", %zu marked by drop, shaping or overflow counters (Evidence below)", marked);
    if (json_is_array(outliers))
        fprintf(out, "; sweep: %zu outlier node%s", json_array_size(outliers),
                json_array_size(outliers) == 1 ? "" : "s");
    fputs(".</p>\n", out);
}

/* The Markdown tables carry the numbers; the page embeds the same text in <pre> blocks so
 * that one renderer owns the layout of the tables. */
static void tables(const struct report *rep, FILE *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);

    if (!mem)
        return;
    render_text_table(rep, mem);
    fclose(mem);
    fputs("<h2 id=\"summary\">Summary</h2>\n<pre>", out);
    html_esc(buf, out);
    fputs("</pre>\n", out);
    free(buf);
}

void render_html(const struct report *rep, FILE *out)
{
    const json_t *md = report_metadata_const(rep);

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kperf "
          "report",
          out);
    if (json_string_value(json_object_get(md, "start_time"))) {
        fputs(" ", out);
        html_esc(str(md, "start_time"), out);
    }
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1100px}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;"
          "padding:2px 8px;text-align:left;font-size:90%}pre{background:#f6f6f6;padding:1em;"
          "overflow-x:auto}svg text{font:12px sans-serif}svg text.v{fill:#333}"
          "table.kv{margin:0}table.kv th{font-weight:normal;color:#555}"
          ".cdfs{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}"
          "figcaption{font-size:90%}dl.card{display:grid;grid-template-columns:max-content auto;"
          "gap:2px 1em;font-size:90%}dl.card dt{color:#555}dl.card dd{margin:0}"
          "details summary{cursor:pointer;margin:1em 0}#verdict{font-weight:bold}"
          "#verdict.ok{color:#060}#verdict.bad{color:#900}"
          "</style></head><body>\n<h1>kperf network performance report</h1>\n",
          out);
    /* the results first (issue 30 part 7): the summary, its charts and the verdicts, then
     * where it ran, then everything else folded away */
    verdict(rep, out);
    tables(rep, out);
    charts(rep, out);
    outlier_html(md, out);
    readiness_chart(md, out);
    distributions(rep, out);
    evidence_html(rep, out);
    pathmtu_html(rep, out);
    run_card(md, out);
    print_metadata(rep, out);
    fputs("<p>Schema kperf.report/v1. Latency percentiles come from merged histograms of all "
          "samples; scalar metrics are the median of samples.</p>\n</body></html>\n",
          out);
}
