/* SPDX-License-Identifier: Apache-2.0 */
/* config_incluster.c - the in-cluster configuration (service-account mount) and freeing a
 * resolved config. See config.h. */
#include "controller/kube/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "base/portable.h"
#include "controller/kube/config_int.h"

#define INCLUSTER_ROOT "/var/run/secrets/kubernetes.io/serviceaccount"

int kube_config_in_cluster(struct kube_config **out, struct kp_err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    const char *root = getenv("KPERF_INCLUSTER_ROOT");
    struct kube_config *c;
    char *path;
    char *ns = NULL;
    struct stat st;

    *out = NULL;
    if (!host || !*host || !port || !*port)
        return kp_err_set(err, "in-cluster config: KUBERNETES_SERVICE_HOST/PORT are not set; "
                               "not running in a pod? Pass --kubeconfig FILE");
    if (!root || !*root)
        root = INCLUSTER_ROOT;
    path = kp_xasprintf("%s/token", root);
    if (access(path, R_OK) != 0) {
        kp_err_set(err,
                   "in-cluster config: cannot read %s: %s; mount the service-account token "
                   "(automountServiceAccountToken must not be false)",
                   path, strerror(errno));
        free(path);
        return -1;
    }
    c = kp_xcalloc(1, sizeof(*c));
    c->source = kp_xstrdup("in-cluster");
    c->context_name = kp_xstrdup("");
    c->cluster_name = kp_xstrdup("in-cluster");
    c->user_name = kp_xstrdup("service-account");
    c->token_file = path;
    c->server = strchr(host, ':') ? kp_xasprintf("https://[%s]:%s", host, port)
                                  : kp_xasprintf("https://%s:%s", host, port);
    path = kp_xasprintf("%s/ca.crt", root);
    if (stat(path, &st) == 0)
        c->ca_file = path;
    else
        free(path);
    path = kp_xasprintf("%s/namespace", root);
    if (cfg_read_file(path, 253, &ns, NULL, NULL) == 0)
        ns[strcspn(ns, " \r\n\t")] = '\0';
    free(path);
    c->ns = ns && *ns ? ns : kp_xstrdup("default");
    if (c->ns != ns)
        free(ns);
    *out = c;
    return 0;
}

void cfg_exec_free(struct kube_exec_config *e)
{
    if (!e)
        return;
    free(e->api_version);
    free(e->command);
    for (char **p = e->args; p && *p; p++)
        free(*p);
    free(e->args);
    for (char **p = e->env; p && *p; p++)
        free(*p);
    free(e->env);
    free(e->install_hint);
    free(e);
}

static void free_secret_n(char *p, size_t n)
{
    if (p)
        kp_wipe(p, n);
    free(p);
}

void kube_config_free(struct kube_config *c)
{
    if (!c)
        return;
    free(c->source);
    free(c->context_name);
    free(c->cluster_name);
    free(c->user_name);
    free(c->ns);
    free(c->server);
    kp_free_secret(c->server_user);
    kp_free_secret(c->server_password);
    free(c->ca_file);
    free(c->ca_data);
    free(c->tls_server_name);
    free(c->proxy_url);
    free(c->exec_cluster_config);
    free(c->cert_file);
    free(c->key_file);
    free(c->cert_data);
    free_secret_n(c->key_data, c->key_data_len);
    kp_free_secret(c->token);
    free(c->token_file);
    cfg_exec_free(c->exec);
    free(c->impersonate_user);
    for (char **g = c->impersonate_groups; g && *g; g++)
        free(*g);
    free(c->impersonate_groups);
    free(c->impersonate_uid);
    for (char **x = c->impersonate_extra; x && *x; x++)
        free(*x);
    free(c->impersonate_extra);
    free(c);
}
