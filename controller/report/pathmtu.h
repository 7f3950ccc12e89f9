/* SPDX-License-Identifier: Apache-2.0 */
/* pathmtu.h - a row's path MTU: the samples' "mtu" (the agent's path-MTU probe, docs/report.md
 * "Path MTU") folded into the row's "path_mtu", and the table's mark of a black hole. Owns the
 * order of the verdicts; knows nothing of how the probe ran. */
#ifndef KPERF_REPORT_PATHMTU_H
#define KPERF_REPORT_PATHMTU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* {"verdict", "path", "client", "server", "icmp", "tcp_full_mss"} of the row's samples: the
 * worst verdict (black-hole, reduced, ok, unknown in that order) with the figures of the
 * sample that gave it; NULL when no sample carries a verdict. New reference. */
json_t *pathmtu_of_row(const json_t *row);

/* The row's path_mtu says black hole. */
bool pathmtu_black_hole(const json_t *row);

/* The table's marker: for a black-hole row, "!pmtu-black-hole" appended to the used bytes of
 * buf (len bytes; after a blank when used > 0). Returns the new length (used when none). */
size_t pathmtu_marker(const json_t *row, char *buf, size_t used, size_t len);

/* "path MTU 1392 < 1500, no ICMP: black hole" (or "... 1500: ok") of the row into buf (len
 * bytes); "" when the row has no path_mtu. Returns buf. */
const char *pathmtu_text(const json_t *row, char *buf, size_t len);

/* The verdict names a row may carry ("ok", "reduced", "black-hole", "unknown"): true if v is one.
 */
bool pathmtu_verdict_known(const char *v);

/* Which reports of a compared row had a black hole on its path: ["base"], ["new"], both or []
 * (base_row may be NULL). New reference. */
json_t *pathmtu_compare(const json_t *base_row, const json_t *new_row);

struct report;
/* When a row is a black hole: a blank line, the legend line, and one line per such row with
 * pathmtu_text ("  pod-to-pod other-node TCP_STREAM: path MTU 1392 < 1500, no ICMP: black
 * hole"), bullet before each (markdown: "- "). Nothing when no row is. */
void pathmtu_print(const struct report *rep, const char *bullet, FILE *out);

/* The HTML report's "Path MTU" section: one line per row with a path_mtu, black holes first
 * and bold. Nothing when no row has one. */
void pathmtu_html(const struct report *rep, FILE *out);

#endif
