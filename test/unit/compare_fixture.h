/* SPDX-License-Identifier: Apache-2.0 */
/* compare_fixture.h - synthetic reports for the compare tests (test_compare.c and
 * test_compare_history.c): a spec of one run (seeded samples, kernel, CPU, loss), reports made
 * from it, and the verdict of one metric. Header-only test helper (static inline). */
#ifndef KPERF_TEST_COMPARE_FIXTURE_H
#define KPERF_TEST_COMPARE_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_err.h"
#include "controller/report/compare.h"
#include "controller/report/report.h"
#include "test/unit/report_fixture.h"
struct spec {
    uint64_t seed;
    int samples;
    double rr_median_us;
    double mbps;
    double mbps_sd_pct;     /* spread across samples */
    double interval_cv_pct; /* spread inside one sample (per-second intervals); 0 = none */
    const char *kernel;
    double cpu_scale; /* CPU per Gbit/s relative to BASE's (0 = 1) */
    double loss_pct;  /* adds a UDP_STREAM row with this loss (0 = no such row) */
};

/* CPU that follows throughput (the same CPU per Gbit/s at any rate), times scale. */
static inline void scale_cpu(json_t *s, double mbps, double scale)
{
    json_t *nc = json_object_get(s, "node_cpu"), *side;
    const char *k;
    double f = mbps / 9000.0 * (scale > 0 ? scale : 1);

    json_object_set_new(s, "cpu_seconds",
                        json_pack("{s:f, s:f}", "client", 2.0 * f, "server", 3.0 * f));
    json_object_foreach(nc, k, side)
    {
        double sys = json_number_value(json_object_get(side, "system_pct")) * f;
        double sirq = json_number_value(json_object_get(side, "softirq_pct")) * f;
        double user = json_number_value(json_object_get(side, "user_pct"));
        json_object_set_new(side, "system_pct", json_real(sys));
        json_object_set_new(side, "softirq_pct", json_real(sirq));
        json_object_set_new(side, "idle_pct", json_real(100 - sys - sirq - user));
    }
}

/* A UDP_STREAM sample of about 900 Mb/s with loss_pct percent lost. */
static inline json_t *udp_sample(int i, uint64_t *rng, double loss_pct)
{
    json_t *s = fx_stream_sample("UDP_STREAM", i, false, 900 * (1 + 0.01 * fx_normal(rng)), 0);
    double lp = loss_pct * (1 + 0.05 * fx_normal(rng));
    json_int_t sent = 1000000, lost = (json_int_t)(sent * lp / 100);

    json_object_del(s, "tcp");
    json_object_del(s, "streams");
    json_object_set_new(
        s, "udp",
        json_pack("{s:I, s:I, s:I, s:f, s:f, s:i, s:i}", "sent", sent, "received", sent - lost,
                  "lost", lost, "loss_pct", 100.0 * (double)lost / (double)sent, "jitter_us",
                  20 * (1 + 0.05 * fx_normal(rng)), "out_of_order", 0, "rcvbuf_errors", 0));
    return s;
}

static inline json_t *intervals(uint64_t *rng, double mbps, double cv_pct)
{
    json_t *a = json_array();
    for (int i = 0; i < 10; i++)
        json_array_append_new(a, json_pack("{s:i, s:i, s:f}", "start_s", i, "end_s", i + 1,
                                           "throughput_mbps",
                                           mbps * (1 + cv_pct / 100 * fx_normal(rng))));
    return a;
}

/* The report of spec sp (written as fixture name when KPERF_WRITE_FIXTURES is set); its
 * TCP_STREAM samples carry placement (borrowed; NULL = none). */
static inline struct report *make_placed(const struct spec *sp, const char *name,
                                         const json_t *placement)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    uint64_t rng = sp->seed;
    json_t *results = json_array(), *doc, *s;

    for (int i = 0; i < sp->samples; i++) {
        json_array_append_new(
            results, fx_latency_sample("TCP_RR", i, &rng, sp->rr_median_us, 2000, NULL, NULL));
        double mbps = sp->mbps * (1 + sp->mbps_sd_pct / 100 * fx_normal(&rng));
        s = fx_stream_sample("TCP_STREAM", i, false, mbps, 0);
        scale_cpu(s, mbps, sp->cpu_scale);
        if (sp->interval_cv_pct > 0)
            json_object_set_new(s, "intervals", intervals(&rng, mbps, sp->interval_cv_pct));
        if (placement) /* the agent's, on stream samples */
            json_object_set_new(s, "placement", json_deep_copy(placement));
        json_array_append_new(results, s);
        if (sp->loss_pct > 0)
            json_array_append_new(results, udp_sample(i, &rng, sp->loss_pct));
    }
    doc = fx_agent_doc(results, NULL);
    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "other-node", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    json_object_set_new(report_metadata(rep), "backend", json_string("local"));
    json_object_set_new(report_metadata(rep), "start_time", json_string("2026-11-30T09:00:00Z"));
    json_object_set_new(
        report_metadata(rep), "nodes",
        json_pack("[{s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i}]", "name", "node-a", "role",
                  "server", "kernel", sp->kernel ? sp->kernel : "6.1.0-18-amd64", "mtu", 1500,
                  "name", "node-b", "role", "client", "kernel", "6.1.0-18-amd64", "mtu", 1500));
    assert_int_equal(report_finish(rep, &err), 0);
    if (getenv("KPERF_WRITE_FIXTURES") && name) {
        char path[512];
        FILE *f;
        snprintf(path, sizeof(path), "%s/%s.json", getenv("KPERF_WRITE_FIXTURES"), name);
        f = fopen(path, "w");
        assert_non_null(f);
        assert_int_equal(report_render(rep, REPORT_JSON, f, &err), 0);
        fclose(f);
    }
    return rep;
}

static inline struct report *make(const struct spec *sp, const char *name)
{
    return make_placed(sp, name, NULL);
}

/* The verdict of a metric ("Mb/s", "p50", ...) of the row for test. */
static inline const char *verdict(const struct compare *cmp, const char *test, const char *metric,
                                  const char **method)
{
    static char buf[64], meth[64];
    json_t *doc = compare_to_json(cmp), *row, *m;
    size_t i, k;

    buf[0] = meth[0] = 0;
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        if (strcmp(json_string_value(json_object_get(row, "test")), test) != 0)
            continue;
        json_array_foreach(json_object_get(row, "metrics"), k, m)
        {
            if (strcmp(json_string_value(json_object_get(m, "metric")), metric) == 0) {
                snprintf(buf, sizeof(buf), "%s", json_string_value(json_object_get(m, "verdict")));
                snprintf(meth, sizeof(meth), "%s", json_string_value(json_object_get(m, "method")));
            }
        }
    }
    json_decref(doc);
    if (method)
        *method = meth;
    return buf;
}

/* Compares rb with rn at the default options, frees both, and returns the comparison (fails
 * the test when compare refuses). */
static inline struct compare *compare_owned(struct report *rb, struct report *rn)
{
    struct compare_opts o;
    struct kp_err err = {{0}};
    struct compare *cmp;

    compare_opts_init(&o);
    cmp = compare_reports(rb, rn, &o, &err);
    if (!cmp)
        fail_msg("compare failed: %s", kp_err_msg(&err));
    report_free(rb);
    report_free(rn);
    return cmp;
}

static inline struct compare *run(const struct spec *b, const struct spec *n, const char *bname,
                                  const char *nname)
{
    return compare_owned(make(b, bname), make(n, nname));
}
#endif
