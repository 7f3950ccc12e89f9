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
#include "agent/counters.h"
#include "agent/kprof.h"
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
    uint64_t conn_errors;   /* TCP_CRR with --parallel: connects that failed after the mark */
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
    unsigned cpu_share; /* streams sharing the thread (client_mux.c): cpu_ns is divided by it */
    int running;        /* the thread was created (the main thread's view) */
    char err[256];      /* set by the thread on failure */
};

struct interval {
    double start_s, end_s;
    uint64_t bytes, ops;
};

struct load_gate; /* client_loaded.c */

struct test_ops;

struct sample {
    const struct client_opts *o;
    const struct test_ops *ops; /* its test's (testops.h), looked up once in set-up */
    /* TCP_RR_LOADED (client_loaded.c): the gate both halves pass after set-up (NULL for a
     * plain test), whether this is the stream half, and, in the latency half, the stream
     * half whose figures go into its result as load{} (borrowed) */
    struct load_gate *gate;
    int is_load;
    const struct sample *load;
    struct sockaddr_storage addr; /* the server */
    socklen_t addr_len;
    struct proto_test_req req;
    uint64_t session;
    int ctrl;
    int reverse;
    int same_kernel; /* the server's kernel tag matched ours (CHALLENGE) */
    /* what placement counted: the CPUs we may use, and our cgroup's CPU quota (0 = none) */
    unsigned cpus, cpu_quota_millis;
    unsigned nworkers;
    struct worker *workers; /* ours */
    /* TCP stream tests on the multiplexed engine (client_mux.c): its threads, worker t runs
     * the loop of workers t, t + nthreads, ...; 0 = a thread per worker (client_loops.c) */
    unsigned nthreads;
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
    double connected_unix_s;           /* CLOCK_REALTIME when the control connection was answered */
    json_t *facts;                     /* FACTS, when the request asked for it (owned) */
    struct counters_snap *cnt0, *cnt1; /* ours: our counters at the mark and the end, or NULL */
    json_t *server_counters;           /* COUNTERS, when the request asked for it (owned) */
    struct kprof *prof;                /* the kernel's profile of the window (--profile), or NULL */
    char prof_error[KP_ERR_MAX];       /* why there is none, when it was asked for */
};

/* client.c: one sample, from set-up to RESULT (0, or -1 with err); its resources stay for
 * client_sample_json and client_sample_cleanup. */
KP_MUST_CHECK int client_run_sample(struct sample *s, struct kp_err *err);
void client_sample_cleanup(struct sample *s);
/* The TEST_REQ of one test (wire id) from the options. */
void client_build_req(const struct client_opts *o, uint8_t test, struct proto_test_req *r);

/* client_loaded.c: the gate of a TCP_RR_LOADED pair. After set-up each half arrives with
 * whether its set-up worked; load_gate_arrive returns 1 once both did, 0 (at once) when
 * either failed. The latency half then waits in load_gate_wait_load until the stream half
 * has started its streams (1) or failed (0); the stream half reports that once with
 * load_gate_load_started (later calls are no-ops, so its exit path can always report 0). */
int load_gate_arrive(struct load_gate *g, int ok);
int load_gate_wait_load(struct load_gate *g);
void load_gate_load_started(struct load_gate *g, int ok);
/* Runs sample i of TCP_RR_LOADED: a TCP_RR and a TCP_STREAM_MULTI sample at once, the stream
 * started first. Returns 0 with the result object in *out (new reference), or -1 with err. */
KP_MUST_CHECK int client_run_loaded(const struct client_opts *o, const struct sample *base,
                                    unsigned index, json_t **out, struct kp_err *err);

/* client.c: the data connection or socket of worker w, opened before START (the test's
 * ops->client_open). 0, or -1 with err. */
KP_MUST_CHECK int client_open_tcp(struct sample *s, struct worker *w, struct kp_err *err);
KP_MUST_CHECK int client_open_udp(struct sample *s, struct worker *w, struct kp_err *err);

/* client_loops.c: the worker loops (a test's ops->client_loop and client_loop_reverse); each
 * runs until the sample's deadline, buf is the thread's buffer. */
void client_loop_tcp_rr(struct worker *w, uint8_t *buf);
void client_loop_tcp_crr(struct worker *w, uint8_t *buf);
void client_loop_stream_send(struct worker *w, uint8_t *buf);
void client_loop_stream_recv(struct worker *w, uint8_t *buf);
void client_loop_udp_rr(struct worker *w, uint8_t *buf);
void client_loop_udp_send(struct worker *w, uint8_t *buf);
void client_loop_udp_recv(struct worker *w, uint8_t *buf);

/* client_mux.c: the thread body of worker t < nthreads of a multiplexed stream test. */
void *client_mux_main(void *arg);
/* client_loops.c: the thread body for the sample's test (its ops' loop). */
void *client_worker_main(void *arg);
/* Connects a TCP socket to the server within timeout_ms. Returns the fd or -1 with err. */
KP_MUST_CHECK int client_connect(const struct sample *s, uint64_t timeout_ms, struct kp_err *err);
/* The control connection of a sample: client_connect, with a refusal tried again every 100 ms
 * for up to the client's connect_retry_ms (--connect-retry, default CLIENT_REFUSED_RETRY_MS).
 * A Service's address is refused on a node whose proxy has not yet programmed its endpoints
 * (kube-proxy syncs at most once a second, its minSyncPeriod), so a client started right after
 * its server became ready can meet a refusal that a moment later is gone; a server that is
 * really not there is reported as before, that much later. */
#define CLIENT_REFUSED_RETRY_MS 3000
KP_MUST_CHECK int client_connect_ctrl(const struct sample *s, struct kp_err *err);
/* Writes / reads exactly len bytes on a blocking socket. 0, or -1 with errno. */
KP_MUST_CHECK int client_write_all(int fd, const void *buf, size_t len);
KP_MUST_CHECK int client_read_all(int fd, void *buf, size_t len);

/* client_json.c: the result object of one finished sample (new reference); with s->load set,
 * a TCP_RR_LOADED result with load{} (client_load_json, in client_loaded.c). */
json_t *client_sample_json(const struct sample *s, unsigned index);
json_t *client_load_json(const struct sample *ld);
/* client_json.c: FACTS text as the document's "server_facts": a JSON object (duplicate keys
 * refused), else NULL. New reference. */
json_t *client_facts_parse(const char *text);

/* client_counters.c: our counters into *snap (allocated on first use) when the sample asks for
 * them; best effort, as node CPU: a snapshot that cannot be read leaves *snap NULL. */
void client_counters_snapshot(struct sample *s, struct counters_snap **snap);
/* The sample's "counters": {"client": our deltas, "server": the server's COUNTERS}; a side
 * that has none is absent. New reference. */
json_t *client_counters_json(const struct sample *s);
/* The kernel profile of the window into s->prof when --profile names the sample's test (the
 * reason in s->prof_error when it cannot start). */
void client_profile_start(struct sample *s);
/* Frees the sample's counter snapshots and profile. */
void client_counters_cleanup(struct sample *s);

/* client.c: one session of s->req (set up as a sample is) whose only traffic is fn(s, arg) on
 * the calling thread, in place of the worker threads, then STOP (with workers[0]'s bytes and
 * datagrams) and RESULT into s->server. 0, or -1 with err; the caller cleans s up
 * (client_sample_cleanup). The path-MTU probe's sessions (client_pmtu.c). */
KP_MUST_CHECK int client_run_inline(struct sample *s, void (*fn)(struct sample *s, void *arg),
                                    void *arg, struct kp_err *err);
/* client_json.c: the document's frame (schema, agent, server, params; empty mtu, results and
 * errors). New reference. */
json_t *client_doc_new(const struct client_opts *o);
/* client_pmtu.c: the document's "mtu" from the first answered sample: each end's interface
 * MTU, then (unless --no-path-mtu) the path-MTU probe's path, icmp, tcp_full_mss, verdict and
 * probe_ms. A probe that cannot run leaves those out (logged). */
void client_pmtu_note(json_t *doc, const struct sample *first);

#endif
