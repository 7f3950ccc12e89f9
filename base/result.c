/* SPDX-License-Identifier: Apache-2.0 */
/* result.c - see result.h. Validation is table-driven: each object's fields are listed with
 * their kind and the test classes that require or allow them; anything else is an error. */
#include "base/result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/kp_err.h"
#include "base/testkind.h"

/* Test classes: which fields a result must or may carry (from base/testkind.h). */
#define C_ANY    0x01u
#define C_LAT    0x02u /* latency tests: TCP_RR, TCP_CRR, UDP_RR */
#define C_STREAM 0x04u /* stream tests: TCP_STREAM, TCP_STREAM_MULTI, UDP_STREAM */
#define C_UDP    0x08u
#define C_TCP    0x10u /* TCP tests that keep a connection: all but TCP_CRR */
#define C_TSTRM  0x20u /* TCP stream tests */
#define C_LOAD   0x40u /* latency under load: TCP_RR_LOADED (load{}) */

enum kind { K_STR, K_INT, K_NUM, K_BOOL, K_OBJ, K_ARR };

struct field {
    const char *name;
    enum kind kind;
    unsigned required; /* classes that must carry it */
    unsigned allowed;  /* classes that may carry it */
    int (*check)(const json_t *v, const char *path, unsigned classes, struct kp_err *err);
};

/* The classes of a test name; 0 when the name is not a test. */
static unsigned test_classes(const char *name)
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

static int check_object(const json_t *obj, const char *path, const struct field *f, size_t n,
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

#define ALL        (C_ANY)
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static int check_array(const json_t *arr, const char *path, unsigned classes,
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

static int check_schema(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (strcmp(json_string_value(v), RESULT_SCHEMA) != 0)
        return kp_err_set(err, "%s: \"%s\" is not %s", path, json_string_value(v), RESULT_SCHEMA);
    return 0;
}

static int check_test_name(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (!json_is_string(v) || !testkind_by_name(json_string_value(v)))
        return kp_err_set(err, "%s: unknown test", path);
    return 0;
}

static int check_nonempty(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (json_string_length(v) == 0)
        return kp_err_set(err, "%s: empty string", path);
    return 0;
}

static int check_port(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (json_integer_value(v) > 65535)
        return kp_err_set(err, "%s: not a port", path);
    return 0;
}

static int check_tests(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return check_array(v, path, classes, check_test_name, err);
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
    if (check_object(v, path, f, NFIELDS(f), C_ANY, err) != 0)
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
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_stream_cpu(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_INT, 0, ALL, NULL},
        {"server", K_INT, 0, ALL, NULL},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
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
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_streams(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return check_array(v, path, classes, check_stream, err);
}

static int check_tcp(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"retransmits", K_INT, ALL, ALL, NULL},
        {"rtt_us", K_NUM, ALL, ALL, NULL},
        {"mss", K_INT, ALL, ALL, NULL},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
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
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
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
    if (check_object(v, path, f, NFIELDS(f), classes, err) != 0)
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
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
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
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_node_cpu(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_OBJ, ALL, ALL, check_node_side},
        {"server", K_OBJ, ALL, ALL, check_node_side},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_interval(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"start_s", K_NUM, ALL, ALL, NULL},
        {"end_s", K_NUM, ALL, ALL, NULL},
        {"throughput_mbps", K_NUM, C_STREAM, C_STREAM, NULL},
        {"ops_per_sec", K_NUM, C_LAT, C_LAT, NULL},
    };
    if (check_object(v, path, f, NFIELDS(f), classes, err) != 0)
        return -1;
    if (json_number_value(json_object_get(v, "end_s")) <
        json_number_value(json_object_get(v, "start_s")))
        return kp_err_set(err, "%s: end_s before start_s", path);
    return 0;
}

static int check_intervals(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return check_array(v, path, classes, check_interval, err);
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
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_result(const json_t *v, const char *path, unsigned unused, struct kp_err *err)
{
    static const struct field f[] = {
        {"test", K_STR, ALL, ALL, check_test_name},
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
        {"intervals", K_ARR, 0, ALL, check_intervals},
        {"load", K_OBJ, C_LOAD, C_LOAD, check_load},
    };
    const json_t *test = json_object_get(v, "test");
    unsigned classes;

    (void)unused;
    if (!json_is_object(v))
        return kp_err_set(err, "%s: expected an object", path);
    if (check_test_name(test, path, 0, err) != 0)
        return kp_err_prefix(err, "%s.test", path);
    classes = test_classes(json_string_value(test));
    if (check_object(v, path, f, NFIELDS(f), classes, err) != 0)
        return -1;
    if ((classes & C_LAT) &&
        (uint64_t)json_integer_value(json_object_get(v, "ops")) !=
            (uint64_t)json_integer_value(json_object_get(json_object_get(v, "histogram"), "count")))
        return kp_err_set(err, "%s: ops differs from histogram.count", path);
    return 0;
}

static int check_error(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"test", K_STR, ALL, ALL, check_nonempty},
        {"sample", K_INT, ALL, ALL, NULL},
        {"error", K_STR, ALL, ALL, check_nonempty},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_results(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return check_array(v, path, classes, check_result, err);
}

static int check_errors(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return check_array(v, path, classes, check_error, err);
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
    if (check_object(v, path, f, NFIELDS(f), C_ANY, err) != 0)
        return -1;
    if (json_number_value(json_object_get(v, "max")) < json_number_value(json_object_get(v, "min")))
        return kp_err_set(err, "%s: max < min", path);
    return 0;
}

static int check_aggregate(const json_t *v, const char *path, unsigned unused, struct kp_err *err)
{
    static const struct field f[] = {
        {"test", K_STR, ALL, ALL, check_test_name},
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
    if (check_test_name(test, path, 0, err) != 0)
        return kp_err_prefix(err, "%s.test", path);
    if (check_object(v, path, f, NFIELDS(f), test_classes(json_string_value(test)), err) != 0)
        return -1;
    if (json_integer_value(json_object_get(v, "samples")) < 1)
        return kp_err_set(err, "%s.samples: must be at least 1", path);
    if ((test_classes(json_string_value(test)) & C_LAT) &&
        json_integer_value(json_object_get(v, "ops")) !=
            json_integer_value(json_object_get(json_object_get(v, "histogram"), "count")))
        return kp_err_set(err, "%s: ops differs from histogram.count", path);
    return 0;
}

static int check_aggregates(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return check_array(v, path, classes, check_aggregate, err);
}

static int check_agent(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"version", K_STR, ALL, ALL, NULL},
        {"hostname", K_STR, ALL, ALL, NULL},
        {"kernel", K_STR, ALL, ALL, NULL},
        {"machine", K_STR, 0, ALL, NULL}, /* optional: agents before it did not send it */
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_server(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"host", K_STR, ALL, ALL, NULL},
        {"port", K_INT, ALL, ALL, check_port},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_params(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"tests", K_ARR, ALL, ALL, check_tests},   {"duration_s", K_NUM, ALL, ALL, NULL},
        {"omit_s", K_NUM, ALL, ALL, NULL},         {"interval_s", K_NUM, ALL, ALL, NULL},
        {"samples", K_INT, ALL, ALL, NULL},        {"streams", K_INT, ALL, ALL, NULL},
        {"msg_size_bytes", K_INT, ALL, ALL, NULL}, {"udp_rate_bps", K_INT, ALL, ALL, NULL},
        {"reverse", K_BOOL, ALL, ALL, NULL},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_mtu(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_INT, 0, ALL, NULL},
        {"server", K_INT, 0, ALL, NULL},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

/* server_facts (kperf-agent client --server-facts; the FACTS of docs/protocol.md): the server
 * host's facts, every field optional, nothing else allowed. */
static int check_nic(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"name", K_STR, 0, ALL, NULL},
        {"driver", K_STR, 0, ALL, NULL},
        {"driver_version", K_STR, 0, ALL, NULL},
        {"bus", K_STR, 0, ALL, NULL},
        {"speed_mbps", K_INT, 0, ALL, NULL},
        {"mtu", K_INT, 0, ALL, NULL},
        {"rx_queues", K_INT, 0, ALL, NULL},
        {"tx_queues", K_INT, 0, ALL, NULL},
        {"combined_queues", K_INT, 0, ALL, NULL},
        {"gro", K_BOOL, 0, ALL, NULL},
        {"gso", K_BOOL, 0, ALL, NULL},
        {"tso", K_BOOL, 0, ALL, NULL},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_nics(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return check_array(v, path, classes, check_nic, err);
}

static int check_sysctls(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"tcp_congestion_control", K_STR, 0, ALL, NULL},
        {"rmem_max", K_STR, 0, ALL, NULL},
        {"wmem_max", K_STR, 0, ALL, NULL},
        {"tcp_rmem", K_STR, 0, ALL, NULL},
        {"tcp_wmem", K_STR, 0, ALL, NULL},
        {"nf_conntrack_max", K_STR, 0, ALL, NULL},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_net(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"nics", K_ARR, 0, ALL, check_nics},
        {"sysctls", K_OBJ, 0, ALL, check_sysctls},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_server_facts(const json_t *v, const char *path, unsigned classes,
                              struct kp_err *err)
{
    static const struct field f[] = {
        {"hostname", K_STR, 0, ALL, NULL},  {"kernel", K_STR, 0, ALL, NULL},
        {"machine", K_STR, 0, ALL, NULL},   {"os_image", K_STR, 0, ALL, NULL},
        {"cpus", K_INT, 0, ALL, NULL},      {"cpu_model", K_STR, 0, ALL, NULL},
        {"interface", K_STR, 0, ALL, NULL}, {"net", K_OBJ, 0, ALL, check_net},
    };
    (void)classes;
    return check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

int result_validate_entry(const json_t *entry, const char *path, struct kp_err *err)
{
    return check_result(entry, path, 0, err);
}

int result_validate(const json_t *doc, struct kp_err *err)
{
    static const struct field f[] = {
        {"schema", K_STR, ALL, ALL, check_schema},
        {"agent", K_OBJ, ALL, ALL, check_agent},
        {"server", K_OBJ, ALL, ALL, check_server},
        {"params", K_OBJ, ALL, ALL, check_params},
        {"mtu", K_OBJ, ALL, ALL, check_mtu},
        {"results", K_ARR, ALL, ALL, check_results},
        {"errors", K_ARR, ALL, ALL, check_errors},
        {"aggregates", K_ARR, 0, ALL, check_aggregates},
        {"first_answer_unix_s", K_NUM, 0, ALL, NULL},
        {"server_facts", K_OBJ, 0, ALL, check_server_facts},
    };
    return check_object(doc, "", f, NFIELDS(f), C_ANY, err);
}

int result_parse(const char *buf, size_t len, json_t **doc, struct kp_err *err)
{
    json_error_t jerr;
    json_t *j;

    *doc = NULL;
    if (len > RESULT_MAX_BYTES)
        return kp_err_set(err, "result document of %zu bytes exceeds the %u byte limit", len,
                          RESULT_MAX_BYTES);
    j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j)
        return kp_err_set(err, "result is not JSON: line %d: %s", jerr.line, jerr.text);
    if (result_validate(j, err) != 0) {
        json_decref(j);
        return kp_err_prefix(err, "invalid %s document", RESULT_SCHEMA);
    }
    *doc = j;
    return 0;
}

/* --- access ------------------------------------------------------------------------------- */

size_t result_count(const json_t *doc)
{
    return json_array_size(json_object_get(doc, "results"));
}

const json_t *result_get(const json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "results"), i);
}

size_t result_error_count(const json_t *doc)
{
    return json_array_size(json_object_get(doc, "errors"));
}

const json_t *result_error_get(const json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "errors"), i);
}

const char *result_test(const json_t *res)
{
    return json_string_value(json_object_get(res, "test"));
}

int result_number(const json_t *res, const char *path, double *out)
{
    char part[64];
    const json_t *v = res;
    const char *p = path;

    while (*p && v) {
        size_t n = strcspn(p, ".");
        if (n == 0 || n >= sizeof(part))
            return -1;
        memcpy(part, p, n);
        part[n] = '\0';
        v = json_object_get(v, part);
        p += n;
        if (*p == '.')
            p++;
    }
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

struct hist *result_histogram(const json_t *res, struct kp_err *err)
{
    const json_t *h = json_object_get(res, "histogram");

    if (!h) {
        kp_err_set(err, "%s result has no histogram", result_test(res) ? result_test(res) : "?");
        return NULL;
    }
    return hist_from_json(h, err);
}

/* --- emission ----------------------------------------------------------------------------- */

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

json_t *result_latency_json(const struct hist *h)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "min", us(hist_min(h)), "mean",
                     hist_mean(h) / 1000.0, "p50", us(hist_percentile(h, 50.0)), "p90",
                     us(hist_percentile(h, 90.0)), "p99", us(hist_percentile(h, 99.0)), "p999",
                     us(hist_percentile(h, 99.9)), "max", us(hist_max(h)), "stddev",
                     hist_stddev(h) / 1000.0);
}

json_t *result_node_cpu_json(const uint64_t d[8])
{
    double total = 0;
    double pct[8] = {0};

    for (int i = 0; i < 8; i++)
        total += (double)d[i];
    for (int i = 0; i < 8 && total > 0; i++)
        pct[i] = 100.0 * (double)d[i] / total;
    return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "user_pct", pct[0] + pct[1],
                     "system_pct", pct[2], "softirq_pct", pct[6], "irq_pct", pct[5], "steal_pct",
                     pct[7], "iowait_pct", pct[4], "idle_pct", pct[3]);
}

/* --- aggregates --------------------------------------------------------------------------- */

static double num(const json_t *res, const char *path)
{
    double v = 0;
    (void)result_number(res, path, &v);
    return v;
}

static void add_sum(json_t *obj, const char *key, double v, int integer)
{
    json_t *old = json_object_get(obj, key);
    double sum = (old ? json_number_value(old) : 0) + v;
    json_object_set_new(obj, key, integer ? json_integer((json_int_t)sum) : json_real(sum));
}

static json_t *spread_json(const double *v, size_t n)
{
    double mn = v[0], mx = v[0], mean = 0, var = 0;

    for (size_t i = 0; i < n; i++) {
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
        mean += v[i] / (double)n;
    }
    for (size_t i = 0; n > 1 && i < n; i++)
        var += (v[i] - mean) * (v[i] - mean) / (double)(n - 1);
    return json_pack("{s:f, s:f, s:f, s:f}", "min", mn, "max", mx, "mean", mean, "stddev",
                     sqrt(var));
}

/* Sums the counters of one sample into agg (udp, tcp, cpu, bytes/ops). */
static void add_counters(json_t *agg, const json_t *r, unsigned classes)
{
    json_t *cpu = json_object_get(agg, "cpu_seconds");

    add_sum(cpu, "client", num(r, "cpu_seconds.client"), 0);
    add_sum(cpu, "server", num(r, "cpu_seconds.server"), 0);
    add_sum(agg, "duration_s", num(r, "duration_s"), 0);
    if (classes & C_LAT)
        add_sum(agg, "ops", num(r, "ops"), 1);
    if (classes & C_STREAM)
        add_sum(agg, "bytes", num(r, "bytes"), 1);
    if (classes & C_UDP) {
        json_t *u = json_object_get(agg, "udp");
        add_sum(u, "sent", num(r, "udp.sent"), 1);
        add_sum(u, "received", num(r, "udp.received"), 1);
        add_sum(u, "lost", num(r, "udp.lost"), 1);
        if (classes & C_STREAM) {
            add_sum(u, "jitter_us", num(r, "udp.jitter_us"), 0); /* divided by n later */
            add_sum(u, "out_of_order", num(r, "udp.out_of_order"), 1);
            add_sum(u, "rcvbuf_errors", num(r, "udp.rcvbuf_errors"), 1);
        }
    }
    if (classes & C_LOAD) {
        json_t *l = json_object_get(agg, "load");
        if (!l) {
            l = json_pack("{s:s, s:I, s:f, s:i, s:f}", "test", "TCP_STREAM_MULTI", "streams",
                          (json_int_t)num(r, "load.streams"), "duration_s", 0.0, "bytes", 0,
                          "throughput_mbps", 0.0);
            json_object_set_new(agg, "load", l);
        }
        add_sum(l, "duration_s", num(r, "load.duration_s"), 0);
        add_sum(l, "bytes", num(r, "load.bytes"), 1);
        add_sum(l, "throughput_mbps", num(r, "load.throughput_mbps"), 0); /* divided by n later */
    }
    if (json_object_get(r, "tcp")) {
        json_t *t = json_object_get(agg, "tcp");
        if (!t) {
            t = json_pack("{s:i, s:f, s:I}", "retransmits", 0, "rtt_us", 0.0, "mss",
                          (json_int_t)num(r, "tcp.mss"));
            json_object_set_new(agg, "tcp", t);
        }
        add_sum(t, "retransmits", num(r, "tcp.retransmits"), 1);
        add_sum(t, "rtt_us", num(r, "tcp.rtt_us"), 0); /* divided by n later */
    }
}

static void finish_means(json_t *agg, size_t n)
{
    json_t *u = json_object_get(agg, "udp");
    json_t *t = json_object_get(agg, "tcp");
    json_t *l = json_object_get(agg, "load");

    if (l)
        json_object_set_new(l, "throughput_mbps", json_real(num(l, "throughput_mbps") / (double)n));
    if (u) {
        double sent = num(u, "sent");
        json_object_set_new(u, "loss_pct",
                            json_real(sent > 0 ? 100.0 * num(u, "lost") / sent : 0.0));
        if (json_object_get(u, "jitter_us"))
            json_object_set_new(u, "jitter_us", json_real(num(u, "jitter_us") / (double)n));
    }
    if (t)
        json_object_set_new(t, "rtt_us", json_real(num(t, "rtt_us") / (double)n));
}

json_t *result_aggregate(const json_t *doc, const char *test, int reverse, struct kp_err *err)
{
    unsigned classes = test_classes(test);
    const char *headline = classes & C_LAT ? "ops_per_sec" : "throughput_mbps";
    size_t n = 0, i;
    double *figures = calloc(result_count(doc) + 1, sizeof(double));
    struct hist *merged = NULL;
    json_t *agg = NULL;
    const json_t *r;

    if (!figures || !classes) {
        kp_err_set(err, "cannot aggregate %s", test ? test : "(null)");
        goto fail;
    }
    agg = json_pack("{s:s, s:b, s:i, s:{s:f, s:f}}", "test", test, "reverse", reverse, "samples", 0,
                    "cpu_seconds", "client", 0.0, "server", 0.0);
    if (classes & C_UDP)
        json_object_set_new(agg, "udp", json_object());
    if (classes & C_LAT)
        merged = hist_new();
    json_array_foreach(json_object_get(doc, "results"), i, r)
    {
        if (!result_test(r) || strcmp(result_test(r), test) != 0 ||
            json_is_true(json_object_get(r, "reverse")) != (reverse != 0))
            continue;
        if (merged) {
            struct hist *h = result_histogram(r, err);
            if (!h) {
                kp_err_prefix(err, "results[%zu]", i);
                goto fail;
            }
            hist_merge(merged, h);
            hist_free(h);
        }
        figures[n++] = num(r, headline);
        add_counters(agg, r, classes);
    }
    if (n == 0) {
        kp_err_set(err, "no %s%s sample to aggregate", test, reverse ? " reverse" : "");
        goto fail;
    }
    json_object_set_new(agg, "samples", json_integer((json_int_t)n));
    json_object_set_new(agg, "sample_spread", spread_json(figures, n));
    json_object_set_new(agg, headline,
                        json_real(num(json_object_get(agg, "sample_spread"), "mean")));
    if (merged) {
        json_object_set_new(agg, "latency_us", result_latency_json(merged));
        json_object_set_new(agg, "histogram", hist_to_json(merged));
    }
    finish_means(agg, n);
    hist_free(merged);
    free(figures);
    return agg;
fail:
    hist_free(merged);
    free(figures);
    json_decref(agg);
    return NULL;
}

int result_add_aggregates(json_t *doc, struct kp_err *err)
{
    json_t *aggs = json_array();
    const json_t *r;
    size_t i;

    json_array_foreach(json_object_get(doc, "results"), i, r)
    {
        const char *test = result_test(r);
        int reverse = json_is_true(json_object_get(r, "reverse"));
        const json_t *a;
        size_t j;
        int seen = 0;
        json_t *agg;

        json_array_foreach(aggs, j, a)
        {
            if (strcmp(result_test(a), test) == 0 &&
                json_is_true(json_object_get(a, "reverse")) == reverse)
                seen = 1;
        }
        if (seen)
            continue;
        agg = result_aggregate(doc, test, reverse, err);
        if (!agg) {
            json_decref(aggs);
            return -1;
        }
        json_array_append_new(aggs, agg);
    }
    json_object_set_new(doc, "aggregates", aggs);
    return 0;
}
