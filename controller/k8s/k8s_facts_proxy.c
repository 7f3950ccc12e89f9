/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_facts_proxy.c - kube-proxy's mode and where it came from (see k8s_facts_proxy.h). */
#include "controller/k8s/k8s_facts_proxy.h"

#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/yaml_load.h"
#include "controller/k8s/k8s_facts.h"

#define CONFIG_MAX_BYTES (256 * 1024) /* a KubeProxyConfiguration is a few hundred bytes */

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static const json_t *kube_proxy_container(const json_t *daemonsets)
{
    size_t i, j;
    json_t *ds, *c;

    json_array_foreach(daemonsets, i, ds)
    {
        const char *n = str(json_object_get(ds, "metadata"), "name");
        const json_t *cs;
        if (!n || strcmp(n, "kube-proxy") != 0)
            continue;
        cs = json_object_get(
            json_object_get(json_object_get(json_object_get(ds, "spec"), "template"), "spec"),
            "containers");
        json_array_foreach(cs, j, c)
        {
            if (str(c, "name") && strcmp(str(c, "name"), "kube-proxy") == 0)
                return c;
        }
        return json_array_size(cs) ? json_array_get(cs, 0) : ds;
    }
    return NULL;
}

/* The value of --name=V or "--name V" in the container's command and args (the last one wins,
 * as in kube-proxy's flag parsing); NULL when absent. Borrowed from c. */
static const char *flag(const json_t *c, const char *name)
{
    static const char *const lists[] = {"command", "args"};
    size_t nl = strlen(name);
    const char *found = NULL;

    for (size_t l = 0; l < 2; l++) {
        const json_t *a = json_object_get(c, lists[l]);
        for (size_t i = 0; i < json_array_size(a); i++) {
            const char *s = json_string_value(json_array_get(a, i));
            if (!s || strncmp(s, name, nl) != 0)
                continue;
            if (s[nl] == '=')
                found = s + nl + 1;
            else if (s[nl] == '\0' && json_string_value(json_array_get(a, i + 1)))
                found = json_string_value(json_array_get(a, i + 1));
        }
    }
    return found;
}

struct verdict {
    char *mode;   /* owned */
    char *source; /* owned */
};

static void set(struct verdict *v, char *mode, char *source)
{
    free(v->mode);
    free(v->source);
    v->mode = mode;
    v->source = source;
}

/* One ConfigMap source: sets *v when it decides (read, or refused); leaves it when the
 * ConfigMap is absent or lacks the key. */
static void from_config_map(struct verdict *v, const json_t *answer, const char *name,
                            const char *key)
{
    char *unread = k8s_facts_unread(answer);
    const char *text = str(json_object_get(answer, "data"), key);
    const struct yaml_load_opts o = {.max_bytes = CONFIG_MAX_BYTES, .max_depth = 16};
    struct kp_err err;
    json_t *doc = NULL;
    const char *mode;

    if (unread && strncmp(unread, "unknown (not found", 18) != 0) {
        set(v, unread, kp_xasprintf("ConfigMap kube-system/%s", name));
        return;
    }
    free(unread);
    if (!answer || !text)
        return;
    if (yaml_load(text, strlen(text), &o, &doc, &err) != 0) {
        set(v,
            kp_xasprintf("unknown (ConfigMap kube-system/%s key %s is not YAML: %s)", name, key,
                         kp_err_msg(&err)),
            kp_xasprintf("ConfigMap kube-system/%s key %s", name, key));
        return;
    }
    mode = str(doc, "mode");
    if (mode && *mode)
        set(v, kp_xstrdup(mode), kp_xasprintf("ConfigMap kube-system/%s key %s", name, key));
    else
        set(v, kp_xstrdup("iptables"),
            kp_xasprintf("default: ConfigMap kube-system/%s key %s leaves mode empty, and "
                         "iptables is kube-proxy's documented default on Linux",
                         name, key));
    json_decref(doc);
}

json_t *k8s_facts_kube_proxy(const json_t *daemonsets, const json_t *eks_cm,
                             const json_t *kubeadm_cm)
{
    const json_t *c = kube_proxy_container(daemonsets);
    const char *mode_flag = c ? flag(c, "--proxy-mode") : NULL;
    struct verdict v = {NULL, NULL};
    json_t *out;

    if (!c)
        return json_pack("{s:s, s:s}", "mode", "none", "source",
                         "no kube-proxy DaemonSet in kube-system");
    if (mode_flag && *mode_flag)
        return json_pack("{s:s, s:s}", "mode", mode_flag, "source",
                         "DaemonSet kube-system/kube-proxy flag --proxy-mode");
    from_config_map(&v, eks_cm, "kube-proxy-config", "config");
    from_config_map(&v, kubeadm_cm, "kube-proxy", "config.conf");
    if (!v.mode && !flag(c, "--config"))
        set(&v, kp_xstrdup("iptables"),
            kp_xstrdup("default: the DaemonSet sets neither --proxy-mode nor --config, and "
                       "iptables is kube-proxy's documented default on Linux"));
    else if (!v.mode)
        set(&v,
            kp_xstrdup("unknown (not found: the DaemonSet reads --config but neither ConfigMap "
                       "kube-system/kube-proxy-config key config nor kube-system/kube-proxy "
                       "key config.conf exists)"),
            kp_xstrdup("DaemonSet kube-system/kube-proxy flag --config"));
    out = json_pack("{s:s, s:s}", "mode", v.mode, "source", v.source);
    set(&v, NULL, NULL);
    return out;
}
