/* SPDX-License-Identifier: Apache-2.0 */
/* streampool.h - the server's multiplexed stream engine: T threads, each an epoll loop over
 * the non-blocking data connections handed to it (a new stream goes to the thread with the
 * fewest). A stream is a sink (receive and count until EOF) or a source (send blocks until
 * stopped), with the semantics of streamer.h, which uses the pool when its params name one.
 * Level-triggered; a wake-up serves its ready streams in rounds, one call per stream per round
 * (as iperf3 does), up to 32 calls (docs/benchmark.md, "One call per ready socket" and "Rounds
 * per wake-up"). CPU time per stream is its thread's CPU time shared out by calls, about once a
 * millisecond and when a stream ends (epoll_wait included).
 * Owns its threads, their epoll and wake descriptors and a receive buffer per thread; the
 * data descriptors stay the caller's. */
#ifndef KPERF_AGENT_STREAMPOOL_H
#define KPERF_AGENT_STREAMPOOL_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/kp_err.h"

#define STREAMPOOL_MAX_THREADS 64

struct streampool;     /* opaque */
struct streampool_one; /* one stream in the pool, opaque */
struct streamer_params;
struct streamer_stats;

/* Starts n (1..STREAMPOOL_MAX_THREADS) idle threads. 0, or -1 with err and *out NULL. */
KP_MUST_CHECK int streampool_new(unsigned n, struct streampool **out, struct kp_err *err);
/* Stops and joins the threads; every stream must have been stopped. NULL is a no-op. */
void streampool_free(struct streampool *p);

/* Adds p's stream (its fd is made non-blocking). 0 with *out (ours until streampool_stop), or
 * -1 with err and the descriptor's flags as they came. */
KP_MUST_CHECK int streampool_add(struct streampool *pool, const struct streamer_params *p,
                                 struct streampool_one **out, struct kp_err *err);
int streampool_ended(const struct streampool_one *s);
void streampool_mark(struct streampool_one *s);
void streampool_request_stop(struct streampool_one *s);
/* Requests the stop, waits for the pool thread to let go of the stream, puts the descriptor's
 * flags back, fills st (may be NULL) and frees s. */
void streampool_stop(struct streampool_one *s, struct streamer_stats *st);

#endif
