/* SPDX-License-Identifier: Apache-2.0 */
/* config_int.h - helpers shared by config.c and config_user.c (not part of the public API). */
#ifndef KPERF_KUBE_CONFIG_INT_H
#define KPERF_KUBE_CONFIG_INT_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/kube/config.h"

/* obj[key] as a non-empty string (borrowed) or NULL. */
const char *cfg_str(json_t *obj, const char *key);
/* obj[key] is a boolean true (the file is loaded typed; strings are refused by the type check). */
int cfg_bool(json_t *obj, const char *key);
/* Reads a whole file of at most max bytes: *out NUL-terminated, caller frees (kp_free_secret
 * for secrets). Safe for secrets: no copy is left in freed memory, also when reading fails. */
KP_MUST_CHECK int cfg_read_file(const char *path, size_t max, char **out, size_t *len,
                                struct kp_err *err);
/* -1 with kubectl's "unable to read <what> <path> for <owner> due to <errno text>" when path
 * cannot be opened for reading. */
KP_MUST_CHECK int cfg_file_readable(const char *what, const char *path, const char *owner,
                                    struct kp_err *err);
/* Checks the types of every field kubectl knows in one parsed file (config_types.c): -1 with
 * "users[0].user.token must be a string, not a number (...)" when one is wrong. */
KP_MUST_CHECK int cfg_check_types(json_t *doc, struct kp_err *err);
/* Fills the user fields of c from a users[].user stanza. */
KP_MUST_CHECK int cfg_resolve_user(struct kube_config *c, json_t *user, struct kp_err *err);
/* Frees an exec plugin config (NULL is a no-op). */
void cfg_exec_free(struct kube_exec_config *e);
/* Forgets the user's credentials (an http:// server gets none, as with kubectl: no token in
 * clear text, no exec plugin run); impersonation is kept: kubectl sends it over http:// too. */
void cfg_drop_user_creds(struct kube_config *c);
/* Keeps the cluster's client.authentication.k8s.io/exec extension for exec plugins. */
int cfg_exec_extension(struct kube_config *c, json_t *cluster);

#endif
