/* SPDX-License-Identifier: Apache-2.0 */
/* kprofile.h - a row's kernel CPU profile (the samples' "profile", agent/kprof.h: opt-in with
 * `kperf run --profile`) summed into the row's "profile", and the difference of two rows'
 * profiles that `kperf compare` puts beside the verdict: the kernel functions whose share of
 * the measurement's kernel samples changed most (docs/profile.md). A function's share is its
 * stack samples (the samples whose kernel stack held it) over the row's samples, in percent.
 * Knows nothing of how the samples were taken. */
#ifndef KPERF_REPORT_KPROFILE_H
#define KPERF_REPORT_KPROFILE_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define KPROFILE_ROW_FUNCTIONS 200 /* functions a row keeps, the most stack samples first */
#define KPROFILE_CHANGED       10  /* "changed" entries of a diff */
#define KPROFILE_APPEARED      5   /* "appeared" and "vanished" entries of a diff */

/* {"samples", "other", "idle", "lost", "hz", "cpus", "functions": [{"name", "samples",
 * "stack"}]} summed over the row's samples (functions merged by name, the most stack samples
 * first), or {"error": "..."} when every profiled sample says why it has none; NULL when no
 * sample was profiled. New reference. */
json_t *kprofile_of_row(const json_t *row);

/* The difference of two rows' "profile"s, or NULL when either has none or no samples:
 * {"base_samples", "new_samples",
 *  "changed": [{"name", "base_pct", "new_pct", "delta_pct"}]: the KPROFILE_CHANGED largest
 *     |delta_pct|, a function whose shares are within 1 point of one listed before it on
 *     both sides left out (the same path: a caller and its only callee),
 *  "appeared": [{"name", "new_pct"}]: functions under 0.1% in BASE, at least 0.5% and 3 samples
 *     in NEW, the largest first (KPROFILE_APPEARED); "vanished": the same the other way}.
 * New reference. */
json_t *kprofile_diff(const json_t *base_row, const json_t *new_row);

/* The diff as text lines, each beginning with indent: "changed most: NAME 12.1% -> 40.3%
 * (+28.2), ..." (one line per function), "appeared in NEW: NAME 3.6%, ...", "vanished in
 * NEW: ...". */
void kprofile_diff_print(const json_t *diff, const char *indent, FILE *out);

/* The diff as a small HTML table (kperf compare -o html); nothing when diff is NULL. */
void kprofile_diff_html(const json_t *diff, FILE *out);

/* A row's profile as a small HTML table (the top functions and their shares) for its
 * evidence panel; nothing when the row has no profile. */
void kprofile_html(const json_t *row, FILE *out);

#endif
