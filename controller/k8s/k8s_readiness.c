/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_readiness.c - see k8s_readiness.h. */
#include "controller/k8s/k8s_readiness.h"

static void segment(json_t *r, const char *name, double from, double to)
{
    double d = to - from;

    if (from <= 0 || to <= 0)
        return;
    json_object_set_new(r, name, json_real(d > 0 ? d : 0.0));
}

json_t *k8s_readiness_record(const char *pod, const char *node, const char *kind, double created_s,
                             const struct k8s_pod_times *t, const json_t *doc)
{
    json_t *r = json_pack("{s:s, s:s, s:s, s:f}", "pod", pod ? pod : "", "node", node ? node : "",
                          "kind", kind, "created_unix_s", created_s);
    double answer = json_number_value(json_object_get(doc, "first_answer_unix_s"));
    double sched = t->scheduled_s, run = t->running_s;

    if (sched > 0 && sched < created_s)
        sched = created_s;
    if (run > 0 && run < sched)
        run = sched;
    segment(r, "scheduling_s", created_s, sched);
    segment(r, "network_s", sched, run);
    segment(r, "first_packet_s", run, answer);
    /* time to IP, beside time to first packet: the sandbox's network is up (the CNI ADD gave
     * the pod its address) whatever the containers then take to start */
    segment(r, "time_to_ip_s", created_s, t->sandbox_s);
    if (json_object_get(r, "scheduling_s") && json_object_get(r, "network_s") &&
        json_object_get(r, "first_packet_s")) {
        double total = json_real_value(json_object_get(r, "scheduling_s")) +
                       json_real_value(json_object_get(r, "network_s")) +
                       json_real_value(json_object_get(r, "first_packet_s"));
        json_object_set_new(r, "total_s", json_real(total));
    }
    return r;
}
