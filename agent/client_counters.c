/* SPDX-License-Identifier: Apache-2.0 */
/* client_counters.c - the client's side of the counters (agent/counters.h): its snapshots and
 * the sample's "counters" object (docs/result-schema.md); and the kernel profile of the window
 * (agent/kprof.h, --profile). */
#include "agent/client_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/kp_alloc.h"
#include "base/kp_log.h"

void client_counters_snapshot(struct sample *s, struct counters_snap **snap)
{
    struct kp_err why;

    if (!(s->req.flags & PROTO_FLAG_COUNTERS))
        return;
    kp_err_clear(&why);
    if (!*snap)
        *snap = kp_xmalloc(sizeof(**snap));
    if (counters_take(*snap, s->o->counters_netns, &why) != 0) {
        kp_log(KP_LOG_WARN, "counters: %s", kp_err_msg(&why));
        free(*snap);
        *snap = NULL;
    }
}

void client_counters_cleanup(struct sample *s)
{
    free(s->cnt0);
    free(s->cnt1);
    s->cnt0 = s->cnt1 = NULL;
    kprof_free(s->prof);
    s->prof = NULL;
}

void client_profile_start(struct sample *s)
{
    struct kp_err why;

    if (!(s->o->profile_tests & (1u << s->req.test)))
        return;
    kp_err_clear(&why);
    if (!(s->prof = kprof_start(&why))) {
        snprintf(s->prof_error, sizeof(s->prof_error), "%s", kp_err_msg(&why));
        kp_log(KP_LOG_WARN, "profile: %s", s->prof_error);
    }
}

json_t *client_counters_json(const struct sample *s)
{
    json_t *c = json_object();

    if (s->cnt0 && s->cnt1)
        json_object_set_new(c, "client", counters_delta_json(s->cnt0, s->cnt1));
    if (s->server_counters)
        json_object_set(c, "server", s->server_counters);
    return c;
}
