/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_yaml.h - JSON <-> YAML for Kubernetes objects, over libyaml. Owns the scalar styling
 * rules (strings that YAML 1.1 would read as numbers, booleans or null are quoted) and the
 * loader limits for manifests (the loader itself is base/yaml_load); knows nothing of what the
 * objects mean. */
#ifndef KPERF_K8S_K8S_YAML_H
#define KPERF_K8S_K8S_YAML_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "base/kp_err.h"

#define K8S_YAML_MAX_BYTES (8u << 20)
#define K8S_YAML_MAX_DEPTH 64

/* Writes each element of `docs` (a JSON array of objects, borrowed) as one YAML document
 * ("---" separated) to f. Returns 0, or -1 with the reason. */
KP_MUST_CHECK int k8s_yaml_emit(FILE *f, const json_t *docs, struct kp_err *err);

/* Parses a YAML stream of one or more documents into a new JSON array (caller releases; empty
 * and null documents are left out). Plain scalars become integers, reals, booleans and null by
 * the YAML 1.2 core rules; quoted ones stay strings. Aliases, duplicate keys and collections
 * nested deeper than K8S_YAML_MAX_DEPTH are refused. Returns 0 with *out set, or -1 with
 * "<name>: line L column C: <reason>". */
KP_MUST_CHECK int k8s_yaml_parse(const char *buf, size_t len, const char *name, json_t **out,
                                 struct kp_err *err);

/* k8s_yaml_parse of a file of at most K8S_YAML_MAX_BYTES (a longer one is refused, naming its
 * path). Returns 0 with *out set, or -1 with the reason. */
KP_MUST_CHECK int k8s_yaml_parse_file(const char *path, json_t **out, struct kp_err *err);

#endif
