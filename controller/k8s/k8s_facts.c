/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_facts.c - node eligibility, node pair, CNI and kube-proxy facts (see k8s_facts.h). */
#include "controller/k8s/k8s_facts.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_facts_cni.h"
#include "controller/k8s/k8s_shape.h"

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const json_t *obj(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

const char *k8s_facts_node_name(const json_t *node)
{
    const char *n = str(obj(node, "metadata"), "name");
    return n ? n : "";
}

static const char *label(const json_t *node, const char *key)
{
    return str(obj(obj(node, "metadata"), "labels"), key);
}

const char *k8s_facts_node_hostname(const json_t *node)
{
    const char *h = label(node, "kubernetes.io/hostname");
    return h ? h : k8s_facts_node_name(node);
}

const char *k8s_facts_node_zone(const json_t *node)
{
    const char *z = label(node, "topology.kubernetes.io/zone");
    return z ? z : label(node, "failure-domain.beta.kubernetes.io/zone");
}

const char *k8s_facts_node_arch(const json_t *node)
{
    const char *a = label(node, "kubernetes.io/arch");

    if (!a || !*a)
        a = str(obj(obj(node, "status"), "nodeInfo"), "architecture");
    return a && *a ? a : NULL;
}

const char *k8s_facts_pod_cpu_limit(const json_t *pod, const char **why)
{
    size_t i;
    json_t *c;

    if (why)
        *why = json_string_value(
            obj(obj(obj(pod, "metadata"), "annotations"), "kubernetes.io/limit-ranger"));
    json_array_foreach(obj(obj(pod, "spec"), "containers"), i, c)
    {
        const char *cpu = json_string_value(obj(obj(obj(c, "resources"), "limits"), "cpu"));
        if (cpu)
            return cpu;
    }
    return NULL;
}

static int node_ready(const json_t *node)
{
    size_t i;
    json_t *c;

    json_array_foreach(obj(obj(node, "status"), "conditions"), i, c)
    {
        if (strcmp(str(c, "type") ? str(c, "type") : "", "Ready") == 0)
            return strcmp(str(c, "status") ? str(c, "status") : "", "True") == 0;
    }
    return 0;
}

char *k8s_facts_node_not_ready(const json_t *node)
{
    size_t i;
    json_t *c;

    json_array_foreach(obj(obj(node, "status"), "conditions"), i, c)
    {
        if (strcmp(str(c, "type") ? str(c, "type") : "", "Ready") != 0)
            continue;
        if (strcmp(str(c, "status") ? str(c, "status") : "", "True") == 0)
            return NULL;
        return kp_xasprintf("Ready=%s (%s: %s)", str(c, "status") ? str(c, "status") : "?",
                            str(c, "reason") ? str(c, "reason") : "no reason",
                            str(c, "message") ? str(c, "message") : "no message");
    }
    return kp_xstrdup("no Ready condition");
}

static int tolerates(const json_t *tol, const json_t *taint)
{
    const char *tkey = str(tol, "key");
    const char *op = str(tol, "operator") ? str(tol, "operator") : "Equal";
    const char *teff = str(tol, "effect");
    const char *key = str(taint, "key") ? str(taint, "key") : "";
    const char *eff = str(taint, "effect") ? str(taint, "effect") : "";

    if (teff && *teff && strcmp(teff, eff) != 0)
        return 0;
    if (!tkey || !*tkey) /* empty key + Exists tolerates every key */
        return strcmp(op, "Exists") == 0;
    if (strcmp(tkey, key) != 0)
        return 0;
    if (strcmp(op, "Exists") == 0)
        return 1;
    return strcmp(str(tol, "value") ? str(tol, "value") : "",
                  str(taint, "value") ? str(taint, "value") : "") == 0;
}

/* the node's OS when it is not Linux (kubernetes.io/os, else nodeInfo.operatingSystem) */
static const char *not_linux(const json_t *node)
{
    const char *os = label(node, "kubernetes.io/os");

    if (!os)
        os = str(obj(obj(node, "status"), "nodeInfo"), "operatingSystem");
    return os && strcmp(os, "linux") != 0 ? os : NULL;
}

/* the label that makes node a virtual one (EKS Fargate, virtual-kubelet: ACI, TKE super
 * nodes), static text, or NULL */
static const char *virtual_node(const json_t *node)
{
    const char *ct = label(node, "eks.amazonaws.com/compute-type");
    const char *type = label(node, "type");

    if (ct && strcmp(ct, "fargate") == 0)
        return "eks.amazonaws.com/compute-type=fargate";
    if (type && strcmp(type, "virtual-kubelet") == 0)
        return "type=virtual-kubelet";
    return NULL;
}

static void set_why(char **why_owned, char *text)
{
    if (why_owned)
        *why_owned = text;
    else
        free(text);
}

int k8s_facts_node_eligible(const json_t *node, const struct k8s_node_filter *f, char **why_owned)
{
    size_t i, j;
    json_t *taint, *tol;

    if (why_owned)
        *why_owned = NULL;
    for (i = 0; f && i < f->n_selector; i++) {
        const char *v = label(node, f->selector[i].key);
        if (!v || strcmp(v, f->selector[i].value) != 0) {
            set_why(why_owned, kp_xasprintf("does not match --node-selector %s=%s",
                                            f->selector[i].key, f->selector[i].value));
            return 0;
        }
    }
    if (f && f->arch && k8s_facts_node_arch(node) &&
        strcmp(k8s_facts_node_arch(node), f->arch) != 0) {
        set_why(why_owned, kp_xasprintf("architecture %s, not %s (--arch; --arch any lets pairs "
                                        "mix architectures)",
                                        k8s_facts_node_arch(node), f->arch));
        return 0;
    }
    if (not_linux(node)) {
        set_why(why_owned,
                kp_xasprintf("OS %s, not linux (the agent image is Linux)", not_linux(node)));
        return 0;
    }
    if (virtual_node(node)) {
        set_why(why_owned, kp_xasprintf("virtual node (%s): no host to measure, no host "
                                        "network, no DaemonSet pods",
                                        virtual_node(node)));
        return 0;
    }
    if (!node_ready(node)) {
        set_why(why_owned, kp_xstrdup("not Ready"));
        return 0;
    }
    if (json_is_true(obj(obj(node, "spec"), "unschedulable"))) {
        set_why(why_owned, kp_xstrdup("cordoned (unschedulable)"));
        return 0;
    }
    json_array_foreach(obj(obj(node, "spec"), "taints"), i, taint)
    {
        const char *eff = str(taint, "effect") ? str(taint, "effect") : "";
        int ok = 0;
        if (strcmp(eff, "NoSchedule") != 0 && strcmp(eff, "NoExecute") != 0)
            continue; /* PreferNoSchedule only steers the scheduler */
        json_array_foreach(f ? f->tolerations : NULL, j, tol)
        {
            if (tolerates(tol, taint)) {
                ok = 1;
                break;
            }
        }
        if (!ok) {
            const char *v = str(taint, "value");
            set_why(why_owned,
                    kp_xasprintf("taint %s%s%s:%s not tolerated (add --tolerations %s%s%s:%s)",
                                 str(taint, "key") ? str(taint, "key") : "", v ? "=" : "",
                                 v ? v : "", eff, str(taint, "key") ? str(taint, "key") : "",
                                 v ? "=" : "", v ? v : "", eff));
            return 0;
        }
    }
    return 1;
}

json_t *k8s_facts_node_info(const json_t *node, const char *role)
{
    const json_t *ni = obj(obj(node, "status"), "nodeInfo");
    json_t *out = json_pack("{s:s}", "name", k8s_facts_node_name(node));
    const char *it = label(node, "node.kubernetes.io/instance-type");
    char *group;
    size_t i;
    json_t *a;

    if (!it)
        it = label(node, "beta.kubernetes.io/instance-type");
    if (role)
        json_object_set_new(out, "role", json_string(role));
    if (str(ni, "kernelVersion"))
        json_object_set_new(out, "kernel", json_string(str(ni, "kernelVersion")));
    if (str(ni, "osImage"))
        json_object_set_new(out, "os_image", json_string(str(ni, "osImage")));
    if (str(ni, "containerRuntimeVersion"))
        json_object_set_new(out, "container_runtime",
                            json_string(str(ni, "containerRuntimeVersion")));
    if (k8s_facts_node_arch(node))
        json_object_set_new(out, "arch", json_string(k8s_facts_node_arch(node)));
    if (str(ni, "kubeletVersion"))
        json_object_set_new(out, "kubelet", json_string(str(ni, "kubeletVersion")));
    if (it)
        json_object_set_new(out, "instance_type", json_string(it));
    if (k8s_facts_node_zone(node))
        json_object_set_new(out, "zone", json_string(k8s_facts_node_zone(node)));
    if ((group = k8s_shape_node_group(node)))
        json_object_set_new(out, "node_group", json_string(group));
    free(group);
    json_array_foreach(obj(obj(node, "status"), "addresses"), i, a)
    {
        if (str(a, "type") && strcmp(str(a, "type"), "InternalIP") == 0 && str(a, "address")) {
            json_object_set_new(out, "internal_ip", json_string(str(a, "address")));
            break;
        }
    }
    return out;
}

static const json_t *find_node(const json_t *nodes, const char *name)
{
    size_t i;
    json_t *n;

    json_array_foreach(nodes, i, n)
    {
        if (strcmp(k8s_facts_node_name(n), name) == 0)
            return n;
    }
    return NULL;
}

static int by_name(const void *x, const void *y)
{
    return strcmp(k8s_facts_node_name(*(json_t *const *)x),
                  k8s_facts_node_name(*(json_t *const *)y));
}

static int same_zone(const json_t *x, const json_t *y)
{
    const char *zx = k8s_facts_node_zone(x), *zy = k8s_facts_node_zone(y);
    return zx && zy && strcmp(zx, zy) == 0;
}

int k8s_facts_choose_pair(const json_t *nodes, const char *want_a, const char *want_b,
                          const json_t **a, const json_t **b, const char **note, struct kp_err *err)
{
    size_t n = json_array_size(nodes);
    json_t **sorted = NULL;
    int rc = -1;

    *a = *b = NULL;
    *note = NULL;
    if (n == 0)
        return kp_err_set(err, "no eligible node: every node is NotReady, cordoned, tainted "
                               "without a matching --tolerations, or outside --node-selector");
    if (want_a && !(*a = find_node(nodes, want_a)))
        return kp_err_set(err, "--nodes: node '%s' is not an eligible node", want_a);
    if (want_b && !(*b = find_node(nodes, want_b)))
        return kp_err_set(err, "--nodes: node '%s' is not an eligible node", want_b);
    if (want_a && want_b && *a == *b)
        return kp_err_set(err, "--nodes: A and B are the same node '%s'", want_a);
    if (*a && (*b || n == 1))
        return 0;
    sorted = kp_xcalloc(n, sizeof(*sorted));
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(nodes, i);
    qsort(sorted, n, sizeof(*sorted), by_name);
    /* complete a given A (or B) with a partner, same zone first */
    for (int pass = 0; pass < 2 && !(*a && *b); pass++) {
        for (size_t i = 0; i < n && !(*a && *b); i++) {
            for (size_t j = 0; j < n && !(*a && *b); j++) {
                const json_t *x = *a ? *a : sorted[i];
                const json_t *y = *b ? *b : sorted[j];
                if (x == y || (pass == 0 && !same_zone(x, y)))
                    continue;
                if ((*a && x != *a) || (*b && y != *b))
                    continue;
                *a = x;
                *b = y;
                if (pass == 1)
                    *note = "no two eligible nodes share a zone; other-node figures cross zones";
            }
        }
    }
    if (!*a)
        *a = sorted[0];
    rc = 0;
    free(sorted);
    return rc;
}

int k8s_facts_nodes_from_report(const json_t *report, char **a, char **b, struct kp_err *err)
{
    const json_t *nodes = obj(obj(report, "metadata"), "nodes");
    size_t i;
    json_t *n;

    *a = *b = NULL;
    json_array_foreach(nodes, i, n)
    {
        const char *role = str(n, "role") ? str(n, "role") : "";
        if (strcmp(role, "server") == 0 && !*a && str(n, "name"))
            *a = kp_xstrdup(str(n, "name"));
        else if (strcmp(role, "client") == 0 && !*b && str(n, "name"))
            *b = kp_xstrdup(str(n, "name"));
    }
    if (!*a) {
        free(*b);
        *b = NULL;
        return kp_err_set(err, "the report names no server node (metadata.nodes[] with role "
                               "\"server\"); was it made by 'kperf run' on a cluster?");
    }
    return 0;
}

char *k8s_facts_image_tag(const char *image)
{
    const char *at = strchr(image, '@');
    const char *slash = strrchr(image, '/');
    const char *end = at ? at : image + strlen(image);
    const char *colon = NULL;

    for (const char *p = slash ? slash : image; p < end; p++) {
        if (*p == ':')
            colon = p;
    }
    if (colon)
        return kp_xstrndup(colon + 1, (size_t)(end - colon - 1));
    if (at)
        return kp_xstrdup(at + 1);
    return kp_xstrdup("latest");
}

/* The first container of a DaemonSet (borrowed) whose name is `want`, else the first one. */
static const json_t *ds_container(const json_t *ds, const char *want)
{
    const json_t *cs = obj(obj(obj(obj(ds, "spec"), "template"), "spec"), "containers");
    size_t i;
    json_t *c;

    json_array_foreach(cs, i, c)
    {
        if (want && str(c, "name") && strcmp(str(c, "name"), want) == 0)
            return c;
    }
    return json_array_get(cs, 0);
}

struct cni_kind {
    const char *ds_name;   /* kube-system DaemonSet */
    const char *cni;       /* report name */
    const char *container; /* the container whose image tag is the version */
};

/* priority order: the first present is the primary CNI */
static const struct cni_kind cni_kinds[] = {
    {"cilium", "cilium", "cilium-agent"},
    {"calico-node", "calico", "calico-node"},
    {"canal", "canal", "calico-node"},
    {"aws-node", "aws-vpc-cni", "aws-node"},
    {"kube-flannel-ds", "flannel", "kube-flannel"},
    {"kube-flannel", "flannel", "kube-flannel"},
    {"weave-net", "weave", "weave"},
    {"kube-router", "kube-router", "kube-router"},
    {"antrea-agent", "antrea", "antrea-agent"},
    {"tke-eni-agent", "tke-vpc-cni", "tke-eni-agent"},
    {"tke-bridge-agent", "tke-global-router", "tke-bridge-agent"},
    {"azure-cni", "azure-cni", NULL},
    {"kindnet", "kindnet", "kindnet-cni"},
};

static const json_t *find_ds(const json_t *daemonsets, const char *name)
{
    size_t i;
    json_t *ds;

    json_array_foreach(daemonsets, i, ds)
    {
        if (strcmp(str(obj(ds, "metadata"), "name") ? str(obj(ds, "metadata"), "name") : "",
                   name) == 0)
            return ds;
    }
    return NULL;
}

json_t *k8s_facts_cni(const json_t *daemonsets, const json_t *cilium_config,
                      const json_t *vpc_cni_config)
{
    json_t *primary = NULL;
    json_t *also = json_array();

    for (size_t k = 0; k < sizeof(cni_kinds) / sizeof(cni_kinds[0]); k++) {
        const json_t *ds = find_ds(daemonsets, cni_kinds[k].ds_name);
        const json_t *c;
        json_t *one;
        json_t *settings;
        char *tag;
        if (!ds)
            continue;
        c = ds_container(ds, cni_kinds[k].container);
        one = json_pack("{s:s, s:{}}", "name", cni_kinds[k].cni, "settings");
        settings = json_object_get(one, "settings");
        if (str(c, "image")) {
            tag = k8s_facts_image_tag(str(c, "image"));
            json_object_set_new(one, "version", json_string(tag));
            json_object_set_new(settings, "image", json_string(str(c, "image")));
            free(tag);
        }
        k8s_facts_cni_settings(settings, cni_kinds[k].cni, ds,
                               strcmp(cni_kinds[k].cni, "cilium") == 0        ? cilium_config
                               : strcmp(cni_kinds[k].cni, "aws-vpc-cni") == 0 ? vpc_cni_config
                                                                              : NULL);
        if (!primary)
            primary = one;
        else
            json_array_append_new(also, one);
    }
    if (!primary)
        primary = json_pack("{s:s}", "name", "unknown");
    if (json_array_size(also) > 0)
        json_object_set(primary, "also", also);
    json_decref(also);
    return primary;
}

json_t *k8s_facts_status(int http_status, const char *reason, const char *message,
                         const char *plural, const char *name)
{
    return json_pack("{s:s, s:s, s:i, s:s?, s:s?, s:{s:s?, s:s?}}", "kind", "Status", "status",
                     "Failure", "code", http_status, "reason", reason, "message", message,
                     "details", "kind", plural, "name", name);
}

char *k8s_facts_unread(const json_t *answer)
{
    const json_t *d = obj(answer, "details");
    const char *msg = str(answer, "message");
    const char *reason = str(answer, "reason");
    int code = (int)json_integer_value(obj(answer, "code"));

    if (!answer || !str(answer, "kind") || strcmp(str(answer, "kind"), "Status") != 0 ||
        (str(answer, "status") && strcmp(str(answer, "status"), "Success") == 0))
        return NULL;
    if (code == 404)
        return kp_xasprintf("unknown (not found: %s %s)",
                            str(d, "kind") ? str(d, "kind") : "object",
                            str(d, "name") ? str(d, "name") : "?");
    if (code == 403)
        return kp_xasprintf("unknown (forbidden: %s)",
                            msg ? msg : "the API refused the GET (RBAC: manifests/rbac.yaml)");
    return kp_xasprintf("unknown (HTTP %d%s%s: %s)", code, reason ? " " : "", reason ? reason : "",
                        msg ? msg : "no message");
}
