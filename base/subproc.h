/* SPDX-License-Identifier: Apache-2.0 */
/* subproc.h - child processes for the local backend: run a command and collect its output
 * with a deadline and a cancel flag, or start one in the background with its output in a log
 * file. Children get their own process group (a terminal's Ctrl-C reaches kperf only, which
 * then stops them in order) and die with kperf (PR_SET_PDEATHSIG), so a killed run leaves no
 * agent behind. Owns fork/exec/wait; knows nothing of namespaces or agents. */
#ifndef KPERF_BASE_SUBPROC_H
#define KPERF_BASE_SUBPROC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct kp_err;

struct subproc_opts {
    uint64_t timeout_ms;           /* 0 = no deadline; past it the child is killed */
    size_t max_out;                /* stdout cap in bytes (more is an error); 0 = 1 MiB */
    volatile sig_atomic_t *cancel; /* optional: when it becomes non-zero the child is killed */
    volatile pid_t *pid_slot;      /* optional: holds the child's pid while it runs (so a
                                      signal handler can kill() it), 0 otherwise */
};

struct subproc_result {
    int exit_code;      /* exit status, or -1 when killed by a signal */
    int term_signal;    /* the signal that ended it, or 0 */
    bool timed_out;     /* killed at the deadline */
    bool cancelled;     /* killed because *cancel was set */
    bool out_truncated; /* stdout exceeded max_out */
    char *out;          /* stdout, NUL-terminated; owned: subproc_result_cleanup */
    size_t out_len;
    char *err; /* the last 4 KiB of stderr, NUL-terminated; owned */
};

/* Runs argv (argv[0] looked up in PATH) to completion. Returns 0 when it ran (whatever its
 * exit status: see r), -1 with err when it could not be started. r is always initialised. */
int subproc_run(const char *const argv[], const struct subproc_opts *o, struct subproc_result *r,
                struct kp_err *err);
void subproc_result_cleanup(struct subproc_result *r);

/* Runs a short command that must succeed (exit 0 within 30 s). On failure, err reads
 * "<argv joined>: <last stderr line or exit status>". Returns 0 or -1. */
int subproc_check(const char *const argv[], struct kp_err *err);

/* Starts argv in the background, stdout and stderr appended to log_path (created 0600).
 * Returns 0 with *pid, or -1 with err. The caller stops it with subproc_stop. */
int subproc_spawn(const char *const argv[], const char *log_path, pid_t *pid, struct kp_err *err);

/* Sends SIGTERM, waits up to grace_ms, then SIGKILL, and reaps it. Returns 0 once gone. */
int subproc_stop(pid_t pid, unsigned grace_ms);

/* True while pid has not exited (reaps it when it has). */
bool subproc_alive(pid_t pid);

/* "a b c" for messages (caller frees). */
char *subproc_join(const char *const argv[]);

#endif
