/* SPDX-License-Identifier: Apache-2.0 */
/* result_agg.c - the shared emission pieces of result.h (latency summary from a histogram,
 * node CPU percentages) and the aggregates: every sample of one test merged (histograms,
 * counters, CPU seconds, the mean headline figure and its spread). Validation and access are
 * result.c's. */
#include "base/result.h"
#include "base/result_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/kp_err.h"

/* --- emission ----------------------------------------------------------------------------- */

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

json_t *result_latency_json(const struct hist *h)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "min", us(hist_min(h)), "mean",
                     hist_mean(h) / 1000.0, "p50", us(hist_percentile(h, 50.0)), "p90",
                     us(hist_percentile(h, 90.0)), "p99", us(hist_percentile(h, 99.0)), "p999",
                     us(hist_percentile(h, 99.9)), "max", us(hist_max(h)), "stddev",
                     hist_stddev(h) / 1000.0);
}

json_t *result_node_cpu_json(const uint64_t d[8])
{
    double total = 0;
    double pct[8] = {0};

    for (int i = 0; i < 8; i++)
        total += (double)d[i];
    for (int i = 0; i < 8 && total > 0; i++)
        pct[i] = 100.0 * (double)d[i] / total;
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "user_pct", pct[0] + pct[1],
                     "system_pct", pct[2], "softirq_pct", pct[6], "irq_pct", pct[5], "steal_pct",
                     pct[7], "iowait_pct", pct[4], "idle_pct", pct[3]);
}

/* --- aggregates --------------------------------------------------------------------------- */

static double num(const json_t *res, const char *path)
{
    double v = 0;
    (void)result_number(res, path, &v);
    return v;
}

static void add_sum(json_t *obj, const char *key, double v, int integer)
{
    json_t *old = json_object_get(obj, key);
    double sum = (old ? json_number_value(old) : 0) + v;
    json_object_set_new(obj, key, integer ? json_integer((json_int_t)sum) : json_real(sum));
}

static json_t *spread_json(const double *v, size_t n)
{
    double mn = v[0], mx = v[0], mean = 0, var = 0;

    for (size_t i = 0; i < n; i++) {
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
        mean += v[i] / (double)n;
    }
    for (size_t i = 0; n > 1 && i < n; i++)
        var += (v[i] - mean) * (v[i] - mean) / (double)(n - 1);
    return json_pack("{s:f, s:f, s:f, s:f}", "min", mn, "max", mx, "mean", mean, "stddev",
                     sqrt(var));
}

/* Sums the counters of one sample into agg (udp, tcp, cpu, bytes/ops). */
static void add_counters(json_t *agg, const json_t *r, unsigned classes)
{
    json_t *cpu = json_object_get(agg, "cpu_seconds");

    add_sum(cpu, "client", num(r, "cpu_seconds.client"), 0);
    add_sum(cpu, "server", num(r, "cpu_seconds.server"), 0);
    add_sum(agg, "duration_s", num(r, "duration_s"), 0);
    if (classes & C_LAT)
        add_sum(agg, "ops", num(r, "ops"), 1);
    if (classes & C_STREAM)
        add_sum(agg, "bytes", num(r, "bytes"), 1);
    if (classes & C_UDP) {
        json_t *u = json_object_get(agg, "udp");
        add_sum(u, "sent", num(r, "udp.sent"), 1);
        add_sum(u, "received", num(r, "udp.received"), 1);
        add_sum(u, "lost", num(r, "udp.lost"), 1);
        if (classes & C_STREAM) {
            add_sum(u, "jitter_us", num(r, "udp.jitter_us"), 0); /* divided by n later */
            add_sum(u, "out_of_order", num(r, "udp.out_of_order"), 1);
            add_sum(u, "rcvbuf_errors", num(r, "udp.rcvbuf_errors"), 1);
        }
    }
    if (classes & C_LOAD) {
        json_t *l = json_object_get(agg, "load");
        if (!l) {
            l = json_pack("{s:s, s:I, s:f, s:i, s:f}", "test", "TCP_STREAM_MULTI", "streams",
                          (json_int_t)num(r, "load.streams"), "duration_s", 0.0, "bytes", 0,
                          "throughput_mbps", 0.0);
            json_object_set_new(agg, "load", l);
        }
        add_sum(l, "duration_s", num(r, "load.duration_s"), 0);
        add_sum(l, "bytes", num(r, "load.bytes"), 1);
        add_sum(l, "throughput_mbps", num(r, "load.throughput_mbps"), 0); /* divided by n later */
    }
    if (json_object_get(r, "tcp")) {
        json_t *t = json_object_get(agg, "tcp");
        if (!t) {
            t = json_pack("{s:i, s:f, s:I}", "retransmits", 0, "rtt_us", 0.0, "mss",
                          (json_int_t)num(r, "tcp.mss"));
            json_object_set_new(agg, "tcp", t);
        }
        add_sum(t, "retransmits", num(r, "tcp.retransmits"), 1);
        add_sum(t, "rtt_us", num(r, "tcp.rtt_us"), 0); /* divided by n later */
    }
}

static void finish_means(json_t *agg, size_t n)
{
    json_t *u = json_object_get(agg, "udp");
    json_t *t = json_object_get(agg, "tcp");
    json_t *l = json_object_get(agg, "load");

    if (l)
        json_object_set_new(l, "throughput_mbps", json_real(num(l, "throughput_mbps") / (double)n));
    if (u) {
        double sent = num(u, "sent");
        json_object_set_new(u, "loss_pct",
                            json_real(sent > 0 ? 100.0 * num(u, "lost") / sent : 0.0));
        if (json_object_get(u, "jitter_us"))
            json_object_set_new(u, "jitter_us", json_real(num(u, "jitter_us") / (double)n));
    }
    if (t)
        json_object_set_new(t, "rtt_us", json_real(num(t, "rtt_us") / (double)n));
}

json_t *result_aggregate(const json_t *doc, const char *test, int reverse, struct kp_err *err)
{
    unsigned classes = result_classes(test);
    const char *headline = classes & C_LAT ? "ops_per_sec" : "throughput_mbps";
    size_t n = 0, i;
    double *figures = calloc(result_count(doc) + 1, sizeof(double));
    struct hist *merged = NULL;
    json_t *agg = NULL;
    const json_t *r;

    if (!figures || !classes) {
        kp_err_set(err, "cannot aggregate %s", test ? test : "(null)");
        goto fail;
    }
    agg = json_pack("{s:s, s:b, s:i, s:{s:f, s:f}}", "test", test, "reverse", reverse, "samples", 0,
                    "cpu_seconds", "client", 0.0, "server", 0.0);
    if (classes & C_UDP)
        json_object_set_new(agg, "udp", json_object());
    if (classes & C_LAT)
        merged = hist_new();
    json_array_foreach(json_object_get(doc, "results"), i, r)
    {
        if (!result_test(r) || strcmp(result_test(r), test) != 0 ||
            json_is_true(json_object_get(r, "reverse")) != (reverse != 0))
            continue;
        if (merged) {
            struct hist *h = result_histogram(r, err);
            if (!h) {
                kp_err_prefix(err, "results[%zu]", i);
                goto fail;
            }
            hist_merge(merged, h);
            hist_free(h);
        }
        figures[n++] = num(r, headline);
        add_counters(agg, r, classes);
    }
    if (n == 0) {
        kp_err_set(err, "no %s%s sample to aggregate", test, reverse ? " reverse" : "");
        goto fail;
    }
    json_object_set_new(agg, "samples", json_integer((json_int_t)n));
    json_object_set_new(agg, "sample_spread", spread_json(figures, n));
    json_object_set_new(agg, headline,
                        json_real(num(json_object_get(agg, "sample_spread"), "mean")));
    if (merged) {
        json_object_set_new(agg, "latency_us", result_latency_json(merged));
        json_object_set_new(agg, "histogram", hist_to_json(merged));
    }
    finish_means(agg, n);
    hist_free(merged);
    free(figures);
    return agg;
fail:
    hist_free(merged);
    free(figures);
    json_decref(agg);
    return NULL;
}

int result_add_aggregates(json_t *doc, struct kp_err *err)
{
    json_t *aggs = json_array();
    const json_t *r;
    size_t i;

    json_array_foreach(json_object_get(doc, "results"), i, r)
    {
        const char *test = result_test(r);
        int reverse = json_is_true(json_object_get(r, "reverse"));
        const json_t *a;
        size_t j;
        int seen = 0;
        json_t *agg;

        json_array_foreach(aggs, j, a)
        {
            if (strcmp(result_test(a), test) == 0 &&
                json_is_true(json_object_get(a, "reverse")) == reverse)
                seen = 1;
        }
        if (seen)
            continue;
        agg = result_aggregate(doc, test, reverse, err);
        if (!agg) {
            json_decref(aggs);
            return -1;
        }
        json_array_append_new(aggs, agg);
    }
    json_object_set_new(doc, "aggregates", aggs);
    return 0;
}
