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
 * `kperf watch --local` runs a probe agent per path in the path's client namespace (the
 * backend's probe operations, backend.h); its document and log are the run directory's
 * probe-N.{json,log}, removed with the cluster.
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

#endif
