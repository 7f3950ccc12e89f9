/* SPDX-License-Identifier: Apache-2.0 */
/* kprof.h - the kernel's CPU profile during a measurement (opt-in, docs/profile.md): one
 * software cpu-clock sampling event per online CPU (perf_event_open, pid -1, kernel only,
 * kernel call chains), its ring buffers drained by a thread, each sample's instruction pointer
 * and call chain symbolized through /proc/kallsyms (agent/ksyms.h). Sampling is system-wide;
 * a sample counts as the measurement's when its stack holds the softirq handler (packet work,
 * whoever's stack it ran on; the stack cut there) or when it ran in a process named like ours
 * (the agents); the node's other kernel time is counted as "other", the idle loop as "idle".
 * Per function: the samples it was running in ("samples", self) and the samples whose stack
 * held it ("stack"). Needs CAP_PERFMON or CAP_SYS_ADMIN (or kernel.perf_event_paranoid <= 0);
 * without it the profile says why and the measurement runs. */
#ifndef KPERF_AGENT_KPROF_H
#define KPERF_AGENT_KPROF_H

#include <jansson.h>

#include "base/kp_err.h"

#define KPROF_HZ        997 /* samples per second per CPU: not a multiple of the tick */
#define KPROF_FUNCTIONS 100 /* functions kept in the JSON, the most sampled first */

struct kprof; /* opaque */

/* Starts sampling now. Returns the profiler, or NULL with err saying why (perf_event_open
 * refused: "perf_event_open: Permission denied (needs CAP_PERFMON ...)"; kallsyms unreadable). */
struct kprof *kprof_start(struct kp_err *err);

/* Stops sampling (the samples taken so far are kept). Idempotent. */
void kprof_stop(struct kprof *p);

/* {"hz", "cpus", "samples", "lost", "functions": [{"name", "samples", "stack"}]}: the
 * KPROF_FUNCTIONS functions with the most self samples, then those with the most stack samples
 * not already listed (up to as many again). New reference. Stops first. */
json_t *kprof_json(struct kprof *p);

/* {"error": msg}: what a sample's profile says when sampling could not start. */
json_t *kprof_error_json(const char *msg);

void kprof_free(struct kprof *p);

#endif
