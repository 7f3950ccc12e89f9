/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_pullsecret.c - --image-pull-secret: when it is copied, from where, and the copy
 * (type, data, run labels, where it came from); the agent pods reference the copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/k8s/k8s_objects.h"
#include "controller/k8s/k8s_pullsecret.h"

static void test_k8s_pullsecret_copied_without_n_or_from_another_namespace(void **state)
{
    struct k8s_pull_secret ps;
    struct kp_err err = {{0}};
    (void)state;

    assert_int_equal(k8s_pullsecret_parse("regcred", NULL, &ps, &err), 0);
    assert_null(ps.src_ns); /* the context's namespace */
    assert_string_equal(ps.name, "regcred");
    assert_true(ps.copy);
    k8s_pullsecret_cleanup(&ps);
    assert_int_equal(k8s_pullsecret_parse("team-a/reg.cred", NULL, &ps, &err), 0);
    assert_string_equal(ps.src_ns, "team-a");
    assert_string_equal(ps.name, "reg.cred");
    assert_true(ps.copy);
    k8s_pullsecret_cleanup(&ps);
    /* -n: the pods reference it there, as a Pod must; another NS is copied into -n's */
    assert_int_equal(k8s_pullsecret_parse("regcred", "kperf", &ps, &err), 0);
    assert_false(ps.copy);
    k8s_pullsecret_cleanup(&ps);
    assert_int_equal(k8s_pullsecret_parse("kperf/regcred", "kperf", &ps, &err), 0);
    assert_false(ps.copy);
    k8s_pullsecret_cleanup(&ps);
    assert_int_equal(k8s_pullsecret_parse("team-a/regcred", "kperf", &ps, &err), 0);
    assert_true(ps.copy);
    k8s_pullsecret_cleanup(&ps);
    assert_int_equal(k8s_pullsecret_parse(NULL, NULL, &ps, &err), 0);
    assert_null(ps.name);
    assert_false(ps.copy);
}

static void test_k8s_pullsecret_bad_names(void **state)
{
    struct k8s_pull_secret ps;
    struct kp_err err = {{0}};
    (void)state;

    assert_int_equal(k8s_pullsecret_parse("a/b/c", NULL, &ps, &err), -1);
    assert_string_equal(kp_err_msg(&err),
                        "--image-pull-secret: 'b/c' is not a Secret name (NAME or NS/NAME)");
    assert_int_equal(k8s_pullsecret_parse("Reg", NULL, &ps, &err), -1);
    assert_int_equal(k8s_pullsecret_parse("/reg", NULL, &ps, &err), -1);
    assert_string_equal(kp_err_msg(&err), "--image-pull-secret: '' is not a namespace name");
    assert_int_equal(k8s_pullsecret_parse("te.am/reg", NULL, &ps, &err), -1);
    assert_int_equal(k8s_pullsecret_parse("ns/", NULL, &ps, &err), -1);
}

static void test_k8s_pullsecret_copy_keeps_type_and_data_with_run_labels(void **state)
{
    struct k8s_objects_opts o = {.run_id = "r1", .ns = "kperf-r1"};
    json_t *src = json_pack("{s:s, s:{s:s, s:s}, s:{s:s}}", "type", K8S_DOCKER_CONFIG_JSON,
                            "metadata", "name", "regcred", "namespace", "team-a", "data",
                            ".dockerconfigjson", "eyJhdXRocyI6e319");
    json_t *copy = k8s_pullsecret_object(&o, src, "team-a/regcred");
    const json_t *md = json_object_get(copy, "metadata");
    json_t *ph;
    (void)state;

    assert_string_equal(json_string_value(json_object_get(md, "name")), K8S_PULL_SECRET_NAME);
    assert_string_equal(json_string_value(json_object_get(md, "namespace")), "kperf-r1");
    assert_string_equal(json_string_value(json_object_get(copy, "type")), K8S_DOCKER_CONFIG_JSON);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(copy, "data"), ".dockerconfigjson")),
        "eyJhdXRocyI6e319");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(md, "labels"), K8S_LABEL_RUN_ID)), "r1");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(md, "labels"), K8S_LABEL_MANAGED_BY)),
        "kperf");
    assert_string_equal(json_string_value(json_object_get(json_object_get(md, "annotations"),
                                                          K8S_PULL_COPIED_FROM)),
                        "team-a/regcred");
    assert_null(json_object_get(md, "uid")); /* nothing of the source's identity */
    /* kperf manifests: placeholder data, never a credential */
    ph = k8s_pullsecret_object(&o, NULL, "(context)/regcred");
    assert_null(json_object_get(ph, "data"));
    assert_non_null(json_object_get(json_object_get(ph, "stringData"), ".dockerconfigjson"));
    json_decref(ph);
    json_decref(copy);
    json_decref(src);
}

static void test_k8s_pullsecret_pods_reference_the_copy(void **state)
{
    struct k8s_objects_opts o = {.run_id = "r1",
                                 .ns = "kperf-r1",
                                 .image = "reg.io/kperf/kperf-agent@sha256:0123456789abcdef0123456"
                                          "789abcdef0123456789abcdef0123456789abcdef",
                                 .port = 5201,
                                 .pull_secret = K8S_PULL_SECRET_NAME};
    struct k8s_server_set set = {.node_a = "n1", .pod_network = 1};
    json_t *copy = k8s_pullsecret_object(&o, NULL, "default/regcred");
    json_t *objs, *ds, *spec;
    struct kp_err err = {{0}};
    (void)state;

    o.pull_secret_copy = copy;
    assert_int_equal(k8s_objects_check(&o, &err), 0);
    objs = k8s_objects_server_objects(&o, &set, 1, NULL);
    /* Namespace, ServiceAccount, token Secret, the copy, then the DaemonSet */
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_array_get(objs, 3), "metadata"), "name")),
                        K8S_PULL_SECRET_NAME);
    ds = json_array_get(objs, 4);
    spec = json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec");
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(spec, "imagePullSecrets"), 0), "name")),
                        K8S_PULL_SECRET_NAME);
    /* the digest reference is deployed unchanged */
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(spec, "containers"), 0), "image")),
                        o.image);
    json_decref(objs);
    json_decref(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_pullsecret_copied_without_n_or_from_another_namespace),
        cmocka_unit_test(test_k8s_pullsecret_bad_names),
        cmocka_unit_test(test_k8s_pullsecret_copy_keeps_type_and_data_with_run_labels),
        cmocka_unit_test(test_k8s_pullsecret_pods_reference_the_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
