/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c - see exec.h. fork + execvpe with our environment plus the plugin's env and
 * KUBERNETES_EXEC_INFO; stdin is /dev/null (we are never interactive), stderr is the user's,
 * stdout is read into a capped buffer. A close-on-exec pipe reports exec failures (ENOENT). */
#include "controller/kube/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "controller/kube/codec.h"

extern char **environ;

void exec_cred_cleanup(struct exec_cred *c)
{
    if (!c)
        return;
    kp_free_secret(c->token);
    free(c->cert);
    if (c->key)
        explicit_bzero(c->key, c->key_len);
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
        json_t *cl = json_pack("{s:s, s:b}", "server", cfg->server, "insecure-skip-tls-verify",
                               cfg->insecure);
        if (cfg->tls_server_name)
            json_object_set_new(cl, "tls-server-name", json_string(cfg->tls_server_name));
        if (cfg->ca_data) {
            char *b64 = codec_b64_encode(cfg->ca_data, cfg->ca_data_len);
            json_object_set_new(cl, "certificate-authority-data", json_string(b64));
            free(b64);
        }
        if (cfg->proxy_url)
            json_object_set_new(cl, "proxy-url", json_string(cfg->proxy_url));
        if (cfg->exec_cluster_config)
            json_object_set_new(cl, "config", json_loads(cfg->exec_cluster_config, 0, NULL));
        json_object_set_new(spec, "cluster", cl);
    }
    info = json_pack("{s:s, s:s, s:o}", "kind", "ExecCredential", "apiVersion",
                     cfg->exec->api_version, "spec", spec);
    s = json_dumps(info, JSON_COMPACT);
    json_decref(info);
    return s;
}

/* environ + plugin env + KUBERNETES_EXEC_INFO; plugin env entries replace ours by name.
 * Returns a NULL-terminated array whose strings are borrowed except the last two kinds
 * (freed by the caller through `own`). */
static char **build_env(const struct kube_config *cfg, char *info_kv)
{
    size_t n = 0, extra = 0, o = 0;
    char **env;

    while (environ[n])
        n++;
    while (cfg->exec->env[extra])
        extra++;
    env = kp_xcalloc(n + extra + 2, sizeof(*env));
    for (size_t i = 0; i < n; i++) {
        size_t klen = strcspn(environ[i], "=");
        int replaced = !strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21);
        for (size_t j = 0; j < extra && !replaced; j++)
            replaced =
                !strncmp(environ[i], cfg->exec->env[j], klen) && cfg->exec->env[j][klen] == '=';
        if (!replaced)
            env[o++] = environ[i];
    }
    for (size_t j = 0; j < extra; j++)
        env[o++] = cfg->exec->env[j];
    env[o++] = info_kv;
    return env;
}

static int spawn(const struct kube_config *cfg, int *out_fd, int *err_fd, pid_t *pid)
{
    char *info = exec_info(cfg);
    char *info_kv = kp_xasprintf("KUBERNETES_EXEC_INFO=%s", info);
    char **env = build_env(cfg, info_kv);
    size_t nargs = 0;
    char **argv;
    int outp[2], errp[2];
    int rc = -1;

    while (cfg->exec->args[nargs])
        nargs++;
    argv = kp_xcalloc(nargs + 2, sizeof(*argv));
    argv[0] = cfg->exec->command;
    memcpy(argv + 1, cfg->exec->args, nargs * sizeof(*argv));
    if (pipe2(outp, O_CLOEXEC) != 0)
        goto out;
    if (pipe2(errp, O_CLOEXEC) != 0) {
        close(outp[0]);
        close(outp[1]);
        goto out;
    }
    *pid = fork();
    if (*pid == 0) {
        int e;
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(outp[1], 1);
        execvpe(argv[0], argv, env);
        e = errno;
        if (write(errp[1], &e, sizeof(e)) < 0)
            _exit(127);
        _exit(127);
    }
    close(outp[1]);
    close(errp[1]);
    if (*pid < 0) {
        close(outp[0]);
        close(errp[0]);
        goto out;
    }
    *out_fd = outp[0];
    *err_fd = errp[0];
    rc = 0;
out:
    free(argv);
    free(env);
    free(info_kv);
    free(info);
    return rc;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Reads the plugin's stdout until EOF, the cap, the timeout or an abort. */
static int read_output(int fd, volatile sig_atomic_t *abort_a, volatile sig_atomic_t *abort_b,
                       char **buf, size_t *len)
{
    uint64_t end = mono_ms() + EXEC_TIMEOUT_MS;
    size_t cap = 4096;
    char *b = kp_xmalloc(cap + 1);
    size_t n = 0;

    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t r;
        if ((abort_a && *abort_a) || (abort_b && *abort_b)) {
            *buf = b;
            *len = n;
            return -2;
        }
        if (mono_ms() > end) {
            *buf = b;
            *len = n;
            return -3;
        }
        if (poll(&p, 1, 100) <= 0)
            continue;
        if (n == cap) {
            if (cap >= EXEC_MAX_OUTPUT) {
                *buf = b;
                *len = n;
                return -4;
            }
            cap *= 2;
            b = kp_xrealloc(b, cap + 1);
        }
        r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
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
    int out_fd = -1, err_fd = -1, child_errno = 0, status = 0, r;
    pid_t pid = -1;
    char *buf = NULL;
    size_t len = 0;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (spawn(cfg, &out_fd, &err_fd, &pid) != 0)
        return kp_err_set(err, "cannot start exec plugin \"%s\": %s", cfg->exec->command,
                          strerror(errno));
    if (read(err_fd, &child_errno, sizeof(child_errno)) == (ssize_t)sizeof(child_errno)) {
        waitpid(pid, &status, 0);
        missing_command(cfg, child_errno, err);
        goto out;
    }
    r = read_output(out_fd, abort_a, abort_b, &buf, &len);
    if (r != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        kp_err_set(err, "exec plugin \"%s\" %s", cfg->exec->command,
                   r == -2   ? "interrupted"
                   : r == -3 ? "did not finish within 120 s; check that it does not wait for input"
                             : "printed more than 1 MiB");
        goto out;
    }
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        kp_err_set(err, "exec plugin \"%s\" failed (%s %d); see its messages above",
                   cfg->exec->command, WIFEXITED(status) ? "exit status" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        goto out;
    }
    rc = exec_parse(buf, len, cfg->exec->api_version, out, err);
    if (rc != 0)
        kp_err_prefix(err, "exec plugin \"%s\"", cfg->exec->command);
out:
    if (out_fd >= 0)
        close(out_fd);
    if (err_fd >= 0)
        close(err_fd);
    if (buf)
        explicit_bzero(buf, len);
    free(buf);
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
