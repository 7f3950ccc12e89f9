/* SPDX-License-Identifier: Apache-2.0 */
/* portable.c - see portable.h. The only file of the controller's build that tests __linux__
 * for functions (scripts/check-portable.py checks that the others call none of Linux's own). */
#include "base/portable.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#if defined(__APPLE__)
#include <sys/random.h>
#endif

#include "base/clock.h"

int kp_random_bytes(void *buf, size_t n)
{
    return getentropy(buf, n); /* glibc >= 2.25, macOS, the BSDs */
}

void kp_wipe(void *p, size_t n)
{
#if defined(__linux__) || defined(__FreeBSD__) || defined(__OpenBSD__)
    explicit_bzero(p, n);
#else
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
#endif
}

int kp_pipe_cloexec(int fds[2])
{
#ifdef __linux__
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0)
        return -1;
    (void)fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    (void)fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

void kp_die_with_parent(int sig)
{
#ifdef __linux__
    (void)prctl(PR_SET_PDEATHSIG, sig);
#else
    (void)sig;
#endif
}

void kp_cond_init_monotonic(pthread_cond_t *cv)
{
#ifdef __APPLE__
    pthread_cond_init(cv, NULL); /* no pthread_condattr_setclock: waits convert the deadline */
#else
    pthread_condattr_t ca;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
#endif
}

int kp_cond_timedwait_monotonic(pthread_cond_t *cv, pthread_mutex_t *mu,
                                const struct timespec *mono_until)
{
#ifdef __APPLE__
    uint64_t until = clock_ts_to_ns(mono_until), now = clock_now_ns();
    struct timespec rt;

    clock_gettime(CLOCK_REALTIME, &rt);
    rt = clock_ns_to_ts(clock_ts_to_ns(&rt) + (until > now ? until - now : 0));
    return pthread_cond_timedwait(cv, mu, &rt);
#else
    return pthread_cond_timedwait(cv, mu, mono_until);
#endif
}

uint64_t kp_stat_mtime_ns(const struct stat *st)
{
#ifdef __APPLE__
    return clock_ts_to_ns(&st->st_mtimespec);
#else
    return clock_ts_to_ns(&st->st_mtim);
#endif
}
