/* SPDX-License-Identifier: Apache-2.0 */
/* probe.h - `kperf-agent probe`: low-rate probes against a kperf-agent server, for hours if
 * need be, to see what a disruption (a CNI upgrade, a link flap) does to live traffic
 * (docs/watch.md). Three kinds, each on its own thread and each accounted by probe_track.h:
 *   udp      UDP request/response (a UDP_RR session; datagrams carry our sequence number)
 *   tcp      TCP request/response on ONE long-lived connection (a TCP_RR session), re-opened
 *            when reset (counting resets and the time to reconnect)
 *   connect  a fresh TCP connect every connect_every_ms (answered = connected in time)
 * The UDP session is renewed every PROTO_CTRL_KEEPIDLE_S / 2, so the client, not the server's
 * keepalive, speaks first on its idle control connection (after a conntrack flush the first
 * packet decides the NAT state). Slots the probe thread was too late to send are skipped, not
 * lost; answers are timed by the kernel's receive timestamp (docs/watch.md).
 * Runs until the duration passes or *stop becomes non-zero; returns one JSON document.
 * Memory is bounded (no per-probe records); the server is an unchanged kperf-agent server. */
#ifndef KPERF_AGENT_PROBE_H
#define KPERF_AGENT_PROBE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/kp_err.h"

#define PROBE_SCHEMA "kperf.probe/v1"

struct probe_opts {
    const char *host; /* borrowed */
    uint16_t port;
    const char *token; /* borrowed secret; NULL = none */
    size_t token_len;
    unsigned rate;               /* udp and tcp probes per second (100) */
    uint64_t connect_every_ms;   /* a fresh connect this often (100) */
    uint64_t timeout_ms;         /* an answer later than this is a loss (200) */
    uint64_t interval_ms;        /* a loss run longer than this is an outage (100) */
    uint64_t duration_ms;        /* 0 = until *stop */
    uint64_t session_ms;         /* re-open server sessions this often (server's cap: 10 min) */
    uint64_t connect_timeout_ms; /* connect and handshake of a session (1000) */
    bool udp, tcp, connect;      /* which kinds run (all) */
    uint64_t status_ms;          /* 0 = none; else a status line on stderr this often */
    /* optional: called once the first sessions are open and the probes run */
    void (*on_ready)(void *arg);
    void *ready_arg;
};

void probe_opts_default(struct probe_opts *o);

/* Runs the probes. Returns the kperf.probe/v1 document (new reference), or NULL with err when
 * they could not start (bad address, the first session refused: wrong token, no server). */
json_t *probe_run(const struct probe_opts *o, volatile sig_atomic_t *stop, struct kp_err *err);

#endif
