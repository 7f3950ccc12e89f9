/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - kubeconfig loading the way kubectl does it: --kubeconfig or $KUBECONFIG (merged,
 * first file wins per name) or ~/.kube/config, then in-cluster service-account files.
 * Owns file selection, merging, relative-path resolution and validation of one resolved
 * context. Leaves credential fetching (token files, exec plugins) and HTTP to kube/auth.c and
 * kube/http.c; knows nothing of kperf. */
#ifndef KPERF_KUBE_CONFIG_H
#define KPERF_KUBE_CONFIG_H

#include <stddef.h>

#include "base/kp_err.h"

/* Limits that protect the YAML loader (alias bombs, nesting, size). */
#define KUBE_CONFIG_MAX_BYTES (4u << 20) /* per kubeconfig file */
#define KUBE_CONFIG_MAX_DEPTH 64         /* mapping/sequence nesting */
#define KUBE_CONFIG_MAX_NODES 200000     /* scalars + collections per file */

/* Where to look. Every field may be NULL/0 ("as kubectl would"). Strings are borrowed for the
 * duration of kube_config_load only. */
struct kube_config_opts {
    const char *kubeconfig; /* --kubeconfig: this file only, must exist */
    const char *context;    /* --context: overrides current-context */
    const char *ns;         /* --namespace: overrides the context's namespace */
    int in_cluster_only;    /* skip kubeconfig files, use the service-account mount */
};

/* One exec credential plugin (user.exec). All strings owned by the config. */
struct kube_exec_config {
    char *api_version; /* client.authentication.k8s.io/v1 or /v1beta1 (v1alpha1 refused) */
    char *command;     /* absolute if the kubeconfig gave a path with '/', else looked up on PATH */
    char **args;       /* NULL-terminated; never NULL */
    char **env;        /* NULL-terminated "NAME=value" pairs added to our environment */
    char *install_hint;
    int provide_cluster_info;
    int interactive_mode; /* 0 Never, 1 IfAvailable, 2 Always (we are never interactive) */
};

/* A resolved context: cluster + user + namespace. Fields are public for reading; everything
 * is owned by the struct and freed by kube_config_free (secrets wiped). *_data fields hold
 * decoded PEM bytes (not base64). */
struct kube_config {
    char *source;       /* "file1:file2" that were merged, or "in-cluster" (for messages) */
    char *context_name; /* "" for in-cluster */
    char *cluster_name;
    char *user_name;
    char *ns; /* never NULL: --namespace, else the context's, else "default" */

    /* cluster */
    char *server;              /* https://host[:port][/prefix] or http://... ; no trailing '/';
                                  never a user:password@ (that is in server_user and
                                  server_password) */
    char *server_user;         /* the server URL's user and password, URL-decoded, or NULL */
    char *server_password;     /* (secrets): sent as basic auth when no other credential is,
                                  like Go's client */
    char *ca_file;             /* absolute path or NULL */
    char *ca_data;             /* PEM or NULL */
    size_t ca_data_len;        /* bytes in ca_data */
    int insecure;              /* insecure-skip-tls-verify */
    char *tls_server_name;     /* or NULL */
    char *proxy_url;           /* or NULL; http, https, socks5 only */
    char *exec_cluster_config; /* extensions[client.authentication.k8s.io/exec] as JSON or NULL */
    int disable_compression;   /* do not ask for gzip responses */

    /* user: like kubectl, left empty for an http:// server (no credentials in clear text); a
     * static token, token file or client certificate makes the exec plugin unused (NULL) */
    char *cert_file; /* absolute path or NULL */
    char *key_file;
    char *cert_data; /* PEM or NULL */
    size_t cert_data_len;
    char *key_data; /* PEM or NULL (secret) */
    size_t key_data_len;
    char *token;                   /* static bearer token or NULL (secret) */
    char *token_file;              /* absolute path or NULL; re-read when it changes */
    struct kube_exec_config *exec; /* or NULL */
    char *impersonate_user;        /* "as", or NULL; kept for http:// too, as kubectl does */
    char **impersonate_groups;     /* "as-groups", NULL-terminated, or NULL */
    char *impersonate_uid;         /* "as-uid", or NULL */
    char **impersonate_extra;      /* "Impersonate-Extra-<key>: <value>" header lines from
                                      "as-user-extra" (key %-escaped as client-go does),
                                      NULL-terminated, or NULL */
    int oidc;                      /* token is an auth-provider oidc id-token (or NULL), a JWT
                                      whose "exp" is checked before each use (kube/auth.c):
                                      0 not oidc, 1 oidc, 2 oidc with a refresh-token */
};

/* Loads the kubeconfig selected by opts (or the in-cluster config) and resolves one context.
 * On success *out is a new config (caller frees with kube_config_free); on failure returns -1
 * with one line in err naming the file, context or field and what to do. */
KP_MUST_CHECK int kube_config_load(const struct kube_config_opts *opts, struct kube_config **out,
                                   struct kp_err *err);

/* Parses one kubeconfig document from memory and resolves `context` (NULL = current-context).
 * `name` is used in messages, `dir` resolves relative paths (NULL = leave them relative).
 * Used by the loader and the fuzz target. Same ownership and errors as kube_config_load. */
KP_MUST_CHECK int kube_config_parse(const char *buf, size_t len, const char *name, const char *dir,
                                    const char *context, struct kube_config **out,
                                    struct kp_err *err);

/* In-cluster config from KUBERNETES_SERVICE_HOST/PORT and the service-account mount
 * (/var/run/secrets/kubernetes.io/serviceaccount, or $KPERF_INCLUSTER_ROOT for tests).
 * Returns 0 with *out set (caller frees), or -1 with the reason. */
KP_MUST_CHECK int kube_config_in_cluster(struct kube_config **out, struct kp_err *err);

/* Frees the config, wiping tokens and keys. NULL is a no-op. */
void kube_config_free(struct kube_config *cfg);

#endif
