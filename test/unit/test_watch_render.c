/* SPDX-License-Identifier: Apache-2.0 */
/* test_watch_render.c - the kperf.watch/v1 document as text: the longest outage over every
 * path and kind, an outage's time from the watch's start (the probe's own start offset
 * added), one table row per path and kind, FAILED paths, the outage list and the verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/report/watch_render.h"

static const char doc_text[] =
    "{\"schema\":\"kperf.watch/v1\",\"start_unix_s\":1000.0,\"max_outage_s\":1.0,"
    "\"paths\":["
    "{\"path\":\"pod-to-pod/same-node\",\"error\":null,\"probe\":{\"start_unix_s\":1000.25,"
    " \"probes\":{\"udp\":{\"sent\":500,\"lost\":0,\"outages_total\":0,\"outages\":[],"
    "  \"longest_outage_s\":0,\"longest_gap_s\":0.01,\"latency_us\":{\"p50\":80.5,\"p99\":200},"
    "  \"connection\":{\"resets\":0}}}}},"
    "{\"path\":\"pod-to-pod/other-node\",\"error\":null,\"probe\":{\"start_unix_s\":1000.5,"
    " \"probes\":{\"udp\":{\"sent\":500,\"lost\":200,\"outages_total\":1,"
    "  \"outages\":[{\"start_s\":1.0,\"end_s\":3.0,\"length_s\":2.0,\"lost\":200,\"open\":false}],"
    "  \"longest_outage_s\":2.0,\"longest_gap_s\":2.01,\"latency_us\":{\"p50\":90,\"p99\":300},"
    "  \"connection\":{\"resets\":1}},"
    "  \"connect\":{\"sent\":50,\"lost\":25,\"outages_total\":1,"
    "  \"outages\":[{\"start_s\":1.0,\"end_s\":3.5,\"length_s\":2.5,\"lost\":25,\"open\":true}],"
    "  \"longest_outage_s\":2.5,\"longest_gap_s\":2.6,\"latency_us\":{\"p50\":100,\"p99\":400}}}}},"
    "{\"path\":\"host-to-host/same-node\",\"error\":\"no probe document (boom)\",\"probe\":null}"
    "]}";

static json_t *doc(void)
{
    json_error_t e;
    json_t *d = json_loads(doc_text, 0, &e);
    if (!d)
        fail_msg("fixture: %s at %d", e.text, e.position);
    return d;
}

static char *render(const json_t *d, enum watch_format fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    watch_render(d, fmt, f);
    fclose(f);
    return buf;
}

static void longest_and_offsets(void **state)
{
    json_t *d = doc();
    const json_t *p = json_array_get(json_object_get(d, "paths"), 1);
    const json_t *o = json_array_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(p, "probe"), "probes"), "udp"),
            "outages"),
        0);
    (void)state;

    assert_true(watch_longest_outage(d) == 2.5);
    assert_true(watch_outage_at(d, p, o) == 1.5); /* probe started 0.5 s after the watch */
    json_decref(d);
}

static void table(void **state)
{
    json_t *d = doc();
    char *t = render(d, WATCH_TABLE);
    (void)state;

    assert_non_null(strstr(t, "pod-to-pod/same-node       udp          500       0        0"));
    assert_non_null(strstr(t, "pod-to-pod/other-node      udp          500     200        1"));
    assert_non_null(strstr(t, "pod-to-pod/other-node      connect       50      25"));
    assert_non_null(strstr(t, "host-to-host/same-node     FAILED: no probe document (boom)"));
    assert_non_null(strstr(t, "pod-to-pod/other-node udp: 2.000 s at +1.500 s (200 lost)\n"));
    assert_non_null(strstr(t, "connect: 2.500 s at +1.500 s (25 lost), still going at the end"));
    assert_non_null(strstr(t, "Longest outage 2.500 s (limit 1.000 s): EXCEEDED"));
    free(t);
    json_decref(d);
}

static void markdown_and_json(void **state)
{
    json_t *d = doc();
    char *m = render(d, WATCH_MARKDOWN), *j = render(d, WATCH_JSON);
    json_t *back;
    (void)state;

    assert_non_null(
        strstr(m, "| pod-to-pod/other-node | udp | 500 | 200 | 1 | 2.000 | 2.010 | 1 |"));
    assert_non_null(strstr(m, "* pod-to-pod/other-node udp: 2.000 s at +1.500 s"));
    back = json_loads(j, 0, NULL);
    assert_non_null(back);
    assert_true(json_equal(back, d));
    json_decref(back);
    free(m);
    free(j);
    json_decref(d);
}

static void html_timeline(void **state)
{
    json_t *d = doc();
    char *h;
    (void)state;

    json_object_set_new(d, "duration_s", json_real(8.0));
    json_object_set_new(d, "run_id", json_string("kpl<b>"));
    json_object_set_new(
        d, "command",
        json_pack("{s:[s], s:i, s:f}", "argv", "./x&y.sh", "exit_code", 0, "end_s", 4.0));
    h = render(d, WATCH_HTML);
    assert_non_null(strstr(h, "<!DOCTYPE html>"));
    assert_null(strstr(h, "<script"));
    assert_non_null(strstr(h, "kpl&lt;b&gt;")); /* escaped */
    assert_null(strstr(h, "kpl<b>"));
    assert_non_null(strstr(h, "<code>./x&amp;y.sh</code>"));
    /* one lane label per path, the failed one says so */
    assert_non_null(strstr(h, ">pod-to-pod/same-node</text>"));
    assert_non_null(strstr(h, ">pod-to-pod/other-node</text>"));
    assert_non_null(strstr(h, ">host-to-host/same-node</text>"));
    assert_non_null(strstr(h, "no probe document: no probe document (boom)"));
    /* the udp outage: 2 s at +1.5 s on an 8 s axis of 760 px from x=230 */
    assert_non_null(strstr(h, "x=\"372.5\""));
    assert_non_null(strstr(h, "width=\"190.0\""));
    assert_non_null(strstr(h, "<title>udp outage: 2.000 s at +1.500 s (200 lost)</title>"));
    assert_non_null(strstr(h, "<title>the command ran until +4.000 s</title>"));
    assert_non_null(strstr(h, "Longest outage 2.500 s (limit 1.000 s): EXCEEDED"));
    /* the verdict and the table lead, then the chart; ticks in plain seconds */
    assert_non_null(strstr(h, "id=\"summary\""));
    assert_non_null(strstr(h, "<h2>Timeline"));
    assert_true(strstr(h, "EXCEEDED") < strstr(h, "id=\"summary\""));
    assert_true(strstr(h, "id=\"summary\"") < strstr(h, "<h2>Timeline"));
    assert_non_null(strstr(h, ">8 s</text>"));
    free(h);
    json_decref(d);
}

static void no_outage(void **state)
{
    json_t *d = doc();
    json_t *paths = json_object_get(d, "paths");
    char *t;
    (void)state;

    json_array_remove(paths, 2);
    json_array_remove(paths, 1);
    t = render(d, WATCH_TABLE);
    assert_non_null(strstr(t, "\nNo outage.\n"));
    assert_non_null(strstr(t, "Longest outage 0.000 s (limit 1.000 s): ok"));
    assert_true(watch_longest_outage(d) == 0);
    free(t);
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(longest_and_offsets), cmocka_unit_test(table),
        cmocka_unit_test(markdown_and_json),   cmocka_unit_test(html_timeline),
        cmocka_unit_test(no_outage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
