/* SPDX-License-Identifier: Apache-2.0 */
/* html_chart.h - one small inline-SVG line chart (no scripts, no fonts), shared by the run
 * page's latency CDFs and the history trend page. Owns the scaling and the SVG markup; what
 * the points mean belongs to the caller. The line is one <path class="line">, so a test can
 * count charts; marked points are <circle class="mark"> with a <title>. */
#ifndef KPERF_REPORT_HTML_CHART_H
#define KPERF_REPORT_HTML_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct html_line {
    const double *x, *y; /* n points (borrowed); a NAN y leaves a gap in the line */
    size_t n;
    const bool *marked;      /* NULL, or n flags: points drawn as a red mark */
    bool log_x;              /* logarithmic x axis (x > 0) */
    int width, height;       /* px of the whole chart */
    const char *css;         /* class of the <svg> ("cdf", "trend") */
    const char *title;       /* <title> of the chart (escaped) */
    const char *x_lo, *x_hi; /* labels under the ends of the x axis (escaped; NULL: numbers) */
    const char *y_unit;      /* after the y-axis numbers ("%", " us"; escaped) */
};

/* Writes the chart; with no point having a finite y, writes an empty frame with "no data". */
void html_chart_line(const struct html_line *c, FILE *out);

#endif
