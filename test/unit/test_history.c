/* SPDX-License-Identifier: Apache-2.0 */
/* test_history.c - the history directory: key folders from metadata (sanitized: a report cannot
 * write outside DIR), atomic adds (no temporary left), retention by count, listing, and the
 * comparable runs of a report (same cluster, node pair and CNI, any version, oldest first,
 * without the run itself). */
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
#include "controller/report/history.h"
#include "controller/report/report.h"
#include "test/unit/report_fixture.h"

/* A one-row report of the given metadata. */
static struct report *run_at(const char *start, const char *cluster, const char *cni_version)
{
    struct report *rep = report_new();
    struct kp_err err = {{0}};
    json_t *doc =
        fx_agent_doc(json_pack("[o]", fx_stream_sample("TCP_STREAM", 0, false, 900, 0)), NULL);

    if (report_group_add_doc(report_group_get(rep, "pod-to-pod", "other-node", false), doc, &err) !=
        0)
        fail_msg("%s", kp_err_msg(&err));
    json_decref(doc);
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
    return rep;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_key_is_sanitized),
        cmocka_unit_test(test_history_add_list_retain_comparable),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
