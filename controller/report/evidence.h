/* SPDX-License-Identifier: Apache-2.0 */
/* evidence.h - a row's kernel and NIC counters (the samples' "counters", agent/counters.h)
 * summed per side into the row's "evidence", and which of them mark the row: the drop, shaping
 * and overflow counters (docs/report.md, "Evidence"). Owns that list; the renderers and
 * compare read the row's "evidence.moved". Knows nothing of how the counters were read. */
#ifndef KPERF_REPORT_EVIDENCE_H
#define KPERF_REPORT_EVIDENCE_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define EVIDENCE_VERSION 1

/* "shaping", "drop" or "overflow" for a counter that marks a row when it moves, else NULL:
 * qdisc overlimits and ENA *_allowance_exceeded (shaping); qdisc, NIC, softnet, conntrack and
 * UDP buffer drops (drop); listen overflows and drops, conntrack insert failures (overflow).
 * Retransmits, time squeezes and the other MIB counters explain, but do not mark. */
const char *evidence_class(const char *counter);

/* {"v": 1, "client": {"deltas": {...}, "samples": N, "conntrack_count", "conntrack_max"},
 * "server": {...}, "moved": [{"side", "counter", "delta", "class"}]} of the row's samples, or
 * NULL when no sample carries counters. New reference. */
json_t *evidence_of_row(const json_t *row);

/* The row's moved counters as "client qdisc.eth0.overlimits +812, ..." into buf (len bytes,
 * cut with "..." when longer); returns how many moved (0: buf is ""). */
size_t evidence_moved_text(const json_t *row, char *buf, size_t len);

/* The table's marker of a row whose marking counters moved: "!" and their classes
 * ("!shaping,drop") into buf (len bytes); "" when none moved. Returns buf. */
const char *evidence_marker(const json_t *row, char *buf, size_t len);

/* The moved counters of a compared row's two sides: [{"report": "base"|"new", "side",
 * "counter", "delta", "class"}] (base_row may be NULL). New reference, possibly empty. */
json_t *evidence_compare(const json_t *base_row, const json_t *new_row);

/* "NEW client qdisc.eth0.overlimits +816, ..." of evidence_compare's list into buf. */
void evidence_compare_text(const json_t *moved, char *buf, size_t len);

struct report;
/* When a row is marked: a blank line, the legend line, and one line per marked row naming its
 * counters ("  pod-to-pod other-node TCP_STREAM: client qdisc.eth0.overlimits +812"), with
 * bullet before each (markdown: "- "). Nothing when no row is marked. */
void evidence_print(const struct report *rep, const char *bullet, FILE *out);

/* The HTML report's "Evidence" section (evidence_html.c): a panel per row with counters,
 * open when it is marked. Nothing when no row has counters. */
void evidence_html(const struct report *rep, FILE *out);

#endif
