/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_image.c - image reference checks (see k8s_image.h). */
#include "controller/k8s/k8s_image.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"

#define NAME_MAX_LEN 255 /* the reference grammar's limit on domain + path */
#define TAG_MAX_LEN  128

static int alnum_lower(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* a path component: [a-z0-9]+ joined by ".", "_", "__" or runs of "-" */
static int path_component_ok(const char *s, size_t n)
{
    if (n == 0 || !alnum_lower(s[0]) || !alnum_lower(s[n - 1]))
        return 0;
    for (size_t i = 1; i < n; i++) {
        if (alnum_lower(s[i]) || s[i] == '-')
            continue;
        if (s[i] == '.' || s[i] == '_') {
            int two = s[i] == '_' && s[i + 1] == '_';
            if (!alnum_lower(s[i - 1]) || !alnum_lower(s[i + 1 + two]))
                return 0;
            i += (size_t)two;
            continue;
        }
        return 0;
    }
    return 1;
}

/* a domain: host labels ([A-Za-z0-9-], dot-separated) or a bracketed IPv6, then :port */
static int domain_ok(const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    size_t host = n;

    if (n && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close)
            return 0;
        host = (size_t)(close - s) + 1;
        colon = host < n ? s + host : NULL;
        if (colon && *colon != ':')
            return 0;
    } else {
        host = colon ? (size_t)(colon - s) : n;
        if (host == 0 || s[0] == '.' || s[0] == '-' || s[host - 1] == '.' || s[host - 1] == '-')
            return 0;
        for (size_t i = 0; i < host; i++)
            if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.')
                return 0;
    }
    if (colon) {
        size_t plen = n - (size_t)(colon - s) - 1;
        if (plen == 0 || plen > 5)
            return 0;
        for (size_t i = 1; i <= plen; i++)
            if (!isdigit((unsigned char)colon[i]))
                return 0;
    }
    return 1;
}

static int tag_ok(const char *t)
{
    size_t n = strlen(t);

    if (n == 0 || n > TAG_MAX_LEN || !(isalnum((unsigned char)t[0]) || t[0] == '_'))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!isalnum((unsigned char)t[i]) && t[i] != '_' && t[i] != '.' && t[i] != '-')
            return 0;
    return 1;
}

/* "sha256:" and 64 lowercase hex digits (the only algorithm registries use today) */
static int digest_ok(const char *d)
{
    if (strncmp(d, "sha256:", 7) != 0 || strlen(d + 7) != 64)
        return 0;
    for (const char *p = d + 7; *p; p++)
        if (!isdigit((unsigned char)*p) && !(*p >= 'a' && *p <= 'f'))
            return 0;
    return 1;
}

/* Splits name into domain and path: the first component is a domain when it holds a "." or
 * ":", or is "localhost" (what Docker decides too); the rest are path components. */
static int split_name(const char *name, struct k8s_image_ref *out, struct kp_err *err)
{
    const char *slash = strchr(name, '/');
    const char *path = name;

    if (slash) {
        size_t n = (size_t)(slash - name);
        if (memchr(name, '.', n) || memchr(name, ':', n) ||
            (n == 9 && !strncmp(name, "localhost", 9)) || name[0] == '[') {
            if (!domain_ok(name, n))
                return kp_err_set(err, "'%.*s' is not a registry host[:port]", (int)n, name);
            out->domain = kp_xstrndup(name, n);
            path = slash + 1;
        }
    }
    for (const char *p = path;;) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (!path_component_ok(p, n))
            return kp_err_set(err,
                              "'%.*s' is not a repository path component (lowercase letters, "
                              "digits, and . _ - between them)",
                              (int)n, p);
        if (!end)
            break;
        p = end + 1;
    }
    out->path = kp_xstrdup(path);
    return 0;
}

int k8s_image_parse(const char *ref, struct k8s_image_ref *out, struct kp_err *err)
{
    char *name = kp_xstrdup(ref ? ref : "");
    char *at = strchr(name, '@');
    char *last_slash;
    char *colon;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (at) {
        *at = '\0';
        if (!digest_ok(at + 1)) {
            kp_err_set(err, "digest '%s' is not sha256: and 64 lowercase hex digits", at + 1);
            goto out;
        }
        out->digest = kp_xstrdup(at + 1);
    }
    last_slash = strrchr(name, '/');
    colon = strrchr(last_slash ? last_slash : name, ':');
    if (colon) {
        *colon = '\0';
        if (!tag_ok(colon + 1)) {
            kp_err_set(err, "tag '%s' is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", colon + 1);
            goto out;
        }
        out->tag = kp_xstrdup(colon + 1);
    }
    if (!*name || strlen(name) > NAME_MAX_LEN) {
        kp_err_set(err, "the repository name is empty or longer than %d characters", NAME_MAX_LEN);
        goto out;
    }
    rc = split_name(name, out, err);
out:
    if (rc != 0) {
        k8s_image_ref_cleanup(out);
        kp_err_prefix(err, "image '%s'", ref ? ref : "");
    }
    free(name);
    return rc;
}

void k8s_image_ref_cleanup(struct k8s_image_ref *r)
{
    free(r->domain);
    free(r->path);
    free(r->tag);
    free(r->digest);
    memset(r, 0, sizeof(*r));
}
