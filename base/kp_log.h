/* SPDX-License-Identifier: Apache-2.0 */
/* kp_log.h - diagnostics on stderr with a level set by -v. stdout is for results only.
 * Owns the level and the program name; never prints secrets (callers must not pass them). */
#ifndef KPERF_BASE_KP_LOG_H
#define KPERF_BASE_KP_LOG_H

enum kp_log_level {
    KP_LOG_ERROR = 0,
    KP_LOG_WARN = 1,
    KP_LOG_INFO = 2,
    KP_LOG_DEBUG = 3,
    KP_LOG_TRACE = 4,
};

/* Program name used as the line prefix ("kperf", "kperf-agent"); borrowed, must outlive use. */
void kp_log_set_prog(const char *prog);
void kp_log_set_level(enum kp_log_level level);
enum kp_log_level kp_log_get_level(void);
int kp_log_enabled(enum kp_log_level level);

/* "prog: level: message\n" on stderr when level is enabled. Thread-safe (one write per line). */
void kp_log(enum kp_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
