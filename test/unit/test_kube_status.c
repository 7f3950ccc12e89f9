/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_status.c - the pure parts of the kube client: Status decoding, the token bucket,
 * base64 / query escaping / RFC 3339, paths. No server, no clock. (The YAML guard is
 * base/yaml_load: test_yaml_load.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/kp_alloc.h"
#include "controller/kube/codec.h"
#include "controller/kube/kube.h"
#include "controller/kube/ratelimit.h"
#include "controller/kube/status.h"

static const char *decode(long code, const char *ctype, const char *body, char reason[64])
{
    static struct kp_err err;
    status_error(code, ctype, body, strlen(body), "list pods in namespace \"x\"", NULL, 3, reason,
                 &err);
    return err.msg;
}

static void test_kube_status_messages(void **state)
{
    char reason[64];
    (void)state;

    assert_string_equal(decode(410, "application/json",
                               "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                               "\"message\":\"too old resource version: 1 (5)\"}",
                               reason),
                        "list pods in namespace \"x\": expired (410 Expired): too old resource "
                        "version: 1 (5). The resourceVersion or continue token is too old; list "
                        "again");
    assert_string_equal(reason, "Expired");
    assert_string_equal(
        decode(503, "text/html", "<html>\n<body>503 Service Unavailable</body>", reason),
        "list pods in namespace \"x\": server error (503): <html> (after 3 "
        "retries). The API server is failing or overloaded; try again later");
    assert_string_equal(reason, "");
    assert_string_equal(decode(404, "text/plain", "404 page not found\n", reason),
                        "list pods in namespace \"x\": not found (404): 404 page not found");
    assert_string_equal(decode(403, "application/json",
                               "{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\","
                               "\"message\":\"unable to create new content in namespace x "
                               "because it is being terminated\",\"details\":{\"causes\":[{"
                               "\"reason\":\"NamespaceTerminating\",\"field\":"
                               "\"metadata.namespace\"}]}}",
                               reason),
                        "list pods in namespace \"x\": forbidden (403 Forbidden): unable to create "
                        "new content in namespace x because it is being terminated; invalid "
                        "fields: metadata.namespace. The namespace is being deleted; wait until "
                        "it is gone or use another one");
    /* control characters from a hostile body never reach the terminal */
    assert_string_equal(decode(500, "", "bad\x1b[31mred", reason),
                        "list pods in namespace \"x\": server error (500): bad?[31mred (after 3 "
                        "retries). The API server is failing or overloaded; try again later");
}

static void test_kube_status_token_bucket(void **state)
{
    struct ratelimit r;
    (void)state;

    ratelimit_init(&r, 5.0, 10, 1000);
    for (int i = 0; i < 10; i++)
        assert_int_equal(ratelimit_reserve(&r, 1000), 0); /* the burst */
    assert_int_equal(ratelimit_reserve(&r, 1000), 200);
    assert_int_equal(ratelimit_reserve(&r, 1000), 400); /* reservations queue up */
    assert_int_equal(ratelimit_reserve(&r, 1400), 200);
    assert_int_equal(ratelimit_reserve(&r, 100000), 0); /* refilled, capped at the burst */
    ratelimit_init(&r, -1, 0, 0);
    assert_int_equal(ratelimit_reserve(&r, 0), 0);
}

static void test_kube_status_codecs(void **state)
{
    char *out = NULL;
    size_t len = 0;
    time_t t;
    (void)state;

    assert_int_equal(codec_b64_decode("aGVs\nbG8=", 9, &out, &len), 0);
    assert_string_equal(out, "hello");
    assert_int_equal(len, 5);
    free(out);
    assert_int_equal(codec_b64_decode("aGVsbG8", 7, &out, &len), 0); /* unpadded */
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(codec_b64_decode("a!b=", 4, &out, &len), -1);
    assert_int_equal(codec_b64_decode("a", 1, &out, &len), -1);
    out = codec_b64_encode("hello", 5);
    assert_string_equal(out, "aGVsbG8=");
    free(out);
    out = codec_query_escape("app in (a,b),!x");
    assert_string_equal(out, "app%20in%20%28a%2Cb%29%2C%21x");
    free(out);
    assert_int_equal(codec_rfc3339_parse("1970-01-01T00:01:00.123Z", &t), 0);
    assert_int_equal(t, 60);
    assert_int_equal(codec_rfc3339_parse("1970-01-01T01:00:00-01:00", &t), 0);
    assert_int_equal(t, 7200);
    assert_int_equal(codec_rfc3339_parse("1970-01-01 00:00:00Z", &t), -1);
    assert_int_equal(codec_rfc3339_parse("1970-13-01T00:00:00Z", &t), -1);
}

static void test_kube_status_paths(void **state)
{
    char *p;
    (void)state;

    p = kube_path(&KUBE_RES_PODS, "ns", "p", "log");
    assert_string_equal(p, "/api/v1/namespaces/ns/pods/p/log");
    free(p);
    p = kube_path(&KUBE_RES_PODS, NULL, NULL, NULL);
    assert_string_equal(p, "/api/v1/pods");
    free(p);
    p = kube_path(&KUBE_RES_DAEMONSETS, "kperf", "srv", NULL);
    assert_string_equal(p, "/apis/apps/v1/namespaces/kperf/daemonsets/srv");
    free(p);
    p = kube_path(&KUBE_RES_NODES, "ignored", "n1", NULL);
    assert_string_equal(p, "/api/v1/nodes/n1");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kube_status_messages),
        cmocka_unit_test(test_kube_status_token_bucket),
        cmocka_unit_test(test_kube_status_codecs),
        cmocka_unit_test(test_kube_status_paths),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
