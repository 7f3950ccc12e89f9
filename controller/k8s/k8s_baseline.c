/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_baseline.c - the baseline ConfigMap and its size check (k8s_baseline.h). */
#include "controller/k8s/k8s_baseline.h"

#include <string.h>

json_t *k8s_baseline_configmap(const char *name, const char *ns, const char *report_text,
                               double *used_pct, struct kp_err *err)
{
    size_t size = strlen(K8S_BASELINE_KEY) + strlen(report_text);

    *used_pct = 100.0 * (double)size / (double)K8S_CONFIGMAP_MAX_DATA;
    if (size > K8S_CONFIGMAP_MAX_DATA) {
        kp_err_set(err,
                   "the baseline report is %zu bytes (compact JSON), over the %zu-byte (1 MiB) "
                   "limit of a ConfigMap: keep it on a volume instead (helm "
                   "baseline.existingClaim, or manifests/cronjob-pvc.yaml), or measure fewer "
                   "tests or samples",
                   size, K8S_CONFIGMAP_MAX_DATA);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                     "ConfigMap", "metadata", "name", name, "namespace", ns, "labels",
                     "app.kubernetes.io/name", "kperf", "data", K8S_BASELINE_KEY, report_text);
}
