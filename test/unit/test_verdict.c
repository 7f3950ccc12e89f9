/* SPDX-License-Identifier: Apache-2.0 */
/* test_verdict.c - the verdict of a comparison as a nightly sends it out (verdict.h): the exit
 * status (0, 3, 5), the termination message's one line, the gauges and the chat message, from
 * synthetic reports (compare_fixture.h) and hand-made kperf.compare/v1 documents. With
 * KPERF_WRITE_FIXTURES=DIR it also writes noisy-base.json / noisy-worse.json (an inconclusive
 * pair) for e2e.compare_notify. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "controller/report/verdict.h"
#include "test/unit/compare_fixture.h"

static json_t *doc_of(const struct spec *b, const struct spec *n, const char *bn, const char *nn)
{
    struct compare *cmp = run(b, n, bn, nn);
    json_t *doc = compare_to_json(cmp);

    compare_free(cmp);
    return doc;
}

static void test_verdict_regression_line_names_the_row(void **state)
{
    struct spec b = {11, 8, 20, 9000, 1, 0, NULL, 0, 0}, n = {12, 8, 20, 8000, 1, 0, NULL, 0, 0};
    json_t *doc = doc_of(&b, &n, NULL, NULL);
    char *line;
    (void)state;

    assert_int_equal(verdict_status(doc), VERDICT_EXIT_REGRESSION);
    line = verdict_line(doc, verdict_status(doc));
    assert_non_null(strstr(line, "kperf: regression (exit 3): 1 of 2 rows: pod-to-pod other-node "
                                 "TCP_STREAM Mb/s -1"));
    assert_null(strchr(line, '\n'));
    free(line);
    json_decref(doc);
}

static void test_verdict_noise_wider_than_threshold_is_inconclusive(void **state)
{
    struct spec b = {33, 3, 20, 9000, 12, 0, NULL, 0, 0}, n = {34, 3, 20, 8400, 12, 0, NULL, 0, 0};
    json_t *doc = doc_of(&b, &n, "noisy-base", "noisy-worse");
    char *line;
    (void)state;

    assert_int_equal(verdict_status(doc), VERDICT_EXIT_INCONCLUSIVE);
    line = verdict_line(doc, VERDICT_EXIT_INCONCLUSIVE);
    assert_non_null(strstr(line, "kperf: inconclusive (exit 5): 1 of 2 rows: pod-to-pod "
                                 "other-node TCP_STREAM Mb/s -"));
    free(line);
    json_decref(doc);
}

static void test_verdict_same_runs_are_ok(void **state)
{
    struct spec b = {21, 8, 20, 9000, 1, 0, NULL, 0, 0}, n = {22, 8, 20, 9000, 1, 0, NULL, 0, 0};
    json_t *doc = doc_of(&b, &n, NULL, NULL);
    char *line;
    (void)state;

    assert_int_equal(verdict_status(doc), VERDICT_EXIT_OK);
    line = verdict_line(doc, VERDICT_EXIT_OK);
    assert_string_equal(line, "kperf: ok (exit 0): no regression in 2 rows compared");
    free(line);
    /* a node slower to enforce a NetworkPolicy is a regression by itself (metadata.netpol) */
    json_object_set_new(json_object_get(doc, "summary"), "netpol_regressions", json_integer(1));
    assert_int_equal(verdict_status(doc), VERDICT_EXIT_REGRESSION);
    json_decref(doc);
}

/* A document by hand: one regressed row with a scenario name of `len` bytes holding a newline. */
static json_t *hand_doc(size_t len)
{
    char *name = kp_xcalloc(len + 1, 1);
    json_t *doc;

    memset(name, 'a', len);
    name[1] = '\n';
    doc = json_pack("{s:[{s:s, s:s, s:s, s:b, s:s, s:s, s:[{s:s, s:s, s:f}]}], s:{s:i}}", "rows",
                    "scenario", name, "placement", "same-node", "test", "TCP_RR", "reverse", 0,
                    "ip_family", "IPv6", "verdict", "regression", "metrics", "metric", "p99",
                    "verdict", "regression", "delta_pct", 23.14, "summary", "regressions", 1);
    free(name);
    return doc;
}

static void test_verdict_line_is_one_line_within_the_kubelet_limit(void **state)
{
    json_t *doc = hand_doc(10000);
    char *line = verdict_line(doc, verdict_status(doc));
    (void)state;

    assert_true(strlen(line) <= VERDICT_MESSAGE_MAX - 1);
    assert_true(strlen(line) < 400); /* a row's key is cut, not the line */
    assert_null(strchr(line, '\n'));
    assert_non_null(strstr(line, "kperf: regression (exit 3): 1 of 1 row: a aaaa"));
    free(line);
    json_decref(doc);
}

static void test_verdict_gauges(void **state)
{
    json_t *doc = hand_doc(3);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    (void)state;

    verdict_openmetrics(doc, "eu\"1", VERDICT_EXIT_REGRESSION, f);
    fclose(f);
    assert_non_null(strstr(text, "# TYPE kperf_verdict gauge\nkperf_verdict{scenario=\"a\\na\","
                                 "placement=\"same-node\",test=\"TCP_RR\",direction=\"forward\","
                                 "ip_family=\"IPv6\",cluster=\"eu\\\"1\"} 3\n"));
    assert_non_null(strstr(text, "kperf_compare_status{cluster=\"eu\\\"1\"} 3\n# EOF\n"));
    free(text);
    json_decref(doc);
}

static void test_verdict_slack_message(void **state)
{
    json_t *doc = hand_doc(3), *msg, *blocks;
    char *line = verdict_line(doc, VERDICT_EXIT_REGRESSION);
    (void)state;

    msg = verdict_slack(doc, VERDICT_EXIT_REGRESSION, "prod", "https://r.example/n/");
    assert_string_equal(json_string_value(json_object_get(msg, "text")), line);
    blocks = json_object_get(msg, "blocks");
    assert_int_equal(json_array_size(blocks), 3);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_array_get(blocks, 0), "text"), "text")),
                        "*kperf regression* on cluster `prod` (exit 3)");
    assert_non_null(strstr(json_string_value(json_object_get(
                               json_object_get(json_array_get(blocks, 1), "text"), "text")),
                           "regression: a a same-node TCP_RR [IPv6] p99 +23.1%"));
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(json_object_get(json_array_get(blocks, 2), "elements"), 0), "text")),
        "<https://r.example/n/report.html|report> · "
        "<https://r.example/n/compare.html|comparison>");
    json_decref(msg);
    msg = verdict_slack(doc, VERDICT_EXIT_REGRESSION, "prod", NULL); /* no links */
    assert_int_equal(json_array_size(json_object_get(msg, "blocks")), 2);
    json_decref(msg);
    free(line);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verdict_regression_line_names_the_row),
        cmocka_unit_test(test_verdict_noise_wider_than_threshold_is_inconclusive),
        cmocka_unit_test(test_verdict_same_runs_are_ok),
        cmocka_unit_test(test_verdict_line_is_one_line_within_the_kubelet_limit),
        cmocka_unit_test(test_verdict_gauges),
        cmocka_unit_test(test_verdict_slack_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
