/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_pullsecret.c - --image-pull-secret: parse, read, copy (see k8s_pullsecret.h). */
#include "controller/k8s/k8s_pullsecret.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

/* a DNS-1123 subdomain (Secret names) of at most max characters; namespaces use max 63 */
static int dns_name_ok(const char *s, size_t n, size_t max)
{
    if (n == 0 || n > max || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(islower(c) || isdigit(c) || c == '-' || (c == '.' && max > 63)))
            return 0;
    }
    return 1;
}

int k8s_pullsecret_parse(const char *flag, const char *run_ns, struct k8s_pull_secret *out,
                         struct kp_err *err)
{
    const char *slash = flag ? strchr(flag, '/') : NULL;
    const char *name = slash ? slash + 1 : flag;

    memset(out, 0, sizeof(*out));
    if (!flag)
        return 0;
    if (slash && !dns_name_ok(flag, (size_t)(slash - flag), 63))
        return kp_err_set(err, "--image-pull-secret: '%.*s' is not a namespace name",
                          (int)(slash - flag), flag);
    if (!dns_name_ok(name, strlen(name), 253))
        return kp_err_set(err, "--image-pull-secret: '%s' is not a Secret name (NAME or NS/NAME)",
                          name);
    out->src_ns = slash ? kp_xstrndup(flag, (size_t)(slash - flag)) : NULL;
    out->name = kp_xstrdup(name);
    out->copy = !run_ns || (out->src_ns && strcmp(out->src_ns, run_ns) != 0);
    return 0;
}

void k8s_pullsecret_cleanup(struct k8s_pull_secret *ps)
{
    free(ps->src_ns);
    free(ps->name);
    memset(ps, 0, sizeof(*ps));
}

json_t *k8s_pullsecret_object(const struct k8s_objects_opts *opts, const json_t *source,
                              const char *from)
{
    const char *type = json_string_value(json_object_get(source, "type"));
    json_t *md =
        json_pack("{s:s, s:s, s:o, s:{s:s}}", "name", K8S_PULL_SECRET_NAME, "namespace", opts->ns,
                  "labels", k8s_objects_labels(opts), "annotations", K8S_PULL_COPIED_FROM, from);
    json_t *s = json_pack("{s:s, s:s, s:o, s:s}", "apiVersion", "v1", "kind", "Secret", "metadata",
                          md, "type", type ? type : K8S_DOCKER_CONFIG_JSON);

    if (source)
        json_object_set_new(s, "data", json_deep_copy(json_object_get(source, "data")));
    else
        json_object_set_new(s, "stringData",
                            json_pack("{s:s}", ".dockerconfigjson",
                                      "<copied from the Secret named above at run time>"));
    return s;
}

int k8s_pullsecret_fetch(struct kube_client *kc, const struct k8s_pull_secret *ps,
                         const char *ctx_ns, json_t **secret, char **from, struct kp_err *err)
{
    const char *ns = ps->src_ns ? ps->src_ns : ctx_ns;
    const char *type;
    long status;

    *secret = NULL;
    *from = kp_xasprintf("%s/%s", ns, ps->name);
    if (kube_get(kc, &KUBE_RES_SECRETS, ns, ps->name, secret, err) != 0) {
        status = kube_client_last(kc)->http_status;
        *secret = NULL;
        if (status == 404)
            return kp_err_set(err,
                              "--image-pull-secret: Secret %s not found in namespace %s: create "
                              "it there (kubectl -n %s create secret docker-registry %s ...) or "
                              "name the namespace that holds it (--image-pull-secret NS/%s)",
                              ps->name, ns, ns, ps->name, ps->name);
        if (status == 403)
            return kp_err_prefix(err,
                                 "--image-pull-secret: cannot read Secret %s (kperf copies it into "
                                 "the run's namespace): grant get on it, as in "
                                 "manifests/rbac-pull-secret.yaml",
                                 *from);
        return kp_err_prefix(err, "--image-pull-secret: reading Secret %s", *from);
    }
    type = json_string_value(json_object_get(*secret, "type"));
    if (!type || (strcmp(type, K8S_DOCKER_CONFIG_JSON) != 0 &&
                  strcmp(type, "kubernetes.io/dockercfg") != 0)) {
        kp_err_set(err,
                   "--image-pull-secret: Secret %s is of type %s, not %s: a kubelet pulls only "
                   "with docker-registry Secrets",
                   *from, type ? type : "(none)", K8S_DOCKER_CONFIG_JSON);
        json_decref(*secret);
        *secret = NULL;
        return -1;
    }
    return 0;
}
