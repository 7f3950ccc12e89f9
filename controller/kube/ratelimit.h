/* SPDX-License-Identifier: Apache-2.0 */
/* ratelimit.h - client-side token bucket (client-go: 5 QPS, burst 10). Every HTTP attempt,
 * retries included, takes a token. Pure arithmetic over a caller-supplied clock, so it is
 * tested without sleeping. */
#ifndef KPERF_KUBE_RATELIMIT_H
#define KPERF_KUBE_RATELIMIT_H

#include <stdint.h>

struct ratelimit {
    double qps;    /* <= 0: unlimited */
    double burst;  /* bucket size */
    double tokens; /* may go negative: reservations waiting for the future */
    uint64_t last_ms;
};

void ratelimit_init(struct ratelimit *r, double qps, int burst, uint64_t now_ms);

/* Takes one token and returns how many milliseconds the caller must wait before using it
 * (0 when one was available). */
uint64_t ratelimit_reserve(struct ratelimit *r, uint64_t now_ms);

#endif
