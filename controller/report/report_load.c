/* SPDX-License-Identifier: Apache-2.0 */
/* report_load.c - see report_load.h. */
#include "controller/report/report_load.h"

#include <stdlib.h>
#include <string.h>

#include "base/rowkey.h"
#include "base/testkind.h"
#include "controller/report/report_aggregate.h"
#include "controller/report/stats.h"

static const char *const pcts[] = {"p50", "p90", "p99", "mean"};
#define NPCTS (sizeof(pcts) / sizeof(pcts[0]))

bool report_load_row(const json_t *row)
{
    const struct testkind *tk = testkind_by_name(json_string_value(json_object_get(row, "test")));

    return tk && tk->loaded;
}

/* The measured idle TCP_RR row of the loaded row's place (forward, same family: the loaded
 * row's key with test TCP_RR, base/rowkey.h), or NULL. Borrowed. */
static const json_t *idle_row(const json_t *rows, const json_t *loaded)
{
    struct rowkey want, k;
    const json_t *r;
    size_t i;

    rowkey_of(loaded, &want);
    want.test = testkind_name(TEST_TCP_RR);
    want.reverse = false;
    json_array_foreach(rows, i, r)
    {
        rowkey_of(r, &k);
        if (rowkey_equal(&k, &want) &&
            json_object_get(json_object_get(r, "aggregate"), "latency_us"))
            return r;
    }
    return NULL;
}

/* load{}: the median of the samples' load figures. */
static json_t *load_median(const json_t *row)
{
    static const char *const keys[] = {"throughput_mbps", "bytes", "retransmits", "streams"};
    json_t *o = json_pack("{s:s}", "test", testkind_name(TEST_TCP_STREAM_MULTI));

    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        double *v;
        size_t n = report_sample_values(row, "load", keys[k], &v);
        if (n)
            json_object_set_new(o, keys[k], json_real(stats_median(v, n)));
        free(v);
    }
    return o;
}

void report_load_annotate(json_t *rows)
{
    json_t *row;
    size_t i;

    json_array_foreach(rows, i, row)
    {
        json_t *agg = json_object_get(row, "aggregate");
        const json_t *idle, *il;
        json_t *idle_o, *inc, *ratio;

        if (!report_load_row(row) || !json_is_object(agg))
            continue;
        json_object_set_new(agg, "load", load_median(row));
        json_object_del(agg, "idle_latency_us");
        json_object_del(agg, "latency_increase_us");
        json_object_del(agg, "latency_ratio");
        idle = idle_row(rows, row);
        if (!idle || !json_object_get(agg, "latency_us"))
            continue;
        il = json_object_get(json_object_get(idle, "aggregate"), "latency_us");
        idle_o = json_object();
        inc = json_object();
        ratio = json_object();
        for (size_t k = 0; k < NPCTS; k++) {
            double a, b;
            if (!report_get_number(agg, "latency_us", pcts[k], &a) ||
                !report_get_number(il, pcts[k], NULL, &b))
                continue;
            json_object_set_new(idle_o, pcts[k], json_real(b));
            json_object_set_new(inc, pcts[k], json_real(a - b));
            if (b > 0)
                json_object_set_new(ratio, pcts[k], json_real(a / b));
        }
        json_object_set_new(agg, "idle_latency_us", idle_o);
        json_object_set_new(agg, "latency_increase_us", inc);
        json_object_set_new(agg, "latency_ratio", ratio);
    }
}

bool report_load_sample_increase(const json_t *row, const json_t *sample, const char *pct,
                                 double *out)
{
    double loaded, idle;

    if (!report_load_row(row) || !report_get_number(sample, "latency_us", pct, &loaded) ||
        !report_get_number(json_object_get(row, "aggregate"), "idle_latency_us", pct, &idle))
        return false;
    *out = loaded - idle;
    return true;
}
