/* SPDX-License-Identifier: Apache-2.0 */
/* capacity.h - the connection-capacity ramp of a TCP_CRR row (`kperf run --capacity`,
 * docs/report.md "Connection capacity"): each step is one TCP_CRR sample with more concurrent
 * clients (1, 2, 4, ... CAPACITY_MAX_PARALLEL); this module turns a step's agent document into
 * the step's figures, says when the ramp stops (the stop rule), which counter moved first, and
 * builds the row's "capacity" section. The runner drives the steps; knows nothing of how a
 * sample was measured. */
#ifndef KPERF_REPORT_CAPACITY_H
#define KPERF_REPORT_CAPACITY_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define CAPACITY_VERSION      1
#define CAPACITY_MAX_PARALLEL 64  /* the last step's concurrent clients */
#define CAPACITY_ERROR_PCT    0.1 /* stop: more than this % of the connections failed */
#define CAPACITY_P99_FACTOR   2.0 /* stop: p99 more than this times the first step's */

/* One step from the agent document of a TCP_CRR sample with `parallel` clients:
 * {"parallel", "conn_per_sec", "p99_us", "conn_errors", "error_pct", "counters": {"client":
 * {COUNTER: delta}, "server": {...}}} with the capacity counters that moved (below); or
 * {"parallel", "error": "..."} when the document has no TCP_CRR result. New reference. */
json_t *capacity_step_of_doc(const json_t *doc, int parallel);

/* The stop rule on the steps so far (the last one just measured): NULL to go on, or why the
 * ramp stops at the last step: "errors" (a failed step, or conn_errors above
 * CAPACITY_ERROR_PCT % of the connections) or "p99" (p99 above CAPACITY_P99_FACTOR times the
 * first step's). */
const char *capacity_stop(const json_t *steps);

/* The capacity counter that moved first: the earliest step where one moved on either side,
 * and in it the first of this order: conntrack.insert_failed, conntrack.drop,
 * conntrack.early_drop, conntrack.table_full (the table's count reached its max),
 * TcpExt.ListenOverflows, TcpExt.ListenDrops, Icmp.OutDestUnreachs (a node refused the
 * connection), TcpExt.TCPSynRetrans; the client side before the server. {"side", "counter",
 * "delta", "parallel"} (new reference) or NULL when none moved. */
json_t *capacity_first_counter(const json_t *steps);

/* The row's "capacity" section: {"v", "max_conn_per_sec", "max_parallel" (the steps before
 * the stop; 0 when the first step stopped), "stop" (capacity_stop's reason, or "bound": the
 * last step passed), "first_counter" (when one moved), "steps"}. steps borrowed (copied).
 * New reference. */
json_t *capacity_result(const json_t *steps, const char *stop);

/* One line of a row's capacity: "max 1234 conn/s at 8 clients; stopped at 16: errors 2.5%;
 * first: server Icmp.OutDestUnreachs +120 at 16" into buf (len bytes). 0 when the row has
 * none (buf ""), else 1. */
int capacity_text(const json_t *row, char *buf, size_t len);

struct report;
/* When a row has a capacity ramp: a blank line, a title line, and one line per such row
 * ("  pod-to-pod other-node TCP_CRR: max ..."), bullet before each (markdown: "- "). */
void capacity_print(const struct report *rep, const char *bullet, FILE *out);

/* The row's ramp in its HTML evidence panel: the line and a table of the steps with the
 * capacity counters that moved. Nothing when the row has none. */
void capacity_html(const json_t *row, FILE *out);

#endif
