/* SPDX-License-Identifier: Apache-2.0 */
/* report_aggregate.c - a row's aggregate and statistics from its samples. */
#include "controller/report/report_aggregate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/testkind.h"
#include "controller/report/evidence.h"
#include "controller/report/kprofile.h"
#include "controller/report/pathmtu.h"
#include "controller/report/report_pack.h"
#include "controller/report/stats.h"

static const struct report_metric latency_metrics[] = {
    {"p50", "latency_us", "p50", false},  {"p90", "latency_us", "p90", false},
    {"p99", "latency_us", "p99", false},  {"mean", "latency_us", "mean", false},
    {"ops/s", "ops_per_sec", NULL, true},
};
static const struct report_metric throughput_metrics[] = {
    {"Mb/s", "throughput_mbps", NULL, true},
};

const struct report_metric *report_metrics_for(const char *kind, size_t *count)
{
    if (strcmp(kind, "latency") == 0) {
        *count = sizeof(latency_metrics) / sizeof(latency_metrics[0]);
        return latency_metrics;
    }
    *count = sizeof(throughput_metrics) / sizeof(throughput_metrics[0]);
    return throughput_metrics;
}

const char *report_kind_of_test(const char *test)
{
    const struct testkind *tk = testkind_by_name(test);

    return tk && tk->latency ? "latency" : "throughput";
}

bool report_get_number(const json_t *obj, const char *field, const char *sub, double *out)
{
    const json_t *v = json_object_get(obj, field);

    if (v && sub)
        v = json_object_get(v, sub);
    if (!json_is_number(v))
        return false;
    *out = json_number_value(v);
    return true;
}

size_t report_sample_values(const json_t *row, const char *field, const char *sub, double **out)
{
    const json_t *samples = json_object_get(row, "samples"), *s;
    size_t i, n = 0;

    *out = NULL;
    if (json_array_size(samples) == 0)
        return 0;
    *out = kp_xmalloc(json_array_size(samples) * sizeof(double));
    json_array_foreach(samples, i, s)
    {
        if (report_get_number(s, field, sub, &(*out)[n]))
            n++;
    }
    if (n == 0) {
        free(*out);
        *out = NULL;
    }
    return n;
}

/* Sets obj[key] (creating obj[field] when sub is set) to the median of the samples' values,
 * when at least one sample has it. */
static void set_median(json_t *agg, const json_t *row, const char *field, const char *sub)
{
    double *v;
    size_t n = report_sample_values(row, field, sub, &v);
    json_t *dst = agg;

    if (n == 0)
        return;
    if (sub) {
        dst = json_object_get(agg, field);
        if (!dst) {
            dst = json_object();
            json_object_set_new(agg, field, dst);
        }
    }
    json_object_set_new(dst, sub ? sub : field, json_real(stats_median(v, n)));
    free(v);
}

static json_t *stats_json(const double *v, size_t n, double noisy_cv_pct, bool *noisy)
{
    struct stats_summary s;
    json_t *o;

    stats_summarize(v, n, noisy_cv_pct, &s);
    o = json_pack("{s:I, s:f, s:f, s:f, s:f, s:b}", "n", (json_int_t)s.n, "median", s.median,
                  "mean", s.mean, "stddev", s.stddev, "cv_pct", s.cv_pct, "noisy", s.is_noisy);
    json_object_set_new(o, "ci95",
                        s.has_ci ? json_pack("[f, f]", s.ci95_lo, s.ci95_hi) : json_null());
    *noisy = *noisy || s.is_noisy;
    return o;
}

/* Latency percentiles from the merged histogram of every sample. */
static int merged_latency(json_t *agg, const json_t *row, struct kp_err *err)
{
    const json_t *s;
    struct hist *all = hist_new(), *h;
    size_t i;
    json_t *lat;

    json_array_foreach(json_object_get(row, "samples"), i, s)
    {
        json_t *hj;
        if (!json_object_get(s, "histogram"))
            continue;
        hj = report_unpacked(s, "histogram"); /* ours */
        h = hist_from_json(hj, err);
        json_decref(hj);
        if (!h) {
            hist_free(all);
            return kp_err_prefix(err, "samples[%zu].histogram", i);
        }
        hist_merge(all, h);
        hist_free(h);
    }
    if (hist_count(all) > 0) {
        lat = json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "min", hist_min(all) / 1e3,
                        "mean", hist_mean(all) / 1e3, "p50", hist_percentile(all, 50) / 1e3, "p90",
                        hist_percentile(all, 90) / 1e3, "p99", hist_percentile(all, 99) / 1e3,
                        "p999", hist_percentile(all, 99.9) / 1e3, "max", hist_max(all) / 1e3,
                        "stddev", hist_stddev(all) / 1e3);
        json_object_set_new(agg, "latency_us", lat);
        json_object_set_new(agg, "histogram", hist_to_json(all));
    }
    hist_free(all);
    return 0;
}

/* CPU seconds per gigabit moved, per sample, then the median: the cost of the traffic. */
static void cpu_per_gbit(json_t *agg, const json_t *row)
{
    static const char *const sides[] = {"client", "server"};
    const json_t *s;
    size_t i, n;
    double *v = kp_xmalloc((json_array_size(json_object_get(row, "samples")) + 1) *
                           sizeof(double)); /* ours */
    json_t *o = json_object();

    for (size_t k = 0; k < 2; k++) {
        n = 0;
        json_array_foreach(json_object_get(row, "samples"), i, s)
        {
            double mbps, dur, cpu;
            if (report_get_number(s, "throughput_mbps", NULL, &mbps) &&
                report_get_number(s, "duration_s", NULL, &dur) &&
                report_get_number(s, "cpu_seconds", sides[k], &cpu) && mbps * dur > 0)
                v[n++] = cpu / (mbps * dur / 1000.0);
        }
        if (n)
            json_object_set_new(o, sides[k], json_real(stats_median(v, n)));
    }
    free(v);
    if (json_object_size(o))
        json_object_set_new(agg, "cpu_seconds_per_gbit", o);
    else
        json_decref(o);
}

/* user + system + softirq + irq percent of one side's node_cpu: 0 when /proc/stat was unreadable.
 */
static double busy_pct(const json_t *side)
{
    static const char *const keys[] = {"user_pct", "system_pct", "softirq_pct", "irq_pct"};
    double sum = 0, x;

    for (size_t i = 0; i < 4; i++)
        sum += report_get_number(side, keys[i], NULL, &x) ? x : 0;
    return sum;
}

/* The fraction of each node's CPU (0..1) in user, system, softirq and irq per Gbit/s moved, per
 * sample, then the median: {"client": {"user", "system", "softirq", "irq"}, "server": {...}}.
 * A sample whose node_cpu is all zero (/proc/stat unreadable) counts for nothing. */
static void node_cpu_per_gbps(json_t *agg, const json_t *row)
{
    static const char *const sides[] = {"client", "server"};
    static const char *const modes[] = {"user", "system", "softirq", "irq"};
    size_t ns = json_array_size(json_object_get(row, "samples")), i, n;
    double *v = kp_xmalloc((ns + 1) * sizeof(double)); /* ours */
    json_t **nc = kp_xcalloc(ns + 1, sizeof(*nc));     /* ours: each sample's node_cpu */
    json_t *o = json_object(), *s;

    json_array_foreach(json_object_get(row, "samples"), i, s) nc[i] =
        report_unpacked(s, "node_cpu");
    for (size_t k = 0; k < 2; k++) {
        json_t *side = json_object();
        for (size_t m = 0; m < 4; m++) {
            char key[32];
            snprintf(key, sizeof(key), "%s_pct", modes[m]);
            n = 0;
            json_array_foreach(json_object_get(row, "samples"), i, s)
            {
                const json_t *ncs = json_object_get(nc[i], sides[k]);
                double mbps, pct;
                if (busy_pct(ncs) > 0 && report_get_number(s, "throughput_mbps", NULL, &mbps) &&
                    mbps > 0 && report_get_number(ncs, key, NULL, &pct))
                    v[n++] = pct / 100.0 / (mbps / 1000.0);
            }
            if (n)
                json_object_set_new(side, modes[m], json_real(stats_median(v, n)));
        }
        if (json_object_size(side))
            json_object_set_new(o, sides[k], side);
        else
            json_decref(side);
    }
    for (i = 0; i < ns; i++)
        json_decref(nc[i]);
    free(nc);
    free(v);
    if (json_object_size(o))
        json_object_set_new(agg, "node_cpu_per_gbps", o);
    else
        json_decref(o);
}

static json_t *build_aggregate(const json_t *row, const char *kind, struct kp_err *err)
{
    static const char *const tcp[] = {"retransmits", "rtt_us", "mss", NULL};
    static const char *const udp[] = {"sent",      "received",     "lost",          "loss_pct",
                                      "jitter_us", "out_of_order", "rcvbuf_errors", NULL};
    json_t *agg = json_object();

    set_median(agg, row, "duration_s", NULL);
    if (strcmp(kind, "latency") == 0 && merged_latency(agg, row, err) != 0) {
        json_decref(agg);
        return NULL;
    }
    set_median(agg, row, "ops_per_sec", NULL);
    set_median(agg, row, "throughput_mbps", NULL);
    for (size_t i = 0; tcp[i]; i++)
        set_median(agg, row, "tcp", tcp[i]);
    for (size_t i = 0; udp[i]; i++)
        set_median(agg, row, "udp", udp[i]);
    set_median(agg, row, "cpu_seconds", "client");
    set_median(agg, row, "cpu_seconds", "server");
    if (strcmp(kind, "throughput") == 0) {
        cpu_per_gbit(agg, row);
        node_cpu_per_gbps(agg, row);
    }
    return agg;
}

static json_t *build_stats(const json_t *row, const char *kind, double noisy_cv_pct, bool *noisy)
{
    size_t count, n;
    const struct report_metric *m = report_metrics_for(kind, &count);
    json_t *stats = json_object(), *dst;
    double *v;

    for (size_t i = 0; i < count; i++) {
        n = report_sample_values(row, m[i].field, m[i].sub, &v);
        if (n == 0)
            continue;
        dst = stats;
        if (m[i].sub) {
            dst = json_object_get(stats, m[i].field);
            if (!dst) {
                dst = json_object();
                json_object_set_new(stats, m[i].field, dst);
            }
        }
        json_object_set_new(dst, m[i].sub ? m[i].sub : m[i].field,
                            stats_json(v, n, noisy_cv_pct, noisy));
        free(v);
    }
    return stats;
}

int report_aggregate_row(json_t *row, double noisy_cv_pct, struct kp_err *err)
{
    size_t samples = json_array_size(json_object_get(row, "samples"));
    size_t errors = json_array_size(json_object_get(row, "errors"));
    const char *kind = json_string_value(json_object_get(row, "kind"));
    const char *status;
    bool noisy = false;

    json_object_del(row, "aggregate");
    json_object_del(row, "stats");
    json_object_del(row, "evidence");
    json_object_del(row, "path_mtu");
    json_object_del(row, "profile");
    if (samples > 0) {
        json_t *agg = build_aggregate(row, kind, err);
        json_t *ev = evidence_of_row(row);
        if (!agg) {
            json_decref(ev);
            return -1;
        }
        if (ev)
            json_object_set_new(row, "evidence", ev);
        if ((ev = pathmtu_of_row(row)) != NULL)
            json_object_set_new(row, "path_mtu", ev);
        if ((ev = kprofile_of_row(row)) != NULL)
            json_object_set_new(row, "profile", ev);
        json_object_set_new(row, "aggregate", agg);
        json_object_set_new(row, "stats", build_stats(row, kind, noisy_cv_pct, &noisy));
    }
    if (samples > 0)
        status = errors ? "partial" : "ok";
    else if (errors > 0)
        status = "failed";
    else
        status = json_object_get(row, "skip_reason") ? "skipped" : "failed";
    json_object_set_new(row, "status", json_string(status));
    json_object_set_new(row, "noisy", json_boolean(noisy));
    return 0;
}

void report_aggregate_judge_noise(json_t *row, double noisy_cv_pct)
{
    const char *kind = json_string_value(json_object_get(row, "kind"));
    bool noisy = false;

    if (json_array_size(json_object_get(row, "samples")) > 0) /* set in place: order kept */
        json_object_set_new(row, "stats", build_stats(row, kind, noisy_cv_pct, &noisy));
    json_object_set_new(row, "noisy", json_boolean(noisy));
}
