/* SPDX-License-Identifier: Apache-2.0 */
/* capacity_ramp.c - see capacity_ramp.h. */
#include "controller/capacity_ramp.h"

#include <stdio.h>

#include <jansson.h>

#include "base/kp_err.h"
#include "base/testkind.h"
#include "controller/backend.h"
#include "controller/plan.h"
#include "controller/progress.h"
#include "controller/report/capacity.h"
#include "controller/report/report.h"
#include "controller/run_options.h"

/* One step: a TCP_CRR sample with `parallel` clients; its figures (capacity_step_of_doc). */
static json_t *one_step(struct backend *b, const struct run_options *ro, const struct plan_group *g,
                        int parallel)
{
    static const enum test_kind crr[] = {TEST_TCP_CRR};
    struct run_spec spec;
    struct kp_err err = {{0}};
    json_t *doc = NULL, *step;

    run_spec_init(&spec, ro, g, crr, 1, 1);
    spec.parallel = parallel;
    spec.timeout_ms = ro->duration_ms + ro->omit_ms + ro->timeout_ms;
    if (b->ops->run_client(b, &spec, &doc, &err) != 0)
        return json_pack("{s:i, s:s}", "parallel", parallel, "error", kp_err_msg(&err));
    step = capacity_step_of_doc(doc, parallel);
    json_decref(doc);
    return step;
}

int capacity_ramp_run(struct backend *b, const struct run_options *ro, const struct plan_group *g,
                      struct report_group *rg, struct progress *pg, const char *label,
                      bool (*halted)(void))
{
    json_t *steps = json_array();
    const char *stop = NULL;
    char line[256], result[96];
    int n = 0;

    for (int p = 1; p <= CAPACITY_MAX_PARALLEL && !stop && !halted(); p *= 2, n++) {
        json_t *step;
        snprintf(line, sizeof(line), "%sTCP_CRR capacity x%d", label, p);
        progress_add_total(pg, 1, ro->duration_ms + ro->omit_ms); /* unplanned: one at a time */
        progress_begin(pg, line, 1, ro->duration_ms + ro->omit_ms);
        step = one_step(b, ro, g, p);
        json_array_append_new(steps, step);
        stop = capacity_stop(steps);
        if (json_object_get(step, "error"))
            snprintf(result, sizeof(result), "%s",
                     json_string_value(json_object_get(step, "error")));
        else
            snprintf(result, sizeof(result), "%.0f conn/s, p99 %.0f us, errors %.2f%%",
                     json_number_value(json_object_get(step, "conn_per_sec")),
                     json_number_value(json_object_get(step, "p99_us")),
                     json_number_value(json_object_get(step, "error_pct")));
        progress_end(pg, !json_object_get(step, "error"), result);
    }
    if (!halted() || (stop && n > 0))
        report_group_set_capacity(rg, TEST_TCP_CRR, capacity_result(steps, stop));
    json_decref(steps);
    return n;
}
