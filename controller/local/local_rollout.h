/* SPDX-License-Identifier: Apache-2.0 */
/* local_rollout.h - the `rollout` fault of local_fault.h played on the local cluster (issue 13):
 * what a CNI DaemonSet rollout does to each node's pods, node1 then node2, as kube-sim does it
 * (test/kube-sim/kubesim/cni.py): after GAP, the node's pod traffic is dropped for DOWN (an
 * nftables bridge table `kperf_rollout` in the node's namespace drops IPv4 and IPv6 frames
 * entering the pod bridge from a pod veth and leaving it to one; ARP passes, so neighbours stay
 * resolved), and with flush its conntrack table is flushed as the drop starts. Runs in a thread
 * of its own from local_rollout_start (the end of prepare) until done or stopped. Each node's
 * outage is logged as a warning: "rollout: node1: pod traffic dropped for 2.003 s from
 * <unix s> (conntrack flushed)". */
#ifndef KPERF_LOCAL_LOCAL_ROLLOUT_H
#define KPERF_LOCAL_LOCAL_ROLLOUT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/kp_err.h"

struct localnet;
struct local_rollout; /* opaque */

/* Starts the rollout on ln (borrowed until local_rollout_stop). Returns it or NULL with err. */
struct local_rollout *local_rollout_start(struct localnet *ln, uint64_t down_ms, uint64_t gap_ms,
                                          bool flush, struct kp_err *err);

/* Stops the rollout (a drop in place is removed), waits for its thread and frees it. NULL is a
 * no-op. */
void local_rollout_stop(struct local_rollout *r);

#endif
