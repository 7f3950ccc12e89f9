/* SPDX-License-Identifier: Apache-2.0 */
/* run_flags_podtmpl.h - the agent pod template flags of `kperf run` (and `kperf manifests`):
 * --pod-labels, --pod-annotations, --priority-class, --agent-requests, --agent-limits,
 * --pod-overlay. Their rows sit in run_flags.c's table (group "Agent pods"); their values are
 * checked here for syntax (label keys and values, quantities, names); what only the Kubernetes
 * backend knows (kperf's own labels, the overlay's contents) is checked by k8s_deploy_init. */
#ifndef KPERF_CMD_RUN_FLAGS_PODTMPL_H
#define KPERF_CMD_RUN_FLAGS_PODTMPL_H

#include "base/kp_err.h"

struct run_options;

/* the id of each row of the group */
enum run_pod_flag {
    RUN_POD_LABELS,
    RUN_POD_ANNOTATIONS,
    RUN_POD_PRIORITY_CLASS,
    RUN_POD_REQUESTS,
    RUN_POD_LIMITS,
    RUN_POD_OVERLAY,
};

/* Applies flag `id` (named `name`) with value v to o. Returns 0, or -1 with one line naming
 * the flag. */
KP_MUST_CHECK int run_flags_pod(struct run_options *o, int id, const char *name, const char *v,
                                struct kp_err *err);

#endif
