/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_services.h - `kperf run --services N` (docs/kubernetes.md, "Services at scale"): N extra
 * ClusterIP Services selecting the run's pod-network servers, created at a bounded rate in the
 * run's namespace with the run's labels, then the programming latency per node: a probe
 * Service exists first with a selector no pod matches, a connect-wait Job per node connects to
 * its ClusterIP every 20 ms, and kperf points the selector at the servers; each node's latency
 * is from that PATCH to its first successful connection. The figures go to the report's
 * metadata ("services"). Cleanup removes them with the run's other objects (k8s_cleanup.h). */
#ifndef KPERF_K8S_SERVICES_H
#define KPERF_K8S_SERVICES_H

#include "base/kp_err.h"

struct k8s_backend;

/* With --services, the API client's requests per second (its token bucket, burst 100): the
 * creates of the Services stay under it (client side). */
#define K8S_SERVICES_QPS 100

/* Does nothing unless --services was given. Returns 0, or -1 with err (interrupted, refused,
 * a probe Job that never ran). */
KP_MUST_CHECK int k8s_services_run(struct k8s_backend *b, struct kp_err *err);

#endif
