/* SPDX-License-Identifier: Apache-2.0 */
/* local_netpol.h - the run's NetworkPolicy in the local cluster (kperf run --local
 * --netpol-rules, controller/plan.h): what a CNI that enforces policy with netfilter rules
 * (Calico's iptables or nftables data plane, kube-router) puts on each node for a policy of N
 * rules selecting the server pods. An nftables `inet` table `kperf_netpol` in each node's
 * namespace: the forward hook sends every packet addressed to a server pod (the same-node
 * paths are routed through the node too: localnet.h) into a chain that accepts established
 * flows first, then tries N - 1 rules that match nothing kperf sends (sources in TEST-NET-1
 * 192.0.2.0/24 and 2001:db8::/32, each with a port of its own), then the one rule that admits
 * kperf's own clients (the client pod and both nodes, both families), and drops the rest of
 * TCP and UDP. So the first packet of every flow pays for all N rules, as with those data
 * planes. Its counters (packets to the servers, new flows that met the rules, packets dropped)
 * are read back when it is replaced or removed and logged, so a run shows that its traffic crossed
 * the policy and that nothing of kperf's was denied. Knows nothing of plans or reports. */
#ifndef KPERF_LOCAL_LOCAL_NETPOL_H
#define KPERF_LOCAL_LOCAL_NETPOL_H

#include <stddef.h>

#include "base/kp_err.h"

struct localnet;

/* The ruleset text for a policy of rules (>= 1) rules admitting the addresses of
 * allow (n_allow of them, IPv4 or IPv6 text) towards servers (n_servers); caller frees. */
char *local_netpol_text(unsigned rules, const char *const *servers, size_t n_servers,
                        const char *const *allow, size_t n_allow);

/* Puts a policy of rules rules in place on both nodes (0: removes it), after reading and
 * logging the counters of the one before. Returns 0 or -1 with err. */
KP_MUST_CHECK int local_netpol_apply(struct localnet *ln, unsigned rules, struct kp_err *err);

#endif
