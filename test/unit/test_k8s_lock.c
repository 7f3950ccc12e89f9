/* SPDX-License-Identifier: Apache-2.0 */
/* test_k8s_lock.c - the cluster lock: its object, who holds it and since when, and when a held
 * lock counts as alive or expired, judged on a fake monotonic clock (ms passed by the test),
 * never from its timestamps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "controller/k8s/k8s_lock.h"

static const struct timespec T0 = {.tv_sec = 1796151600}; /* 2026-12-01T19:00:00Z */

static json_t *lock_of(const char *holder, const struct timespec *t)
{
    json_t *l = k8s_lock_object("kperf", NULL, holder, "20261201-190000-abcdef", 30, t);

    json_object_set_new(json_object_get(l, "metadata"), "resourceVersion", json_string("7"));
    return l;
}

static void renew_at(json_t *l, const char *when)
{
    json_object_set_new(json_object_get(l, "spec"), "renewTime", json_string(when));
}

static void test_k8s_lock_object_new_and_taken_over(void **state)
{
    json_t *l = lock_of("alice@laptop run 20261201-190000-abcdef", &T0);
    json_t *next;
    const json_t *spec = json_object_get(l, "spec");
    const json_t *labels = json_object_get(json_object_get(l, "metadata"), "labels");
    char who[300];
    (void)state;

    assert_string_equal(json_string_value(json_object_get(l, "kind")), "Lease");
    assert_string_equal(json_string_value(json_object_get(json_object_get(l, "metadata"), "name")),
                        "kperf-lock");
    assert_string_equal(json_string_value(json_object_get(spec, "acquireTime")),
                        "2026-12-01T19:00:00.000000Z");
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseDurationSeconds")), 30);
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 0);
    /* not a run's object: kperf cleanup's label search must not take it for a leftover */
    assert_null(json_object_get(labels, "app.kubernetes.io/managed-by"));
    assert_string_equal(json_string_value(json_object_get(labels, "kperf.io/run-id")),
                        "20261201-190000-abcdef");
    k8s_lock_describe(l, who, sizeof(who));
    assert_string_equal(who, "the cluster lock kperf/kperf-lock is held by alice@laptop run "
                             "20261201-190000-abcdef since 2026-12-01T19:00:00.000000Z");
    /* a take-over keeps the version read (the PUT fails if it moved) and counts a transition */
    next = k8s_lock_object("kperf", l, "bob@ci run 2", "2", 30, &T0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(next, "metadata"), "resourceVersion")),
        "7");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(next, "spec"), "leaseTransitions")), 1);
    json_decref(next);
    json_decref(l);
}

static void test_k8s_lock_free_when_absent_or_released(void **state)
{
    struct k8s_lock_watch w = {0};
    json_t *l = lock_of("", &T0);
    (void)state;

    assert_int_equal(k8s_lock_judge(&w, NULL, 0), K8S_LOCK_FREE);
    assert_int_equal(k8s_lock_judge(&w, l, 0), K8S_LOCK_FREE); /* no holderIdentity */
    k8s_lock_watch_cleanup(&w);
    json_decref(l);
}

/* a live holder renews every third of its period: HELD at the first change, whatever the
 * direction of its clock; HELD restarts the watching */
static void test_k8s_lock_held_when_renewed(void **state)
{
    struct k8s_lock_watch w = {0};
    json_t *l = lock_of("alice@laptop run 1", &T0);
    (void)state;

    assert_int_equal(k8s_lock_judge(&w, l, 1000), K8S_LOCK_WATCHING);
    assert_int_equal(k8s_lock_judge(&w, l, 10999), K8S_LOCK_WATCHING);
    renew_at(l, "2020-01-01T00:00:00.000001Z"); /* a clock years behind: still a renewal */
    assert_int_equal(k8s_lock_judge(&w, l, 11000), K8S_LOCK_HELD);
    /* watched again from 11000: the same record for a period less 1 ms is still watching */
    assert_int_equal(k8s_lock_judge(&w, l, 40999), K8S_LOCK_WATCHING);
    renew_at(l, "2020-01-01T00:00:10.000001Z");
    assert_int_equal(k8s_lock_judge(&w, l, 41000), K8S_LOCK_HELD);
    k8s_lock_watch_cleanup(&w);
    json_decref(l);
}

/* a holder that died: expired after one whole period of watching without a change, even if its
 * timestamps lie 10 minutes in the future (an API server or laptop clock ahead) */
static void test_k8s_lock_expires_after_a_watched_period(void **state)
{
    struct timespec ahead = {.tv_sec = T0.tv_sec + 600};
    struct k8s_lock_watch w = {0};
    json_t *l = lock_of("alice@laptop run 1", &ahead);
    (void)state;

    assert_int_equal(k8s_lock_judge(&w, l, 5000), K8S_LOCK_WATCHING);
    assert_int_equal(k8s_lock_judge(&w, l, 34999), K8S_LOCK_WATCHING);
    assert_int_equal(k8s_lock_judge(&w, l, 35000), K8S_LOCK_EXPIRED);
    k8s_lock_watch_cleanup(&w);
    /* a lock renewed once, then silent: expired one period after the renewal seen here */
    assert_int_equal(k8s_lock_judge(&w, l, 0), K8S_LOCK_WATCHING);
    renew_at(l, "2026-12-01T19:10:10.000000Z");
    assert_int_equal(k8s_lock_judge(&w, l, 10000), K8S_LOCK_HELD);
    assert_int_equal(k8s_lock_judge(&w, l, 39999), K8S_LOCK_WATCHING);
    assert_int_equal(k8s_lock_judge(&w, l, 40000), K8S_LOCK_EXPIRED);
    k8s_lock_watch_cleanup(&w);
    json_decref(l);
}

static void test_k8s_lock_deleted_or_unreadable(void **state)
{
    struct k8s_lock_watch w = {0};
    json_t *l = lock_of("alice@laptop run 1", &T0);
    json_t *bad = json_pack("{s:{s:s}}", "spec", "holderIdentity", "x");
    (void)state;

    assert_int_equal(k8s_lock_judge(&w, l, 0), K8S_LOCK_WATCHING);
    assert_int_equal(k8s_lock_judge(&w, NULL, 100), K8S_LOCK_FREE); /* deleted meanwhile */
    assert_int_equal(w.started, 0);
    /* held but with no lease period: nobody can renew it meaningfully; take it */
    assert_int_equal(k8s_lock_judge(&w, bad, 0), K8S_LOCK_EXPIRED);
    k8s_lock_watch_cleanup(&w);
    json_decref(bad);
    json_decref(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_lock_object_new_and_taken_over),
        cmocka_unit_test(test_k8s_lock_free_when_absent_or_released),
        cmocka_unit_test(test_k8s_lock_held_when_renewed),
        cmocka_unit_test(test_k8s_lock_expires_after_a_watched_period),
        cmocka_unit_test(test_k8s_lock_deleted_or_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
