/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c - see exec.h. The child process is base/subproc's: our environment plus the plugin's
 * env and KUBERNETES_EXEC_INFO, stdin /dev/null (we are never interactive), stderr the user's,
 * stdout read into a capped buffer, exec failures (ENOENT) reported by errno. This file says
 * what to run and what the outcome means. */
#include "controller/kube/exec.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/portable.h"
#include "base/subproc.h"
#include "controller/kube/codec.h"
#include "controller/kube/config_int.h"

#define EXEC_CA_MAX (4u << 20) /* a CA bundle file for provideClusterInfo */

void exec_cred_cleanup(struct exec_cred *c)
{
    if (!c)
        return;
    kp_free_secret(c->token);
    free(c->cert);
    if (c->key)
        kp_wipe(c->key, c->key_len);
    free(c->key);
    memset(c, 0, sizeof(*c));
}

/* KUBERNETES_EXEC_INFO for the plugin (caller frees). */
static char *exec_info(const struct kube_config *cfg)
{
    json_t *spec = json_pack("{s:b}", "interactive", 0);
    json_t *info;
    char *s;

    if (cfg->exec->provide_cluster_info) {
        /* client.authentication.k8s.io Cluster: omitempty fields left out as client-go does;
         * a CA file is sent as certificate-authority-data (its content) */
        json_t *cl = json_pack("{s:s}", "server", cfg->server);
        const char *ca = cfg->ca_data;
        size_t ca_len = cfg->ca_data_len;
        char *ca_file_data = NULL;
        struct kp_err ignored = {{0}};
        if (cfg->tls_server_name)
            json_object_set_new(cl, "tls-server-name", json_string(cfg->tls_server_name));
        if (cfg->insecure)
            json_object_set_new(cl, "insecure-skip-tls-verify", json_true());
        if (!ca && cfg->ca_file &&
            cfg_read_file(cfg->ca_file, EXEC_CA_MAX, &ca_file_data, &ca_len, &ignored) == 0)
            ca = ca_file_data;
        if (ca && ca_len > 0) {
            char *b64 = codec_b64_encode(ca, ca_len);
            json_object_set_new(cl, "certificate-authority-data", json_string(b64));
            free(b64);
        }
        free(ca_file_data);
        if (cfg->proxy_url)
            json_object_set_new(cl, "proxy-url", json_string(cfg->proxy_url));
        if (cfg->disable_compression)
            json_object_set_new(cl, "disable-compression", json_true());
        /* a RawExtension: null when the cluster has no exec extension, as client-go sends it */
        json_object_set_new(cl, "config",
                            cfg->exec_cluster_config
                                ? json_loads(cfg->exec_cluster_config, JSON_DECODE_ANY, NULL)
                                : json_null());
        json_object_set_new(spec, "cluster", cl);
    }
    info = json_pack("{s:s, s:s, s:o}", "kind", "ExecCredential", "apiVersion",
                     cfg->exec->api_version, "spec", spec);
    s = json_dumps(info, JSON_COMPACT);
    json_decref(info);
    return s;
}

/* Runs the plugin to completion through base/subproc. Returns 0 with r filled (whatever the
 * outcome: the caller reads it), or -1 when no child could be created. */
static int run_plugin(const struct kube_config *cfg, volatile sig_atomic_t *abort_a,
                      volatile sig_atomic_t *abort_b, struct subproc_result *r, struct kp_err *err)
{
    struct subproc_opts o = {
        .timeout_ms = EXEC_TIMEOUT_MS,
        .max_out = EXEC_MAX_OUTPUT,
        .cancel = abort_a,
        .cancel_also = abort_b,
        .stdin_null = true,     /* we are never interactive */
        .stderr_inherit = true, /* its messages (login prompts, errors) are for the user */
        .same_pgroup = true,    /* like kubectl: the terminal's Ctrl-C and /dev/tty reach it */
    };
    char *info = exec_info(cfg);
    char *info_kv = kp_xasprintf("KUBERNETES_EXEC_INFO=%s", info);
    size_t nargs = 0, nenv = 0;
    const char **argv, **env;
    int rc;

    while (cfg->exec->args[nargs])
        nargs++;
    argv = kp_xcalloc(nargs + 2, sizeof(*argv));
    argv[0] = cfg->exec->command;
    memcpy(argv + 1, cfg->exec->args, nargs * sizeof(*argv));
    while (cfg->exec->env[nenv])
        nenv++;
    env = kp_xcalloc(nenv + 2, sizeof(*env));
    memcpy(env, cfg->exec->env, nenv * sizeof(*env));
    env[nenv] = info_kv; /* last: replaces a KUBERNETES_EXEC_INFO of ours */
    o.env = env;
    rc = subproc_run(argv, &o, r, err);
    free(env);
    free(argv);
    free(info_kv);
    free(info);
    return rc;
}

static int missing_command(const struct kube_config *cfg, int e, struct kp_err *err)
{
    const char *hint = cfg->exec->install_hint;

    if (e == ENOENT)
        return kp_err_set(err, "exec plugin \"%s\" was not found%s; %s", cfg->exec->command,
                          strchr(cfg->exec->command, '/') ? "" : " on PATH",
                          hint ? hint : "install it or fix users[].user.exec.command");
    return kp_err_set(err, "cannot run exec plugin \"%s\": %s", cfg->exec->command, strerror(e));
}

int exec_run(const struct kube_config *cfg, volatile sig_atomic_t *abort_a,
             volatile sig_atomic_t *abort_b, struct exec_cred *out, struct kp_err *err)
{
    struct subproc_result r;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (run_plugin(cfg, abort_a, abort_b, &r, err) != 0)
        return kp_err_prefix(err, "exec plugin \"%s\"", cfg->exec->command);
    if (r.exec_errno) {
        missing_command(cfg, r.exec_errno, err);
        goto out;
    }
    if (r.cancelled || r.timed_out || r.out_truncated) {
        kp_err_set(err, "exec plugin \"%s\" %s", cfg->exec->command,
                   r.cancelled ? "interrupted"
                   : r.timed_out
                       ? "did not finish within 120 s; check that it does not wait for input"
                       : "printed more than 1 MiB");
        goto out;
    }
    if (r.exit_code != 0) {
        kp_err_set(err, "exec plugin \"%s\" failed (%s %d); see its messages above",
                   cfg->exec->command, r.exit_code >= 0 ? "exit status" : "signal",
                   r.exit_code >= 0 ? r.exit_code : r.term_signal);
        goto out;
    }
    rc = exec_parse(r.out, r.out_len, cfg->exec->api_version, out, err);
    if (rc != 0)
        kp_err_prefix(err, "exec plugin \"%s\"", cfg->exec->command);
out:
    subproc_result_cleanup(&r); /* wipes the output */
    return rc;
}

int exec_parse(const char *text, size_t len, const char *api_version, struct exec_cred *cred,
               struct kp_err *err)
{
    json_t *doc = json_loadb(text, len, 0, NULL);
    const char *kind, *api, *tok, *cert, *key, *exp;
    json_t *st;
    int rc = -1;

    memset(cred, 0, sizeof(*cred));
    if (!json_is_object(doc)) {
        kp_err_set(err, "did not print an ExecCredential JSON document");
        goto out;
    }
    kind = json_string_value(json_object_get(doc, "kind"));
    api = json_string_value(json_object_get(doc, "apiVersion"));
    if (!kind || strcmp(kind, "ExecCredential") != 0) {
        kp_err_set(err, "printed kind \"%s\", expected ExecCredential", kind ? kind : "");
        goto out;
    }
    if (!api || strcmp(api, api_version) != 0) {
        kp_err_set(err, "answered with apiVersion \"%s\" but the kubeconfig asks for \"%s\"",
                   api ? api : "", api_version);
        goto out;
    }
    st = json_object_get(doc, "status");
    tok = json_string_value(json_object_get(st, "token"));
    cert = json_string_value(json_object_get(st, "clientCertificateData"));
    key = json_string_value(json_object_get(st, "clientKeyData"));
    exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    if (!!cert != !!key) {
        kp_err_set(err, "returned a client certificate without its key (or the reverse)");
        goto out;
    }
    if ((!tok || !*tok) && !cert) {
        kp_err_set(err, "returned neither status.token nor a client certificate");
        goto out;
    }
    if (exp && codec_rfc3339_parse(exp, &cred->expiry) != 0) {
        kp_err_set(err, "returned an invalid expirationTimestamp \"%s\"", exp);
        goto out;
    }
    if (tok && *tok)
        cred->token = kp_xstrdup(tok);
    if (cert) {
        cred->cert = kp_xstrdup(cert);
        cred->cert_len = strlen(cert);
        cred->key = kp_xstrdup(key);
        cred->key_len = strlen(key);
    }
    rc = 0;
out:
    if (rc != 0)
        exec_cred_cleanup(cred);
    json_decref(doc);
    return rc;
}
