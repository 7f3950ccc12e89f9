/* SPDX-License-Identifier: Apache-2.0 */
/* test_outlier.c - the sweep outlier rule on synthetic data: median and MAD per instance type,
 * only the worse side, a minimum relative gap, small groups not judged, and attribution of a slow
 * node in ring pairs (its neighbours, each with one slow pair, are not flagged); the floor (2x
 * the median) that finds a 10x node in a 5-node group spread 2x, and the tail (suspects, outliers
 * once measured again) that stays quiet in a 500-node group with a realistic spread. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/report/outlier.h"

static void test_outlier_flags_the_slow_one_per_type(void **state)
{
    /* six m5 nodes around 100 us, one at 180; two c5 nodes (too few to judge) */
    const double v[] = {100, 102, 98, 101, 180, 99, 500, 90};
    const char *g[] = {"m5", "m5", "m5", "m5", "m5", "m5", "c5", "c5"};
    int verdict[8];
    double z[8];
    (void)state;

    outlier_judge(v, g, 8, false, verdict, z);
    for (int i = 0; i < 6; i++) /* 1.8x the median: the tail, an outlier once measured again */
        assert_int_equal(verdict[i], i == 4 ? OUTLIER_SUSPECT : OUTLIER_OK);
    assert_true(z[4] > OUTLIER_Z);
    assert_int_equal(verdict[6], OUTLIER_NOT_JUDGED);
    assert_int_equal(verdict[7], OUTLIER_NOT_JUDGED);
}

static void test_outlier_only_the_worse_side_and_a_real_gap(void **state)
{
    /* throughput: a faster node is not an outlier; a node 3% slower with a tiny MAD is not
     * either (identical nodes jitter), one 40% slower is */
    const double tp[] = {1000, 1001, 999, 1000, 1600, 970, 600};
    const char *g[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    int verdict[7];
    double z[7];
    (void)state;

    outlier_judge(tp, g, 7, true, verdict, z);
    assert_int_equal(verdict[4], OUTLIER_OK); /* faster */
    assert_true(z[4] < 0);
    assert_int_equal(verdict[5], OUTLIER_OK); /* 3% slower: z is large, the gap is not */
    assert_true(z[5] > OUTLIER_Z);
    assert_int_equal(verdict[6], OUTLIER_SUSPECT);
}

static void test_outlier_zero_mad(void **state)
{
    const double v[] = {50, 50, 50, 50, 80};
    const char *g[] = {"t", "t", "t", "t", "t"};
    int verdict[5];
    double z[5];
    (void)state;

    outlier_judge(v, g, 5, false, verdict, z);
    assert_int_equal(verdict[0], OUTLIER_OK);
    assert_true(z[0] == 0);
    assert_int_equal(verdict[4], OUTLIER_SUSPECT);
    assert_true(isinf(z[4]));
}

static json_t *rr_row(const char *client, double p50)
{
    char pl[64];

    snprintf(pl, sizeof(pl), "node:%s", client);
    return json_pack("{s:s, s:s, s:s, s:b, s:s, s:{s:{s:f}}}", "scenario", "pod-to-pod",
                     "placement", pl, "test", "TCP_RR", "reverse", 0, "status", "ok", "aggregate",
                     "latency_us", "p50", p50);
}

static void test_outlier_ring_attributes_the_slow_node(void **state)
{
    /* ring n1->n2->...->n6->n1; n4 slow: pairs n3->n4 and n4->n5 are slow */
    const char *names[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
    json_t *md = json_object(), *nodes = json_array(), *pairs = json_array(), *rows = json_array();
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;

    for (int i = 0; i < 6; i++) {
        json_array_append_new(nodes, json_pack("{s:s, s:s, s:s}", "name", names[i], "instance_type",
                                               "m5.large", "zone", "z1"));
        json_array_append_new(
            pairs, json_pack("{s:s, s:s}", "client", names[i], "server", names[(i + 1) % 6]));
        json_array_append_new(rows, rr_row(names[i], i == 2 || i == 3 ? 900.0 : 100.0 + i));
    }
    json_object_set_new(
        md, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", pairs, "nodes", nodes));
    outlier_annotate(md, rows);
    for (int i = 0; i < 6; i++) {
        const json_t *n = json_array_get(nodes, (size_t)i);
        assert_string_equal(json_string_value(json_object_get(n, "verdict")),
                            i == 3 ? "outlier" : "ok");
    }
    assert_int_equal(json_array_size(json_object_get(json_object_get(md, "sweep"), "outliers")), 1);
    f = open_memstream(&buf, &len);
    outlier_print(md, false, f);
    fclose(f);
    assert_non_null(strstr(buf, "1 outlier "));
    assert_non_null(strstr(buf, "outlier    n4"));
    assert_non_null(strstr(buf, "pod-to-pod TCP_RR p50 us 900.0"));
    free(buf);
    /* the heat map: one row marked, its cell red and flagged */
    buf = NULL;
    f = open_memstream(&buf, &len);
    outlier_html(md, f);
    fclose(f);
    assert_non_null(strstr(buf, "<h3>Sweep: 6 nodes, 1 outlier, 0 suspects</h3>"));
    assert_non_null(strstr(buf, "<tr class=\"outlier\"><td>n4</td><td><b>outlier</b>"));
    assert_null(strstr(strstr(buf, "class=\"outlier\"") + 1, "class=\"outlier\""));
    assert_non_null(strstr(buf, "background:rgb(255,80,120)\" title=\"outlier\"><b>&#9888; 900.0"));
    free(buf);
    json_decref(rows);
    json_decref(md);
}

static void test_outlier_skipped_node_keeps_its_reason(void **state)
{
    /* n4 went NotReady: its verdict is "skipped" (not an outlier, even with slow figures) */
    const char *names[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
    json_t *md = json_object(), *nodes = json_array(), *pairs = json_array(), *rows = json_array();
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;

    for (int i = 0; i < 6; i++) {
        json_array_append_new(nodes, json_pack("{s:s, s:s, s:s}", "name", names[i], "instance_type",
                                               "m5.large", "zone", "z1"));
        json_array_append_new(
            pairs, json_pack("{s:s, s:s}", "client", names[i], "server", names[(i + 1) % 6]));
        json_array_append_new(rows, rr_row(names[i], i == 3 ? 900.0 : 100.0 + i));
    }
    json_object_set_new(json_array_get(nodes, 3), "skipped",
                        json_string("node n4 is NotReady: Ready=Unknown"));
    json_object_set_new(
        md, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", pairs, "nodes", nodes));
    outlier_annotate(md, rows);
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 3), "verdict")),
                        "skipped");
    assert_int_equal(json_array_size(json_object_get(json_object_get(md, "sweep"), "outliers")), 0);
    f = open_memstream(&buf, &len);
    outlier_print(md, false, f);
    fclose(f);
    assert_non_null(strstr(buf, "skipped    n4"));
    assert_non_null(strstr(buf, "; node n4 is NotReady: Ready=Unknown"));
    free(buf);
    json_decref(rows);
    json_decref(md);
}

/* a deterministic standard normal (LCG + Box-Muller): the same synthetic groups every run */
static double normal(unsigned long long *seed)
{
    double u1, u2;

    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    u1 = ((double)(*seed >> 11) + 1) / 9007199254740994.0;
    *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
    u2 = (double)(*seed >> 11) / 9007199254740992.0;
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static void test_outlier_floor_finds_a_10x_node_in_a_noisy_small_group(void **state)
{
    /* issue 31: a 5-node kube-sim, TCP_STREAM at --parallel 2, one node's links at 1 Gbit/s:
     * the healthy nodes spread 7.8-15.9 Gb/s (pairs of a round share the CPUs), so the MAD is
     * about a third of the median and the slow node's z-score is under 1; the floor (at or
     * below half the median) flags it, and only it */
    const double tp[] = {7800, 12100, 920, 15900, 9600};
    const char *g[] = {"k", "k", "k", "k", "k"};
    int verdict[5];
    double z[5];
    (void)state;

    outlier_judge(tp, g, 5, true, verdict, z);
    for (int i = 0; i < 5; i++)
        assert_int_equal(verdict[i], i == 2 ? OUTLIER_YES : OUTLIER_OK);
    assert_true(z[2] < OUTLIER_Z); /* the old rule (z only) could not see it */
}

static void test_outlier_within_noise_is_not_flagged(void **state)
{
    /* the same noisy group with a node at 0.62x the median: within the spread the others show */
    const double noisy[] = {7800, 12100, 6000, 15900, 9600};
    /* identical nodes (1% jitter) and one 15% slower: under the 25% a person would act on */
    const double tight[] = {1000, 1010, 990, 1005, 850, 995};
    const char *g[] = {"k", "k", "k", "k", "k", "k"};
    int verdict[6];
    double z[6];
    (void)state;

    outlier_judge(noisy, g, 5, true, verdict, z);
    for (int i = 0; i < 5; i++)
        assert_int_equal(verdict[i], OUTLIER_OK);
    outlier_judge(tight, g, 6, true, verdict, z);
    assert_true(z[4] > OUTLIER_Z);
    for (int i = 0; i < 6; i++)
        assert_int_equal(verdict[i], OUTLIER_OK);
}

/* n node values of a ring sweep on a contended simulator, each the better of the node's two
 * pairs (client i -> i+1 and client i-1 -> i) as outlier_annotate takes them. A pair's p50
 * latency is about 26 us, or about 35 us in the slow mode (its ends kept on different CPUs) for
 * a share `slow_pct` of the pairs, with 5% lognormal jitter; its throughput lognormal with
 * sigma 0.25 (5-95% of pairs 0.66-1.5x: the 2x spread of a contended kube-sim). */
static void synthetic_group(double *lat, double *tp, size_t n, int slow_pct,
                            unsigned long long seed)
{
    double *pl = calloc(n, sizeof(double)), *pt = calloc(n, sizeof(double));

    for (size_t i = 0; i < n; i++) {
        bool slow = (int)((i * 7919 + seed) % 100) < slow_pct;
        pl[i] = (slow ? 35.0 : 26.0) * exp(0.05 * normal(&seed));
        pt[i] = 10000 * exp(0.25 * normal(&seed));
    }
    for (size_t i = 0; i < n; i++) {
        size_t prev = (i + n - 1) % n;
        lat[i] = fmin(pl[i], pl[prev]);
        tp[i] = fmax(pt[i], pt[prev]);
    }
    free(pl);
    free(pt);
}

static void test_outlier_500_healthy_nodes_none_flagged(void **state)
{
    enum { N = 500 };
    double *lat = calloc(N, sizeof(double)), *tp = calloc(N, sizeof(double));
    double *lat2 = calloc(N, sizeof(double)), *tp2 = calloc(N, sizeof(double));
    const char **g = calloc(N, sizeof(char *));
    int *verdict = calloc(N, sizeof(int));
    (void)state;

    for (size_t i = 0; i < N; i++)
        g[i] = "m5.large";
    /* 20 synthetic sweeps, the slow mode in 0% to 38% of the pairs: a few nodes flagged
     * (suspects, the odd node just past the floor), the runner's second look measures up to 8
     * of them again (a fresh sample of both pairs; the node keeps its best); after it at most
     * one healthy node in the 20 sweeps is an outlier (the suspects beyond 8 stay suspects) */
    bool *looked_at = calloc(N, sizeof(bool));
    int still = 0;
    for (int run = 0; run < 20; run++) {
        unsigned long long seed = 1000 + (unsigned long long)run;
        synthetic_group(lat, tp, N, run * 2, seed);
        for (int m = 0; m < 2; m++) {
            double *v = m ? tp : lat;
            int flagged = 0;
            outlier_judge(v, g, N, m == 1, verdict, NULL);
            for (size_t i = 0; i < N; i++)
                flagged += verdict[i] != OUTLIER_OK;
            if (getenv("OUTLIER_VERBOSE"))
                fprintf(stderr, "%s, slow mode %d%%: %d flagged\n", m ? "tp" : "lat", run * 2,
                        flagged);
            synthetic_group(lat2, tp2, N, run * 2, seed + 7777);
            for (size_t i = 0, looked = 0; i < N; i++) {
                looked_at[i] = verdict[i] != OUTLIER_OK && looked < 8; /* --confirm-outliers */
                looked += looked_at[i];
                if (looked_at[i])
                    v[i] = m ? fmax(v[i], tp2[i]) : fmin(v[i], lat2[i]);
            }
            outlier_judge(v, g, N, m == 1, verdict, NULL);
            for (size_t i = 0; i < N; i++) /* a suspect not looked at again stays a suspect */
                still += verdict[i] == OUTLIER_YES || (verdict[i] && looked_at[i]);
        }
    }
    if (getenv("OUTLIER_VERBOSE"))
        fprintf(stderr, "after the second look: %d flagged in 20 sweeps\n", still);
    /* 1 here: a latency suspect in the slow mode again when looked at (a share of the pairs
     * squared: the 1 in 20 sweeps that a second sample cannot rule out) */
    assert_true(still <= 1);
    /* one node's link at a tenth of the median and one at 1.6x the latency of the fast mode,
     * in the same group (both pairs of each): the first is an outlier, the second a suspect
     * (slow once), the third (2.2x) an outlier */
    synthetic_group(lat, tp, N, 0, 7);
    tp[123] = 920;
    lat[321] = 26.0 * 1.6;
    lat[17] = 26.0 * 2.2;
    outlier_judge(tp, g, N, true, verdict, NULL);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(verdict[i], i == 123 ? OUTLIER_YES : OUTLIER_OK);
    outlier_judge(lat, g, N, false, verdict, NULL);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(verdict[i], i == 17    ? OUTLIER_YES
                                     : i == 321 ? OUTLIER_SUSPECT
                                                : OUTLIER_OK);
    free(lat);
    free(tp);
    free(lat2);
    free(tp2);
    free(looked_at);
    free(g);
    free(verdict);
}

static json_t *stream_row(const char *client, double mbps)
{
    char pl[64];

    snprintf(pl, sizeof(pl), "node:%s", client);
    return json_pack("{s:s, s:s, s:s, s:b, s:s, s:{s:f}}", "scenario", "pod-to-pod", "placement",
                     pl, "test", "TCP_STREAM", "reverse", 0, "status", "ok", "aggregate",
                     "throughput_mbps", mbps);
}

/* a 5-node ring sweep of TCP_STREAM; node-3's links at 1 Gbit/s both ways, so both of its pairs
 * (node-2 -> node-3, node-3 -> node-4) ran at about 920 Mb/s */
static json_t *five_node_stream_sweep(json_t **rows)
{
    const char *names[] = {"node-1", "node-2", "node-3", "node-4", "node-5"};
    const double pair_mbps[] = {12100, 930, 916, 15900, 7800}; /* client i -> i+1 */
    json_t *md = json_object(), *nodes = json_array(), *pairs = json_array();

    *rows = json_array();
    for (int i = 0; i < 5; i++) {
        json_array_append_new(
            nodes, json_pack("{s:s, s:s}", "name", names[i], "instance_type", "kube-sim"));
        json_array_append_new(
            pairs, json_pack("{s:s, s:s}", "client", names[i], "server", names[(i + 1) % 5]));
        json_array_append_new(*rows, stream_row(names[i], pair_mbps[i]));
    }
    json_object_set_new(
        md, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", pairs, "nodes", nodes));
    return md;
}

static void test_outlier_ring_stream_flags_the_rate_limited_node_and_reports_spread(void **state)
{
    json_t *rows, *md = five_node_stream_sweep(&rows);
    const json_t *sweep = json_object_get(md, "sweep"), *sp;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)state;

    outlier_annotate(md, rows);
    for (int i = 0; i < 5; i++)
        assert_string_equal(
            json_string_value(json_object_get(
                json_array_get(json_object_get(sweep, "nodes"), (size_t)i), "verdict")),
            i == 2 ? "outlier" : "ok");
    assert_int_equal(json_array_size(json_object_get(sweep, "outliers")), 1);
    assert_int_equal(json_array_size(json_object_get(sweep, "suspects")), 0);
    /* node values: 12100 (node-5 -> node-1 is 7800), 12100, 930, 15900, 15900 */
    sp = json_array_get(json_object_get(sweep, "spread"), 0);
    assert_string_equal(json_string_value(json_object_get(sp, "metric")),
                        "pod-to-pod TCP_STREAM Mb/s");
    assert_int_equal(json_integer_value(json_object_get(sp, "nodes")), 5);
    assert_true(json_number_value(json_object_get(sp, "median")) == 12100);
    assert_true(json_number_value(json_object_get(sp, "min")) == 930);
    f = open_memstream(&buf, &len);
    outlier_print(md, false, f);
    fclose(f);
    assert_non_null(strstr(buf, "1 outlier ("));
    assert_non_null(strstr(buf, "spread     pod-to-pod TCP_STREAM Mb/s, kube-sim: 5 nodes, "
                                "median 12100.0"));
    assert_non_null(strstr(buf, "outlier    node-3"));
    assert_non_null(strstr(buf, "Mb/s 930.0 (0.08x the median"));
    free(buf);
    /* after a second look that did not reach node-3 (past its cap): slow once, a suspect */
    json_object_set_new((json_t *)sweep, "confirmed", json_pack("[s]", "node-1"));
    outlier_annotate(md, rows);
    assert_int_equal(json_array_size(json_object_get(sweep, "outliers")), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(sweep, "suspects"), 0)),
                        "node-3");
    json_object_set_new((json_t *)sweep, "confirmed", json_pack("[s]", "node-3"));
    outlier_annotate(md, rows);
    assert_string_equal(json_string_value(json_array_get(json_object_get(sweep, "outliers"), 0)),
                        "node-3");
    json_decref(rows);
    json_decref(md);
}

static void test_outlier_suspect_is_an_outlier_once_measured_again(void **state)
{
    /* n4 at 1.5x: a suspect after the first pass (the runner looks at it again); once in
     * sweep.confirmed and still slow (its best sample), an outlier */
    const char *names[] = {"n1", "n2", "n3", "n4", "n5", "n6"};
    json_t *md = json_object(), *nodes = json_array(), *pairs = json_array(), *rows = json_array();
    json_t *sweep;
    (void)state;

    for (int i = 0; i < 6; i++) {
        json_array_append_new(
            nodes, json_pack("{s:s, s:s}", "name", names[i], "instance_type", "m5.large"));
        json_array_append_new(
            pairs, json_pack("{s:s, s:s}", "client", names[i], "server", names[(i + 1) % 6]));
        json_array_append_new(rows, rr_row(names[i], i == 2 || i == 3 ? 150.0 : 100.0 + i));
    }
    json_object_set_new(
        md, "sweep",
        json_pack("{s:s, s:o, s:o}", "pairing", "ring", "pairs", pairs, "nodes", nodes));
    sweep = json_object_get(md, "sweep");
    outlier_annotate(md, rows);
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 3), "verdict")),
                        "suspect");
    assert_int_equal(json_array_size(json_object_get(sweep, "outliers")), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(sweep, "suspects"), 0)),
                        "n4");
    json_object_set_new(sweep, "confirmed", json_pack("[s]", "n4"));
    outlier_annotate(md, rows);
    assert_string_equal(json_string_value(json_object_get(json_array_get(nodes, 3), "verdict")),
                        "outlier");
    assert_int_equal(json_array_size(json_object_get(sweep, "suspects")), 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(sweep, "outliers"), 0)),
                        "n4");
    json_decref(rows);
    json_decref(md);
}

static void test_outlier_no_sweep_is_a_no_op(void **state)
{
    json_t *md = json_pack("{s:s}", "backend", "local"), *rows = json_array();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    (void)state;

    outlier_annotate(md, rows);
    assert_int_equal(json_object_size(md), 1);
    outlier_print(md, false, f);
    fclose(f);
    assert_int_equal(len, 0);
    free(buf);
    json_decref(rows);
    json_decref(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outlier_flags_the_slow_one_per_type),
        cmocka_unit_test(test_outlier_only_the_worse_side_and_a_real_gap),
        cmocka_unit_test(test_outlier_zero_mad),
        cmocka_unit_test(test_outlier_ring_attributes_the_slow_node),
        cmocka_unit_test(test_outlier_no_sweep_is_a_no_op),
        cmocka_unit_test(test_outlier_skipped_node_keeps_its_reason),
        cmocka_unit_test(test_outlier_floor_finds_a_10x_node_in_a_noisy_small_group),
        cmocka_unit_test(test_outlier_within_noise_is_not_flagged),
        cmocka_unit_test(test_outlier_500_healthy_nodes_none_flagged),
        cmocka_unit_test(test_outlier_ring_stream_flags_the_rate_limited_node_and_reports_spread),
        cmocka_unit_test(test_outlier_suspect_is_an_outlier_once_measured_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
