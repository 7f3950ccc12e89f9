/* SPDX-License-Identifier: Apache-2.0 */
/* hostfacts.h - what a server tells about its host when a client asks (FACTS, docs/protocol.md):
 * host name, kernel, OS, CPU count and model, and the NIC facts (agent/nicinfo.h) of the
 * interface that holds the connection's local address, i.e. the one that carries the route to
 * the client. The controller puts them in the report's provenance for a host it does not run
 * (the external server). Knows nothing of the wire format. */
#ifndef KPERF_AGENT_HOSTFACTS_H
#define KPERF_AGENT_HOSTFACTS_H

#include <jansson.h>
#include <stddef.h>

/* {"hostname", "kernel", "machine", "os_image", "cpus", "cpu_model", "interface", "net": {"nics":
 * [that interface], "sysctls": {...}}} for the connected socket fd (fd < 0: no interface, every
 * NIC). Absent facts are left out. New reference, never NULL. */
json_t *hostfacts_collect(int fd);

/* The facts as compact JSON text of printable ASCII (non-ASCII escaped), at most max bytes:
 * the sysctls, then the whole "net", are dropped when it would not fit. NULL only when even
 * that does not fit. Caller frees. */
char *hostfacts_text(const json_t *facts, size_t max);

/* The CPU model in /proc/cpuinfo's text: the first "model name" (x86), else "Processor" or
 * "cpu model" (other architectures), trimmed. NULL when none. Caller frees. */
char *hostfacts_cpu_model(const char *cpuinfo);

#endif
