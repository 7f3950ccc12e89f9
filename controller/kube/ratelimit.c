/* SPDX-License-Identifier: Apache-2.0 */
/* ratelimit.c - see ratelimit.h. */
#include "controller/kube/ratelimit.h"

void ratelimit_init(struct ratelimit *r, double qps, int burst, uint64_t now_ms)
{
    r->qps = qps;
    r->burst = burst > 0 ? burst : 1;
    r->tokens = r->burst;
    r->last_ms = now_ms;
}

uint64_t ratelimit_reserve(struct ratelimit *r, uint64_t now_ms)
{
    if (r->qps <= 0)
        return 0;
    if (now_ms > r->last_ms) {
        r->tokens += (double)(now_ms - r->last_ms) * r->qps / 1000.0;
        if (r->tokens > r->burst)
            r->tokens = r->burst;
        r->last_ms = now_ms;
    }
    r->tokens -= 1.0;
    if (r->tokens >= 0)
        return 0;
    {
        double wait = -r->tokens * 1000.0 / r->qps;
        uint64_t ms = (uint64_t)wait;
        return (double)ms < wait ? ms + 1 : ms;
    }
}
