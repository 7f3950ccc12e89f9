/* SPDX-License-Identifier: Apache-2.0 */
/* config_int.h - helpers shared by config.c and config_user.c (not part of the public API). */
#ifndef KPERF_KUBE_CONFIG_INT_H
#define KPERF_KUBE_CONFIG_INT_H

#include <jansson.h>

#include "base/kp_err.h"
#include "controller/kube/config.h"

/* obj[key] as a non-empty string (borrowed) or NULL. */
const char *cfg_str(json_t *obj, const char *key);
/* obj[key] is a YAML true ("true", "True", "yes", ...). */
int cfg_bool(json_t *obj, const char *key);
/* Reads a whole file of at most max bytes: *out NUL-terminated, caller frees (kp_free_secret
 * for secrets). Safe for secrets: no copy is left in freed memory, also when reading fails. */
KP_MUST_CHECK int cfg_read_file(const char *path, size_t max, char **out, size_t *len,
                                struct kp_err *err);
/* Fills the user fields of c from a users[].user stanza. */
KP_MUST_CHECK int cfg_resolve_user(struct kube_config *c, json_t *user, struct kp_err *err);
/* Keeps the cluster's client.authentication.k8s.io/exec extension for exec plugins. */
int cfg_exec_extension(struct kube_config *c, json_t *cluster);

#endif
