/* SPDX-License-Identifier: Apache-2.0 */
/* runner_netpol.h - the runner's side of --netpol-rules (plan.h, "NetworkPolicy datapath
 * cost"): which policy size is in place, and the backend asked for another when a group needs
 * it (backend.h, netpol_apply). For runner.c only. */
#ifndef KPERF_CONTROLLER_RUNNER_NETPOL_H
#define KPERF_CONTROLLER_RUNNER_NETPOL_H

#include <stdbool.h>

#include "controller/backend.h"
#include "controller/report/report.h"
#include "controller/runner.h"

/* The size in place, and one that could not be (its groups fail without asking again). Zero
 * it before the first group. */
struct runner_netpol {
    unsigned in_place, failed; /* failed 0 = none */
    char why[256];
};

/* Puts policy size `rules` in place unless it is already (the groups of one size are adjacent:
 * once per size; 0 after the last group removes it). false when it could not be: the rows of rg
 * carry the error and out counts them (rg NULL, at the end: a warning only). */
bool runner_netpol_ready(struct backend *b, unsigned rules, struct report_group *rg,
                         struct runner_netpol *st, struct runner_outcome *out);

/* --netpol-readiness, after the rows: the backend's per-node readiness into md.netpol; when it
 * could not be measured, the error is logged and out counts a failure. */
void runner_netpol_readiness(struct backend *b, json_t *md, struct runner_outcome *out);

#endif
