/* SPDX-License-Identifier: Apache-2.0 */
/* report_lazy.h - rows of a loaded report kept as their compact JSON text and expanded on
 * demand. A jansson tree costs ~100 bytes per scalar for ~10 bytes of text, so a loaded report
 * whose rows are mostly scalars would take ~10x its file in memory as trees. report_load
 * stores each validated, packed row (report_pack.h) as one JSON string holding the row's
 * compact text, in place of the row object (rows that are mostly packed histograms and
 * intervals stay trees, see report_lazy_store): a row is an object in the schema, so a string in
 * the rows array cannot be mistaken for one. report_lazy_row() returns the tree of a row: the
 * element itself when it is an object (rows built by the runner, or expanded), otherwise a
 * parse of its text kept in a bounded cache of REPORT_LAZY_SLOTS trees, least recently used
 * evicted first.
 *
 * Lifetime of a returned tree: valid until REPORT_LAZY_SLOTS calls of report_lazy_row on the
 * same cache for other rows have been made (a caller may hold up to REPORT_LAZY_SLOTS - 1
 * other rows of the same report while it asks for one more), until report_lazy_expand_all or
 * report_lazy_free. Take a reference (json_incref) to keep a part longer. Not thread-safe.
 * Used by report.c; owns the cache and its trees. */
#ifndef KPERF_REPORT_REPORT_LAZY_H
#define KPERF_REPORT_REPORT_LAZY_H

#include <stddef.h>

#include <jansson.h>

#define REPORT_LAZY_SLOTS 64

struct report_lazy; /* opaque */

struct report_lazy *report_lazy_new(void);    /* never NULL; caller frees */
void report_lazy_free(struct report_lazy *c); /* NULL is a no-op */

/* The stored form of one packed row (report_pack_row returned `packed`, the length of its
 * packed parts' text): a new JSON string holding its compact text (full precision, key order
 * kept). NULL when the row is better kept as a tree: when its text is mostly packed parts (a
 * tree costs ~10 bytes per byte of the scalar text but only ~1 per byte of a packed part, so
 * such a row's tree is within ~3x its text, and reading it costs no parse of the long packed
 * strings), or out of memory. */
json_t *report_lazy_store(const json_t *row, size_t packed);

/* rows[i] as a tree (see above), or NULL when i is out of range or the text does not parse
 * (out of memory). Borrowed. */
const json_t *report_lazy_row(struct report_lazy *c, const json_t *rows, size_t i);

/* Replaces every stored row of rows by its tree, in place (a tree the cache holds is the one
 * put in, so pointers given out stay valid as long as the row does), and empties the cache: for
 * the callers that change rows. */
void report_lazy_expand_all(struct report_lazy *c, json_t *rows);

/* Empties the cache (trees given out are freed): for a caller about to replace stored rows. */
void report_lazy_forget(struct report_lazy *c);

/* v as a tree, without a cache: a new reference to v when it is not a stored row, a parse of
 * its text when it is (NULL when that fails: out of memory). Caller json_decref's it. For a
 * single pass over stored rows (compare's rows, compare.c). */
json_t *report_lazy_expand(const json_t *v);

#endif
