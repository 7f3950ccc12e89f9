/* SPDX-License-Identifier: Apache-2.0 */
/* agent_flags.h - the flag tables of `kperf-agent server`, `client` and `probe` (base/flags.h)
 * and the structs they fill. A numeric flag is one row: its target (field offset and size), its
 * unit, its minimum and maximum and which message a bad value gets; flags that are more than a
 * number (--server, --tests, --kinds, --token-file, ...) keep a small handler each. Owns parsing
 * only; main.c runs the commands and prints. */
#ifndef KPERF_CMD_AGENT_FLAGS_H
#define KPERF_CMD_AGENT_FLAGS_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/client.h"
#include "agent/probe.h"
#include "agent/server.h"
#include "base/flags.h"

enum { G_SERVER, G_CLIENT, G_PROBE }; /* the flag groups of --help */

struct server_cli {
    struct server_opts o;
    char *token; /* ours: kp_free_secret */
};

struct client_cli {
    struct client_opts o;
    char *host;  /* ours */
    char *token; /* ours: kp_free_secret */
    int have_server;
    bool json; /* --json: the document, not the table */
};

struct probe_cli {
    struct probe_opts o;
    const char *output;    /* --output FILE; NULL = stdout */
    struct client_cli srv; /* --server and --token-file, parsed as the client's */
};

/* The tables (static) and their lengths. */
extern const struct flag agent_server_flags[];
extern const size_t agent_server_nflags;
extern const struct flag agent_client_flags[];
extern const size_t agent_client_nflags;
extern const struct flag agent_probe_flags[];
extern const size_t agent_probe_nflags;

/* The log level -v asked for (KP_LOG_WARN plus one per -v, at most KP_LOG_TRACE). */
int agent_flags_verbosity(void);

#endif
