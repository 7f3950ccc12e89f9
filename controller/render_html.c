/* SPDX-License-Identifier: Apache-2.0 */
/* render_html.c - one self-contained HTML page with inline SVG bar charts. Every string that
 * comes from the report is escaped; the page loads nothing from anywhere. */
#include "controller/render_html.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "controller/render_text.h"
#include "controller/report.h"
#include "controller/report_aggregate.h"

#define BAR_W   520 /* px of the longest bar */
#define LABEL_W 330 /* px for row labels */

static void esc(const char *s, FILE *out)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void meta_row(const char *name, const json_t *v, FILE *out)
{
    char *dump;

    if (!v)
        return;
    fputs("<tr><th>", out);
    esc(name, out);
    fputs("</th><td>", out);
    if (json_is_string(v)) {
        esc(json_string_value(v), out);
    } else {
        dump = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY); /* ours */
        esc(dump, out);
        free(dump);
    }
    fputs("</td></tr>\n", out);
}

static void print_metadata(const struct report *rep, FILE *out)
{
    const json_t *md = report_metadata_const(rep), *v;
    const char *key;

    fputs("<h2>Run</h2>\n<table class=\"meta\">\n", out);
    json_object_foreach((json_t *)md, key, v)
    {
        if (strcmp(key, "nodes") != 0)
            meta_row(key, v, out);
    }
    fputs("</table>\n", out);
    v = json_object_get(md, "nodes");
    if (json_array_size(v) == 0)
        return;
    fputs("<h3>Nodes</h3>\n<table><tr><th>name</th><th>role</th><th>kernel</th><th>OS</th>"
          "<th>runtime</th><th>instance</th><th>zone</th><th>MTU</th></tr>\n",
          out);
    size_t i;
    const json_t *n;
    json_array_foreach(v, i, n)
    {
        static const char *const keys[] = {
            "name", "role", "kernel", "os_image", "container_runtime", "instance_type", "zone"};
        fputs("<tr>", out);
        for (size_t k = 0; k < 7; k++) {
            fputs("<td>", out);
            esc(str(n, keys[k]), out);
            fputs("</td>", out);
        }
        fprintf(out, "<td>%lld</td></tr>\n",
                (long long)json_integer_value(json_object_get(n, "mtu")));
    }
    fputs("</table>\n", out);
}

static void row_label(const json_t *row, FILE *out)
{
    char label[96];

    esc(str(row, "scenario"), out);
    fputc(' ', out);
    esc(str(row, "placement"), out);
    fputc(' ', out);
    esc(render_test_label(row, label, sizeof(label)), out);
}

/* Horizontal bar chart: for each measured row of `kind`, one bar per (field, sub) series,
 * scaled to the largest value. Latency: p50/p90/p99; throughput: Mb/s with its 95% CI. */
static void chart(const struct report *rep, const char *kind, FILE *out)
{
    static const char *const lat_subs[] = {"p50", "p90", "p99"};
    static const char *const colors[] = {"#4e79a7", "#f28e2b", "#e15759"};
    bool lat = strcmp(kind, "latency") == 0;
    size_t series = lat ? 3 : 1, rows = 0;
    double maxv = 0, v;
    const json_t *row, *agg;

    for (size_t i = 0; i < report_row_count(rep); i++) {
        row = report_row(rep, i);
        agg = json_object_get(row, "aggregate");
        if (!agg || strcmp(str(row, "kind"), kind) != 0)
            continue;
        rows++;
        for (size_t s = 0; s < series; s++)
            if (report_get_number(agg, lat ? "latency_us" : "throughput_mbps",
                                  lat ? lat_subs[s] : NULL, &v) &&
                v > maxv)
                maxv = v;
        if (!lat &&
            json_is_array(json_object_get(
                json_object_get(json_object_get(row, "stats"), "throughput_mbps"), "ci95"))) {
            v = json_number_value(json_array_get(
                json_object_get(json_object_get(json_object_get(row, "stats"), "throughput_mbps"),
                                "ci95"),
                1));
            if (v > maxv)
                maxv = v;
        }
    }
    if (rows == 0 || maxv <= 0)
        return;
    size_t band = series * 14 + 10, h = rows * band + 30, y = 5;
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%zu\" "
            "role=\"img\" class=\"chart\">\n",
            LABEL_W + BAR_W + 90, h);
    for (size_t i = 0; i < report_row_count(rep); i++) {
        row = report_row(rep, i);
        agg = json_object_get(row, "aggregate");
        if (!agg || strcmp(str(row, "kind"), kind) != 0)
            continue;
        fprintf(out, "<text x=\"%d\" y=\"%zu\" text-anchor=\"end\">", LABEL_W - 8,
                y + series * 7 + 4);
        row_label(row, out);
        fputs("</text>\n", out);
        for (size_t s = 0; s < series; s++) {
            if (!report_get_number(agg, lat ? "latency_us" : "throughput_mbps",
                                   lat ? lat_subs[s] : NULL, &v))
                continue;
            double w = v / maxv * BAR_W;
            fprintf(out,
                    "<rect x=\"%d\" y=\"%zu\" width=\"%.1f\" height=\"12\" fill=\"%s\">"
                    "<title>%s %.2f</title></rect>"
                    "<text x=\"%.1f\" y=\"%zu\" class=\"v\">%.1f</text>\n",
                    LABEL_W, y + s * 14, w, colors[s], lat ? lat_subs[s] : "Mb/s", v,
                    LABEL_W + w + 4, y + s * 14 + 10, v);
        }
        const json_t *ci = json_object_get(
            json_object_get(json_object_get(row, "stats"), "throughput_mbps"), "ci95");
        if (!lat && json_is_array(ci)) {
            double lo = json_number_value(json_array_get(ci, 0)) / maxv * BAR_W;
            double hi = json_number_value(json_array_get(ci, 1)) / maxv * BAR_W;
            fprintf(out,
                    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%zu\" y2=\"%zu\" stroke=\"#222\" "
                    "stroke-width=\"2\"><title>95%% CI</title></line>\n",
                    LABEL_W + (lo < 0 ? 0 : lo), LABEL_W + hi, y + 6, y + 6);
        }
        y += band;
    }
    if (lat)
        fprintf(out,
                "<text x=\"%d\" y=\"%zu\"><tspan fill=\"%s\">&#9632; p50</tspan> "
                "<tspan fill=\"%s\">&#9632; p90</tspan> <tspan fill=\"%s\">&#9632; p99</tspan>"
                " (microseconds, merged histograms)</text>\n",
                LABEL_W, y + 12, colors[0], colors[1], colors[2]);
    else
        fprintf(out, "<text x=\"%d\" y=\"%zu\">Mb/s (median of samples; line: 95%% CI)</text>\n",
                LABEL_W, y + 12);
    fputs("</svg>\n", out);
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
    fputs("<h2>Summary</h2>\n<pre>", out);
    esc(buf, out);
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
        esc(str(md, "start_time"), out);
    }
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1100px}"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;"
          "padding:2px 8px;text-align:left;font-size:90%}pre{background:#f6f6f6;padding:1em;"
          "overflow-x:auto}svg text{font:12px sans-serif}svg text.v{fill:#333}"
          "</style></head><body>\n<h1>kperf network performance report</h1>\n",
          out);
    print_metadata(rep, out);
    fputs("<h2>Latency percentiles</h2>\n", out);
    chart(rep, "latency", out);
    fputs("<h2>Throughput</h2>\n", out);
    chart(rep, "throughput", out);
    tables(rep, out);
    fputs("<p>Schema kperf.report/v1. Latency percentiles come from merged histograms of all "
          "samples; scalar metrics are the median of samples.</p>\n</body></html>\n",
          out);
}
