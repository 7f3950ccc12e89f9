/* SPDX-License-Identifier: Apache-2.0 */
/* render_compare_html.h - `kperf compare -o html`: one self-contained page (no scripts, no
 * fetches) showing base and new side by side for every compared metric, the verdict in
 * colour and a pair of SVG bars per metric; rows only on one side, and rows that failed in
 * the new run, are listed. Reads the comparison as its kperf.compare/v1 document (compare.h
 * compare_to_json), so it depends on no internals of compare.c; a rows[] entry may also be
 * that row's compact text (how compare.c keeps them, report_lazy.h). Owns only layout. */
#ifndef KPERF_REPORT_RENDER_COMPARE_HTML_H
#define KPERF_REPORT_RENDER_COMPARE_HTML_H

#include <stdio.h>

#include <jansson.h>

/* Writes the page for doc (borrowed); write errors are left in out's error flag. */
void render_compare_html(const json_t *doc, FILE *out);

#endif
