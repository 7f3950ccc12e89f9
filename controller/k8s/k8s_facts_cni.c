/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_facts_cni.c - CNI datapath settings from DaemonSets and ConfigMaps (see k8s_facts_cni.h). */
#include "controller/k8s/k8s_facts_cni.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_facts.h"

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

static int is_true(const char *v)
{
    return v && (strcmp(v, "true") == 0 || strcmp(v, "True") == 0 || strcmp(v, "1") == 0);
}

struct key_field {
    const char *key, *field;
    int listed; /* always recorded: "unset (...)" when absent, "unknown (...)" when unreadable */
};

/* cilium-config keys (also agent flags of the same name) that shape the datapath; "tunnel" is
 * the key before Cilium 1.14 (tunnel-protocol, when both are there, wins: it comes first) */
static const struct key_field cilium_keys[] = {
    {"routing-mode", "routing_mode", 1},
    {"tunnel-protocol", "tunnel_protocol", 1},
    {"tunnel", "tunnel_protocol", 0},
    {"enable-bpf-masquerade", "bpf_masquerade", 1},
    {"kube-proxy-replacement", "kube_proxy_replacement", 1},
    {"enable-wireguard", "wireguard", 1},
    {"enable-ipsec", "ipsec", 1},
    {"bpf-lb-mode", "lb_mode", 1},
    {"enable-host-legacy-routing", "host_legacy_routing", 1},
    {"enable-ipv4-masquerade", "ipv4_masquerade", 0},
    {"enable-bandwidth-manager", "bandwidth_manager", 0},
    {"enable-bbr", "bbr", 0},
    {"mtu", "mtu", 0},
    {"ipam", "ipam", 0},
    {"auto-direct-node-routes", "auto_direct_node_routes", 0},
    {"datapath-mode", "datapath_mode", 0},
    {"enable-ipv4-big-tcp", "big_tcp_ipv4", 0},
    {"cni-chaining-mode", "chaining_mode", 0},
};

/* Why a listed setting has no value: its ConfigMap was refused (unread), not asked (NULL cm),
 * or it simply does not set it. Caller frees. */
static char *missing(const char *unread, const json_t *cm, const char *what)
{
    if (unread)
        return kp_xstrdup(unread);
    if (!cm)
        return kp_xasprintf("unknown (%s not read)", what);
    return kp_xstrdup("unset (Cilium's built-in default)");
}

/* host routing: set explicitly, or what the agent picks by itself: eBPF host routing needs
 * kube-proxy replacement and BPF masquerading (or none); otherwise it falls back to legacy */
static void cilium_host_routing(json_t *settings, const json_t *agent, const json_t *cm,
                                const char *unread)
{
    const char *legacy = str(settings, "host_legacy_routing");
    const char *kpr = str(settings, "kube_proxy_replacement");
    const char *masq = str(settings, "bpf_masquerade");

    if (legacy)
        json_object_set_new(settings, "host_routing",
                            json_string(is_true(legacy) ? "legacy" : "bpf"));
    else if (unread)
        json_object_set_new(settings, "host_routing", json_string(unread));
    else if (cm || agent)
        json_object_set_new(
            settings, "host_routing",
            json_string((is_true(kpr) || (kpr && strcmp(kpr, "strict") == 0)) && is_true(masq)
                            ? "bpf (inferred)"
                            : "legacy (inferred)"));
}

static void cilium(json_t *settings, const json_t *ds, const json_t *cm)
{
    const json_t *agent = container_named(ds, "cilium-agent");
    char *unread = k8s_facts_unread(cm);
    const json_t *data = unread ? NULL : json_object_get(cm, "data");

    for (size_t i = 0; i < sizeof(cilium_keys) / sizeof(cilium_keys[0]); i++) {
        char *flag = agent ? flag_value(agent, cilium_keys[i].key) : NULL;
        const char *v = flag ? flag : str(data, cilium_keys[i].key);
        if (v && (flag || !json_object_get(settings, cilium_keys[i].field)))
            json_object_set_new(settings, cilium_keys[i].field, json_string(v));
        free(flag);
    }
    cilium_host_routing(settings, agent, cm, unread);
    for (size_t i = 0; i < sizeof(cilium_keys) / sizeof(cilium_keys[0]); i++) {
        char *why;
        if (!cilium_keys[i].listed || json_object_get(settings, cilium_keys[i].field))
            continue;
        why = missing(unread, cm, "ConfigMap kube-system/cilium-config");
        json_object_set_new(settings, cilium_keys[i].field, json_string(why));
        free(why);
    }
    free(unread);
}

/* aws-node's env: the listed ones change the datapath (docs/kubernetes.md) */
static const struct key_field aws_env[] = {
    {"ENABLE_PREFIX_DELEGATION", "prefix_delegation", 1},
    {"AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG", "custom_networking", 1},
    {"POD_SECURITY_GROUP_ENFORCING_MODE", "pod_sg_enforcing_mode", 1},
    {"NETWORK_POLICY_ENFORCING_MODE", "network_policy_enforcing_mode", 1},
    {"AWS_VPC_K8S_CNI_EXTERNALSNAT", "external_snat", 1},
    {"ENABLE_IPv6", "ipv6", 1},
    {"ENABLE_POD_ENI", "pod_eni", 0},
    {"AWS_VPC_ENI_MTU", "mtu", 0},
    {"WARM_ENI_TARGET", "warm_eni_target", 0},
    {"WARM_IP_TARGET", "warm_ip_target", 0},
    {"MINIMUM_IP_TARGET", "minimum_ip_target", 0},
    {"WARM_PREFIX_TARGET", "warm_prefix_target", 0},
};

/* The env entry named name of container c (borrowed), or NULL. */
static const json_t *env_entry(const json_t *c, const char *name)
{
    size_t i;
    json_t *e;

    json_array_foreach(json_object_get(c, "env"), i, e)
    {
        if (str(e, "name") && strcmp(str(e, "name"), name) == 0)
            return e;
    }
    return NULL;
}

static void aws(json_t *settings, const json_t *ds, const json_t *cm)
{
    const json_t *node = container_named(ds, "aws-node");
    const json_t *npa = container_named(ds, "aws-eks-nodeagent");
    char *unread = k8s_facts_unread(cm);

    for (size_t i = 0; node && i < sizeof(aws_env) / sizeof(aws_env[0]); i++) {
        const json_t *e = env_entry(node, aws_env[i].key);
        if (str(e, "value"))
            json_object_set_new(settings, aws_env[i].field, json_string(str(e, "value")));
        else if (e) /* valueFrom: a ConfigMap, Secret or field kperf does not follow */
            json_object_set_new(settings, aws_env[i].field,
                                json_string("unknown (set with valueFrom, not read)"));
        else if (aws_env[i].listed)
            json_object_set_new(settings, aws_env[i].field,
                                json_string("unset (the VPC CNI's built-in default)"));
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
    /* amazon-vpc-cni: EKS's managed network policy controller switch */
    if (unread)
        json_object_set_new(settings, "network_policy", json_string(unread));
    else if (str(json_object_get(cm, "data"), "enable-network-policy-controller"))
        json_object_set_new(
            settings, "network_policy",
            json_string(str(json_object_get(cm, "data"), "enable-network-policy-controller")));
    free(unread);
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
        aws(settings, ds, cm);
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

/* The VPC-CNI's mode when tke-eni-agent is the only TKE agent: the default network the
 * ConfigMap names; "unknown (...)" when it was refused, is missing or names none. Caller frees. */
static char *eni_mode(const json_t *tke_conf, const char *deleg)
{
    char *unread = k8s_facts_unread(tke_conf);

    if (unread)
        return unread;
    if (!tke_conf)
        return kp_xstrdup("unknown (ConfigMap kube-system/tke-cni-agent-conf not read)");
    /* a list "a,b@net1" (multus): the first is the pod's default network */
    if (deleg && strncmp(deleg, "tke-direct-eni", 14) == 0 && strchr(",@", deleg[14]))
        return kp_xstrdup("vpc-cni-direct-eni");
    if (deleg && strncmp(deleg, "tke-route-eni", 13) == 0 && strchr(",@", deleg[13]))
        return kp_xstrdup("vpc-cni-route-eni");
    return kp_xasprintf("unknown (ConfigMap kube-system/tke-cni-agent-conf names %s%s%s)",
                        deleg ? "default network \"" : "no defaultDelegates", deleg ? deleg : "",
                        deleg ? "\"" : "");
}

void k8s_facts_cni_tke(json_t *cni, const json_t *daemonsets, const json_t *tke_conf)
{
    const json_t *eni = find_ds(daemonsets, "tke-eni-agent");
    const json_t *bridge = find_ds(daemonsets, "tke-bridge-agent");
    const json_t *cil = find_ds(daemonsets, "cilium");
    json_t *settings = json_object_get(cni, "settings");
    char *deleg = default_delegate(tke_conf); /* NULL from a Status: it has no data */
    char *mode = NULL;

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
        mode = kp_xstrdup(rm && strcmp(rm, "native") == 0 && eni ? "cilium+vpc-cni"
                                                                 : "cilium-overlay");
    } else if (eni && bridge) {
        mode = kp_xstrdup("global-router+vpc-cni");
    } else if (bridge) {
        mode = kp_xstrdup("global-router");
    } else {
        mode = eni_mode(tke_conf, deleg);
    }
    json_object_set_new(settings, "network_mode", json_string(mode));
    if (deleg)
        json_object_set_new(settings, "default_network", json_string(deleg));
    free(mode);
    free(deleg);
}
