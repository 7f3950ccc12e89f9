/* SPDX-License-Identifier: Apache-2.0 */
/* yamldoc.h - a guarded YAML loader: one YAML (or JSON) document into a jansson tree of
 * objects, arrays and strings. Owns the safety limits (size, depth, node count, no aliases);
 * leaves the meaning of the document to its caller (kube/config.c). Scalars stay strings:
 * "true", "443" and "null" are interpreted by the caller. */
#ifndef KPERF_KUBE_YAMLDOC_H
#define KPERF_KUBE_YAMLDOC_H

#include <jansson.h>
#include <stddef.h>

#include "base/kp_err.h"

struct yamldoc_limits {
    size_t max_bytes;
    int max_depth;
    long max_nodes;
};

/* Parses the first document of buf[0..len). Returns 0 with *out = new reference (an empty
 * document gives an empty object; caller json_decref), or -1 with "line L column C: what" in
 * err. Aliases are refused (no alias bombs); depth, node count and size are capped. */
int yamldoc_load(const char *buf, size_t len, const struct yamldoc_limits *lim, json_t **out,
                 struct kp_err *err);

#endif
