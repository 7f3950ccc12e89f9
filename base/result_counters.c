/* SPDX-License-Identifier: Apache-2.0 */
/* result_counters.c - the check of a results[] entry's "counters" (docs/result-schema.md): each
 * side's kernel and NIC counter deltas as agent/counters.h writes them. */
#include "base/result_int.h"

#include <string.h>

#define COUNTERS_MAX_NAMES 1024
#define COUNTER_NAME_MAX   63

static int check_sources(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    size_t i;
    const json_t *s;

    (void)classes;
    if (json_array_size(v) > 16)
        return kp_err_set(err, "%s: more than 16 sources", path);
    json_array_foreach(v, i, s)
    {
        if (!json_is_string(s))
            return kp_err_set(err, "%s[%zu]: expected a string", path, i);
    }
    return 0;
}

static int check_deltas(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    const char *key;
    const json_t *d;

    (void)classes;
    if (json_object_size(v) > COUNTERS_MAX_NAMES)
        return kp_err_set(err, "%s: more than %d counters", path, COUNTERS_MAX_NAMES);
    json_object_foreach((json_t *)v, key, d)
    {
        if (strlen(key) == 0 || strlen(key) > COUNTER_NAME_MAX)
            return kp_err_set(err, "%s: a counter name of %zu bytes (1..%d)", path, strlen(key),
                              COUNTER_NAME_MAX);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return kp_err_set(err, "%s.%s: expected an integer >= 0", path, key);
    }
    return 0;
}

static int check_side(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"v", K_INT, ALL, ALL, NULL},
        {"sources", K_ARR, 0, ALL, check_sources},
        {"deltas", K_OBJ, 0, ALL, check_deltas},
        {"conntrack_count", K_INT, 0, ALL, NULL},
        {"conntrack_max", K_INT, 0, ALL, NULL},
        {"trimmed", K_BOOL, 0, ALL, NULL},
        {"error", K_STR, 0, ALL, NULL},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}

int result_check_counters(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"client", K_OBJ, 0, ALL, check_side},
        {"server", K_OBJ, 0, ALL, check_side},
    };
    (void)classes;
    return result_check_object(v, path, f, NFIELDS(f), C_ANY, err);
}
