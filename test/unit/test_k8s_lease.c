/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_lease.c - the run's Lease: its object, and when watching it says renewed, expired or
 * deleted. */
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

/* a Lease renewed by its holder is seen as RENEWED, whatever its timestamps say */
static void test_k8s_lease_obs_renewal_is_a_change(void **state)
{
    struct timespec t = {.tv_sec = 1796151600};
    json_t *l = k8s_lease_object(&opts, "h", 30, &t);
    struct k8s_lease_obs o;
    (void)state;

    assert_int_equal(k8s_lease_obs_start(&o, l, 1000), 0);
    assert_int_equal(k8s_lease_obs_update(&o, l, 11000), K8S_LEASE_WATCHING);
    /* renewTime moves back: another clock; still a renewal */
    json_object_set_new(json_object_get(l, "spec"), "renewTime",
                        json_string("2020-01-01T00:00:00.000001Z"));
    assert_int_equal(k8s_lease_obs_update(&o, l, 12000), K8S_LEASE_RENEWED);
    assert_int_equal(k8s_lease_obs_update(&o, l, 99000), K8S_LEASE_RENEWED); /* stays */
    k8s_lease_obs_cleanup(&o);
    json_decref(l);
}

/* expired only after a whole lease period of watching without a change, even when its
 * timestamps say it was renewed long ago (or in the future) */
static void test_k8s_lease_obs_expires_after_a_watched_period(void **state)
{
    struct timespec t = {.tv_sec = 946684800}; /* 2000: "old" by any clock */
    json_t *l = k8s_lease_object(&opts, "h", 30, &t);
    struct k8s_lease_obs o;
    (void)state;

    assert_int_equal(k8s_lease_obs_start(&o, l, 5000), 0);
    assert_int_equal(k8s_lease_obs_update(&o, l, 5000), K8S_LEASE_WATCHING);
    assert_int_equal(k8s_lease_obs_update(&o, l, 34999), K8S_LEASE_WATCHING);
    assert_int_equal(k8s_lease_obs_update(&o, l, 35000), K8S_LEASE_STILL);
    k8s_lease_obs_cleanup(&o);
    json_decref(l);
}

static void test_k8s_lease_obs_deleted_and_unreadable(void **state)
{
    struct timespec t = {.tv_sec = 1796151600};
    json_t *l = k8s_lease_object(&opts, "h", 30, &t);
    json_t *bad = json_pack("{s:{s:s}}", "spec", "renewTime", "2026-12-01T19:00:00Z");
    struct k8s_lease_obs o;
    (void)state;

    assert_int_equal(k8s_lease_obs_start(&o, l, 0), 0);
    assert_int_equal(k8s_lease_obs_update(&o, NULL, 100), K8S_LEASE_DELETED);
    k8s_lease_obs_cleanup(&o);
    assert_int_equal(k8s_lease_obs_start(&o, bad, 0), -1); /* no duration: not ours to judge */
    k8s_lease_obs_cleanup(&o);
    json_decref(bad);
    json_decref(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_lease_object_fields),
        cmocka_unit_test(test_k8s_lease_obs_renewal_is_a_change),
        cmocka_unit_test(test_k8s_lease_obs_expires_after_a_watched_period),
        cmocka_unit_test(test_k8s_lease_obs_deleted_and_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
