/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_wait.c - the diagnosis of pods that do not start, from fixtures
 * (test/unit/data/k8s/pod-*.json, events-*.json). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_wait.h"
#include "test/unit/fixture.h"

static void test_k8s_wait_image_pull_names_pod_node_and_image(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-imagepull.json");
    int fatal = 0;
    char *p = k8s_wait_pod_problem(pod, &fatal);
    (void)state;

    assert_non_null(p);
    /* a back-off alone does not say why: the kubelet retries, so does kperf (issue 28); the
     * registry's words come with the events (test_k8s_podfail) */
    assert_false(fatal);
    assert_non_null(strstr(p, "pod kperf-server-pod-a-x7k2p on node node-1"));
    assert_non_null(strstr(p, "ImagePullBackOff for image registry.invalid/kperf-agent:1"));
    assert_non_null(strstr(p, "image-pull-transient"));
    free(p);
    /* ErrImagePull with the registry's "not found": permanent, fatal at once */
    json_t *w = json_object_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(pod, "status"), "containerStatuses"), 0),
            "state"),
        "waiting");
    json_object_set_new(w, "reason", json_string("ErrImagePull"));
    json_object_set_new(w, "message",
                        json_string("rpc error: code = NotFound desc = failed to "
                                    "resolve reference: not found"));
    p = k8s_wait_pod_problem(pod, &fatal);
    assert_true(fatal);
    assert_non_null(
        strstr(p, "ErrImagePull for image registry.invalid/kperf-agent:1 (image-pull)"));
    assert_non_null(strstr(p, "--image"));
    free(p);
    json_decref(pod);
}

static void test_k8s_wait_unschedulable_is_not_fatal_and_quotes_scheduler(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-unschedulable.json");
    int fatal = 1;
    char *p = k8s_wait_pod_problem(pod, &fatal);
    (void)state;

    assert_non_null(p);
    assert_false(fatal); /* an autoscaler may still add a node: wait until --timeout */
    assert_non_null(strstr(p, "(not scheduled)"));
    assert_non_null(strstr(p, "Unschedulable: 0/3 nodes are available"));
    free(p);
    json_decref(pod);
}

/* issue 29: a pod pinned to one node (a DaemonSet pod, kperf's client pods) that the scheduler
 * cannot place is reported at once, naming the node and the scheduler's reason */
static void test_k8s_wait_unschedulable_pinned_is_fatal_and_names_node(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-unschedulable-pinned.json");
    json_t *terms;
    int fatal = 0;
    char *p = k8s_wait_pod_problem(pod, &fatal);
    (void)state;

    assert_true(fatal);
    assert_string_equal(k8s_wait_pinned_node(pod), "node-3");
    assert_non_null(strstr(p, "pod kperf-server-pod-sweep-7hq2d for node node-3 is unschedulable: "
                              "0/3 nodes are available: 1 Insufficient cpu"));
    free(p);
    /* kperf's own pods: matchExpressions on the hostname label */
    terms = json_object_get(
        json_object_get(json_object_get(json_object_get(json_object_get(pod, "spec"), "affinity"),
                                        "nodeAffinity"),
                        "requiredDuringSchedulingIgnoredDuringExecution"),
        "nodeSelectorTerms");
    json_array_set_new(terms, 0,
                       json_pack("{s:[{s:s, s:s, s:[s]}]}", "matchExpressions", "key",
                                 "kubernetes.io/hostname", "operator", "In", "values", "n-9"));
    assert_string_equal(k8s_wait_pinned_node(pod), "n-9");
    /* two node selector terms (two nodes allowed): not pinned, a node may still be found */
    json_array_append_new(terms,
                          json_pack("{s:[{s:s, s:s, s:[s]}]}", "matchExpressions", "key",
                                    "kubernetes.io/hostname", "operator", "In", "values", "n-8"));
    assert_null(k8s_wait_pinned_node(pod));
    p = k8s_wait_pod_problem(pod, &fatal);
    assert_false(fatal);
    free(p);
    json_decref(pod);
}

static void test_k8s_wait_crash_loop_is_fatal(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-crashloop.json");
    int fatal = 0;
    char *p = k8s_wait_pod_problem(pod, &fatal);
    (void)state;

    assert_true(fatal);
    assert_non_null(strstr(p, "container server: CrashLoopBackOff"));
    free(p);
    json_decref(pod);
}

static void test_k8s_wait_running_pod_has_no_problem(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-running.json");
    int fatal = 1;
    (void)state;

    assert_null(k8s_wait_pod_problem(pod, &fatal));
    assert_false(fatal);
    json_decref(pod);
}

static void test_k8s_wait_failed_pod_with_exit_code(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-running.json");
    json_t *st = json_object_get(pod, "status");
    int fatal = 0;
    char *p;
    (void)state;

    json_object_set_new(st, "phase", json_string("Failed"));
    json_object_set_new(
        json_array_get(json_object_get(st, "containerStatuses"), 0), "state",
        json_pack("{s:{s:i, s:s}}", "terminated", "exitCode", 2, "reason", "Error"));
    p = k8s_wait_pod_problem(pod, &fatal);
    assert_true(fatal);
    assert_non_null(strstr(p, "exited with code 2"));
    free(p);
    json_decref(pod);
}

static void test_k8s_wait_events_psa_hint_names_the_label(void **state)
{
    json_t *ev = fixture_json("k8s", "events-psa.json");
    json_t *none = json_array();
    char *s = k8s_wait_events_summary(ev, "kperf-r1");
    (void)state;

    assert_non_null(strstr(s, "FailedCreate: Error creating"));
    assert_non_null(strstr(s, "kubectl label namespace kperf-r1 "
                              "pod-security.kubernetes.io/enforce=privileged"));
    free(s);
    assert_null(k8s_wait_events_summary(none, "x"));
    json_decref(none);
    json_decref(ev);
}

/* issue 14: a pod counts only when its owner is the object we created and it is not being
 * deleted (the pod of a deleted Job of the same name lingers until garbage collection). */
static void test_k8s_wait_pod_counts_by_owner_uid_and_not_deleting(void **state)
{
    json_t *ours = json_pack("{s:{s:s, s:[{s:s, s:s, s:s}]}}", "metadata", "name", "p1",
                             "ownerReferences", "kind", "Job", "name", "j", "uid", "uid-new");
    json_t *old = json_pack("{s:{s:s, s:[{s:s, s:s, s:s}]}}", "metadata", "name", "p0",
                            "ownerReferences", "kind", "Job", "name", "j", "uid", "uid-old");
    json_t *orphan = json_pack("{s:{s:s}}", "metadata", "name", "p2");
    (void)state;

    assert_int_equal(k8s_wait_pod_counts(ours, "uid-new"), 1);
    assert_int_equal(k8s_wait_pod_counts(old, "uid-new"), 0);
    assert_int_equal(k8s_wait_pod_counts(orphan, "uid-new"), 0);
    assert_int_equal(k8s_wait_pod_counts(old, NULL), 1);
    json_object_set_new(json_object_get(ours, "metadata"), "deletionTimestamp",
                        json_string("2026-12-01T00:00:00Z"));
    assert_int_equal(k8s_wait_pod_counts(ours, "uid-new"), 0);
    assert_int_equal(k8s_wait_pod_counts(ours, NULL), 0);
    json_decref(ours);
    json_decref(old);
    json_decref(orphan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_wait_image_pull_names_pod_node_and_image),
        cmocka_unit_test(test_k8s_wait_unschedulable_is_not_fatal_and_quotes_scheduler),
        cmocka_unit_test(test_k8s_wait_unschedulable_pinned_is_fatal_and_names_node),
        cmocka_unit_test(test_k8s_wait_crash_loop_is_fatal),
        cmocka_unit_test(test_k8s_wait_running_pod_has_no_problem),
        cmocka_unit_test(test_k8s_wait_failed_pod_with_exit_code),
        cmocka_unit_test(test_k8s_wait_events_psa_hint_names_the_label),
        cmocka_unit_test(test_k8s_wait_pod_counts_by_owner_uid_and_not_deleting),
    };
    kp_alloc_init_json();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
