/* SPDX-License-Identifier: Apache-2.0 */
/* kp_log.c - see kp_log.h. */
#include "base/kp_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static const char *prog_name = "kperf";
static enum kp_log_level current_level = KP_LOG_WARN;

static const char *const level_names[] = {"error", "warning", "info", "debug", "trace"};

void kp_log_set_prog(const char *prog)
{
    prog_name = prog;
}

void kp_log_set_level(enum kp_log_level level)
{
    current_level = level;
}

enum kp_log_level kp_log_get_level(void)
{
    return current_level;
}

int kp_log_enabled(enum kp_log_level level)
{
    return level <= current_level;
}

void kp_log(enum kp_log_level level, const char *fmt, ...)
{
    char line[2048];
    int n;
    int m;
    va_list ap;

    if (!kp_log_enabled(level))
        return;
    n = snprintf(line, sizeof(line), "%s: %s: ", prog_name, level_names[level]);
    if (n < 0 || (size_t)n >= sizeof(line))
        return;
    va_start(ap, fmt);
    m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        return;
    n += m;
    if ((size_t)n > sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    line[n++] = '\n';
    /* one write(2) so lines from threads do not interleave */
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}
