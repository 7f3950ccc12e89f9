/* SPDX-License-Identifier: Apache-2.0 */
/* backend_pick.h - the one place in cmd/ that names the concrete backends: `kperf run` and
 * `kperf watch` get theirs here (--local: controller/local/, else controller/k8s/) and drive
 * it through struct backend_ops alone (controller/backend.h). */
#ifndef KPERF_CMD_BACKEND_PICK_H
#define KPERF_CMD_BACKEND_PICK_H

#include "base/kp_err.h"
#include "controller/backend.h"
#include "controller/run_options.h"

/* Checks the flags that one backend alone reads, before anything starts (--local-fault SPEC:
 * its syntax). Returns 0, or -1 with err (a usage error). */
KP_MUST_CHECK int backend_pick_check(const struct run_options *ro, struct kp_err *err);

/* The backend ro asks for (ro borrowed for the backend's life). Creates nothing yet. Returns a
 * backend (free with b->ops->destroy after cleanup) or NULL with err. */
struct backend *backend_pick(const struct run_options *ro, struct kp_err *err);

#endif
