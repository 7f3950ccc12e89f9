/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_creds.c - credentials the way kubectl presents them: typed kubeconfig values,
 * duplicate names, static credentials before exec plugins, no credentials over http://, empty
 * token files, secrets in the server URL kept out of messages. With arguments it is the kperf
 * side of the differential test against a real kubectl (test/e2e/kube_creds_vs_kubectl.sh):
 *   test_kube_creds get KUBECONFIG|- PATH   one GET through kube_request, body on stdout
 *   test_kube_creds pods KUBECONFIG|-       GET /api/v1/namespaces/<context ns>/pods
 * ("-" = $KUBECONFIG / ~/.kube/config as kubectl would; -v logs each request). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "controller/kube/auth.h"
#include "controller/kube/codec.h"
#include "controller/kube/config.h"
#include "controller/kube/kube.h"

static int drive(int argc, char **argv)
{
    struct kube_client_opts o = {0};
    struct kube_client *c = NULL;
    struct kp_err err = {{0}};
    json_t *out = NULL;
    char *path;
    int verbose = argc > 4 && !strcmp(argv[4], "-v");

    kp_log_set_prog("kperf");
    kp_log_set_level(verbose ? KP_LOG_DEBUG : KP_LOG_WARN);
    if (strcmp(argv[2], "-") != 0)
        o.kubeconfig = argv[2];
    if (kube_client_new(&o, &c, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 1;
    }
    if (!strcmp(argv[1], "pods"))
        path = kp_xasprintf("/api/v1/namespaces/%s/pods", kube_client_config(c)->ns);
    else
        path = kp_xstrdup(argc > 3 ? argv[3] : "/version");
    if (kube_request(c, "GET", path, NULL, &out, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        free(path);
        kube_client_free(c);
        return 1;
    }
    if (out) {
        char *s = json_dumps(out, JSON_COMPACT);
        printf("%s\n", s);
        free(s);
    }
    json_decref(out);
    free(path);
    kube_client_free(c);
    return 0;
}

/* ---- unit tests ---- */

static struct kube_config *parse(const char *yaml, struct kp_err *err)
{
    struct kube_config *c = NULL;
    if (kube_config_parse(yaml, strlen(yaml), "k.yaml", "/tmp", NULL, &c, err) != 0)
        return NULL;
    return c;
}

#define HEAD                                                                                       \
    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"                                           \
    "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"

static void refused(const char *yaml, const char *words)
{
    struct kp_err err = {{0}};
    struct kube_config *c = parse(yaml, &err);
    if (c || !strstr(err.msg, words))
        fprintf(stderr, "got \"%s\", wanted \"%s\"\n", err.msg, words);
    assert_null(c);
    assert_non_null(strstr(err.msg, words));
}

static void test_string_bool_refused(void **state)
{
    (void)state;
    refused(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://a:1', "
                 "insecure-skip-tls-verify: \"true\"}\nusers:\n- name: u\n  user: {}\n",
            "insecure-skip-tls-verify");
}

static void test_bool_typed(void **state)
{
    struct kp_err err = {{0}};
    struct kube_config *c;
    (void)state;
    c = parse(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://a:1', "
                   "insecure-skip-tls-verify: true}\nusers:\n- name: u\n  user: {token: t}\n",
              &err);
    assert_non_null(c);
    assert_int_equal(c->insecure, 1);
    kube_config_free(c);
}

static void test_null_values_are_unset(void **state)
{
    struct kp_err err = {{0}};
    struct kube_config *c;
    (void)state;
    c = parse("apiVersion: v1\ncurrent-context: c\ncontexts:\n- name: c\n  context: {cluster: k, "
              "user: u, namespace: ~}\nclusters:\n- name: k\n  cluster: {server: 'https://a:1'}\n"
              "users:\n- name: u\n  user: {token: null, tokenFile: /t}\n",
              &err);
    if (!c)
        fprintf(stderr, "%s\n", err.msg);
    assert_non_null(c);
    assert_string_equal(c->ns, "default");
    assert_null(c->token);
    kube_config_free(c);
}

static void test_number_for_string_refused(void **state)
{
    (void)state;
    refused(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://a:1'}\n"
                 "users:\n- name: u\n  user: {token: 12345}\n",
            "token");
}

static void test_duplicate_names_refused(void **state)
{
    (void)state;
    refused(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://a:1'}\n- name: k\n  "
                 "cluster: {server: 'https://b:1'}\nusers:\n- name: u\n  user: {}\n",
            "duplicate name \"k\"");
    refused(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://a:1'}\nusers:\n- name: u\n"
                 "  user: {}\n- name: u\n  user: {token: x}\n",
            "duplicate name \"u\"");
}

static void test_static_token_beats_exec(void **state)
{
    struct kp_err err = {{0}};
    struct kube_config *c;
    (void)state;
    c = parse(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://a:1'}\nusers:\n- name: u\n"
                   "  user:\n    token: static\n    exec: {apiVersion: "
                   "client.authentication.k8s.io/v1beta1, command: /bin/false}\n",
              &err);
    assert_non_null(c);
    assert_string_equal(c->token, "static");
    assert_null(c->exec); /* kubectl uses the static credential and never runs the plugin */
    kube_config_free(c);
}

static void test_http_server_gets_no_credentials(void **state)
{
    struct kp_err err = {{0}};
    struct kube_config *c;
    (void)state;
    c = parse(HEAD "clusters:\n- name: k\n  cluster: {server: 'http://a:1'}\nusers:\n- name: u\n"
                   "  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
                   "command: /bin/false}\n",
              &err);
    assert_non_null(c);
    assert_null(c->exec);
    assert_null(c->token);
    kube_config_free(c);
}

static void test_server_password_not_in_messages(void **state)
{
    struct kp_err err = {{0}};
    struct kube_config *c;
    (void)state;
    c = parse(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://me:s3cret@a:1/p'}\n"
                   "users:\n- name: u\n  user: {token: t}\n",
              &err);
    assert_non_null(c);
    assert_string_equal(c->server, "https://a:1/p");
    assert_string_equal(c->server_user, "me");
    assert_string_equal(c->server_password, "s3cret");
    kube_config_free(c);
    c = parse(
        HEAD "clusters:\n- name: k\n  cluster: {server: 'https://me:s3cret@a:1', "
             "certificate-authority: /nonexistent/ca.crt}\nusers:\n- name: u\n  user: {token: t}\n",
        &err);
    assert_null(c);
    assert_non_null(strstr(err.msg, "unable to read certificate-authority /nonexistent/ca.crt"));
    assert_null(strstr(err.msg, "s3cret"));
    /* percent-encoded user-info is decoded, as Go's url.User gives it to basic auth */
    c = parse(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://me%40x:s3%3Acret@a:1'}\n"
                   "users:\n- name: u\n  user: {token: t}\n",
              &err);
    assert_non_null(c);
    assert_string_equal(c->server, "https://a:1");
    assert_string_equal(c->server_user, "me@x");
    assert_string_equal(c->server_password, "s3:cret");
    kube_config_free(c);
    /* a proxy-url refused, and a server libcurl cannot parse: named without the password */
    c = parse(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://a:1', proxy-url: "
                   "'ftp://me:s3cret@proxy:21'}\nusers:\n- name: u\n  user: {token: t}\n",
              &err);
    assert_null(c);
    assert_non_null(strstr(err.msg, "proxy-url \"ftp://proxy:21/\" must be http://"));
    assert_null(strstr(err.msg, "s3cret"));
    c = parse(HEAD "clusters:\n- name: k\n  cluster: {server: 'https://me:s3c/ret@a:1'}\n"
                   "users:\n- name: u\n  user: {token: t}\n",
              &err);
    assert_null(c);
    assert_non_null(strstr(err.msg, "server (not shown: it has user-info)"));
    assert_null(strstr(err.msg, "s3c"));
}

static void test_yaml11_bool_and_typed_exec_config(void **state)
{
    struct kp_err err = {{0}};
    struct kube_config *c;
    (void)state;
    c = parse(HEAD "clusters:\n- name: k\n  cluster:\n    server: 'https://a:1'\n"
                   "    insecure-skip-tls-verify: yes\n    extensions:\n"
                   "    - name: client.authentication.k8s.io/exec\n"
                   "      extension: {port: 8443, on: true, q: \"42\"}\n"
                   "users:\n- name: u\n  user: {token: t}\n",
              &err);
    if (!c)
        fprintf(stderr, "%s\n", err.msg);
    assert_non_null(c);
    assert_int_equal(c->insecure, 1);
    assert_string_equal(c->exec_cluster_config, "{\"port\":8443,\"on\":true,\"q\":\"42\"}");
    kube_config_free(c);
}

#define CLUSTER "clusters:\n- name: k\n  cluster: {server: 'https://a:1'}\n"

static struct kube_config *parsed(const char *yaml)
{
    struct kp_err err = {{0}};
    struct kube_config *c = parse(yaml, &err);
    if (!c)
        fprintf(stderr, "%s\n", err.msg);
    assert_non_null(c);
    return c;
}

static void test_go_yaml_integers_refused(void **state)
{
    struct kube_config *c;
    (void)state;
    /* go-yaml v2 reads these as numbers: kubectl refuses the file */
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {token: 0x1F}\n", "token must be a string");
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {token: 0o1_7}\n", "token must be a string");
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {token: -0b101}\n", "token must be a string");
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {token: 1_000}\n", "token must be a string");
    /* and these as strings (a date-like scalar stays a string in kubectl's conversion) */
    c = parsed(HEAD CLUSTER "users:\n- name: u\n  user: {token: 2024-01-02}\n");
    assert_string_equal(c->token, "2024-01-02");
    kube_config_free(c);
    c = parsed(HEAD CLUSTER "users:\n- name: u\n  user: {token: 0x}\n");
    assert_string_equal(c->token, "0x");
    kube_config_free(c);
}

static void test_impersonation(void **state)
{
    struct kube_config *c;
    (void)state;
    c = parsed(HEAD "clusters:\n- name: k\n  cluster: {server: 'http://a:1'}\n"
                    "users:\n- name: u\n  user:\n    token: t\n    as: jane\n    as-groups: [dev]\n"
                    "    as-uid: '7'\n    as-user-extra: {scopes: [view, edit], \"a/b%c\": [x]}\n");
    assert_null(c->token); /* http://: no token, but the impersonation stays (kubectl) */
    assert_string_equal(c->impersonate_user, "jane");
    assert_string_equal(c->impersonate_groups[0], "dev");
    assert_string_equal(c->impersonate_uid, "7");
    assert_string_equal(c->impersonate_extra[0], "Impersonate-Extra-scopes: view");
    assert_string_equal(c->impersonate_extra[1], "Impersonate-Extra-scopes: edit");
    assert_string_equal(c->impersonate_extra[2], "Impersonate-Extra-a%2Fb%25c: x");
    assert_null(c->impersonate_extra[3]);
    kube_config_free(c);
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {token: t, as-uid: '7'}\n",
            "requesting uid, groups or user-extra for u without impersonating a user");
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {token: t, as-groups: [g]}\n",
            "without impersonating a user");
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {token: t, as: \"a\\r\\nX-Evil: 1\"}\n",
            "control character");
}

static void test_who_the_user_is(void **state)
{
    struct kube_config *c;
    (void)state;
    /* no credential on https: kubectl prompts for a username; kperf never prompts */
    refused("current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n" CLUSTER,
            "context \"c\" names no user");
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {as: jane}\n",
            "user \"u\" has no credentials");
    c = parsed("current-context: c\ncontexts:\n- name: c\n  context: {cluster: k}\n"
               "clusters:\n- name: k\n  cluster: {server: 'http://a:1'}\n");
    kube_config_free(c); /* http:// never carries credentials: nothing to prompt for */
    /* a client key without a certificate is ignored, as client-go ignores it */
    c = parsed(HEAD CLUSTER "users:\n- name: u\n  user: {token: t, client-key-data: eA==}\n");
    assert_null(c->key_data);
    assert_null(c->key_file);
    kube_config_free(c);
    refused(HEAD CLUSTER "users:\n- name: u\n  user: {client-key-data: eA==}\n",
            "has no credentials");
    /* Go's url.Parse lower-cases the scheme */
    c = parsed(HEAD "clusters:\n- name: k\n  cluster: {server: 'HTTPS://Host:1/'}\n"
                    "users:\n- name: u\n  user: {token: t}\n");
    assert_string_equal(c->server, "https://Host:1");
    kube_config_free(c);
    refused(HEAD "clusters:\n- name: k\n  cluster: {server: 'ftp://a:1'}\n"
                 "users:\n- name: u\n  user: {token: t}\n",
            "must start with https://");
}

static char *jwt(long long exp)
{
    char claims[64];
    char *b, *out;
    snprintf(claims, sizeof(claims), "{\"exp\":%lld}", exp);
    b = codec_b64_encode(claims, strlen(claims));
    for (char *p = b; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p == '=' ? '\0' : *p;
    out = kp_xasprintf("eyJhbGciOiJSUzI1NiJ9.%s.c2ln", b);
    free(b);
    return out;
}

/* The token auth_get gives for a user stanza at time now, or NULL with err set. */
static char *token_at(const char *user, time_t now, struct kp_err *err)
{
    char *yaml = kp_xasprintf(HEAD CLUSTER "users:\n- name: u\n  user:\n%s", user);
    struct kube_config *c = parsed(yaml);
    struct auth *a = auth_new(c, NULL, NULL);
    struct auth_creds cr;
    char *tok = NULL;

    if (auth_get(a, now, &cr, err) == 0)
        tok = kp_xstrdup(cr.token ? cr.token : "<none>");
    auth_free(a);
    kube_config_free(c);
    free(yaml);
    return tok;
}

static void test_oidc_id_token(void **state)
{
    struct kp_err err = {{0}};
    const char *oidc = "    auth-provider:\n      name: oidc\n      config:\n"
                       "        client-id: k\n        idp-issuer-url: https://i\n";
    char *good = jwt(2000000000), *old = jwt(1000), *y, *t;
    (void)state;
    y = kp_xasprintf("%s        id-token: %s\n", oidc, good);
    t = token_at(y, 2000000000 - 11, &err);
    assert_string_equal(t, good);
    free(t);
    assert_null(token_at(y, 2000000000 - 10, &err)); /* client-go: within 10 s is expired */
    assert_non_null(strstr(err.msg, "No valid id-token, and cannot refresh"));
    free(y);
    y = kp_xasprintf("%s        id-token: %s\n        refresh-token: r\n", oidc, old);
    assert_null(token_at(y, 2000, &err));
    assert_non_null(strstr(err.msg, "does not refresh it"));
    free(y);
    assert_null(token_at("    auth-provider:\n      name: oidc\n      config:\n"
                         "        client-id: k\n        idp-issuer-url: https://i\n"
                         "        id-token: opaque\n",
                         2000, &err));
    assert_non_null(strstr(err.msg, "ID Token is not a valid JWT"));
    refused(HEAD CLUSTER "users:\n- name: u\n  user:\n    auth-provider:\n      name: oidc\n"
                         "      config: {client-id: k}\n",
            "Must provide idp-issuer-url");
    free(good);
    free(old);
}

static void test_token_file_rules(void **state)
{
    struct kp_err err = {{0}};
    char path[] = "/tmp/kperf-tokXXXXXX";
    int fd = mkstemp(path);
    char *y, *t;
    (void)state;
    assert_true(fd >= 0);
    /* strings.TrimSpace: ASCII and Unicode white space, both ends */
    assert_int_equal(write(fd, " \t\xc2\xa0tok en\xe2\x80\x83\r\n\n", 16), 16);
    close(fd);
    y = kp_xasprintf("    tokenFile: %s\n", path);
    t = token_at(y, 1, &err);
    assert_string_equal(t, "tok en");
    free(t);
    free(y);
    /* token + tokenFile: an empty or missing file falls back to the static token */
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, "\n", 1), 1);
    close(fd);
    y = kp_xasprintf("    token: static\n    tokenFile: %s\n", path);
    t = token_at(y, 1, &err);
    assert_string_equal(t, "static");
    free(t);
    free(y);
    unlink(path);
    y = kp_xasprintf("    token: static\n    tokenFile: %s\n", path);
    t = token_at(y, 1, &err);
    assert_string_equal(t, "static");
    free(t);
    free(y);
    y = kp_xasprintf("    tokenFile: %s\n    client-key-data: eA==\n    as: x\n", path);
    assert_null(token_at(y, 1, &err)); /* nothing to fall back to */
    free(y);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_bool_refused),
        cmocka_unit_test(test_bool_typed),
        cmocka_unit_test(test_null_values_are_unset),
        cmocka_unit_test(test_number_for_string_refused),
        cmocka_unit_test(test_duplicate_names_refused),
        cmocka_unit_test(test_static_token_beats_exec),
        cmocka_unit_test(test_http_server_gets_no_credentials),
        cmocka_unit_test(test_server_password_not_in_messages),
        cmocka_unit_test(test_yaml11_bool_and_typed_exec_config),
        cmocka_unit_test(test_go_yaml_integers_refused),
        cmocka_unit_test(test_impersonation),
        cmocka_unit_test(test_who_the_user_is),
        cmocka_unit_test(test_oidc_id_token),
        cmocka_unit_test(test_token_file_rules),
    };
    if (argc >= 3 && (!strcmp(argv[1], "get") || !strcmp(argv[1], "pods")))
        return drive(argc, argv);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
