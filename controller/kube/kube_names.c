/* SPDX-License-Identifier: Apache-2.0 */
/* kube_names.c - Kubernetes name and quantity syntax (see kube_names.h). */
#include "controller/kube/kube_names.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN      63
#define SUBDOMAIN_MAX_LEN 253

static int is_alnum(char c)
{
    return isalnum((unsigned char)c) != 0;
}

/* [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])? of n characters (n may be 0: not valid) */
static int is_name_part(const char *s, size_t n)
{
    if (n == 0 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    }
    return 1;
}

static int is_subdomain(const char *s, size_t n)
{
    if (n == 0 || n > SUBDOMAIN_MAX_LEN)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int end = i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.';
        if (islower((unsigned char)c) || isdigit((unsigned char)c))
            continue;
        if ((c == '-' || c == '.') && !end)
            continue;
        return 0;
    }
    return 1;
}

int kube_names_check_key(const char *key, struct kp_err *err)
{
    const char *slash = strchr(key, '/');
    const char *name = slash ? slash + 1 : key;

    if (slash && !is_subdomain(key, (size_t)(slash - key)))
        return kp_err_set(err,
                          "'%s': the prefix before '/' must be a lowercase DNS subdomain "
                          "(e.g. example.com)",
                          key);
    if (strlen(name) > NAME_MAX_LEN || !is_name_part(name, strlen(name)))
        return kp_err_set(err,
                          "'%s' is not a valid key: at most 63 characters of A-Z a-z 0-9 - _ . "
                          "starting and ending with a letter or digit, after an optional "
                          "prefix/",
                          key);
    return 0;
}

int kube_names_check_label_value(const char *value, struct kp_err *err)
{
    size_t n = strlen(value);

    if (n == 0)
        return 0;
    if (n > NAME_MAX_LEN || !is_name_part(value, n))
        return kp_err_set(err,
                          "'%s' is not a valid label value: at most 63 characters of A-Z a-z "
                          "0-9 - _ . starting and ending with a letter or digit",
                          value);
    return 0;
}

int kube_names_check_subdomain(const char *name, struct kp_err *err)
{
    if (!is_subdomain(name, strlen(name)))
        return kp_err_set(err,
                          "'%s' is not a valid name: a lowercase DNS subdomain (a-z 0-9 - .) "
                          "of at most 253 characters",
                          name);
    return 0;
}

struct suffix {
    const char *text;
    double factor;
};

static const struct suffix suffixes[] = {
    {"Ki", 1024.0},
    {"Mi", 1048576.0},
    {"Gi", 1073741824.0},
    {"Ti", 1099511627776.0},
    {"Pi", 1125899906842624.0},
    {"Ei", 1152921504606846976.0},
    {"n", 1e-9},
    {"u", 1e-6},
    {"m", 1e-3},
    {"", 1.0},
    {"k", 1e3},
    {"M", 1e6},
    {"G", 1e9},
    {"T", 1e12},
    {"P", 1e15},
    {"E", 1e18},
};

int kube_names_parse_quantity(const char *s, double *out, struct kp_err *err)
{
    const char *p = s;
    char *end = NULL;
    double v;

    if (*p == '+')
        p++;
    /* digits with at most one '.', at least one digit */
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        goto bad;
    errno = 0;
    v = strtod(p, &end);
    if (errno || end == p || !isfinite(v))
        goto bad;
    /* strtod also reads hex, inf and exponents: allow only what apimachinery does */
    for (const char *q = p; q < end; q++) {
        if (!isdigit((unsigned char)*q) && *q != '.' && *q != 'e' && *q != 'E' && *q != '+' &&
            *q != '-')
            goto bad;
    }
    if (*end == '\0') {
        *out = v;
        return 0;
    }
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (strcmp(end, suffixes[i].text) == 0) {
            *out = v * suffixes[i].factor;
            return 0;
        }
    }
bad:
    return kp_err_set(err,
                      "'%s' is not a quantity: a number with an optional suffix (100m, 0.5, "
                      "64Mi, 1Gi, 2G)",
                      s);
}
