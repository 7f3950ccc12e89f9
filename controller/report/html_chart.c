/* SPDX-License-Identifier: Apache-2.0 */
/* html_chart.c - the small SVG line chart (html_chart.h). */
#include "controller/report/html_chart.h"

#include <math.h>

#include "controller/report/html_util.h"

#define PAD_L 46 /* px left of the plot: y-axis numbers */
#define PAD_R 8
#define PAD_T 6
#define PAD_B 16 /* px under the plot: x-axis labels */

struct frame {
    double x0, x1, y0, y1; /* data range */
    double w, h;           /* plot size in px */
    bool log_x;
};

static double px(const struct frame *f, double x)
{
    double t;

    if (f->log_x)
        t = f->x1 > f->x0 ? log(x / f->x0) / log(f->x1 / f->x0) : 0.5;
    else
        t = f->x1 > f->x0 ? (x - f->x0) / (f->x1 - f->x0) : 0.5;
    return PAD_L + t * f->w;
}

static double py(const struct frame *f, double y)
{
    double t = f->y1 > f->y0 ? (y - f->y0) / (f->y1 - f->y0) : 0.5;
    return PAD_T + (1 - t) * f->h;
}

static bool usable(const struct html_line *c, size_t i)
{
    return isfinite(c->y[i]) && isfinite(c->x[i]) && (!c->log_x || c->x[i] > 0);
}

/* The data range; false when no point is usable. */
static bool range(const struct html_line *c, struct frame *f)
{
    bool any = false;

    for (size_t i = 0; i < c->n; i++) {
        if (!usable(c, i))
            continue;
        if (!any) {
            f->x0 = f->x1 = c->x[i];
            f->y0 = f->y1 = c->y[i];
            any = true;
        }
        f->x0 = fmin(f->x0, c->x[i]);
        f->x1 = fmax(f->x1, c->x[i]);
        f->y0 = fmin(f->y0, c->y[i]);
        f->y1 = fmax(f->y1, c->y[i]);
    }
    if (any && f->y1 == f->y0) { /* a flat line sits in the middle, not on the frame */
        double d = f->y0 != 0 ? fabs(f->y0) * 0.05 : 1;
        f->y0 -= d;
        f->y1 += d;
    }
    return any;
}

/* A y-axis number in at most ~7 characters: 12345, 98.5, 0.0123. */
static void num(double v, FILE *out)
{
    if (fabs(v) >= 1000)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.3g", v);
}

static void axis_label(const char *text, double v, double x, double y, const char *anchor,
                       FILE *out)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    if (text)
        html_esc(text, out);
    else
        num(v, out);
    fputs("</text>", out);
}

static void line_path(const struct html_line *c, const struct frame *f, FILE *out)
{
    bool pen = false;

    fputs("<path class=\"line\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\" d=\"", out);
    for (size_t i = 0; i < c->n; i++) {
        if (!usable(c, i)) {
            pen = false;
            continue;
        }
        fprintf(out, "%s%.1f %.1f ", pen ? "L" : "M", px(f, c->x[i]), py(f, c->y[i]));
        pen = true;
    }
    fputs("\"/>\n", out);
}

void html_chart_line(const struct html_line *c, FILE *out)
{
    struct frame f = {
        .w = c->width - PAD_L - PAD_R, .h = c->height - PAD_T - PAD_B, .log_x = c->log_x};
    bool any = range(c, &f);

    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"%s\" width=\"%d\" height=\"%d\" "
            "role=\"img\"><title>",
            c->css, c->width, c->height);
    html_esc(c->title, out);
    fprintf(out,
            "</title><rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"#fafafa\" stroke=\"#ccc\"/>\n",
            PAD_L, PAD_T, f.w, f.h);
    if (!any) {
        fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no data</text></svg>\n",
                PAD_L + f.w / 2, PAD_T + f.h / 2);
        return;
    }
    line_path(c, &f, out);
    for (size_t i = 0; c->marked && i < c->n; i++) {
        if (!c->marked[i] || !usable(c, i))
            continue;
        fprintf(out,
                "<circle class=\"mark\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#cc3333\">"
                "<title>%.4g</title></circle>\n",
                px(&f, c->x[i]), py(&f, c->y[i]), c->y[i]);
    }
    fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", PAD_L - 3, PAD_T + 9.0);
    num(f.y1, out);
    html_esc(c->y_unit, out);
    fprintf(out, "</text><text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", PAD_L - 3, PAD_T + f.h);
    num(f.y0, out);
    html_esc(c->y_unit, out);
    fputs("</text>", out);
    axis_label(c->x_lo, f.x0, PAD_L, c->height - 3, "start", out);
    axis_label(c->x_hi, f.x1, PAD_L + f.w, c->height - 3, "end", out);
    fputs("</svg>\n", out);
}
