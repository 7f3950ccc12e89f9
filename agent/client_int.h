/* SPDX-License-Identifier: Apache-2.0 */
/* client_int.h - state shared by client.c (control connection, timing, one sample),
 * client_loops.c (the worker threads) and client_json.c (the result object). Private. */
#ifndef KPERF_AGENT_CLIENT_INT_H
#define KPERF_AGENT_CLIENT_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include "agent/client.h"
#include "agent/proto.h"
#include "agent/sysinfo.h"
#include "base/hist.h"
#include "base/kp_err.h"

#define CLIENT_MAX_INTERVALS 3600

struct worker {
    pthread_t thread;
    struct sample *smp;
    int fd;
    unsigned index;
    _Atomic uint64_t ops;   /* transactions completed (RR, CRR) */
    _Atomic uint64_t bytes; /* payload bytes sent (forward) or received (reverse) */
    uint64_t ops_mark, bytes_mark;
    uint64_t last_rx_ns; /* receivers: when the last byte arrived */
    struct hist *hist;   /* ours; latencies after the warm-up */
    /* UDP */
    uint64_t udp_sent, udp_received, udp_ooo, udp_max_seq_plus1;
    double jitter_ns;
    int64_t last_transit;
    int have_transit;
    struct sysinfo_tcp tcp;
    /* the thread's CPU (thread_cpu.h): the CPU a stream loop last ran on (-1 unknown), the
     * thread's CPU time at its end (set before it returns) and at the warm-up mark */
    atomic_int cpu;
    uint64_t cpu_ns, cpu_mark_ns;
    int running;   /* the thread was created (the main thread's view) */
    char err[256]; /* set by the thread on failure */
};

struct interval {
    double start_s, end_s;
    uint64_t bytes, ops;
};

struct sample {
    const struct client_opts *o;
    struct sockaddr_storage addr; /* the server */
    socklen_t addr_len;
    struct proto_test_req req;
    uint64_t session;
    int ctrl;
    int reverse;
    unsigned nworkers;
    struct worker *workers; /* ours */
    uint64_t t_start_ns, t_mark_ns, t_end_ns;
    _Atomic uint64_t t_deadline_ns; /* workers stop here; 0 stops them early */
    /* reverse UDP_STREAM: datagrams the server sent, and when to stop waiting for them */
    _Atomic uint64_t udp_expect, udp_grace_end_ns;
    uint64_t cpu_user0, cpu_sys0, cpu_user1, cpu_sys1;
    uint64_t node0[SYSINFO_CPU_FIELDS], node1[SYSINFO_CPU_FIELDS];
    uint64_t rcvbuf0, rcvbuf1;
    uint32_t mtu;
    struct proto_result server; /* from RESULT */
    struct interval *intervals; /* ours */
    unsigned nintervals;
    char start_time[32];
    json_t *facts; /* FACTS, when the request asked for it (owned) */
};

/* client_loops.c: the thread body for the sample's test. */
void *client_worker_main(void *arg);
/* Connects a TCP socket to the server within timeout_ms. Returns the fd or -1 with err. */
KP_MUST_CHECK int client_connect(const struct sample *s, uint64_t timeout_ms, struct kp_err *err);
/* Writes / reads exactly len bytes on a blocking socket. 0, or -1 with errno. */
KP_MUST_CHECK int client_write_all(int fd, const void *buf, size_t len);
KP_MUST_CHECK int client_read_all(int fd, void *buf, size_t len);

/* client_json.c: the result object of one finished sample (new reference). */
json_t *client_sample_json(const struct sample *s, unsigned index);
/* client_json.c: FACTS text as the document's "server_facts": a JSON object (duplicate keys
 * refused), else NULL. New reference. */
json_t *client_facts_parse(const char *text);

#endif
