/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_podfail.c - the cause of a pod that cannot start, from fixtures shaped like the
 * kubelet's and containerd's own messages: test/unit/data/k8s/pod-sandbox-pending.json (a
 * pinned DaemonSet pod in ContainerCreating), node-network-not-ready.json and
 * events-podfail.json (one array of core/v1 Events per case: host-local and VPC CNI IP
 * exhaustion, Cilium's agent down, ADD timeouts, NetworkNotReady, pull errors). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_podfail.h"
#include "test/unit/fixture.h"

static json_t *events_of(const char *name)
{
    json_t *all = fixture_json("k8s", "events-podfail.json");
    json_t *e = json_incref(json_object_get(all, name));

    assert_non_null(e);
    json_decref(all);
    return e;
}

/* classifies the pending pod with the events of case `name` (node may be NULL) */
static enum k8s_podfail_cause run(const char *name, const json_t *pod, const json_t *node,
                                  struct k8s_podfail *f)
{
    json_t *ev = name ? events_of(name) : NULL;
    enum k8s_podfail_cause c = k8s_podfail_classify(pod, ev, node, f);

    json_decref(ev);
    return c;
}

static void test_k8s_podfail_ip_exhaustion_host_local_and_vpc_cni(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-sandbox-pending.json");
    struct k8s_podfail f;
    (void)state;

    assert_int_equal(run("hostlocal", pod, NULL, &f), K8S_PODFAIL_IP_EXHAUSTION);
    assert_true(f.fatal);
    assert_string_equal(f.node, "node-2");
    assert_string_equal(
        f.message, "pod kperf-server-pod-sweep-b5x9q on node node-2: no pod network: IP "
                   "addresses exhausted (ip-exhaustion): plugin type=\"bridge\" name=\"kube-sim\" "
                   "failed (add): failed to allocate for range 0: no IP addresses available in "
                   "range set: 10.244.2.2-10.244.2.3");
    /* the first event's time, not the last repeat's */
    assert_true(f.since_s == k8s_podfail_time("2026-12-03T19:10:01Z"));
    k8s_podfail_cleanup(&f);

    assert_int_equal(run("vpccni", pod, NULL, &f), K8S_PODFAIL_IP_EXHAUSTION);
    assert_non_null(strstr(f.detail, "add cmd: failed to assign an IP address to container"));
    assert_string_equal(k8s_podfail_cause_name(f.cause), "ip-exhaustion");
    k8s_podfail_cleanup(&f);
    json_decref(pod);
}

static void test_k8s_podfail_plugin_error_is_not_a_timeout_when_the_plugin_said_it(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-sandbox-pending.json");
    struct k8s_podfail f;
    (void)state;

    /* Cilium's text says "timeout", but the plugin answered: a plugin error */
    assert_int_equal(run("cilium", pod, NULL, &f), K8S_PODFAIL_CNI_PLUGIN);
    assert_true(f.fatal);
    assert_non_null(strstr(f.message, "(cni-plugin-error): plugin type=\"cilium-cni\""));
    assert_non_null(strstr(f.detail, "unable to connect to Cilium daemon"));
    k8s_podfail_cleanup(&f);

    assert_int_equal(run("plugin_timeout", pod, NULL, &f), K8S_PODFAIL_CNI_TIMEOUT);
    k8s_podfail_cleanup(&f);
    assert_int_equal(run("runtime_timeout", pod, NULL, &f), K8S_PODFAIL_CNI_TIMEOUT);
    assert_string_equal(f.detail, "context deadline exceeded");
    k8s_podfail_cleanup(&f);
    json_decref(pod);
}

static void test_k8s_podfail_cni_not_ready_from_event_or_node(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-sandbox-pending.json");
    json_t *node = fixture_json("k8s", "node-network-not-ready.json");
    struct k8s_podfail f;
    (void)state;

    assert_int_equal(run("not_initialized", pod, NULL, &f), K8S_PODFAIL_CNI_NOT_READY);
    k8s_podfail_cleanup(&f);
    assert_int_equal(run("network_not_ready", pod, NULL, &f), K8S_PODFAIL_CNI_NOT_READY);
    assert_non_null(strstr(f.message, "the CNI is not ready on the node (cni-not-ready)"));
    k8s_podfail_cleanup(&f);
    /* no event yet: the node's Ready condition says it, timed by its transition */
    assert_int_equal(run(NULL, pod, node, &f), K8S_PODFAIL_CNI_NOT_READY);
    assert_true(f.fatal);
    assert_non_null(strstr(f.detail, "cni plugin not initialized"));
    assert_true(f.since_s == k8s_podfail_time("2026-12-03T19:09:58Z"));
    k8s_podfail_cleanup(&f);
    json_decref(node);
    json_decref(pod);
}

static void test_k8s_podfail_nothing_once_the_sandbox_is_ready(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-sandbox-pending.json");
    json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions");
    struct k8s_podfail f;
    (void)state;

    assert_int_equal(run(NULL, pod, NULL, &f), K8S_PODFAIL_NONE);
    assert_null(f.message);
    /* an old sandbox failure is history once the pod has its network */
    json_object_set_new(json_array_get(conds, 0), "status", json_string("True"));
    assert_int_equal(run("hostlocal", pod, NULL, &f), K8S_PODFAIL_NONE);
    /* host-network pods have no sandbox network of their own */
    json_object_set_new(json_array_get(conds, 0), "status", json_string("False"));
    json_object_set_new(json_object_get(pod, "spec"), "hostNetwork", json_true());
    assert_int_equal(run("hostlocal", pod, NULL, &f), K8S_PODFAIL_NONE);
    json_decref(pod);
}

/* the pending pod with its container waiting for `reason` (`message`) */
static json_t *pulling(const char *reason, const char *message)
{
    json_t *pod = fixture_json("k8s", "pod-sandbox-pending.json");
    json_t *st = json_object_get(pod, "status");
    json_t *cs = json_array_get(json_object_get(st, "containerStatuses"), 0);
    json_t *w = json_object_get(json_object_get(cs, "state"), "waiting");

    json_object_set_new(w, "reason", json_string(reason));
    json_object_set_new(w, "message", json_string(message));
    json_object_set_new(json_array_get(json_object_get(st, "conditions"), 0), "status",
                        json_string("True"));
    return pod;
}

static void test_k8s_podfail_pull_permanent_fails_naming_image_and_registry(void **state)
{
    static const char *const permanent[] = {"pull_not_found", "pull_unauthorized", "pull_arch"};
    json_t *pod = pulling("ImagePullBackOff", "Back-off pulling image \"x\"");
    struct k8s_podfail f;
    (void)state;

    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(run(permanent[i], pod, NULL, &f), K8S_PODFAIL_IMAGE_PULL);
        assert_true(f.fatal);
        assert_non_null(strstr(f.message, "pod kperf-server-pod-sweep-b5x9q on node node-2: "
                                          "ImagePullBackOff for image "
                                          "ghcr.io/kperf/kperf-agent:0.9.0 (image-pull): "));
        assert_true(f.since_s == k8s_podfail_time("2026-12-03T19:10:02Z"));
        k8s_podfail_cleanup(&f);
    }
    assert_int_equal(run("pull_unauthorized", pod, NULL, &f), K8S_PODFAIL_IMAGE_PULL);
    assert_non_null(strstr(f.detail, "401 Unauthorized"));
    k8s_podfail_cleanup(&f);
    assert_int_equal(run("pull_arch", pod, NULL, &f), K8S_PODFAIL_IMAGE_PULL);
    assert_non_null(strstr(f.detail, "no matching manifest for linux/arm64"));
    k8s_podfail_cleanup(&f);
    json_decref(pod);
    /* ErrImagePull carries the registry's words itself */
    pod = pulling("ErrImagePull", "rpc error: code = NotFound desc = failed to pull and unpack "
                                  "image \"ghcr.io/kperf/kperf-agent:0.9.0\": not found");
    assert_int_equal(run(NULL, pod, NULL, &f), K8S_PODFAIL_IMAGE_PULL);
    k8s_podfail_cleanup(&f);
    json_decref(pod);
}

static void test_k8s_podfail_pull_transient_keeps_waiting(void **state)
{
    static const char *const transient[] = {"pull_503", "pull_ratelimit", "pull_refused"};
    json_t *pod = pulling("ImagePullBackOff", "Back-off pulling image \"x\"");
    struct k8s_podfail f;
    (void)state;

    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(run(transient[i], pod, NULL, &f), K8S_PODFAIL_IMAGE_PULL_RETRY);
        assert_false(f.fatal);
        assert_non_null(strstr(f.message, "(image-pull-transient, the kubelet retries)"));
        k8s_podfail_cleanup(&f);
    }
    /* a back-off whose reason is not known (no event seen): not fatal either */
    assert_int_equal(run(NULL, pod, NULL, &f), K8S_PODFAIL_IMAGE_PULL_RETRY);
    assert_false(f.fatal);
    k8s_podfail_cleanup(&f);
    json_decref(pod);
}

static void test_k8s_podfail_unschedulable_names_the_resource(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-unschedulable-pinned.json");
    struct k8s_podfail f;
    (void)state;

    assert_int_equal(k8s_podfail_classify(pod, NULL, NULL, &f), K8S_PODFAIL_UNSCHEDULABLE);
    assert_true(f.fatal);
    assert_string_equal(f.node, "node-3");
    assert_string_equal(f.detail, "Insufficient cpu");
    assert_non_null(strstr(f.message, "for node node-3 is unschedulable: 0/3 nodes"));
    k8s_podfail_cleanup(&f);
    json_decref(pod);
}

/* the not-ready taint keeps the pod off a node whose CNI is not ready: the CNI is the cause */
static void test_k8s_podfail_unschedulable_on_a_network_not_ready_node(void **state)
{
    json_t *pod = fixture_json("k8s", "pod-unschedulable-pinned.json");
    json_t *node = fixture_json("k8s", "node-network-not-ready.json");
    struct k8s_podfail f;
    (void)state;

    assert_int_equal(k8s_podfail_classify(pod, NULL, node, &f), K8S_PODFAIL_CNI_NOT_READY);
    assert_true(f.fatal);
    assert_non_null(strstr(f.message, "for node node-3: no pod network: the CNI is not ready on "
                                      "the node (cni-not-ready): container runtime network not "
                                      "ready: NetworkReady=false"));
    assert_non_null(strstr(f.message, "(the scheduler: 0/3 nodes are available"));
    k8s_podfail_cleanup(&f);
    json_decref(node);
    json_decref(pod);
}

static void test_k8s_podfail_text_cause(void **state)
{
    (void)state;
    assert_int_equal(k8s_podfail_text_cause("Scheduled", "Successfully assigned"),
                     K8S_PODFAIL_NONE);
    assert_int_equal(k8s_podfail_text_cause("FailedCreatePodSandBox", "plugin type=\"x\" failed "
                                                                      "(add): boom"),
                     K8S_PODFAIL_CNI_PLUGIN);
    assert_int_equal(k8s_podfail_text_cause(NULL, NULL), K8S_PODFAIL_NONE);
    assert_true(k8s_podfail_time("2026-12-03T19:10:01.250000Z") ==
                k8s_podfail_time("2026-12-03T19:10:01Z") + 0.25);
    assert_true(k8s_podfail_time("yesterday") == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_podfail_ip_exhaustion_host_local_and_vpc_cni),
        cmocka_unit_test(test_k8s_podfail_plugin_error_is_not_a_timeout_when_the_plugin_said_it),
        cmocka_unit_test(test_k8s_podfail_cni_not_ready_from_event_or_node),
        cmocka_unit_test(test_k8s_podfail_nothing_once_the_sandbox_is_ready),
        cmocka_unit_test(test_k8s_podfail_pull_permanent_fails_naming_image_and_registry),
        cmocka_unit_test(test_k8s_podfail_pull_transient_keeps_waiting),
        cmocka_unit_test(test_k8s_podfail_unschedulable_names_the_resource),
        cmocka_unit_test(test_k8s_podfail_unschedulable_on_a_network_not_ready_node),
        cmocka_unit_test(test_k8s_podfail_text_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
