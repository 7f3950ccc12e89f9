/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_facts_proxy.c - kube-proxy's mode from each of its three sources (EKS's
 * kube-proxy-config, kubeadm's kube-proxy, the DaemonSet's --proxy-mode), their override order,
 * and the facts kperf could not read: a ConfigMap the API refused (its 403 Status), one that does
 * not exist. Fixtures: test/unit/data/k8s/ (README.md there cites the shapes). */
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
#include "controller/k8s/k8s_facts_proxy.h"
#include "test/unit/fixture.h"

struct proxy_fx {
    json_t *eks_ds; /* DaemonSetList: aws-node, kube-proxy --config=.../kube-proxy-config/config */
    json_t *kubeadm_ds;     /* DaemonSetList: kube-proxy --config=/var/lib/kube-proxy/config.conf */
    json_t *eks_cm;         /* kube-proxy-config, mode "ipvs" */
    json_t *eks_kubeconfig; /* EKS's kube-proxy: a kubeconfig only */
    json_t *kubeadm_cm;     /* kube-proxy, config.conf with mode "ipvs" */
    json_t *forbidden;      /* the API's 403 Status for kube-proxy-config */
};

static struct proxy_fx fx;

static int setup(void **state)
{
    (void)state;
    fx.eks_ds = fixture_json("k8s", "ds-eks-real.json");
    fx.kubeadm_ds = fixture_json("k8s", "ds-kubeadm.json");
    fx.eks_cm = fixture_json("k8s", "kube-proxy-config-eks.json");
    fx.eks_kubeconfig = fixture_json("k8s", "kube-proxy-eks.json");
    fx.kubeadm_cm = fixture_json("k8s", "kube-proxy-cm.json");
    fx.forbidden = fixture_json("k8s", "status-forbidden-configmap.json");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(fx.eks_ds);
    json_decref(fx.kubeadm_ds);
    json_decref(fx.eks_cm);
    json_decref(fx.eks_kubeconfig);
    json_decref(fx.kubeadm_cm);
    json_decref(fx.forbidden);
    return 0;
}

static const json_t *items(const json_t *list)
{
    return json_object_get(list, "items");
}

/* the kube-proxy container of a DaemonSetList fixture (borrowed) */
static json_t *kp_container(const json_t *list)
{
    size_t i;
    json_t *ds;

    json_array_foreach(items(list), i, ds)
    {
        if (strcmp(json_string_value(json_object_get(json_object_get(ds, "metadata"), "name")),
                   "kube-proxy") == 0)
            return json_array_get(
                json_object_get(
                    json_object_get(json_object_get(json_object_get(ds, "spec"), "template"),
                                    "spec"),
                    "containers"),
                0);
    }
    fail_msg("no kube-proxy DaemonSet");
    return NULL;
}

/* asserts mode and that source contains want_source; returns nothing */
static void expect(const json_t *ds, const json_t *eks, const json_t *kubeadm, const char *mode,
                   const char *want_source)
{
    json_t *kp = k8s_facts_kube_proxy(items(ds), eks, kubeadm);
    const char *m = json_string_value(json_object_get(kp, "mode"));
    const char *src = json_string_value(json_object_get(kp, "source"));

    assert_non_null(m);
    assert_non_null(src);
    if (strncmp(mode, "unknown", 7) == 0)
        assert_true(strncmp(m, mode, strlen(mode)) == 0);
    else
        assert_string_equal(m, mode);
    if (!strstr(src, want_source))
        fail_msg("source '%s' does not say '%s'", src, want_source);
    json_decref(kp);
}

static void test_k8s_facts_proxy_eks_config_map(void **state)
{
    (void)state;
    /* EKS: kube-proxy-config's key "config" says ipvs; kube-proxy holds a kubeconfig only */
    expect(fx.eks_ds, fx.eks_cm, fx.eks_kubeconfig, "ipvs",
           "ConfigMap kube-system/kube-proxy-config key config");
}

static void test_k8s_facts_proxy_kubeadm_config_map(void **state)
{
    (void)state;
    expect(fx.kubeadm_ds, NULL, fx.kubeadm_cm, "ipvs",
           "ConfigMap kube-system/kube-proxy key config.conf");
}

static void test_k8s_facts_proxy_flag(void **state)
{
    json_t *c = kp_container(fx.kubeadm_ds);
    json_t *saved = json_deep_copy(json_object_get(c, "command"));
    (void)state;

    json_array_append_new(json_object_get(c, "command"), json_string("--proxy-mode=nftables"));
    expect(fx.kubeadm_ds, NULL, NULL, "nftables",
           "DaemonSet kube-system/kube-proxy flag --proxy-mode");
    /* "--proxy-mode nftables" as two arguments, in args */
    json_object_set(c, "command", saved);
    json_object_set_new(c, "args", json_pack("[s,s]", "--proxy-mode", "nftables"));
    expect(fx.kubeadm_ds, NULL, NULL, "nftables", "flag --proxy-mode");
    json_object_del(c, "args");
    json_decref(saved);
}

static void test_k8s_facts_proxy_override_order(void **state)
{
    json_t *eks_iptables = json_deep_copy(fx.eks_cm);
    json_t *data = json_object_get(eks_iptables, "data");
    char *text = kp_xstrdup(json_string_value(json_object_get(data, "config")));
    char *m = strstr(text, "mode: \"ipvs\"");
    json_t *c = kp_container(fx.eks_ds);
    (void)state;

    assert_non_null(m);
    memcpy(m, "mode: \"nfta\"", 12); /* a third value, distinct from the others */
    json_object_set_new(data, "config", json_string(text));
    /* kube-proxy (kubeadm) overrides kube-proxy-config (EKS) */
    expect(fx.eks_ds, eks_iptables, fx.kubeadm_cm, "ipvs",
           "kube-system/kube-proxy key config.conf");
    expect(fx.eks_ds, eks_iptables, fx.eks_kubeconfig, "nfta", "kube-proxy-config key config");
    /* the flag overrides both, and a refused ConfigMap does not matter then */
    json_array_append_new(json_object_get(c, "command"), json_string("--proxy-mode=iptables"));
    expect(fx.eks_ds, eks_iptables, fx.kubeadm_cm, "iptables", "flag --proxy-mode");
    expect(fx.eks_ds, fx.forbidden, fx.forbidden, "iptables", "flag --proxy-mode");
    json_array_remove(json_object_get(c, "command"),
                      json_array_size(json_object_get(c, "command")) - 1);
    free(text);
    json_decref(eks_iptables);
}

static void test_k8s_facts_proxy_empty_mode_is_the_documented_default(void **state)
{
    json_t *cm = json_deep_copy(fx.kubeadm_cm);
    json_t *data = json_object_get(cm, "data");
    char *text = kp_xstrdup(json_string_value(json_object_get(data, "config.conf")));
    char *m = strstr(text, "mode: \"ipvs\"");
    (void)state;

    assert_non_null(m);
    memcpy(m, "mode: \"\"    ", 12);
    json_object_set_new(data, "config.conf", json_string(text));
    expect(fx.kubeadm_ds, NULL, cm, "iptables", "documented default on Linux");
    json_decref(cm);
    free(text);
}

static void test_k8s_facts_proxy_forbidden_and_not_found(void **state)
{
    char *why = k8s_facts_unread(fx.forbidden);
    json_t *missing = k8s_facts_status(404, "NotFound", NULL, "configmaps", "kube-proxy");
    (void)state;

    /* the 403 Status the API answers becomes the fact, with its reason */
    assert_string_equal(why, "unknown (forbidden: configmaps \"kube-proxy-config\" is forbidden: "
                             "User \"system:serviceaccount:kperf:kperf\" cannot get resource "
                             "\"configmaps\" in API group \"\" in the namespace \"kube-system\")");
    expect(fx.eks_ds, fx.forbidden, fx.eks_kubeconfig, "unknown (forbidden: configmaps",
           "ConfigMap kube-system/kube-proxy-config");
    /* the EKS DaemonSet reads --config, but neither ConfigMap exists: not guessed */
    expect(fx.eks_ds, missing, missing, "unknown (not found", "flag --config");
    /* a ConfigMap is not a Status: nothing unread */
    assert_null(k8s_facts_unread(fx.eks_cm));
    assert_null(k8s_facts_unread(NULL));
    free(why);
    json_decref(missing);
}

static void test_k8s_facts_proxy_none_and_bad_yaml(void **state)
{
    json_t *empty = json_array();
    json_t *kp = k8s_facts_kube_proxy(empty, NULL, NULL);
    json_t *cm = json_deep_copy(fx.kubeadm_cm);
    (void)state;

    assert_string_equal(json_string_value(json_object_get(kp, "mode")), "none");
    json_object_set_new(json_object_get(cm, "data"), "config.conf", json_string("mode: [ipvs"));
    expect(fx.kubeadm_ds, NULL, cm,
           "unknown (ConfigMap kube-system/kube-proxy key config.conf "
           "is not YAML",
           "kube-proxy key config.conf");
    json_decref(cm);
    json_decref(kp);
    json_decref(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_facts_proxy_eks_config_map),
        cmocka_unit_test(test_k8s_facts_proxy_kubeadm_config_map),
        cmocka_unit_test(test_k8s_facts_proxy_flag),
        cmocka_unit_test(test_k8s_facts_proxy_override_order),
        cmocka_unit_test(test_k8s_facts_proxy_empty_mode_is_the_documented_default),
        cmocka_unit_test(test_k8s_facts_proxy_forbidden_and_not_found),
        cmocka_unit_test(test_k8s_facts_proxy_none_and_bad_yaml),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, setup, teardown);
}
