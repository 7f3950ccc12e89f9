/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_provenance.c - the CNI and kube-proxy facts read through the real client from an API
 * server (test/unit/data/kube/fixture_server.py, HTTPS on 127.0.0.1) holding the EKS objects of
 * test/unit/data/k8s/: a ConfigMap the server refuses with 403 Forbidden, or a DaemonSet list it
 * refuses, is recorded as "unknown (forbidden: ...)", never as a default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_fixture.h"

#include "controller/k8s/k8s_provenance.h"

/* Stores the EKS fixtures in kube-system: aws-node and kube-proxy, amazon-vpc-cni, EKS's
 * kube-proxy ConfigMap (a kubeconfig only) and, when with_config, kube-proxy-config. */
static void seed_eks(struct kube_client *c, int with_config)
{
    json_t *ds = fixture_json("k8s", "ds-eks-real.json");
    const char *cms[] = {"amazon-vpc-cni.json", "kube-proxy-eks.json",
                         with_config ? "kube-proxy-config-eks.json" : NULL};
    struct kp_err err = {{0}};
    size_t i;
    json_t *o, *got = NULL;

    json_array_foreach(json_object_get(ds, "items"), i, o)
    {
        assert_int_equal(kube_create(c, &KUBE_RES_DAEMONSETS, "kube-system", o, NULL, &got, &err),
                         0);
        json_decref(got);
    }
    for (i = 0; i < 3 && cms[i]; i++) {
        json_t *cm = fixture_json("k8s", cms[i]);
        assert_int_equal(kube_create(c, &KUBE_RES_CONFIGMAPS, "kube-system", cm, NULL, &got, &err),
                         0);
        json_decref(got);
        json_decref(cm);
    }
    json_decref(ds);
}

static const char *fact(const json_t *facts, const char *key)
{
    const char *v = json_string_value(json_object_get(facts, key));
    if (!v)
        fail_msg("no fact %s", key);
    return v;
}

static const char *cni_setting(const json_t *facts, const char *key)
{
    return fact(json_object_get(json_object_get(facts, "cni"), "settings"), key);
}

static void test_k8s_provenance_eks_facts_from_the_api(void **state)
{
    struct kube_client *c = fx_token_client();
    json_t *facts = json_object();
    (void)state;

    seed_eks(c, 1);
    k8s_provenance_collect(c, facts);
    assert_string_equal(fact(json_object_get(facts, "cni"), "name"), "aws-vpc-cni");
    assert_string_equal(cni_setting(facts, "prefix_delegation"), "true");
    assert_string_equal(cni_setting(facts, "network_policy"), "true");
    assert_string_equal(fact(facts, "kube_proxy_mode"), "ipvs");
    assert_string_equal(fact(facts, "kube_proxy_mode_source"),
                        "ConfigMap kube-system/kube-proxy-config key config");
    json_decref(facts);
    kube_client_free(c);
}

static void test_k8s_provenance_forbidden_config_map_is_unknown(void **state)
{
    struct kube_client *c = fx_token_client();
    json_t *facts = json_object();
    (void)state;

    seed_eks(c, 1);
    fx_do("/_fixture/queue",
          "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/kube-system/configmaps/"
          "kube-proxy-config\",\"responses\":[{\"status\":403,\"body\":{\"kind\":\"Status\","
          "\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"configmaps "
          "\\\"kube-proxy-config\\\" is forbidden: User \\\"system:serviceaccount:kperf:kperf\\\" "
          "cannot get resource \\\"configmaps\\\" in API group \\\"\\\" in the namespace "
          "\\\"kube-system\\\"\",\"reason\":\"Forbidden\",\"details\":{\"name\":"
          "\"kube-proxy-config\",\"kind\":\"configmaps\"},\"code\":403}}]}");
    k8s_provenance_collect(c, facts);
    assert_string_equal(fact(facts, "kube_proxy_mode"),
                        "unknown (forbidden: cannot get configmaps kube-proxy-config in namespace "
                        "kube-system; manifests/rbac.yaml grants it)");
    assert_string_equal(cni_setting(facts, "prefix_delegation"), "true"); /* the rest is read */
    json_decref(facts);
    kube_client_free(c);
}

static void test_k8s_provenance_forbidden_daemonsets(void **state)
{
    struct kube_client *c = fx_token_client();
    json_t *facts = json_object();
    (void)state;

    fx_do("/_fixture/queue",
          "{\"method\":\"GET\",\"path\":\"/apis/apps/v1/namespaces/kube-system/daemonsets\","
          "\"responses\":[{\"status\":403,\"body\":{\"kind\":\"Status\",\"status\":\"Failure\","
          "\"reason\":\"Forbidden\",\"code\":403,\"message\":\"daemonsets.apps is forbidden\"}}]}");
    k8s_provenance_collect(c, facts);
    assert_string_equal(fact(json_object_get(facts, "cni"), "name"),
                        "unknown (forbidden: cannot list daemonsets in namespace kube-system; "
                        "manifests/rbac.yaml grants it)");
    assert_string_equal(fact(facts, "kube_proxy_mode"),
                        fact(json_object_get(facts, "cni"), "name"));
    json_decref(facts);
    kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_k8s_provenance_eks_facts_from_the_api, fx_reset),
        cmocka_unit_test_setup(test_k8s_provenance_forbidden_config_map_is_unknown, fx_reset),
        cmocka_unit_test_setup(test_k8s_provenance_forbidden_daemonsets, fx_reset),
    };
    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
