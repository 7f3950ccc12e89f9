/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_arch.h - CPU architectures of nodes and the --arch rule: the node pair (servers on A,
 * other-node clients on B) and a sweep's ring never mix arm64 and amd64 unless asked, because a
 * pair across architectures measures two machines' CPUs as much as the network between them.
 *   --arch amd64|arm64  only nodes of that architecture are eligible;
 *   (default)           the architecture of --nodes A when named, else the one most eligible
 *                       nodes have (a tie: the first node's in name order); the others are
 *                       left out, said once;
 *   --arch any          every node, pairs as if architectures did not exist (they may mix);
 *   --arch mixed        every node, and node B of another architecture than A (a cross-arch
 *                       pair on purpose); a sweep's ring then takes every node, as with any.
 * A node's architecture: k8s_facts_node_arch. Pure functions over Node objects the caller
 * fetched; unit-tested. */
#ifndef KPERF_K8S_K8S_ARCH_H
#define KPERF_K8S_K8S_ARCH_H

#include <jansson.h>

#include "base/kp_err.h"

/* The architecture every node of the run must have, from --arch (want; NULL = default) and the
 * nodes eligible by every other rule (array, borrowed), named_a the --nodes A name or NULL.
 * *arch: "amd64"/"arm64" (static or borrowed from nodes), or NULL = no constraint (any, mixed,
 * or nodes that say nothing of their architecture). *note (caller frees, may be NULL): one line
 * naming the nodes a default choice leaves out. Returns 0, or -1 with the reason: no eligible
 * node of that architecture, or mixed on a single-architecture cluster. */
KP_MUST_CHECK int k8s_arch_pick(const json_t *nodes, const char *want, const char *named_a,
                                const char **arch, char **note, struct kp_err *err);

/* k8s_arch_pick on *nodes, then *nodes replaced by those of the chosen architecture (a new
 * array of the same Node objects; the old one released); each node left out is said at INFO,
 * the note at WARN. *arch as for k8s_arch_pick (borrowed from a node still in *nodes, or want).
 * Returns 0, or -1 with the reason (*nodes unchanged). */
KP_MUST_CHECK int k8s_arch_apply(json_t **nodes, const char *want, const char *named_a,
                                 const char **arch, struct kp_err *err);

/* --arch mixed: node B of another architecture than *a (among nodes, borrowed), the first in
 * name order that shares A's zone, else the first. b_named: B was given by --nodes (then it
 * must differ, or -1). *b borrowed from nodes. Returns 0, or -1 with the reason. */
KP_MUST_CHECK int k8s_arch_cross_partner(const json_t *nodes, const json_t *a, const json_t **b,
                                         int b_named, struct kp_err *err);

#endif
