/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_readiness.c - the stages of a pod (k8s_wait_pod_stage, k8s_wait_observe) and the
 * readiness record made from them (k8s_readiness_record). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_readiness.h"
#include "controller/k8s/k8s_wait.h"

static json_t *pod(const char *text)
{
    json_error_t jerr;
    json_t *p = json_loads(text, 0, &jerr);

    if (!p)
        fail_msg("%s", jerr.text);
    return p;
}

static double num(const json_t *r, const char *k)
{
    return json_number_value(json_object_get(r, k));
}

static void test_k8s_readiness_stages(void **state)
{
    json_t *pending = pod("{\"spec\": {}, \"status\": {\"phase\": \"Pending\"}}");
    json_t *bound = pod("{\"spec\": {\"nodeName\": \"n-2\"}, \"status\": {\"phase\": \"Pending\","
                        " \"containerStatuses\": [{\"state\": {\"waiting\": {\"reason\": "
                        "\"ContainerCreating\"}}}]}}");
    json_t *cond = pod("{\"spec\": {}, \"status\": {\"phase\": \"Pending\", \"conditions\": "
                       "[{\"type\": \"PodScheduled\", \"status\": \"True\"}]}}");
    json_t *started = pod("{\"spec\": {\"nodeName\": \"n-2\"}, \"status\": {\"phase\": "
                          "\"Pending\", \"containerStatuses\": [{\"state\": {\"running\": {}}}]}}");
    json_t *running =
        pod("{\"spec\": {\"nodeName\": \"n\"}, \"status\": {\"phase\": \"Running\"}}");
    json_t *done = pod("{\"spec\": {\"nodeName\": \"n\"}, \"status\": {\"phase\": \"Succeeded\"}}");
    struct k8s_pod_times t = {0, 0, 0};
    (void)state;

    assert_int_equal(k8s_wait_pod_stage(pending), 0);
    assert_int_equal(k8s_wait_pod_stage(bound), 1);
    assert_int_equal(k8s_wait_pod_stage(cond), 1);
    assert_int_equal(k8s_wait_pod_stage(started), 2);
    assert_int_equal(k8s_wait_pod_stage(running), 2);
    assert_int_equal(k8s_wait_pod_stage(done), 2);
    /* first sightings stay: a later event does not move them */
    k8s_wait_observe(&t, pending);
    assert_true(t.scheduled_s == 0 && t.running_s == 0);
    k8s_wait_observe(&t, bound);
    assert_true(t.scheduled_s > 1e9 && t.running_s == 0);
    t.scheduled_s = 100;
    k8s_wait_observe(&t, running);
    assert_true(t.scheduled_s == 100 && t.running_s > 1e9);
    json_decref(pending);
    json_decref(bound);
    json_decref(cond);
    json_decref(started);
    json_decref(running);
    json_decref(done);
}

static void test_k8s_readiness_record_segments(void **state)
{
    struct k8s_pod_times t = {100.25, 102.5, 0};
    json_t *doc = json_pack("{s:f}", "first_answer_unix_s", 102.75);
    json_t *r = k8s_readiness_record("p", "n-2", "churn", 100.0, &t, doc);
    (void)state;

    assert_string_equal(json_string_value(json_object_get(r, "kind")), "churn");
    assert_string_equal(json_string_value(json_object_get(r, "node")), "n-2");
    assert_true(num(r, "scheduling_s") == 0.25);
    assert_true(num(r, "network_s") == 2.25);
    assert_true(num(r, "first_packet_s") == 0.25);
    assert_true(num(r, "total_s") == 2.75);
    json_decref(r);
    json_decref(doc);
}

static void test_k8s_readiness_record_skew_and_missing(void **state)
{
    /* the agent answered before the watch saw Running: first packet 0, not negative; a stage
     * seen "before" creation (clock steps) counts from creation */
    struct k8s_pod_times t = {99.0, 101.0, 0};
    json_t *doc = json_pack("{s:f}", "first_answer_unix_s", 100.5);
    json_t *r = k8s_readiness_record("p", "n", "client", 100.0, &t, doc);
    struct k8s_pod_times never = {100.5, 0, 0};
    json_t *r2 = k8s_readiness_record("p", "n", "client", 100.0, &never, NULL);
    (void)state;

    assert_true(num(r, "scheduling_s") == 0);
    assert_true(num(r, "network_s") == 1.0);
    assert_true(num(r, "first_packet_s") == 0);
    assert_true(num(r, "total_s") == 1.0);
    /* never seen running, no document: only the scheduling segment, no total */
    assert_true(num(r2, "scheduling_s") == 0.5);
    assert_null(json_object_get(r2, "network_s"));
    assert_null(json_object_get(r2, "first_packet_s"));
    assert_null(json_object_get(r2, "total_s"));
    json_decref(r);
    json_decref(r2);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_readiness_stages),
        cmocka_unit_test(test_k8s_readiness_record_segments),
        cmocka_unit_test(test_k8s_readiness_record_skew_and_missing),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
