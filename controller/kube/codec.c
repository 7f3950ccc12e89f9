/* SPDX-License-Identifier: Apache-2.0 */
/* codec.c - see codec.h. */
#include "controller/kube/codec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/kp_alloc.h"

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    return -1;
}

int codec_b64_decode(const char *in, size_t len, char **out, size_t *out_len)
{
    char *buf = kp_xmalloc(len / 4 * 3 + 4);
    size_t n = 0;
    unsigned acc = 0;
    int bits = 0;
    int pad = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        int v;

        if (isspace(c))
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        v = b64_value(c);
        if (v < 0 || pad > 0) {
            free(buf);
            return -1;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[n++] = (char)((acc >> bits) & 0xff);
        }
    }
    if (bits >= 6 || pad > 2) { /* a lone trailing character cannot encode a byte */
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return 0;
}

char *codec_b64_encode(const char *in, size_t len)
{
    char *out = kp_xmalloc((len + 2) / 3 * 4 + 1);
    const unsigned char *p = (const unsigned char *)in;
    size_t o = 0;

    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        out[o++] = b64_chars[(v >> 18) & 63];
        out[o++] = b64_chars[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64_chars[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < len ? b64_chars[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

char *codec_query_escape(const char *s)
{
    size_t len = strlen(s);
    char *out = kp_xmalloc(len * 3 + 1);
    size_t o = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            out[o++] = (char)c;
        } else {
            snprintf(out + o, 4, "%%%02X", c);
            o += 3;
        }
    }
    out[o] = '\0';
    return out;
}

static int digits(const char *s, int n, int *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

int codec_rfc3339_parse(const char *s, time_t *out)
{
    struct tm tm;
    int y, mo, d, h, mi, sec;
    long off = 0;
    const char *p;

    if (strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
        s[13] != ':' || s[16] != ':')
        return -1;
    if (digits(s, 4, &y) || digits(s + 5, 2, &mo) || digits(s + 8, 2, &d) ||
        digits(s + 11, 2, &h) || digits(s + 14, 2, &mi) || digits(s + 17, 2, &sec))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    p = s + 19;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if ((*p == '+' || *p == '-') && strlen(p) == 6 && p[3] == ':') {
        int oh, om;
        if (digits(p + 1, 2, &oh) || digits(p + 4, 2, &om))
            return -1;
        off = (oh * 3600L + om * 60L) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return -1;
    }
    if (*p)
        return -1;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    *out = timegm(&tm) - off;
    return 0;
}

int codec_jwt_exp(const char *claims_b64url, size_t len, long long *exp)
{
    char *std = kp_xmalloc(len + 4);
    char *raw = NULL;
    size_t n = 0;
    json_t *doc, *v;
    int rc = -1;

    *exp = 0;
    for (size_t i = 0; i < len; i++) {
        char c = claims_b64url[i];
        if (c == '+' || c == '/' || c == '=')
            goto out; /* base64url without padding only, as Go's RawURLEncoding */
        std[i] = c == '-' ? '+' : c == '_' ? '/' : c;
    }
    std[len] = '\0';
    if (codec_b64_decode(std, len, &raw, &n) != 0)
        goto out;
    doc = json_loadb(raw, n, 0, NULL);
    if (!json_is_object(doc)) {
        json_decref(doc);
        goto out;
    }
    v = json_object_get(doc, "exp");
    if (json_is_number(v))
        *exp = (long long)json_number_value(v);
    json_decref(doc);
    rc = 0;
out:
    free(std);
    free(raw);
    return rc;
}
