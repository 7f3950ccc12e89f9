/* SPDX-License-Identifier: Apache-2.0 */
/* runner_services.h - the runner's side of --services with several sizes (plan.h, "Services at
 * scale"): the backend asked for each size's extra Services before that size's first group
 * (backend.h, services_apply), and each size's figures into metadata.services_sizes
 * (docs/report.md). One size is the backend's own business in prepare (metadata.services).
 * For runner.c only. */
#ifndef KPERF_CONTROLLER_RUNNER_SERVICES_H
#define KPERF_CONTROLLER_RUNNER_SERVICES_H

#include <stdbool.h>

#include <jansson.h>

#include "controller/backend.h"
#include "controller/report/report.h"
#include "controller/run_options.h"
#include "controller/runner.h"

/* The size asked for last and whether it is in place. Zero it before the first group. */
struct runner_services {
    bool asked;
    unsigned size;
    bool ok;
    char why[256];
};

/* Refuses (-1 with err) several --services sizes with a backend that cannot put them in place
 * (no services_apply); else 0. */
int runner_services_check(const struct backend *b, const struct run_options *ro,
                          struct kp_err *err);

/* For a group of a --services size (g->services_sized): has the backend put its size in place
 * unless it was the size asked for last (the groups of one size are adjacent: once per size),
 * appending {"count", ...figures} or {"count", "error"} to md.services_sizes. true for any other
 * group, and when the size is in place; false when it could not be: the rows of rg carry the
 * error and out counts them. */
bool runner_services_ready(struct backend *b, const struct plan_group *g, struct report_group *rg,
                           struct runner_services *st, struct runner_outcome *out, json_t *md);

#endif
