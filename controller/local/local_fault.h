/* SPDX-License-Identifier: Apache-2.0 */
/* local_fault.h - test-only faults injected into the local cluster (`kperf run --local
 * --local-fault SPEC`), so that a known regression can be measured and `kperf compare` be
 * shown to catch it. Owns the SPEC syntax, the table of fault kinds and the commands that put
 * a fault in place; knows nothing of agents or reports. A fault lives only in the run's own
 * namespaces and links (localnet.h), so removing them (localnet_destroy) removes it.
 *
 * SPEC is KIND:KEY=VALUE,...:
 *   mtu:link=L,mtu=BYTES       lower (or raise) the MTU of both ends of link L
 *   mtu-hop:link=L,mtu=BYTES   lower the MTU of L's far end only (its port on the underlay
 *                              or node bridge) and drop ICMP "fragmentation needed" and
 *                              "packet too big" in that namespace: a path-MTU black hole
 *   rate:link=L,rate=RATE      token bucket (tc tbf) on both ends of L: each direction capped
 *   loss:link=L,pct=N          drop N% (1..99) of the packets in each direction of L
 *                              (nftables `numgen random` at both ends' ingress; no netem needed)
 *   delay:link=L,ms=N          tc netem delay at both ends (refused when the kernel has no netem)
 *   cpu:node=NODE,rules=N      N never-matching nftables rules on NODE's forward, input and
 *                              output paths: CPU per packet, no drop and no cap by itself
 *   conntrack-max:node=NODE,max=N
 *                              NODE forwards at most N tracked connections at once: nftables
 *                              `ct count over N` refuses the next with ICMP admin-prohibited
 *                              (nf_conntrack_max is read-only outside the first namespace)
 *   cni-add-delay:node=NODE,delay=DUR
 *                              the network set-up of every new pod on NODE (the short-lived
 *                              readiness pods of `kperf run --local`; the run's own pods are
 *                              built before) waits DUR (1ms..60s) first, as a slow CNI ADD
 *   rollout:down=DUR,gap=DUR[,flush=0|1]
 *                              a CNI DaemonSet rollout, node1 then node2: GAP after the agents
 *                              start (then GAP after the previous node's outage), the node's
 *                              pod traffic is dropped for DOWN (100ms..10m each), and with
 *                              flush=1 its conntrack table flushed as the drop starts
 *                              (local_rollout.h plays it)
 * Links (veth pairs of localnet_build.c): node1, node2 (a node's eth0 to the underlay bridge),
 * ext (the external host's), client, server1, server2 (a pod's eth0 to its node's bridge).
 * Nodes: node1, node2. A new kind is one row of the table in local_fault.c. */
#ifndef KPERF_LOCAL_LOCAL_FAULT_H
#define KPERF_LOCAL_LOCAL_FAULT_H

#include "base/kp_err.h"
#include "controller/local/localnet.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct kp_err;
struct localnet;
struct local_fault; /* opaque */

/* Parses SPEC. Returns a fault (free with local_fault_free) or NULL with a one-line err that
 * names the bad part and what is accepted. */
struct local_fault *local_fault_parse(const char *spec, struct kp_err *err);
void local_fault_free(struct local_fault *f); /* NULL is a no-op */

/* The SPEC as given (borrowed until local_fault_free). */
const char *local_fault_spec(const struct local_fault *f);

/* True when f is a rollout, with its timing. */
bool local_fault_rollout(const struct local_fault *f, uint64_t *down_ms, uint64_t *gap_ms,
                         bool *flush);

/* What f adds to the network set-up of a new pod on node (LN_NODE1 or LN_NODE2): the delay of
 * a cni-add-delay on that node, else 0. */
/* True when f acts on kperf's own pod links (client, server1, server2, the rollout's cni0
 * table), which --cni-conf replaces with the plugins'. */
bool local_fault_on_pod_links(const struct local_fault *f);

uint64_t local_fault_pod_delay_ms(const struct local_fault *f, enum localnet_ns node);

/* Puts f in place in the built cluster ln (after localnet_create). index makes its nftables
 * table names unique among the run's faults. Returns 0 or -1 with err. */
KP_MUST_CHECK int local_fault_apply(const struct local_fault *f, int index, struct localnet *ln,
                                    struct kp_err *err);

#endif
