/* SPDX-License-Identifier: Apache-2.0 */
/* backend_pick.c - see backend_pick.h. Built with -DKPERF_LOCAL_BACKEND=OFF (a controller for
 * macOS: no Linux-only header), --local is refused here with one line and the local backend is
 * not linked. */
#include "cmd/kperf/backend_pick.h"

#include <stddef.h>

#include "base/kp_err.h"

#include "controller/k8s/backend_k8s.h"
#ifndef KPERF_NO_LOCAL_BACKEND
#include "controller/local/backend_local.h"
#include "controller/local/local_fault.h"
#endif

#ifdef KPERF_NO_LOCAL_BACKEND
#define NO_LOCAL                                                                                   \
    "--local is not available in this build (built with -DKPERF_LOCAL_BACKEND=OFF): "              \
    "run it on Linux, or measure a cluster without --local"

int backend_pick_check(const struct run_options *ro, struct kp_err *err)
{
    if (ro->local || ro->n_local_faults > 0)
        return kp_err_set(err, NO_LOCAL);
    return 0;
}

struct backend *backend_pick(const struct run_options *ro, struct kp_err *err)
{
    if (ro->local) {
        kp_err_set(err, NO_LOCAL);
        return NULL;
    }
    return backend_k8s_new(ro, err);
}
#else
int backend_pick_check(const struct run_options *ro, struct kp_err *err)
{
    for (size_t i = 0; i < ro->n_local_faults; i++) {
        struct local_fault *lf = local_fault_parse(ro->local_faults[i], err);
        if (!lf)
            return -1;
        if (ro->cni_conf && local_fault_on_pod_links(lf)) {
            kp_err_set(err,
                       "--local-fault %s acts on kperf's own pod links, which --cni-conf "
                       "replaces. Use a node or ext link, cni-add-delay or cpu",
                       ro->local_faults[i]);
            local_fault_free(lf);
            return -1;
        }
        local_fault_free(lf);
    }
    return 0;
}

struct backend *backend_pick(const struct run_options *ro, struct kp_err *err)
{
    if (ro->local)
        return backend_local_new(ro, err);
    return backend_k8s_new(ro, err);
}
#endif
