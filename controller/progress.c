/* SPDX-License-Identifier: Apache-2.0 */
/* progress.c - see progress.h. One mutex guards the state; on a TTY a thread redraws the status
 * line four times a second (with SIGINT/SIGTERM blocked, so signals reach the main thread). */
#include "controller/progress.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/units.h"

#define LABEL_MAX 160

struct progress {
    struct progress_opts o;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_running;
    bool stopping;
    uint64_t start_ms;
    size_t done;     /* measurements finished (ok or not) */
    size_t failed;   /* steps that failed */
    size_t measured; /* measurements of steps that succeeded */
    uint64_t expected_done_ms;
    /* current step */
    bool in_step;
    char label[LABEL_MAX];
    size_t step_n;
    uint64_t step_expected_ms;
    uint64_t step_start_ms;
    bool status_shown; /* a status line is on screen (TTY) */
    bool finished;     /* progress_finish ran: no more redraws */
};

static uint64_t mono_ms(void *ctx)
{
    (void)ctx;
    return clock_now_ms();
}

static uint64_t now(const struct progress *p)
{
    return p->o.clock(p->o.clock_ctx);
}

/* "3m05s"-style via units; short form for status lines. */
static const char *dur(uint64_t ms, char *buf, size_t len)
{
    return units_format_duration(ms, buf, len);
}

static void format_status_locked(struct progress *p, char *buf, size_t len)
{
    uint64_t t = now(p), elapsed = t - p->start_ms;
    uint64_t step_el = p->in_step ? t - p->step_start_ms : 0;
    uint64_t left_ms = p->o.expected_total_ms > p->expected_done_ms + step_el
                           ? p->o.expected_total_ms - p->expected_done_ms - step_el
                           : 0;
    char a[32], b[32], c[32], d[32];

    if (!p->in_step && !p->label[0]) {
        buf[0] = '\0'; /* between steps: nothing to show */
        return;
    }
    if (!p->in_step) {
        snprintf(buf, len, "%s (%s)", p->label[0] ? p->label : "starting",
                 dur(elapsed, a, sizeof(a)));
        return;
    }
    snprintf(buf, len, "[%zu/%zu] %s  %s of ~%s  |  run %s, ~%s left", p->done + 1, p->o.total,
             p->label, dur(step_el, a, sizeof(a)), dur(p->step_expected_ms, b, sizeof(b)),
             dur(elapsed, c, sizeof(c)), dur(left_ms, d, sizeof(d)));
}

void progress_format_status(struct progress *p, char *buf, size_t len)
{
    pthread_mutex_lock(&p->mu);
    format_status_locked(p, buf, len);
    pthread_mutex_unlock(&p->mu);
}

static void draw_locked(struct progress *p)
{
    char line[512];

    if (p->o.quiet || !p->o.tty || p->finished)
        return;
    format_status_locked(p, line, sizeof(line));
    if (!line[0])
        return;
    fprintf(p->o.out, "\r\033[K%s", line);
    fflush(p->o.out);
    p->status_shown = true;
}

static void clear_locked(struct progress *p)
{
    if (p->o.tty && p->status_shown) {
        fputs("\r\033[K", p->o.out);
        p->status_shown = false;
    }
}

static void *redraw_thread(void *arg)
{
    struct progress *p = arg;
    struct timespec ts;

    pthread_mutex_lock(&p->mu);
    while (!p->stopping) {
        ts = clock_realtime_in_ms(250);
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
        if (!p->stopping)
            draw_locked(p);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct progress *progress_new(const struct progress_opts *o)
{
    struct progress *p = kp_xcalloc(1, sizeof(*p));

    p->o = *o;
    if (!p->o.clock)
        p->o.clock = mono_ms;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->start_ms = now(p);
    if (p->o.tty && !p->o.quiet) {
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        p->thread_running = pthread_create(&p->thread, NULL, redraw_thread, p) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return p;
}

void progress_free(struct progress *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = true;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->thread_running)
        pthread_join(p->thread, NULL);
    pthread_mutex_lock(&p->mu);
    clear_locked(p);
    pthread_mutex_unlock(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void progress_phase(struct progress *p, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&p->mu);
    va_start(ap, fmt);
    vsnprintf(p->label, sizeof(p->label), fmt, ap);
    va_end(ap);
    p->in_step = false;
    /* a permanent line, also on a terminal: diagnostics printed during the phase (kp_log) then
     * never collide with a status line */
    if (!p->o.quiet) {
        clear_locked(p);
        fprintf(p->o.out, "kperf: %s\n", p->label);
        fflush(p->o.out);
    }
    p->label[0] = '\0';
    pthread_mutex_unlock(&p->mu);
}

void progress_begin(struct progress *p, const char *label, size_t n_measurements,
                    uint64_t expected_ms)
{
    char a[32];

    pthread_mutex_lock(&p->mu);
    snprintf(p->label, sizeof(p->label), "%s", label);
    p->in_step = true;
    p->step_n = n_measurements;
    p->step_expected_ms = expected_ms;
    p->step_start_ms = now(p);
    if (!p->o.quiet && !p->o.tty)
        fprintf(p->o.out, "kperf: [%zu/%zu] %s: running (~%s)\n", p->done + 1, p->o.total, label,
                dur(expected_ms, a, sizeof(a)));
    draw_locked(p);
    pthread_mutex_unlock(&p->mu);
}

void progress_end(struct progress *p, bool ok, const char *result)
{
    char a[32];
    uint64_t took;

    pthread_mutex_lock(&p->mu);
    took = now(p) - p->step_start_ms;
    if (!p->o.quiet) {
        clear_locked(p);
        if (p->o.tty)
            fprintf(p->o.out, "  %s [%2zu/%zu] %-54s %-26s %s\n", ok ? "\u2714" : "\u2718",
                    p->done + 1, p->o.total, p->label, result ? result : "",
                    dur(took, a, sizeof(a)));
        else
            fprintf(p->o.out, "kperf: [%zu/%zu] %s: %s%s (%s)\n", p->done + 1, p->o.total, p->label,
                    ok ? "" : "FAILED: ", result ? result : "", dur(took, a, sizeof(a)));
        fflush(p->o.out);
    }
    p->done += p->step_n;
    if (ok)
        p->measured += p->step_n;
    p->expected_done_ms += p->step_expected_ms;
    if (!ok)
        p->failed++;
    p->in_step = false;
    p->label[0] = '\0';
    pthread_mutex_unlock(&p->mu);
}

void progress_add_total(struct progress *p, size_t n, uint64_t expected_ms)
{
    pthread_mutex_lock(&p->mu);
    p->o.total += n;
    p->o.expected_total_ms += expected_ms;
    pthread_mutex_unlock(&p->mu);
}

void progress_set_total(struct progress *p, size_t total, uint64_t expected_total_ms)
{
    pthread_mutex_lock(&p->mu);
    p->o.total = total;
    p->o.expected_total_ms = expected_total_ms;
    pthread_mutex_unlock(&p->mu);
}

void progress_finish(struct progress *p, const char *outcome)
{
    char a[32];

    pthread_mutex_lock(&p->mu);
    p->in_step = false;
    if (!p->o.quiet) {
        clear_locked(p);
        fprintf(p->o.out, "%s%zu of %zu measurements in %s%s%s\n",
                p->o.tty ? "" : "kperf: ", p->measured, p->o.total,
                dur(now(p) - p->start_ms, a, sizeof(a)), outcome && *outcome ? ": " : "",
                outcome ? outcome : "");
        fflush(p->o.out);
    }
    p->finished = true;
    pthread_mutex_unlock(&p->mu);
}

uint64_t progress_elapsed_ms(struct progress *p)
{
    uint64_t v;

    pthread_mutex_lock(&p->mu);
    v = now(p) - p->start_ms;
    pthread_mutex_unlock(&p->mu);
    return v;
}
