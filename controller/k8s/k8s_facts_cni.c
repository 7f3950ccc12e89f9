/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_facts_cni.c - CNI datapath settings from DaemonSets and ConfigMaps (see k8s_facts_cni.h). */
#include "controller/k8s/k8s_facts_cni.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const json_t *containers(const json_t *ds)
{
    return json_object_get(
        json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec"),
        "containers");
}

static const json_t *container_named(const json_t *ds, const char *name)
{
    size_t i;
    json_t *c;

    json_array_foreach(containers(ds), i, c)
    {
        if (str(c, "name") && strcmp(str(c, "name"), name) == 0)
            return c;
    }
    return NULL;
}

static const json_t *find_ds(const json_t *daemonsets, const char *name)
{
    size_t i;
    json_t *ds;

    json_array_foreach(daemonsets, i, ds)
    {
        const char *n = str(json_object_get(ds, "metadata"), "name");
        if (n && strcmp(n, name) == 0)
            return ds;
    }
    return NULL;
}

/* The value of flag `--name=v` (or `--name v`, or a bare `--name` -> "true") in a container's
 * command and args; NULL when absent. Caller frees. */
static char *flag_value(const json_t *c, const char *name)
{
    const char *lists[] = {"command", "args"};
    size_t nl = strlen(name);
    char *found = NULL;

    for (size_t l = 0; l < 2; l++) {
        const json_t *a = json_object_get(c, lists[l]);
        for (size_t i = 0; i < json_array_size(a); i++) {
            const char *s = json_string_value(json_array_get(a, i));
            const char *next = json_string_value(json_array_get(a, i + 1));
            if (!s || strncmp(s, "--", 2) != 0 || strncmp(s + 2, name, nl) != 0)
                continue;
            free(found);
            if (s[2 + nl] == '=')
                found = kp_xstrdup(s + 3 + nl);
            else if (s[2 + nl] != '\0')
                continue;
            else if (next && strncmp(next, "--", 2) != 0)
                found = kp_xstrdup(next);
            else
                found = kp_xstrdup("true");
        }
    }
    return found;
}

static const char *env_value(const json_t *c, const char *name)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(c, "env"), i, e)
    {
        if (str(e, "name") && strcmp(str(e, "name"), name) == 0)
            return str(e, "value");
    }
    return NULL;
}

static int is_true(const char *v)
{
    return v && (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "1") == 0);
}

struct key_field {
    const char *key, *field;
};

/* cilium-config keys (also agent flags of the same name) that shape the datapath */
static const struct key_field cilium_keys[] = {
    {"routing-mode", "routing_mode"},
    {"tunnel-protocol", "tunnel_protocol"},
    {"kube-proxy-replacement", "kube_proxy_replacement"},
    {"enable-bandwidth-manager", "bandwidth_manager"},
    {"enable-bbr", "bbr"},
    {"mtu", "mtu"},
    {"ipam", "ipam"},
    {"enable-bpf-masquerade", "bpf_masquerade"},
    {"auto-direct-node-routes", "auto_direct_node_routes"},
    {"datapath-mode", "datapath_mode"},
    {"enable-host-legacy-routing", "host_legacy_routing"},
};

static void cilium(json_t *settings, const json_t *ds, const json_t *cm)
{
    const json_t *agent = container_named(ds, "cilium-agent");
    const json_t *data = json_object_get(cm, "data");
    const char *legacy, *kpr, *masq;

    for (size_t i = 0; i < sizeof(cilium_keys) / sizeof(cilium_keys[0]); i++) {
        char *flag = agent ? flag_value(agent, cilium_keys[i].key) : NULL;
        const char *v = flag ? flag : str(data, cilium_keys[i].key);
        if (v && (flag || !json_object_get(settings, cilium_keys[i].field)))
            json_object_set_new(settings, cilium_keys[i].field, json_string(v));
        free(flag);
    }
    /* host routing: set explicitly, or what the agent picks by itself: eBPF host routing needs
     * kube-proxy replacement and BPF masquerading (or none); otherwise it falls back to legacy */
    legacy = str(settings, "host_legacy_routing");
    kpr = str(settings, "kube_proxy_replacement");
    masq = str(settings, "bpf_masquerade");
    if (legacy)
        json_object_set_new(settings, "host_routing",
                            json_string(is_true(legacy) ? "legacy" : "bpf"));
    else if (cm || agent)
        json_object_set_new(
            settings, "host_routing",
            json_string((is_true(kpr) || (kpr && strcmp(kpr, "strict") == 0)) && is_true(masq)
                            ? "bpf (inferred)"
                            : "legacy (inferred)"));
}

static const struct key_field aws_env[] = {
    {"AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG", "custom_networking"},
    {"ENABLE_PREFIX_DELEGATION", "prefix_delegation"},
    {"ENABLE_POD_ENI", "pod_eni"},
    {"AWS_VPC_ENI_MTU", "mtu"},
    {"WARM_ENI_TARGET", "warm_eni_target"},
    {"WARM_IP_TARGET", "warm_ip_target"},
    {"MINIMUM_IP_TARGET", "minimum_ip_target"},
    {"WARM_PREFIX_TARGET", "warm_prefix_target"},
};

static void aws(json_t *settings, const json_t *ds)
{
    const json_t *node = container_named(ds, "aws-node");
    const json_t *npa = container_named(ds, "aws-eks-nodeagent");

    for (size_t i = 0; node && i < sizeof(aws_env) / sizeof(aws_env[0]); i++) {
        const char *v = env_value(node, aws_env[i].key);
        if (v && !json_object_get(settings, aws_env[i].field))
            json_object_set_new(settings, aws_env[i].field, json_string(v));
    }
    /* the network policy agent: a sidecar that enforces only with --enable-network-policy */
    if (npa) {
        char *v = flag_value(npa, "enable-network-policy");
        json_object_set_new(settings, "network_policy_agent",
                            json_string(is_true(v) ? "enforcing" : "installed, not enforcing"));
        free(v);
    } else {
        json_object_set_new(settings, "network_policy_agent", json_string("absent"));
    }
}

static void tke_eni(json_t *settings, const json_t *ds)
{
    const json_t *c = container_named(ds, "tke-eni-agent");
    char *bw = c ? flag_value(c, "bandwidth") : NULL;

    json_object_set_new(settings, "bandwidth_plugin", json_string(is_true(bw) ? "true" : "false"));
    free(bw);
}

void k8s_facts_cni_settings(json_t *settings, const char *cni, const json_t *ds, const json_t *cm)
{
    if (strcmp(cni, "cilium") == 0)
        cilium(settings, ds, cm);
    else if (strcmp(cni, "aws-vpc-cni") == 0)
        aws(settings, ds);
    else if (strcmp(cni, "tke-vpc-cni") == 0)
        tke_eni(settings, ds);
}

static int tke_image(const json_t *ds)
{
    size_t i;
    json_t *c;

    json_array_foreach(containers(ds), i, c)
    {
        const char *img = str(c, "image");
        if (img && (strstr(img, "ccs.tencentyun.com/") || strstr(img, "tencentcloudcr.com/")))
            return 1;
    }
    return 0;
}

/* "defaultDelegates" of the multus-style configuration in tke-cni-agent-conf, any data key */
static char *default_delegate(const json_t *conf)
{
    const char *k;
    json_t *v;
    char *out = NULL;

    json_object_foreach((json_t *)json_object_get(conf, "data"), k, v)
    {
        const char *text = json_string_value(v);
        json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
        const char *d = str(doc, "defaultDelegates");
        if (d && !out)
            out = kp_xstrdup(d);
        json_decref(doc);
    }
    return out;
}

void k8s_facts_cni_tke(json_t *cni, const json_t *daemonsets, const json_t *tke_conf)
{
    const json_t *eni = find_ds(daemonsets, "tke-eni-agent");
    const json_t *bridge = find_ds(daemonsets, "tke-bridge-agent");
    const json_t *cil = find_ds(daemonsets, "cilium");
    json_t *settings = json_object_get(cni, "settings");
    char *deleg = default_delegate(tke_conf);
    const char *mode = NULL;

    if (!eni && !bridge && !(cil && tke_image(cil))) {
        free(deleg);
        return;
    }
    if (!settings) {
        settings = json_object();
        json_object_set_new(cni, "settings", settings);
    }
    json_object_set_new(settings, "platform", json_string("tke"));
    if (cil) {
        const char *rm = str(settings, "routing_mode");
        mode = rm && strcmp(rm, "native") == 0 && eni ? "cilium+vpc-cni" : "cilium-overlay";
    } else if (eni && bridge) {
        mode = "global-router+vpc-cni";
    } else if (bridge) {
        mode = "global-router";
    } else if (deleg && strcmp(deleg, "tke-direct-eni") == 0) {
        mode = "vpc-cni-direct-eni";
    } else {
        mode = "vpc-cni-route-eni"; /* the shared-ENI default */
    }
    json_object_set_new(settings, "network_mode", json_string(mode));
    if (deleg)
        json_object_set_new(settings, "default_network", json_string(deleg));
    free(deleg);
}
