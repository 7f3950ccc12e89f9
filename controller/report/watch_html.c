/* SPDX-License-Identifier: Apache-2.0 */
/* watch_html.c - the kperf.watch/v1 document as one self-contained HTML page (watch_render.h):
 * the verdict (longest outage against the limit) and the text table first, then a timeline
 * with one lane per path (a thin bar per probe kind, outages marked red, the command's run
 * shaded). No scripts, nothing fetched; every string that
 * comes from the document is escaped. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "controller/report/html_util.h"
#include "controller/report/watch_readiness.h"
#include "controller/report/watch_render.h"

#define LABEL_W 230 /* px for lane labels */
#define PLOT_W  760 /* px of the time axis */
#define KIND_H  8   /* px per kind bar */
#define LANE_H  (3 * KIND_H + 14)
#define TOP     30
#define READY_H 18 /* px per readiness row (watch_readiness.h) */

static const char *const kinds[] = {"udp", "tcp", "connect"};
static const char *const kind_color[] = {"#4c78a8", "#72b7b2", "#9d755d"};

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

static double x_of(double t, double span)
{
    if (t < 0)
        t = 0;
    if (t > span)
        t = span;
    return LABEL_W + t / span * PLOT_W;
}

/* A tick every 1, 2, 5, 10... seconds, about ten over the axis. */
static double tick_step(double span)
{
    static const double steps[] = {0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        if (span / steps[i] <= 12)
            return steps[i];
    return 7200;
}

static void lane(const json_t *doc, const json_t *p, size_t i, double span, FILE *out)
{
    double y = TOP + (double)i * LANE_H;
    double offset = num(json_object_get(p, "probe"), "start_unix_s") - num(doc, "start_unix_s");
    const json_t *probes = json_object_get(json_object_get(p, "probe"), "probes");

    fprintf(out, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">", LABEL_W - 8,
            y + 1.5 * KIND_H + 4);
    html_esc(json_string_value(json_object_get(p, "path")), out);
    fputs("</text>\n", out);
    if (json_is_string(json_object_get(p, "error"))) {
        fprintf(out, "<text x=\"%d\" y=\"%.0f\" fill=\"#b00\">no probe document: ", LABEL_W,
                y + 1.5 * KIND_H + 4);
        html_esc(json_string_value(json_object_get(p, "error")), out);
        fputs("</text>\n", out);
        return;
    }
    for (size_t k = 0; k < 3; k++) {
        const json_t *kd = json_object_get(probes, kinds[k]), *o;
        double ky = y + (double)k * KIND_H, x0, x1;
        size_t j;
        if (!kd)
            continue;
        x0 = x_of(offset, span);
        x1 = x_of(offset + num(json_object_get(p, "probe"), "duration_s"), span);
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                "<title>%s: %lld sent, %lld lost</title></rect>\n",
                x0, ky, x1 - x0, KIND_H - 2, kind_color[k], kinds[k],
                (long long)json_integer_value(json_object_get(kd, "sent")),
                (long long)json_integer_value(json_object_get(kd, "lost")));
        json_array_foreach(json_object_get(kd, "outages"), j, o)
        {
            double a = offset + num(o, "start_s"), b = offset + num(o, "end_s");
            double w = x_of(b, span) - x_of(a, span);
            fprintf(out,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#d62728\">"
                    "<title>%s outage: %.3f s at +%.3f s (%lld lost)%s</title></rect>\n",
                    x_of(a, span), ky, w < 1.5 ? 1.5 : w, KIND_H - 2, kinds[k], num(o, "length_s"),
                    a, (long long)json_integer_value(json_object_get(o, "lost")),
                    json_is_true(json_object_get(o, "open")) ? ", still going at the end" : "");
        }
    }
}

static void timeline(const json_t *doc, FILE *out)
{
    const json_t *paths = json_object_get(doc, "paths"), *p;
    const json_t *cmd = json_object_get(doc, "command");
    double span = num(doc, "duration_s"), step;
    size_t n = json_array_size(paths), i;
    double ready_h = (double)watch_readiness_rows(doc) * READY_H;
    double h = TOP + (double)n * LANE_H + ready_h + 40;
    struct watch_readiness_axis ax = {LABEL_W, PLOT_W, span > 0 ? span : 1, LABEL_W - 8};

    if (span <= 0)
        span = 1;
    step = tick_step(span);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" role=\"img\" "
            "class=\"chart\">\n",
            LABEL_W + PLOT_W + 30, h);
    if (json_is_number(json_object_get(cmd, "end_s")))
        fprintf(out,
                "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.0f\" fill=\"#f3efe0\">"
                "<title>the command ran until +%.3f s</title></rect>\n",
                LABEL_W, TOP - 6, x_of(num(cmd, "end_s"), span) - LABEL_W, (double)n * LANE_H + 6,
                num(cmd, "end_s"));
    for (double t = 0; t <= span + 1e-9; t += step) {
        double x = x_of(t, span);
        char tick[352];
        fprintf(out,
                "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%.0f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s s</text>\n",
                x, x, TOP - 6, TOP + (double)n * LANE_H, x, TOP - 10,
                html_number_fmt(t, 1, tick, sizeof(tick))); /* 86400 s, never 8.64e+04 */
    }
    json_array_foreach(paths, i, p) lane(doc, p, i, span, out);
    watch_readiness_svg(doc, &ax, TOP + (double)n * LANE_H, READY_H, out);
    fprintf(out, "<text x=\"%d\" y=\"%.0f\">", LABEL_W, TOP + (double)n * LANE_H + ready_h + 20);
    for (size_t k = 0; k < 3; k++)
        fprintf(out, "<tspan fill=\"%s\">&#9632; %s</tspan> ", kind_color[k], kinds[k]);
    fputs("<tspan fill=\"#d62728\">&#9632; outage</tspan> "
          "<tspan fill=\"#c9bf94\">&#9632; command running</tspan> "
          "<tspan fill=\"#2ca02c\">&#9679; pod ready</tspan> "
          "seconds from the start of the watch</text>\n</svg>\n",
          out);
}

void watch_render_html(const json_t *doc, FILE *out)
{
    const json_t *argv = json_object_get(json_object_get(doc, "command"), "argv"), *a;
    char *buf = NULL;
    size_t len = 0, i;
    FILE *mem;
    double longest = watch_longest_outage(doc), limit = num(doc, "max_outage_s");

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>kperf watch ",
          out);
    html_esc(json_string_value(json_object_get(doc, "run_id")), out);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1100px}"
          "pre{background:#f6f6f6;padding:1em;overflow-x:auto}svg text{font:12px sans-serif}"
          ".bad{color:#b00}.ok{color:#070}</style></head><body>\n<h1>kperf watch</h1>\n<p>Run ",
          out);
    html_esc(json_string_value(json_object_get(doc, "run_id")), out);
    if (num(doc, "start_unix_s") > 0) {
        fputs(", started ", out);
        html_number_for_key("start_unix_s", num(doc, "start_unix_s"), out);
    }
    fprintf(out, ", %.1f s, %lld probes/s per path", num(doc, "duration_s"),
            (long long)json_integer_value(json_object_get(doc, "rate_per_s")));
    if (json_array_size(argv)) {
        fputs(", while running <code>", out);
        json_array_foreach(argv, i, a)
        {
            fputs(i ? " " : "", out);
            html_esc(json_string_value(a), out);
        }
        fputs("</code>", out);
    }
    fprintf(out, ".</p>\n<p class=\"%s\">Longest outage %.3f s (limit %.3f s): %s</p>\n",
            longest > limit ? "bad" : "ok", longest, limit, longest > limit ? "EXCEEDED" : "ok");
    mem = open_memstream(&buf, &len); /* the verdict and the summary lead, then the chart */
    if (mem) {
        watch_render(doc, WATCH_TABLE, mem);
        fclose(mem);
        fputs("<h2 id=\"summary\">Summary</h2>\n<pre>", out);
        html_esc(buf, out);
        fputs("</pre>\n", out);
        free(buf);
    }
    fputs("<h2>Timeline</h2>\n", out);
    timeline(doc, out);
    fputs("<p>Schema kperf.watch/v1 (docs/watch.md). An outage is a run of consecutive lost "
          "probes longer than the probe interval.</p>\n</body></html>\n",
          out);
}
