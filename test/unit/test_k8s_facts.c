/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_facts.c - node eligibility and pairing, CNI and kube-proxy facts from fixtures
 * (test/unit/data/k8s/). */
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
#include "controller/k8s/k8s_facts_proxy.h"
#include "test/unit/fixture.h"

static const json_t *node_named(const json_t *items, const char *name)
{
    size_t i;
    json_t *n;

    json_array_foreach(items, i, n)
    {
        if (strcmp(k8s_facts_node_name(n), name) == 0)
            return n;
    }
    fail_msg("no node %s", name);
    return NULL;
}

/* eligible nodes of the fixture under filter f, as a new array */
static json_t *eligible(const json_t *items, const struct k8s_node_filter *f)
{
    json_t *out = json_array();
    size_t i;
    json_t *n;

    json_array_foreach(items, i, n)
    {
        if (k8s_facts_node_eligible(n, f, NULL))
            json_array_append(out, n);
    }
    return out;
}

/* kube-proxy's mode from the DaemonSets and kubeadm's ConfigMap (or NULL); static buffer */
static const char *proxy_mode(const json_t *daemonsets, const json_t *kubeadm_cm)
{
    static char mode[512];
    json_t *kp = k8s_facts_kube_proxy(daemonsets, NULL, kubeadm_cm);

    snprintf(mode, sizeof(mode), "%s", json_string_value(json_object_get(kp, "mode")));
    json_decref(kp);
    return mode;
}

static void test_k8s_facts_not_ready_cordoned_and_tainted_nodes_are_skipped(void **state)
{
    json_t *doc = fixture_json("k8s", "nodes.json");
    const json_t *items = json_object_get(doc, "items");
    char *why = NULL;
    (void)state;

    assert_true(k8s_facts_node_eligible(node_named(items, "ip-10-0-2-9.ec2.internal"), NULL, &why));
    assert_null(why);
    assert_false(
        k8s_facts_node_eligible(node_named(items, "ip-10-0-1-8.ec2.internal"), NULL, &why));
    assert_string_equal(why, "not Ready");
    free(why);
    assert_false(
        k8s_facts_node_eligible(node_named(items, "ip-10-0-1-9.ec2.internal"), NULL, &why));
    assert_string_equal(why, "cordoned (unschedulable)");
    free(why);
    assert_false(
        k8s_facts_node_eligible(node_named(items, "ip-10-0-1-7.ec2.internal"), NULL, &why));
    assert_non_null(strstr(why, "taint dedicated=perf:NoSchedule not tolerated"));
    assert_non_null(strstr(why, "--tolerations dedicated=perf:NoSchedule"));
    free(why);
    json_t *el = eligible(items, NULL);
    assert_int_equal(json_array_size(el), 2);
    json_decref(el);
    json_decref(doc);
}

static void test_k8s_facts_tolerations_and_selector(void **state)
{
    json_t *doc = fixture_json("k8s", "nodes.json");
    const json_t *items = json_object_get(doc, "items");
    json_t *tol = json_pack("[{s:s, s:s, s:s, s:s}]", "key", "dedicated", "operator", "Equal",
                            "value", "perf", "effect", "NoSchedule");
    struct run_label sel = {.key = "pool", .value = "perf"};
    struct k8s_node_filter f = {.tolerations = tol};
    char *why = NULL;
    (void)state;

    assert_true(k8s_facts_node_eligible(node_named(items, "ip-10-0-1-7.ec2.internal"), &f, NULL));
    /* a wrong value does not tolerate */
    json_object_set_new(json_array_get(tol, 0), "value", json_string("other"));
    assert_false(k8s_facts_node_eligible(node_named(items, "ip-10-0-1-7.ec2.internal"), &f, NULL));
    /* operator Exists with no key tolerates everything, control plane included */
    json_decref(tol);
    tol = json_pack("[{s:s}]", "operator", "Exists");
    f.tolerations = tol;
    f.selector = &sel;
    f.n_selector = 1;
    json_t *el = eligible(items, &f);
    assert_int_equal(json_array_size(el), 4); /* 2-9, 1-5, 1-7, cp-1: pool=perf, Ready */
    json_decref(el);
    assert_false(k8s_facts_node_eligible(node_named(items, "ip-10-0-1-9.ec2.internal"), &f, &why));
    assert_string_equal(why, "does not match --node-selector pool=perf");
    free(why);
    json_decref(tol);
    json_decref(doc);
}

static void test_k8s_facts_pair_prefers_one_zone(void **state)
{
    json_t *doc = fixture_json("k8s", "nodes.json");
    const json_t *items = json_object_get(doc, "items");
    json_t *tol = json_pack("[{s:s, s:s}]", "key", "dedicated", "operator", "Exists");
    struct k8s_node_filter f = {.tolerations = tol};
    json_t *el = eligible(items, &f); /* 2-9 (zone b), 1-5 and 1-7 (zone a) */
    const json_t *a, *b;
    const char *note;
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_facts_choose_pair(el, NULL, NULL, &a, &b, &note, &err), 0);
    assert_string_equal(k8s_facts_node_name(a), "ip-10-0-1-5.ec2.internal");
    assert_string_equal(k8s_facts_node_name(b), "ip-10-0-1-7.ec2.internal");
    assert_null(note);
    /* --nodes A only: B is completed from A's zone */
    assert_int_equal(
        k8s_facts_choose_pair(el, "ip-10-0-1-7.ec2.internal", NULL, &a, &b, &note, &err), 0);
    assert_string_equal(k8s_facts_node_name(b), "ip-10-0-1-5.ec2.internal");
    /* --nodes A,B across zones is honoured */
    assert_int_equal(k8s_facts_choose_pair(el, "ip-10-0-2-9.ec2.internal",
                                           "ip-10-0-1-5.ec2.internal", &a, &b, &note, &err),
                     0);
    assert_string_equal(k8s_facts_node_name(a), "ip-10-0-2-9.ec2.internal");
    /* an ineligible or unknown node is an error that names it */
    assert_int_equal(
        k8s_facts_choose_pair(el, "ip-10-0-1-9.ec2.internal", NULL, &a, &b, &note, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "ip-10-0-1-9.ec2.internal"));
    json_decref(el);
    json_decref(tol);
    json_decref(doc);
}

static void test_k8s_facts_node_not_ready_reason(void **state)
{
    json_t *ready =
        json_pack("{s:{s:[{s:s, s:s}, {s:s, s:s}]}}", "status", "conditions", "type",
                  "MemoryPressure", "status", "False", "type", "Ready", "status", "True");
    json_t *unknown = json_pack("{s:{s:[{s:s, s:s, s:s, s:s}]}}", "status", "conditions", "type",
                                "Ready", "status", "Unknown", "reason", "NodeStatusUnknown",
                                "message", "Kubelet stopped posting node status.");
    json_t *none = json_pack("{s:{}}", "status");
    char *why;

    (void)state;
    assert_null(k8s_facts_node_not_ready(ready));
    why = k8s_facts_node_not_ready(unknown);
    assert_string_equal(why,
                        "Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)");
    free(why);
    why = k8s_facts_node_not_ready(none);
    assert_string_equal(why, "no Ready condition");
    free(why);
    json_decref(ready);
    json_decref(unknown);
    json_decref(none);
}

static void test_k8s_facts_pair_across_zones_and_single_node(void **state)
{
    json_t *doc = fixture_json("k8s", "nodes.json");
    const json_t *items = json_object_get(doc, "items");
    json_t *two = json_pack("[O, O]", node_named(items, "ip-10-0-2-9.ec2.internal"),
                            node_named(items, "ip-10-0-1-5.ec2.internal"));
    json_t *one = json_pack("[O]", node_named(items, "ip-10-0-2-9.ec2.internal"));
    json_t *none = json_array();
    const json_t *a, *b;
    const char *note;
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_facts_choose_pair(two, NULL, NULL, &a, &b, &note, &err), 0);
    assert_non_null(b);
    assert_non_null(note);
    assert_non_null(strstr(note, "zone"));
    assert_int_equal(k8s_facts_choose_pair(one, NULL, NULL, &a, &b, &note, &err), 0);
    assert_non_null(a);
    assert_null(b);
    assert_int_equal(k8s_facts_choose_pair(none, NULL, NULL, &a, &b, &note, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "no eligible node"));
    json_decref(two);
    json_decref(one);
    json_decref(none);
    json_decref(doc);
}

static void test_k8s_facts_node_info_for_report(void **state)
{
    json_t *doc = fixture_json("k8s", "nodes.json");
    const json_t *n = node_named(json_object_get(doc, "items"), "ip-10-0-2-9.ec2.internal");
    json_t *info = k8s_facts_node_info(n, "server");
    (void)state;

    assert_string_equal(json_string_value(json_object_get(info, "kernel")),
                        "6.1.94-99.176.amzn2023.x86_64");
    assert_string_equal(json_string_value(json_object_get(info, "zone")), "us-east-1b");
    assert_string_equal(json_string_value(json_object_get(info, "instance_type")), "m6i.large");
    assert_string_equal(json_string_value(json_object_get(info, "internal_ip")), "198.18.252.9");
    assert_string_equal(json_string_value(json_object_get(info, "container_runtime")),
                        "containerd://1.7.11");
    assert_string_equal(json_string_value(json_object_get(info, "role")), "server");
    assert_string_equal(k8s_facts_node_hostname(n), "ip-10-0-2-9");
    json_decref(info);
    json_decref(doc);
}

static void test_k8s_facts_nodes_from_report(void **state)
{
    json_t *rep = json_pack("{s:{s:[{s:s, s:s}, {s:s, s:s}]}}", "metadata", "nodes", "name", "n-2",
                            "role", "client", "name", "n-1", "role", "server");
    json_t *bad = json_pack("{s:{}}", "metadata");
    char *a = NULL, *b = NULL;
    struct kp_err err;
    (void)state;

    assert_int_equal(k8s_facts_nodes_from_report(rep, &a, &b, &err), 0);
    assert_string_equal(a, "n-1");
    assert_string_equal(b, "n-2");
    free(a);
    free(b);
    assert_int_equal(k8s_facts_nodes_from_report(bad, &a, &b, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "server"));
    json_decref(rep);
    json_decref(bad);
}

static void test_k8s_facts_aws_vpc_cni_with_settings(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-eks.json");
    json_t *cni = k8s_facts_cni(json_object_get(ds, "items"), NULL, NULL);
    (void)state;

    assert_string_equal(json_string_value(json_object_get(cni, "name")), "aws-vpc-cni");
    assert_string_equal(json_string_value(json_object_get(cni, "version")), "v1.18.1-eksbuild.3");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(cni, "settings"), "custom_networking")),
        "true");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(cni, "settings"), "prefix_delegation")),
        "false");
    assert_null(json_object_get(cni, "also"));
    /* EKS: the mode is in a ConfigMap, not given here: not guessed */
    assert_non_null(strstr(proxy_mode(json_object_get(ds, "items"), NULL), "unknown (not found"));
    json_decref(cni);
    json_decref(ds);
}

static void test_k8s_facts_cilium_with_config_and_no_kube_proxy(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-cilium.json");
    json_t *cm = fixture_json("k8s", "cilium-config.json");
    json_t *cni = k8s_facts_cni(json_object_get(ds, "items"), cm, NULL);
    (void)state;

    assert_string_equal(json_string_value(json_object_get(cni, "name")), "cilium");
    assert_string_equal(json_string_value(json_object_get(cni, "version")), "v1.16.3");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(cni, "settings"), "routing_mode")),
        "tunnel");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(cni, "settings"), "tunnel_protocol")),
        "geneve");
    assert_string_equal(json_string_value(json_object_get(json_object_get(cni, "settings"),
                                                          "kube_proxy_replacement")),
                        "true");
    assert_string_equal(proxy_mode(json_object_get(ds, "items"), NULL), "none");
    json_decref(cni);
    json_decref(cm);
    json_decref(ds);
}

static void test_k8s_facts_kube_proxy_mode_from_configmap_and_args(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-eks.json");
    json_t *cm = fixture_json("k8s", "kube-proxy-cm.json");
    json_t *items = json_object_get(ds, "items");
    json_t *kp = json_array_get(
        json_object_get(
            json_object_get(
                json_object_get(json_object_get(json_array_get(items, 1), "spec"), "template"),
                "spec"),
            "containers"),
        0);
    (void)state;

    assert_string_equal(proxy_mode(items, cm), "ipvs");
    json_object_set_new(kp, "args", json_pack("[s]", "--proxy-mode=nftables"));
    assert_string_equal(proxy_mode(items, cm), "nftables");
    json_decref(cm);
    json_decref(ds);
}

static void test_k8s_facts_image_tags(void **state)
{
    const char *cases[][2] = {
        {"quay.io/cilium/cilium:v1.16.3@sha256:abc", "v1.16.3"},
        {"localhost:5000/kperf-agent", "latest"},
        {"localhost:5000/kperf-agent:1.2", "1.2"},
        {"repo/x@sha256:abc", "sha256:abc"},
        {"busybox", "latest"},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *t = k8s_facts_image_tag(cases[i][0]);
        assert_string_equal(t, cases[i][1]);
        free(t);
    }
}

static void test_k8s_facts_unknown_cni_and_chaining(void **state)
{
    json_t *none = json_array();
    json_t *cni = k8s_facts_cni(none, NULL, NULL);
    json_t *eks = fixture_json("k8s", "ds-eks.json");
    json_t *cil = fixture_json("k8s", "ds-cilium.json");
    (void)state;

    assert_string_equal(json_string_value(json_object_get(cni, "name")), "unknown");
    json_decref(cni);
    /* cilium chained on the VPC CNI: cilium first, aws-vpc-cni listed in "also" */
    json_array_extend(json_object_get(cil, "items"), json_object_get(eks, "items"));
    cni = k8s_facts_cni(json_object_get(cil, "items"), NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(cni, "name")), "cilium");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(cni, "also"), 0), "name")),
        "aws-vpc-cni");
    json_decref(cni);
    json_decref(none);
    json_decref(eks);
    json_decref(cil);
}

static const char *setting(const json_t *cni, const char *key)
{
    return json_string_value(json_object_get(json_object_get(cni, "settings"), key));
}

static void test_k8s_facts_cilium_datapath_settings(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-cilium.json");
    json_t *cm = fixture_json("k8s", "cilium-config.json");
    json_t *data = json_object_get(cm, "data");
    json_t *items = json_object_get(ds, "items");
    json_t *agent = json_array_get(
        json_object_get(
            json_object_get(
                json_object_get(json_object_get(json_array_get(items, 0), "spec"), "template"),
                "spec"),
            "containers"),
        0);
    json_t *cni;
    (void)state;

    json_object_set_new(data, "enable-bandwidth-manager", json_string("true"));
    json_object_set_new(data, "enable-bbr", json_string("true"));
    json_object_set_new(data, "mtu", json_string("8951"));
    /* kube-proxy replacement without BPF masquerading: the agent falls back to legacy */
    cni = k8s_facts_cni(items, cm, NULL);
    assert_string_equal(setting(cni, "bandwidth_manager"), "true");
    assert_string_equal(setting(cni, "bbr"), "true");
    assert_string_equal(setting(cni, "mtu"), "8951");
    assert_string_equal(setting(cni, "ipam"), "cluster-pool");
    assert_string_equal(setting(cni, "host_routing"), "legacy (inferred)");
    json_decref(cni);
    json_object_set_new(data, "enable-bpf-masquerade", json_string("true"));
    cni = k8s_facts_cni(items, cm, NULL);
    assert_string_equal(setting(cni, "host_routing"), "bpf (inferred)");
    json_decref(cni);
    /* an agent flag overrides the ConfigMap, as in the agent */
    json_object_set_new(agent, "args",
                        json_pack("[s,s,s]", "--config-dir=/tmp/cilium/config-map",
                                  "--enable-host-legacy-routing", "--routing-mode=native"));
    cni = k8s_facts_cni(items, cm, NULL);
    assert_string_equal(setting(cni, "host_routing"), "legacy");
    assert_string_equal(setting(cni, "routing_mode"), "native");
    json_decref(cni);
    json_decref(cm);
    json_decref(ds);
}

static void test_k8s_facts_aws_vpc_cni_datapath_settings(void **state)
{
    json_t *ds = fixture_json("k8s", "ds-eks.json");
    json_t *items = json_object_get(ds, "items");
    json_t *cni = k8s_facts_cni(items, NULL, NULL);
    json_t *cs = json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_array_get(items, 0), "spec"), "template"), "spec"),
        "containers");
    (void)state;

    assert_string_equal(setting(cni, "mtu"), "9001");
    assert_string_equal(setting(cni, "warm_ip_target"), "5");
    assert_string_equal(setting(cni, "minimum_ip_target"), "10");
    assert_string_equal(setting(cni, "warm_eni_target"), "1");
    assert_string_equal(setting(cni, "pod_eni"), "true");
    assert_string_equal(setting(cni, "network_policy_agent"), "enforcing");
    json_decref(cni);
    json_object_set_new(json_array_get(cs, 1), "args",
                        json_pack("[s]", "--enable-network-policy=false"));
    cni = k8s_facts_cni(items, NULL, NULL);
    assert_string_equal(setting(cni, "network_policy_agent"), "installed, not enforcing");
    json_decref(cni);
    json_array_remove(cs, 1);
    cni = k8s_facts_cni(items, NULL, NULL);
    assert_string_equal(setting(cni, "network_policy_agent"), "absent");
    json_decref(cni);
    json_decref(ds);
}

/* one TKE variant: the DaemonSets, the tke-cni-agent-conf (or NULL), the expected CNI, mode */
static void tke_case(const char *ds_file, const char *conf_file, const char *name, const char *mode)
{
    json_t *ds = fixture_json("k8s", ds_file);
    json_t *conf = conf_file ? fixture_json("k8s", conf_file) : NULL;
    json_t *cni = k8s_facts_cni(json_object_get(ds, "items"), NULL, NULL);

    k8s_facts_cni_tke(cni, json_object_get(ds, "items"), conf);
    assert_string_equal(json_string_value(json_object_get(cni, "name")), name);
    assert_string_equal(setting(cni, "platform"), "tke");
    assert_string_equal(setting(cni, "network_mode"), mode);
    assert_string_equal(proxy_mode(json_object_get(ds, "items"), NULL),
                        strstr(ds_file, "cilium") ? "none" : "ipvs");
    json_decref(cni);
    json_decref(conf);
    json_decref(ds);
}

static void test_k8s_facts_tke_variants(void **state)
{
    json_t *ds, *cni;
    (void)state;

    tke_case("ds-tke-global-router.json", "tke-cni-agent-conf-bridge.json", "tke-global-router",
             "global-router");
    tke_case("ds-tke-vpc-cni.json", "tke-cni-agent-conf-route-eni.json", "tke-vpc-cni",
             "vpc-cni-route-eni");
    tke_case("ds-tke-vpc-cni.json", NULL, "tke-vpc-cni",
             "unknown (ConfigMap kube-system/tke-cni-agent-conf not read)");
    tke_case("ds-tke-vpc-cni.json", "tke-cni-agent-conf-direct-eni.json", "tke-vpc-cni",
             "vpc-cni-direct-eni");
    tke_case("ds-tke-hybrid.json", "tke-cni-agent-conf-bridge.json", "tke-vpc-cni",
             "global-router+vpc-cni");
    tke_case("ds-tke-cilium.json", NULL, "cilium", "cilium+vpc-cni");

    /* details: the VPC-CNI's bandwidth plugin, the default network, Cilium's settings on TKE */
    ds = fixture_json("k8s", "ds-tke-vpc-cni.json");
    json_t *conf = fixture_json("k8s", "tke-cni-agent-conf-route-eni.json");
    cni = k8s_facts_cni(json_object_get(ds, "items"), NULL, NULL);
    k8s_facts_cni_tke(cni, json_object_get(ds, "items"), conf);
    assert_string_equal(setting(cni, "bandwidth_plugin"), "true");
    assert_string_equal(setting(cni, "default_network"), "tke-route-eni");
    assert_string_equal(json_string_value(json_object_get(cni, "version")), "v3.7.4");
    json_decref(cni);
    json_decref(conf);
    json_decref(ds);
    ds = fixture_json("k8s", "ds-tke-cilium.json");
    conf = fixture_json("k8s", "cilium-config-tke.json");
    cni = k8s_facts_cni(json_object_get(ds, "items"), conf, NULL);
    k8s_facts_cni_tke(cni, json_object_get(ds, "items"), NULL);
    assert_string_equal(setting(cni, "routing_mode"), "native"); /* the flag wins */
    assert_string_equal(setting(cni, "host_routing"), "legacy");
    assert_string_equal(setting(cni, "ipam"), "delegated-plugin");
    assert_string_equal(setting(cni, "mtu"), "1500");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(json_object_get(cni, "also"), 0), "name")),
        "tke-vpc-cni");
    json_decref(cni);
    json_decref(conf);
    json_decref(ds);
    /* not TKE: nothing added */
    ds = fixture_json("k8s", "ds-cilium.json");
    cni = k8s_facts_cni(json_object_get(ds, "items"), NULL, NULL);
    k8s_facts_cni_tke(cni, json_object_get(ds, "items"), NULL);
    assert_null(setting(cni, "platform"));
    json_decref(cni);
    json_decref(ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_facts_not_ready_cordoned_and_tainted_nodes_are_skipped),
        cmocka_unit_test(test_k8s_facts_tolerations_and_selector),
        cmocka_unit_test(test_k8s_facts_pair_prefers_one_zone),
        cmocka_unit_test(test_k8s_facts_pair_across_zones_and_single_node),
        cmocka_unit_test(test_k8s_facts_node_info_for_report),
        cmocka_unit_test(test_k8s_facts_nodes_from_report),
        cmocka_unit_test(test_k8s_facts_aws_vpc_cni_with_settings),
        cmocka_unit_test(test_k8s_facts_cilium_with_config_and_no_kube_proxy),
        cmocka_unit_test(test_k8s_facts_kube_proxy_mode_from_configmap_and_args),
        cmocka_unit_test(test_k8s_facts_image_tags),
        cmocka_unit_test(test_k8s_facts_unknown_cni_and_chaining),
        cmocka_unit_test(test_k8s_facts_cilium_datapath_settings),
        cmocka_unit_test(test_k8s_facts_aws_vpc_cni_datapath_settings),
        cmocka_unit_test(test_k8s_facts_tke_variants),
        cmocka_unit_test(test_k8s_facts_node_not_ready_reason),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
