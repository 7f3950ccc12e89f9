/* SPDX-License-Identifier: Apache-2.0 */
/* clock.h - the clocks every layer reads: CLOCK_MONOTONIC in ns and ms (for durations and
 * deadlines), a CLOCK_REALTIME deadline for pthread_cond_timedwait, a plain sleep, and the
 * timespec <-> ns conversions. The readers are static inline: the agent's measurement loops call
 * them per packet, so they must cost no more than clock_gettime itself. Knows nothing of what
 * is timed. */
#ifndef KPERF_BASE_CLOCK_H
#define KPERF_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define CLOCK_NS_PER_MS  1000000ull
#define CLOCK_NS_PER_SEC 1000000000ull

/* A timespec (non-negative, tv_nsec < 1e9) as nanoseconds. */
static inline uint64_t clock_ts_to_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * CLOCK_NS_PER_SEC + (uint64_t)ts->tv_nsec;
}

/* Nanoseconds as a normalised timespec (for nanosleep, clock_nanosleep, timedwait). */
static inline struct timespec clock_ns_to_ts(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / CLOCK_NS_PER_SEC),
                          .tv_nsec = (long)(ns % CLOCK_NS_PER_SEC)};
    return ts;
}

/* CLOCK_MONOTONIC in nanoseconds: never goes back; its zero is arbitrary (boot). */
static inline uint64_t clock_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return clock_ts_to_ns(&ts);
}

/* CLOCK_MONOTONIC in milliseconds (clock_now_ns() / 1e6, rounded down). */
static inline uint64_t clock_now_ms(void)
{
    return clock_now_ns() / CLOCK_NS_PER_MS;
}

/* CLOCK_REALTIME as seconds since the epoch with fractions (wall-clock instants that another
 * machine's clock must be compared with, e.g. a pod's first answered packet). */
static inline double clock_unix_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The CLOCK_REALTIME instant ms milliseconds from now, normalised: the absolute timeout
 * pthread_cond_timedwait wants (with a condition variable on the default clock). */
struct timespec clock_realtime_in_ms(uint64_t ms);

/* Sleeps ms milliseconds; a signal may end it early (callers re-check their condition). */
void clock_sleep_ms(uint64_t ms);

#endif
