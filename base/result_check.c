/* SPDX-License-Identifier: Apache-2.0 */
/* result_check.c - the table-driven checker of result.h's validation (an object's fields by
 * kind and by the test classes that require or allow them; anything else is an error) and the
 * checks of one measurement: a results[] entry and an aggregates[] entry with their latency,
 * histogram, streams, tcp, udp, CPU and load parts. The document around them (agent, server,
 * params, mtu, server_facts, errors) is result.c's. */
#include "base/result_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/hist.h"
#include "base/result.h"
#include "base/testkind.h"

unsigned result_classes(const char *name)
{
    const struct testkind *tk = testkind_by_name(name);
    unsigned c;

    if (!tk)
        return 0;
    c = C_ANY | (tk->latency ? C_LAT : C_STREAM);
    if (tk->udp)
        c |= C_UDP;
    else if (!tk->conn_per_txn)
        c |= C_TCP;
    if (!tk->udp && !tk->latency)
        c |= C_TSTRM;
    if (tk->loaded)
        c |= C_LOAD;
    return c;
}

/* --- generic object checking -------------------------------------------------------------- */

static const char *kind_name(enum kind k)
{
    static const char *const names[] = {"a string",  "an integer", "a number",
                                        "a boolean", "an object",  "an array"};
    return names[k];
}

static int kind_ok(const json_t *v, enum kind k)
{
    switch (k) {
    case K_STR:
        return json_is_string(v);
    case K_INT:
        return json_is_integer(v) && json_integer_value(v) >= 0;
    case K_NUM:
        return json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0;
    case K_BOOL:
        return json_is_boolean(v);
    case K_OBJ:
        return json_is_object(v);
    default:
        return json_is_array(v);
    }
}

int result_check_object(const json_t *obj, const char *path, const struct field *f, size_t n,
                        unsigned classes, struct kp_err *err)
{
    const char *key;
    const json_t *v;
    char sub[256];

    if (!json_is_object(obj))
        return kp_err_set(err, "%s: expected an object", path);
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t i;
        for (i = 0; i < n; i++)
            if (strcmp(key, f[i].name) == 0)
                break;
        if (i == n || !(f[i].allowed & classes))
            return kp_err_set(err, "%s: unexpected field \"%s\"", path, key);
    }
    for (size_t i = 0; i < n; i++) {
        v = json_object_get(obj, f[i].name);
        int w = snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", f[i].name);
        if (w < 0 || (size_t)w >= sizeof(sub))
            return kp_err_set(err, "%s: nested too deeply", path);
        if (!v) {
            if (f[i].required & classes)
                return kp_err_set(err, "%s: missing", sub);
            continue;
        }
        if (!kind_ok(v, f[i].kind))
            return kp_err_set(err, "%s: expected %s%s", sub, kind_name(f[i].kind),
                              f[i].kind == K_INT || f[i].kind == K_NUM ? " >= 0" : "");
        if (f[i].check && f[i].check(v, sub, classes, err) != 0)
            return -1;
    }
    return 0;
}

int result_check_array(const json_t *arr, const char *path, unsigned classes,
                       int (*each)(const json_t *, const char *, unsigned, struct kp_err *),
                       struct kp_err *err)
{
    char sub[256];
    size_t i;
    const json_t *v;

    if (json_array_size(arr) > RESULT_MAX_ENTRIES)
        return kp_err_set(err, "%s: more than %u entries", path, RESULT_MAX_ENTRIES);
    json_array_foreach(arr, i, v)
    {
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        if (each(v, sub, classes, err) != 0)
            return -1;
    }
    return 0;
}

/* --- field checks ------------------------------------------------------------------------- */

static int check_pct(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (json_number_value(v) > 100.0 + 1e-9)
        return kp_err_set(err, "%s: %g is above 100", path, json_number_value(v));
    return 0;
}

int result_check_test_name(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (!json_is_string(v) || !testkind_by_name(json_string_value(v)))
        return kp_err_set(err, "%s: unknown test", path);
    return 0;
}

static int check_latency(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"min", K_NUM, ALL, ALL, NULL}, {"mean", K_NUM, ALL, ALL, NULL},
        {"p50", K_NUM, ALL, ALL, NULL}, {"p90", K_NUM, ALL, ALL, NULL},
        {"p99", K_NUM, ALL, ALL, NULL}, {"p999", K_NUM, ALL, ALL, NULL},
        {"max", K_NUM, ALL, ALL, NULL}, {"stddev", K_NUM, ALL, ALL, NULL},
    };
    static const char *const order[] = {"min", "p50", "p90", "p99", "p999", "max"};
    double mn, mx, mean;

    (void)classes;
    if (result_check_object(v, path, f, NFIELDS(f), C_ANY, err) != 0)
        return -1;
    /* percentiles come from ~1% buckets clamped to the exact min and max */
    for (size_t i = 1; i < NFIELDS(order); i++)
        if (json_number_value(json_object_get(v, order[i])) <
            json_number_value(json_object_get(v, order[i - 1])))
            return kp_err_set(err, "%s: %s < %s", path, order[i], order[i - 1]);
    mn = json_number_value(json_object_get(v, "min"));
    mx = json_number_value(json_object_get(v, "max"));
    mean = json_number_value(json_object_get(v, "mean"));
    if (mean < mn * 0.999 - 1e-9 || mean > mx * 1.001 + 1e-9)
        return kp_err_set(err, "%s: mean outside [min, max]", path);
    return 0;
}

static int check_histogram(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    struct hist *h = hist_from_json(v, err);

    (void)classes;
    if (!h)
        return kp_err_prefix(err, "%s", path);
    hist_free(h);
    return 0;
}

/* A stream's "cpu_seconds" and "cpu": each side present only when that side ran the stream on
 * a thread of its own. */
static int check_stream_cpu_seconds(const json_t *v, const char *path, unsigned classes,
                                    struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_NUM, 0, ALL, NULL},
        {"server", K_NUM, 0, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_stream_cpu(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_INT, 0, ALL, NULL},
        {"server", K_INT, 0, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_stream(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"bytes", K_INT, ALL, ALL, NULL},
        {"throughput_mbps", K_NUM, ALL, ALL, NULL},
        {"retransmits", K_INT, 0, ALL, NULL},
        {"rtt_us", K_NUM, 0, ALL, NULL},
        {"mss", K_INT, 0, ALL, NULL},
        {"cpu_seconds", K_OBJ, 0, ALL, check_stream_cpu_seconds},
        {"cpu", K_OBJ, 0, ALL, check_stream_cpu},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_streams(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return result_check_array(v, path, classes, check_stream, err);
}

static int check_tcp(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"retransmits", K_INT, ALL, ALL, NULL},
        {"rtt_us", K_NUM, ALL, ALL, NULL},
        {"mss", K_INT, ALL, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_placement(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"same_kernel", K_BOOL, ALL, ALL, NULL},
        {"client_threads", K_INT, ALL, ALL, NULL},
        {"msg_size_bytes", K_INT, ALL, ALL, NULL},
        {"low_unsent_bytes", K_INT, 0, ALL, NULL}, /* since protocol version 6 */
        {"client_cpus", K_INT, 0, ALL, NULL},      /* older agents omit these two */
        {"client_cpu_quota_millicores", K_INT, 0, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_udp(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"sent", K_INT, ALL, ALL, NULL},
        {"received", K_INT, ALL, ALL, NULL},
        {"lost", K_INT, ALL, ALL, NULL},
        {"loss_pct", K_NUM, ALL, ALL, check_pct},
        {"jitter_us", K_NUM, C_STREAM, ALL, NULL},
        {"out_of_order", K_INT, C_STREAM, ALL, NULL},
        {"rcvbuf_errors", K_INT, C_STREAM, ALL, NULL},
    };
    if (result_check_object(v, path, f, NFIELDS(f), classes, err) != 0)
        return -1;
    if (json_integer_value(json_object_get(v, "lost")) >
        json_integer_value(json_object_get(v, "sent")))
        return kp_err_set(err, "%s: lost > sent", path);
    return 0;
}

static int check_cpu(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_NUM, ALL, ALL, NULL},
        {"server", K_NUM, ALL, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_node_side(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"user_pct", K_NUM, ALL, ALL, check_pct},    {"system_pct", K_NUM, ALL, ALL, check_pct},
        {"softirq_pct", K_NUM, ALL, ALL, check_pct}, {"irq_pct", K_NUM, ALL, ALL, check_pct},
        {"steal_pct", K_NUM, ALL, ALL, check_pct},   {"iowait_pct", K_NUM, 0, ALL, check_pct},
        {"idle_pct", K_NUM, ALL, ALL, check_pct},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_node_cpu(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_OBJ, ALL, ALL, check_node_side},
        {"server", K_OBJ, ALL, ALL, check_node_side},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_interval(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"start_s", K_NUM, ALL, ALL, NULL},
        {"end_s", K_NUM, ALL, ALL, NULL},
        {"throughput_mbps", K_NUM, C_STREAM, C_STREAM, NULL},
        {"ops_per_sec", K_NUM, C_LAT, C_LAT, NULL},
    };
    if (result_check_object(v, path, f, NFIELDS(f), classes, err) != 0)
        return -1;
    if (json_number_value(json_object_get(v, "end_s")) <
        json_number_value(json_object_get(v, "start_s")))
        return kp_err_set(err, "%s: end_s before start_s", path);
    return 0;
}

static int check_intervals(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return result_check_array(v, path, classes, check_interval, err);
}

static int check_load_test(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (strcmp(json_string_value(v), "TCP_STREAM_MULTI") != 0)
        return kp_err_set(err, "%s: the load is TCP_STREAM_MULTI", path);
    return 0;
}

/* TCP_RR_LOADED: the stream that filled the path during the latency test (a result's load{}
 * has every field; an aggregate's the sums and mean of its samples). */
static int check_load(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"test", K_STR, ALL, ALL, check_load_test}, {"streams", K_INT, ALL, ALL, NULL},
        {"duration_s", K_NUM, ALL, ALL, NULL},      {"bytes", K_INT, ALL, ALL, NULL},
        {"throughput_mbps", K_NUM, ALL, ALL, NULL}, {"retransmits", K_INT, 0, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

int result_check_entry(const json_t *v, const char *path, unsigned unused, struct kp_err *err)
{
    static const struct field f[] = {
        {"test", K_STR, ALL, ALL, result_check_test_name},
        {"sample", K_INT, ALL, ALL, NULL},
        {"reverse", K_BOOL, ALL, ALL, NULL},
        {"start_time", K_STR, ALL, ALL, NULL},
        {"duration_s", K_NUM, ALL, ALL, NULL},
        {"ops", K_INT, C_LAT, C_LAT, NULL},
        {"ops_per_sec", K_NUM, C_LAT, C_LAT, NULL},
        {"latency_us", K_OBJ, C_LAT, C_LAT, check_latency},
        {"histogram", K_OBJ, C_LAT, C_LAT, check_histogram},
        {"bytes", K_INT, C_STREAM, C_STREAM, NULL},
        {"bytes_sent", K_INT, 0, C_STREAM, NULL},
        {"throughput_mbps", K_NUM, C_STREAM, C_STREAM, NULL},
        {"streams", K_ARR, C_TSTRM, C_TSTRM, check_streams},
        {"placement", K_OBJ, 0, C_TSTRM, check_placement},
        {"tcp", K_OBJ, 0, C_TCP, check_tcp},
        {"udp", K_OBJ, C_UDP, C_UDP, check_udp},
        {"cpu_seconds", K_OBJ, ALL, ALL, check_cpu},
        {"node_cpu", K_OBJ, ALL, ALL, check_node_cpu},
        {"counters", K_OBJ, 0, ALL, result_check_counters},
        {"profile", K_OBJ, 0, ALL, result_check_profile},
        {"intervals", K_ARR, 0, ALL, check_intervals},
        {"load", K_OBJ, C_LOAD, C_LOAD, check_load},
        /* TCP_CRR with --parallel (a step of kperf's capacity ramp) */
        {"parallel", K_INT, 0, C_LAT, NULL},
        {"conn_errors", K_INT, 0, C_LAT, NULL},
        {"dns", K_OBJ, 0, C_LAT, result_check_dns}, /* a DNS row's lookups (dnsresult.h) */
    };
    const json_t *test = json_object_get(v, "test");
    unsigned classes;

    (void)unused;
    if (!json_is_object(v))
        return kp_err_set(err, "%s: expected an object", path);
    if (result_check_test_name(test, path, 0, err) != 0)
        return kp_err_prefix(err, "%s.test", path);
    classes = result_classes(json_string_value(test));
    if (result_check_object(v, path, f, NFIELDS(f), classes, err) != 0)
        return -1;
    if ((classes & C_LAT) &&
        (uint64_t)json_integer_value(json_object_get(v, "ops")) !=
            (uint64_t)json_integer_value(json_object_get(json_object_get(v, "histogram"), "count")))
        return kp_err_set(err, "%s: ops differs from histogram.count", path);
    return 0;
}

static int check_spread(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"min", K_NUM, ALL, ALL, NULL},
        {"max", K_NUM, ALL, ALL, NULL},
        {"mean", K_NUM, ALL, ALL, NULL},
        {"stddev", K_NUM, ALL, ALL, NULL},
    };
    (void)classes;
    if (result_check_object(v, path, f, NFIELDS(f), C_ANY, err) != 0)
        return -1;
    if (json_number_value(json_object_get(v, "max")) < json_number_value(json_object_get(v, "min")))
        return kp_err_set(err, "%s: max < min", path);
    return 0;
}

int result_check_aggregate(const json_t *v, const char *path, unsigned unused, struct kp_err *err)
{
    static const struct field f[] = {
        {"test", K_STR, ALL, ALL, result_check_test_name},
        {"reverse", K_BOOL, ALL, ALL, NULL},
        {"samples", K_INT, ALL, ALL, NULL},
        {"duration_s", K_NUM, ALL, ALL, NULL},
        {"ops", K_INT, C_LAT, C_LAT, NULL},
        {"ops_per_sec", K_NUM, C_LAT, C_LAT, NULL},
        {"latency_us", K_OBJ, C_LAT, C_LAT, check_latency},
        {"histogram", K_OBJ, C_LAT, C_LAT, check_histogram},
        {"bytes", K_INT, C_STREAM, C_STREAM, NULL},
        {"throughput_mbps", K_NUM, C_STREAM, C_STREAM, NULL},
        {"sample_spread", K_OBJ, ALL, ALL, check_spread},
        {"tcp", K_OBJ, 0, C_TCP, check_tcp},
        {"udp", K_OBJ, C_UDP, C_UDP, check_udp},
        {"cpu_seconds", K_OBJ, ALL, ALL, check_cpu},
        {"load", K_OBJ, C_LOAD, C_LOAD, check_load},
    };
    const json_t *test = json_object_get(v, "test");

    (void)unused;
    if (!json_is_object(v))
        return kp_err_set(err, "%s: expected an object", path);
    if (result_check_test_name(test, path, 0, err) != 0)
        return kp_err_prefix(err, "%s.test", path);
    if (result_check_object(v, path, f, NFIELDS(f), result_classes(json_string_value(test)), err) !=
        0)
        return -1;
    if (json_integer_value(json_object_get(v, "samples")) < 1)
        return kp_err_set(err, "%s.samples: must be at least 1", path);
    if ((result_classes(json_string_value(test)) & C_LAT) &&
        json_integer_value(json_object_get(v, "ops")) !=
            json_integer_value(json_object_get(json_object_get(v, "histogram"), "count")))
        return kp_err_set(err, "%s: ops differs from histogram.count", path);
    return 0;
}
