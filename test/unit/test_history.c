/* SPDX-License-Identifier: Apache-2.0 */
/* test_history.c - the history directory: key folders from metadata (sanitized: a report cannot
 * write outside DIR), atomic adds (no temporary left), retention by count, listing, and the
 * comparable runs of a report (same cluster, node pair and CNI, any version, oldest first,
 * without the run itself); compare and the trend page match the same rows (base/rowkey.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/report/compare.h"
#include "controller/report/history.h"
#include "controller/report/history_html.h"
#include "controller/report/report.h"
#include "test/unit/report_fixture.h"

/* One TCP_STREAM sample of mbps in the row (placement, family, reverse) of pod-to-pod. */
static void add_stream(struct report *rep, const char *placement, const char *family, bool reverse,
                       double mbps)
{
    struct kp_err err = {{0}};
    json_t *doc =
        fx_agent_doc(json_pack("[o]", fx_stream_sample("TCP_STREAM", 0, reverse, mbps, 0)), NULL);

    if (report_group_add_doc(report_group_get_family(rep, "pod-to-pod", placement, family, reverse),
                             doc, &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
}

/* The metadata of a run of the series prod|staging / node pair / cilium, then report_finish. */
static void finish_run(struct report *rep, const char *start, const char *cluster,
                       const char *cni_version)
{
    struct kp_err err = {{0}};

    json_object_set_new(report_metadata(rep), "backend", json_string("k8s"));
    json_object_set_new(report_metadata(rep), "start_time", json_string(start));
    if (cluster)
        json_object_set_new(report_metadata(rep), "cluster", json_string(cluster));
    json_object_set_new(report_metadata(rep), "cni",
                        json_pack("{s:s, s:s}", "name", "cilium", "version", cni_version));
    json_object_set_new(report_metadata(rep), "nodes",
                        json_pack("[{s:s, s:s, s:s}, {s:s, s:s}]", "name", "ip-10-0-0-1", "role",
                                  "server", "instance_type", "m5.large", "name", "ip-10-0-0-2",
                                  "role", "client"));
    assert_int_equal(report_finish(rep, &err), 0);
}

/* A one-row report of the given metadata and throughput. */
static struct report *run_mbps(const char *start, const char *cluster, const char *cni_version,
                               double mbps)
{
    struct report *rep = report_new();

    add_stream(rep, "other-node", NULL, false, mbps);
    finish_run(rep, start, cluster, cni_version);
    return rep;
}

static struct report *run_at(const char *start, const char *cluster, const char *cni_version)
{
    return run_mbps(start, cluster, cni_version, 900);
}

static void test_history_key_is_sanitized(void **state)
{
    struct report *a = run_at("2026-11-01T02:00:00Z", "../../etc", "1.16.1");
    struct report *b = run_at("2026-11-01T02:00:00Z", NULL, "");
    char *k;
    (void)state;

    k = history_key(a, NULL);
    assert_string_equal(k, "_._.._etc/ip-10-0-0-2_m5.large/cilium/1.16.1");
    free(k);
    k = history_key(b, "prod/eks");
    assert_string_equal(k, "prod_eks/ip-10-0-0-2_m5.large/cilium/unknown");
    free(k);
    k = history_key(b, NULL);
    assert_string_equal(k, "k8s/ip-10-0-0-2_m5.large/cilium/unknown");
    free(k);
    report_free(a);
    report_free(b);
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void test_history_add_list_retain_comparable(void **state)
{
    char dir[] = "/tmp/kperf-history-XXXXXX", *path = NULL, **paths, cmd[600], folder[512];
    struct kp_err err = {{0}};
    struct report *r;
    long n;
    (void)state;

    assert_non_null(mkdtemp(dir));
    for (int day = 1; day <= 6; day++) { /* 6 runs of 1.16.1, one of 1.17.0, one elsewhere */
        char t[32];
        snprintf(t, sizeof(t), "2026-11-%02dT02:00:00Z", day);
        r = run_at(t, "prod", "1.16.1");
        assert_int_equal(history_add(dir, r, NULL, 4, &path, &err), 0);
        report_free(r);
        assert_null(strchr(strrchr(path, '/'), ':')); /* no ':' in a file name */
        free(path);
    }
    snprintf(folder, sizeof(folder), "%s/prod/ip-10-0-0-2_m5.large/cilium/1.16.1", dir);
    assert_int_equal(count_entries(folder), 4); /* retention; no temporary file left */
    r = run_at("2026-11-07T02:00:00Z", "prod", "1.17.0");
    assert_int_equal(history_add(dir, r, NULL, 4, NULL, &err), 0);
    report_free(r);
    r = run_at("2026-11-07T02:00:00Z", "staging", "1.16.1");
    assert_int_equal(history_add(dir, r, NULL, 4, NULL, &err), 0);
    report_free(r);

    n = history_list(dir, &paths, &err);
    assert_int_equal(n, 6);
    assert_non_null(
        strstr(paths[0], "/prod/ip-10-0-0-2_m5.large/cilium/1.16.1/2026-11-03T02-00-00Z.json"));
    assert_non_null(strstr(paths[5], "/staging/"));
    history_paths_free(paths, n);

    /* the 1.17.0 run is judged against the 1.16.1 ones, and itself is left out */
    r = run_at("2026-11-07T02:00:00Z", "prod", "1.17.0");
    n = history_comparable(dir, r, NULL, &paths, &err);
    assert_int_equal(n, 4);
    assert_non_null(strstr(paths[0], "2026-11-03T02-00-00Z.json"));
    assert_non_null(strstr(paths[3], "2026-11-06T02-00-00Z.json"));
    history_paths_free(paths, n);
    report_free(r);
    r = run_at("2026-11-08T02:00:00Z", "prod", "1.17.0");
    n = history_comparable(dir, r, NULL, &paths, &err);
    assert_int_equal(n, 5);
    assert_non_null(strstr(paths[4], "/1.17.0/2026-11-07T02-00-00Z.json"));
    history_paths_free(paths, n);
    report_free(r);

    assert_int_equal(history_list("/nonexistent/kperf", &paths, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "not a history directory"));
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static bool strict;        /* trend_page's o.strict */
static char *skipped_seen; /* the last run trend_page was told it skipped (ours) */

static void on_skip(const char *path, const char *why, void *arg)
{
    (void)why, (void)arg;
    free(skipped_seen);
    skipped_seen = strdup(path);
}

/* A killed add's leftovers go on the next add; an unreadable run is skipped by
 * history_load_runs (named, and the newest `want` readable ones still loaded), or fails it when
 * strict. */
static void test_history_heals_leftovers_and_skips_bad_runs(void **state)
{
    char dir[] = "/tmp/kperf-history-XXXXXX", folder[512], cmd[900], **paths;
    struct kp_err err = {{0}};
    struct history_runs h;
    struct report *r;
    long n;
    (void)state;

    assert_non_null(mkdtemp(dir));
    for (int day = 1; day <= 4; day++) {
        char t[32];
        snprintf(t, sizeof(t), "2026-11-%02dT02:00:00Z", day);
        r = run_at(t, "prod", "1.16.1");
        assert_int_equal(history_add(dir, r, NULL, 30, NULL, &err), 0);
        report_free(r);
    }
    snprintf(folder, sizeof(folder), "%s/prod/ip-10-0-0-2_m5.large/cilium/1.16.1", dir);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && echo '{\"sch' > .tmp-Ab12Cd && echo '{' > .kperf-0123456789abcdef.tmp && "
             "echo '{\"partial' > 2026-11-03T02-00-00Z.json",
             folder);
    assert_int_equal(system(cmd), 0);
    r = run_at("2026-11-05T02:00:00Z", "prod", "1.16.1");
    assert_int_equal(history_add(dir, r, NULL, 30, NULL, &err), 0);
    assert_int_equal(count_entries(folder), 5); /* both leftovers gone, 5 runs */

    n = history_comparable(dir, r, NULL, &paths, &err); /* 4 earlier, the 3rd unreadable */
    assert_int_equal(n, 4);
    assert_int_equal(history_load_runs(paths, n, 3, false, &h, &err), 0);
    assert_int_equal(h.n, 3);
    assert_int_equal(h.n_skipped, 1);
    assert_non_null(strstr(h.skipped[0], "2026-11-03T02-00-00Z.json"));
    assert_non_null(strstr(h.paths[0], "2026-11-01T02-00-00Z.json")); /* oldest first */
    assert_non_null(strstr(h.paths[2], "2026-11-04T02-00-00Z.json"));
    history_runs_cleanup(&h);
    assert_int_equal(history_load_runs(paths, n, 0, true, &h, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "2026-11-03T02-00-00Z.json"));
    history_runs_cleanup(&h); /* clean after a failure: a no-op */
    history_paths_free(paths, n);
    report_free(r);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The trend page (history_html.h) of dir rendered into a malloc'ed string; returns the rc. */
static int trend_page(const char *dir, char **page, struct kp_err *err)
{
    size_t len = 0;
    FILE *f = open_memstream(page, &len);
    struct compare_opts co;
    struct history_trend_opts o = {.compare = &co, .runs = 5, .strict = strict, .on_skip = on_skip};
    int rc;

    assert_non_null(f);
    compare_opts_init(&co);
    rc = history_trend_html(dir, &o, f, err);
    fclose(f);
    return rc;
}

static size_t occurrences(const char *s, const char *needle)
{
    size_t n = 0;

    for (; (s = strstr(s, needle)) != NULL; s++)
        n++;
    return n;
}

/* Five runs of 1.16.1 around 900 Mb/s, then 1.17.0 at 720 (-20%), plus one run elsewhere: two
 * series; one chart per row and metric (one line each); the 1.17.0 run's Mb/s is marked as a
 * regression, as 'kperf compare --baseline' calls it; the retransmits chart has no mark. */
static void test_history_trend_page_marks_the_regression(void **state)
{
    static const double mbps[] = {900, 909, 891, 904.5, 895.5, 720};
    char dir[] = "/tmp/kperf-trend-XXXXXX", *page = NULL, cmd[600], t[32], *fig;
    struct kp_err err = {{0}};
    struct report *r;
    (void)state;

    assert_non_null(mkdtemp(dir));
    assert_int_equal(trend_page(dir, &page, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "holds no report"));
    free(page);
    for (int day = 1; day <= 6; day++) {
        snprintf(t, sizeof(t), "2026-11-%02dT02:00:00Z", day);
        r = run_mbps(t, "prod", day < 6 ? "1.16.1" : "1.17.0", mbps[day - 1]);
        assert_int_equal(history_add(dir, r, NULL, 30, NULL, &err), 0);
        report_free(r);
    }
    r = run_at("2026-11-01T02:00:00Z", "staging<b>", "1.16.1");
    assert_int_equal(history_add(dir, r, NULL, 30, NULL, &err), 0);
    report_free(r);

    assert_int_equal(trend_page(dir, &page, &err), 0);
    if (getenv("KPERF_TEST_SHOW"))
        fprintf(stderr, "%s\n", page);
    assert_non_null(strstr(page, "data-runs=\"7\" data-series=\"2\""));
    assert_non_null(strstr(page, "prod/ip-10-0-0-2_m5.large/cilium <small>(6 runs)"));
    assert_non_null(strstr(page, "<td>1.17.0</td>"));
    assert_int_equal(occurrences(page, "<path class=\"line\""),
                     occurrences(page, "<figure class=\"metric"));
    fig = strstr(page, "data-metric=\"Mb/s\"");
    assert_non_null(fig);
    assert_true(strncmp(fig, "data-metric=\"Mb/s\" data-regressions=\"1\"", 39) == 0);
    assert_non_null(strstr(fig, "class=\"mark\""));
    assert_non_null(strstr(page, "data-metric=\"retrans/GB\" data-regressions=\"0\""));
    assert_null(strstr(page, "<b>"));
    assert_null(strstr(page, "<script"));
    free(page);

    snprintf(cmd, sizeof(cmd), "echo '{' > '%s/prod/ip-10-0-0-2_m5.large/cilium/1.16.1/x.json'",
             dir);
    assert_int_equal(system(cmd), 0);
    /* one unreadable run: skipped and named, the page counts it; --strict fails naming it */
    skipped_seen = NULL;
    assert_int_equal(trend_page(dir, &page, &err), 0);
    assert_non_null(skipped_seen);
    assert_non_null(strstr(skipped_seen, "/1.16.1/x.json"));
    free(skipped_seen);
    assert_non_null(strstr(page, "data-runs=\"7\" data-series=\"2\""));
    assert_non_null(strstr(page, "data-skipped=\"1\""));
    assert_non_null(strstr(page, "1 unreadable run skipped"));
    free(page);
    strict = true;
    assert_int_equal(trend_page(dir, &page, &err), -1);
    strict = false;
    assert_non_null(strstr(kp_err_msg(&err), "x.json"));
    assert_non_null(strstr(kp_err_msg(&err), "--strict"));
    free(page);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A run of three rows as a report written before address families (no ip_family) or after
 * (ip_family "IPv4", plus an IPv6 row): the forward TCP_STREAM at fwd_mbps, its reverse, and
 * a sweep row (placement "node:ip-10-0-0-2"). */
static struct report *run_keys(const char *start, bool families, double fwd_mbps)
{
    struct report *rep = report_new();
    const char *f = families ? "IPv4" : NULL;

    add_stream(rep, "other-node", f, false, fwd_mbps);
    add_stream(rep, "other-node", f, true, 800);
    add_stream(rep, "node:ip-10-0-0-2", f, false, 700);
    if (families)
        add_stream(rep, "other-node", "IPv6", false, 500);
    finish_run(rep, start, "prod", "1.16.1");
    return rep;
}

/* compare BASE NEW: the three IPv4 rows matched (listed with ip_family IPv4), the IPv6 row only
 * on the side that has it. */
static void assert_compare_matches(const struct report *base, const struct report *cur,
                                   bool ipv6_in_new)
{
    struct kp_err err = {{0}};
    struct compare_opts co;
    struct compare *c;
    json_t *doc, *row, *only;
    size_t i, reverse = 0, sweep = 0;

    compare_opts_init(&co);
    c = compare_reports(base, cur, &co, &err);
    assert_non_null(c);
    doc = compare_to_json(c);
    assert_int_equal(json_array_size(json_object_get(doc, "rows")), 3);
    json_array_foreach(json_object_get(doc, "rows"), i, row)
    {
        assert_string_equal(json_string_value(json_object_get(row, "ip_family")), "IPv4");
        reverse += json_is_true(json_object_get(row, "reverse"));
        sweep +=
            strcmp(json_string_value(json_object_get(row, "placement")), "node:ip-10-0-0-2") == 0;
    }
    assert_int_equal(reverse, 1);
    assert_int_equal(sweep, 1);
    only = json_object_get(doc, ipv6_in_new ? "only_in_new" : "only_in_base");
    assert_int_equal(json_array_size(only), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(only, 0), "ip_family")),
                        "IPv6");
    assert_int_equal(
        json_array_size(json_object_get(doc, ipv6_in_new ? "only_in_base" : "only_in_new")), 0);
    json_decref(doc);
    compare_free(c);
}

/* The Mb/s chart of the trend page's row headed h3 (its data-regressions value), or -1. */
static int row_regressions(const char *page, const char *h3)
{
    const char *sec = strstr(page, h3), *fig, *end;

    if (!sec)
        return -1;
    fig = strstr(sec, "data-metric=\"Mb/s\" data-regressions=\"");
    end = strstr(sec, "</section>");
    if (!fig || !end || fig > end)
        return -1;
    return atoi(fig + strlen("data-metric=\"Mb/s\" data-regressions=\""));
}

/* One row key (base/rowkey.h) for compare and the trend page: a row written without ip_family
 * (reports before families) and the same row with "IPv4" are one row, in both directions of
 * compare and across the runs of a series; reverse and sweep rows too; IPv6 stays apart. The
 * trend page shows one section per row (not one per spelling) and marks the forward row's
 * -20% in the last run (judged against runs of both spellings), as compare does. */
static void test_history_compare_and_trend_match_the_same_rows(void **state)
{
    static const double fwd[] = {900, 909, 891, 904.5, 895.5, 720};
    char dir[] = "/tmp/kperf-rowkey-XXXXXX", *page = NULL, cmd[600], t[32];
    struct kp_err err = {{0}};
    struct report *old_rep = run_keys("2026-11-01T02:00:00Z", false, 900);
    struct report *new_rep = run_keys("2026-11-02T02:00:00Z", true, 900);
    (void)state;

    assert_compare_matches(old_rep, new_rep, true);
    assert_compare_matches(new_rep, old_rep, false);
    report_free(old_rep);
    report_free(new_rep);

    assert_non_null(mkdtemp(dir));
    for (int day = 1; day <= 6; day++) { /* odd days without ip_family, even days with */
        struct report *r;
        snprintf(t, sizeof(t), "2026-11-%02dT02:00:00Z", day);
        r = run_keys(t, day % 2 == 0, fwd[day - 1]);
        assert_int_equal(history_add(dir, r, NULL, 30, NULL, &err), 0);
        report_free(r);
    }
    assert_int_equal(trend_page(dir, &page, &err), 0);
    if (getenv("KPERF_TEST_SHOW"))
        fprintf(stderr, "%s\n", page);
    assert_int_equal(occurrences(page, "<section class=\"row\">"), 4);
    assert_int_equal(row_regressions(page, "<h3>pod-to-pod other-node TCP_STREAM</h3>"), 1);
    assert_int_equal(row_regressions(page, "<h3>pod-to-pod other-node TCP_STREAM (reverse)</h3>"),
                     0);
    assert_int_equal(row_regressions(page, "<h3>pod-to-pod node:ip-10-0-0-2 TCP_STREAM</h3>"), 0);
    assert_int_equal(row_regressions(page, "<h3>pod-to-pod other-node TCP_STREAM [IPv6]</h3>"), 0);
    free(page);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The form a run takes in a history kept in ConfigMaps: compact, without the per-second series
 * and the samples' counters (the row's evidence stays), readable as a report with the same rows;
 * its comparable prefix is the key less the version. */
static void test_history_compact_form_reads_back(void **state)
{
    struct report *r = report_new(), *back;
    struct kp_err err = {{0}};
    json_t *s = fx_stream_sample("TCP_STREAM", 0, false, 900, 0), *doc;
    char *text, *key, *prefix;
    size_t len;
    (void)state;

    json_object_set_new(
        s, "intervals",
        json_pack("[{s:f, s:f, s:f}]", "start_s", 0.0, "end_s", 1.0, "throughput_mbps", 900.0));
    json_object_set_new(s, "counters",
                        json_pack("{s:{s:i, s:{s:i, s:i}}}", "client", "v", 1, "deltas",
                                  "qdisc.eth0.overlimits", 816, "Tcp.RetransSegs", 12));
    doc = fx_agent_doc(json_pack("[o]", s), NULL);
    if (report_group_add_doc(report_group_get(r, "pod-to-pod", "other-node", false), doc, &err))
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    finish_run(r, "2026-11-01T02:00:00Z", "prod", "1.16.1");

    json_t *full = report_to_json(r);
    json_t *sample = json_array_get(
        json_object_get(json_array_get(json_object_get(full, "results"), 0), "samples"), 0);
    assert_non_null(json_object_get(sample, "intervals")); /* the fixture has them */
    json_decref(full);
    text = history_compact_json(r, &len);
    assert_int_equal(len, strlen(text));
    assert_null(strchr(text, '\n'));
    assert_null(strstr(text, "\"intervals\""));
    assert_null(strstr(text, "\"counters\""));     /* the samples' counters go ... */
    assert_non_null(strstr(text, "\"evidence\"")); /* ... their sums stay */
    doc = json_loads(text, 0, NULL);
    assert_non_null(doc);
    back = report_from_json(doc, &err);
    if (!back)
        fail_msg("%s", kp_err_msg(&err));
    assert_int_equal(report_row_count(back), report_row_count(r));
    { /* what compare marks the row with reads back: the shaping counter that moved */
        const json_t *ev = json_object_get(report_row(back, 0), "evidence");
        const json_t *m = json_array_get(json_object_get(ev, "moved"), 0);
        assert_int_equal(json_array_size(json_object_get(ev, "moved")), 1);
        assert_string_equal(json_string_value(json_object_get(m, "counter")),
                            "qdisc.eth0.overlimits");
        assert_int_equal(json_integer_value(json_object_get(m, "delta")), 816);
        assert_int_equal(
            json_integer_value(json_object_get(
                json_object_get(json_object_get(ev, "client"), "deltas"), "Tcp.RetransSegs")),
            12);
    }
    key = history_key(back, NULL);
    prefix = history_comparable_prefix(back, NULL);
    assert_string_equal(key, "prod/ip-10-0-0-2_m5.large/cilium/1.16.1");
    assert_string_equal(prefix, "prod/ip-10-0-0-2_m5.large/cilium/");
    free(key);
    free(prefix);
    json_decref(doc);
    free(text);
    report_free(back);
    report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_key_is_sanitized),
        cmocka_unit_test(test_history_compact_form_reads_back),
        cmocka_unit_test(test_history_add_list_retain_comparable),
        cmocka_unit_test(test_history_trend_page_marks_the_regression),
        cmocka_unit_test(test_history_compare_and_trend_match_the_same_rows),
        cmocka_unit_test(test_history_heals_leftovers_and_skips_bad_runs),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
