/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_facts_cni.c - every datapath setting issue 31 lists, read from the objects' real
 * shapes: the aws-node DaemonSet's env and amazon-vpc-cni (VPC CNI), cilium-config (Cilium),
 * tke-cni-agent-conf (TKE's VPC-CNI mode); and what a refused or missing object gives: "unknown
 * (...)" with the reason, never a default. Fixtures: test/unit/data/k8s/ (README.md cites them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_facts_cni.h"
#include "test/unit/fixture.h"

static const char *setting(const json_t *cni, const char *key)
{
    const char *v = json_string_value(json_object_get(json_object_get(cni, "settings"), key));
    if (!v)
        fail_msg("no setting %s", key);
    return v;
}

static json_t *forbidden(const char *name)
{
    char *msg = kp_xasprintf("configmaps \"%s\" is forbidden: User \"system:serviceaccount:kperf:"
                             "kperf\" cannot get resource \"configmaps\" in API group \"\" in the "
                             "namespace \"kube-system\"",
                             name);
    json_t *st = k8s_facts_status(403, "Forbidden", msg, "configmaps", name);
    free(msg);
    return st;
}

static void test_k8s_facts_cni_vpc_cni_every_listed_setting(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-eks-real.json");
    json_t *cm = fixture_json("k8s", "amazon-vpc-cni.json");
    json_t *cni = k8s_facts_cni(json_object_get(ds, "items"), NULL, cm);
    (void)state;

    assert_string_equal(json_string_value(json_object_get(cni, "name")), "aws-vpc-cni");
    assert_string_equal(json_string_value(json_object_get(cni, "version")), "v1.18.1-eksbuild.3");
    assert_string_equal(setting(cni, "image"), "602401143452.dkr.ecr.us-east-1.amazonaws.com/"
                                               "amazon-k8s-cni:v1.18.1-eksbuild.3");
    assert_string_equal(setting(cni, "prefix_delegation"), "true");
    assert_string_equal(setting(cni, "custom_networking"), "true");
    assert_string_equal(setting(cni, "pod_sg_enforcing_mode"), "standard");
    assert_string_equal(setting(cni, "network_policy_enforcing_mode"), "standard");
    assert_string_equal(setting(cni, "external_snat"), "true");
    assert_string_equal(setting(cni, "ipv6"), "false");
    assert_string_equal(setting(cni, "network_policy"), "true");
    assert_string_equal(setting(cni, "network_policy_agent"), "enforcing");
    assert_string_equal(setting(cni, "mtu"), "9001");
    json_decref(cni);
    json_decref(cm);
    json_decref(ds);
}

static void test_k8s_facts_cni_vpc_cni_unset_valuefrom_and_forbidden(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-eks-real.json");
    json_t *c = json_array_get(
        json_object_get(
            json_object_get(
                json_object_get(
                    json_object_get(json_array_get(json_object_get(ds, "items"), 0), "spec"),
                    "template"),
                "spec"),
            "containers"),
        0);
    json_t *env = json_object_get(c, "env");
    json_t *st = forbidden("amazon-vpc-cni");
    json_t *cni;
    size_t i;
    json_t *e;
    (void)state;

    /* an older aws-node without NETWORK_POLICY_ENFORCING_MODE; ENABLE_IPv6 from a ConfigMap */
    json_array_foreach(env, i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (strcmp(n, "NETWORK_POLICY_ENFORCING_MODE") == 0) {
            json_array_remove(env, i);
            break;
        }
    }
    json_array_foreach(env, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "name")), "ENABLE_IPv6") == 0) {
            json_object_del(e, "value");
            json_object_set_new(
                e, "valueFrom",
                json_pack("{s:{s:s, s:s}}", "configMapKeyRef", "name", "cni-env", "key", "ipv6"));
        }
    }
    cni = k8s_facts_cni(json_object_get(ds, "items"), NULL, st);
    assert_string_equal(setting(cni, "network_policy_enforcing_mode"),
                        "unset (the VPC CNI's built-in default)");
    assert_string_equal(setting(cni, "ipv6"), "unknown (set with valueFrom, not read)");
    assert_non_null(strstr(setting(cni, "network_policy"),
                           "unknown (forbidden: configmaps \"amazon-vpc-cni\" is forbidden"));
    json_decref(cni);
    json_decref(st);
    json_decref(ds);
}

static void test_k8s_facts_cni_cilium_every_listed_setting(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-cilium.json");
    json_t *cm = fixture_json("k8s", "cilium-config-1.16.json");
    json_t *cni = k8s_facts_cni(json_object_get(ds, "items"), cm, NULL);
    (void)state;

    assert_string_equal(json_string_value(json_object_get(cni, "name")), "cilium");
    assert_string_equal(json_string_value(json_object_get(cni, "version")), "v1.16.3");
    assert_string_equal(setting(cni, "routing_mode"), "native");
    assert_string_equal(setting(cni, "tunnel_protocol"), "vxlan");
    assert_string_equal(setting(cni, "bpf_masquerade"), "true");
    assert_string_equal(setting(cni, "kube_proxy_replacement"), "true");
    assert_string_equal(setting(cni, "wireguard"), "true");
    assert_string_equal(setting(cni, "ipsec"), "false");
    assert_string_equal(setting(cni, "lb_mode"), "dsr");
    assert_string_equal(setting(cni, "host_legacy_routing"), "false");
    assert_string_equal(setting(cni, "host_routing"), "bpf");
    json_decref(cni);
    json_decref(cm);
    json_decref(ds);
}

static void test_k8s_facts_cni_cilium_forbidden_and_unset(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-cilium.json");
    json_t *st = forbidden("cilium-config");
    json_t *cm = fixture_json("k8s", "cilium-config-1.16.json");
    json_t *cni = k8s_facts_cni(json_object_get(ds, "items"), st, NULL);
    static const char *const listed[] = {
        "routing_mode", "tunnel_protocol", "bpf_masquerade", "kube_proxy_replacement",
        "wireguard",    "ipsec",           "lb_mode",        "host_legacy_routing",
        "host_routing"};
    (void)state;

    /* refused: every listed setting says so, host routing is not inferred from nothing */
    for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++)
        assert_non_null(strstr(setting(cni, listed[i]), "unknown (forbidden: configmaps "
                                                        "\"cilium-config\" is forbidden"));
    json_decref(cni);
    /* readable but silent on a key: the agent's default applies, said as such */
    json_object_del(json_object_get(cm, "data"), "bpf-lb-mode");
    cni = k8s_facts_cni(json_object_get(ds, "items"), cm, NULL);
    assert_string_equal(setting(cni, "lb_mode"), "unset (Cilium's built-in default)");
    json_decref(cni);
    json_decref(cm);
    json_decref(st);
    json_decref(ds);
}

static void tke_mode(const json_t *conf, const char *want)
{
    json_t *ds = fixture_json("k8s", "ds-tke-vpc-cni.json");
    json_t *cni = k8s_facts_cni(json_object_get(ds, "items"), NULL, NULL);

    k8s_facts_cni_tke(cni, json_object_get(ds, "items"), conf);
    assert_string_equal(json_string_value(json_object_get(cni, "name")), "tke-vpc-cni");
    assert_string_equal(setting(cni, "platform"), "tke");
    if (strncmp(setting(cni, "network_mode"), want, strlen(want)) != 0)
        fail_msg("network_mode '%s', want '%s...'", setting(cni, "network_mode"), want);
    json_decref(cni);
    json_decref(ds);
}

static void test_k8s_facts_cni_tke_modes_from_tke_cni_agent_conf(void **state)
{
    json_t *direct = fixture_json("k8s", "tke-cni-agent-conf-direct-eni.json");
    json_t *route = fixture_json("k8s", "tke-cni-agent-conf-route-eni.json");
    json_t *st = forbidden("tke-cni-agent-conf");
    json_t *missing = k8s_facts_status(404, "NotFound", NULL, "configmaps", "tke-cni-agent-conf");
    (void)state;

    tke_mode(direct, "vpc-cni-direct-eni");
    tke_mode(route, "vpc-cni-route-eni");
    /* the shipped RBAC could not read it before: now the reason, not the shared-ENI default */
    tke_mode(st, "unknown (forbidden: configmaps \"tke-cni-agent-conf\" is forbidden");
    tke_mode(missing, "unknown (not found: configmaps tke-cni-agent-conf)");
    json_decref(direct);
    json_decref(route);
    json_decref(st);
    json_decref(missing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_facts_cni_vpc_cni_every_listed_setting),
        cmocka_unit_test(test_k8s_facts_cni_vpc_cni_unset_valuefrom_and_forbidden),
        cmocka_unit_test(test_k8s_facts_cni_cilium_every_listed_setting),
        cmocka_unit_test(test_k8s_facts_cni_cilium_forbidden_and_unset),
        cmocka_unit_test(test_k8s_facts_cni_tke_modes_from_tke_cni_agent_conf),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
