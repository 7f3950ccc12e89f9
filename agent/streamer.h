/* SPDX-License-Identifier: Apache-2.0 */
/* streamer.h - one blocking data stream of a stream test on its own thread: the server's
 * TCP_STREAM / TCP_STREAM_MULTI receiver (sink) or, reversed, sender (source). The event loop
 * hands over an accepted, attached connection; the thread reads (or writes) it with blocking
 * calls until EOF, an error or streamer_stop, counting bytes in the caller's atomics, and
 * records its own CPU time and the CPU it last ran on. Owns the thread (sinks share one receive
 * buffer); the descriptor stays owned by the caller's libuv handle, which must do no I/O on it
 * until streamer_stop returns (which puts O_NONBLOCK back). Memory per streamer is bounded
 * (STREAMER_BUF plus a small thread stack); how many run at once is the caller's cap. */
#ifndef KPERF_AGENT_STREAMER_H
#define KPERF_AGENT_STREAMER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"

#define STREAMER_BUF     (128 * 1024) /* a sink's receive buffer (iperf 2 reads 128 KiB too) */
#define STREAMER_WAKE_MS 100          /* blocking calls time out this often to look at stop */

struct streamer;   /* opaque */
struct streampool; /* streampool.h */

enum streamer_mode {
    STREAMER_SINK,   /* receive and count until EOF */
    STREAMER_SOURCE, /* send blocks of zeros until stopped */
};

/* Called on the streamer's thread once its loop ends (EOF, error or stop): it must only wake
 * the owner (uv_async_send, a semaphore); the owner then calls streamer_stop. */
typedef void streamer_end_fn(void *arg);

struct streamer_params {
    int fd; /* a connected stream socket; switched to blocking mode */
    enum streamer_mode mode;
    const uint8_t *block;    /* source: block_len bytes to send (borrowed, read-only) */
    size_t block_len;        /* source: 1..PROTO_MAX_MSG_SIZE */
    _Atomic uint64_t *bytes; /* received (sink) or accepted by send (source); borrowed */
    streamer_end_fn *on_end; /* may be NULL */
    void *arg;
    /* non-NULL: the stream joins this pool's epoll threads (streampool.h) instead of a thread
     * of its own; the calls below behave the same, the descriptor stays non-blocking */
    struct streampool *pool;
};

/* What a stopped streamer did. */
struct streamer_stats {
    uint64_t cpu_ns;      /* the thread's CPU time from start to its end */
    uint64_t cpu_mark_ns; /* ... at the last streamer_mark (0 if none) */
    int cpu;              /* the CPU it last ran on, -1 if unknown */
    int eof;              /* a sink saw the peer's EOF */
    uint64_t end_ns;      /* when the loop ended (sysinfo_now_ns clock) */
    int err_no;           /* the errno that ended the loop, 0 for EOF or stop */
};

/* Starts p's stream on a new thread. Returns 0 with *out (ours until streamer_stop), or -1
 * with err and *out NULL; on failure the descriptor is left non-blocking as it came, so the
 * loop can keep serving it. */
KP_MUST_CHECK int streamer_start(const struct streamer_params *p, struct streamer **out,
                                 struct kp_err *err);

/* Whether the thread's loop has ended (it then calls on_end). */
int streamer_ended(const struct streamer *s);

/* Notes the thread's CPU time now: the start of the measurement window. */
void streamer_mark(struct streamer *s);

/* Asks the thread to end without waiting: a sink's receive side is shut down (its recv returns
 * at once), a source ends after its current send (at most STREAMER_WAKE_MS when the peer does
 * not read). Everything a source counted was accepted by the kernel and is delivered before
 * the FIN the caller sends later. Stopping many streamers: request all, then stop each. */
void streamer_request_stop(struct streamer *s);

/* Requests the stop, joins the thread, puts O_NONBLOCK back on the descriptor, fills st (may
 * be NULL) and frees s. NULL is a no-op. */
void streamer_stop(struct streamer *s, struct streamer_stats *st);

/* What one call on a stream did; nonzero goes on. */
enum streamer_call {
    STREAMER_ENDED = 0, /* EOF, or an error (err_no set) */
    STREAMER_WHOLE,     /* the whole block or buffer: the socket may take (or have) more */
    STREAMER_SHORT,     /* less, or EAGAIN / EINTR */
};

/* One send of p->block (p->block_len bytes) on p->fd with flags | MSG_NOSIGNAL, counted in
 * p->bytes; STREAMER_ENDED with *err_no set when the stream ends. The source call of both
 * engines, blocking (streamer.c) and pooled (streampool.c). */
enum streamer_call streamer_send_block(const struct streamer_params *p, int flags, int *err_no);

#endif
