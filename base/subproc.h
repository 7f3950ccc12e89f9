/* SPDX-License-Identifier: Apache-2.0 */
/* subproc.h - child processes: run a command and collect its output with a deadline, cancel
 * flags and an output cap (the local backend's tools and agents, kube's exec credential
 * plugins), or start one in the background with its output in a log file. Children get their
 * own process group unless asked not to (a terminal's Ctrl-C reaches kperf only, which then
 * stops them in order) and die with kperf (PR_SET_PDEATHSIG), so a killed run leaves no agent
 * behind. Owns fork/exec/wait, the child's environment and file descriptors; knows nothing of
 * namespaces, agents or credentials. */
#ifndef KPERF_BASE_SUBPROC_H
#define KPERF_BASE_SUBPROC_H

#include "base/kp_err.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct kp_err;

struct subproc_opts {
    uint64_t timeout_ms;                /* 0 = no deadline; past it the child is killed */
    size_t max_out;                     /* stdout cap in bytes (more is an error); 0 = 1 MiB */
    volatile sig_atomic_t *cancel;      /* optional: when it becomes non-zero the child is killed */
    volatile sig_atomic_t *cancel_also; /* optional: a second flag with the same effect */
    volatile pid_t *pid_slot;           /* optional: holds the child's pid while it runs (so a
                                           signal handler can kill() it), 0 otherwise */
    const char *const *env; /* optional, borrowed: NULL-terminated "NAME=value" entries added to
                               our environment; each replaces ours of the same NAME */
    bool stdin_null;        /* stdin is /dev/null (default: ours) */
    int stdin_fd;           /* > 0: the child reads this descriptor as stdin (a memfd holding
                               its input, say; ours stays open); beats stdin_null */
    bool stderr_inherit;    /* stderr stays ours (the user sees the child's messages); r->err is
                               then "" (default: captured into r->err) */
    bool same_pgroup;       /* the child stays in our process group, so a terminal's signals and
                               /dev/tty reach it as they reach us; killing it then kills only it
                               (default: its own group, killed as a whole) */
};

struct subproc_result {
    int exit_code;      /* exit status, or -1 when killed by a signal */
    int term_signal;    /* the signal that ended it, or 0 */
    bool timed_out;     /* killed at the deadline */
    bool cancelled;     /* killed because *cancel was set */
    bool out_truncated; /* stdout exceeded max_out */
    int exec_errno;     /* why the command could not be executed (ENOENT: not found), or 0;
                           exit_code is then 127 and r->err (when captured) says "cannot run" */
    char *out;          /* stdout, NUL-terminated; owned: subproc_result_cleanup, which wipes it
                           (it may hold credentials; so are the copies left when it grows) */
    size_t out_len;
    char *err; /* the last 4 KiB of stderr, NUL-terminated; owned */
};

/* Runs argv (argv[0] looked up in our PATH) to completion: until stdout and stderr close, or
 * the deadline, a cancel flag or the output cap kills it (then what is still buffered is read
 * for at most a second: a grandchild may hold the pipes), and reaps it. Returns 0 when it was
 * started (whatever happened next: see r, including r->exec_errno), -1 with err when no child
 * could be created. r is always initialised. */
KP_MUST_CHECK int subproc_run(const char *const argv[], const struct subproc_opts *o,
                              struct subproc_result *r, struct kp_err *err);
void subproc_result_cleanup(struct subproc_result *r);

/* Runs a short command that must succeed (exit 0 within 30 s). On failure, err reads
 * "<argv joined>: <last stderr line or exit status>". Returns 0 or -1. */
KP_MUST_CHECK int subproc_check(const char *const argv[], struct kp_err *err);

/* Starts argv in the background, stdout and stderr appended to log_path (created 0600).
 * Returns 0 with *pid, or -1 with err. The caller stops it with subproc_stop. */
KP_MUST_CHECK int subproc_spawn(const char *const argv[], const char *log_path, pid_t *pid,
                                struct kp_err *err);

/* Sends SIGTERM, waits up to grace_ms, then SIGKILL, and reaps it. Returns 0 once gone. */
int subproc_stop(pid_t pid, unsigned grace_ms);

/* True while pid has not exited (reaps it when it has). */
bool subproc_alive(pid_t pid);

/* "a b c" for messages (caller frees). */
char *subproc_join(const char *const argv[]);

#endif
