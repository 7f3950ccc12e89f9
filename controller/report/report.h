/* SPDX-License-Identifier: Apache-2.0 */
/* report.h - the run report (schema "kperf.report/v1", see docs/report-schema.json and
 * docs/report.md): run metadata plus one result row per key (scenario, placement, test, reverse,
 * ip_family: base/rowkey.h, which also names the scenarios and placements) holding every agent
 * sample verbatim, an aggregate and statistics across samples.
 * Owns rows, aggregation (merged histograms, medians), JSON load/save and the output formats.
 * Leaves measuring to the runner/backends and the maths to stats.h; knows nothing of
 * Kubernetes or sockets.
 *
 * Life of a report in the runner:
 *     struct report *rep = report_new();
 *     json_object_set_new(report_metadata(rep), "backend", json_string("local"));
 *     struct report_group *rg = report_group_get(rep, ROWKEY_SCENARIO_POD_TO_POD,
 *                                                  ROWKEY_PLACEMENT_SAME_NODE, false);
 *     report_group_add_doc(rg, agent_doc, &err);                  // per client run
 *     report_group_skip(report_group_get(rep, ROWKEY_SCENARIO_POD_TO_SERVICE,
 *                                        ROWKEY_PLACEMENT_OTHER_NODE, false),
 *                       "no service support");
 *     report_finish(rep, &err);                                   // aggregates
 *     report_render(rep, REPORT_TABLE, stdout, &err);
 *     report_write_dir(rep, "out/", &err);
 *     report_free(rep);
 */
#ifndef KPERF_REPORT_REPORT_H
#define KPERF_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "base/testkind.h"

struct kp_err;
struct report; /* opaque */

#define REPORT_SCHEMA          "kperf.report/v1"
#define REPORT_AGENT_SCHEMA    "kperf.result/v1"
#define REPORT_DEFAULT_CV_PCT  10.0 /* a metric whose CV across samples exceeds this is noisy */
#define REPORT_MAX_FILE_BYTES  (256u * 1024u * 1024u) /* report_load reads no more */
#define REPORT_MAX_AGENT_BYTES (64u * 1024u * 1024u)  /* suggested cap for agent stdout */

enum report_format {
    REPORT_TABLE = 0, /* the cilium-style summary for a terminal */
    REPORT_MARKDOWN,
    REPORT_JSON, /* kperf.report/v1 */
    REPORT_CSV,
    REPORT_HTML,        /* one self-contained page with inline SVG charts */
    REPORT_OPENMETRICS, /* OpenMetrics text for Prometheus (docs/prometheus.md) */
};

/* "table", "markdown" (or "md"), "json", "csv", "html", "openmetrics" -> fmt. Returns 0 or -1 with
 * err. */
KP_MUST_CHECK int report_format_parse(const char *s, enum report_format *fmt, struct kp_err *err);

/* A new, empty report (metadata {} and no rows). Never NULL; caller frees with report_free. */
struct report *report_new(void);
void report_free(struct report *rep); /* NULL is a no-op */

/* The metadata object, for the runner to fill (borrowed: valid until report_free; add fields
 * with json_object_set_new). Documented keys (all optional): kperf_version, backend,
 * start_time, end_time (RFC 3339 UTC), arguments [strings], nodes [{name, role, kernel,
 * os_image, container_runtime, instance_type, zone, mtu}], kubernetes_version,
 * cni {name, version, settings{}}, kube_proxy_mode, run_id, params {...}. */
json_t *report_metadata(struct report *rep);
const json_t *report_metadata_const(const struct report *rep); /* borrowed, read-only */

/* CV threshold (percent) above which a metric is flagged noisy; default REPORT_DEFAULT_CV_PCT.
 * Takes effect at the next report_finish. */
void report_set_noisy_cv_pct(struct report *rep, double cv_pct);
double report_noisy_cv_pct(const struct report *rep); /* the current threshold */

/* A finished (or loaded) report judged under another noisy threshold (kperf report --noisy-cv):
 * sets it and replaces each row's stats and noisy flag, one row at a time, so rows kept as text
 * (report_lazy.h) stay text and the memory stays what loading took. Nothing else of a row
 * changes (report_finish would rebuild all of it and expand every row). Rows returned by
 * report_row before the call are no longer valid after it. */
void report_judge_noise(struct report *rep, double cv_pct);

/* How many rows are kept as text (report_lazy.h): the memory the rows take, for tests. */
size_t report_rows_as_text(const struct report *rep);

/* Where the results of one measurement group go: one (scenario, placement) in one direction.
 * The runner makes one per plan group before measuring (strings compared once, here), then
 * hands it every document, skip and error of the group: a result reaches its row by its test
 * kind, with no search of the rows. A row is created when first touched, so rows appear in the
 * order results, skips and errors arrive; making a group creates no row. The same arguments
 * give the same handle; the forward and reverse handles of a (scenario, placement) share its
 * rows. Never NULL; owned by the report (valid until report_free); strings are copied. */
struct report_group; /* opaque */
struct report_group *report_group_get(struct report *rep, const char *scenario,
                                      const char *placement, bool reverse);
/* The same for one address family of a dual-stack (or IPv6) measurement: ip_family ("IPv4",
 * "IPv6"; copied) is part of the place's identity and every row of it carries it as
 * "ip_family". NULL = report_group_get (rows without ip_family). */
struct report_group *report_group_get_family(struct report *rep, const char *scenario,
                                             const char *placement, const char *ip_family,
                                             bool reverse);

/* Adds one kperf-agent client document (kperf.result/v1, docs/result-schema.md) measured for
 * the group's (scenario, placement). Each results[] entry becomes a sample of the row
 * (scenario, placement, entry.test, entry.reverse), kept verbatim; each errors[] entry becomes
 * an error of its row. The document is validated strictly first (base/result.h
 * result_validate, which also checks the histograms merging needs); a malformed one is
 * rejected as a whole (nothing added) with an error naming the field that is wrong. errors[]
 * entries go to the reverse row when params.reverse is true. agent_doc is borrowed (copied).
 * Returns 0 or -1 with err. */
KP_MUST_CHECK int report_group_add_doc(struct report_group *rg, const json_t *agent_doc,
                                       struct kp_err *err);

/* Records that the whole (scenario, placement) was not measured, with why: an entry of the
 * report-level skipped[] (no row; the group's direction does not matter). Copied. */
void report_group_skip(struct report_group *rg, const char *reason);

/* Records that one test of the group, in the group's direction, was not measured: the row's
 * skip_reason. Copied. */
void report_group_skip_test(struct report_group *rg, enum test_kind t, const char *reason);

/* Puts the connection-capacity ramp of test t's row (capacity.h: capacity_result) on the row,
 * in the group's direction; capacity is stolen. */
void report_group_set_capacity(struct report_group *rg, enum test_kind t, json_t *capacity);

/* Records a failure (agent crashed, timeout, bad output...) that concerns the whole
 * (scenario, placement): an entry of the report-level errors[]. One line; copied. */
void report_group_error(struct report_group *rg, const char *message);

/* Records a failure of one test of the group, in the group's direction: an entry of the row's
 * errors[]. One line; copied. */
void report_group_error_test(struct report_group *rg, enum test_kind t, const char *message);

/* The same two, with the cause of a failure the cluster made (a pod that could not start:
 * "ip-exhaustion", "unschedulable", ... docs/report.md) as the entry's "cause"; NULL: none. */
void report_group_error_cause(struct report_group *rg, const char *message, const char *cause);
void report_group_error_test_cause(struct report_group *rg, enum test_kind t, const char *message,
                                   const char *cause);
/* Sets cause on the errors of test t's row (the group's direction) that have none. */
void report_group_tag_cause(struct report_group *rg, enum test_kind t, const char *cause);

/* For `--samples auto`: true when the row of test t (in the group's direction) has at least 2
 * samples of its key metric (ops_per_sec for latency tests, throughput_mbps otherwise) and the
 * 95% confidence interval's half-width is within rel_half_width_pct percent of the mean.
 * False when the row does not exist yet. Works before report_finish. */
bool report_group_ci_narrow_enough(const struct report_group *rg, enum test_kind t,
                                   double rel_half_width_pct);

/* Computes every row's aggregate (latency percentiles from MERGED histograms, scalar metrics as
 * the median of samples), statistics (median, mean, stddev, cv, ci95, noisy) and status.
 * Idempotent; call again after adding more samples. Returns 0 or -1 with err (e.g. histograms
 * that cannot be merged). */
KP_MUST_CHECK int report_finish(struct report *rep, struct kp_err *err);

/* The report as kperf.report/v1 (new reference; caller json_decref's it). Call after
 * report_finish, otherwise aggregates are missing. */
json_t *report_to_json(const struct report *rep);

/* Reads a kperf.report/v1 document, validating it strictly (schema string, required fields,
 * types; every sample as an agent results[] entry, base/result.h). doc is borrowed (copied).
 * Returns a new report (caller frees) or NULL with err. */
struct report *report_from_json(const json_t *doc, struct kp_err *err);

/* report_from_json on a file: a regular file, a pipe, /dev/stdin or a FIFO. At most
 * REPORT_MAX_FILE_BYTES are read whatever size the file claims; a longer input is refused as
 * soon as the cap is passed (report_file.h). Caller frees; NULL with err (one line). */
struct report *report_load(const char *path, struct kp_err *err);

/* Writes the report in one format to out and flushes out. Returns 0 or -1 with err (write
 * errors, also those that show only on the flush). */
KP_MUST_CHECK int report_render(const struct report *rep, enum report_format fmt, FILE *out,
                                struct kp_err *err);

/* Writes report.json, report.md, report.csv and report.html into dir (created with its missing
 * parents, mode 0755), each atomically (temp file + rename). Returns 0 or -1 with err. */
KP_MUST_CHECK int report_write_dir(const struct report *rep, const char *dir, struct kp_err *err);

/* Read access to rows (for compare and renderers). Rows are kperf.report/v1 results[]
 * objects, borrowed until the report changes or is freed, and for a loaded report (whose rows
 * are kept as text and parsed when read, report_lazy.h) until REPORT_LAZY_SLOTS (64) more
 * rows of the same report have been asked for: a caller may hold up to 63 rows of one report
 * while it reads one more (json_incref a part to keep it longer). Not thread-safe. */
size_t report_row_count(const struct report *rep);
const json_t *report_row(const struct report *rep, size_t i);

/* What a pass over all rows needs to select rows, without parsing a loaded row: valid until
 * the report changes or is freed (whatever other rows are read meanwhile). */
struct report_row_info {
    const char *scenario, *placement, *test, *kind, *status;
    const char *ip_family;   /* NULL when the row has none (rowkey_make: it is then IPv4) */
    const char *skip_reason; /* NULL when none */
    bool reverse, noisy;
    size_t n_samples, n_errors; /* sizes of samples[] and errors[] */
};
void report_row_info(const struct report *rep, size_t i, struct report_row_info *out);

/* Report-level skips and errors that concern a whole (scenario, placement): borrowed arrays of
 * {scenario, placement, reason} and {scenario, placement, error}. */
const json_t *report_skipped(const struct report *rep);
const json_t *report_errors(const struct report *rep);

/* Number of rows that have at least one sample / at least one error (for the exit code and
 * the final summary line). */
size_t report_ok_count(const struct report *rep);
size_t report_error_count(const struct report *rep);

#endif
