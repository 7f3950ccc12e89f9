/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_http.c - the kube client against the local HTTPS fixture server: authentication,
 * TLS checks, retries with Retry-After, rate limiting, Status decoding, create reconciliation,
 * warnings, delete, pagination and memory for 5,000 nodes, logs, SSAR, abort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "base/kp_log.h"
#include "kube_fixture.h"

static json_t *pod(const char *name, const char *run)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "Pod", "metadata",
                     "name", name, "labels", "run", run);
}

static void test_kube_http_version_with_token_and_keepalive(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    for (int i = 0; i < 3; i++)
        assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(v.major, 1);
    assert_int_equal(v.minor, 30);
    assert_string_equal(v.git_version, "v1.30.4-eks-fixture");
    assert_string_equal(kube_client_config(c)->ns, "ns1");
    log = fx_log();
    assert_int_equal(json_array_size(log), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "auth")),
                        "Bearer good-token");
    /* one connection reused for all three requests */
    assert_true(json_equal(json_object_get(json_array_get(log, 0), "peer_port"),
                           json_object_get(json_array_get(log, 2), "peer_port")));
    json_decref(log);
    kube_client_free(c);
}

static void test_kube_http_impersonation_headers(void **state)
{
    char *kc = fx_kubeconfig("as.yaml", NULL,
                             "    token: good-token\n    as: system:serviceaccount:kperf:runner\n"
                             "    as-groups: [kperf-runners, system:authenticated]\n");
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log, *e;
    char *groups;
    (void)state;

    assert_non_null(c);
    assert_int_equal(kube_version(c, &v, &err), 0);
    log = fx_log();
    e = json_array_get(log, 0);
    assert_string_equal(json_string_value(json_object_get(e, "as")),
                        "system:serviceaccount:kperf:runner");
    groups = json_dumps(json_object_get(e, "as_groups"), JSON_COMPACT);
    assert_string_equal(groups, "[\"kperf-runners\",\"system:authenticated\"]");
    free(groups);
    json_decref(log);
    kube_client_free(c);
    free(kc);
}

static void test_kube_http_client_certificate_and_tls_server_name(void **state)
{
    char *cluster = kp_xasprintf("    server: https://127.0.0.1:%d\n    tls-server-name: "
                                 "kube-fixture.test\n    certificate-authority: ca.crt\n",
                                 fx.port);
    char *kc = fx_kubeconfig("cert.yaml", cluster,
                             "    client-certificate: client.crt\n    client-key: client.key\n");
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    assert_non_null(c);
    assert_int_equal(kube_version(c, &v, &err), 0);
    log = fx_log();
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "cert_cn")),
                        "fixture-user");
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "auth")), "");
    json_decref(log);
    kube_client_free(c);
    free(kc);
    free(cluster);
}

static void test_kube_http_proxy_url_tunnels_and_still_verifies(void **state)
{
    char *cluster = kp_xasprintf("    server: https://127.0.0.1:%d\n    certificate-authority: "
                                 "ca.crt\n    proxy-url: http://127.0.0.1:%d\n",
                                 fx.port, fx.proxy_port);
    char *kc = fx_kubeconfig("proxy.yaml", cluster, NULL);
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    char *target = kp_xasprintf("127.0.0.1:%d", fx.port);
    json_t *log;
    (void)state;

    assert_non_null(c);
    assert_int_equal(kube_version(c, &v, &err), 0);
    log = fx_log();
    assert_int_equal(json_array_size(log), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "method")),
                        "CONNECT");
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 0), "path")), target);
    json_decref(log);
    kube_client_free(c);
    free(target);
    free(kc);
    free(cluster);
}

static void test_kube_http_untrusted_server_certificate(void **state)
{
    char *cluster = kp_xasprintf("    server: https://127.0.0.1:%d\n    certificate-authority: "
                                 "other-ca.crt\n",
                                 fx.port);
    char *kc = fx_kubeconfig("untrusted.yaml", cluster, NULL);
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    char *want = kp_xasprintf("get server version: TLS certificate of https://127.0.0.1:%d is "
                              "not trusted",
                              fx.port);
    (void)state;

    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_memory_equal(err.msg, want, strlen(want));
    assert_non_null(strstr(err.msg, "Check certificate-authority(-data) and tls-server-name"));
    assert_int_equal(kube_client_last(c)->http_status, 0);
    kube_client_free(c);
    free(want);
    free(kc);
    free(cluster);
}

static void test_kube_http_retries_429_and_503_honouring_retry_after(void **state)
{
    struct kube_client *c = fx_token_client();
    json_t *obj = pod("p1", "r1"), *got = NULL;
    struct kp_err err = {{0}};
    (void)state;

    assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", obj, NULL, NULL, &err), 0);
    fx_do("/_fixture/queue",
          "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods/p1\",\"responses\":["
          "{\"status\":429,\"headers\":{\"Retry-After\":\"7\"},"
          "\"body\":\"Too many requests, please try again later.\"},"
          "{\"status\":503,\"body\":{\"kind\":\"Status\",\"code\":503,"
          "\"reason\":\"ServiceUnavailable\",\"message\":\"not ready\"}}]}");
    fx_clk.slept_ms = 0;
    assert_int_equal(kube_get(c, &KUBE_RES_PODS, "ns1", "p1", &got, &err), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(got, "metadata"), "name")), "p1");
    assert_int_equal(kube_client_last(c)->retries, 2);
    assert_int_equal(fx_clk.sleeps, 2);
    /* 7 s from Retry-After, then a backoff of 0.5-1 s (jittered) */
    assert_in_range(fx_clk.slept_ms, 7000 + 500, 7000 + 1000);
    json_decref(got);
    json_decref(obj);
    kube_client_free(c);
}

/* give_up_ms bounds the retries: a storm of 503s fails a call once the server has failed
 * for that long, and the next call at its first failure; an answer ends the storm */
static void test_kube_http_give_up_bounds_retries_across_calls(void **state)
{
    char *kc = fx_kubeconfig("token.yaml", NULL, NULL);
    struct kube_client_opts o = {.qps = -1, .give_up_ms = 5000};
    struct kube_client *c = fx_client(kc, &o, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    char storm[2048] = "{\"method\":\"GET\",\"path\":\"/version\",\"responses\":[";
    (void)state;

    assert_non_null(c);
    for (int i = 0; i < 12; i++)
        strcat(storm,
               i ? ",{\"status\":503,\"body\":\"busy\"}" : "{\"status\":503,\"body\":\"busy\"}");
    strcat(storm, "]}");
    fx_do("/_fixture/queue", storm);
    fx_clk.slept_ms = 0;
    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_int_equal(kube_client_last(c)->http_status, 503);
    assert_true(fx_clk.slept_ms <= 5000); /* not the ~75-150 s of 10 retries */
    assert_true(kube_client_last(c)->retries >= 2);
    assert_non_null(strstr(err.msg, "gave up after"));
    /* the storm goes on: the next call fails at its first 503 */
    fx_clk.slept_ms = 0;
    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_int_equal(kube_client_last(c)->retries, 0);
    assert_int_equal(fx_clk.slept_ms, 0);
    /* an answer ends it: a later 503 is retried again */
    fx_do("/_fixture/reset", NULL);
    assert_int_equal(kube_version(c, &v, &err), 0);
    fx_do("/_fixture/queue", "{\"method\":\"GET\",\"path\":\"/version\",\"responses\":["
                             "{\"status\":503,\"body\":\"busy\"}]}");
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(kube_client_last(c)->retries, 1);
    kube_client_free(c);
    free(kc);
}

static void test_kube_http_connection_reset_is_retried(void **state)
{
    struct kube_client *c = fx_token_client();
    json_t *obj = pod("r1", "run-1"), *got = NULL;
    struct kp_err err = {{0}};
    (void)state;

    /* a GET that meets a dropped connection is sent again */
    fx_do("/_fixture/queue", "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods/r1\","
                             "\"responses\":[{\"reset\":true}]}");
    assert_int_equal(kube_get(c, &KUBE_RES_PODS, "ns1", "r1", &got, &err), -1);
    assert_int_equal(kube_client_last(c)->http_status, 404); /* the retry got an answer */
    assert_int_equal(kube_client_last(c)->retries, 1);
    /* a create whose connection dropped after the server stored it is reconciled */
    fx_do("/_fixture/queue", "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\","
                             "\"responses\":[{\"apply\":true,\"reset\":true}]}");
    if (kube_create(c, &KUBE_RES_PODS, "ns1", obj, NULL, &got, &err) != 0)
        fail_msg("%s", err.msg);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(got, "metadata"), "name")), "r1");
    json_decref(got);
    json_decref(obj);
    kube_client_free(c);
}

static void test_kube_http_429_plain_text_gives_up_after_max_retries(void **state)
{
    char *kc = fx_kubeconfig("token.yaml", NULL, NULL);
    struct kube_client_opts o = {.qps = -1, .max_retries = 2};
    struct kube_client *c = fx_client(kc, &o, &fx_clk);
    struct kp_err err = {{0}};
    json_t *got = NULL;
    (void)state;

    fx_do("/_fixture/queue",
          "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods/p1\",\"responses\":["
          "{\"status\":429,\"headers\":{\"Retry-After\":\"1\"},\"body\":\"Too many requests, "
          "please try again later.\"},"
          "{\"status\":429,\"headers\":{\"Retry-After\":\"1\"},\"body\":\"Too many requests, "
          "please try again later.\"},"
          "{\"status\":429,\"headers\":{\"Retry-After\":\"1\"},\"body\":\"Too many requests, "
          "please try again later.\"}]}");
    assert_int_equal(kube_get(c, &KUBE_RES_PODS, "ns1", "p1", &got, &err), -1);
    assert_string_equal(err.msg,
                        "get pods p1 in namespace \"ns1\": too many requests (429): Too many "
                        "requests, please try again later (after 2 retries). The API server is "
                        "shedding load (priority and fairness); try again later or lower --qps");
    assert_int_equal(kube_client_last(c)->http_status, 429);
    assert_null(got);
    kube_client_free(c);
    free(kc);
}

static void test_kube_http_rate_limit_applies_to_every_request(void **state)
{
    char *kc = fx_kubeconfig("token.yaml", NULL, NULL);
    struct kube_client_opts o = {.qps = 5, .burst = 2};
    struct kube_client *c = fx_client(kc, &o, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    (void)state;

    for (int i = 0; i < 5; i++)
        assert_int_equal(kube_version(c, &v, &err), 0);
    /* burst 2 free, then 200 ms per request at 5 QPS on the fake clock */
    assert_int_equal(fx_clk.slept_ms, 600);
    kube_client_free(c);

    /* a retry takes a token too: at 0.1 QPS the retry after a 503 waits out the rest of its
     * 10 s slot whatever the backoff (without the bucket: 10 s + 0.25-0.5 s) */
    o = (struct kube_client_opts){.qps = 0.1, .burst = 1};
    c = fx_client(kc, &o, &fx_clk);
    assert_int_equal(kube_version(c, &v, &err), 0); /* the burst */
    fx_do("/_fixture/queue", "{\"method\":\"GET\",\"path\":\"/version\",\"responses\":["
                             "{\"status\":503,\"body\":\"busy\"}]}");
    fx_clk.slept_ms = 0;
    assert_int_equal(kube_version(c, &v, &err), 0);
    assert_int_equal(kube_client_last(c)->retries, 1);
    assert_in_range(fx_clk.slept_ms, 20000, 20001);
    kube_client_free(c);
    free(kc);
}

static void expect_status(struct kube_client *c, const char *queue, const char *want, int code,
                          const char *reason)
{
    struct kp_err err = {{0}};
    json_t *got = NULL;
    json_t *obj = pod("p9", "r");
    int rc;

    fx_do("/_fixture/queue", queue);
    rc = kube_create(c, &KUBE_RES_PODS, "ns1", obj, NULL, &got, &err);
    assert_int_equal(rc, -1);
    assert_string_equal(err.msg, want);
    assert_int_equal(kube_client_last(c)->http_status, code);
    assert_string_equal(kube_client_last(c)->reason, reason);
    json_decref(obj);
}

static void test_kube_http_status_bodies_become_one_actionable_line(void **state)
{
    struct kube_client *c = fx_token_client();
    (void)state;

    expect_status(c,
                  "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"responses\":[{"
                  "\"status\":403,\"body\":{\"kind\":\"Status\",\"code\":403,\"reason\":"
                  "\"Forbidden\",\"message\":\"pods is forbidden: User \\\"bob\\\" cannot create "
                  "resource \\\"pods\\\" in API group \\\"\\\" in the namespace \\\"ns1\\\"\"}}]}",
                  "create pods p9 in namespace \"ns1\": forbidden (403 Forbidden): pods is "
                  "forbidden: User \"bob\" cannot create resource \"pods\" in API group \"\" in "
                  "the namespace \"ns1\". Grant the permission with manifests/rbac.yaml (kubectl "
                  "apply -f manifests/rbac.yaml) or use an account that has it",
                  403, "Forbidden");
    expect_status(c,
                  "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"responses\":[{"
                  "\"status\":422,\"body\":{\"kind\":\"Status\",\"code\":422,\"reason\":"
                  "\"Invalid\",\"message\":\"Pod \\\"p9\\\" is invalid\",\"details\":{\"causes\":"
                  "[{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\",\"field\":"
                  "\"spec.containers[0].image\"},{\"reason\":\"FieldValueInvalid\",\"message\":"
                  "\"must be no more than 63 characters\",\"field\":\"metadata.labels\"}]}}}]}",
                  "create pods p9 in namespace \"ns1\": invalid (422 Invalid): Pod \"p9\" is "
                  "invalid; invalid fields: spec.containers[0].image (Required value), "
                  "metadata.labels (must be no more than 63 characters)",
                  422, "Invalid");
    expect_status(c,
                  "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"responses\":[{"
                  "\"status\":404,\"body\":{\"kind\":\"Status\",\"code\":404,\"reason\":"
                  "\"NotFound\",\"message\":\"namespaces \\\"ns1\\\" not found\"}}]}",
                  "create pods p9 in namespace \"ns1\": not found (404 NotFound): namespaces "
                  "\"ns1\" not found",
                  404, "NotFound");
    expect_status(c,
                  "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"responses\":[{"
                  "\"status\":502,\"content_type\":\"text/html\",\"body\":\"<html><body>Bad "
                  "Gateway</body></html>\"},{\"status\":400,\"body\":\"oops\"}]}",
                  "create pods p9 in namespace \"ns1\": bad request (400): oops", 400, "");
    kube_client_free(c);
}

static void test_kube_http_401_names_user_and_context(void **state)
{
    char *kc = fx_kubeconfig("bad-token.yaml", NULL, "    token: wrong\n");
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kp_err err = {{0}};
    json_t *got = NULL;
    (void)state;

    assert_int_equal(kube_get(c, &KUBE_RES_NODES, NULL, "n1", &got, &err), -1);
    assert_string_equal(err.msg, "get nodes n1: unauthorized (401 Unauthorized): Unauthorized. "
                                 "The credentials of user \"u\" (context \"t\") were rejected: "
                                 "log in again or refresh the token/certificate in the "
                                 "kubeconfig");
    kube_client_free(c);
    free(kc);
}

static void test_kube_http_create_reconciles_409_after_retry(void **state)
{
    struct kube_client *c = fx_token_client();
    json_t *obj = pod("p2", "run-42"), *got = NULL, *items = NULL;
    struct kp_err err = {{0}};
    (void)state;

    /* the first POST is stored but answered with 500: the retry meets 409 AlreadyExists */
    fx_do("/_fixture/queue", "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\","
                             "\"responses\":[{\"apply\":true,\"status\":500,\"body\":{\"kind\":"
                             "\"Status\",\"code\":500,\"reason\":\"InternalError\"}}]}");
    assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", obj, NULL, &got, &err), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(got, "metadata"), "uid")),
                        "uid-2");
    assert_int_equal(kube_list_all(c, &KUBE_RES_PODS, "ns1", NULL, &items, &err), 0);
    assert_int_equal(json_array_size(items), 1);
    json_decref(items);
    json_decref(got);
    got = NULL;

    /* an object of someone else with the same name is not ours: 409 stays an error */
    json_decref(obj);
    obj = pod("p2", "run-43");
    fx_do("/_fixture/queue", "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\","
                             "\"responses\":[{\"status\":503,\"body\":\"\"}]}");
    assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", obj, NULL, &got, &err), -1);
    assert_string_equal(err.msg, "create pods p2 in namespace \"ns1\": already exists (409 "
                                 "AlreadyExists): pods \"p2\" already exists");
    assert_null(got);

    /* without a retry, 409 is reported at once */
    assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", obj, NULL, &got, &err), -1);
    assert_int_equal(kube_client_last(c)->retries, 0);
    assert_int_equal(kube_client_last(c)->http_status, 409);
    json_decref(obj);
    kube_client_free(c);
}

static unsigned warnings_seen;
static void on_warning(void *arg, const char *text)
{
    (void)arg;
    assert_string_equal(text, "would violate PodSecurity \"restricted:latest\": \"x\"");
    warnings_seen++;
}

static void test_kube_http_create_is_strict_and_warnings_show_once(void **state)
{
    char *kc = fx_kubeconfig("token.yaml", NULL, NULL);
    struct kube_client_opts o = {.qps = -1, .on_warning = on_warning};
    struct kube_client *c = fx_client(kc, &o, &fx_clk);
    struct kube_write_opts wo = {.dry_run = 1};
    struct kp_err err = {{0}};
    json_t *a = pod("w1", "r"), *b = pod("w2", "r");
    json_t *log;
    const char *path;
    (void)state;

    fx_do("/_fixture/queue",
          "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"responses\":["
          "{\"apply\":true,\"status\":201,\"body\":{},\"headers\":{\"Warning\":"
          "\"299 - \\\"would violate PodSecurity \\\\\\\"restricted:latest\\\\\\\": "
          "\\\\\\\"x\\\\\\\"\\\"\"}},"
          "{\"apply\":true,\"status\":201,\"body\":{},\"headers\":{\"Warning\":"
          "\"299 - \\\"would violate PodSecurity \\\\\\\"restricted:latest\\\\\\\": "
          "\\\\\\\"x\\\\\\\"\\\"\"}}]}");
    warnings_seen = 0;
    assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", a, NULL, NULL, &err), 0);
    assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", b, &wo, NULL, &err), 0);
    assert_int_equal(warnings_seen, 1);
    log = fx_log();
    path = json_string_value(json_object_get(json_array_get(log, 1), "path"));
    assert_string_equal(path, "/api/v1/namespaces/ns1/pods?fieldValidation=Strict&fieldManager="
                              "kperf&dryRun=All");
    json_decref(log);
    json_decref(a);
    json_decref(b);
    kube_client_free(c);
    free(kc);
}

static void test_kube_http_delete_and_delete_collection(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_delete_opts d = {.propagation = KUBE_PROPAGATION_FOREGROUND, .grace_period_s = -1};
    struct kube_list_opts sel = {.label_selector = "run=a"};
    struct kp_err err = {{0}};
    json_t *p;
    json_t *log;
    int gone = 0;
    long count = 0;
    (void)state;

    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "d%d", i);
        p = pod(name, i < 2 ? "a" : "b");
        assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", p, NULL, NULL, &err), 0);
        json_decref(p);
    }
    assert_int_equal(kube_delete(c, &KUBE_RES_PODS, "ns1", "d2", &d, &gone, &err), 0);
    assert_int_equal(gone, 1);
    log = fx_log();
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 3), "path")),
                        "/api/v1/namespaces/ns1/pods/d2?propagationPolicy=Foreground");
    json_decref(log);
    assert_int_equal(kube_delete(c, &KUBE_RES_PODS, "ns1", "d2", &d, &gone, &err), -1);
    assert_int_equal(kube_client_last(c)->http_status, 404);
    d.missing_ok = 1;
    assert_int_equal(kube_delete(c, &KUBE_RES_PODS, "ns1", "d2", &d, &gone, &err), 0);
    assert_int_equal(gone, 1);
    assert_int_equal(kube_delete_collection(c, &KUBE_RES_PODS, "ns1", &sel, NULL, &count, &err), 0);
    assert_int_equal(count, 2);
    kube_client_free(c);
}

struct counter {
    unsigned n;
    int ordered;
};

static int count_item(void *arg, json_t *item, struct kp_err *err)
{
    struct counter *k = arg;
    char want[32];
    (void)err;
    snprintf(want, sizeof(want), "node-%05u", k->n);
    if (strcmp(json_string_value(json_object_get(json_object_get(item, "metadata"), "name")),
               want) != 0)
        k->ordered = 0;
    k->n++;
    return 0;
}

static void test_kube_http_list_follows_continue_one_request_per_page(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_list_opts lo = {.page_size = 500};
    struct counter k = {0, 1};
    struct kp_err err = {{0}};
    char *rv = NULL;
    json_t *log;
    (void)state;

    fx_do("/_fixture/config", "{\"nodes\":1200}");
    assert_int_equal(kube_list(c, &KUBE_RES_NODES, NULL, &lo, count_item, &k, &rv, &err), 0);
    assert_int_equal(k.n, 1200);
    assert_true(k.ordered);
    assert_string_equal(rv, "5000");
    assert_int_equal(kube_client_last(c)->requests, 3);
    log = fx_log();
    assert_int_equal(json_array_size(log), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(log, 1), "path")),
                        "/api/v1/nodes?limit=500&continue=500");
    json_decref(log);
    free(rv);
    kube_client_free(c);
}

static void test_kube_http_list_5000_nodes_under_64_mib(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_list_opts lo = {0};
    struct counter k = {0, 1};
    struct kp_err err = {{0}};
    struct rusage ru;
    (void)state;

    /* ~4 KB per node, about what a real Node object with images and conditions weighs */
    fx_do("/_fixture/config", "{\"nodes\":5000,\"node_bytes\":4000}");
    assert_int_equal(kube_list(c, &KUBE_RES_NODES, NULL, &lo, count_item, &k, NULL, &err), 0);
    assert_int_equal(k.n, 5000);
    assert_int_equal(kube_client_last(c)->requests, 10); /* default page of 500 */
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "peak RSS after listing 5000 nodes: %ld KiB\n", ru.ru_maxrss);
    kube_client_free(c);
#if !defined(__SANITIZE_ADDRESS__) /* shadow memory and quarantine inflate RSS under ASan */
    assert_in_range(ru.ru_maxrss, 1, 64 * 1024);
#endif
}

static int collect_log(void *arg, const char *data, size_t len)
{
    char **buf = arg;
    size_t old = strlen(*buf);
    *buf = kp_xrealloc(*buf, old + len + 1);
    memcpy(*buf + old, data, len);
    (*buf)[old + len] = '\0';
    return 0;
}

static void test_kube_http_pod_logs_and_ssar(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_log_opts lo = {.tail_lines = 2, .container = "agent"};
    struct kube_access q = {.verb = "create", .resource = "pods", .ns = "ns1"};
    struct kp_err err = {{0}};
    char *text = NULL, *streamed = kp_xstrdup("");
    char *reason = NULL;
    size_t len = 0;
    int allowed = -1;
    (void)state;

    assert_int_equal(kube_pod_logs(c, "ns1", "p", &lo, &text, &len, &err), 0);
    assert_string_equal(text, "log line 4\nlog line 5\n");
    assert_int_equal(len, 22);
    lo.tail_lines = 0;
    lo.follow = 1;
    assert_int_equal(kube_pod_logs_stream(c, "ns1", "p", &lo, collect_log, &streamed, &err), 0);
    assert_non_null(strstr(streamed, "log line 1\n"));
    /* a follow that never ends stops at its deadline (the fake clock jumps) */
    fx_do("/_fixture/queue", "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods/p/log\","
                             "\"responses\":[{\"stream\":[\"one\"],\"hold\":true}]}");
    lo.deadline_ms = 30000;
    fx_clk.step_ms = 20000;
    streamed[0] = '\0';
    assert_int_equal(kube_pod_logs_stream(c, "ns1", "p", &lo, collect_log, &streamed, &err), 0);
    assert_true(!strncmp(streamed, "\"one\"\n", strlen(streamed))); /* all or nothing yet */
    fx_clk.step_ms = 0;
    assert_int_equal(kube_ssar(c, &q, &allowed, &reason, &err), 0);
    assert_int_equal(allowed, 1);
    free(reason);
    q.resource = "secrets";
    assert_int_equal(kube_ssar(c, &q, &allowed, &reason, &err), 0);
    assert_int_equal(allowed, 0);
    assert_string_equal(reason, "no RBAC rule for secrets");
    free(reason);
    free(text);
    free(streamed);
    kube_client_free(c);
}

static void test_kube_http_abort_stops_calls(void **state)
{
    volatile sig_atomic_t flag = 1;
    char *kc = fx_kubeconfig("token.yaml", NULL, NULL);
    struct kube_client_opts o = {.qps = -1, .abort_flag = &flag};
    struct kube_client *c = fx_client(kc, &o, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_string_equal(err.msg, "get server version: interrupted");
    flag = 0;
    kube_client_abort(c);
    assert_int_equal(kube_version(c, &v, &err), -1);
    kube_client_reset_abort(c);
    assert_int_equal(kube_version(c, &v, &err), 0);
    log = fx_log();
    assert_int_equal(json_array_size(log), 1); /* aborted calls never reached the server */
    json_decref(log);
    kube_client_free(c);
    free(kc);
}

static void test_kube_http_request_log_never_shows_secrets(void **state)
{
    char *user = kp_xasprintf("    token: good-token\n    client-certificate: client.crt\n"
                              "    client-key: client.key\n");
    char *kc = fx_kubeconfig("log.yaml", NULL, user);
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    struct kube_version v;
    struct kp_err err = {{0}};
    char *path = kp_xasprintf("%s/stderr.txt", fx.dir);
    char text[8192] = "";
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    (void)state;

    fx_do("/_fixture/queue", "{\"method\":\"GET\",\"path\":\"/version\",\"responses\":["
                             "{\"status\":429,\"headers\":{\"Retry-After\":\"1\","
                             "\"X-Kubernetes-PF-FlowSchema-UID\":\"fs-1\"},\"body\":\"busy\"}]}");
    kp_log_set_level(KP_LOG_TRACE);
    dup2(fileno(f), 2);
    assert_int_equal(kube_version(c, &v, &err), 0);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    kp_log_set_level(KP_LOG_WARN);
    rewind(f);
    assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(text, "GET /version 429 in "));
    assert_non_null(strstr(text, "retrying GET /version after 429 in "));
    assert_non_null(strstr(text, "GET /version 200 in "));
    assert_non_null(strstr(text, "X-Kubernetes-PF-FlowSchema-UID: fs-1"));
    assert_null(strstr(text, "good-token"));
    assert_null(strstr(text, "BEGIN"));
    kube_client_free(c);
    free(path);
    free(kc);
    free(user);
}

static void test_kube_http_insecure_warns_and_redirects_are_not_followed(void **state)
{
    char *cluster = kp_xasprintf("    server: https://127.0.0.1:%d\n    insecure-skip-tls-verify: "
                                 "true\n",
                                 fx.port);
    char *kc = fx_kubeconfig("insecure.yaml", cluster, NULL);
    char *path = kp_xasprintf("%s/stderr2.txt", fx.dir);
    char text[4096] = "";
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    struct kube_client *c;
    struct kube_version v;
    struct kp_err err = {{0}};
    json_t *log;
    (void)state;

    dup2(fileno(f), 2);
    c = fx_client(kc, NULL, &fx_clk);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
    fclose(f);
    assert_non_null(strstr(text, "warning: TLS verification is off for https://127.0.0.1:"));
    assert_int_equal(kube_version(c, &v, &err), 0); /* the fixture CA is not configured */

    fx_do("/_fixture/queue", "{\"method\":\"GET\",\"path\":\"/version\",\"responses\":["
                             "{\"status\":302,\"headers\":{\"Location\":"
                             "\"http://127.0.0.1:1/version\"},\"body\":\"moved\"}]}");
    assert_int_equal(kube_version(c, &v, &err), -1);
    assert_string_equal(err.msg, "get server version: unexpected response (302): moved");
    log = fx_log();
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
    kube_client_free(c);
    free(path);
    free(kc);
    free(cluster);
}

static void test_kube_http_response_bodies_are_capped(void **state)
{
    char *kc = fx_kubeconfig("token.yaml", NULL, NULL);
    struct kube_client_opts o = {.qps = -1, .max_body = 100000};
    struct kube_client *c = fx_client(kc, &o, &fx_clk);
    struct kube_list_opts lo = {.page_size = 100};
    struct counter k = {0, 1};
    struct kp_err err = {{0}};
    char *want = kp_xasprintf("list nodes: response from https://127.0.0.1:%d is larger than the "
                              "100000-byte limit",
                              fx.port);
    (void)state;

    fx_do("/_fixture/config", "{\"nodes\":300,\"node_bytes\":2000}");
    assert_int_equal(kube_list(c, &KUBE_RES_NODES, NULL, &lo, count_item, &k, NULL, &err), -1);
    assert_string_equal(err.msg, want);
    assert_int_equal(k.n, 0);
    lo.page_size = 40; /* 40 x 2 KB fits */
    assert_int_equal(kube_list(c, &KUBE_RES_NODES, NULL, &lo, count_item, &k, NULL, &err), 0);
    assert_int_equal(k.n, 300);
    assert_int_equal(kube_client_last(c)->requests, 8);
    free(want);
    kube_client_free(c);
    free(kc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_kube_http_version_with_token_and_keepalive, fx_reset),
        cmocka_unit_test_setup(test_kube_http_impersonation_headers, fx_reset),
        cmocka_unit_test_setup(test_kube_http_client_certificate_and_tls_server_name, fx_reset),
        cmocka_unit_test_setup(test_kube_http_proxy_url_tunnels_and_still_verifies, fx_reset),
        cmocka_unit_test_setup(test_kube_http_untrusted_server_certificate, fx_reset),
        cmocka_unit_test_setup(test_kube_http_retries_429_and_503_honouring_retry_after, fx_reset),
        cmocka_unit_test_setup(test_kube_http_give_up_bounds_retries_across_calls, fx_reset),
        cmocka_unit_test_setup(test_kube_http_connection_reset_is_retried, fx_reset),
        cmocka_unit_test_setup(test_kube_http_429_plain_text_gives_up_after_max_retries, fx_reset),
        cmocka_unit_test_setup(test_kube_http_rate_limit_applies_to_every_request, fx_reset),
        cmocka_unit_test_setup(test_kube_http_status_bodies_become_one_actionable_line, fx_reset),
        cmocka_unit_test_setup(test_kube_http_401_names_user_and_context, fx_reset),
        cmocka_unit_test_setup(test_kube_http_create_reconciles_409_after_retry, fx_reset),
        cmocka_unit_test_setup(test_kube_http_create_is_strict_and_warnings_show_once, fx_reset),
        cmocka_unit_test_setup(test_kube_http_delete_and_delete_collection, fx_reset),
        cmocka_unit_test_setup(test_kube_http_list_follows_continue_one_request_per_page, fx_reset),
        cmocka_unit_test_setup(test_kube_http_list_5000_nodes_under_64_mib, fx_reset),
        cmocka_unit_test_setup(test_kube_http_pod_logs_and_ssar, fx_reset),
        cmocka_unit_test_setup(test_kube_http_abort_stops_calls, fx_reset),
        cmocka_unit_test_setup(test_kube_http_request_log_never_shows_secrets, fx_reset),
        cmocka_unit_test_setup(test_kube_http_insecure_warns_and_redirects_are_not_followed,
                               fx_reset),
        cmocka_unit_test_setup(test_kube_http_response_bodies_are_capped, fx_reset),
    };
    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
