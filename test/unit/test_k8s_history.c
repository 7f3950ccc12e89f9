/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_history.c - the run history in ConfigMaps (controller/k8s/k8s_history.h) against the
 * fixture API server: the object a run becomes, retention per key, the listing oldest first,
 * ConfigMaps that are not runs skipped, names and sizes refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test/unit/kube_fixture.h"

#include "controller/k8s/k8s_history.h"

#define KEY_A "k8s/m5.large_m5.large/aws-node/v1.18.0"
#define KEY_B "k8s/m5.large_m5.large/aws-node/v1.19.0"

static json_t *history_items(const char *selector)
{
    struct kube_client *c = fx_token_client();
    struct kube_list_opts lo = {.label_selector = selector};
    struct kp_err err = {{0}};
    json_t *items = NULL;

    assert_int_equal(kube_list_all(c, &KUBE_RES_CONFIGMAPS, "kperf", &lo, &items, &err), 0);
    kube_client_free(c);
    return items;
}

static void add(struct kube_client *c, const char *key, const char *file, const char *text,
                size_t keep)
{
    struct kp_err err = {{0}};
    char *obj = NULL;

    assert_int_equal(
        k8s_history_add(c, "kperf", "kperf-history", key, file, text, keep, &obj, &err), 0);
    assert_non_null(strstr(obj, "configmap/kperf-history-"));
    free(obj);
}

static void test_k8s_history_run_object_and_retention(void **state)
{
    struct kube_client *c = fx_token_client();
    json_t *items, *cm;
    (void)state;

    add(c, KEY_A, "2026-12-01T02-17-00Z-r1.json", "{\"n\":1}", 2);
    add(c, KEY_A, "2026-12-02T02-17-00Z-r2.json", "{\"n\":2}", 2);
    add(c, KEY_B, "2026-12-02T03-00-00Z-r9.json", "{\"n\":9}", 2); /* another key: its own */
    add(c, KEY_A, "2026-12-03T02-17-00Z-r3.json", "{\"n\":3}", 2); /* drops r1 */
    items = history_items("kperf.io/history=kperf-history");
    assert_int_equal(json_array_size(items), 3);
    size_t i;
    json_array_foreach(items, i, cm)
    {
        const json_t *md = json_object_get(cm, "metadata");
        const char *file = json_string_value(
            json_object_get(json_object_get(md, "annotations"), "kperf.io/history-file"));
        assert_non_null(file);
        assert_null(strstr(file, "r1.json"));
        /* never the label kperf cleanup removes by */
        assert_null(json_object_get(json_object_get(md, "labels"), "app.kubernetes.io/managed-by"));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(md, "labels"), "kperf.io/history")),
            "kperf-history");
    }
    json_decref(items);
    kube_client_free(c);
}

static void test_k8s_history_runs_oldest_first_and_skips_strangers(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kp_err err = {{0}};
    json_t *runs = NULL;
    size_t skipped = 0;
    (void)state;

    add(c, KEY_A, "2026-12-02T02-17-00Z-r2.json", "{\"n\":2}", 5);
    add(c, KEY_A, "2026-12-01T02-17-00Z-r1.json", "{\"n\":1}", 5);
    /* a ConfigMap of the history whose key would climb out of a folder: not a run */
    json_t *bad =
        json_loads("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": "
                   "\"kperf-history-bad\", \"labels\": {\"kperf.io/history\": \"kperf-history\"}, "
                   "\"annotations\": {\"kperf.io/history-key\": \"../../etc/x\", "
                   "\"kperf.io/history-file\": \"a.json\"}}, \"data\": {\"report.json\": \"{}\"}}",
                   0, NULL);
    assert_non_null(bad);
    assert_int_equal(kube_create(c, &KUBE_RES_CONFIGMAPS, "kperf", bad, NULL, NULL, &err), 0);
    json_decref(bad);
    assert_int_equal(k8s_history_runs(c, "kperf", "kperf-history", &runs, &skipped, &err), 0);
    assert_int_equal(skipped, 1);
    assert_int_equal(json_array_size(runs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 0), "file")),
                        "2026-12-01T02-17-00Z-r1.json");
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 1), "text")),
                        "{\"n\":2}");
    assert_string_equal(json_string_value(json_object_get(json_array_get(runs, 1), "key")), KEY_A);
    json_decref(runs);
    kube_client_free(c);
}

static void test_k8s_history_refuses_big_reports_and_bad_names(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kp_err err = {{0}};
    size_t n = K8S_HISTORY_MAX_BYTES + 1;
    char *big = kp_xmalloc(n + 1);
    const char *name = NULL;
    json_t *items;
    (void)state;

    memset(big, 'x', n);
    big[n] = 0;
    assert_int_equal(
        k8s_history_add(c, "kperf", "kperf-history", KEY_A, "a.json", big, 3, NULL, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "more than a ConfigMap holds"));
    assert_non_null(strstr(kp_err_msg(&err), "--history DIR"));
    items = history_items("kperf.io/history");
    assert_int_equal(json_array_size(items), 0); /* nothing sent */
    json_decref(items);
    free(big);

    assert_int_equal(k8s_history_name("configmap:kperf-history", &name, &err), 0);
    assert_string_equal(name, "kperf-history");
    assert_int_equal(k8s_history_name("configmap:", &name, &err), -1);
    assert_int_equal(k8s_history_name("configmap:Kperf", &name, &err), -1);
    assert_int_equal(k8s_history_name("configmap:-x", &name, &err), -1);
    assert_int_equal(
        k8s_history_name("configmap:a-name-that-is-longer-than-forty-characters", &name, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "e.g. configmap:kperf-history"));
    assert_true(k8s_history_is_cm("configmap:x"));
    assert_false(k8s_history_is_cm("/history/runs"));
    kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_k8s_history_run_object_and_retention, fx_reset),
        cmocka_unit_test_setup(test_k8s_history_runs_oldest_first_and_skips_strangers, fx_reset),
        cmocka_unit_test_setup(test_k8s_history_refuses_big_reports_and_bad_names, fx_reset),
    };
    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
