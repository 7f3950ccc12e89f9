/* SPDX-License-Identifier: Apache-2.0 */
/* sysinfo.h - facts about this process, node and socket that a measurement reports: clock,
 * process CPU (getrusage), node CPU (/proc/stat), UDP receive-buffer drops (/proc/net/snmp),
 * the MTU of the interface a socket uses, and TCP_INFO. Knows nothing of the protocol. */
#ifndef KPERF_AGENT_SYSINFO_H
#define KPERF_AGENT_SYSINFO_H

#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"

#define SYSINFO_CPU_FIELDS 8 /* user nice system idle iowait irq softirq steal */

/* CLOCK_MONOTONIC in ns. */
uint64_t sysinfo_now_ns(void);

/* This process's user and system CPU in microseconds (all threads). */
void sysinfo_process_cpu_us(uint64_t *user_us, uint64_t *sys_us);

/* The aggregate "cpu" line of /proc/stat, in jiffies. Returns 0, or -1 (all zero) if
 * unreadable. */
KP_MUST_CHECK int sysinfo_node_cpu(uint64_t out[SYSINFO_CPU_FIELDS]);

/* Udp: RcvbufErrors from /proc/net/snmp (this network namespace); 0 if unreadable. */
uint64_t sysinfo_udp_rcvbuf_errors(void);

/* The name of the interface that holds the socket's local address (the one that carries the
 * connection's route) into name[len]. Returns 0, or -1 if none does. */
KP_MUST_CHECK int sysinfo_socket_ifname(int fd, char *name, size_t len);

/* MTU of the interface that holds the socket's local address (loopback for 127/8); 0 if
 * unknown. */
uint32_t sysinfo_socket_mtu(int fd);

struct sysinfo_tcp {
    uint32_t retransmits; /* tcpi_total_retrans */
    uint32_t rtt_us;      /* smoothed RTT */
    uint32_t mss;         /* tcpi_snd_mss */
};

/* TCP_INFO of a connected socket. Returns 0, or -1 with errno (out zeroed). */
KP_MUST_CHECK int sysinfo_tcp_info(int fd, struct sysinfo_tcp *out);

/* Sets SO_SNDBUF/SO_RCVBUF (bytes, 0 = leave) trying the *FORCE variants first (root may
 * exceed the sysctl caps; EPERM from them is expected and not an error). Returns 0, or -1 with
 * err naming the option the plain variant also refused. */
KP_MUST_CHECK int sysinfo_set_bufs(int fd, int sndbuf, int rcvbuf, struct kp_err *err);

/* TCP_NOTSENT_LOWAT: a writer of fd blocks (or is not told it may write) while bytes or more
 * of what it wrote are still unsent. Returns 0, or -1 with err. */
KP_MUST_CHECK int sysinfo_low_unsent(int fd, int bytes, struct kp_err *err);

/* Control-socket liveness: keepalive after idle_s, TCP_USER_TIMEOUT of user_timeout_ms. Sets
 * every option even when one fails; returns 0, or -1 with err naming the first that failed. */
KP_MUST_CHECK int sysinfo_keepalive(int fd, int idle_s, unsigned user_timeout_ms,
                                    struct kp_err *err);

/* This host's name and kernel release into the caller's buffers (always NUL-terminated). */
void sysinfo_host(char *host, unsigned host_len, char *kernel, unsigned kernel_len);

/* The machine this agent runs as (uname's machine: "x86_64", "aarch64"; under qemu-user the
 * emulated one) into buf (always NUL-terminated; "unknown" when uname fails). */
void sysinfo_machine(char *buf, unsigned len);

/* This kernel's boot id (/proc/sys/kernel/random/boot_id: the same in every namespace of one
 * boot, new at each boot) into buf, NUL-terminated. Its length, or 0 when unreadable. */
size_t sysinfo_boot_id(char *buf, size_t len);

/* The CPUs this process may use: its affinity mask, capped by its cgroup's CPU quota rounded
 * up (agent/cpuquota.h: a pod's CPU limit), at least 1. quota_millis (may be NULL) gets the
 * quota read on the way, in millicores (0 = none), so a caller that reports it reads the
 * cgroup files once. */
unsigned sysinfo_usable_cpus_quota(unsigned *quota_millis);
unsigned sysinfo_usable_cpus(void);
/* Half of cpus (a sysinfo_usable_cpus count), at least 1: one end's share of a machine both
 * ends of a same-kernel stream test run on (docs/benchmark.md, "Same kernel"). */
unsigned sysinfo_half_cpus(unsigned cpus);

#endif
