/* SPDX-License-Identifier: Apache-2.0 */
/* portable.h - the few calls the controller makes whose spelling differs between Linux and the
 * other systems `kperf` builds on without its local backend (macOS: docs/laptop.md). Each is
 * the Linux call on Linux and the nearest equivalent elsewhere.
 * The agent and the local backend are Linux-only and call Linux directly. */
#ifndef KPERF_BASE_PORTABLE_H
#define KPERF_BASE_PORTABLE_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

/* Fills buf with n random bytes from the kernel (n <= 256). 0, or -1 with errno set. */
int kp_random_bytes(void *buf, size_t n);

/* Zeroes n bytes at p in a way the compiler may not remove (secrets before free). */
void kp_wipe(void *p, size_t n);

/* pipe(2) whose two ends are close-on-exec from the start where the system allows it (pipe2
 * on Linux; pipe then FD_CLOEXEC elsewhere, where another thread's fork may see them open). */
int kp_pipe_cloexec(int fds[2]);

/* In a forked child: ask for signal sig when the parent dies (Linux PR_SET_PDEATHSIG);
 * elsewhere nothing (the parent's cleanup must then end the child). */
void kp_die_with_parent(int sig);

/* A condition variable whose timed waits take CLOCK_MONOTONIC deadlines (clock_now_ns()). */
void kp_cond_init_monotonic(pthread_cond_t *cv);
/* pthread_cond_timedwait on a cv from kp_cond_init_monotonic; returns its result. */
int kp_cond_timedwait_monotonic(pthread_cond_t *cv, pthread_mutex_t *mu,
                                const struct timespec *mono_until);

/* A file's modification time in nanoseconds since the epoch. */
uint64_t kp_stat_mtime_ns(const struct stat *st);
#endif
