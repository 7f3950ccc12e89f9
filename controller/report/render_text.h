/* SPDX-License-Identifier: Apache-2.0 */
/* render_text.h - the text formats of a report: the cilium-style terminal summary (a latency
 * table and a throughput table, then skipped rows, errors and a summary line), Markdown and
 * CSV. Reads the report through report.h; owns only layout. Write errors are left in the
 * FILE's error flag for the caller to check. */
#ifndef KPERF_REPORT_RENDER_TEXT_H
#define KPERF_REPORT_RENDER_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

struct report;

void render_text_table(const struct report *rep, FILE *out);
void render_text_markdown(const struct report *rep, FILE *out);
void render_text_csv(const struct report *rep, FILE *out);

/* "TCP_STREAM" or "TCP_STREAM (reverse)" for a row; returns buf. */
const char *render_test_label(const json_t *row, char *buf, size_t len);

/* Formats a number for a table cell with `decimals` places, or "-" when absent; returns buf. */
const char *render_num(const json_t *obj, const char *field, const char *sub, int decimals,
                       char *buf, size_t len);

#endif
