/* SPDX-License-Identifier: Apache-2.0 */
/* textsafe.c - control characters and bidi overrides out of text for terminals and CSV. */
#include "base/textsafe.h"

#include <stdarg.h>
#include <string.h>

/* Length of an unsafe character at s (1 to 3 bytes), 0 when s[0] starts a safe one. */
static size_t unsafe_len(const unsigned char *s)
{
    if (s[0] < 0x20 || s[0] == 0x7f)
        return 1;
    if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
        return 2; /* C1 control */
    if (s[0] == 0xe2 && s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae)
        return 3; /* U+202A-U+202E */
    if (s[0] == 0xe2 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)
        return 3; /* U+2066-U+2069 */
    return 0;
}

char *textsafe_inplace(char *s)
{
    unsigned char *r = (unsigned char *)s, *w = (unsigned char *)s;

    while (*r) {
        size_t n = unsafe_len(r);
        if (n) {
            *w++ = '?';
            r += n;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    return s;
}

const char *textsafe(const char *s, char *buf, size_t len)
{
    size_t n;

    if (!len)
        return buf;
    n = s ? strlen(s) : 0;
    if (n >= len)
        n = len - 1;
    if (s)
        memcpy(buf, s, n);
    buf[n] = 0;
    return textsafe_inplace(buf);
}

bool textsafe_csv_formula(const char *s)
{
    return s && (*s == '=' || *s == '+' || *s == '-' || *s == '@');
}

void textsafe_line(FILE *out, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fputs(textsafe_inplace(buf), out);
    fputc('\n', out);
}
