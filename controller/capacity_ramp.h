/* SPDX-License-Identifier: Apache-2.0 */
/* capacity_ramp.h - `kperf run --capacity`: after a group's TCP_CRR row, the runner ramps
 * concurrent TCP_CRR clients (1, 2, 4, ... CAPACITY_MAX_PARALLEL, one sample of --duration
 * each) until report/capacity.h's stop rule says stop, and puts the ramp on the row
 * ("capacity"). The steps' samples stay out of the row's samples: the row's figures are those
 * of the one-client TCP_CRR. Knows nothing of how a backend places its agents. */
#ifndef KPERF_CONTROLLER_CAPACITY_RAMP_H
#define KPERF_CONTROLLER_CAPACITY_RAMP_H

#include <stdbool.h>

struct backend;
struct plan_group;
struct progress;
struct report_group;
struct run_options;

/* Runs the ramp of group g's TCP_CRR on b (label: the progress line's scenario and placement
 * columns); stops early when halted() turns true (an interrupt: no capacity is recorded).
 * Returns the number of steps run. */
int capacity_ramp_run(struct backend *b, const struct run_options *ro, const struct plan_group *g,
                      struct report_group *rg, struct progress *pg, const char *label,
                      bool (*halted)(void));

#endif
