/* SPDX-License-Identifier: Apache-2.0 */
/* backend_local.h - the `--local` backend: a two-node cluster of network namespaces on this
 * machine (localnet.h) with kperf-agent servers and clients as real processes.
 * Owns the agents' processes, the per-run token and the mapping of scenarios to namespaces
 * and addresses; leaves the topology to localnet and the order of things to the runner.
 *
 * Where each scenario runs (client -> server):
 *   pod-to-pod      same-node  client pod (node 1) -> server pod on node 1
 *                   other-node client pod (node 1) -> server pod on node 2
 *   host-to-host    same-node  node 1 -> node 1 (host network: the node namespace)
 *                   other-node node 1 -> node 2, across the underlay
 *   pod-to-service  same-node  client pod -> 198.18.3.10 (DNAT to the server pod on node 1)
 *                   other-node client pod -> 198.18.3.11 (DNAT to the server pod on node 2)
 *   pod-to-external external   client pod -> external host 198.18.4.2, SNAT at node 1;
 *                              reverse groups add the agent's --reverse (the host sends).
 * The agent binary is $KPERF_AGENT, or kperf-agent next to the running kperf. */
#ifndef KPERF_LOCAL_BACKEND_LOCAL_H
#define KPERF_LOCAL_BACKEND_LOCAL_H

#include "controller/backend.h"

#include <sys/types.h>

#include "base/kp_err.h"

struct kp_err;
struct run_options;

/* A local backend for opts (mtu, timeout; borrowed only during the call). Creates nothing
 * yet. Returns a backend (free with b->ops->destroy after cleanup) or NULL with err. */
struct backend *backend_local_new(const struct run_options *opts, struct kp_err *err);

/* For `kperf watch --local`, after prepare (b must be a local backend): starts
 * `kperf-agent probe --server <g's target> --token-file <the run's token> args...` in g's
 * client namespace, stdout and stderr appended to log_path. Returns 0 with *pid (stop it with
 * subproc_stop) or -1 with err (no such placement, its server not running). */
KP_MUST_CHECK int backend_local_spawn_probe(struct backend *b, const struct plan_group *g,
                                            const char *const *args, const char *log_path,
                                            pid_t *pid, struct kp_err *err);

/* The run's 0700 directory (token, agent logs), valid after prepare until destroy. */
const char *backend_local_run_dir(struct backend *b);

/* NULL-terminated "NAME=value" entries naming the run for a command run beside it:
 * KPERF_LOCAL_RUN_ID, KPERF_LOCAL_NS_UNDERLAY (links node1, node2, ext), KPERF_LOCAL_NS_NODE1,
 * KPERF_LOCAL_NS_NODE2, KPERF_LOCAL_NS_EXTERNAL. Caller frees each entry and the array. */
char **backend_local_env(struct backend *b);

#endif
