/* SPDX-License-Identifier: Apache-2.0 */
/* result.h - the kperf.result/v1 document (docs/result-schema.md) that `kperf-agent client
 * --json` prints and the controller reads: strict parsing and validation, typed access to a
 * result's fields, and the shared pieces of its emission (latency summary from a histogram,
 * node CPU percentages). Which fields a test carries follows from its kind (base/testkind.h):
 * latency tests carry latency_us/histogram/ops, stream tests bytes/throughput_mbps, UDP tests
 * udp, TCP tests that keep a connection tcp. Knows nothing of sockets or of how results were
 * measured. */
#ifndef KPERF_BASE_RESULT_H
#define KPERF_BASE_RESULT_H

#include "base/kp_err.h"

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct kp_err;
struct hist;

#define RESULT_SCHEMA      "kperf.result/v1"
#define RESULT_MAX_BYTES   (64u << 20) /* a document larger than this is refused unparsed */
#define RESULT_MAX_ENTRIES 100000u     /* items per array (results[], errors[], streams[]...) */

/* Parses and validates a whole document from buf[0..len) (need not be NUL-terminated).
 * Duplicate keys, unknown keys, wrong types, negative or non-finite numbers, a wrong schema,
 * inconsistent latency summaries or histograms, an array of more than RESULT_MAX_ENTRIES and
 * an empty errors[].test or errors[].error are all errors. On success *doc is a new
 * reference (caller decrefs) and 0 is returned; on failure -1 with err naming the path
 * ("results[2].latency_us.p50: ..."). */
KP_MUST_CHECK int result_parse(const char *buf, size_t len, json_t **doc, struct kp_err *err);

/* Validates a document already in memory, with the rules of result_parse. 0 or -1. */
KP_MUST_CHECK int result_validate(const json_t *doc, struct kp_err *err);

/* Validates one results[] entry on its own, with the rules result_validate applies to it
 * (a report keeps these as its samples). path names it in messages ("results[0].samples[2]").
 * Returns 0 or -1 with err. */
KP_MUST_CHECK int result_validate_entry(const json_t *entry, const char *path, struct kp_err *err);

/* results[] and errors[] (borrowed references, valid while doc lives). */
size_t result_count(const json_t *doc);
const json_t *result_get(const json_t *doc, size_t i); /* NULL when out of range */
size_t result_error_count(const json_t *doc);
const json_t *result_error_get(const json_t *doc, size_t i);

/* The test name of a result or an error entry ("TCP_RR"); NULL when absent. Borrowed. */
const char *result_test(const json_t *res);

/* Reads a number by dotted path ("ops_per_sec", "latency_us.p99", "cpu_seconds.server",
 * "node_cpu.client.softirq_pct"). Returns 0, or -1 when absent or not a number (the field
 * does not apply to this test). */
int result_number(const json_t *res, const char *path, double *out);

/* The result's latency histogram; a new histogram (caller frees with hist_free) or NULL
 * with err (absent for stream tests). */
struct hist *result_histogram(const json_t *res, struct kp_err *err);

/* The aggregate of every sample of one test in doc's results[] (same test and direction):
 * samples, summed counts, the merged histogram and its latency_us, the mean headline figure
 * (ops_per_sec or throughput_mbps) and its spread over samples, summed UDP/TCP counters and
 * CPU seconds. Returns a new reference, or NULL with err when there is no such sample or a
 * histogram is unreadable. */
json_t *result_aggregate(const json_t *doc, const char *test, int reverse, struct kp_err *err);

/* Sets doc's "aggregates" to one result_aggregate per distinct (test, reverse) of results[],
 * in order of first appearance. Returns 0 or -1 with err. */
KP_MUST_CHECK int result_add_aggregates(json_t *doc, struct kp_err *err);

/* {"min","mean","p50","p90","p99","p999","max","stddev"} in microseconds from a histogram in
 * nanoseconds. New reference. */
json_t *result_latency_json(const struct hist *h);

/* {"user_pct","system_pct","softirq_pct","irq_pct","steal_pct","iowait_pct","idle_pct"} from
 * /proc/stat jiffy deltas in the order user nice system idle iowait irq softirq steal (user
 * includes nice). New reference; all zero when the deltas sum to 0. */
json_t *result_node_cpu_json(const uint64_t delta[8]);

#endif
