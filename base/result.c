/* SPDX-License-Identifier: Apache-2.0 */
/* result.c - see result.h. The document: its top-level parts (schema, agent, server, params,
 * mtu, results[], errors[], aggregates[], server_facts) checked through the table-driven
 * checker of result_check.c (which also checks each measurement), parsing, and typed access.
 * Aggregates and the shared emission pieces are result_agg.c's. */
#include "base/result.h"
#include "base/result_int.h"

#include <string.h>

#include "base/hist.h"
#include "base/kp_err.h"

/* --- the document ------------------------------------------------------------------------ */

static int check_schema(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    (void)classes;
    if (strcmp(json_string_value(v), RESULT_SCHEMA) != 0)
        return kp_err_set(err, "%s: \"%s\" is not %s", path, json_string_value(v), RESULT_SCHEMA);
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
    return result_check_array(v, path, classes, result_check_test_name, err);
}

static int check_error(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"test", K_STR, ALL, ALL, check_nonempty},
        {"sample", K_INT, ALL, ALL, NULL},
        {"error", K_STR, ALL, ALL, check_nonempty},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_results(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return result_check_array(v, path, classes, result_check_entry, err);
}

static int check_errors(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return result_check_array(v, path, classes, check_error, err);
}

static int check_aggregates(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return result_check_array(v, path, classes, result_check_aggregate, err);
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
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_server(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"host", K_STR, ALL, ALL, NULL},
        {"port", K_INT, ALL, ALL, check_port},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
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
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_pmtu_verdict(const json_t *v, const char *path, unsigned classes,
                              struct kp_err *err)
{
    static const char *const ok[] = {"ok", "reduced", "black-hole", "unknown"};

    (void)classes;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(json_string_value(v), ok[i]) == 0)
            return 0;
    return kp_err_set(err, "%s: \"%s\" is not ok, reduced, black-hole or unknown", path,
                      json_string_value(v));
}

static int check_mtu(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_INT, 0, ALL, NULL},
        {"server", K_INT, 0, ALL, NULL},
        /* the path-MTU probe (agent/client_pmtu.c), unless --no-path-mtu */
        {"path", K_INT, 0, ALL, NULL},
        {"icmp", K_INT, 0, ALL, NULL},
        {"tcp_full_mss", K_BOOL, 0, ALL, NULL},
        {"verdict", K_STR, 0, ALL, check_pmtu_verdict},
        {"probe_ms", K_INT, 0, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
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
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_nics(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    return result_check_array(v, path, classes, check_nic, err);
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
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

static int check_net(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"nics", K_ARR, 0, ALL, check_nics},
        {"sysctls", K_OBJ, 0, ALL, check_sysctls},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
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
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

int result_validate_entry(const json_t *entry, const char *path, struct kp_err *err)
{
    return result_check_entry(entry, path, 0, err);
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
    return result_check_object(doc, "", f, NFIELDS(f), C_ANY, err);
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
