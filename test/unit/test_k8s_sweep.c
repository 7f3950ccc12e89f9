/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_sweep.c - the ring of sweep pairs: every node client once and server once, in name
 * order whatever the input order; one node pairs with itself; none gives no pair. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/k8s/k8s_sweep.h"

static const char *field(const json_t *ring, size_t i, const char *k)
{
    return json_string_value(json_object_get(json_array_get(ring, i), k));
}

static void test_k8s_sweep_ring_pairs(void **state)
{
    json_t *names = json_pack("[s,s,s,s]", "node-3", "node-1", "node-4", "node-2");
    json_t *ring = k8s_sweep_ring(names);
    (void)state;

    assert_int_equal(json_array_size(ring), 4);
    for (size_t i = 0; i < 4; i++) {
        char want_c[16], want_s[16];
        snprintf(want_c, sizeof(want_c), "node-%zu", i + 1);
        snprintf(want_s, sizeof(want_s), "node-%zu", (i + 1) % 4 + 1);
        assert_string_equal(field(ring, i, "client"), want_c);
        assert_string_equal(field(ring, i, "server"), want_s);
        /* rounds of node-disjoint pairs: 0 1 0 1 */
        assert_int_equal(json_integer_value(json_object_get(json_array_get(ring, i), "round")),
                         (int)(i % 2));
    }
    json_decref(ring);
    json_decref(names);
}

static void test_k8s_sweep_ring_rounds_are_node_disjoint(void **state)
{
    for (int n = 2; n <= 9; n++) {
        json_t *names = json_array(), *ring;
        int max_round = 0;
        for (int i = 0; i < n; i++)
            json_array_append_new(names, json_sprintf("n%d", i));
        ring = k8s_sweep_ring(names);
        for (size_t i = 0; i < (size_t)n; i++) {
            json_int_t ri = json_integer_value(json_object_get(json_array_get(ring, i), "round"));
            max_round = ri > max_round ? (int)ri : max_round;
            for (size_t k = 0; k < i; k++) {
                if (json_integer_value(json_object_get(json_array_get(ring, k), "round")) != ri)
                    continue;
                const char *e[4] = {field(ring, i, "client"), field(ring, i, "server"),
                                    field(ring, k, "client"), field(ring, k, "server")};
                assert_string_not_equal(e[0], e[2]);
                assert_string_not_equal(e[0], e[3]);
                assert_string_not_equal(e[1], e[2]);
                assert_string_not_equal(e[1], e[3]);
            }
        }
        /* a ring needs 2 rounds when even, 3 when odd */
        assert_int_equal(max_round + 1, n % 2 == 0 ? 2 : 3);
        json_decref(ring);
        json_decref(names);
    }
    (void)state;
}

static void test_k8s_sweep_ring_one_and_none(void **state)
{
    json_t *one = json_pack("[s]", "solo"), *none = json_array();
    json_t *r1 = k8s_sweep_ring(one), *r0 = k8s_sweep_ring(none);
    (void)state;

    assert_int_equal(json_array_size(r1), 1);
    assert_string_equal(field(r1, 0, "client"), "solo");
    assert_string_equal(field(r1, 0, "server"), "solo");
    assert_int_equal(json_array_size(r0), 0);
    json_decref(r1);
    json_decref(r0);
    json_decref(one);
    json_decref(none);
}

static void test_k8s_sweep_cni_version_per_node(void **state)
{
    /* a Cilium upgrade half rolled out: node-2's agent still runs the old image */
    json_t *infos =
        json_pack("[{s:s}, {s:s}, {s:s}]", "name", "node-1", "name", "node-2", "name", "node-3");
    json_t *pods = json_pack(
        "[{s:{s:s, s:[{s:s, s:s}, {s:s, s:s}]}}, {s:{s:s, s:[{s:s, s:s}]}}]", "spec", "nodeName",
        "node-1", "containers", "name", "sidecar", "image", "x/side:v9", "name", "cilium-agent",
        "image", "quay.io/cilium/cilium:v1.16.3@sha256:abc", "spec", "nodeName", "node-2",
        "containers", "name", "cilium-agent", "image", "quay.io/cilium/cilium:v1.15.9");
    (void)state;

    k8s_sweep_cni_versions(infos, pods, "cilium-agent");
    assert_string_equal(json_string_value(json_object_get(json_array_get(infos, 0), "cni_version")),
                        "v1.16.3");
    assert_string_equal(json_string_value(json_object_get(json_array_get(infos, 1), "cni_version")),
                        "v1.15.9");
    assert_null(json_object_get(json_array_get(infos, 2), "cni_version")); /* no pod there */
    json_decref(pods);
    json_decref(infos);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_sweep_ring_pairs),
        cmocka_unit_test(test_k8s_sweep_ring_rounds_are_node_disjoint),
        cmocka_unit_test(test_k8s_sweep_ring_one_and_none),
        cmocka_unit_test(test_k8s_sweep_cni_version_per_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
