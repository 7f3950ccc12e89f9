/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_podevents.c - which of the run's pod events are kept for the diagnosis
 * (test/unit/data/k8s/events-podfail.json): sandbox and pull failures yes, the rest no; a repeat
 * (same event name, count+1) replaces its copy; at most K8S_PODEVENTS_PER_POD per pod, the first
 * kept (it dates the failure). The watch thread itself runs in e2e.k8s_cni_failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_podevents.h"
#include "test/unit/fixture.h"

static void test_k8s_podevents_keeps_what_explains_a_pod(void **state)
{
    json_t *all = fixture_json("k8s", "events-podfail.json");
    json_t *ev = json_object_get(all, "hostlocal"), *kept = json_object(), *list;
    json_t *e = json_deep_copy(json_array_get(ev, 1));
    (void)state;

    assert_int_equal(k8s_podevents_keep(kept, json_array_get(ev, 0)), 0); /* Scheduled */
    assert_int_equal(k8s_podevents_keep(kept, e), 1);
    json_object_set_new(e, "count", json_integer(4));
    assert_int_equal(k8s_podevents_keep(kept, e), 1); /* a repeat replaces its copy */
    list = json_object_get(kept, "kperf-server-pod-sweep-b5x9q");
    assert_int_equal(json_array_size(list), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "count")), 4);
    for (int i = 0; i < 20; i++) {
        json_object_set_new(json_object_get(e, "metadata"), "name", json_sprintf("ev-%d", i));
        assert_int_equal(k8s_podevents_keep(kept, e), 1);
    }
    assert_int_equal(json_array_size(list), K8S_PODEVENTS_PER_POD);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "count")), 4);
    assert_int_equal(k8s_podevents_keep(kept, json_array_get(json_object_get(all, "pull_503"), 1)),
                     1);
    json_decref(e);
    json_decref(kept);
    json_decref(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_podevents_keeps_what_explains_a_pod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
