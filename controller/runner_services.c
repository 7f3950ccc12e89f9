/* SPDX-License-Identifier: Apache-2.0 */
/* runner_services.c - see runner_services.h. */
#include "controller/runner_services.h"

#include <stdio.h>

#include "base/kp_err.h"
#include "base/kp_log.h"

int runner_services_check(const struct backend *b, const struct run_options *ro, struct kp_err *err)
{
    if (ro->n_services_sizes > 1 && !b->ops->services_apply)
        return kp_err_set(err,
                          "--services with several sizes needs a cluster: the %s backend "
                          "cannot make Services",
                          b->ops->name);
    return 0;
}

/* Asks the backend for st->size; its figures (or error) join md.services_sizes */
static bool apply(struct backend *b, struct runner_services *st, json_t *md)
{
    struct kp_err err = {{0}};
    json_t *sizes = json_object_get(md, "services_sizes"), *fig = NULL;

    if (!json_is_array(sizes)) {
        sizes = json_array();
        json_object_set_new(md, "services_sizes", sizes);
    }
    if (b->ops->services_apply(b, st->size, &fig, &err) == 0 && fig) {
        kp_log(KP_LOG_INFO, "services: %u extra Services in place", st->size);
        json_object_set_new(fig, "count", json_integer(st->size));
        json_array_append_new(sizes, fig);
        return true;
    }
    json_decref(fig);
    if (!kp_err_is_set(&err))
        kp_err_set(&err, "no figures");
    snprintf(st->why, sizeof(st->why), "services %u: %s", st->size, kp_err_msg(&err));
    kp_log(KP_LOG_ERROR, "%s", st->why);
    json_array_append_new(
        sizes, json_pack("{s:i, s:s}", "count", (int)st->size, "error", kp_err_msg(&err)));
    return false;
}

bool runner_services_ready(struct backend *b, const struct plan_group *g, struct report_group *rg,
                           struct runner_services *st, struct runner_outcome *out, json_t *md)
{
    if (!g->services_sized)
        return true;
    if (!st->asked || st->size != g->services) {
        st->asked = true;
        st->size = g->services;
        st->ok = apply(b, st, md);
    }
    if (st->ok)
        return true;
    report_group_error(rg, st->why);
    out->n_failed++;
    return false;
}
