/* SPDX-License-Identifier: Apache-2.0 */
/* thread_cpu.c - see thread_cpu.h. */
#include "agent/thread_cpu.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

static uint64_t ts_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

uint64_t thread_cpu_self_ns(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return ts_ns(&ts);
}

int thread_cpu_of(pthread_t t, uint64_t *ns, struct kp_err *err)
{
    struct timespec ts;
    clockid_t id;
    int rc = pthread_getcpuclockid(t, &id);

    if (rc != 0)
        return kp_err_set(err, "pthread_getcpuclockid: %s", strerror(rc));
    if (clock_gettime(id, &ts) != 0)
        return kp_err_set(err, "clock_gettime (thread CPU clock): %s", strerror(errno));
    *ns = ts_ns(&ts);
    return 0;
}

int thread_cpu_id(void)
{
    int cpu = sched_getcpu();

    return cpu < 0 ? -1 : cpu;
}
