/* SPDX-License-Identifier: Apache-2.0 */
/* report_validate.c - strict checks of kperf.result/v1 and kperf.report/v1 documents. */
#include "controller/report/report_validate.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "base/hist.h"
#include "base/kp_err.h"
#include "controller/report/report.h"

static int want_type(const json_t *obj, const char *key, json_type type, bool required,
                     const char *path, struct kp_err *err)
{
    static const char *names[] = {"an object", "an array",  "a string",  "an integer",
                                  "a number",  "a boolean", "a boolean", "null"};
    const json_t *v = json_object_get(obj, key);

    if (!v)
        return required ? kp_err_set(err, "%s.%s: missing", path, key) : 0;
    if (type == JSON_REAL) { /* any number, finite and not negative */
        if (!json_is_number(v))
            return kp_err_set(err, "%s.%s: expected a number", path, key);
        double d = json_number_value(v);
        if (!isfinite(d) || d < 0)
            return kp_err_set(err, "%s.%s: expected a non-negative number, got %g", path, key, d);
        return 0;
    }
    if (type == JSON_TRUE) {
        if (!json_is_boolean(v))
            return kp_err_set(err, "%s.%s: expected a boolean", path, key);
        return 0;
    }
    if (json_typeof(v) != type)
        return kp_err_set(err, "%s.%s: expected %s", path, key, names[type]);
    if (type == JSON_INTEGER && json_integer_value(v) < 0)
        return kp_err_set(err, "%s.%s: expected a non-negative integer", path, key);
    if (type == JSON_STRING && json_string_length(v) == 0)
        return kp_err_set(err, "%s.%s: empty string", path, key);
    if ((type == JSON_ARRAY && json_array_size(v) > REPORT_MAX_ENTRIES))
        return kp_err_set(err, "%s.%s: more than %d entries", path, key, REPORT_MAX_ENTRIES);
    return 0;
}

/* Every listed key of obj[key] (an optional object) must be a non-negative number if present;
 * `required` of them must be present. */
static int want_numbers(const json_t *obj, const char *key, const char *const *fields,
                        bool required, const char *path, struct kp_err *err)
{
    const json_t *sub = json_object_get(obj, key);
    char sub_path[256];

    if (!sub)
        return 0;
    if (!json_is_object(sub))
        return kp_err_set(err, "%s.%s: expected an object", path, key);
    snprintf(sub_path, sizeof(sub_path), "%s.%s", path, key);
    for (size_t i = 0; fields[i]; i++)
        if (want_type(sub, fields[i], JSON_REAL, required, sub_path, err) != 0)
            return -1;
    return 0;
}

static bool valid_test_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

static int check_histogram(const json_t *entry, const char *path, struct kp_err *err)
{
    struct hist *h = hist_from_json(json_object_get(entry, "histogram"), err);

    if (!h)
        return kp_err_prefix(err, "%s.histogram", path);
    hist_free(h);
    return 0;
}

int report_validate_sample(const json_t *entry, const char *path, struct kp_err *err)
{
    static const char *const latency[] = {"min", "mean", "p50", "p90", "p99", "max", NULL};
    static const char *const latency_opt[] = {"p999", "stddev", NULL};
    static const char *const tcp[] = {"retransmits", "rtt_us", "mss", NULL};
    static const char *const udp[] = {"sent",      "received",     "lost",          "loss_pct",
                                      "jitter_us", "out_of_order", "rcvbuf_errors", NULL};
    static const char *const cpu[] = {"client", "server", NULL};
    static const char *const scalars[] = {"duration_s",      "ops", "ops_per_sec", "bytes",
                                          "throughput_mbps", NULL};

    if (!json_is_object(entry))
        return kp_err_set(err, "%s: expected an object", path);
    if (want_type(entry, "test", JSON_STRING, true, path, err) != 0 ||
        want_type(entry, "sample", JSON_INTEGER, true, path, err) != 0 ||
        want_type(entry, "reverse", JSON_TRUE, false, path, err) != 0 ||
        want_type(entry, "duration_s", JSON_REAL, true, path, err) != 0)
        return -1;
    if (!valid_test_name(json_string_value(json_object_get(entry, "test"))))
        return kp_err_set(err, "%s.test: '%s' is not a test name (A-Z, 0-9, _)", path,
                          json_string_value(json_object_get(entry, "test")));
    for (size_t i = 0; scalars[i]; i++)
        if (want_type(entry, scalars[i], JSON_REAL, false, path, err) != 0)
            return -1;
    if (want_numbers(entry, "latency_us", latency, true, path, err) != 0 ||
        want_numbers(entry, "latency_us", latency_opt, false, path, err) != 0 ||
        want_numbers(entry, "tcp", tcp, false, path, err) != 0 ||
        want_numbers(entry, "udp", udp, false, path, err) != 0 ||
        want_numbers(entry, "cpu_seconds", cpu, false, path, err) != 0 ||
        want_type(entry, "streams", JSON_ARRAY, false, path, err) != 0 ||
        want_type(entry, "intervals", JSON_ARRAY, false, path, err) != 0)
        return -1;
    if (json_object_get(entry, "latency_us")) {
        if (!json_object_get(entry, "histogram"))
            return kp_err_set(err, "%s: latency_us without histogram (needed to merge samples)",
                              path);
        if (check_histogram(entry, path, err) != 0)
            return -1;
    } else if (!json_object_get(entry, "throughput_mbps")) {
        return kp_err_set(err, "%s: has neither latency_us nor throughput_mbps", path);
    }
    return 0;
}

static int validate_error_entry(const json_t *e, const char *path, struct kp_err *err)
{
    if (!json_is_object(e))
        return kp_err_set(err, "%s: expected an object", path);
    if (want_type(e, "error", JSON_STRING, true, path, err) != 0 ||
        want_type(e, "test", JSON_STRING, false, path, err) != 0 ||
        want_type(e, "sample", JSON_INTEGER, false, path, err) != 0)
        return -1;
    return 0;
}

int report_validate_agent_doc(const json_t *doc, struct kp_err *err)
{
    const json_t *schema, *v;
    size_t i;
    char path[64];

    if (!json_is_object(doc))
        return kp_err_set(err, "agent document: expected a JSON object");
    schema = json_object_get(doc, "schema");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), REPORT_AGENT_SCHEMA) != 0)
        return kp_err_set(err, "agent document: schema is not \"%s\"", REPORT_AGENT_SCHEMA);
    if (want_type(doc, "results", JSON_ARRAY, true, "agent document", err) != 0 ||
        want_type(doc, "errors", JSON_ARRAY, false, "agent document", err) != 0)
        return -1;
    json_array_foreach(json_object_get(doc, "results"), i, v)
    {
        snprintf(path, sizeof(path), "results[%zu]", i);
        if (report_validate_sample(v, path, err) != 0)
            return kp_err_prefix(err, "agent document");
    }
    json_array_foreach(json_object_get(doc, "errors"), i, v)
    {
        snprintf(path, sizeof(path), "errors[%zu]", i);
        if (validate_error_entry(v, path, err) != 0)
            return kp_err_prefix(err, "agent document");
    }
    return 0;
}

static int validate_stats(const json_t *s, const char *path, struct kp_err *err)
{
    const json_t *ci;

    if (!json_is_object(s))
        return kp_err_set(err, "%s: expected an object", path);
    if (want_type(s, "n", JSON_INTEGER, true, path, err) != 0 ||
        want_type(s, "noisy", JSON_TRUE, true, path, err) != 0 ||
        want_type(s, "stddev", JSON_REAL, true, path, err) != 0 ||
        want_type(s, "cv_pct", JSON_REAL, true, path, err) != 0)
        return -1;
    if (!json_is_number(json_object_get(s, "median")) ||
        !json_is_number(json_object_get(s, "mean")))
        return kp_err_set(err, "%s: median and mean must be numbers", path);
    ci = json_object_get(s, "ci95");
    if (!json_is_null(ci) &&
        !(json_is_array(ci) && json_array_size(ci) == 2 && json_is_number(json_array_get(ci, 0)) &&
          json_is_number(json_array_get(ci, 1))))
        return kp_err_set(err, "%s.ci95: expected [lo, hi] or null", path);
    return 0;
}

static int validate_row_stats(const json_t *row, const char *path, struct kp_err *err)
{
    const json_t *stats = json_object_get(row, "stats"), *v, *lat;
    const char *key;
    char p[256];

    if (!stats)
        return 0;
    if (!json_is_object(stats))
        return kp_err_set(err, "%s.stats: expected an object", path);
    json_object_foreach((json_t *)stats, key, v)
    {
        if (strcmp(key, "latency_us") == 0) {
            const char *k2;
            if (!json_is_object(v))
                return kp_err_set(err, "%s.stats.latency_us: expected an object", path);
            json_object_foreach((json_t *)v, k2, lat)
            {
                snprintf(p, sizeof(p), "%s.stats.latency_us.%s", path, k2);
                if (validate_stats(lat, p, err) != 0)
                    return -1;
            }
            continue;
        }
        snprintf(p, sizeof(p), "%s.stats.%s", path, key);
        if (validate_stats(v, p, err) != 0)
            return -1;
    }
    return 0;
}

static int validate_row(const json_t *row, const char *path, struct kp_err *err)
{
    static const char *const statuses[] = {"ok", "partial", "failed", "skipped", NULL};
    const json_t *v, *status;
    size_t i;
    char p[128];
    bool known = false;

    if (!json_is_object(row))
        return kp_err_set(err, "%s: expected an object", path);
    if (want_type(row, "scenario", JSON_STRING, true, path, err) != 0 ||
        want_type(row, "placement", JSON_STRING, true, path, err) != 0 ||
        want_type(row, "test", JSON_STRING, true, path, err) != 0 ||
        want_type(row, "reverse", JSON_TRUE, true, path, err) != 0 ||
        want_type(row, "kind", JSON_STRING, true, path, err) != 0 ||
        want_type(row, "status", JSON_STRING, true, path, err) != 0 ||
        want_type(row, "samples", JSON_ARRAY, true, path, err) != 0 ||
        want_type(row, "errors", JSON_ARRAY, true, path, err) != 0 ||
        want_type(row, "aggregate", JSON_OBJECT, false, path, err) != 0 ||
        want_type(row, "skip_reason", JSON_STRING, false, path, err) != 0 ||
        want_type(row, "noisy", JSON_TRUE, true, path, err) != 0)
        return -1;
    status = json_object_get(row, "status");
    for (i = 0; statuses[i]; i++)
        known = known || strcmp(json_string_value(status), statuses[i]) == 0;
    if (!known)
        return kp_err_set(err, "%s.status: unknown value '%s'", path, json_string_value(status));
    v = json_object_get(row, "kind");
    if (strcmp(json_string_value(v), "latency") != 0 &&
        strcmp(json_string_value(v), "throughput") != 0)
        return kp_err_set(err, "%s.kind: expected latency or throughput", path);
    json_array_foreach(json_object_get(row, "samples"), i, v)
    {
        snprintf(p, sizeof(p), "%s.samples[%zu]", path, i);
        if (report_validate_sample(v, p, err) != 0)
            return -1;
    }
    json_array_foreach(json_object_get(row, "errors"), i, v)
    {
        snprintf(p, sizeof(p), "%s.errors[%zu]", path, i);
        if (validate_error_entry(v, p, err) != 0)
            return -1;
    }
    if (json_array_size(json_object_get(row, "samples")) > 0 && !json_object_get(row, "aggregate"))
        return kp_err_set(err, "%s: samples without aggregate", path);
    return validate_row_stats(row, path, err);
}

static int validate_scoped(const json_t *arr, const char *name, const char *field,
                           struct kp_err *err)
{
    const json_t *v;
    size_t i;
    char p[64];

    json_array_foreach(arr, i, v)
    {
        snprintf(p, sizeof(p), "%s[%zu]", name, i);
        if (!json_is_object(v))
            return kp_err_set(err, "%s: expected an object", p);
        if (want_type(v, "scenario", JSON_STRING, true, p, err) != 0 ||
            want_type(v, "placement", JSON_STRING, true, p, err) != 0 ||
            want_type(v, field, JSON_STRING, true, p, err) != 0)
            return -1;
    }
    return 0;
}

int report_validate_doc(const json_t *doc, struct kp_err *err)
{
    const json_t *schema, *v;
    size_t i;
    char path[64];

    if (!json_is_object(doc))
        return kp_err_set(err, "expected a JSON object");
    schema = json_object_get(doc, "schema");
    if (!json_is_string(schema))
        return kp_err_set(err, "no \"schema\" field: not a kperf report");
    if (strcmp(json_string_value(schema), REPORT_SCHEMA) != 0)
        return kp_err_set(err, "schema is \"%s\", expected \"%s\"", json_string_value(schema),
                          REPORT_SCHEMA);
    if (want_type(doc, "metadata", JSON_OBJECT, true, "report", err) != 0 ||
        want_type(doc, "results", JSON_ARRAY, true, "report", err) != 0 ||
        want_type(doc, "skipped", JSON_ARRAY, false, "report", err) != 0 ||
        want_type(doc, "errors", JSON_ARRAY, false, "report", err) != 0 ||
        want_type(doc, "settings", JSON_OBJECT, false, "report", err) != 0)
        return -1;
    v = json_object_get(doc, "settings");
    if (v && want_type(v, "noisy_cv_pct", JSON_REAL, false, "settings", err) != 0)
        return -1;
    json_array_foreach(json_object_get(doc, "results"), i, v)
    {
        snprintf(path, sizeof(path), "results[%zu]", i);
        if (validate_row(v, path, err) != 0)
            return -1;
    }
    if (validate_scoped(json_object_get(doc, "skipped"), "skipped", "reason", err) != 0 ||
        validate_scoped(json_object_get(doc, "errors"), "errors", "error", err) != 0)
        return -1;
    return 0;
}
