/* SPDX-License-Identifier: Apache-2.0 */
/* subproc.c - see subproc.h. */
#include "base/subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/portable.h"

#define ERR_TAIL_BYTES  4096
#define DEFAULT_MAX_OUT (1024u * 1024u)
#define DRAIN_MS        1000 /* after a kill: how long to read what is left in the pipes */

extern char **environ;

char *subproc_join(const char *const argv[])
{
    size_t len = 1;
    char *s;

    for (size_t i = 0; argv[i]; i++)
        len += strlen(argv[i]) + 1;
    s = kp_xmalloc(len);
    s[0] = '\0';
    for (size_t i = 0; argv[i]; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

/* In the child, before exec: own process group (unless same_pgroup), die with the parent,
 * default signals. Only async-signal-safe calls: the parent may have threads. */
static void child_setup(pid_t parent, bool same_pgroup)
{
    sigset_t none;

    if (!same_pgroup)
        setpgid(0, 0);
    kp_die_with_parent(SIGKILL);
    if (getppid() != parent)
        _exit(127); /* the parent died before kp_die_with_parent took effect */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Appends to stdout; the old buffer is wiped when it moves (it may hold a credential). */
static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t grown = (*len + n + 1) * 2;
        char *b = kp_xmalloc(grown);
        if (*buf) {
            memcpy(b, *buf, *len);
            kp_wipe(*buf, *cap);
            free(*buf);
        }
        *buf = b;
        *cap = grown;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

/* Keeps only the last ERR_TAIL_BYTES of stderr. */
static void append_tail(char *tail, size_t *len, const char *data, size_t n)
{
    if (n >= ERR_TAIL_BYTES) {
        memcpy(tail, data + n - ERR_TAIL_BYTES + 1, ERR_TAIL_BYTES - 1);
        *len = ERR_TAIL_BYTES - 1;
    } else {
        if (*len + n >= ERR_TAIL_BYTES) {
            size_t drop = *len + n - (ERR_TAIL_BYTES - 1);
            memmove(tail, tail + drop, *len - drop);
            *len -= drop;
        }
        memcpy(tail + *len, data, n);
        *len += n;
    }
    tail[*len] = '\0';
}

static void kill_child(pid_t pid)
{
    kill(-pid, SIGKILL); /* its process group: the agent and anything it started */
    kill(pid, SIGKILL);
}

/* subproc_run's child: its group, or only itself when it shares ours. */
static void kill_run_child(pid_t pid, const struct subproc_opts *o)
{
    if (o->same_pgroup)
        kill(pid, SIGKILL);
    else
        kill_child(pid);
}

static bool cancelled(const struct subproc_opts *o)
{
    return (o->cancel && *o->cancel) || (o->cancel_also && *o->cancel_also);
}

/* Reads both pipes (err_fd may be -1) until EOF, enforcing the deadline, cancel flags and
 * output cap; after a kill, for at most DRAIN_MS more. */
static void collect(pid_t pid, int out_fd, int err_fd, const struct subproc_opts *o,
                    struct subproc_result *r)
{
    size_t cap = 0, err_len = 0, max_out = o->max_out ? o->max_out : DEFAULT_MAX_OUT;
    uint64_t deadline = o->timeout_ms ? clock_now_ms() + o->timeout_ms : 0, drain_end = 0;
    struct pollfd pfd[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
    bool killed = false;
    char buf[16384];

    while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
        if (!killed && cancelled(o)) {
            r->cancelled = killed = true;
            kill_run_child(pid, o);
        }
        if (!killed && deadline && clock_now_ms() >= deadline) {
            r->timed_out = killed = true;
            kill_run_child(pid, o);
        }
        if (killed && !drain_end)
            drain_end = clock_now_ms() + DRAIN_MS;
        if (drain_end && clock_now_ms() >= drain_end)
            break; /* something that outlived the kill still holds a pipe */
        if (poll(pfd, 2, 100) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            ssize_t n;
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            n = read(pfd[i].fd, buf, sizeof(buf));
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (n <= 0) {
                close(pfd[i].fd);
                pfd[i].fd = -1;
                continue;
            }
            if (i == 1) {
                append_tail(r->err, &err_len, buf, (size_t)n);
            } else if (r->out_len + (size_t)n > max_out) {
                r->out_truncated = true;
                if (!killed)
                    kill_run_child(pid, o);
                killed = true;
            } else {
                append(&r->out, &r->out_len, &cap, buf, (size_t)n);
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        if (pfd[i].fd >= 0)
            close(pfd[i].fd);
    }
}

/* environ with o->env added, entries of the same name replaced (caller frees the array; the
 * strings are borrowed). Built before fork: the child may only make async-signal-safe calls. */
static char **child_env(const char *const *extra)
{
    size_t n = 0, nextra = 0, o = 0;
    char **env;

    while (environ[n])
        n++;
    while (extra[nextra])
        nextra++;
    env = kp_xcalloc(n + nextra + 1, sizeof(*env));
    for (size_t i = 0; i < n; i++) {
        size_t klen = strcspn(environ[i], "=");
        bool replaced = false;
        for (size_t j = 0; j < nextra && !replaced; j++)
            replaced = strncmp(environ[i], extra[j], klen) == 0 && extra[j][klen] == '=';
        if (!replaced)
            env[o++] = environ[i];
    }
    for (size_t j = 0; j < nextra; j++)
        env[o++] = (char *)extra[j];
    return env;
}

/* In the child: wires stdin/stdout/stderr and execs; on failure reports errno on status_fd
 * (close-on-exec, so the parent reads EOF when exec succeeded) and exits 127. */
static void child_exec(const char *const argv[], const struct subproc_opts *o, char **env,
                       int out_fd, int err_fd, int status_fd)
{
    int e;

    if (o->stdin_fd > 0) {
        dup2(o->stdin_fd, STDIN_FILENO);
    } else if (o->stdin_null) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
    }
    dup2(out_fd, STDOUT_FILENO);
    if (!o->stderr_inherit)
        dup2(err_fd, STDERR_FILENO);
    if (env)
        execvpe(argv[0], (char *const *)argv, env);
    else
        execvp(argv[0], (char *const *)argv);
    e = errno;
    if (!o->stderr_inherit)
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(e));
    if (write(status_fd, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

int subproc_run(const char *const argv[], const struct subproc_opts *o, struct subproc_result *r,
                struct kp_err *err)
{
    static const struct subproc_opts none = {0};
    int out_p[2] = {-1, -1}, err_p[2] = {-1, -1}, st_p[2] = {-1, -1};
    pid_t parent = getpid(), pid;
    char **env = NULL;
    int status = 0, rc = -1;

    memset(r, 0, sizeof(*r));
    r->exit_code = -1;
    if (!o)
        o = &none;
    if (kp_pipe_cloexec(out_p) != 0 || (!o->stderr_inherit && kp_pipe_cloexec(err_p) != 0) ||
        kp_pipe_cloexec(st_p) != 0) {
        kp_err_set(err, "cannot create a pipe for %s: %s", argv[0], strerror(errno));
        goto out;
    }
    if (o->env)
        env = child_env(o->env);
    pid = fork();
    if (pid < 0) {
        kp_err_set(err, "cannot start %s: %s", argv[0], strerror(errno));
        goto out;
    }
    if (pid == 0) {
        child_setup(parent, o->same_pgroup);
        child_exec(argv, o, env, out_p[1], err_p[1], st_p[1]);
    }
    if (o->pid_slot)
        *o->pid_slot = pid;
    r->err = kp_xcalloc(1, ERR_TAIL_BYTES);
    close(out_p[1]);
    close(st_p[1]);
    out_p[1] = st_p[1] = -1;
    if (err_p[1] >= 0) {
        close(err_p[1]);
        err_p[1] = -1;
        fcntl(err_p[0], F_SETFL, O_NONBLOCK);
    }
    /* blocks until the exec (EOF) or its failure (errno); the child does nothing else first */
    while (read(st_p[0], &r->exec_errno, sizeof(r->exec_errno)) < 0 && errno == EINTR)
        ;
    fcntl(out_p[0], F_SETFL, O_NONBLOCK);
    collect(pid, out_p[0], err_p[0], o, r); /* closes both */
    out_p[0] = err_p[0] = -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (o->pid_slot)
        *o->pid_slot = 0;
    if (!r->out)
        r->out = kp_xstrdup("");
    r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        if (out_p[i] >= 0)
            close(out_p[i]);
        if (err_p[i] >= 0)
            close(err_p[i]);
        if (st_p[i] >= 0)
            close(st_p[i]);
    }
    free(env);
    return rc;
}

void subproc_result_cleanup(struct subproc_result *r)
{
    if (r->out)
        kp_wipe(r->out, r->out_len);
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof(*r));
}

/* The first non-empty line of s (tools print the reason first: nft, ip), copied into buf. */
static const char *first_line(const char *s, char *buf, size_t len)
{
    s += strspn(s, "\r\n ");
    snprintf(buf, len, "%.*s", (int)strcspn(s, "\r\n"), s);
    return buf;
}

int subproc_check(const char *const argv[], struct kp_err *err)
{
    struct subproc_opts o = {.timeout_ms = 30000};
    struct subproc_result r;
    char line[512];
    char *cmd = NULL;
    int rc = -1;

    if (subproc_run(argv, &o, &r, err) != 0)
        return -1;
    if (r.exit_code == 0 && !r.timed_out) {
        rc = 0;
        goto out;
    }
    cmd = subproc_join(argv);
    if (r.timed_out)
        kp_err_set(err, "%s: no answer within 30s", cmd);
    else if (r.err && r.err[0])
        kp_err_set(err, "%s: %s", cmd, first_line(r.err, line, sizeof(line)));
    else if (r.exit_code >= 0)
        kp_err_set(err, "%s: exit status %d", cmd, r.exit_code);
    else
        kp_err_set(err, "%s: killed by signal %d", cmd, r.term_signal);
out:
    free(cmd);
    subproc_result_cleanup(&r);
    return rc;
}

int subproc_spawn(const char *const argv[], const char *log_path, pid_t *pid, struct kp_err *err)
{
    pid_t parent = getpid();
    int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

    if (fd < 0)
        return kp_err_set(err, "cannot create %s: %s", log_path, strerror(errno));
    *pid = fork();
    if (*pid < 0) {
        close(fd);
        return kp_err_set(err, "cannot start %s: %s", argv[0], strerror(errno));
    }
    if (*pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);
        child_setup(parent, false);
        if (devnull >= 0)
            dup2(devnull, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execvp(argv[0], (char *const *)argv);
        dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    return 0;
}

bool subproc_alive(pid_t pid)
{
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);

    return r == 0;
}

int subproc_stop(pid_t pid, unsigned grace_ms)
{
    uint64_t deadline = clock_now_ms() + grace_ms;

    if (pid <= 0)
        return 0;
    if (!subproc_alive(pid))
        return 0;
    kill(pid, SIGTERM);
    while (clock_now_ms() < deadline) {
        if (!subproc_alive(pid))
            return 0;
        clock_sleep_ms(10);
    }
    kill_child(pid);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return 0;
}
