/* SPDX-License-Identifier: Apache-2.0 */
/* report_validate.h - strict structural checks of agent documents (kperf.result/v1) and of
 * saved reports (kperf.report/v1), with errors that name the offending field by path
 * ("results[2].latency_us.p99: expected a number"). Owns nothing; used by report.c.
 * Unknown extra fields are accepted (forward compatible); wrong types and missing required
 * fields are not. */
#ifndef KPERF_REPORT_REPORT_VALIDATE_H
#define KPERF_REPORT_REPORT_VALIDATE_H

#include <jansson.h>

struct kp_err;

#define REPORT_MAX_ENTRIES 100000 /* results[] / samples[] / errors[] items per array */

/* A whole kperf-agent client document. Returns 0 or -1 with err. */
int report_validate_agent_doc(const json_t *doc, struct kp_err *err);

/* One results[] entry of an agent document (also a report's samples[] entry). path prefixes
 * error messages (e.g. "results[3]"). Latency entries must carry a mergeable histogram.
 * Returns 0 or -1 with err. */
int report_validate_sample(const json_t *entry, const char *path, struct kp_err *err);

/* A whole kperf.report/v1 document (including every sample). Returns 0 or -1 with err. */
int report_validate_doc(const json_t *doc, struct kp_err *err);

#endif
