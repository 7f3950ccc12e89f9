/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_config.c - kubeconfig loading: EKS, TKE, token files, KUBECONFIG merging, relative
 * paths, in-cluster layout, and broken files with their exact messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "controller/kube/config.h"
#include "test/unit/fixture.h"

static struct kube_config *load_ok(const char *file, const char *context)
{
    char *p = fixture_path("kube", file);
    struct kube_config_opts o = {.kubeconfig = p, .context = context};
    struct kube_config *c = NULL;
    struct kp_err err = {{0}};
    int rc = kube_config_load(&o, &c, &err);

    if (rc != 0)
        fprintf(stderr, "unexpected error: %s\n", err.msg);
    assert_int_equal(rc, 0);
    free(p);
    return c;
}

/* Loads a file that must fail; returns the message (static buffer). */
static const char *load_err(const char *file, const char *context)
{
    static struct kp_err err;
    char *p = fixture_path("kube", file);
    struct kube_config_opts o = {.kubeconfig = p, .context = context};
    struct kube_config *c = NULL;

    kp_err_clear(&err);
    assert_int_equal(kube_config_load(&o, &c, &err), -1);
    assert_null(c);
    free(p);
    /* drop the directory so messages compare across checkouts */
    {
        const char *slash = strstr(err.msg, "/kube/");
        return slash ? slash + 6 : err.msg;
    }
}

static void test_kube_config_eks_exec_plugin(void **state)
{
    struct kube_config *c = load_ok("eks.yaml", NULL);
    (void)state;
    assert_string_equal(c->server, "https://ABCDEF0123456789.gr7.eu-west-1.eks.amazonaws.com");
    assert_non_null(c->exec);
    assert_string_equal(c->exec->api_version, "client.authentication.k8s.io/v1beta1");
    assert_string_equal(c->exec->command, "aws"); /* bare name: looked up on PATH */
    assert_string_equal(c->exec->args[3], "get-token");
    assert_null(c->exec->args[8]);
    assert_string_equal(c->exec->env[0], "AWS_PROFILE=prod-readonly");
    assert_string_equal(c->exec->install_hint, "Install the AWS CLI v2");
    assert_int_equal(c->exec->interactive_mode, 1); /* v1beta1 default: IfAvailable */
    assert_non_null(strstr(c->ca_data, "fake-ca"));
    assert_string_equal(c->ns, "default");
    kube_config_free(c);
}

static void test_kube_config_tke_client_certificate(void **state)
{
    struct kube_config *c = load_ok("tke.yaml", NULL);
    (void)state;
    assert_string_equal(c->context_name, "tke");
    assert_string_equal(c->user_name, "100012345678");
    assert_string_equal(c->server, "https://203.0.113.7:443");
    assert_string_equal(c->tls_server_name, "cls-abcd1234.ccs.tencent-cloud.com");
    assert_non_null(strstr(c->cert_data, "fake-client"));
    assert_non_null(strstr(c->key_data, "fake-key"));
    assert_int_equal(c->key_data_len, strlen(c->key_data));
    assert_null(c->exec);
    assert_null(c->token);
    kube_config_free(c);
}

static void test_kube_config_token_file_relative_paths(void **state)
{
    struct kube_config *c = load_ok("token-file.yaml", NULL);
    char *dir = fixture_path("kube", "");
    char *real = realpath(dir, NULL);
    char *want;
    (void)state;
    assert_string_equal(c->server, "https://198.18.250.10:6443"); /* trailing '/' dropped */
    want = kp_xasprintf("%s/token", real);
    assert_string_equal(c->token_file, want);
    free(want);
    want = kp_xasprintf("%s/certs/lab-ca.pem", real);
    assert_string_equal(c->ca_file, want);
    free(want);
    assert_string_equal(c->token, "static-token");
    assert_string_equal(c->ns, "probes");
    kube_config_free(c);
    free(real);
    free(dir);
}

static void test_kube_config_kubeconfig_env_merges_first_wins(void **state)
{
    char *a = fixture_path("kube", "merge-a.yaml");
    char *b = fixture_path("kube", "merge-b.yaml");
    char *env = kp_xasprintf("%s:/nonexistent/kubeconfig:%s:%s", a, b, a);
    struct kube_config *c = NULL;
    struct kube_config_opts o = {0};
    struct kp_err err = {{0}};
    (void)state;

    setenv("KUBECONFIG", env, 1);
    assert_int_equal(kube_config_load(&o, &c, &err), 0);
    /* current-context from a; cluster and user "shared" from a, not b */
    assert_string_equal(c->context_name, "a");
    assert_string_equal(c->server, "https://a.example:6443");
    assert_int_equal(c->insecure, 1);
    assert_string_equal(c->token, "token-from-a");
    assert_non_null(strstr(c->source, "merge-a.yaml"));
    assert_non_null(strstr(c->source, "merge-b.yaml"));
    kube_config_free(c);

    /* a context only b defines; b's relative paths resolve against b's directory */
    o.context = "b";
    o.ns = "override";
    assert_int_equal(kube_config_load(&o, &c, &err), 0);
    assert_string_equal(c->server, "https://only-b.example");
    assert_non_null(strstr(c->cert_file, "/kube/certs/client.crt"));
    assert_int_equal(c->cert_file[0], '/');
    assert_string_equal(c->ns, "override");
    kube_config_free(c);
    unsetenv("KUBECONFIG");
    free(env);
    free(a);
    free(b);
}

static void test_kube_config_in_cluster_layout(void **state)
{
    char dir[] = "/tmp/kperf-incluster-XXXXXX";
    char *p;
    FILE *f;
    struct kube_config *c = NULL;
    struct kube_config_opts o = {0};
    struct kp_err err = {{0}};
    (void)state;

    assert_non_null(mkdtemp(dir));
    p = kp_xasprintf("%s/token", dir);
    f = fopen(p, "w");
    fputs("sa-token\n", f);
    fclose(f);
    free(p);
    p = kp_xasprintf("%s/namespace", dir);
    f = fopen(p, "w");
    fputs("kperf-system", f);
    fclose(f);
    free(p);
    p = kp_xasprintf("%s/ca.crt", dir);
    f = fopen(p, "w");
    fputs("ca", f);
    fclose(f);
    free(p);

    setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("KPERF_INCLUSTER_ROOT", dir, 1);
    assert_int_equal(kube_config_load(&o, &c, &err), 0);
    assert_string_equal(c->source, "in-cluster");
    assert_string_equal(c->server, "https://[fd00::1]:443");
    assert_string_equal(c->ns, "kperf-system");
    assert_non_null(strstr(c->token_file, "/token"));
    assert_non_null(strstr(c->ca_file, "/ca.crt"));
    kube_config_free(c);

    /* without the token the error says what to do */
    p = kp_xasprintf("%s/token", dir);
    unlink(p);
    assert_int_equal(kube_config_load(&o, &c, &err), -1);
    assert_non_null(strstr(err.msg, "automountServiceAccountToken"));
    free(p);
    for (const char *n = "namespace"; n; n = strcmp(n, "namespace") ? NULL : "ca.crt") {
        p = kp_xasprintf("%s/%s", dir, n);
        unlink(p);
        free(p);
    }
    rmdir(dir);

    /* no kubeconfig and no cluster environment */
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_load(&o, &c, &err), -1);
    assert_string_equal(err.msg, "no kubeconfig found ($KUBECONFIG is set but none exist, "
                                 "~/.kube/config is missing) and not running in a cluster; pass "
                                 "--kubeconfig FILE");
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("KPERF_INCLUSTER_ROOT");
}

/* Writes a valid kubeconfig padded with comments to about `bytes` bytes to fd. */
static void write_padded_kubeconfig(int fd, size_t bytes)
{
    static const char head[] = "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
                               "clusters:\n- {name: c, cluster: {server: https://127.0.0.1:1}}\n"
                               "users:\n- {name: u, user: {token: padded}}\n"
                               "contexts:\n- {name: t, context: {cluster: c, user: u}}\n";
    char pad[64];

    memset(pad, 'x', sizeof(pad));
    pad[0] = '#';
    pad[sizeof(pad) - 1] = '\n';
    assert_int_equal(write(fd, head, sizeof(head) - 1), (ssize_t)sizeof(head) - 1);
    for (size_t n = sizeof(head) - 1; n < bytes; n += sizeof(pad))
        assert_int_equal(write(fd, pad, sizeof(pad)), (ssize_t)sizeof(pad));
}

/* Files are read whole up to the limit: from a pipe (no size known, the buffer grows, as with
 * --kubeconfig <(...)) and from a regular file just over the limit. */
static void test_kube_config_file_sizes(void **state)
{
    char path[] = "/tmp/kperf-kubeconfig-XXXXXX";
    struct kube_config_opts o = {0};
    struct kube_config *c = NULL;
    struct kp_err err = {{0}};
    char fdpath[32];
    int p[2], fd;
    (void)state;

    assert_int_equal(pipe(p), 0);
    write_padded_kubeconfig(p[1], 20000); /* fits the pipe buffer */
    close(p[1]);
    snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", p[0]);
    o.kubeconfig = fdpath;
    assert_int_equal(kube_config_load(&o, &c, &err), 0);
    assert_string_equal(c->server, "https://127.0.0.1:1");
    kube_config_free(c);
    close(p[0]);

    fd = mkstemp(path);
    assert_true(fd >= 0);
    write_padded_kubeconfig(fd, KUBE_CONFIG_MAX_BYTES + 1);
    close(fd);
    o.kubeconfig = path;
    assert_int_equal(kube_config_load(&o, &c, &err), -1);
    assert_non_null(strstr(err.msg, "is larger than 4194304 bytes"));
    unlink(path);
}

static void test_kube_config_broken_files_exact_errors(void **state)
{
    (void)state;
    assert_string_equal(load_err("bad-yaml.yaml", NULL),
                        "bad-yaml.yaml: line 8 column 1: invalid YAML: found unexpected end of "
                        "stream while scanning a quoted scalar (started at line 6)");
    assert_string_equal(load_err("missing-context.yaml", NULL),
                        "missing-context.yaml: context \"gone\" not found; pass --context with "
                        "one of: lab, other");
    assert_string_equal(load_err("missing-context.yaml", "nope"),
                        "missing-context.yaml: context \"nope\" not found; pass --context with "
                        "one of: lab, other");
    assert_string_equal(load_err("does-not-exist.yaml", NULL),
                        "does-not-exist.yaml: No such file or directory; pass --kubeconfig (or "
                        "KUBECONFIG) a readable kubeconfig");
    assert_string_equal(load_err("alias-bomb.yaml", NULL),
                        "alias-bomb.yaml: line 4 column 8: YAML aliases (*name) are not "
                        "allowed in a kubeconfig");
    assert_string_equal(load_err("v1alpha1.yaml", NULL),
                        "v1alpha1.yaml: user \"u\": exec.apiVersion "
                        "\"client.authentication.k8s.io/v1alpha1\" is not supported (v1alpha1 "
                        "was removed); use client.authentication.k8s.io/v1 or "
                        "client.authentication.k8s.io/v1beta1 and update the plugin");
    assert_string_equal(load_err("cert-no-key.yaml", NULL),
                        "cert-no-key.yaml: user \"u\": a client certificate needs its key (set "
                        "both client-certificate and client-key, or both -data fields)");
    assert_string_equal(load_err("insecure-ca.yaml", NULL),
                        "insecure-ca.yaml: cluster \"c\": insecure-skip-tls-verify together with "
                        "a certificate authority is not allowed; remove one");
}

static void test_kube_config_limits_depth_and_size(void **state)
{
    size_t n = 5000;
    char *deep = kp_xmalloc(n * 2 + 1);
    char *big;
    struct kube_config *c = NULL;
    struct kp_err err = {{0}};
    (void)state;

    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    assert_int_equal(kube_config_parse(deep, 2 * n, "deep", NULL, NULL, &c, &err), -1);
    assert_string_equal(err.msg, "deep: line 1 column 65: nesting is too deep");
    free(deep);

    big = kp_xcalloc(KUBE_CONFIG_MAX_BYTES + 2, 1);
    memset(big, ' ', KUBE_CONFIG_MAX_BYTES + 1);
    assert_int_equal(kube_config_parse(big, KUBE_CONFIG_MAX_BYTES + 1, "big", NULL, NULL, &c, &err),
                     -1);
    assert_string_equal(err.msg, "big: file is larger than 4194304 bytes");
    free(big);

    /* a mapping without contexts: no --context can help */
    assert_int_equal(kube_config_parse("apiVersion: v1\n", 15, "e", NULL, NULL, &c, &err), -1);
    assert_string_equal(err.msg, "e: defines no contexts; add one under contexts: (kubectl "
                                 "config set-context) or pass another --kubeconfig");

    /* a top-level scalar is not a kubeconfig */
    assert_int_equal(kube_config_parse("hello", 5, "s", NULL, NULL, &c, &err), -1);
    assert_string_equal(err.msg, "s: not a kubeconfig (expected a mapping at the top)");
}

static void test_kube_config_exec_v1_and_extension(void **state)
{
    struct kube_config *c = load_ok("exec-v1.yaml", NULL);
    (void)state;
    assert_string_equal(c->exec->api_version, "client.authentication.k8s.io/v1");
    assert_int_equal(c->exec->command[0], '/'); /* "./plugins/token.sh" made absolute */
    assert_non_null(strstr(c->exec->command, "/kube/plugins/token.sh"));
    assert_int_equal(c->exec->interactive_mode, 0);
    assert_int_equal(c->exec->provide_cluster_info, 1);
    assert_string_equal(c->exec_cluster_config, "{\"audience\":\"kperf\"}");
    assert_string_equal(c->user_name, "u");
    kube_config_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kube_config_eks_exec_plugin),
        cmocka_unit_test(test_kube_config_tke_client_certificate),
        cmocka_unit_test(test_kube_config_token_file_relative_paths),
        cmocka_unit_test(test_kube_config_kubeconfig_env_merges_first_wins),
        cmocka_unit_test(test_kube_config_in_cluster_layout),
        cmocka_unit_test(test_kube_config_broken_files_exact_errors),
        cmocka_unit_test(test_kube_config_file_sizes),
        cmocka_unit_test(test_kube_config_limits_depth_and_size),
        cmocka_unit_test(test_kube_config_exec_v1_and_extension),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
