/* SPDX-License-Identifier: Apache-2.0 */
/* nicinfo.h - the network facts of the node an agent runs on, for report provenance: per
 * interface (driver and version, link speed, MTU, queue counts, GRO/GSO/TSO) from the ethtool
 * ioctls (SIOCETHTOOL) and /sys/class/net, and the sysctls that shape TCP (congestion control,
 * rmem/wmem maxima, nf_conntrack_max) from /proc/sys. Reads the network namespace the process
 * runs in: a host-network agent sees the node's NICs, a pod sees its veth (whose driver reports
 * no speed; absent facts are omitted, never guessed). Knows nothing of the protocol. */
#ifndef KPERF_AGENT_NICINFO_H
#define KPERF_AGENT_NICINFO_H

#include <jansson.h>

/* {"nics": [{"name", "driver", "driver_version", "bus", "speed_mbps", "mtu", "rx_queues",
 * "tx_queues", "combined_queues", "gro", "gso", "tso"}], "sysctls": {"tcp_congestion_control",
 * "rmem_max", "wmem_max", "tcp_rmem", "tcp_wmem", "nf_conntrack_max"}}. Loopback is left out;
 * only_iface (or NULL) limits "nics" to that interface. Fields the kernel does not give are
 * absent. New reference, never NULL. */
json_t *nicinfo_node_facts(const char *only_iface);

/* /proc/sys/<path> ("net/core/rmem_max") trimmed of its trailing newline, tabs turned into
 * spaces; NULL when unreadable. Caller frees. */
char *nicinfo_sysctl(const char *path);

#endif
