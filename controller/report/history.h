/* SPDX-License-Identifier: Apache-2.0 */
/* history.h - a directory of past reports, for trends and for judging a run against the spread
 * between runs (kperf history, kperf run --history, kperf compare --baseline). Layout:
 *     DIR/<cluster>/<node pair>/<cni>/<cni version>/<start time>[-<run id>].json
 * cluster = metadata.cluster (or --cluster), else the backend; node pair = "<client>_<server>",
 * each the node's instance type when recorded (nodes come and go, their hardware stays), else
 * its name; cni and version from metadata.cni ("unknown" when absent). Every component is
 * reduced to [A-Za-z0-9._-]. Files are written through base/safefile.h (whole or not at all,
 * under the folder's lock; a killed writer's leftovers go on the next write), and each version
 * folder keeps its newest `keep` files (names sort by time). A run that cannot be read is skipped
 * by history_load_runs and named, so one bad file does not sink the directory. Runs are comparable
 * when cluster, node pair and CNI match (any version: a CNI upgrade is judged against the runs of
 * the version before it). docs/compare.md. */
#ifndef KPERF_REPORT_HISTORY_H
#define KPERF_REPORT_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/kp_err.h"

struct kp_err;
struct report;

#define HISTORY_DEFAULT_KEEP 30

/* The key folder of a report relative to DIR ("cluster/pair/cni/version"); cluster overrides
 * metadata when not NULL. Caller frees. */
char *history_key(const struct report *rep, const char *cluster);

/* Stores rep under dir (created as needed), then drops the oldest beyond keep (>= 1) in its
 * folder. *path_out (optional) gets the file's path (caller frees). Returns 0 or -1 with err. */
KP_MUST_CHECK int history_add(const char *dir, const struct report *rep, const char *cluster,
                              size_t keep, char **path_out, struct kp_err *err);

/* Paths of every report in dir, sorted by key folder then time (caller frees each and the
 * array with history_paths_free). Returns the count, or -1 with err (dir unreadable). */
KP_MUST_CHECK long history_list(const char *dir, char ***paths, struct kp_err *err);

/* Paths of the reports comparable with rep (same cluster, node pair and CNI), oldest first,
 * leaving out a file named like rep's own (a run added with --history before it is judged).
 * Returns the count or -1 with err. */
KP_MUST_CHECK long history_comparable(const char *dir, const struct report *rep,
                                      const char *cluster, char ***paths, struct kp_err *err);

void history_paths_free(char **paths, long n);

/* "<start time>[-<run id>].json": the name a report gets in its key folder. Caller frees. */
char *history_file_name(const struct report *rep);

/* The report as a run of a history kept outside a directory (kperf's ConfigMaps): compact
 * JSON without the per-second series of the samples (samples[].intervals, which only the HTML
 * charts draw) nor their counters (samples[].counters: the row's evidence keeps their sums and
 * what moved); every figure and mark a verdict reads stays. *len its length. Caller frees. */
char *history_compact_json(const struct report *rep, size_t *len);

/* The runs loaded from a listing, and those that could not be read. */
struct history_runs {
    struct report **reps; /* ours: n loaded runs, oldest first */
    const char **paths;   /* their paths, borrowed from the listing */
    size_t n;
    const char **skipped; /* paths that could not be read, newest first, borrowed */
    char **why;           /* ours: the reason for each */
    size_t n_skipped;
};

/* Loads the newest `want` readable runs (0: all) of paths[0..n) (oldest first, as listed)
 * into out, skipping an unreadable one (named in out->skipped), or with strict failing on it
 * with err naming it. Returns 0 (out->n may be 0; clean out with history_runs_cleanup) or -1
 * with err (out is clean then). */
KP_MUST_CHECK int history_load_runs(char *const *paths, long n, size_t want, bool strict,
                                    struct history_runs *out, struct kp_err *err);
void history_runs_cleanup(struct history_runs *r); /* empties r; a cleaned r again is a no-op */

/* history_load_runs with another reader of a run than report_load (a history kept elsewhere:
 * each "path" is then whatever names a run to load). */
typedef struct report *history_loader_fn(void *arg, const char *path, struct kp_err *err);
KP_MUST_CHECK int history_load_runs_with(char *const *paths, long n, size_t want, bool strict,
                                         history_loader_fn *load, void *arg,
                                         struct history_runs *out, struct kp_err *err);

/* "cluster/pair/cni/": the start every key comparable with rep's has (any CNI version), for a
 * history kept outside a directory. Caller frees. */
char *history_comparable_prefix(const struct report *rep, const char *cluster);

#endif
