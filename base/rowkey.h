/* SPDX-License-Identifier: Apache-2.0 */
/* rowkey.h - the one key of a report row: (scenario, placement, test, reverse, ip_family).
 * The report finds a group's rows by it, compare matches BASE and NEW rows by it, the history
 * trend page follows a row across runs by it, the sweep verdict (outlier.c) and the sweep's
 * scheduler (k8s_sweep.c) group the rows of one metric by it without the placement, and the
 * renderers label rows with it. Owns the vocabulary of scenario and placement names and the
 * rules below; knows nothing of reports, samples or metrics.
 *
 * The rules, the same for every caller:
 *   - ip_family: a row without one has ROWKEY_DEFAULT_FAMILY ("IPv4"). Reports written before
 *     kperf measured address families were IPv4 only, and every newer row carries its family,
 *     so an old IPv4 row and a new one with "ip_family": "IPv4" are the same row.
 *   - reverse: a row without it (or with false) is forward.
 *   - scenario, placement, test: required; a key missing one is not valid (rowkey_valid), and
 *     a row with such a key matches nothing, not even itself.
 *   - sweep rows (--all-nodes) are placement "node:<client node>" (ROWKEY_SWEEP_PREFIX): one
 *     row per node, so rows of one sweep metric share everything but the placement
 *     (rowkey_same_series).
 * Strings of a key are borrowed from the row or the caller: the key lives as long as they do. */
#ifndef KPERF_BASE_ROWKEY_H
#define KPERF_BASE_ROWKEY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define ROWKEY_DEFAULT_FAMILY "IPv4"

/* Scenario and placement names as reports spell them; a runner may use other placements
 * ("churn", "ready" for readiness-only groups). */
#define ROWKEY_SCENARIO_POD_TO_POD      "pod-to-pod"
#define ROWKEY_SCENARIO_HOST_TO_HOST    "host-to-host"
#define ROWKEY_SCENARIO_POD_TO_SERVICE  "pod-to-service"
#define ROWKEY_SCENARIO_POD_TO_EXTERNAL "pod-to-external"
#define ROWKEY_SCENARIO_POD_TO_DNS      "pod-to-dns" /* lookups to the cluster DNS, per node */
#define ROWKEY_PLACEMENT_SAME_NODE      "same-node"
#define ROWKEY_PLACEMENT_OTHER_NODE     "other-node"
#define ROWKEY_PLACEMENT_EXTERNAL       "external"
#define ROWKEY_SWEEP_PREFIX             "node:" /* + the client node's name */

struct rowkey {
    const char *scenario;  /* borrowed; NULL when the row has none */
    const char *placement; /* borrowed; NULL when the row has none */
    const char *test;      /* borrowed; NULL when the row has none */
    const char *ip_family; /* borrowed; never NULL: ROWKEY_DEFAULT_FAMILY when the row has none */
    bool reverse;
};

/* The key of a report row, a compare row or a key object (borrows the row's strings). */
void rowkey_of(const json_t *row, struct rowkey *k);

/* The key from its parts, with the rules above (ip_family NULL = ROWKEY_DEFAULT_FAMILY). */
void rowkey_make(struct rowkey *k, const char *scenario, const char *placement, const char *test,
                 bool reverse, const char *ip_family);

/* True when scenario, placement and test are all present. */
bool rowkey_valid(const struct rowkey *k);

/* True when both keys are valid and name the same row. */
bool rowkey_equal(const struct rowkey *a, const struct rowkey *b);

/* rowkey_equal but for the placement: the rows of one metric of a sweep (one per node). */
bool rowkey_same_series(const struct rowkey *a, const struct rowkey *b);

/* The key as text, for a hash table or a log: the free strings length-prefixed, so distinct
 * keys never give the same text ("10:pod-to-pod9:same-node6:TCP_RR|0|IPv4"). Caller frees;
 * NULL when the key is not valid. */
char *rowkey_text(const struct rowkey *k);

/* The key as a JSON object {scenario, placement, test, reverse, ip_family} (new reference;
 * ip_family always present, by the rule above). */
json_t *rowkey_to_json(const struct rowkey *k);

/* The key as a person reads it, into buf[len] (truncated); returns buf:
 * "pod-to-pod same-node TCP_STREAM (reverse) [IPv6]", the family only when it is not
 * ROWKEY_DEFAULT_FAMILY (rowkey_family_label); a missing part is "?". Not escaped. */
const char *rowkey_label(const struct rowkey *k, char *buf, size_t len);

/* "TCP_STREAM" or "TCP_STREAM (reverse)" into buf[len]; returns buf. */
const char *rowkey_test_label(const struct rowkey *k, char *buf, size_t len);

/* The family as a label shows it: "" for ROWKEY_DEFAULT_FAMILY (every report before families
 * was IPv4), else the family ("IPv6"). Borrowed. */
const char *rowkey_family_label(const struct rowkey *k);

/* The client node of a sweep row (placement "node:NAME": NAME, borrowed), or NULL. */
const char *rowkey_sweep_node(const struct rowkey *k);

#endif
