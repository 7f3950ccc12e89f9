/* SPDX-License-Identifier: Apache-2.0 */
/* progress.h - what a run is doing, on stderr: on a terminal one status line redrawn in place
 * (current measurement, n of N, its elapsed and expected time, the run's elapsed and expected
 * time) above the list of finished measurements; elsewhere (CI logs, pipes) plain lines.
 * Owns the formatting, the clock and the redraw thread; knows nothing of backends or reports. */
#ifndef KPERF_CONTROLLER_PROGRESS_H
#define KPERF_CONTROLLER_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct progress; /* opaque */

/* Milliseconds from some fixed point (monotonic). Tests pass their own. */
typedef uint64_t progress_clock_fn(void *ctx);

struct progress_opts {
    FILE *out;                  /* borrowed; usually stderr */
    bool tty;                   /* redraw a status line (and run a redraw thread) */
    bool quiet;                 /* print nothing at all */
    size_t total;               /* measurements planned (n of N) */
    uint64_t expected_total_ms; /* measurement time planned */
    progress_clock_fn *clock;   /* NULL = CLOCK_MONOTONIC */
    void *clock_ctx;
};

/* Starts the run clock. Never NULL; caller frees with progress_free. */
struct progress *progress_new(const struct progress_opts *o);
void progress_free(struct progress *p); /* stops the redraw thread; NULL is a no-op */

/* A free-form phase ("preparing the local backend", "cleaning up"): one permanent line. */
void progress_phase(struct progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A measurement step begins: label such as "pod-to-pod same-node TCP_RR", covering
 * n_measurements of the total, expected to take expected_ms. */
void progress_begin(struct progress *p, const char *label, size_t n_measurements,
                    uint64_t expected_ms);

/* The step ended: ok or failed, with a short result ("9.41 Gbit/s", "p50 21 us") or the error. */
void progress_end(struct progress *p, bool ok, const char *result);

/* More measurements than planned (--samples auto): grows N. */
void progress_add_total(struct progress *p, size_t n, uint64_t expected_ms);

/* Replaces N and the expected time (after a backend marked skips). */
void progress_set_total(struct progress *p, size_t total, uint64_t expected_total_ms);

/* Clears the status line and prints the final "n of N measured in 3m12s" line. */
void progress_finish(struct progress *p, const char *outcome);

/* The current status line (without terminal codes), for tests and the redraw thread. */
void progress_format_status(struct progress *p, char *buf, size_t len);

/* Run elapsed time in ms. */
uint64_t progress_elapsed_ms(struct progress *p);

#endif
