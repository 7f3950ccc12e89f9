/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_services.h - `kperf run --services N` (docs/kubernetes.md, "Services at scale"): N extra
 * ClusterIP Services selecting the run's pod-network servers, created at a bounded rate in the
 * run's namespace with the run's labels, then the programming latency per node: a probe
 * Service exists first with a selector no pod matches, a connect-wait Job per node connects to
 * its ClusterIP every 20 ms, and kperf points the selector at the servers; each node's latency
 * is from that PATCH to its first successful connection. The figures go to the report's
 * metadata ("services"). With several sizes (--services 0,1000,5000) the runner asks for each
 * size in turn (k8s_services_apply): the Services only grow, and each size has its own probe
 * (metadata.services_sizes). Cleanup removes them with the run's other objects (k8s_cleanup.h). */
#ifndef KPERF_K8S_SERVICES_H
#define KPERF_K8S_SERVICES_H

#include <jansson.h>

#include "base/kp_err.h"

struct backend;
struct k8s_backend;

/* With --services, the API client's requests per second (its token bucket, burst 100): the
 * creates of the Services stay under it (client side). */
#define K8S_SERVICES_QPS 100

/* In prepare: does nothing unless --services was given with one size (its figures:
 * describe()'s "services"). Returns 0, or -1 with err (interrupted, refused, a probe Job that
 * never ran). */
KP_MUST_CHECK int k8s_services_run(struct k8s_backend *b, struct kp_err *err);

/* backend.h services_apply (--services with several sizes, before each size's first row): the
 * Services kperf-svcx-<i> still missing up to count, then a probe of its own per size
 * (kperf-svcprobe-<count>, Jobs kperf-svcwait-<count>-<k>-..., pods kperf.io/scenario=
 * svc-programming-<count>), removed once measured so that only the extra Services stay. */
KP_MUST_CHECK int k8s_services_apply(struct backend *base, unsigned count, json_t **md,
                                     struct kp_err *err);

#endif
