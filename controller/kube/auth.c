/* SPDX-License-Identifier: Apache-2.0 */
/* auth.c - see auth.h. */
#include "controller/kube/auth.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/kp_alloc.h"
#include "base/portable.h"
#include "controller/kube/codec.h"
#include "controller/kube/config_int.h"
#include "controller/kube/exec.h"

#define TOKEN_FILE_MAX     (64u << 10)
#define TOKEN_REREAD_S     60 /* like client-go, even when the file looks unchanged */
#define EXEC_EARLY_REFRESH 30 /* seconds before expiry that a credential counts as expired */

struct auth {
    const struct kube_config *cfg;  /* borrowed */
    volatile sig_atomic_t *abort_a; /* borrowed */
    volatile sig_atomic_t *abort_b;
    char *file_token; /* last good read of token_file (secret) */
    struct stat file_st;
    time_t file_read_at;
    int file_stale; /* re-read on next use */
    struct exec_cred cred;
    int have_cred;
    unsigned cert_generation;
};

struct auth *auth_new(const struct kube_config *cfg, volatile sig_atomic_t *abort_a,
                      volatile sig_atomic_t *abort_b)
{
    struct auth *a = kp_xcalloc(1, sizeof(*a));
    a->cfg = cfg;
    a->abort_a = abort_a;
    a->abort_b = abort_b;
    return a;
}

void auth_free(struct auth *a)
{
    if (!a)
        return;
    kp_free_secret(a->file_token);
    exec_cred_cleanup(&a->cred);
    free(a);
}

static int changed(const struct stat *a, const struct stat *b)
{
    return a->st_ino != b->st_ino || a->st_size != b->st_size ||
           kp_stat_mtime_ns(a) != kp_stat_mtime_ns(b);
}

/* Re-reads the token file when it changed or is a minute old; keeps the last good token. */
static int token_file(struct auth *a, time_t now, struct kp_err *err)
{
    const char *path = a->cfg->token_file;
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int need;

    need = !a->file_token || a->file_stale || now - a->file_read_at >= TOKEN_REREAD_S;
    if (!need && stat(path, &st) == 0 && changed(&st, &a->file_st))
        need = 1;
    if (!need)
        return 0;
    /* client-go keeps the last good token, else falls back to the static token: both
     * token and tokenFile set, the file missing or empty, sends the token */
    if (stat(path, &st) != 0 || cfg_read_file(path, TOKEN_FILE_MAX, &buf, &len, err) != 0) {
        if (a->file_token || a->cfg->token) {
            kp_err_clear(err);
            return 0;
        }
        if (!kp_err_is_set(err))
            kp_err_set(err, "cannot read token file %s", path);
        return kp_err_prefix(err, "user \"%s\"", a->cfg->user_name);
    }
    len = auth_trim_space(buf, len);
    if (len == 0) { /* client-go: "read empty token from file"; never "Bearer " */
        kp_free_secret(buf);
        if (a->file_token || a->cfg->token)
            return 0;
        kp_err_set(err, "read empty token from file \"%s\"", path);
        return kp_err_prefix(err, "user \"%s\"", a->cfg->user_name);
    }
    kp_free_secret(a->file_token);
    a->file_token = buf;
    a->file_st = st;
    a->file_read_at = now;
    a->file_stale = 0;
    return 0;
}

/* Length of the Unicode white space (Go's unicode.IsSpace) that starts at p, 0 if none. */
static size_t space_at(const unsigned char *p, size_t n)
{
    static const char *const wide[] = {"\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80",
                                       "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
                                       "\xe2\x81\x9f", "\xe3\x80\x80"};

    if (n >= 1 && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        return 1;
    if (n >= 3 && p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0x80 && p[2] <= 0x8a)
        return 3; /* U+2000 ... U+200A */
    for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
        size_t w = strlen(wide[i]);
        if (n >= w && !memcmp(p, wide[i], w))
            return w;
    }
    return 0;
}

size_t auth_trim_space(char *buf, size_t len)
{
    const unsigned char *u = (const unsigned char *)buf;
    size_t start = 0, w;

    while (start < len && (w = space_at(u + start, len - start)) > 0)
        start += w;
    for (int again = 1; again && len > start;) {
        again = 0;
        for (size_t back = 1; back <= 3 && back <= len - start; back++) {
            if (space_at(u + len - back, back) == back) {
                len -= back;
                again = 1;
                break;
            }
        }
    }
    memmove(buf, buf + start, len - start);
    kp_wipe(buf + (len - start), start); /* the moved-from tail held token bytes */
    buf[len - start] = '\0';
    return len - start;
}

/* client-go's oidc provider: the id-token must be a JWT whose "exp" is more than 10 s away;
 * without a refresh-token there is no other way to a valid one. */
static int oidc_check(const struct kube_config *c, time_t now, struct kp_err *err)
{
    const char *t = c->token ? c->token : "";
    const char *d1 = strchr(t, '.');
    const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    long long exp = 0;

    if (c->token && (!d2 || strchr(d2 + 1, '.')))
        return kp_err_set(err, "user \"%s\": auth-provider oidc: ID Token is not a valid JWT",
                          c->user_name);
    if (c->token && codec_jwt_exp(d1 + 1, (size_t)(d2 - d1 - 1), &exp) != 0)
        return kp_err_set(err,
                          "user \"%s\": auth-provider oidc: the id-token's claims are not "
                          "base64url JSON",
                          c->user_name);
    if (exp > (long long)now + 10)
        return 0;
    if (c->oidc == 2)
        return kp_err_set(err,
                          "user \"%s\": auth-provider oidc: the id-token has expired and kperf "
                          "does not refresh it (kubectl would, from idp-issuer-url); run any "
                          "kubectl command to refresh it, or use an exec plugin such as kubelogin",
                          c->user_name);
    return kp_err_set(err,
                      "user \"%s\": auth-provider oidc: No valid id-token, and cannot refresh "
                      "without refresh-token; log in again (or use kubelogin)",
                      c->user_name);
}

static int exec_cred(struct auth *a, time_t now, struct kp_err *err)
{
    struct exec_cred fresh;

    if (a->have_cred && (a->cred.expiry == 0 || now < a->cred.expiry - EXEC_EARLY_REFRESH))
        return 0;
    if (exec_run(a->cfg, a->abort_a, a->abort_b, &fresh, err) != 0)
        return kp_err_prefix(err, "user \"%s\"", a->cfg->user_name);
    if (fresh.cert && (!a->cred.cert || strcmp(fresh.cert, a->cred.cert) != 0))
        a->cert_generation++;
    exec_cred_cleanup(&a->cred);
    a->cred = fresh;
    a->have_cred = 1;
    return 0;
}

int auth_get(struct auth *a, time_t now, struct auth_creds *out, struct kp_err *err)
{
    const struct kube_config *c = a->cfg;

    memset(out, 0, sizeof(*out));
    out->token = c->token;
    out->cert_pem = c->cert_data;
    out->cert_len = c->cert_data_len;
    out->key_pem = c->key_data;
    out->key_len = c->key_data_len;
    out->cert_file = c->cert_file;
    out->key_file = c->key_file;
    if (c->oidc && oidc_check(c, now, err) != 0)
        return -1;
    if (c->token_file) {
        if (token_file(a, now, err) != 0)
            return -1;
        if (a->file_token)
            out->token = a->file_token;
    }
    if (c->exec) {
        if (exec_cred(a, now, err) != 0)
            return -1;
        if (a->cred.token)
            out->token = a->cred.token;
        if (a->cred.cert) {
            out->cert_pem = a->cred.cert;
            out->cert_len = a->cred.cert_len;
            out->key_pem = a->cred.key;
            out->key_len = a->cred.key_len;
            out->cert_file = out->key_file = NULL;
        }
    }
    if (out->token && !*out->token)
        out->token = NULL; /* an empty token file: no Authorization header, as client-go */
    out->cert_generation = a->cert_generation;
    return 0;
}

int auth_invalidate(struct auth *a)
{
    int can = 0;

    if (a->cfg->exec) {
        exec_cred_cleanup(&a->cred);
        a->have_cred = 0;
        can = 1;
    }
    if (a->cfg->token_file) {
        a->file_stale = 1;
        can = 1;
    }
    return can;
}
