/* SPDX-License-Identifier: Apache-2.0 */
/* kp_err.h - the one error pattern: a failing function returns -1 and writes one line here.
 * Owns the message buffer; callers add context with kp_err_prefix. Only cmd/ prints it. */
#ifndef KPERF_BASE_KP_ERR_H
#define KPERF_BASE_KP_ERR_H

#include <stddef.h>

#define KP_ERR_MAX 1024

/* On every function that returns a kp_err code (0 / -1): ignoring the result is a compile
 * error under -Werror. A caller that really does not care writes `if (f(...) != 0) {}` with a
 * comment saying why. */
#define KP_MUST_CHECK __attribute__((warn_unused_result))

struct kp_err {
    char msg[KP_ERR_MAX];
};

/* Clears err (NULL is a no-op). */
void kp_err_clear(struct kp_err *err);

/* Sets the message (printf-like). err may be NULL. Always returns -1, so guards read
 * `return kp_err_set(err, "...")`. */
int kp_err_set(struct kp_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepends "<context>: " to the message. Returns -1. */
int kp_err_prefix(struct kp_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message (borrowed; "" when unset, "unknown error" when err is NULL). */
const char *kp_err_msg(const struct kp_err *err);

/* True when a message has been set. */
int kp_err_is_set(const struct kp_err *err);

#endif
