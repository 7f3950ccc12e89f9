/* SPDX-License-Identifier: Apache-2.0 */
/* testops.h - what each test kind does, on both sides, as one table of function pointers per
 * kind (iperf3's `struct protocol` is the model): the client's data connections and worker
 * loop, the server's handling of data connections, datagrams, START and STOP. The client and
 * the server look their test's entry up once (a sample's and a session's `ops`) and call
 * through it instead of switching on the kind. The vocabulary (names, wire ids, latency or
 * stream, TCP or UDP) stays base/testkind.h's; the functions stay in the files that own the
 * state they touch (client_*.c, session*.c). Private to the agent. */
#ifndef KPERF_AGENT_TESTOPS_H
#define KPERF_AGENT_TESTOPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/kp_err.h"
#include "base/testkind.h"

struct conn;    /* server_int.h */
struct session; /* server_int.h */
struct sample;  /* client_int.h */
struct worker;  /* client_int.h */

struct test_ops {
    enum test_kind kind; /* its vocabulary entry: testkind_get(kind) */

    /* --- client (client.c, client_loops.c) --- */
    uint32_t default_msg_size; /* request or write size when --msg-size is not given */
    /* Opens worker w's data connection or socket before START; NULL: none before START (a
     * TCP_CRR worker connects per transaction). 0, or -1 with err. */
    int (*client_open)(struct sample *s, struct worker *w, struct kp_err *err);
    /* The worker thread's loop, forward and (reversible kinds) reverse; buf is the thread's
     * buffer. NULL: the kind has no loop of its own (TCP_RR_LOADED runs two samples). */
    void (*client_loop)(struct worker *w, uint8_t *buf);
    void (*client_loop_reverse)(struct worker *w, uint8_t *buf);

    /* --- server (session.c, session_tcp.c, session_udp.c) --- */
    /* A data connection (DATA_HELLO) joins s as stream; NULL: the kind takes none (UDP).
     * 0, or -1 when it does not fit (c is then dropped). */
    int (*attach)(struct session *s, struct conn *c, uint16_t stream);
    /* Bytes on a data connection, already counted in rx_bytes; NULL: counting is all. */
    void (*data)(struct conn *c, const uint8_t *buf, size_t len);
    /* EOF on a data connection; NULL: the connection just closes. */
    void (*data_eof)(struct conn *c);
    /* START, before STARTED lets the client send. 0, or -1 with err (the session ends with
     * it); NULL: nothing to do. */
    int (*start)(struct session *s, struct kp_err *err);
    /* START, after STARTED went out (senders begin here); may end s. NULL: nothing. */
    void (*started)(struct session *s);
    /* STOP arrived (s->t_end_ns set): report now, or wait for data still in flight and
     * report then. NULL: report now. */
    void (*stop)(struct session *s);
    /* A datagram of s (id matched) with its sequence number and timestamp; NULL: the kind
     * uses no UDP and the datagram is dropped. */
    void (*udp)(struct session *s, const uint8_t *buf, size_t len, const struct sockaddr *from,
                uint64_t seq, uint64_t ts_ns);
};

/* The entry of a protocol test number (PROTO_TCP_RR..); NULL for an unknown one. Static. */
const struct test_ops *testops_get(unsigned wire);

#endif
