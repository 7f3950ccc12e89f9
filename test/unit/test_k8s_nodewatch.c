/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_nodewatch.c - which node updates the sweep's node watch records: a watched node whose
 * Ready condition turns False with NetworkReady=false, once, with the condition's transition
 * time and when it was seen; not a Ready node, not a node NotReady for another reason, not a node
 * outside the sweep. The watch thread itself runs in e2e.k8s_cni_failures (case 3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/k8s/k8s_nodewatch.h"

#define NET_DOWN                                                                                   \
    "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "        \
    "message:Network plugin returns error: cni plugin not initialized"

static json_t *node(const char *name, const char *status, const char *message)
{
    return json_pack("{s:{s:s}, s:{s:[{s:s, s:s, s:s, s:s, s:s}]}}", "metadata", "name", name,
                     "status", "conditions", "type", "Ready", "status", status, "reason",
                     "KubeletNotReady", "message", message, "lastTransitionTime",
                     "2026-12-03T19:10:00Z");
}

static void test_k8s_nodewatch_keeps_a_watched_node_whose_network_fails(void **state)
{
    json_t *down = json_object(), *watched = json_pack("{s:b, s:b}", "n-2", 1, "n-3", 1);
    json_t *ready = node("n-3", "True", "kubelet is posting ready status");
    json_t *other = node("n-3", "Unknown", "Kubelet stopped posting node status.");
    json_t *net = node("n-3", "False", NET_DOWN), *outside = node("n-9", "False", NET_DOWN);
    const json_t *d;
    (void)state;

    assert_int_equal(k8s_nodewatch_keep(down, watched, ready, 1796325000.5), 0);
    assert_int_equal(k8s_nodewatch_keep(down, watched, other, 1796325000.5), 0);
    assert_int_equal(k8s_nodewatch_keep(down, watched, outside, 1796325000.5), 0);
    assert_int_equal(json_object_size(down), 0);
    assert_int_equal(k8s_nodewatch_keep(down, watched, net, 1796325001.5), 1);
    assert_int_equal(k8s_nodewatch_keep(down, watched, net, 1796325009.0), 0); /* once */
    d = json_object_get(down, "n-3");
    assert_non_null(strstr(json_string_value(json_object_get(d, "why")),
                           "Ready=False (KubeletNotReady: container runtime network not ready"));
    assert_non_null(strstr(json_string_value(json_object_get(d, "why")), "cni plugin not"));
    /* 2026-12-03T19:10:00Z */
    assert_true(json_real_value(json_object_get(d, "since_unix_s")) == 1796325000.0);
    assert_true(json_real_value(json_object_get(d, "detected_unix_s")) == 1796325001.5);
    json_decref(net);
    json_decref(outside);
    json_decref(other);
    json_decref(ready);
    json_decref(watched);
    json_decref(down);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_nodewatch_keeps_a_watched_node_whose_network_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
