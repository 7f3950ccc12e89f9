/* SPDX-License-Identifier: Apache-2.0 */
/* render_html.h - the report as one self-contained HTML page: metadata, the latency and
 * throughput tables, skipped rows and errors, and inline SVG charts (latency percentiles and
 * throughput per row, with 95% intervals when there are several samples). No scripts, no
 * network fetches, so it can be opened straight from a CI artifact. Owns only layout. */
#ifndef KPERF_REPORT_RENDER_HTML_H
#define KPERF_REPORT_RENDER_HTML_H

#include <stdio.h>

struct report;

/* Writes the page; write errors are left in out's error flag. */
void render_html(const struct report *rep, FILE *out);

#endif
