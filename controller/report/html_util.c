/* SPDX-License-Identifier: Apache-2.0 */
/* html_util.c - HTML escaping and numbers for people (html_util.h). */
#include "controller/report/html_util.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

void html_esc(const char *s, FILE *out)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        case '\n':
        case '\t':
            fputc(c, out);
            break;
        default:
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, out);
        }
    }
}

char *html_number_fmt(double v, int decimals, char *buf, size_t n)
{
    size_t len;

    if (n == 0)
        return buf;
    if (!isfinite(v)) {
        snprintf(buf, n, "-");
        return buf;
    }
    decimals = decimals < 0 ? 0 : decimals > 9 ? 9 : decimals;
    /* %f never switches to exponent notation; a value past 1e300 is still digits, cut by n */
    snprintf(buf, n, "%.*f", decimals, v);
    len = strlen(buf);
    if (strchr(buf, '.')) {
        while (len > 0 && buf[len - 1] == '0')
            buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '.')
            buf[--len] = '\0';
    }
    if (strcmp(buf, "-0") == 0)
        snprintf(buf, n, "0");
    return buf;
}

char *html_number_sig(double v, int digits, char *buf, size_t n)
{
    int mag = v != 0 && isfinite(v) ? (int)floor(log10(fabs(v))) : 0;

    digits = digits < 1 ? 1 : digits > 9 ? 9 : digits;
    return html_number_fmt(v, digits - 1 - mag, buf, n); /* clamped to 0..9 decimals */
}

void html_number(double v, FILE *out)
{
    char buf[352]; /* DBL_MAX has 309 digits */

    if (fabs(v) < 1) /* 0.0000125 stays itself, not 0 */
        fputs(html_number_sig(v, 4, buf, sizeof(buf)), out);
    else
        fputs(html_number_fmt(v, 3, buf, sizeof(buf)), out);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

void html_number_for_key(const char *key, double v, FILE *out)
{
    if (key && ends_with(key, "_unix_s") && v > 0 && v < 1e11) {
        time_t t = (time_t)v;
        struct tm tm;
        char buf[64];
        gmtime_r(&t, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
        fputs(buf, out);
        return;
    }
    if (key && ends_with(key, "_ms")) {
        html_number(v >= 1000 ? v / 1000 : v, out);
        fputs(v >= 1000 ? " s" : " ms", out);
        return;
    }
    html_number(v, out);
    if (key && ends_with(key, "_s"))
        fputs(" s", out);
}
