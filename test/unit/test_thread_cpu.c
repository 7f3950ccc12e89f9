/* SPDX-License-Identifier: Apache-2.0 */
/* test_thread_cpu.c - per-thread CPU time is the thread's own (another thread's spinning does
 * not show in it), readable from another thread, and the CPU id is one the process may use. */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/thread_cpu.h"
#include "base/kp_err.h"
#include "test/unit/test_assert.h"

#define SPIN_NS 50000000ull /* 50 ms of CPU */

/* Spins until the calling thread has used at least ns more CPU time. */
static void spin(uint64_t ns)
{
    uint64_t t0 = thread_cpu_self_ns();
    volatile uint64_t x = 0;

    while (thread_cpu_self_ns() - t0 < ns)
        x++;
}

static void test_self_is_monotonic(void **state)
{
    uint64_t a, b;
    (void)state;

    a = thread_cpu_self_ns();
    spin(1000000);
    b = thread_cpu_self_ns();
    assert_true(a > 0);
    assert_true(b >= a + 1000000);
}

struct sleeper {
    sem_t go, done;
    uint64_t own_ns;
};

static void *sleeper_main(void *arg)
{
    struct sleeper *s = arg;

    sem_post(&s->done);
    while (sem_wait(&s->go) != 0) /* blocked: no CPU while the main thread spins */
        ;
    s->own_ns = thread_cpu_self_ns();
    sem_post(&s->done);
    return NULL;
}

static void test_per_thread_not_process(void **state)
{
    struct sleeper s;
    pthread_t t;
    uint64_t seen = 0;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(sem_init(&s.go, 0, 0), 0);
    assert_int_equal(sem_init(&s.done, 0, 0), 0);
    assert_int_equal(pthread_create(&t, NULL, sleeper_main, &s), 0);
    assert_int_equal(sem_wait(&s.done), 0);
    spin(SPIN_NS);
    /* read from here while it blocks: its clock, not ours */
    assert_int_equal(thread_cpu_of(t, &seen, &err), 0);
    assert_true(seen < SPIN_NS);
    assert_true(thread_cpu_of(pthread_self(), &seen, &err) == 0 && seen >= SPIN_NS);
    sem_post(&s.go);
    assert_int_equal(sem_wait(&s.done), 0);
    pthread_join(t, NULL);
    assert_true(s.own_ns < SPIN_NS);
    sem_destroy(&s.go);
    sem_destroy(&s.done);
}

static void test_cpu_id_is_allowed(void **state)
{
    cpu_set_t set;
    int cpu = thread_cpu_id();
    (void)state;

    assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
    assert_true(cpu >= 0 && cpu < CPU_SETSIZE);
    assert_true(CPU_ISSET(cpu, &set));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_self_is_monotonic),
        cmocka_unit_test(test_per_thread_not_process),
        cmocka_unit_test(test_cpu_id_is_allowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
