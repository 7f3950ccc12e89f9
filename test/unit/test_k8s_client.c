/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_client.c - the client Job of a run_spec (k8s_client_make_job): what --duration and
 * the other spec fields become in the Job (the agent's argv, activeDeadlineSeconds), on which
 * node it runs and which token it sees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/k8s/k8s_client.h"

/* d's object options point into d itself: fill it in place */
static void base_deploy(struct k8s_deploy *d)
{
    memset(d, 0, sizeof(*d));
    strcpy(d->run_id, "20261130-090000-abcdef");
    d->timeout_ms = 60000;
    d->obj.run_id = d->run_id;
    d->obj.ns = "kperf-20261130-090000-abcdef";
    d->obj.image = "registry.example/kperf-agent:0.1.0";
    d->obj.port = 5201;
    d->obj.job_ttl_s = 600;
}

static const json_t *job_pod_spec(const json_t *job)
{
    return json_object_get(json_object_get(json_object_get(job, "spec"), "template"), "spec");
}

/* index of s in the container's args, or -1 */
static int arg_index(const json_t *job, const char *s)
{
    const json_t *args = json_object_get(
        json_array_get(json_object_get(job_pod_spec(job), "containers"), 0), "args");
    size_t i;
    json_t *a;

    json_array_foreach(args, i, a)
    {
        if (json_string_value(a) && strcmp(json_string_value(a), s) == 0)
            return (int)i;
    }
    return -1;
}

static const char *arg_after(const json_t *job, const char *flag)
{
    const json_t *args = json_object_get(
        json_array_get(json_object_get(job_pod_spec(job), "containers"), 0), "args");
    int i = arg_index(job, flag);

    return i < 0 ? NULL : json_string_value(json_array_get(args, (size_t)i + 1));
}

static void test_k8s_client_job_carries_duration_and_its_deadline(void **state)
{
    struct k8s_deploy d;
    enum test_kind tests[] = {TEST_TCP_RR, TEST_TCP_STREAM};
    struct plan_group g = {.scenario = SCENARIO_POD_TO_POD,
                           .placement = PLACEMENT_OTHER_NODE,
                           .placement_label = (char *)"other-node"};
    struct run_spec spec = {.group = &g,
                            .tests = tests,
                            .n_tests = 2,
                            .samples = 3,
                            .duration_ms = 7000,
                            .omit_ms = 1000};
    char *name = NULL;
    json_t *job;
    (void)state;

    base_deploy(&d);
    assert_int_equal(k8s_client_spec_ms(&spec), 2 * 3 * 8000);
    job = k8s_client_make_job(&d, &spec, 4, "node-b", "198.18.0.7", 5201, &name);
    assert_non_null(job);
    assert_string_equal(arg_after(job, "--duration"), "7000ms");
    assert_string_equal(arg_after(job, "--server"), "198.18.0.7:5201");
    assert_string_equal(arg_after(job, "--token-file"), K8S_TOKEN_FILE);
    /* the planned 48 s plus --timeout 60 s, rounded up */
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(job, "spec"), "activeDeadlineSeconds")),
        109);
    char *affinity = json_dumps(json_object_get(job_pod_spec(job), "affinity"), JSON_COMPACT);
    assert_non_null(strstr(affinity, "\"node-b\"")); /* pinned to the client node */
    free(affinity);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(job, "metadata"), "name")), name);
    assert_non_null(strstr(name, "-4")); /* the step number */
    free(name);
    json_decref(job);

    spec.duration_ms = 2000; /* the value follows the flag, nothing else changes */
    job = k8s_client_make_job(&d, &spec, 5, "node-b", "198.18.0.7", 5201, NULL);
    assert_string_equal(arg_after(job, "--duration"), "2000ms");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(job, "spec"), "activeDeadlineSeconds")),
        2 * 3 * 3 + 60 + 1);
    json_decref(job);
}

static void test_k8s_client_external_job_has_no_run_token(void **state)
{
    struct k8s_deploy d;
    enum test_kind tests[] = {TEST_TCP_RR};
    struct plan_group g = {.scenario = SCENARIO_POD_TO_EXTERNAL,
                           .placement = PLACEMENT_EXTERNAL,
                           .placement_label = (char *)"external"};
    struct run_spec spec = {
        .group = &g, .tests = tests, .n_tests = 1, .samples = 1, .duration_ms = 1000};
    json_t *job;
    (void)state;

    base_deploy(&d);
    job = k8s_client_make_job(&d, &spec, 0, "node-a", "203.0.113.5", 6000, NULL);
    assert_int_equal(arg_index(job, "--token-file"), -1); /* it cannot know the run's token */
    json_decref(job);
    d.obj.external_token = "ext";
    job = k8s_client_make_job(&d, &spec, 1, "node-a", "203.0.113.5", 6000, NULL);
    assert_string_equal(arg_after(job, "--token-file"), K8S_EXTERNAL_TOKEN_FILE);
    json_decref(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_client_job_carries_duration_and_its_deadline),
        cmocka_unit_test(test_k8s_client_external_job_has_no_run_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
