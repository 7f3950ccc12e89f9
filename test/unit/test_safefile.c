/* SPDX-License-Identifier: Apache-2.0 */
/* test_safefile.c - the safe writer (base/safefile.h): a whole file with the umask's mode and
 * nothing else left in the folder; a symbolic link or a folder in the target's place refused
 * with the link's target untouched; leftovers of crashed writers removed (a link among them not
 * followed), a file of another name kept; a second writer refused while the folder is locked;
 * an uncommitted write leaves the old file; the "latest" link replaced, a file in its place
 * refused. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/safefile.h"

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/kperf-test-safefile.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *at(const char *name) /* dir/name; caller frees */
{
    return kp_xasprintf("%s/%s", dir, name);
}

/* The folder's entries, sorted, joined by spaces (caller frees). */
static char *entries(void)
{
    struct dirent **list;
    int n = scandir(dir, &list, NULL, alphasort);
    char *s = kp_xstrdup(""), *t;

    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0) {
            t = kp_xasprintf("%s%s%s", s, *s ? " " : "", list[i]->d_name);
            free(s);
            s = t;
        }
        free(list[i]);
    }
    free(list);
    return s;
}

static char *slurp(const char *path) /* caller frees */
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    size_t n;

    assert_non_null(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    fclose(f);
    return kp_xstrdup(buf);
}

static void assert_entries(const char *want)
{
    char *got = entries();
    assert_string_equal(got, want);
    free(got);
}

static void assert_content(const char *name, const char *want)
{
    char *p = at(name), *got = slurp(p);
    assert_string_equal(got, want);
    free(got);
    free(p);
}

static void test_safefile_writes_whole_file_with_umask_mode(void **state)
{
    char *p = at("report.json");
    struct kp_err err = {{0}};
    mode_t old = umask(027);
    struct stat st;

    (void)state;
    assert_int_equal(safefile_write_text(p, "{\"a\": 1}\n", &err), 0);
    assert_int_equal(safefile_write_text(p, "{\"a\": 2}\n", &err), 0); /* replaced */
    umask(old);
    assert_content("report.json", "{\"a\": 2}\n");
    assert_int_equal(lstat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_entries("report.json");
    free(p);
}

static void test_safefile_refuses_a_symlink_target(void **state)
{
    char *p = at("report.md"), *victim = at("victim");
    struct kp_err err = {{0}};
    struct stat st;

    (void)state;
    assert_int_equal(safefile_write_text(victim, "precious\n", &err), 0);
    assert_int_equal(symlink(victim, p), 0);
    assert_int_equal(safefile_write_text(p, "report\n", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "refusing to replace"));
    assert_non_null(strstr(kp_err_msg(&err), "a symbolic link"));
    assert_content("victim", "precious\n");
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_entries("report.md victim");
    unlink(p);
    assert_int_equal(mkdir(p, 0755), 0); /* a folder in its place */
    assert_int_equal(safefile_write_text(p, "report\n", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "a directory"));
    assert_int_equal(rmdir(p), 0);
    free(victim);
    free(p);
}

static void test_safefile_removes_leftovers_not_others(void **state)
{
    char *p = at("report.csv"), *victim = at("victim"), *ln = at(".kperf-fedcba9876543210.tmp");
    struct kp_err err = {{0}};
    static const char *const left[] = {".kperf-0123456789abcdef.tmp", ".tmp-Ab12Cd"};
    static const char *const kept[] = {".kperf-mine.tmp", "notes.tmp"};

    (void)state;
    for (size_t i = 0; i < 2; i++) {
        char *q = at(left[i]), *k = at(kept[i]);
        assert_int_equal(safefile_write_text(k, "user's\n", &err), 0);
        FILE *f = fopen(q, "w"); /* a crashed writer's partial file */
        assert_non_null(f);
        fputs("{\"par", f);
        fclose(f);
        free(q);
        free(k);
    }
    assert_int_equal(safefile_write_text(victim, "precious\n", &err), 0);
    assert_int_equal(symlink(victim, ln), 0); /* a leftover link is removed, not followed */
    assert_int_equal(safefile_write_text(p, "a,b\n", &err), 0);
    assert_entries(".kperf-mine.tmp notes.tmp report.csv victim");
    assert_content("victim", "precious\n");
    free(ln);
    free(victim);
    free(p);
}

static void test_safefile_second_writer_refused_while_locked(void **state)
{
    char *p = at("watch.json"), *stale = at(".kperf-00112233445566ff.tmp");
    struct safefile_opts o = {.lock_wait_ms = 50};
    struct kp_err err = {{0}};
    struct safefile *sf = NULL;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    FILE *f;

    (void)state;
    assert_true(fd >= 0);
    f = fopen(stale, "w"); /* a live writer's file, as far as anyone can tell */
    assert_non_null(f);
    fclose(f);
    assert_int_equal(flock(fd, LOCK_EX), 0);
    assert_int_equal(safefile_begin(p, &o, &sf, &err), -1);
    assert_null(sf);
    assert_non_null(strstr(kp_err_msg(&err), "another kperf is writing in"));
    assert_entries(".kperf-00112233445566ff.tmp"); /* untouched while locked */
    assert_int_equal(flock(fd, LOCK_UN), 0);
    assert_int_equal(safefile_begin(p, &o, &sf, &err), 0);
    fputs("{}\n", safefile_stream(sf));
    assert_int_equal(safefile_commit(sf, &err), 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1); /* held until close */
    safefile_close(sf);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
    close(fd);
    assert_entries("watch.json");
    free(stale);
    free(p);
}

static void test_safefile_uncommitted_leaves_the_old_file(void **state)
{
    char *p = at("report.html");
    struct kp_err err = {{0}};
    struct safefile *sf;

    (void)state;
    assert_int_equal(safefile_write_text(p, "old\n", &err), 0);
    assert_int_equal(safefile_begin(p, NULL, &sf, &err), 0);
    fputs("new but unfinished", safefile_stream(sf));
    fflush(safefile_stream(sf));
    safefile_close(sf);
    assert_content("report.html", "old\n");
    assert_entries("report.html");
    assert_int_equal(safefile_write_text("/nonexistent-kperf/x.json", "x", &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "cannot open folder /nonexistent-kperf"));
    free(p);
}

static void test_safefile_symlink_replaces_a_link_only(void **state)
{
    char *p = at("latest"), target[64];
    struct kp_err err = {{0}};
    ssize_t n;

    (void)state;
    assert_int_equal(safefile_symlink("20261201T021700Z", p, &err), 0);
    assert_int_equal(safefile_symlink("20261202T021700Z", p, &err), 0);
    n = readlink(p, target, sizeof(target) - 1);
    assert_int_equal(n, 16);
    target[n] = 0;
    assert_string_equal(target, "20261202T021700Z");
    assert_entries("latest");
    unlink(p);
    assert_int_equal(safefile_write_text(p, "a file\n", &err), 0);
    assert_int_equal(safefile_symlink("20261203T021700Z", p, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "not a link kperf wrote"));
    assert_content("latest", "a file\n");
    assert_entries("latest");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_safefile_writes_whole_file_with_umask_mode, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_safefile_refuses_a_symlink_target, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_safefile_removes_leftovers_not_others, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_safefile_second_writer_refused_while_locked, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_safefile_uncommitted_leaves_the_old_file, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(test_safefile_symlink_replaces_a_link_only, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
