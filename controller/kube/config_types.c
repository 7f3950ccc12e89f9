/* SPDX-License-Identifier: Apache-2.0 */
/* config_types.c - the types of a kubeconfig's fields, checked the way kubectl's decoder does
 * (client-go clientcmd/api/v1 decoded from YAML by JSON rules): a field of the wrong type
 * refuses the whole file, null is the field's zero value, unknown fields are ignored. The file
 * is loaded with typed scalars, so `insecure-skip-tls-verify: "true"` (a string) is refused as
 * kubectl refuses it and `token: null` is no token. */
#include "controller/kube/config_int.h"

#include <stdio.h>
#include <string.h>

enum ftype {
    T_STR,   /* string */
    T_BOOL,  /* bool */
    T_STRS,  /* []string */
    T_SMAP,  /* map[string]string */
    T_SSMAP, /* map[string][]string */
    T_OBJ,   /* a struct: sub */
    T_LIST,  /* []struct: sub */
    T_ANY,   /* runtime.RawExtension */
};

struct field {
    const char *key;
    enum ftype type;
    const struct field *sub; /* T_OBJ, T_LIST; ends with key NULL */
};

static const struct field named_ext[] = {
    {"name", T_STR, NULL}, {"extension", T_ANY, NULL}, {NULL, T_ANY, NULL}};
static const struct field cluster[] = {
    {"server", T_STR, NULL},
    {"tls-server-name", T_STR, NULL},
    {"insecure-skip-tls-verify", T_BOOL, NULL},
    {"certificate-authority", T_STR, NULL},
    {"certificate-authority-data", T_STR, NULL},
    {"proxy-url", T_STR, NULL},
    {"disable-compression", T_BOOL, NULL},
    {"extensions", T_LIST, named_ext},
    {NULL, T_ANY, NULL},
};
static const struct field exec_env[] = {
    {"name", T_STR, NULL}, {"value", T_STR, NULL}, {NULL, T_ANY, NULL}};
static const struct field exec[] = {
    {"command", T_STR, NULL},         {"args", T_STRS, NULL},
    {"env", T_LIST, exec_env},        {"apiVersion", T_STR, NULL},
    {"installHint", T_STR, NULL},     {"provideClusterInfo", T_BOOL, NULL},
    {"interactiveMode", T_STR, NULL}, {NULL, T_ANY, NULL},
};
static const struct field auth_provider[] = {
    {"name", T_STR, NULL}, {"config", T_SMAP, NULL}, {NULL, T_ANY, NULL}};
static const struct field user[] = {
    {"client-certificate", T_STR, NULL},
    {"client-certificate-data", T_STR, NULL},
    {"client-key", T_STR, NULL},
    {"client-key-data", T_STR, NULL},
    {"token", T_STR, NULL},
    {"tokenFile", T_STR, NULL},
    {"as", T_STR, NULL},
    {"as-uid", T_STR, NULL},
    {"as-groups", T_STRS, NULL},
    {"as-user-extra", T_SSMAP, NULL},
    {"username", T_STR, NULL},
    {"password", T_STR, NULL},
    {"auth-provider", T_OBJ, auth_provider},
    {"exec", T_OBJ, exec},
    {"extensions", T_LIST, named_ext},
    {NULL, T_ANY, NULL},
};
static const struct field context[] = {
    {"cluster", T_STR, NULL},          {"user", T_STR, NULL}, {"namespace", T_STR, NULL},
    {"extensions", T_LIST, named_ext}, {NULL, T_ANY, NULL},
};
static const struct field named_cluster[] = {
    {"name", T_STR, NULL}, {"cluster", T_OBJ, cluster}, {NULL, T_ANY, NULL}};
static const struct field named_user[] = {
    {"name", T_STR, NULL}, {"user", T_OBJ, user}, {NULL, T_ANY, NULL}};
static const struct field named_context[] = {
    {"name", T_STR, NULL}, {"context", T_OBJ, context}, {NULL, T_ANY, NULL}};
static const struct field preferences[] = {
    {"colors", T_BOOL, NULL}, {"extensions", T_LIST, named_ext}, {NULL, T_ANY, NULL}};
static const struct field config[] = {
    {"kind", T_STR, NULL},
    {"apiVersion", T_STR, NULL},
    {"preferences", T_OBJ, preferences},
    {"clusters", T_LIST, named_cluster},
    {"users", T_LIST, named_user},
    {"contexts", T_LIST, named_context},
    {"current-context", T_STR, NULL},
    {"extensions", T_LIST, named_ext},
    {NULL, T_ANY, NULL},
};

static const char *kind_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "a mapping";
    case JSON_ARRAY:
        return "a list";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

static int wrong(const char *where, const json_t *v, const char *want, struct kp_err *err)
{
    return kp_err_set(err, "%s must be %s, not %s (kubectl refuses this file too)", where, want,
                      kind_of(v));
}

static int check(const json_t *v, enum ftype t, const struct field *sub, const char *where,
                 struct kp_err *err);

/* Checks that snprintf built the whole field path (n is its result). Returns 0 or -1. */
static int path_fits(int n, size_t size, const char *where, struct kp_err *err)
{
    if (n < 0 || (size_t)n >= size)
        return kp_err_set(err, "%.80s...: nested too deeply", where);
    return 0;
}

static int check_obj(const json_t *v, const struct field *f, const char *where, struct kp_err *err)
{
    if (!json_is_object(v))
        return wrong(where, v, "a mapping", err);
    for (; f->key; f++) {
        json_t *x = json_object_get(v, f->key);
        char path[512];
        if (!x || json_is_null(x))
            continue;
        if (path_fits(snprintf(path, sizeof(path), "%s%s%s", where, *where ? "." : "", f->key),
                      sizeof(path), where, err) != 0 ||
            check(x, f->type, f->sub, path, err) != 0)
            return -1;
    }
    return 0;
}

static int check(const json_t *v, enum ftype t, const struct field *sub, const char *where,
                 struct kp_err *err)
{
    size_t i;
    json_t *e;
    const char *k;
    char path[512];

    switch (t) {
    case T_STR:
        return json_is_string(v) ? 0 : wrong(where, v, "a string", err);
    case T_BOOL:
        return json_is_boolean(v) ? 0 : wrong(where, v, "true or false (unquoted)", err);
    case T_OBJ:
        return check_obj(v, sub, where, err);
    case T_ANY:
        return 0;
    case T_SMAP:
    case T_SSMAP:
        if (!json_is_object(v))
            return wrong(where, v, "a mapping", err);
        json_object_foreach((json_t *)v, k, e)
        {
            if (path_fits(snprintf(path, sizeof(path), "%s.%s", where, k), sizeof(path), where,
                          err) != 0)
                return -1;
            if (!json_is_null(e) && check(e, t == T_SMAP ? T_STR : T_STRS, NULL, path, err) != 0)
                return -1;
        }
        return 0;
    case T_STRS:
    case T_LIST:
        if (!json_is_array(v))
            return wrong(where, v, "a list", err);
        json_array_foreach(v, i, e)
        {
            if (path_fits(snprintf(path, sizeof(path), "%s[%zu]", where, i), sizeof(path), where,
                          err) != 0)
                return -1;
            if (json_is_null(e))
                continue;
            if (t == T_STRS ? check(e, T_STR, NULL, path, err) : check_obj(e, sub, path, err))
                return -1;
        }
        return 0;
    }
    return 0;
}

int cfg_check_types(json_t *doc, struct kp_err *err)
{
    return check_obj(doc, config, "", err);
}
