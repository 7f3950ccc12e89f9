/* SPDX-License-Identifier: Apache-2.0 */
/* render_compare_html.c - the compare page (render_compare_html.h). Every string from the
 * documents is HTML-escaped; numbers never in exponent notation (html_util.h). The page reads
 * first: the verdict, the compared rows, then the provenance differences as a compact card and
 * the thresholds folded away at the end. The verdict of a metric is both a CSS class (colour)
 * and a data-verdict attribute (for tests and scrapers). */
#include "controller/report/render_compare_html.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/rowkey.h"
#include "controller/report/evidence.h"
#include "controller/report/html_util.h"
#include "controller/report/kprofile.h"
#include "controller/report/readiness.h"
#include "controller/report/report_lazy.h"
#include "controller/report/verdict.h"

#define BAR_W 160 /* px: the longer of the two bars */

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));

    return s ? s : "";
}

/* "regression" -> "regression", "within noise" -> "within-noise": a CSS class. */
static void verdict_class(const char *v, FILE *out)
{
    for (; *v; v++)
        fputc(*v == ' ' ? '-' : *v, out);
}

static void num(const json_t *v, FILE *out)
{
    char buf[352];

    if (json_is_number(v)) /* 48090, not 4.809e+04; 0.0001234, not 1.234e-04 */
        fputs(html_number_sig(json_number_value(v), 4, buf, sizeof(buf)), out);
    else
        fputs("-", out);
}

/* rowkey_label: the family is named when it is not IPv4 (base/rowkey.h) */
static void row_label(const json_t *row, FILE *out)
{
    char label[256];
    struct rowkey k;

    rowkey_of(row, &k);
    html_esc(rowkey_label(&k, label, sizeof(label)), out);
}

/* Two horizontal bars, base (grey) above new (coloured by verdict), scaled to the larger. */
static void bars(const json_t *m, FILE *out)
{
    double b = json_number_value(json_object_get(m, "base"));
    double n = json_number_value(json_object_get(m, "new"));
    double top = fmax(fabs(b), fabs(n));
    int wb = top > 0 ? (int)lround(BAR_W * fabs(b) / top) : 0;
    int wn = top > 0 ? (int)lround(BAR_W * fabs(n) / top) : 0;

    fprintf(
        out,
        "<svg class=\"bars\" width=\"%d\" height=\"22\" role=\"img\" aria-label=\"base vs new\">"
        "<rect class=\"bar-base\" x=\"0\" y=\"1\" width=\"%d\" height=\"9\"/>"
        "<rect class=\"bar-new\" x=\"0\" y=\"12\" width=\"%d\" height=\"9\"/></svg>",
        BAR_W, wb, wn);
}

static void metric_row(const json_t *m, FILE *out)
{
    const char *v = str(m, "verdict");

    fputs("<tr class=\"metric ", out);
    verdict_class(v, out);
    fputs("\" data-metric=\"", out);
    html_esc(str(m, "metric"), out);
    fputs("\" data-verdict=\"", out);
    html_esc(v, out);
    fputs("\"><td>", out);
    html_esc(str(m, "metric"), out);
    fputs(" <small>(", out);
    html_esc(str(m, "better"), out);
    fputs(" is better)</small></td><td class=\"num base\">", out);
    num(json_object_get(m, "base"), out);
    fputs("</td><td class=\"num new\">", out);
    num(json_object_get(m, "new"), out);
    fputs("</td><td class=\"num delta\">", out);
    if (json_is_number(json_object_get(m, "delta_pct")))
        fprintf(out, "%+.1f%%", json_number_value(json_object_get(m, "delta_pct")));
    else
        fputs("-", out);
    fputs("</td><td>", out);
    bars(m, out);
    fputs("</td><td class=\"verdict\">", out);
    html_esc(v, out);
    fputs("</td></tr>\n", out);
}

/* A list of rows (only_in_base, only_in_new, failed_in_new) under a heading; nothing when
 * empty. */
static void row_list(const json_t *doc, const char *key, const char *title, FILE *out)
{
    const json_t *a = json_object_get(doc, key), *row;
    size_t i;

    if (json_array_size(a) == 0)
        return;
    fprintf(out, "<h2>%s</h2>\n<ul id=\"%s\">\n", title, key);
    json_array_foreach(a, i, row)
    {
        fputs("<li>", out);
        if (json_is_string(row))
            html_esc(json_string_value(row), out);
        else
            row_label(row, out);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
}

/* The provenance differences (provenance.h, ranked: settings first) as a compact card; one
 * line when both runs ran on the same nodes, kernel, CNI and versions. */
static void provenance_card(const json_t *doc, FILE *out)
{
    const json_t *diff = json_object_get(doc, "provenance"), *d;
    size_t i;

    fputs("<h2 id=\"provenance\">Provenance</h2>\n", out);
    if (json_array_size(diff) == 0) {
        fputs("<p>Same provenance (nodes, kernel, MTU, CNI, versions).</p>\n", out);
        return;
    }
    fputs("<p>Changed between the runs (a changed setting, kernel or version explains many "
          "regressions):</p>\n<dl class=\"card\">",
          out);
    json_array_foreach(diff, i, d)
    {
        const char *b = json_string_value(json_object_get(d, "base"));
        const char *n = json_string_value(json_object_get(d, "new"));
        fputs("<dt>", out);
        html_esc(str(d, "field"), out);
        fputs("</dt><dd class=\"", out);
        html_esc(str(d, "kind"), out);
        fputs("\">", out);
        html_esc(b ? b : "(absent)", out);
        fputs(" &rarr; ", out);
        html_esc(n ? n : "(absent)", out);
        fputs("</dd>", out);
    }
    fputs("</dl>\n", out);
}

/* Pod network readiness compared (readiness.h), as the text table; nothing when neither run
 * timed pods. */
static void readiness_section(const json_t *doc, FILE *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem;

    if (json_array_size(json_object_get(doc, "readiness")) == 0 ||
        !(mem = open_memstream(&buf, &len)))
        return;
    readiness_compare_print(json_object_get(doc, "readiness"), false, mem);
    fclose(mem);
    fputs("<h2 id=\"readiness\">Pod network readiness</h2>\n<pre>", out);
    html_esc(buf, out);
    fputs("</pre>\n", out);
    free(buf);
}

/* How the verdicts were reached, folded at the end: thresholds per group, alpha, and for a
 * history comparison the runs and the spread factor. */
static void settings(const json_t *doc, FILE *out)
{
    const json_t *v;
    const char *k;
    char buf[352];

    fputs("<details id=\"settings\"><summary>Thresholds and settings</summary>\n"
          "<table class=\"meta\">",
          out);
    json_object_foreach((json_t *)json_object_get(doc, "thresholds"), k, v)
    {
        fputs("<tr><th>threshold ", out);
        html_esc(k, out);
        fputs("</th><td>", out);
        html_esc(json_string_value(v), out);
        fputs("</td></tr>", out);
    }
    fprintf(out, "<tr><th>alpha</th><td>%s</td></tr>",
            html_number_sig(json_number_value(json_object_get(doc, "alpha")), 4, buf, sizeof(buf)));
    if (json_object_get(doc, "baseline_runs"))
        fprintf(out, "<tr><th>baseline runs</th><td>%lld</td></tr>",
                (long long)json_integer_value(json_object_get(doc, "baseline_runs")));
    if (json_object_get(doc, "history_z"))
        fprintf(out, "<tr><th>spreads between runs</th><td>%s</td></tr>",
                html_number_sig(json_number_value(json_object_get(doc, "history_z")), 4, buf,
                                sizeof(buf)));
    fprintf(out, "<tr><th>schema</th><td>");
    html_esc(str(doc, "schema"), out);
    fputs("</td></tr></table>\n</details>\n", out);
}

void render_compare_html(const json_t *doc, FILE *out)
{
    const json_t *sum = json_object_get(doc, "summary"), *m;
    json_int_t reg = json_integer_value(json_object_get(sum, "regressions"));
    json_int_t imp = json_integer_value(json_object_get(sum, "improvements"));
    int status = verdict_status(doc);
    char thr[352];
    size_t i, j;

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<title>kperf compare</title>\n<style>\n"
          "body{font-family:sans-serif;margin:1.5em;color:#222}"
          "table{border-collapse:collapse;margin-bottom:1.5em}"
          "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left}"
          "td.num{text-align:right;font-variant-numeric:tabular-nums}"
          "tr.regression td.verdict{background:#f8d0d0;color:#900;font-weight:bold}"
          "tr.improvement td.verdict{background:#d4f0d4;color:#060}"
          "tr.within-noise td.verdict{color:#777}"
          "tr.inconclusive td.verdict{background:#fbeecb;color:#850}"
          ".bar-base{fill:#aaa}tr.regression .bar-new{fill:#c33}"
          "tr.improvement .bar-new{fill:#3a3}tr.within-noise .bar-new{fill:#58c}"
          "#summary.fail{color:#900}#summary.ok{color:#060}"
          "dl.card{display:grid;grid-template-columns:max-content auto;gap:2px 1em;"
          "font-size:90%}dl.card dt{color:#555}dl.card dd{margin:0}dl.card dd.setting{color:#900}"
          "details summary{cursor:pointer;margin:1em 0}\n"
          "</style></head><body>\n<h1>kperf compare: base vs new</h1>\n",
          out);
    fprintf(out,
            "<p id=\"summary\" class=\"%s\" data-regressions=\"%lld\" data-improvements=\"%lld\" "
            "data-verdict=\"%s\"><b>%s</b>: %lld regression(s), %lld improvement(s)",
            status == VERDICT_EXIT_OK ? "ok" : "fail", (long long)reg, (long long)imp,
            verdict_status_word(status), verdict_status_word(status), (long long)reg,
            (long long)imp);
    if (json_integer_value(json_object_get(sum, "failed_in_new")))
        fprintf(out, ", %lld row(s) failed in the new run",
                (long long)json_integer_value(json_object_get(sum, "failed_in_new")));
    if (json_integer_value(json_object_get(sum, "readiness_regressions")))
        fprintf(out, ", %lld readiness regression(s)",
                (long long)json_integer_value(json_object_get(sum, "readiness_regressions")));
    fprintf(out,
            " in %zu compared row(s); threshold %s%%. Grey bar: base, coloured bar: new.</p>\n",
            json_array_size(json_object_get(doc, "rows")),
            html_number_sig(json_number_value(json_object_get(doc, "threshold_pct")), 4, thr,
                            sizeof(thr)));
    for (i = 0; i < json_array_size(json_object_get(doc, "rows")); i++) {
        /* a row is stored as its text (compare.c); expanded one at a time */
        json_t *row = report_lazy_expand(json_array_get(json_object_get(doc, "rows"), i));
        fputs("<h2 class=\"row ", out);
        verdict_class(str(row, "verdict"), out);
        fputs("\">", out);
        row_label(row, out);
        fputs(" &mdash; ", out);
        html_esc(str(row, "verdict"), out);
        if (json_object_get(row, "counters_moved")) { /* evidence.h: shaped or dropped */
            char text[1024];
            evidence_compare_text(json_object_get(row, "counters_moved"), text, sizeof(text));
            fputs(" !</h2>\n<p class=\"evidence\">Drop, shaping or overflow counters moved: ", out);
            html_esc(text, out);
            fputs("</p>", out);
        } else {
            fputs("</h2>", out);
        }
        fputs("\n<table class=\"row\"><thead><tr><th>metric</th><th>base</th><th>new</th>"
              "<th>change</th><th>base / new</th><th>verdict</th></tr></thead><tbody>\n",
              out);
        json_array_foreach(json_object_get(row, "metrics"), j, m) metric_row(m, out);
        fputs("</tbody></table>\n", out);
        kprofile_diff_html(json_object_get(row, "profile_diff"), out);
        json_decref(row);
    }
    row_list(doc, "failed_in_new", "Failed in the new run", out);
    row_list(doc, "only_in_base", "Only in the base report", out);
    row_list(doc, "only_in_new", "Only in the new report", out);
    readiness_section(doc, out);
    provenance_card(doc, out);
    settings(doc, out);
    fputs("</body></html>\n", out);
}
