/* SPDX-License-Identifier: Apache-2.0 */
/* report_pack.h - the compact in-memory form of a loaded report's bulky parts. A jansson tree
 * costs 15-20 bytes of memory per byte of compact JSON for arrays of small numbers (a
 * histogram bucket [1036, 7] is an array and two integers: ~190 bytes for 10 of text), so a
 * loaded row keeps the parts that only the JSON output and a few computations read as their
 * compact JSON text, in a string in place of the value:
 *     samples[].histogram, samples[].intervals, samples[].streams, samples[].node_cpu,
 *     aggregate.histogram
 * Everything the renderers read (scalars, latency_us, aggregates, stats) stays a tree.
 * A packed value is a JSON string where the schema has an array or object, so it cannot be
 * mistaken for data. Readers of those fields go through report_unpacked(); the JSON output
 * expands one row at a time (report_row_unpacked). Used by report.c, report_aggregate.c and
 * compare.c; owns nothing. */
#ifndef KPERF_REPORT_REPORT_PACK_H
#define KPERF_REPORT_REPORT_PACK_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Packs the bulky parts of one validated row in place; returns the length of their text. */
size_t report_pack_row(json_t *row);

/* obj[key] as a tree: a new reference (the value itself when it is not packed, a parsed copy
 * when it is), or NULL when missing. Caller json_decref's it. */
json_t *report_unpacked(const json_t *obj, const char *key);

/* A shallow copy of obj with obj[key] unpacked; obj itself (new reference) when it is not
 * packed. Caller json_decref's it; do not modify it. */
json_t *report_with_unpacked(const json_t *obj, const char *key);

/* A copy of row with every packed part expanded (new reference; shares the unpacked parts with
 * row, so do not modify it). */
json_t *report_row_unpacked(const json_t *row);

/* Writes v as json_dumpf(JSON_INDENT(2)) would at nesting depth `depth` (the text after a
 * line break is indented by 2 * depth more). Returns 0 or -1. */
int report_dump_at(const json_t *v, int depth, FILE *out);

/* report_dump_at with other json_dumps flags besides JSON_INDENT(2) (JSON_REAL_PRECISION). */
int report_dump_flags(const json_t *v, int depth, size_t flags, FILE *out);

#endif
