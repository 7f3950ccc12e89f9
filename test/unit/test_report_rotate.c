/* SPDX-License-Identifier: Apache-2.0 */
/* test_report_rotate.c - run folders for a nightly history: {time} expansion from the report's
 * start time, run-name recognition, the "latest" link, retention by count that removes only
 * report folders and leaves a folder with foreign files and every non-run entry alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/report/report_rotate.h"

static void test_expand(void **state)
{
    char *s;

    (void)state;
    s = report_dir_expand("/history/{time}", "2026-12-01T02:17:00Z");
    assert_string_equal(s, "/history/20261201T021700Z");
    free(s);
    s = report_dir_expand("a-{time}/b-{time}", "2026-12-01T02:17:00.123Z");
    assert_string_equal(s, "a-20261201T021700Z/b-20261201T021700Z");
    free(s);
    s = report_dir_expand("plain", "2026-12-01T02:17:00Z");
    assert_string_equal(s, "plain");
    free(s);
    s = report_dir_expand("{time}", "not a time"); /* now: still a run name */
    assert_true(report_dir_is_run_name(s));
    free(s);
}

static void test_run_name(void **state)
{
    (void)state;
    assert_true(report_dir_is_run_name("20261201T021700Z"));
    assert_false(report_dir_is_run_name("20261201T021700"));
    assert_false(report_dir_is_run_name("2026120xT021700Z"));
    assert_false(report_dir_is_run_name("latest"));
    assert_false(report_dir_is_run_name("20261201T021700Z1"));
}

static void touch(const char *dir, const char *name, const char *file)
{
    char *p = kp_xasprintf("%s/%s", dir, name);
    FILE *f;

    mkdir(p, 0755);
    free(p);
    p = kp_xasprintf("%s/%s/%s", dir, name, file);
    f = fopen(p, "w");
    assert_non_null(f);
    fputs("{}\n", f);
    fclose(f);
    free(p);
}

static bool exists(const char *dir, const char *name)
{
    char *p = kp_xasprintf("%s/%s", dir, name);
    struct stat st;
    bool ok = lstat(p, &st) == 0;

    free(p);
    return ok;
}

static void test_rotate(void **state)
{
    char dir[] = "/tmp/kperf-rotate.XXXXXX", link[64] = "";
    char *lp;
    struct kp_err err = {{0}};
    size_t removed = 99;
    ssize_t n;

    (void)state;
    assert_non_null(mkdtemp(dir));
    touch(dir, "20261128T021700Z", "report.json");
    touch(dir, "20261129T021700Z", "report.json");
    touch(dir, "20261129T021700Z", "report.html");
    touch(dir, "20261129T021700Z", ".kperf-0123456789abcdef.tmp"); /* a killed writer's */
    touch(dir, "20261129T021700Z", ".report.md.tmp");              /* and an older kperf's */
    touch(dir, "20261130T021700Z", "report.json");
    touch(dir, "20261130T021700Z", "notes.txt"); /* someone's file: the folder stays */
    touch(dir, "20261201T021700Z", "report.json");
    touch(dir, "baseline", "report.json"); /* not a run name: never touched */
    assert_int_equal(report_dir_rotate(dir, "20261201T021700Z", 1, &removed, &err), 0);
    assert_int_equal(removed, 2);
    assert_false(exists(dir, "20261128T021700Z"));
    assert_false(exists(dir, "20261129T021700Z"));
    assert_true(exists(dir, "20261130T021700Z/notes.txt"));
    assert_false(exists(dir, "20261130T021700Z/report.json"));
    assert_true(exists(dir, "20261201T021700Z/report.json"));
    assert_true(exists(dir, "baseline/report.json"));
    lp = kp_xasprintf("%s/latest", dir);
    n = readlink(lp, link, sizeof(link) - 1);
    assert_int_equal(n, 16);
    assert_string_equal(link, "20261201T021700Z");
    /* keep 0: only the link moves */
    touch(dir, "20261202T021700Z", "report.json");
    assert_int_equal(report_dir_rotate(dir, "20261202T021700Z", 0, &removed, &err), 0);
    assert_int_equal(removed, 0);
    assert_true(exists(dir, "20261201T021700Z/report.json"));
    memset(link, 0, sizeof(link));
    assert_int_equal(readlink(lp, link, sizeof(link) - 1), 16);
    assert_string_equal(link, "20261202T021700Z");
    /* a "latest" that is not a link is refused, and left as it is */
    assert_int_equal(unlink(lp), 0);
    touch(dir, "latest", "report.json");
    assert_int_equal(report_dir_rotate(dir, "20261202T021700Z", 0, &removed, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "latest: it is a directory"));
    assert_true(exists(dir, "latest/report.json"));
    free(lp);
    /* a folder that is not there */
    assert_int_equal(report_dir_rotate("/nonexistent/kperf", "20261202T021700Z", 3, &removed, &err),
                     -1);
    assert_non_null(strstr(kp_err_msg(&err), "/nonexistent/kperf"));
    lp = kp_xasprintf("rm -rf '%s'", dir);
    assert_int_equal(system(lp), 0);
    free(lp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_run_name),
        cmocka_unit_test(test_rotate),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
