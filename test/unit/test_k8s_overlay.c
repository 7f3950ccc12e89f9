/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_overlay.c - the pod template overlay: merge rules, refusals, schema field names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_overlay.h"

static json_t *js(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad JSON in test: %s", e.text);
    return j;
}

static void assert_json_eq(const json_t *got, const char *want)
{
    json_t *w = js(want);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got %s, want %s", g, want);
    }
    json_decref(w);
}

static void test_k8s_overlay_merge_rules(void **state)
{
    json_t *t = js("{\"a\": {\"x\": 1, \"y\": 2}, \"l\": [1, 2], \"d\": 5,"
                   " \"containers\": [{\"name\": \"server\", \"image\": \"i\", \"env\": [1]},"
                   " {\"name\": \"side\", \"image\": \"s\"}]}");
    json_t *p = js("{\"a\": {\"y\": 3, \"z\": {\"k\": null, \"v\": 1}}, \"l\": [9], \"d\": null,"
                   " \"containers\": [{\"name\": \"server\", \"env\": [2], \"tty\": true},"
                   " {\"name\": \"new\", \"image\": \"n\", \"stdin\": null}]}");
    (void)state;
    k8s_overlay_merge(t, p);
    /* maps merge, other lists replace, null deletes (and means nothing where nothing was),
     * containers merge by name and new names append */
    assert_json_eq(t, "{\"a\": {\"x\": 1, \"y\": 3, \"z\": {\"v\": 1}}, \"l\": [9],"
                      " \"containers\": [{\"name\": \"server\", \"image\": \"i\", \"env\": [2],"
                      " \"tty\": true}, {\"name\": \"side\", \"image\": \"s\"},"
                      " {\"name\": \"new\", \"image\": \"n\"}]}");
    json_decref(t);
    json_decref(p);
}

static void test_k8s_overlay_other_kperf_container_is_not_added(void **state)
{
    json_t *t = js("{\"containers\": [{\"name\": \"client\", \"image\": \"i\"}]}");
    json_t *p = js("{\"containers\": [{\"name\": \"server\", \"env\": []}]}");
    (void)state;
    k8s_overlay_merge(t, p);
    assert_json_eq(t, "{\"containers\": [{\"name\": \"client\", \"image\": \"i\"}]}");
    json_decref(t);
    json_decref(p);
}

struct refusal {
    const char *overlay;
    const char *why;
};

static void test_k8s_overlay_check_refuses(void **state)
{
    static const struct refusal cases[] = {
        {"[]", "must be a map"},
        {"{\"kind\": \"Pod\"}", "unknown top-level field 'kind'"},
        {"{\"metadata\": {\"name\": \"x\"}}", "metadata.name: only labels and annotations"},
        {"{\"metadata\": {\"labels\": {\"kperf.io/role\": \"x\"}}}", "kperf's own label"},
        {"{\"metadata\": {\"labels\": {\"app.kubernetes.io/managed-by\": \"x\"}}}",
         "kperf's own label"},
        {"{\"metadata\": {\"labels\": {\"a\": \"-x\"}}}", "not a valid label value"},
        {"{\"metadata\": {\"annotations\": {\"a b\": \"x\"}}}", "not a valid key"},
        {"{\"spec\": {\"hostNetwrk\": true}}", "spec.hostNetwrk is not a PodSpec field"},
        {"{\"spec\": {\"hostNetwork\": true}}", "spec.hostNetwork is decided by kperf"},
        {"{\"spec\": {\"affinity\": {\"nodeAffinity\": {}}}}", "nodeAffinity is decided"},
        {"{\"spec\": {\"containers\": [{\"image\": \"x\"}]}}", "needs a name"},
        {"{\"spec\": {\"containers\": [{\"name\": \"s\", \"imagee\": \"x\"}]}}",
         "spec.containers[s].imagee is not a Container field"},
        {"{\"spec\": {\"containers\": [{\"name\": \"server\", \"image\": \"x\"}]}}",
         "spec.containers[server].image: kperf's own container"},
        {"{\"spec\": {\"containers\": [{\"name\": \"client\", \"args\": []}]}}",
         "spec.containers[client].args"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct kp_err err;
        json_t *o = js(cases[i].overlay);
        kp_err_clear(&err);
        assert_int_equal(k8s_overlay_check(o, &err), -1);
        if (!strstr(kp_err_msg(&err), cases[i].why))
            fail_msg("%s: '%s' lacks '%s'", cases[i].overlay, kp_err_msg(&err), cases[i].why);
        json_decref(o);
    }
}

static void test_k8s_overlay_check_accepts_a_sidecar_and_settings(void **state)
{
    struct kp_err err;
    json_t *o = js("{\"metadata\": {\"labels\": {\"team\": \"net\", \"gone\": null},"
                   " \"annotations\": {\"karpenter.sh/do-not-disrupt\": \"true\"}},"
                   " \"spec\": {\"containers\": [{\"name\": \"server\", \"env\": []},"
                   " {\"name\": \"shipper\", \"image\": \"x\"}], \"runtimeClassName\": \"r\"}}");
    (void)state;
    assert_int_equal(k8s_overlay_check(o, &err), 0);
    json_decref(o);
}

static const struct k8s_objects_opts opts = {
    .run_id = "20261130-090000-abcdef",
    .ns = "kperf-x",
    .image = "registry.example/kperf-agent:0.1.0",
    .port = 5201,
    .job_deadline_s = 300,
    .job_ttl_s = 600,
};

static void test_k8s_overlay_apply_checks_the_result(void **state)
{
    json_t *ds = k8s_objects_server_daemonset(&opts, "pod", "a", "node-1");
    json_t *tmpl = json_object_get(json_object_get(ds, "spec"), "template");
    json_t *bad = js("{\"spec\": {\"volumes\": [{\"name\": \"other\", \"emptyDir\": {}}]}}");
    json_t *noimg = js("{\"spec\": {\"containers\": [{\"name\": \"side\"}]}}");
    json_t *ok = js("{\"spec\": {\"volumes\": [{\"name\": \"token\", \"emptyDir\": {}}]}}");
    struct kp_err err;
    (void)state;
    assert_int_equal(k8s_overlay_apply(tmpl, ok, &err), 0);
    assert_int_equal(k8s_overlay_apply(tmpl, noimg, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "spec.containers[side] has no image"));
    json_decref(ds);
    ds = k8s_objects_server_daemonset(&opts, "pod", "a", "node-1");
    tmpl = json_object_get(json_object_get(ds, "spec"), "template");
    assert_int_equal(k8s_overlay_apply(tmpl, bad, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "mounts volume 'token'"));
    json_decref(ds);
    json_decref(bad);
    json_decref(noimg);
    json_decref(ok);
}

/* the builders apply every setting, kperf's labels win, the overlay comes last */
static void test_k8s_overlay_builders_apply_the_pod_template(void **state)
{
    struct k8s_objects_opts o = opts;
    json_t *labels = js("{\"team\": \"net\"}");
    json_t *ann = js("{\"a.example/x\": \"1\"}");
    json_t *res = js("{\"requests\": {\"cpu\": \"1\"}, \"limits\": {\"cpu\": \"2\"}}");
    json_t *ov = js("{\"spec\": {\"containers\": [{\"name\": \"client\", \"tty\": true}],"
                    " \"priorityClassName\": \"from-overlay\"}}");
    const char *args[] = {"client", NULL};
    struct k8s_client_job job = {.name = "kperf-c-x-0",
                                 .node_hostname = "node-1",
                                 .scenario = "pod-to-pod",
                                 .placement = "same-node",
                                 .args = args};
    json_t *j, *t, *c;
    (void)state;
    o.pod_labels = labels;
    o.pod_annotations = ann;
    o.priority_class = "flag";
    o.agent_resources = res;
    o.pod_overlay = ov;
    j = k8s_objects_client_job(&o, &job);
    t = json_object_get(json_object_get(j, "spec"), "template");
    c = json_array_get(json_object_get(json_object_get(t, "spec"), "containers"), 0);
    assert_json_eq(json_object_get(json_object_get(t, "metadata"), "annotations"),
                   "{\"a.example/x\": \"1\"}");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(t, "metadata"), "labels"), "team")),
                        "net");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(t, "spec"), "priorityClassName")),
        "from-overlay");
    assert_json_eq(json_object_get(c, "resources"),
                   "{\"requests\": {\"cpu\": \"1\", \"memory\": \"64Mi\"},"
                   " \"limits\": {\"cpu\": \"2\", \"memory\": \"512Mi\"}}");
    assert_true(json_is_true(json_object_get(c, "tty")));
    json_decref(j);
    json_decref(labels);
    json_decref(ann);
    json_decref(res);
    json_decref(ov);
}

/* the field lists are those of the schema kube-sim validates against */
static void assert_fields_match_schema(const json_t *schemas, const char *type)
{
    char *key = kp_xasprintf("io.k8s.api.core.v1.%s", type);
    json_t *props = json_object_get(json_object_get(schemas, key), "properties");
    size_t n = 0;
    const char *const *f = k8s_overlay_known_fields(type, &n);

    assert_non_null(props);
    assert_int_equal(n, json_object_size(props));
    for (size_t i = 0; i < n; i++) {
        if (!json_object_get(props, f[i]))
            fail_msg("%s.%s is not in the schema", type, f[i]);
    }
    free(key);
}

static void test_k8s_overlay_fields_are_the_schemas(void **state)
{
    const char *data = getenv("KPERF_TEST_DATA");
    char *path;
    json_t *doc;
    json_error_t e;
    (void)state;
    if (!data)
        skip();
    path = kp_xasprintf("%s/../../kube-sim/schemas/openapi-subset.json", data);
    doc = json_load_file(path, 0, &e);
    if (!doc)
        fail_msg("%s: %s", path, e.text);
    assert_fields_match_schema(json_object_get(json_object_get(doc, "components"), "schemas"),
                               "PodSpec");
    assert_fields_match_schema(json_object_get(json_object_get(doc, "components"), "schemas"),
                               "Container");
    json_decref(doc);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_overlay_merge_rules),
        cmocka_unit_test(test_k8s_overlay_other_kperf_container_is_not_added),
        cmocka_unit_test(test_k8s_overlay_check_refuses),
        cmocka_unit_test(test_k8s_overlay_check_accepts_a_sidecar_and_settings),
        cmocka_unit_test(test_k8s_overlay_apply_checks_the_result),
        cmocka_unit_test(test_k8s_overlay_builders_apply_the_pod_template),
        cmocka_unit_test(test_k8s_overlay_fields_are_the_schemas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
