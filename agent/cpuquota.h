/* SPDX-License-Identifier: Apache-2.0 */
/* cpuquota.h - the CPU bandwidth this process's cgroup allows: a pod's CPU limit. Kubernetes
 * enforces `resources.limits.cpu` as a CFS quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`
 * over `cpu.cfs_period_us`), not as an affinity mask, so a pod limited to 1 CPU on a 64-CPU
 * node still sees 64 CPUs in sched_getaffinity. The agent counts the CPUs it may use with this
 * (agent/sysinfo.h, sysinfo_usable_cpus) and reports it (docs/result-schema.md, placement).
 * Reads files only; knows nothing of the protocol. */
#ifndef KPERF_AGENT_CPUQUOTA_H
#define KPERF_AGENT_CPUQUOTA_H

#define CPUQUOTA_ROOT      "/sys/fs/cgroup"
#define CPUQUOTA_PID1_ROOT "/proc/1/root/sys/fs/cgroup"

/* The smallest CPU quota along this process's cgroup path (its own group and each parent
 * that the mount shows), in thousandths of a CPU ("millicores"), v2 and v1 alike; 0 when no
 * group sets one or nothing is readable. Read once per call: a limit may change at run time.
 * Where CPUQUOTA_ROOT shows no hierarchy (a process started by `ip netns exec`, which mounts a
 * sysfs of the namespace's own on /sys), the hierarchy is read through the parent's root (what
 * ran `ip netns exec`), else PID 1's. */
unsigned cpuquota_millis(void);

/* The same, for tests: root stands for /sys/fs/cgroup and self_cgroup for the text of
 * /proc/self/cgroup. A v2 line ("0::/path") is read in root itself and in root/unified (the
 * hybrid layout); a v1 line whose controllers include "cpu" in root/cpu, root/cpu,cpuacct and
 * root/cpuacct,cpu. A group the mount does not show (a container's view of the host's path)
 * is skipped: the walk goes on to its parents, up to the mount's own root. */
unsigned cpuquota_millis_at(const char *root, const char *self_cgroup);

/* CPUs a quota of millis allows, rounded up (1500 -> 2), at least 1; 0 for no quota. */
unsigned cpuquota_cpus(unsigned millis);

#endif
