/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_lease.c - the run's Lease: its object and when it counts as expired. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/k8s/k8s_lease.h"

static const struct k8s_objects_opts opts = {
    .run_id = "20261201-190000-abcdef", .ns = "kperf-20261201-190000-abcdef", .image = "x"};

static void test_k8s_lease_object_fields(void **state)
{
    struct timespec t = {.tv_sec = 1796151600, .tv_nsec = 123456789}; /* 2026-12-01T19:00:00Z */
    json_t *l = k8s_lease_object(&opts, "kperf@host/42", 30, &t);
    const json_t *md = json_object_get(l, "metadata");
    const json_t *spec = json_object_get(l, "spec");
    (void)state;

    assert_non_null(l);
    assert_string_equal(json_string_value(json_object_get(l, "apiVersion")),
                        "coordination.k8s.io/v1");
    assert_string_equal(json_string_value(json_object_get(l, "kind")), "Lease");
    assert_string_equal(json_string_value(json_object_get(md, "name")),
                        "kperf-run-20261201-190000-abcdef");
    assert_string_equal(json_string_value(json_object_get(md, "namespace")), opts.ns);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(md, "labels"), K8S_LABEL_RUN_ID)),
        opts.run_id);
    assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")),
                        "kperf@host/42");
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseDurationSeconds")), 30);
    assert_string_equal(json_string_value(json_object_get(spec, "renewTime")),
                        "2026-12-01T19:00:00.123456Z");
    assert_string_equal(json_string_value(json_object_get(spec, "acquireTime")),
                        "2026-12-01T19:00:00.123456Z");
    json_decref(l);
}

static void test_k8s_lease_expired_after_duration_only(void **state)
{
    struct timespec t = {.tv_sec = 1796151600};
    json_t *l = k8s_lease_object(&opts, "h", 30, &t);
    long age = -1;
    (void)state;

    assert_int_equal(k8s_lease_expired(l, 1796151600 + 10, &age), 0);
    assert_int_equal(age, 10);
    assert_int_equal(k8s_lease_expired(l, 1796151600 + 30, NULL), 0);
    assert_int_equal(k8s_lease_expired(l, 1796151600 + 31, &age), 1);
    assert_int_equal(age, 31);
    /* a renewal moves the expiry */
    json_object_set_new(json_object_get(l, "spec"), "renewTime",
                        json_string("2026-12-01T19:00:25.5Z"));
    assert_int_equal(k8s_lease_expired(l, 1796151600 + 50, NULL), 0);
    assert_int_equal(k8s_lease_expired(l, 1796151600 + 56, NULL), 1);
    /* no renewTime: acquireTime counts */
    json_object_del(json_object_get(l, "spec"), "renewTime");
    assert_int_equal(k8s_lease_expired(l, 1796151600 + 31, NULL), 1);
    json_decref(l);
}

static void test_k8s_lease_unreadable_is_not_judged(void **state)
{
    json_t *l = json_pack("{s:{s:s}}", "spec", "renewTime", "2026-12-01T19:00:00Z");
    (void)state;

    assert_int_equal(k8s_lease_expired(l, 1796151600 + 1000, NULL), -1); /* no duration */
    json_object_set_new(json_object_get(l, "spec"), "leaseDurationSeconds", json_integer(30));
    json_object_set_new(json_object_get(l, "spec"), "renewTime", json_string("yesterday"));
    assert_int_equal(k8s_lease_expired(l, 1796151600 + 1000, NULL), -1);
    json_decref(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_lease_object_fields),
        cmocka_unit_test(test_k8s_lease_expired_after_duration_only),
        cmocka_unit_test(test_k8s_lease_unreadable_is_not_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
