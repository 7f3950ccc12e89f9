/* SPDX-License-Identifier: Apache-2.0 */
/* clock.c - see clock.h. */
#include "base/clock.h"

struct timespec clock_realtime_in_ms(uint64_t ms)
{
    struct timespec now;

    clock_gettime(CLOCK_REALTIME, &now);
    return clock_ns_to_ts(clock_ts_to_ns(&now) + ms * CLOCK_NS_PER_MS);
}

void clock_sleep_ms(uint64_t ms)
{
    struct timespec ts = clock_ns_to_ts(ms * CLOCK_NS_PER_MS);

    nanosleep(&ts, NULL);
}
