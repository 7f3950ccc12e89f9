/* SPDX-License-Identifier: Apache-2.0 */
/* report_validate.c - strict checks of kperf.report/v1 documents: structure, metadata, rows,
 * aggregates, statistics. The agent results[] entries a row keeps as samples are checked by
 * base/result.h (result_validate_entry), the one schema check of agent documents. */
#include "controller/report/report_validate.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/kp_err.h"
#include "base/result.h"
#include "controller/report/pathmtu.h"
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

/* A sample's mtu (the agent document's: interface MTUs and the path-MTU probe) or, with
 * is_row, a row's path_mtu (pathmtu.h), whose verdict is required. */
static int validate_mtu(const json_t *mtu, const char *p, bool is_row, struct kp_err *err)
{
    const json_t *v = json_object_get(mtu, "verdict");

    if (want_type(mtu, "client", JSON_INTEGER, false, p, err) != 0 ||
        want_type(mtu, "server", JSON_INTEGER, false, p, err) != 0 ||
        want_type(mtu, "path", JSON_INTEGER, false, p, err) != 0 ||
        want_type(mtu, "icmp", JSON_INTEGER, false, p, err) != 0 ||
        want_type(mtu, "probe_ms", JSON_INTEGER, false, p, err) != 0 ||
        want_type(mtu, "tcp_full_mss", JSON_TRUE, false, p, err) != 0 ||
        want_type(mtu, "verdict", JSON_STRING, is_row, p, err) != 0)
        return -1;
    if (v && !pathmtu_verdict_known(json_string_value(v)))
        return kp_err_set(err, "%s.verdict: \"%s\" is not ok, reduced, black-hole or unknown", p,
                          json_string_value(v));
    return 0;
}

/* One samples[] entry of a row: an agent results[] entry, checked by the agent's own schema
 * (base/result.h), plus the agent document's "mtu" that report_add_agent_doc keeps with it. */
static int validate_sample(const json_t *sample, const char *path, struct kp_err *err)
{
    const json_t *mtu = json_object_get(sample, "mtu");
    json_t *entry;
    char p[256];
    int rc;

    if (!json_is_object(sample))
        return kp_err_set(err, "%s: expected an object", path);
    if (mtu) {
        if (!json_is_object(mtu))
            return kp_err_set(err, "%s.mtu: expected an object", path);
        snprintf(p, sizeof(p), "%s.mtu", path);
        if (validate_mtu(mtu, p, false, err) != 0)
            return -1;
    }
    entry = json_copy((json_t *)sample); /* shallow: the same values, without the mtu */
    json_object_del(entry, "mtu");
    rc = result_validate_entry(entry, path, err);
    json_decref(entry);
    return rc;
}

/* A row's errors[] entry: an agent's {test, sample, error} or the runner's {test, error}. */
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

/* A row's evidence (evidence.h): its moved[] entries name a side, a counter, a delta >= 1
 * and a class; the sums are the samples' counters, already checked. */
static int validate_evidence(const json_t *ev, const char *path, struct kp_err *err)
{
    static const char *const classes[] = {"shaping", "drop", "overflow"};
    const json_t *m;
    size_t i;
    char p[160];

    if (!ev)
        return 0;
    if (!json_is_object(ev) || !json_is_array(json_object_get(ev, "moved")))
        return kp_err_set(err, "%s.evidence: expected an object with moved[]", path);
    json_array_foreach(json_object_get(ev, "moved"), i, m)
    {
        const char *side = json_string_value(json_object_get(m, "side"));
        const char *cls = json_string_value(json_object_get(m, "class"));
        bool known = false;
        snprintf(p, sizeof(p), "%s.evidence.moved[%zu]", path, i);
        if (want_type(m, "counter", JSON_STRING, true, p, err) != 0 ||
            want_type(m, "delta", JSON_INTEGER, true, p, err) != 0)
            return -1;
        for (size_t c = 0; cls && c < 3; c++)
            known = known || strcmp(cls, classes[c]) == 0;
        if (!side || (strcmp(side, "client") != 0 && strcmp(side, "server") != 0) || !known)
            return kp_err_set(err,
                              "%s: side must be client or server, class shaping, drop or "
                              "overflow",
                              p);
    }
    return 0;
}

int report_validate_row(const json_t *row, const char *path, struct kp_err *err)
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
        want_type(row, "capacity", JSON_OBJECT, false, path, err) != 0 ||
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
        if (validate_sample(v, p, err) != 0)
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
    if (validate_evidence(json_object_get(row, "evidence"), path, err) != 0)
        return -1;
    if (json_object_get(row, "path_mtu")) {
        char pm[160];
        snprintf(pm, sizeof(pm), "%s.path_mtu", path);
        if (!json_is_object(json_object_get(row, "path_mtu")))
            return kp_err_set(err, "%s: expected an object", pm);
        if (validate_mtu(json_object_get(row, "path_mtu"), pm, true, err) != 0)
            return -1;
    }
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

/* The provenance facts `kperf compare` reads: kube-proxy's mode and where it was read are text
 * (a mode, or "unknown (forbidden: ...)"), the CNI an object with a name. */
static int validate_metadata(const json_t *md, struct kp_err *err)
{
    const json_t *cni = json_object_get(md, "cni");

    if (want_type(md, "kube_proxy_mode", JSON_STRING, false, "metadata", err) != 0 ||
        want_type(md, "kube_proxy_mode_source", JSON_STRING, false, "metadata", err) != 0 ||
        want_type(md, "cni", JSON_OBJECT, false, "metadata", err) != 0)
        return -1;
    if (cni && (want_type(cni, "name", JSON_STRING, true, "metadata.cni", err) != 0 ||
                want_type(cni, "settings", JSON_OBJECT, false, "metadata.cni", err) != 0))
        return -1;
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
    if (validate_metadata(json_object_get(doc, "metadata"), err) != 0)
        return -1;
    v = json_object_get(doc, "settings");
    if (v && want_type(v, "noisy_cv_pct", JSON_REAL, false, "settings", err) != 0)
        return -1;
    json_array_foreach(json_object_get(doc, "results"), i, v)
    {
        snprintf(path, sizeof(path), "results[%zu]", i);
        if (report_validate_row(v, path, err) != 0)
            return -1;
    }
    if (validate_scoped(json_object_get(doc, "skipped"), "skipped", "reason", err) != 0 ||
        validate_scoped(json_object_get(doc, "errors"), "errors", "error", err) != 0)
        return -1;
    return 0;
}
