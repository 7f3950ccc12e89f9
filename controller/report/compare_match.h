/* SPDX-License-Identifier: Apache-2.0 */
/* compare_match.h - which rows of two reports are the same row, for compare.h: an index of a
 * report's rows by their key (base/rowkey.h, its one rule for every optional part), built once
 * so that matching n rows costs O(n), and the rows one side measured that the other did not.
 * Owns the index; knows nothing of metrics or verdicts. */
#ifndef KPERF_REPORT_COMPARE_MATCH_H
#define KPERF_REPORT_COMPARE_MATCH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/rowkey.h"
#include "controller/report/report.h"

/* Rows of one report by rowkey_text: `any` holds the first row of each key, `measured` the
 * first one with samples (a key may repeat in a hand-made file). Embedded by the caller. */
struct compare_index {
    const struct report *rep; /* borrowed */
    json_t *any;              /* {key text: row number}, ours */
    json_t *measured;         /* {key text: row number}, ours */
};

/* Indexes the rows of rep (borrowed until compare_index_cleanup), reading only their
 * report_row_info. */
void compare_index_init(struct compare_index *ix, const struct report *rep);
void compare_index_cleanup(struct compare_index *ix);

/* The key of row i of rep, from its report_row_info (ri; the key borrows its strings). */
void compare_index_key_at(const struct report *rep, size_t i, struct report_row_info *ri,
                          struct rowkey *k);

/* The number of the row with key k (only a row with samples when measured_only), or -1. */
long compare_index_find(const struct compare_index *ix, const struct rowkey *k, bool measured_only);

/* The measured row with the key of row (a report row or a compare row), or NULL. Borrowed as
 * report_row's rows are. */
const json_t *compare_index_find_measured(const struct compare_index *ix, const json_t *row);

/* Rows measured in `a` with no measured counterpart in b's report, as rowkey_to_json keys (new
 * array). When failed is not NULL, rows that b has but that failed there (errors, no samples)
 * are appended to failed instead, with their first error: a test that stopped working is worse
 * than a slower one. */
json_t *compare_unmatched(const struct report *a, const struct compare_index *b, json_t *failed);

#endif
