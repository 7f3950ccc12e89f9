/* SPDX-License-Identifier: Apache-2.0 */
/* test_kprofile.c - a row's kernel profile (kperf run --profile): its samples' profiles summed
 * with functions merged by name, an error kept when no sample could sample; the diff of two
 * rows: shares of the stack samples, the largest changes first with a caller on the same path
 * left out, the functions that appeared and vanished; a report with profiled samples passes
 * the agent's and the report's validators and shows the profile in its HTML evidence panel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_err.h"
#include "controller/report/kprofile.h"
#include "controller/report/report.h"
#include "controller/report/report_validate.h"
#include "test/unit/report_fixture.h"

/* A sample's profile of total samples; fns: name, self, stack triples ending with NULL. */
static json_t *prof(int total, ...)
{
    json_t *fns = json_array();
    va_list ap;
    const char *name;

    va_start(ap, total);
    while ((name = va_arg(ap, const char *)) != NULL) {
        int self = va_arg(ap, int), stack = va_arg(ap, int);
        json_array_append_new(
            fns, json_pack("{s:s, s:i, s:i}", "name", name, "samples", self, "stack", stack));
    }
    va_end(ap);
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o}", "hz", 997, "cpus", 2, "samples",
                     total, "other", 5, "idle", 100, "unknown", 0, "lost", 0, "functions", fns);
}

static json_t *row_of(json_t *p1, json_t *p2)
{
    json_t *row = json_pack("{s:[]}", "samples");

    json_array_append_new(json_object_get(row, "samples"), json_pack("{s:o}", "profile", p1));
    if (p2)
        json_array_append_new(json_object_get(row, "samples"), json_pack("{s:o}", "profile", p2));
    return row;
}

/* A row whose "profile" is kprofile_of_row of its samples. */
static json_t *profiled(json_t *p)
{
    json_t *row = row_of(p, NULL);

    json_object_set_new(row, "profile", kprofile_of_row(row));
    return row;
}

static const json_t *named(const json_t *list, const char *name)
{
    const json_t *e;
    size_t i;

    json_array_foreach(list, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
            return e;
    }
    return NULL;
}

static void test_kprofile_row_sums_samples(void **state)
{
    json_t *row =
        row_of(prof(100, "a", 10, 60, "b", 5, 20, NULL), prof(300, "b", 50, 200, "c", 1, 1, NULL));
    json_t *p = kprofile_of_row(row), *fns = json_object_get(p, "functions");

    (void)state;
    assert_int_equal(json_integer_value(json_object_get(p, "samples")), 400);
    assert_int_equal(json_integer_value(json_object_get(p, "other")), 10);
    assert_int_equal(json_array_size(fns), 3);
    /* merged by name, the most stack samples first */
    assert_string_equal(json_string_value(json_object_get(json_array_get(fns, 0), "name")), "b");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(fns, 0), "samples")), 55);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(fns, 0), "stack")), 220);
    assert_string_equal(json_string_value(json_object_get(json_array_get(fns, 2), "name")), "c");
    json_decref(p);
    json_decref(row);
    /* no sample profiled: no profile; every profiled sample failed: its reason */
    row = json_pack("{s:[{s:i}]}", "samples", "sample", 0);
    assert_null(kprofile_of_row(row));
    json_decref(row);
    row = row_of(json_pack("{s:s}", "error", "perf_event_open: Permission denied"), NULL);
    p = kprofile_of_row(row);
    assert_string_equal(json_string_value(json_object_get(p, "error")),
                        "perf_event_open: Permission denied");
    json_decref(p);
    json_decref(row);
}

static void test_kprofile_diff_names_what_changed(void **state)
{
    /* BASE: the send path; NEW: half as much of it, the qdisc's functions new, a lock gone.
     * tcp_sendmsg and its only caller do_writev move together: one line. */
    json_t *base = profiled(prof(1000, "do_writev", 0, 500, "tcp_sendmsg", 10, 495, "softirq", 100,
                                 400, "spin_lock", 20, 20, "noise", 1, 1, NULL));
    json_t *new_ = profiled(prof(200, "do_writev", 0, 50, "tcp_sendmsg", 2, 49, "softirq", 40, 140,
                                 "__qdisc_run", 0, 10, "tbf_dequeue", 6, 6, "rare", 2, 2, NULL));
    json_t *d = kprofile_diff(base, new_);
    const json_t *changed = json_object_get(d, "changed"), *e;

    (void)state;
    assert_non_null(d);
    assert_int_equal(json_integer_value(json_object_get(d, "base_samples")), 1000);
    assert_int_equal(json_integer_value(json_object_get(d, "new_samples")), 200);
    /* softirq 40% -> 70%: +30 points, the largest change */
    e = json_array_get(changed, 0);
    assert_string_equal(json_string_value(json_object_get(e, "name")), "softirq");
    assert_true(json_number_value(json_object_get(e, "delta_pct")) == 30.0);
    /* do_writev 50% -> 25%: -25, next; tcp_sendmsg (49.5% -> 24.5%) is on its path, left out */
    e = json_array_get(changed, 1);
    assert_string_equal(json_string_value(json_object_get(e, "name")), "do_writev");
    assert_true(json_number_value(json_object_get(e, "base_pct")) == 50.0);
    assert_true(json_number_value(json_object_get(e, "new_pct")) == 25.0);
    assert_true(json_number_value(json_object_get(e, "delta_pct")) == -25.0);
    assert_null(named(changed, "tcp_sendmsg"));
    assert_non_null(named(changed, "__qdisc_run"));
    /* appeared: at least 0.5% and 3 samples in NEW, under 0.1% in BASE, the largest first */
    e = json_object_get(d, "appeared");
    assert_int_equal(json_array_size(e), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "name")),
                        "__qdisc_run");
    assert_true(json_number_value(json_object_get(json_array_get(e, 0), "new_pct")) == 5.0);
    assert_string_equal(json_string_value(json_object_get(json_array_get(e, 1), "name")),
                        "tbf_dequeue");
    assert_null(named(e, "rare")); /* 2 samples */
    e = json_object_get(d, "vanished");
    assert_int_equal(json_array_size(e), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "name")),
                        "spin_lock");
    json_decref(d);
    /* either side without a profile (or without samples): no diff */
    assert_null(kprofile_diff(base, json_object_get(new_, "nothing")));
    json_object_del(new_, "profile");
    assert_null(kprofile_diff(base, new_));
    json_decref(base);
    json_decref(new_);
}

static void test_kprofile_diff_text(void **state)
{
    json_t *base = profiled(prof(100, "a", 1, 50, NULL));
    json_t *new_ = profiled(prof(100, "a", 1, 20, "tbf_dequeue", 5, 5, NULL));
    json_t *d = kprofile_diff(base, new_);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);

    (void)state;
    kprofile_diff_print(d, "  ", out);
    fclose(out);
    assert_non_null(
        strstr(text, "  a                                     50.0% ->  20.0%  -30.0\n"));
    assert_non_null(strstr(text, "  appeared in NEW: tbf_dequeue 5.0%\n"));
    assert_null(strstr(text, "vanished"));
    free(text);
    out = open_memstream(&text, &len); /* kperf compare -o html */
    kprofile_diff_html(d, out);
    fclose(out);
    assert_non_null(strstr(text, "<tr><td>a</td><td>50.0%</td><td>20.0%</td><td>-30.0</td></tr>"));
    assert_non_null(strstr(text, "<p>Appeared in NEW: tbf_dequeue 5.0%</p>"));
    free(text);
    json_decref(d);
    json_decref(base);
    json_decref(new_);
}

static void test_kprofile_in_the_report(void **state)
{
    json_t *sample = fx_stream_sample("TCP_STREAM", 0, false, 900.0, 0);
    json_t *doc, *saved;
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    char *html = NULL;
    size_t len = 0;
    FILE *out;

    (void)state;
    json_object_set_new(sample, "profile",
                        prof(50, "tbf_dequeue", 3, 4, "do_syscall_64", 1, 40, NULL));
    doc = fx_agent_doc(json_pack("[o]", sample), NULL);
    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "other-node", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
    json_object_set_new(report_metadata(rep), "backend", json_string("local"));
    json_object_set_new(report_metadata(rep), "start_time", json_string("2026-12-04T00:00:00Z"));
    assert_int_equal(report_finish(rep, &err), 0);
    assert_int_equal(json_integer_value(json_object_get(
                         json_object_get(report_row(rep, 0), "profile"), "samples")),
                     50);
    saved = report_to_json(rep);
    if (report_validate_doc(saved, &err) != 0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(saved);
    out = open_memstream(&html, &len);
    assert_int_equal(report_render(rep, REPORT_HTML, out, &err), 0);
    fclose(out);
    assert_non_null(strstr(html, "Kernel profile: 50 samples"));
    assert_non_null(strstr(html, "<tr><td>tbf_dequeue</td><td>6.0%</td><td>8.0%</td></tr>"));
    free(html);
    report_free(rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kprofile_row_sums_samples),
        cmocka_unit_test(test_kprofile_diff_names_what_changed),
        cmocka_unit_test(test_kprofile_diff_text),
        cmocka_unit_test(test_kprofile_in_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
