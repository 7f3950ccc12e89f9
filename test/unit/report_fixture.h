/* SPDX-License-Identifier: Apache-2.0 */
/* report_fixture.h - synthetic kperf-agent documents for the report, render and compare tests:
 * a seeded RNG, latency samples recorded into real histograms (hist_to_json), throughput
 * samples, and whole kperf.result/v1 documents. Header-only test helper (static inline). */
#ifndef KPERF_TEST_REPORT_FIXTURE_H
#define KPERF_TEST_REPORT_FIXTURE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "base/hist.h"

/* xorshift64*: deterministic for a seed, good enough for test data. */
static inline uint64_t fx_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static inline double fx_uniform(uint64_t *s) /* (0, 1) */
{
    return ((double)(fx_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double fx_normal(uint64_t *s) /* standard normal, Box-Muller */
{
    double u1 = fx_uniform(s), u2 = fx_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static inline json_t *fx_node_cpu(void);

/* One latency sample: `count` values around median_us (log-normal, sigma 0.3) recorded into a
 * histogram. When raw is not NULL, every value (ns) is also appended to raw[*nraw]. */
static inline json_t *fx_latency_sample(const char *test, int sample, uint64_t *rng,
                                        double median_us, size_t count, uint64_t *raw, size_t *nraw)
{
    struct hist *h = hist_new();
    json_t *o;

    for (size_t i = 0; i < count; i++) {
        uint64_t ns = (uint64_t)(median_us * 1000.0 * exp(0.3 * fx_normal(rng)));
        hist_record(h, ns);
        if (raw)
            raw[(*nraw)++] = ns;
    }
    o = json_pack("{s:s, s:i, s:b, s:s, s:f, s:I, s:f}", "test", test, "sample", sample, "reverse",
                  0, "start_time", "2026-11-30T09:00:00Z", "duration_s", 1.0, "ops",
                  (json_int_t)count, "ops_per_sec", 1e6 / (hist_mean(h) / 1000.0));
    json_object_set_new(o, "latency_us",
                        json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "min",
                                  hist_min(h) / 1e3, "mean", hist_mean(h) / 1e3, "p50",
                                  hist_percentile(h, 50) / 1e3, "p90", hist_percentile(h, 90) / 1e3,
                                  "p99", hist_percentile(h, 99) / 1e3, "p999",
                                  hist_percentile(h, 99.9) / 1e3, "max", hist_max(h) / 1e3,
                                  "stddev", hist_stddev(h) / 1e3));
    json_object_set_new(o, "histogram", hist_to_json(h));
    json_object_set_new(o, "cpu_seconds", json_pack("{s:f, s:f}", "client", 0.5, "server", 0.4));
    json_object_set_new(o, "node_cpu", fx_node_cpu());
    json_object_set_new(
        o, "tcp", json_pack("{s:i, s:f, s:i}", "retransmits", 0, "rtt_us", median_us, "mss", 1448));
    hist_free(h);
    return o;
}

/* One TCP_RR_LOADED sample: a latency sample around median_us with load{} of load_mbps. */
static inline json_t *fx_loaded_sample(int sample, uint64_t *rng, double median_us, size_t count,
                                       double load_mbps)
{
    json_t *o = fx_latency_sample("TCP_RR_LOADED", sample, rng, median_us, count, NULL, NULL);

    json_object_set_new(o, "load",
                        json_pack("{s:s, s:i, s:f, s:I, s:f, s:i}", "test", "TCP_STREAM_MULTI",
                                  "streams", 4, "duration_s", 1.2, "bytes",
                                  (json_int_t)(load_mbps * 1e6 / 8 * 1.2), "throughput_mbps",
                                  load_mbps, "retransmits", 7));
    return o;
}

static inline json_t *fx_node_cpu(void)
{
    return json_pack("{s:{s:f, s:f, s:f, s:f, s:f, s:f}, s:{s:f, s:f, s:f, s:f, s:f, s:f}}",
                     "client", "user_pct", 5.0, "system_pct", 10.0, "softirq_pct", 3.0, "irq_pct",
                     0.0, "steal_pct", 0.0, "idle_pct", 82.0, "server", "user_pct", 4.0,
                     "system_pct", 12.0, "softirq_pct", 6.0, "irq_pct", 0.0, "steal_pct", 0.0,
                     "idle_pct", 78.0);
}

/* One throughput sample of mbps for 10 s, with TCP facts, streams and CPU seconds. */
static inline json_t *fx_stream_sample(const char *test, int sample, bool reverse, double mbps,
                                       int retransmits)
{
    json_int_t bytes = (json_int_t)(mbps * 1e6 / 8 * 10);
    json_t *o = json_pack(
        "{s:s, s:i, s:b, s:s, s:f, s:I, s:f, s:[{s:I, s:f, s:i, s:f, s:i}], s:{s:i, s:f, s:i}, "
        "s:{s:f, s:f}}",
        "test", test, "sample", sample, "reverse", reverse, "start_time", "2026-11-30T09:00:00Z",
        "duration_s", 10.0, "bytes", bytes, "throughput_mbps", mbps, "streams", "bytes", bytes,
        "throughput_mbps", mbps, "retransmits", retransmits, "rtt_us", 50.0, "mss", 1448, "tcp",
        "retransmits", retransmits, "rtt_us", 50.0, "mss", 1448, "cpu_seconds", "client", 2.0,
        "server", 3.0);
    json_object_set_new(o, "node_cpu", fx_node_cpu());
    return o;
}

/* A kperf.result/v1 document around results (stolen) and errors (stolen; NULL = []), with
 * the agent, server, params and mtu blocks a real client prints. */
static inline json_t *fx_agent_doc(json_t *results, json_t *errors)
{
    return json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:i}, s:{s:[s], s:f, s:f, s:f, s:i, s:i, "
                     "s:i, s:i, s:b}, s:{s:i, s:i}, s:o, s:o}",
                     "schema", "kperf.result/v1", "agent", "version", "0.1.0", "hostname", "node-a",
                     "kernel", "6.1.0-18-amd64", "server", "host", "198.18.0.2", "port", 5201,
                     "params", "tests", "TCP_RR", "duration_s", 10.0, "omit_s", 0.0, "interval_s",
                     0.0, "samples", 1, "streams", 4, "msg_size_bytes", 1, "udp_rate_bps",
                     1000000000, "reverse", 0, "mtu", "client", 1500, "server", 1500, "results",
                     results, "errors", errors ? errors : json_array());
}

#endif
