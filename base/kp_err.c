/* SPDX-License-Identifier: Apache-2.0 */
/* kp_err.c - see kp_err.h. */
#include "base/kp_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void kp_err_clear(struct kp_err *err)
{
    if (err)
        err->msg[0] = '\0';
}

int kp_err_set(struct kp_err *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

int kp_err_prefix(struct kp_err *err, const char *fmt, ...)
{
    char ctx[KP_ERR_MAX];
    char old[KP_ERR_MAX];
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof(ctx), fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof(old));
    if (old[0]) {
        /* truncation is acceptable: the message stays one readable line */
        size_t n = strnlen(ctx, sizeof(err->msg) - 3);
        memcpy(err->msg, ctx, n);
        memcpy(err->msg + n, ": ", 2);
        snprintf(err->msg + n + 2, sizeof(err->msg) - n - 2, "%s", old);
    } else {
        snprintf(err->msg, sizeof(err->msg), "%s", ctx);
    }
    return -1;
}

const char *kp_err_msg(const struct kp_err *err)
{
    return err ? err->msg : "unknown error";
}

int kp_err_is_set(const struct kp_err *err)
{
    return err && err->msg[0] != '\0';
}
