/* SPDX-License-Identifier: Apache-2.0 */
/* compare_int.h - the comparison object, shared by the files of compare.h only: compare.c
 * builds it (matching and judging), compare_render.c writes it out. Nobody else includes this. */
#ifndef KPERF_REPORT_COMPARE_INT_H
#define KPERF_REPORT_COMPARE_INT_H

#include <stddef.h>

#include <jansson.h>

struct compare {
    json_t *doc; /* kperf.compare/v1, ours; rows[] kept as text (report_lazy.h) */
    size_t regressions;
    size_t improvements;
    size_t inconclusive;  /* metrics worse beyond the threshold but within the noise */
    size_t failed_in_new; /* measured in BASE, failed in NEW */
    size_t readiness_regressions, readiness_improvements; /* readiness.h */
    size_t netpol_regressions, netpol_improvements;       /* netpol.h */
    size_t refused;      /* rows left without a verdict by strict_evidence */
    size_t refused_pmtu; /* of them, rows with a path MTU black hole on either side */
};

#endif
