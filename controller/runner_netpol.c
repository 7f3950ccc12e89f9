/* SPDX-License-Identifier: Apache-2.0 */
/* runner_netpol.c - see runner_netpol.h. */
#include "controller/runner_netpol.h"

#include <stdio.h>

#include "base/kp_err.h"
#include "base/kp_log.h"

bool runner_netpol_ready(struct backend *b, unsigned rules, struct report_group *rg,
                         struct runner_netpol *st, struct runner_outcome *out)
{
    struct kp_err err = {{0}};

    if (rules == st->in_place)
        return true;
    if (rules == 0 || rules != st->failed) { /* failed 0: none failed */
        if (!b->ops->netpol_apply)
            kp_err_set(&err, "the %s backend cannot put a NetworkPolicy in place", b->ops->name);
        else if (b->ops->netpol_apply(b, rules, &err) == 0) {
            if (rules)
                kp_log(KP_LOG_INFO, "netpol: %u rules select the servers", rules);
            st->in_place = rules;
            return true;
        }
        st->failed = rules;
        snprintf(st->why, sizeof(st->why), "netpol-rules %u: %s", rules, kp_err_msg(&err));
        kp_log(rg ? KP_LOG_ERROR : KP_LOG_WARN, "%s", st->why);
    }
    if (rg)
        report_group_error(rg, st->why);
    out->n_failed += rg != NULL;
    return false;
}
