/* SPDX-License-Identifier: Apache-2.0 */
/* runner_netpol.c - see runner_netpol.h. */
#include "controller/runner_netpol.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/kp_err.h"
#include "base/kp_log.h"
#include "controller/report/netpol.h"

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

static void warn_phase(const json_t *n, const json_t *rec, const json_t *probe, double deny_at,
                       double allow_at)
{
    const json_t *c = json_object_get(json_object_get(probe, "probes"), "connect");
    char *o = json_dumps(json_object_get(c, "outages"), JSON_COMPACT);

    kp_log(KP_LOG_WARN,
           "netpol-readiness on node %s: %s (probes from %.3f, deny %.3f, allow %.3f, "
           "outages %s)",
           json_string_value(json_object_get(n, "node")),
           json_string_value(json_object_get(rec, "error")),
           json_number_value(json_object_get(probe, "start_unix_s")), deny_at, allow_at,
           o ? o : "none");
    free(o);
}

/* One node's record from the backend's (n): its policy phase, then its new-pod phase (an
 * error of either is the record's; both: joined). */
static json_t *node_rec(const json_t *n, double deny_at, double allow_at)
{
    const json_t *probe = json_object_get(n, "probe"), *pod = json_object_get(n, "pod_probe");
    json_t *rec = json_pack("{s:O}", "node", json_object_get(n, "node"));
    json_t *pr = json_object();
    const char *e1, *e2;

    if (!probe)
        json_object_set(rec, "error", json_object_get(n, "error"));
    else if (netpol_policy_phase(rec, probe, deny_at, allow_at) != 0)
        warn_phase(n, rec, probe, deny_at, allow_at);
    if (!pod)
        json_object_set(pr, "error", json_object_get(n, "pod_error"));
    else if (netpol_pod_phase(pr, pod) != 0)
        warn_phase(n, pr, pod, deny_at, allow_at);
    e1 = json_string_value(json_object_get(rec, "error"));
    e2 = json_string_value(json_object_get(pr, "error"));
    if (e1 && e2)
        json_object_set_new(rec, "error", json_sprintf("%s; %s", e1, e2));
    else if (e2)
        json_object_set(rec, "error", json_object_get(pr, "error"));
    json_object_del(pr, "error");
    json_object_update(rec, pr);
    json_decref(pr);
    return rec;
}

void runner_netpol_readiness(struct backend *b, json_t *md, struct runner_outcome *out)
{
    struct kp_err err = {{0}};
    json_t *np = b->ops->netpol_readiness(b, &err);

    if (!np) {
        kp_log(KP_LOG_ERROR, "netpol-readiness: %s", kp_err_msg(&err));
        json_object_set_new(md, "netpol",
                            json_pack("{s:[], s:s}", "nodes", "error", kp_err_msg(&err)));
        out->n_failed++;
        return;
    }
    json_t *nodes = json_array(), *n;
    double deny_at = json_number_value(json_object_get(np, "deny_at"));
    double allow_at = json_number_value(json_object_get(np, "allow_at"));
    size_t i;

    json_array_foreach(json_object_get(np, "nodes"), i, n)
        json_array_append_new(nodes, node_rec(n, deny_at, allow_at));
    json_object_set_new(md, "netpol",
                        json_pack("{s:i, s:o}", "probe_every_ms", 20, "nodes", nodes));
    json_decref(np);
}
