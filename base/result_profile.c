/* SPDX-License-Identifier: Apache-2.0 */
/* result_profile.c - the check of a results[] entry's "profile" (docs/result-schema.md): the
 * kernel's CPU profile of the measured window as agent/kprof.h writes it, or why there is
 * none. */
#include "base/result_int.h"

#include <stdio.h>
#include <string.h>

#define PROFILE_MAX_FUNCTIONS 256
#define PROFILE_NAME_MAX      256

static int check_function(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"name", K_STR, ALL, ALL, NULL},
        {"samples", K_INT, ALL, ALL, NULL},
        {"stack", K_INT, 0, ALL, NULL},
    };
    const char *name;

    (void)classes;
    if (result_check_object(v, path, f, NFIELDS(f), C_ANY, err) != 0)
        return -1;
    name = json_string_value(json_object_get(v, "name"));
    if (name[0] == '\0' || strlen(name) > PROFILE_NAME_MAX)
        return kp_err_set(err, "%s.name: %zu bytes (1..%d)", path, strlen(name), PROFILE_NAME_MAX);
    if (json_integer_value(json_object_get(v, "samples")) < 0 ||
        json_integer_value(json_object_get(v, "stack")) < 0)
        return kp_err_set(err, "%s: sample counts must be >= 0", path);
    return 0;
}

static int check_functions(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    size_t i;
    const json_t *e;
    char sub[160];

    (void)classes;
    if (json_array_size(v) > PROFILE_MAX_FUNCTIONS)
        return kp_err_set(err, "%s: more than %d functions", path, PROFILE_MAX_FUNCTIONS);
    json_array_foreach(v, i, e)
    {
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        if (check_function(e, sub, classes, err) != 0)
            return -1;
    }
    return 0;
}

int result_check_profile(const json_t *v, const char *path, unsigned classes, struct kp_err *err)
{
    static const struct field f[] = {
        {"hz", K_INT, 0, ALL, NULL},      {"cpus", K_INT, 0, ALL, NULL},
        {"samples", K_INT, 0, ALL, NULL}, {"unknown", K_INT, 0, ALL, NULL},
        {"lost", K_INT, 0, ALL, NULL},    {"other", K_INT, 0, ALL, NULL},
        {"idle", K_INT, 0, ALL, NULL},    {"functions", K_ARR, 0, ALL, check_functions},
        {"error", K_STR, 0, ALL, NULL},
    };
    (void)classes;
    if (result_check_object(v, path, f, NFIELDS(f), C_ANY, err) != 0)
        return -1;
    if (!json_object_get(v, "error") && !json_object_get(v, "samples"))
        return kp_err_set(err, "%s: neither samples nor error", path);
    return 0;
}
