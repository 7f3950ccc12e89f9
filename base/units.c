/* SPDX-License-Identifier: Apache-2.0 */
/* units.c - see units.h. */
#include "base/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/kp_err.h"

#define MAX_DURATION_MS (30ULL * 24 * 3600 * 1000)

struct suffix {
    const char *name;
    double factor;
};

static const char *example_of(const char *what)
{
    if (strcmp(what, "duration") == 0)
        return "10s";
    if (strcmp(what, "rate") == 0)
        return "1G";
    if (strcmp(what, "percentage") == 0)
        return "5%";
    return "1K";
}

/* Parses a non-negative decimal number followed by a suffix from `table` (first match on the
 * whole remaining text). An empty suffix uses `bare`. */
static int parse_scaled(const char *s, const struct suffix *table, double bare, double *out,
                        const char *what, struct kp_err *err)
{
    char *end = NULL;
    double v = 0;

    if (!s || !*s)
        return kp_err_set(err, "empty %s", what);
    if (!isdigit((unsigned char)s[0]) && s[0] != '.')
        return kp_err_set(err, "invalid %s '%s': expected a number such as %s", what, s,
                          example_of(what));
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || end == s || !isfinite(v) || v < 0)
        return kp_err_set(err, "invalid %s '%s'", what, s);
    if (*end == '\0') {
        *out = v * bare;
        return 0;
    }
    for (size_t i = 0; table[i].name; i++) {
        if (strcasecmp(end, table[i].name) == 0) {
            *out = v * table[i].factor;
            return 0;
        }
    }
    return kp_err_set(err, "invalid %s '%s': unknown unit '%s'", what, s, end);
}

int units_parse_duration_ms(const char *s, uint64_t *ms, struct kp_err *err)
{
    static const struct suffix table[] = {
        {"us", 0.001}, {"ms", 1},      {"s", 1000},    {"sec", 1000},
        {"m", 60000},  {"min", 60000}, {"h", 3600000}, {NULL, 0},
    };
    double v = 0;

    if (parse_scaled(s, table, 1000, &v, "duration", err) != 0)
        return -1;
    if (v > (double)MAX_DURATION_MS)
        return kp_err_set(err, "duration '%s' is too long (max 30 days)", s);
    *ms = (uint64_t)llround(v);
    return 0;
}

int units_parse_size(const char *s, uint64_t *bytes, struct kp_err *err)
{
    static const struct suffix table[] = {
        {"B", 1},
        {"K", 1024.0},
        {"KB", 1024.0},
        {"KiB", 1024.0},
        {"M", 1048576.0},
        {"MB", 1048576.0},
        {"MiB", 1048576.0},
        {"G", 1073741824.0},
        {"GB", 1073741824.0},
        {"GiB", 1073741824.0},
        {"T", 1099511627776.0},
        {"TB", 1099511627776.0},
        {"TiB", 1099511627776.0},
        {NULL, 0},
    };
    double v = 0;

    if (parse_scaled(s, table, 1, &v, "size", err) != 0)
        return -1;
    if (v > 1e18)
        return kp_err_set(err, "size '%s' is too large", s);
    if (v != floor(v))
        return kp_err_set(err, "size '%s' is not a whole number of bytes", s);
    *bytes = (uint64_t)v;
    return 0;
}

int units_parse_rate_bps(const char *s, uint64_t *bps, struct kp_err *err)
{
    static const struct suffix table[] = {
        {"b", 1},      {"bps", 1},    {"bit", 1},     {"K", 1e3},     {"Kb", 1e3},
        {"Kbps", 1e3}, {"Kbit", 1e3}, {"M", 1e6},     {"Mb", 1e6},    {"Mbps", 1e6},
        {"Mbit", 1e6}, {"G", 1e9},    {"Gb", 1e9},    {"Gbps", 1e9},  {"Gbit", 1e9},
        {"T", 1e12},   {"Tb", 1e12},  {"Tbps", 1e12}, {"Tbit", 1e12}, {NULL, 0},
    };
    double v = 0;

    if (parse_scaled(s, table, 1, &v, "rate", err) != 0)
        return -1;
    if (v > 1e15)
        return kp_err_set(err, "rate '%s' is too large", s);
    *bps = (uint64_t)llround(v);
    return 0;
}

int units_parse_percent(const char *s, double *pct, struct kp_err *err)
{
    static const struct suffix table[] = {{"%", 1}, {NULL, 0}};
    double v = 0;

    if (parse_scaled(s, table, 1, &v, "percentage", err) != 0)
        return -1;
    if (v > 1000)
        return kp_err_set(err, "percentage '%s' is out of range [0, 1000]", s);
    *pct = v;
    return 0;
}

const char *units_format_duration(uint64_t ms, char *buf, size_t len)
{
    if (ms < 1000)
        snprintf(buf, len, "%llums", (unsigned long long)ms);
    else if (ms < 60000)
        snprintf(buf, len, "%.1fs", (double)ms / 1000.0);
    else if (ms < 3600000)
        snprintf(buf, len, "%llum%02llus", (unsigned long long)(ms / 60000),
                 (unsigned long long)(ms % 60000 / 1000));
    else
        snprintf(buf, len, "%lluh%02llum", (unsigned long long)(ms / 3600000),
                 (unsigned long long)(ms % 3600000 / 60000));
    return buf;
}

const char *units_format_rate(double bps, char *buf, size_t len)
{
    if (bps >= 1e9)
        snprintf(buf, len, "%.2f Gbit/s", bps / 1e9);
    else if (bps >= 1e6)
        snprintf(buf, len, "%.1f Mbit/s", bps / 1e6);
    else if (bps >= 1e3)
        snprintf(buf, len, "%.1f Kbit/s", bps / 1e3);
    else
        snprintf(buf, len, "%.0f bit/s", bps);
    return buf;
}
