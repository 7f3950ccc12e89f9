/* SPDX-License-Identifier: Apache-2.0 */
/* agent_args.h - the kperf-agent command lines both backends run: `kperf-agent client` for a
 * run_spec and `kperf-agent server`. Owns the flag names, their order, the defaults passed
 * explicitly and how a server address is written (host:port, IPv6 literals in brackets).
 * Also the check that an agent document answers the command line (agent_args_check_doc).
 * Knows nothing of where the agent runs: the backend says which binary (or none: a container's
 * args), what to put before it (ip netns exec NS), which host and port, which token file.
 *
 * Client argv, in this order (optional flags only when their run_spec field is non-zero):
 *   [prefix...] [agent] client --server HOST:PORT --tests T1,T2 --duration Nms --samples N
 *   --streams N [--omit Nms] [--interval Nms] [--msg-size N] [--udp-rate N] [--reverse]
 *   [--token-file F] [--server-facts] --json
 * --server-facts for pod-to-external only: the external agent's host facts for the report.
 * --samples and --streams are always passed (samples <= 0 -> 1, streams <= 0 -> 4: the agent's
 * own defaults), so a command line read from a log or a manifest says what was measured.
 *
 * Server argv: [prefix...] [agent] server --port N [--bind ADDR] [--token-file F] [--max-rate N]
 * --max-rate only when the run's --udp-rate is above the server's own default cap, so the
 * server accepts what the run asks for and keeps its default cap otherwise. */
#ifndef KPERF_CONTROLLER_AGENT_ARGS_H
#define KPERF_CONTROLLER_AGENT_ARGS_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/backend.h"

#define AGENT_ARGS_DEFAULT_SAMPLES 1 /* kperf-agent client's own defaults */
#define AGENT_ARGS_DEFAULT_STREAMS 4
/* kperf-agent server's default --max-rate (agent/server.h SERVER_DEFAULT_MAX_RATE_BPS; the
 * controller may not include agent/, so the value is repeated here and the two must agree). */
#define AGENT_ARGS_SERVER_MAX_RATE_BPS (10ull * 1000 * 1000 * 1000)

/* What differs between backends. Strings borrowed for the duration of each call. */
struct agent_args_opts {
    const char *const *prefix;  /* NULL-terminated words before the binary (e.g. "ip", "netns",
                                 * "exec", NS), or NULL for none */
    const char *agent;          /* path of kperf-agent, or NULL: argv starts at the subcommand
                                 * (a container's args, the image's command is the binary) */
    const char *host;           /* client: the server to dial (name, IPv4, IPv6 or [IPv6]);
                                 * server: the --bind address, or NULL to omit --bind */
    int port;                   /* client: the server's port; server: --port */
    const char *token_file;     /* --token-file, or NULL to omit it */
    uint64_t udp_rate_bps;      /* server: the run's --udp-rate (0 = default), for --max-rate */
    uint64_t max_idle_ms;       /* server: --max-idle (0 = omit: listen until stopped) */
    const char *counters_netns; /* --counters-netns (the node's namespace), or NULL to omit it */
};

/* The argv of `kperf-agent client` for spec (spec->group may be NULL: no --reverse). New
 * NULL-terminated array of new strings; caller frees with agent_args_free. o->host must not be
 * NULL. */
char **agent_args_client(const struct run_spec *spec, const struct agent_args_opts *o);

/* The argv of `kperf-agent server`. Caller frees with agent_args_free. */
char **agent_args_server(const struct agent_args_opts *o);

/* Checks that an agent document (kperf.result/v1, already validated) answers the client run of
 * spec against port (<= 0: not checked): params.tests in the same order, params.reverse and
 * every result's direction, samples and streams as passed on the command line, duration and
 * omit, the message size when spec sets one, server.port. A document of another run step (a
 * log read from the wrong pod) is refused. Returns 0, or -1 with err saying what differs. */
KP_MUST_CHECK int agent_args_check_doc(const struct run_spec *spec, int port, const json_t *doc,
                                       struct kp_err *err);

void agent_args_free(char **argv); /* frees the strings and the array; NULL is a no-op */

/* "host:port" for --server: an IPv6 literal (any ':' in host) in brackets ("[2001:2::5]:5201"),
 * a name or IPv4 address as is, an already bracketed host not bracketed again. Caller frees
 * with free(). */
char *agent_args_host_port(const char *host, int port);

#endif
