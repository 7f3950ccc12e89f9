/* SPDX-License-Identifier: Apache-2.0 */
/* report_load.h - latency under load (TCP_RR_LOADED rows, base/testkind.h): what the load did
 * and how much it raised the latency. A loaded row's aggregate gets
 *   load{}                  the TCP_STREAM_MULTI that filled the path: median throughput_mbps,
 *                           bytes, retransmits and streams of the samples
 *   idle_latency_us{}       p50, p90, p99, mean of the idle TCP_RR row of the same scenario,
 *                           placement and address family (absent when that row was not measured)
 *   latency_increase_us{}   loaded - idle, per percentile (may be negative: noise)
 *   latency_ratio{}         loaded / idle, per percentile (when idle > 0)
 * Owns these derived fields only; aggregation of the rest is report_aggregate.c's. */
#ifndef KPERF_REPORT_REPORT_LOAD_H
#define KPERF_REPORT_REPORT_LOAD_H

#include <stdbool.h>

#include <jansson.h>

/* True for a row of a loaded test (TCP_RR_LOADED). */
bool report_load_row(const json_t *row);

/* Adds the fields above to every loaded row of rows (the report's results[], aggregated
 * already). Rows of other tests are left alone. */
void report_load_annotate(json_t *rows);

/* The latency increase of one sample of a loaded row at percentile `pct` ("p50", "p99",
 * "mean"): the sample's latency minus the row's idle_latency_us. False when either is missing. */
bool report_load_sample_increase(const json_t *row, const json_t *sample, const char *pct,
                                 double *out);

#endif
