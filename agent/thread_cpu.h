/* SPDX-License-Identifier: Apache-2.0 */
/* thread_cpu.h - CPU time of one thread and the CPU a thread runs on, for the per-stream
 * figures of stream tests. Thin wrappers over clock_gettime(CLOCK_THREAD_CPUTIME_ID), a
 * thread's CPU-time clock (pthread_getcpuclockid) and sched_getcpu(); no state. */
#ifndef KPERF_AGENT_THREAD_CPU_H
#define KPERF_AGENT_THREAD_CPU_H

#include <pthread.h>
#include <stdint.h>

#include "base/kp_err.h"

/* The calling thread's CPU time (user + system) in nanoseconds, or 0 when it cannot be read. */
uint64_t thread_cpu_self_ns(void);

/* Thread t's CPU time in nanoseconds, read from any thread of the process while t runs (it must
 * not have been joined). Returns 0 and sets *ns, or -1 with err. */
KP_MUST_CHECK int thread_cpu_of(pthread_t t, uint64_t *ns, struct kp_err *err);

/* The CPU the calling thread is running on right now, or -1 when the kernel cannot say. */
int thread_cpu_id(void);

#endif
