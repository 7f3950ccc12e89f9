/* SPDX-License-Identifier: Apache-2.0 */
/* test_kube_watch.c - kube_watch against the fixture server: initial list, dropped streams,
 * 410 Gone as an ERROR event and as an HTTP status (relist that reports what changed meanwhile),
 * bookmarks, stopping from the callback, deadlines, resuming where a watch stopped and streams
 * that end without events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube_fixture.h"

struct trace {
    char text[1024];
    const char *stop_at; /* name whose ADDED stops the watch */
    int fail;
};

static int on_event(void *arg, enum kube_event_type t, json_t *obj, struct kp_err *err)
{
    static const char *const names[] = {"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "SYNCED"};
    struct trace *tr = arg;
    const char *name =
        obj ? json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")) : NULL;
    size_t n = strlen(tr->text);

    snprintf(tr->text + n, sizeof(tr->text) - n, "%s%s%s%s", n ? "," : "", names[t],
             name ? " " : "", name ? name : "");
    if (tr->fail)
        return kp_err_set(err, "callback refused the event");
    return tr->stop_at && name && t == KUBE_EVENT_ADDED && !strcmp(name, tr->stop_at) ? 1 : 0;
}

static void create_pod(struct kube_client *c, const char *name)
{
    json_t *p = json_pack("{s:{s:s}}", "metadata", "name", name);
    struct kp_err err = {{0}};
    assert_int_equal(kube_create(c, &KUBE_RES_PODS, "ns1", p, NULL, NULL, &err), 0);
    json_decref(p);
}

static void test_kube_watch_relists_on_410_and_survives_drops(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_watch_opts wo = {.bookmarks = 1, .stream_timeout_s = 60};
    struct trace tr = {.stop_at = "d"};
    struct kp_err err = {{0}};
    const char *want_rv[] = {"3", "999", "5", "5"};
    json_t *log;
    size_t i, w = 0;
    json_t *e;
    (void)state;

    create_pod(c, "a"); /* resourceVersion 2 */
    create_pod(c, "b"); /* 3 */
    fx_do("/_fixture/queue",
          "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"query_has\":"
          "\"watch=1\",\"responses\":["
          /* 1: one event, then the connection drops */
          "{\"stream\":[{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\","
          "\"namespace\":\"ns1\",\"resourceVersion\":\"999\"}}}],\"drop\":true},"
          /* 2: too old; meanwhile b was deleted and c created */
          "{\"effects\":[{\"op\":\"delete\",\"path\":\"/api/v1/namespaces/ns1/pods/b\"},"
          "{\"op\":\"create\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"body\":{\"metadata\":"
          "{\"name\":\"c\",\"namespace\":\"ns1\"}}}],"
          "\"stream\":[{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
          "\"reason\":\"Expired\",\"message\":\"too old resource version: 999 (1000)\"}}]},"
          /* 3: 410 before the stream starts */
          "{\"status\":410,\"body\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Gone\"}},"
          /* 4: a bookmark and a new pod */
          "{\"stream\":[{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":"
          "\"2000\"}}},{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"d\","
          "\"namespace\":\"ns1\",\"resourceVersion\":\"2001\"}}}]}]}");
    assert_int_equal(kube_watch(c, &KUBE_RES_PODS, "ns1", &wo, on_event, &tr, &err), 0);
    assert_string_equal(tr.text, "ADDED a,ADDED b,SYNCED,MODIFIED a,MODIFIED a,ADDED c,DELETED "
                                 "b,SYNCED,SYNCED,BOOKMARK,ADDED d");
    log = fx_log();
    json_array_foreach(log, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        char *rv;
        if (!strstr(path, "watch=1"))
            continue;
        assert_true(w < 4);
        rv = kp_xasprintf("resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=60",
                          want_rv[w++]);
        assert_non_null(strstr(path, rv));
        free(rv);
    }
    assert_int_equal(w, 4);
    /* 3 lists + 4 watches, plus the 2 creates before */
    assert_int_equal(kube_client_last(c)->requests, 7);
    assert_int_equal(json_array_size(log), 9);
    json_decref(log);
    kube_client_free(c);
}

static void test_kube_watch_deadline_ends_a_quiet_stream(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_watch_opts wo = {.resource_version = "7", .deadline_ms = 30000};
    struct trace tr = {0};
    struct kp_err err = {{0}};
    (void)state;

    fx_do("/_fixture/queue", "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods\","
                             "\"query_has\":\"watch=1\",\"responses\":[{\"stream\":[],"
                             "\"hold\":true}]}");
    fx_clk.step_ms = 20000; /* the fake clock jumps: the deadline passes during the stream */
    assert_int_equal(kube_watch(c, &KUBE_RES_PODS, "ns1", &wo, on_event, &tr, &err), 1);
    assert_string_equal(tr.text, "");
    kube_client_free(c);
}

/* resume_rv: a watch that ends (here stopped by its callback) says where a later one starts
 * (the last event's resourceVersion), and that one asks for the changes after it, without a
 * list */
static void test_kube_watch_resumes_where_it_stopped(void **state)
{
    struct kube_client *c = fx_token_client();
    char *resume = NULL;
    struct kube_watch_opts wo = {.resource_version = "2", .resume_rv = &resume};
    struct trace tr = {.stop_at = "b"};
    struct kp_err err = {{0}};
    json_t *log, *e;
    size_t i, lists = 0, watches = 0;
    (void)state;

    fx_do("/_fixture/queue",
          "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"query_has\":"
          "\"watch=1\",\"responses\":[{\"stream\":[{\"type\":\"ADDED\",\"object\":{"
          "\"metadata\":{\"name\":\"b\",\"namespace\":\"ns1\",\"resourceVersion\":\"41\"}}}],"
          "\"hold\":true},{\"stream\":[{\"type\":\"ADDED\",\"object\":{\"metadata\":{"
          "\"name\":\"c\",\"namespace\":\"ns1\",\"resourceVersion\":\"42\"}}}],"
          "\"hold\":true}]}");
    /* the callback stops the first watch at b's event */
    assert_int_equal(kube_watch(c, &KUBE_RES_PODS, "ns1", &wo, on_event, &tr, &err), 0);
    assert_string_equal(tr.text, "ADDED b");
    assert_non_null(resume);
    assert_string_equal(resume, "41");

    /* the second asks only for what came after 41: c, not b again */
    memset(&tr, 0, sizeof(tr));
    tr.stop_at = "c";
    wo.resource_version = resume;
    assert_int_equal(kube_watch(c, &KUBE_RES_PODS, "ns1", &wo, on_event, &tr, &err), 0);
    assert_string_equal(tr.text, "ADDED c");
    assert_string_equal(resume, "42");
    log = fx_log();
    json_array_foreach(log, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        if (!strstr(path, "watch=1")) {
            lists++;
            continue;
        }
        assert_non_null(strstr(path, ++watches == 1 ? "resourceVersion=2" : "resourceVersion=41"));
    }
    assert_int_equal(lists, 0);
    assert_int_equal(watches, 2);
    json_decref(log);
    free(resume);
    kube_client_free(c);
}

static void test_kube_watch_callback_error_and_empty_streams(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_watch_opts wo = {.stream_timeout_s = 60};
    struct trace tr = {.fail = 1};
    struct kp_err err = {{0}};
    (void)state;

    create_pod(c, "a");
    assert_int_equal(kube_watch(c, &KUBE_RES_PODS, "ns1", &wo, on_event, &tr, &err), -1);
    assert_string_equal(err.msg, "list pods in namespace \"ns1\": callback refused the event");

    /* streams that end at once without events back off and finally give up */
    memset(&tr, 0, sizeof(tr));
    fx_clk.slept_ms = 0;
    assert_int_equal(kube_watch(c, &KUBE_RES_PODS, "ns1", &wo, on_event, &tr, &err), -1);
    assert_string_equal(err.msg, "watch pods in namespace \"ns1\": 10 streams in a row ended "
                                 "without events; giving up");
    assert_string_equal(tr.text, "ADDED a,SYNCED");
    /* ten backoffs: 0.8, 1.6, 3.2, 6.4, 12.8, 25.6 s, then the 30 s cap */
    assert_int_equal(fx_clk.slept_ms, 800 + 1600 + 3200 + 6400 + 12800 + 25600 + 4 * 30000);
    kube_client_free(c);
}

static void test_kube_watch_forbidden_is_an_error(void **state)
{
    struct kube_client *c = fx_token_client();
    struct kube_watch_opts wo = {.resource_version = "1"};
    struct trace tr = {0};
    struct kp_err err = {{0}};
    (void)state;

    fx_do("/_fixture/queue",
          "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/ns1/pods\",\"query_has\":"
          "\"watch=1\",\"responses\":[{\"status\":403,\"body\":{\"kind\":\"Status\",\"code\":"
          "403,\"reason\":\"Forbidden\",\"message\":\"pods is forbidden: User \\\"u\\\" cannot "
          "watch resource \\\"pods\\\" in API group \\\"\\\" in the namespace \\\"ns1\\\"\"}}]}");
    assert_int_equal(kube_watch(c, &KUBE_RES_PODS, "ns1", &wo, on_event, &tr, &err), -1);
    assert_string_equal(err.msg,
                        "watch pods in namespace \"ns1\": forbidden (403 Forbidden): pods is "
                        "forbidden: User \"u\" cannot watch resource \"pods\" in API group \"\" "
                        "in the namespace \"ns1\". Grant the permission with manifests/rbac.yaml "
                        "(kubectl apply -f manifests/rbac.yaml) or use an account that has it");
    kube_client_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_kube_watch_relists_on_410_and_survives_drops, fx_reset),
        cmocka_unit_test_setup(test_kube_watch_deadline_ends_a_quiet_stream, fx_reset),
        cmocka_unit_test_setup(test_kube_watch_resumes_where_it_stopped, fx_reset),
        cmocka_unit_test_setup(test_kube_watch_callback_error_and_empty_streams, fx_reset),
        cmocka_unit_test_setup(test_kube_watch_forbidden_is_an_error, fx_reset),
    };
    return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
}
