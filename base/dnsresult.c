/* SPDX-License-Identifier: Apache-2.0 */
/* dnsresult.c - the agent's dns document and its kperf.result/v1 entry (dnsresult.h); the
 * check of an entry's "dns" object (result_int.h) is here too. */
#include "base/dnsresult.h"

#include <string.h>

#include "base/hist.h"
#include "base/result.h"
#include "base/result_int.h"

static int check_proto(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    const char *s = json_string_value(v);

    (void)classes;
    if (strcmp(s, "udp") != 0 && strcmp(s, "tcp") != 0)
        return kp_err_set(err, "%s: \"%s\" is not udp or tcp", path, s);
    return 0;
}

static int check_type(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    const char *s = json_string_value(v);

    (void)classes;
    if (strcmp(s, "A") != 0 && strcmp(s, "AAAA") != 0)
        return kp_err_set(err, "%s: \"%s\" is not A or AAAA", path, s);
    return 0;
}

static int check_latency(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"p50", K_NUM, ALL, ALL, NULL},
        {"p99", K_NUM, ALL, ALL, NULL},
        {"max", K_NUM, ALL, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
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

static json_int_t ival(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* answered + lost = sent, slow_1s <= answered; "what" names the object in messages */
static int check_counts(const json_t *v, const char *what, struct kp_err *err)
{
    if (ival(v, "answered") + ival(v, "lost") != ival(v, "sent"))
        return kp_err_set(err, "%s: answered + lost differs from sent", what);
    if (ival(v, "slow_1s") > ival(v, "answered"))
        return kp_err_set(err, "%s: slow_1s > answered", what);
    return 0;
}

int dnsresult_validate(const json_t *doc, struct kp_err *err)
{
    static const struct field f[] = {
        {"name", K_STR, ALL, ALL, NULL},
        {"server", K_STR, ALL, ALL, NULL},
        {"port", K_INT, ALL, ALL, NULL},
        {"proto", K_STR, ALL, ALL, check_proto},
        {"type", K_STR, ALL, ALL, check_type},
        {"rate", K_INT, ALL, ALL, NULL},
        {"duration_ms", K_INT, ALL, ALL, NULL},
        {"timeout_ms", K_INT, ALL, ALL, NULL},
        {"sent", K_INT, ALL, ALL, NULL},
        {"answered", K_INT, ALL, ALL, NULL},
        {"lost", K_INT, ALL, ALL, NULL},
        {"slow_1s", K_INT, ALL, ALL, NULL},
        {"lost_or_slow_pct", K_NUM, ALL, ALL, NULL},
        {"rcode_errors", K_INT, ALL, ALL, NULL},
        {"truncated", K_INT, ALL, ALL, NULL},
        {"malformed", K_INT, ALL, ALL, NULL},
        {"late", K_INT, ALL, ALL, NULL},
        {"latency_us", K_OBJ, ALL, ALL, check_latency},
        {"histogram", K_OBJ, ALL, ALL, check_histogram},
    };
    if (result_check_object(doc, "dns", f, NFIELDS(f), C_ANY, err) != 0 ||
        check_counts(doc, "dns", err) != 0)
        return -1;
    if (ival(json_object_get(doc, "histogram"), "count") != ival(doc, "answered"))
        return kp_err_set(err, "dns: histogram.count differs from answered");
    if (ival(doc, "duration_ms") == 0)
        return kp_err_set(err, "dns.duration_ms: must be more than 0");
    return 0;
}

int dnsresult_parse(const char *buf, size_t len, json_t **doc, struct kp_err *err)
{
    json_error_t jerr;
    json_t *j;

    *doc = NULL;
    if (len > DNSRESULT_MAX_BYTES)
        return kp_err_set(err, "dns document of %zu bytes exceeds the %u byte limit", len,
                          DNSRESULT_MAX_BYTES);
    j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j)
        return kp_err_set(err, "dns document is not JSON: line %d: %s", jerr.line, jerr.text);
    if (dnsresult_validate(j, err) != 0) {
        json_decref(j);
        return kp_err_prefix(err, "invalid kperf-agent dns document");
    }
    *doc = j;
    return 0;
}

int result_check_dns(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"proto", K_STR, ALL, ALL, check_proto}, {"type", K_STR, ALL, ALL, check_type},
        {"name", K_STR, ALL, ALL, NULL},         {"server", K_STR, ALL, ALL, NULL},
        {"rate", K_INT, ALL, ALL, NULL},         {"timeout_ms", K_INT, ALL, ALL, NULL},
        {"sent", K_INT, ALL, ALL, NULL},         {"answered", K_INT, ALL, ALL, NULL},
        {"lost", K_INT, ALL, ALL, NULL},         {"slow_1s", K_INT, ALL, ALL, NULL},
        {"lost_pct", K_NUM, ALL, ALL, NULL},     {"slow_pct", K_NUM, ALL, ALL, NULL},
        {"rcode_errors", K_INT, ALL, ALL, NULL}, {"truncated", K_INT, ALL, ALL, NULL},
        {"malformed", K_INT, ALL, ALL, NULL},    {"late", K_INT, ALL, ALL, NULL},
    };
    (void)classes;
    if (result_check_object(v, path, f, NFIELDS(f), C_ANY, err) != 0)
        return -1;
    if (json_number_value(json_object_get(v, "lost_pct")) > 100 ||
        json_number_value(json_object_get(v, "slow_pct")) > 100)
        return kp_err_set(err, "%s: a percentage above 100", path);
    return check_counts(v, path, err);
}

static double pct(json_int_t part, json_int_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

json_t *dnsresult_entry(const json_t *dns, int sample, const char *start_time)
{
    int tcp = strcmp(json_string_value(json_object_get(dns, "proto")), "tcp") == 0;
    json_int_t sent = ival(dns, "sent"), answered = ival(dns, "answered"), lost = ival(dns, "lost");
    double dur = (double)ival(dns, "duration_ms") / 1000.0;
    struct kp_err err;
    struct hist *h = hist_from_json(json_object_get(dns, "histogram"), &err);
    json_t *e;

    if (!h)
        return NULL; /* not a checked document */
    e = json_pack("{s:s, s:i, s:b, s:s, s:f, s:I, s:f, s:o, s:O, s:{s:f, s:f}, s:o}", "test",
                  tcp ? "TCP_CRR" : "UDP_RR", "sample", sample, "reverse", 0, "start_time",
                  start_time, "duration_s", dur, "ops", answered, "ops_per_sec",
                  (double)answered / dur, "latency_us", result_latency_json(h), "histogram",
                  json_object_get(dns, "histogram"), "cpu_seconds", "client", 0.0, "server", 0.0,
                  "node_cpu",
                  json_pack("{s:o, s:o}", "client", result_node_cpu_json((uint64_t[8]){0}),
                            "server", result_node_cpu_json((uint64_t[8]){0})));
    hist_free(h);
    if (!tcp)
        json_object_set_new(e, "udp",
                            json_pack("{s:I, s:I, s:I, s:f}", "sent", sent, "received", answered,
                                      "lost", lost, "loss_pct", pct(lost, sent)));
    json_object_set_new(
        e, "dns",
        json_pack("{s:O, s:O, s:O, s:O, s:O, s:O, s:I, s:I, s:I, s:O, s:f, s:f, s:O, s:O, s:O, "
                  "s:O}",
                  "proto", json_object_get(dns, "proto"), "type", json_object_get(dns, "type"),
                  "name", json_object_get(dns, "name"), "server", json_object_get(dns, "server"),
                  "rate", json_object_get(dns, "rate"), "timeout_ms",
                  json_object_get(dns, "timeout_ms"), "sent", sent, "answered", answered, "lost",
                  lost, "slow_1s", json_object_get(dns, "slow_1s"), "lost_pct", pct(lost, sent),
                  "slow_pct", pct(ival(dns, "slow_1s"), sent), "rcode_errors",
                  json_object_get(dns, "rcode_errors"), "truncated",
                  json_object_get(dns, "truncated"), "malformed", json_object_get(dns, "malformed"),
                  "late", json_object_get(dns, "late")));
    return e;
}

json_t *dnsresult_doc(const json_t *const *dns, size_t n, const char *hostname,
                      const char *start_time)
{
    json_t *tests = json_array(), *results = json_array(), *doc;
    double dur = 0;

    for (size_t i = 0; i < n; i++) {
        json_t *e = dnsresult_entry(dns[i], 0, start_time);
        if (!e)
            continue;
        json_array_append(tests, json_object_get(e, "test"));
        if (json_number_value(json_object_get(e, "duration_s")) > dur)
            dur = json_number_value(json_object_get(e, "duration_s"));
        json_array_append_new(results, e);
    }
    doc = json_pack(
        "{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:I}, s:{s:o, s:f, s:f, s:f, s:i, s:i, s:i, "
        "s:i, s:b}, s:{}, s:o, s:[]}",
        "schema", RESULT_SCHEMA, "agent", "version", "dns", "hostname", hostname, "kernel", "",
        "server", "host", n ? json_string_value(json_object_get(dns[0], "server")) : "?", "port",
        n ? ival(dns[0], "port") : (json_int_t)53, "params", "tests", tests, "duration_s", dur,
        "omit_s", 0.0, "interval_s", 0.0, "samples", 1, "streams", 1, "msg_size_bytes", 0,
        "udp_rate_bps", 0, "reverse", 0, "mtu", "results", results, "errors");
    return doc;
}
