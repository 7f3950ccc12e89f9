/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_exec.c - credentials that change: exec plugins (token, certificate, caching until
 * expirationTimestamp, refresh after expiry, one re-run on 401, missing or failing command,
 * KUBERNETES_EXEC_INFO), token files that rotate, and in-cluster config end to end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "controller/kube/exec.h"
#include "kube_fixture.h"

/* fx_reset, and the plugins' run counter back to zero */
static int reset(void **state)
{
    char *p = kp_xasprintf("%s/count", fx.dir);
    unlink(p);
    free(p);
    return fx_reset(state);
}

static int plugin_runs(void)
{
    char *p = kp_xasprintf("%s/count", fx.dir);
    FILE *f = fopen(p, "r");
    int n = 0;
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = -1;
        fclose(f);
    }
    free(p);
    return n;
}

/* A kubeconfig whose user runs plugins/token.sh with the given expiry (NULL = none). */
static struct kube_client *token_plugin_client(const char *api, const char *expiry)
{
    char *plugin = fx_data("plugins/token.sh");
    char *user = kp_xasprintf("    exec:\n      apiVersion: client.authentication.k8s.io/%s\n"
                              "      command: %s\n      interactiveMode: Never\n"
                              "      provideClusterInfo: true\n"
                              "      env:\n      - {name: KPERF_PLUGIN_STATE, value: %s}\n"
                              "      - {name: KPERF_PLUGIN_EXPIRY, value: \"%s\"}\n",
                              api, plugin, fx.dir, expiry ? expiry : "");
    char *kc = fx_kubeconfig("exec.yaml", NULL, user);
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    assert_non_null(c);
    free(kc);
    free(user);
    free(plugin);
    return c;
}

static const char *auth_of(json_t *log, size_t i)
{
    return json_string_value(json_object_get(json_array_get(log, i), "auth"));
}

static void test_kube_exec_token_cached_until_expiry(void **state)
{
    struct kube_client *c = token_plugin_client("v1", "2999-01-01T00:00:00Z");
    struct kube_version v;
    struct kp_err err = {{0}};
    char *info_path = kp_xasprintf("%s/exec-info", fx.dir);
    char *info = NULL;
    json_t *log, *doc;
    FILE *f;
    (void)state;

    fx_do("/_fixture/config", "{\"tokens\":[\"exec-token-1\"]}");
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(plugin_runs(), 1);
    log = fx_log();
    assert_string_equal(auth_of(log, 1), "Bearer exec-token-1");
    json_decref(log);

    /* the plugin saw KUBERNETES_EXEC_INFO with the cluster (provideClusterInfo) */
    f = fopen(info_path, "r");
    assert_non_null(f);
    info = kp_xcalloc(4096, 1);
    assert_true(fread(info, 1, 4095, f) > 0);
    fclose(f);
    doc = json_loads(info, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(doc, "apiVersion")),
                        "client.authentication.k8s.io/v1");
    assert_true(json_is_false(json_object_get(json_object_get(doc, "spec"), "interactive")));
    assert_non_null(json_string_value(
        json_object_get(json_object_get(json_object_get(doc, "spec"), "cluster"), "server")));
    json_decref(doc);
    free(info);
    free(info_path);
    kube_client_free(c);
}

static void test_kube_exec_expired_token_is_refreshed(void **state)
{
    struct kube_client *c = token_plugin_client("v1beta1", "2001-01-01T00:00:00Z");
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    fx_do("/_fixture/config", "{\"tokens\":[\"exec-token-1\",\"exec-token-2\"]}");
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(plugin_runs(), 2);
    log = fx_log();
    assert_string_equal(auth_of(log, 0), "Bearer exec-token-1");
    assert_string_equal(auth_of(log, 1), "Bearer exec-token-2");
    json_decref(log);
    kube_client_free(c);
}

static void test_kube_exec_401_reruns_the_plugin_once(void **state)
{
    struct kube_client *c = token_plugin_client("v1", NULL);
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    /* the first credential is already revoked; the second one works */
    fx_do("/_fixture/config", "{\"tokens\":[\"exec-token-2\"]}");
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(plugin_runs(), 2);
    log = fx_log();
    assert_int_equal(json_array_size(log), 2);
    assert_string_equal(auth_of(log, 0), "Bearer exec-token-1");
    assert_string_equal(auth_of(log, 1), "Bearer exec-token-2");
    json_decref(log);

    /* when the fresh credential is refused too, the 401 is reported (no loop) */
    fx_do("/_fixture/config", "{\"tokens\":[]}");
    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_int_equal(plugin_runs(), 3);
    assert_int_equal(kube_client_last(c)->http_status, 401);
    kube_client_free(c);
}

static void test_kube_exec_eks_aws_cli_found_on_path(void **state)
{
    char *plugins = fx_data("plugins");
    char *old_path = kp_xstrdup(getenv("PATH"));
    char *new_path = kp_xasprintf("%s:%s", plugins, old_path);
    char *user = kp_xasprintf(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: aws\n"
        "      args: [--region, eu-west-1, eks, get-token, --cluster-name, prod, --output, json]\n"
        "      env:\n      - {name: AWS_PROFILE, value: prod-readonly}\n"
        "      - {name: KPERF_PLUGIN_STATE, value: %s}\n",
        fx.dir);
    char *kc = fx_kubeconfig("eks.yaml", NULL, user);
    char *call_path = kp_xasprintf("%s/aws-call", fx.dir);
    struct kube_client *c;
    struct kube_version v;
    struct kp_err err = {{0}};
    char call[512] = "";
    json_t *log;
    FILE *f;
    (void)state;

    setenv("PATH", new_path, 1);
    c = fx_client(kc, NULL, &fx_clk);
    fx_do("/_fixture/config",
          "{\"tokens\":[\"k8s-aws-v1.aHR0cHM6Ly9zdHMuZXUtd2VzdC0xLmFtYXpvbmF3cy5jb20\"]}");
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(kube_version(c, &v, &err), 0); /* cached: expires in 14 min */
    setenv("PATH", old_path, 1);
    f = fopen(call_path, "r");
    assert_non_null(f);
    assert_non_null(fgets(call, sizeof(call), f));
    fclose(f);
    assert_string_equal(call, "prod-readonly --region eu-west-1 eks get-token --cluster-name "
                              "prod --output json");
    log = fx_log();
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
    kube_client_free(c);
    free(call_path);
    free(kc);
    free(user);
    free(new_path);
    free(old_path);
    free(plugins);
}

static void test_kube_exec_client_certificate_from_plugin(void **state)
{
    char *plugin = fx_data("plugins/cert.sh");
    char *user =
        kp_xasprintf("    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                     "      command: %s\n      interactiveMode: IfAvailable\n"
                     "      env:\n      - {name: KPERF_PLUGIN_CERT, value: %s/client.crt}\n"
                     "      - {name: KPERF_PLUGIN_KEY, value: %s/client.key}\n",
                     plugin, fx.dir, fx.dir);
    char *kc = fx_kubeconfig("exec-cert.yaml", NULL, user);
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    assert_int_equal(kube_version(c, &v, &err), 0);
    log = fx_log();
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "cert_cn")),
                        "fixture-user");
    json_decref(log);
    kube_client_free(c);
    free(kc);
    free(user);
    free(plugin);
}

static void test_kube_exec_missing_and_failing_commands(void **state)
{
    char *fail = fx_data("plugins/fail.sh");
    char *kc =
        fx_kubeconfig("exec-missing.yaml", NULL,
                      "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                      "      command: kperf-no-such-plugin\n"
                      "      installHint: \"Install it with: brew install no-such-plugin\"\n");
    char *user = kp_xasprintf("    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n"
                              "      command: %s\n",
                              fail);
    char *kc2 = fx_kubeconfig("exec-fail.yaml", NULL, user);
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    char *want = kp_xasprintf("get server version: user \"u\": exec plugin \"%s\" failed (exit "
                              "status 3); see its messages above",
                              fail);
    json_t *log;
    (void)state;

    assert_non_null(c);
    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_string_equal(err.msg, "get server version: user \"u\": exec plugin "
                                 "\"kperf-no-such-plugin\" was not found on PATH; Install it "
                                 "with: brew install no-such-plugin");
    kube_client_free(c);
    c = fx_client(kc2, NULL, &fx_clk);
    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_string_equal(err.msg, want);
    log = fx_log();
    assert_int_equal(json_array_size(log), 0); /* nothing was sent without credentials */
    json_decref(log);
    kube_client_free(c);
    free(want);
    free(kc2);
    free(user);
    free(kc);
    free(fail);
}

static int parse(const char *text, struct exec_cred *cr, struct kp_err *err)
{
    return exec_parse(text, strlen(text), "client.authentication.k8s.io/v1", cr, err);
}

static void test_kube_exec_parse_rejects_bad_output(void **state)
{
    struct exec_cred cr;
    struct kp_err err = {{0}};
    (void)state;

    assert_int_equal(parse("nope", &cr, &err), -1);
    assert_string_equal(err.msg, "did not print an ExecCredential JSON document");
    assert_int_equal(parse("{\"kind\":\"ExecCredential\",\"apiVersion\":"
                           "\"client.authentication.k8s.io/v1beta1\",\"status\":{\"token\":"
                           "\"t\"}}",
                           &cr, &err),
                     -1);
    assert_string_equal(err.msg,
                        "answered with apiVersion \"client.authentication.k8s.io/v1beta1\""
                        " but the kubeconfig asks for \"client.authentication.k8s.io/v1\"");
    assert_int_equal(parse("{\"kind\":\"ExecCredential\",\"apiVersion\":"
                           "\"client.authentication.k8s.io/v1\",\"status\":{}}",
                           &cr, &err),
                     -1);
    assert_string_equal(err.msg, "returned neither status.token nor a client certificate");
    assert_int_equal(parse("{\"kind\":\"ExecCredential\",\"apiVersion\":"
                           "\"client.authentication.k8s.io/v1\",\"status\":{\"token\":\"t\","
                           "\"expirationTimestamp\":\"2026-01-01T12:14:00+01:00\"}}",
                           &cr, &err),
                     0);
    assert_string_equal(cr.token, "t");
    assert_int_equal(cr.expiry, 1767266040); /* 11:14 UTC */
    exec_cred_cleanup(&cr);
}

static void write_file(const char *path, const char *text)
{
    char *tmp = kp_xasprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    fputs(text, f);
    fclose(f);
    assert_int_equal(rename(tmp, path), 0); /* a new inode, like the kubelet's atomic swap */
    free(tmp);
}

static void test_kube_exec_token_file_is_reread_when_it_changes(void **state)
{
    char *tok = kp_xasprintf("%s/sa-token", fx.dir);
    char *user = kp_xasprintf("    tokenFile: %s\n", tok);
    char *kc = fx_kubeconfig("tokenfile.yaml", NULL, user);
    struct kube_client *c;
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    write_file(tok, "rotating-1\n");
    c = fx_client(kc, NULL, &fx_clk);
    fx_do("/_fixture/config", "{\"tokens\":[\"rotating-1\",\"rotating-2\"]}");
    assert_int_equal(kube_version(c, &v, &err), 0);
    write_file(tok, "rotating-2\n");
    assert_int_equal(kube_version(c, &v, &err), 0);
    log = fx_log();
    assert_int_equal(json_array_size(log), 2); /* no 401 round trip needed */
    assert_string_equal(auth_of(log, 0), "Bearer rotating-1");
    assert_string_equal(auth_of(log, 1), "Bearer rotating-2");
    json_decref(log);

    /* a missing file keeps the last good token */
    unlink(tok);
    assert_int_equal(kube_version(c, &v, &err), 0);
    kube_client_free(c);
    free(kc);
    free(user);
    free(tok);
}

static void test_kube_exec_in_cluster_end_to_end(void **state)
{
    char *root = kp_xasprintf("%s/sa", fx.dir);
    char *p;
    char port[16];
    struct kube_client *c = NULL;
    struct kube_client_opts o = {.qps = -1};
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    mkdir(root, 0700);
    p = kp_xasprintf("%s/token", root);
    write_file(p, "good-token");
    free(p);
    p = kp_xasprintf("cp %s/ca.crt %s/ca.crt", fx.dir, root);
    assert_int_equal(system(p), 0);
    free(p);
    snprintf(port, sizeof(port), "%d", fx.port);
    setenv("KUBECONFIG", "/nonexistent/kubeconfig", 1);
    setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", port, 1);
    setenv("KPERF_INCLUSTER_ROOT", root, 1);
    assert_int_equal(kube_client_new(&o, &c, &err), 0);
    assert_string_equal(kube_client_config(c)->ns, "default");
    assert_int_equal(kube_version(c, &v, &err), 0);
    log = fx_log();
    assert_string_equal(auth_of(log, 0), "Bearer good-token");
    json_decref(log);
    kube_client_free(c);
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("KPERF_INCLUSTER_ROOT");
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_kube_exec_token_cached_until_expiry, reset),
        cmocka_unit_test_setup(test_kube_exec_expired_token_is_refreshed, reset),
        cmocka_unit_test_setup(test_kube_exec_401_reruns_the_plugin_once, reset),
        cmocka_unit_test_setup(test_kube_exec_eks_aws_cli_found_on_path, reset),
        cmocka_unit_test_setup(test_kube_exec_client_certificate_from_plugin, reset),
        cmocka_unit_test_setup(test_kube_exec_missing_and_failing_commands, reset),
        cmocka_unit_test_setup(test_kube_exec_parse_rejects_bad_output, reset),
        cmocka_unit_test_setup(test_kube_exec_token_file_is_reread_when_it_changes, reset),
        cmocka_unit_test_setup(test_kube_exec_in_cluster_end_to_end, reset),
    };
    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
