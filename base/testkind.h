/* SPDX-License-Identifier: Apache-2.0 */
/* testkind.h - the one vocabulary of test kinds: for each test its name (as flags, agent
 * documents and reports spell it), its place in the canonical report order, its wire id (the
 * test number of the agent protocol, docs/protocol.md) and what it is: latency or stream,
 * TCP or UDP, reversible, multi-stream, one connection per transaction, run under load. The wire
 * protocol (agent/proto.c), the plan (controller/plan.c), the agent result schema (base/result.c)
 * and the report ask here; nobody else lists test names. Knows nothing of sockets, plans or JSON.
 *
 *   name              order  wire  class    proto  reversible  multi-stream  conn per txn  loaded
 *   TCP_RR              0     1    latency  TCP
 *   TCP_CRR             1     2    latency  TCP                               yes
 *   UDP_RR              2     5    latency  UDP
 *   TCP_RR_LOADED       3     7    latency  TCP                                             yes
 *   TCP_STREAM          4     3    stream   TCP    yes
 *   TCP_STREAM_MULTI    5     4    stream   TCP    yes         yes
 *   UDP_STREAM          6     6    stream   UDP    yes
 *
 * The wire ids are the protocol: they never change (agent/proto.h names them PROTO_TCP_RR..).
 * TCP_RR_LOADED ("latency under load") is a client-side composite: the client runs a TCP_RR
 * session and a TCP_STREAM_MULTI session to the same server at the same time and reports the
 * request/response latency with the stream's throughput beside it. Its wire id names it on the
 * agent's command line and in its documents only; a server refuses it in TEST_REQ. It is not
 * part of "all" (TEST_ALL_MASK): filling the path is asked for (--under-load), never implied. */
#ifndef KPERF_BASE_TESTKIND_H
#define KPERF_BASE_TESTKIND_H

#include <stdbool.h>
#include <stdint.h>

/* The agent server's TCP and UDP port unless --port says otherwise: the protocol's one default,
 * for the agent's server, client and probe, the controller's --port and --external-port and
 * the local backend's netns agents. _TEXT is the same number as text, for help strings. */
#define TESTKIND_DEFAULT_PORT      5201
#define TESTKIND_STR_(x)           #x
#define TESTKIND_STR(x)            TESTKIND_STR_(x)
#define TESTKIND_DEFAULT_PORT_TEXT TESTKIND_STR(TESTKIND_DEFAULT_PORT)

/* Canonical (report) order: latency tests first, then throughput tests. Also the bit index of
 * a test in masks ((1u << TEST_x)). */
enum test_kind {
    TEST_TCP_RR = 0,
    TEST_TCP_CRR,
    TEST_UDP_RR,
    TEST_TCP_RR_LOADED,
    TEST_TCP_STREAM,
    TEST_TCP_STREAM_MULTI,
    TEST_UDP_STREAM,
    TEST_COUNT,
};

/* One test. Entries are static: pointers to them stay valid for the program's life. */
struct testkind {
    const char *name;    /* "TCP_RR" */
    enum test_kind kind; /* its canonical order index */
    uint8_t wire;        /* protocol test number (1..); never 0 */
    bool latency;        /* request/response: ops, latency, histogram; false: a stream test
                          * (bytes, throughput) */
    bool udp;            /* false: TCP */
    bool reversible;     /* the server may send instead (--reverse; pod-to-external both ways) */
    bool multi_stream;   /* takes --streams N > 1 connections */
    bool conn_per_txn;   /* a new connection per transaction (TCP_CRR): no connection outlives
                          * the test, so there are no TCP_INFO facts (tcp{}) to report */
    bool loaded;         /* a latency test run while a TCP_STREAM_MULTI fills the same path
                          * (client-side composite; results carry load{}) */
};

/* The entry of a test kind; NULL when k is out of range. Borrowed (static). */
const struct testkind *testkind_get(enum test_kind k);

/* The entry of a name; exact match ("TCP_RR", as the protocol and documents spell it). NULL
 * for an unknown name or NULL. Borrowed (static). */
const struct testkind *testkind_by_name(const char *name);

/* testkind_by_name ignoring case ("tcp_rr"), for command-line flags. */
const struct testkind *testkind_by_name_icase(const char *name);

/* The entry of a protocol test number; NULL for an unknown one (0, 7, ...). Borrowed. */
const struct testkind *testkind_by_wire(unsigned wire);

/* The name of a test kind (static string); "?" when k is out of range. */
const char *testkind_name(enum test_kind k);

#endif
