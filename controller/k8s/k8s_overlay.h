/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_overlay.h - --pod-overlay FILE: a strategic-merge-style patch of every agent pod template
 * (server DaemonSets, client Jobs). Owns the file's loading, its checks and the merge rules:
 * maps merge, `containers` and `initContainers` merge by `name`, other lists replace, null
 * deletes. An entry named "server" patches the server pods' kperf container and "client" the
 * client pods' (each is left out where the other is kperf's); other names add containers. Refuses
 * what would break a run: fields that are not in the Kubernetes 1.35 schema of a pod template,
 * PodSpec or Container, kperf's labels, the placement (hostNetwork, nodeName, node affinity), and
 * the image, command or args of kperf's own containers. Knows nothing of which objects carry a
 * template (k8s_objects). */
#ifndef KPERF_K8S_K8S_OVERLAY_H
#define KPERF_K8S_K8S_OVERLAY_H

#include <stddef.h>

#include <jansson.h>

#include "base/kp_err.h"

/* the names of kperf's own containers in the agent pods */
#define K8S_OVERLAY_SERVER_CONTAINER "server"
#define K8S_OVERLAY_CLIENT_CONTAINER "client"

/* Reads FILE (YAML or JSON, one document) into *out (new reference, caller releases) and checks
 * it (k8s_overlay_check). Returns 0, or -1 with "<file>: <why>". */
KP_MUST_CHECK int k8s_overlay_load(const char *path, json_t **out, struct kp_err *err);

/* Checks an overlay document: an object with only metadata (labels, annotations) and spec;
 * the field names of spec and of each container entry in the schema; no kperf label; no
 * placement field; no image, command or args for kperf's containers. 0, or -1 with the path
 * of the refused field. */
KP_MUST_CHECK int k8s_overlay_check(const json_t *overlay, struct kp_err *err);

/* True for a label key kperf sets and selects on (kperf.io/..., app.kubernetes.io/name and
 * managed-by): neither --pod-labels nor an overlay may set it. */
int k8s_overlay_reserved_label(const char *key);

/* Merges patch into target (both JSON objects; target modified, patch borrowed) by the rules
 * above. */
void k8s_overlay_merge(json_t *target, const json_t *patch);

/* Applies a checked overlay to a pod template ({metadata, spec}), then checks the result still
 * holds together: at least one container, every container named, every volumeMount naming a
 * volume of the pod. Returns 0, or -1 with why (tmpl is then in an unspecified state). */
KP_MUST_CHECK int k8s_overlay_apply(json_t *tmpl, const json_t *overlay, struct kp_err *err);

/* The field names known for "PodSpec" or "Container" (NULL for another name); *n their
 * count. Static. For the test that compares them with the schema. */
const char *const *k8s_overlay_known_fields(const char *type, size_t *n);

#endif
