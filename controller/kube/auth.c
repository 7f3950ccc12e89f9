/* SPDX-License-Identifier: Apache-2.0 */
/* auth.c - see auth.h. */
#include "controller/kube/auth.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/kp_alloc.h"
#include "base/portable.h"
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
    if (stat(path, &st) != 0 || cfg_read_file(path, TOKEN_FILE_MAX, &buf, &len, err) != 0) {
        if (a->file_token)
            return 0; /* keep the last good token, as client-go does */
        if (!kp_err_is_set(err))
            kp_err_set(err, "cannot read token file %s", path);
        return kp_err_prefix(err, "user \"%s\"", a->cfg->user_name);
    }
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    if (len == 0) { /* client-go: "read empty token from file"; never "Bearer " */
        kp_free_secret(buf);
        if (a->file_token)
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
    if (c->token_file) {
        if (token_file(a, now, err) != 0)
            return -1;
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
