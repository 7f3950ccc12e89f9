/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_baseline.h - the baseline ConfigMap of the nightly job (manifests/cronjob.yaml mounts
 * key report.json of ConfigMap kperf-baseline): built here so that a report too large for a
 * ConfigMap is refused with a clear error by kperf, before the API server refuses it
 * (`kperf manifests --baseline-configmap FILE.json`, docs/history-volume.md). Owns the object
 * and the size rule only. */
#ifndef KPERF_K8S_K8S_BASELINE_H
#define KPERF_K8S_K8S_BASELINE_H

#include <stddef.h>

#include <jansson.h>

#include "base/kp_err.h"

/* The API server's limit on a ConfigMap's data: the sum of key and value lengths. */
#define K8S_CONFIGMAP_MAX_DATA ((size_t)1048576)
#define K8S_BASELINE_KEY       "report.json"
#define K8S_BASELINE_NAME      "kperf-baseline"

/* A v1 ConfigMap name/ns holding report_text under key report.json, or NULL with err when
 * key plus text exceed K8S_CONFIGMAP_MAX_DATA (the error names the size, the limit and the
 * way out: a volume). *used_pct gets the share of the limit used. New reference. */
json_t *k8s_baseline_configmap(const char *name, const char *ns, const char *report_text,
                               double *used_pct, struct kp_err *err);

#endif
