/* SPDX-License-Identifier: Apache-2.0 */
/* run_values.h - the value parsers of `kperf run`'s flags (run_flags.c): numbers in a range,
 * comma lists, scenarios, tests, node selectors, tolerations, HOST[:PORT]. Each returns 0, or -1
 * with one line in err naming the flag. Split from run_flags.c, which keeps the table and the
 * per-group handlers. */
#ifndef KPERF_CMD_RUN_VALUES_H
#define KPERF_CMD_RUN_VALUES_H

#include "base/kp_err.h"

struct run_options;

struct kp_err;

/* s as a whole number in [lo, hi] into out; flag names it in the error. */
KP_MUST_CHECK int rv_parse_int(const char *s, long lo, long hi, long *out, const char *flag,
                               struct kp_err *err);
/* Splits a comma list and calls fn for each non-empty item; stops at the first error. */
KP_MUST_CHECK int rv_for_each_item(const char *list,
                                   int (*fn)(void *ctx, const char *item, struct kp_err *),
                                   void *ctx, struct kp_err *err);
/* for_each_item callbacks: ctx is an unsigned mask (scenarios, tests) or the run_options. */
int rv_add_scenario(void *ctx, const char *item, struct kp_err *err);
int rv_add_test(void *ctx, const char *item, struct kp_err *err);
/* One --profile item ("[SCENARIO/[PLACEMENT/]]TEST", each part a name or an fnmatch(3)
 * pattern; "all") appended to ((struct run_options *)ctx)->profile_rows. */
int rv_add_profile_row(void *ctx, const char *item, struct kp_err *err);
/* One size of --netpol-rules (0..RUN_NETPOL_RULES_MAX) into ctx, a struct run_options: kept
 * ascending, a repeat dropped. */
int rv_add_netpol_level(void *ctx, const char *item, struct kp_err *err);
/* One size of --services (0..RUN_SERVICES_MAX) into ctx, a struct run_options: kept ascending,
 * a repeat dropped. */
int rv_add_services_size(void *ctx, const char *item, struct kp_err *err);
/* --services N[,N...]: the sizes (rv_add_services_size), the largest as o->services (one size:
 * the run of one size, as before sizes). */
int rv_set_services(struct run_options *o, const char *v, struct kp_err *err);
int rv_add_label(void *ctx, const char *item, struct kp_err *err);
int rv_add_toleration(void *ctx, const char *item, struct kp_err *err);
/* HOST[:PORT], [V6]:PORT or a bare IPv6 address; *port keeps its value when none is given. */
KP_MUST_CHECK int rv_parse_host_port(const char *s, char **host, int *port, struct kp_err *err);

#endif
