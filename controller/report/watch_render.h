/* SPDX-License-Identifier: Apache-2.0 */
/* watch_render.h - the kperf.watch/v1 document of `kperf watch` (docs/watch.md) as text:
 * a table, Markdown or HTML with a timeline (one row per path and probe kind, then every outage
 * with its time from the start of the watch), and its verdict (the longest outage). Reads the
 * document only; knows nothing of probes, backends or processes. */
#ifndef KPERF_REPORT_WATCH_RENDER_H
#define KPERF_REPORT_WATCH_RENDER_H

#include <stdio.h>

#include <jansson.h>

#define WATCH_SCHEMA "kperf.watch/v1"

enum watch_format {
    WATCH_TABLE = 0,
    WATCH_MARKDOWN,
    WATCH_JSON,
    WATCH_HTML,
};

/* The longest outage of any probe kind on any path, in seconds (0 when none). */
double watch_longest_outage(const json_t *doc);

/* When outage o (an element of a probe's outages[]) of path p began, in seconds from the
 * watch's start (the probe started a little after the watch: its start_unix_s says when). */
double watch_outage_at(const json_t *doc, const json_t *path, const json_t *o);

/* Writes doc to f in fmt. */
void watch_render(const json_t *doc, enum watch_format fmt, FILE *f);

/* watch_html.c: one self-contained page (no scripts, nothing fetched): a timeline with one lane
 * per path, a bar per probe kind, outages marked, the command's run shaded; then the table. */
void watch_render_html(const json_t *doc, FILE *f);

#endif
