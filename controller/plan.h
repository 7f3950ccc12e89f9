/* SPDX-License-Identifier: Apache-2.0 */
/* plan.h - what a run measures, in which order: scenarios x placements x tests x samples.
 * Owns the vocabulary of scenarios and placements (tests: base/testkind.h), the ordered list of
 * measurement groups and the skip list (a (scenario, placement) that a backend cannot provide is
 * kept with its reason, never dropped). Knows nothing of backends, processes or reports.
 *
 * Vocabulary (these exact strings appear in reports):
 *   scenarios   pod-to-pod, host-to-host, pod-to-service, pod-to-external, pod-to-dns
 *               (pod-to-dns: one group per node, placement node:<name>, once the backend
 *               knows the nodes: plan_expand_dns)
 *   placements  same-node, other-node   (client and server pod on the same / another node)
 *               external                (pod-to-external only: the server is outside the
 *                                        cluster, so node placement does not apply)
 *               node:<name>             (sweep mode, --all-nodes: the client ran on <name>
 *                                        and the server on the reference node)
 *   tests       TCP_RR, TCP_CRR, UDP_RR, TCP_RR_LOADED, TCP_STREAM, TCP_STREAM_MULTI,
 *               UDP_STREAM
 *               (enum test_kind, their order and properties: base/testkind.h)
 *
 * pod-to-external measures both directions from the pod: every selected test once as is, and
 * the stream tests (TCP_STREAM, TCP_STREAM_MULTI, UDP_STREAM) once more with reverse = true
 * (the external server sends). The agent marks those results "reverse": true; reports show
 * them as their own rows.
 *
 * NetworkPolicy datapath cost (--netpol-rules N,...): after the groups above, the pod-to-pod and
 * pod-to-service groups once more for each N > 0, in ascending N, with netpol_rules = N and the
 * placement label "<placement>/netpol-<N>" (so they are rows of their own, by the one row key,
 * base/rowkey.h); the runner has the backend put a policy of N rules selecting the servers in
 * place before the first group of each N (backend.h, netpol_apply). N = 0 is the groups above.
 *
 * Services at scale (--services N,... with two or more sizes): after the groups above, the
 * pod-to-service groups once more for each size but the smallest, in ascending size; every
 * pod-to-service group has services_sized = true and services = its size; the smallest size's
 * groups keep their place and plain label when it is 0, else they get "<placement>/services-<N>"
 * as every larger size's do. The runner has the backend put that many extra Services in place
 * (and measure their programming latency) before the first group of each size (backend.h,
 * services_apply). Not with --netpol-rules (run_options.c refuses the two together).
 *
 * A plan is a list of groups in run order. A group is one (scenario, placement, reverse)
 * with its tests in canonical order; each test runs `samples` times. A backend may run a
 * whole group with one client (k8s: one Job) or each test on its own (local). */
#ifndef KPERF_CONTROLLER_PLAN_H
#define KPERF_CONTROLLER_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/testkind.h"

struct kp_err;
struct run_options;

enum scenario {
    SCENARIO_POD_TO_POD = 0,
    SCENARIO_HOST_TO_HOST,
    SCENARIO_POD_TO_SERVICE,
    SCENARIO_POD_TO_EXTERNAL,
    SCENARIO_POD_TO_DNS, /* asked for, never implied by "all" (docs/kubernetes.md) */
    SCENARIO_COUNT,
};

enum placement {
    PLACEMENT_SAME_NODE = 0,
    PLACEMENT_OTHER_NODE,
    PLACEMENT_EXTERNAL,
    PLACEMENT_NODE, /* sweep: the group's `node` names the client node */
    PLACEMENT_COUNT,
};

/* Bit masks over the enums above: (1u << SCENARIO_x), (1u << PLACEMENT_x), (1u << TEST_x). */
/* "all": every scenario but pod-to-dns, whose lookups load the cluster's own DNS (asked for) */
#define SCENARIO_ALL_MASK (((1u << SCENARIO_COUNT) - 1) & ~(1u << SCENARIO_POD_TO_DNS))
/* pod-to-dns measures DNS lookups over UDP (a UDP_RR row) and TCP (a TCP_CRR row), whatever
 * --tests says */
#define TEST_DNS_MASK ((1u << TEST_UDP_RR) | (1u << TEST_TCP_CRR))
/* "all": every test but the loaded ones (base/testkind.h: filling the path is asked for) */
#define TEST_ALL_MASK (((1u << TEST_COUNT) - 1) & ~(1u << TEST_TCP_RR_LOADED))
#define TEST_DEFAULT_MASK                                                                          \
    ((1u << TEST_TCP_RR) | (1u << TEST_TCP_STREAM) | (1u << TEST_TCP_STREAM_MULTI))
#define PLACEMENT_BOTH_MASK ((1u << PLACEMENT_SAME_NODE) | (1u << PLACEMENT_OTHER_NODE))

/* Names (static strings) and lookups. *_from_name return -1 for an unknown name. */
const char *plan_scenario_name(enum scenario s);
const char *plan_placement_name(enum placement p); /* "node" for PLACEMENT_NODE */
int plan_scenario_from_name(const char *name);
/* Test names and properties: base/testkind.h (one table for protocol, plan, result, report). */

/* One group of measurements: the unit a backend runs with one client (or test by test). */
struct plan_group {
    enum scenario scenario;
    enum placement placement;
    char *node;                       /* PLACEMENT_NODE only: the client node; owned by the plan */
    char *placement_label;            /* "same-node", "external", "node:ip-10-0-1-5" ...; owned */
    bool reverse;                     /* the server sends (stream tests of pod-to-external) */
    enum test_kind tests[TEST_COUNT]; /* canonical order */
    size_t n_tests;
    bool skipped;
    char *skip_reason;     /* owned; set when skipped */
    const char *ip_family; /* "IPv4" or "IPv6" (static) once plan_set_families ran; else NULL */
    unsigned netpol_rules; /* --netpol-rules: the policy's size for this group; 0 = none */
    bool services_sized;   /* --services with several sizes: the group needs `services` extra */
    unsigned services;     /* Services in place (pod-to-service groups only) */
};

struct plan; /* opaque */

/* What to plan; plan_opts_from_run_options fills it from the flags. */
struct plan_opts {
    unsigned scenarios;   /* mask of scenarios */
    unsigned placements;  /* mask of PLACEMENT_SAME_NODE / PLACEMENT_OTHER_NODE */
    unsigned tests;       /* mask of tests */
    int samples;          /* >= 1; for --samples auto, the minimum number of samples */
    bool samples_auto;    /* repeat until the 95% interval is narrow (bounded by samples_max) */
    int samples_max;      /* auto only */
    unsigned duration_ms; /* one sample of one test, measured part */
    unsigned omit_ms;     /* warm-up, discarded, per sample */
    const unsigned *netpol_rules; /* policy sizes, ascending (borrowed by plan_new only) */
    size_t n_netpol_rules;
    const unsigned *services; /* --services sizes, ascending (borrowed by plan_new only); */
    size_t n_services;        /* fewer than two: no sized groups */
};

/* Builds the plan: groups in the order scenario, placement (same-node before other-node),
 * direction (forward before reverse). Never NULL; caller frees with plan_free. */
struct plan *plan_new(const struct plan_opts *opts);
void plan_free(struct plan *p); /* NULL is a no-op */

void plan_opts_from_run_options(const struct run_options *ro, struct plan_opts *out);

/* The groups in run order (borrowed until plan_free; indices stay valid except across
 * plan_expand_sweep). */
size_t plan_group_count(const struct plan *p);
const struct plan_group *plan_group_get(const struct plan *p, size_t i);

/* Marks every group of (scenario, placement) skipped with a reason (printf-like). A placement
 * of PLACEMENT_COUNT means every placement of the scenario. Returns how many groups were
 * marked. Backends call this from prepare(). */
size_t plan_skip(struct plan *p, enum scenario s, enum placement pl, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Sweep mode, while running: marks every not yet skipped sweep group (PLACEMENT_NODE) whose
 * client node is `node`, or whose index is in `extra` (n_extra of them), skipped with reason
 * (copied). The runner reports groups skipped mid-run when it reaches them. Returns how many
 * were marked. */
size_t plan_skip_node(struct plan *p, const char *node, const size_t *extra, size_t n_extra,
                      const char *reason);

/* Sweep mode: replaces the other-node groups of every scenario by one group per client node
 * (placement PLACEMENT_NODE, label "node:<name>"), then, when the group has stream tests, one
 * reverse group per node with those (the server sends: both directions of every pair). names
 * borrowed; copied. */
void plan_expand_sweep(struct plan *p, const char *const *names, size_t n);

/* pod-to-dns: replaces its group by one group per node (placement PLACEMENT_NODE, label
 * "node:<name>", tests TEST_DNS_MASK). names borrowed; copied. */
void plan_expand_dns(struct plan *p, const char *const *names, size_t n);

/* The address families the run measures, decided by the backend in prepare: with one, every
 * group gets it as ip_family; with two, every group is replaced by one group per family
 * (adjacent, in the order given). families are "IPv4"/"IPv6"; anything else (or n = 0 or
 * n > 2) leaves the plan as it is. */
void plan_set_families(struct plan *p, const char *const *families, size_t n);

/* Counting for progress: measurements (test x sample, each direction counted) that will run
 * (not skipped), with samples at their minimum for auto; and the expected measurement time in
 * milliseconds (duration + omit per measurement, no overhead). */
size_t plan_measurement_count(const struct plan *p);
unsigned long long plan_expected_ms(const struct plan *p);

#endif
