/* SPDX-License-Identifier: Apache-2.0 */
/* client.h - the kperf-agent client: runs a list of tests against a server, each for a number
 * of samples, and returns one kperf.result/v1 document. Latency and UDP loops run on
 * dedicated threads with blocking sockets, TCP streams too unless stream_threads puts
 * them on a few epoll threads; the calling thread keeps time (warm-up, intervals, CPU). Prints
 * nothing. */
#ifndef KPERF_AGENT_CLIENT_H
#define KPERF_AGENT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define CLIENT_MAX_TESTS           32
#define CLIENT_STREAM_THREADS_AUTO (-1)
/* The default: where the server shares this kernel (same node) and the test has no more
 * streams than CPUs, or more than CLIENT_MUX_STREAMS_PER_CPU per CPU, the streams share half
 * the CPUs (the server takes the other half); with no more streams than CPUs they write 64 KiB
 * at a time. Otherwise a blocking thread per stream; on a shared kernel with more than one
 * CPU, its sender keeps at most 128 KiB unsent (PROTO_FLAG_LOW_UNSENT). docs/benchmark.md,
 * "Same kernel" and "Little unsent". */
#define CLIENT_STREAM_THREADS_PLACED (-2)
#define CLIENT_SAME_KERNEL_MSG_SIZE  (64 * 1024)
/* Past this many streams per CPU, a thread per stream on both ends of one kernel loses to
 * the shared loops (2 vCPUs, veth: 64 streams 17 against 45 Gb/s, 128 streams 17 against
 * 34-55; at 4 to 16 streams the threads won): docs/benchmark.md, "One call per ready socket". */
#define CLIENT_MUX_STREAMS_PER_CPU 16

struct client_opts {
    const char *host; /* borrowed */
    uint16_t port;
    uint8_t tests[CLIENT_MAX_TESTS]; /* enum proto_test, in run order */
    unsigned ntests;
    uint64_t duration_ms;
    uint64_t omit_ms;
    uint64_t interval_ms; /* 0 = no interval series */
    unsigned samples;
    unsigned streams; /* TCP_STREAM_MULTI */
    /* TCP_CRR: concurrent clients (--parallel, a step of kperf's capacity ramp); 0 = not given:
     * one client whose first failed connect ends the sample. Given (even 1), a failed connect
     * is counted (the result's "conn_errors") and the clients go on. */
    unsigned parallel;
    /* threads the streams of a TCP stream test share (client_mux.c), each an epoll loop over
     * its sockets: CLIENT_STREAM_THREADS_AUTO = min(streams, CPUs this process may run on);
     * 0 = a blocking thread per stream (client_loops.c); T > 0 = T threads;
     * CLIENT_STREAM_THREADS_PLACED (the default) = by where the server runs (above) */
    int stream_threads;
    uint32_t msg_size; /* 0 = the test's default (1 for RR, 128 KiB TCP, 1472 UDP) */
    uint64_t udp_rate_bps;
    int reverse;       /* stream tests: the server sends */
    int server_facts;  /* ask the server for its host's facts (FACTS): doc "server_facts" */
    const char *token; /* borrowed secret; NULL = none */
    size_t token_len;
    uint64_t connect_timeout_ms;
    uint64_t connect_retry_ms;  /* a refused control connection tried again for this long (3 s) */
    int no_counters;            /* 1: no counters on either end (agent/counters.h) */
    int no_path_mtu;            /* 1: no path-MTU probe (client_pmtu.c) */
    const char *counters_netns; /* borrowed; the namespace our counters are read in (NULL: ours) */
    /* tests (1u << wire id) whose samples carry the kernel's CPU profile (agent/kprof.h,
     * --profile); TCP_RR_LOADED is never profiled */
    uint32_t profile_tests;
};

/* Fills o with the CLI defaults (port TESTKIND_DEFAULT_PORT, 10 s, 1 sample, 4 streams, 1 Gbit/s, 5
 * s). */
void client_opts_default(struct client_opts *o);

/* Runs every test and sample. Returns the document (new reference, caller decrefs) and sets
 * *failed to the number of test samples that failed (listed in its errors[]). */
json_t *client_run(const struct client_opts *o, unsigned *failed);

#endif
