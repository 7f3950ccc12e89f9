/* SPDX-License-Identifier: Apache-2.0 */
/* report_validate.h - strict structural checks of saved reports (kperf.report/v1), with
 * errors that name the offending field by path ("results[2].status: unknown value 'great'").
 * Owns the report-level rules (structure, metadata, rows, aggregates, statistics); a row's
 * samples are agent results[] entries and are checked by base/result.h, the one schema of
 * agent documents (report_add_agent_doc calls result_validate itself). Unknown extra fields
 * of report-level objects are accepted (forward compatible); wrong types and missing required
 * fields are not. Owns nothing; used by report.c. */
#ifndef KPERF_REPORT_REPORT_VALIDATE_H
#define KPERF_REPORT_REPORT_VALIDATE_H

#include "base/kp_err.h"

#include <jansson.h>

struct kp_err;

/* Items per array of a report (results[], samples[], errors[]). */
#define REPORT_MAX_ENTRIES 100000

/* A whole kperf.report/v1 document (including every sample). Returns 0 or -1 with err. */
KP_MUST_CHECK int report_validate_doc(const json_t *doc, struct kp_err *err);

/* One results[] entry (a row, with its samples); path names it in errors ("results[3]").
 * Returns 0 or -1 with err. */
KP_MUST_CHECK int report_validate_row(const json_t *row, const char *path, struct kp_err *err);

#endif
