/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_yaml.c - JSON <-> YAML: the emitter over libyaml's event API; parsing is base/yaml_load's
 * (typed scalars, every document, unique keys). */
#include "controller/k8s/k8s_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "base/kp_alloc.h"
#include "base/yaml_load.h"

/* True when a plain scalar with this text would not read back as a string in YAML 1.1 or
 * 1.2 (go-yaml v2, which kubectl uses, still knows yes/no/on/off). */
static int needs_quotes(const char *s)
{
    static const char *const words[] = {"y",    "n",     "yes",  "no", "on", "off",
                                        "true", "false", "null", "~",  NULL};
    char *end = NULL;

    if (!*s)
        return 1;
    for (const char *const *w = words; *w; w++) {
        if (strcasecmp(s, *w) == 0)
            return 1;
    }
    if (isdigit((unsigned char)s[0]) ||
        ((s[0] == '-' || s[0] == '+' || s[0] == '.') && isdigit((unsigned char)s[1])))
        return 1;
    errno = 0;
    (void)strtod(s, &end);
    return end && *end == '\0';
}

static int emit(yaml_emitter_t *em, yaml_event_t *ev, struct kp_err *err)
{
    if (!yaml_emitter_emit(em, ev))
        return kp_err_set(err, "cannot write YAML: %s",
                          em->problem ? em->problem : "emitter error");
    return 0;
}

static int emit_scalar_n(yaml_emitter_t *em, const char *text, size_t len, int plain_ok,
                         struct kp_err *err)
{
    yaml_event_t ev;

    if (len > K8S_YAML_MAX_BYTES)
        return kp_err_set(err, "cannot write YAML: a string of %zu bytes", len);
    yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, plain_ok, 1,
                                 plain_ok ? YAML_ANY_SCALAR_STYLE
                                          : YAML_DOUBLE_QUOTED_SCALAR_STYLE);
    return emit(em, &ev, err);
}

static int emit_scalar(yaml_emitter_t *em, const char *text, int plain_ok, struct kp_err *err)
{
    return emit_scalar_n(em, text, strlen(text), plain_ok, err);
}

static int emit_value(yaml_emitter_t *em, const json_t *v, struct kp_err *err)
{
    yaml_event_t ev;
    char num[64];

    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
        if (emit(em, &ev, err) != 0)
            return -1;
        json_object_foreach((json_t *)v, key, val)
        {
            if (emit_scalar(em, key, !needs_quotes(key), err) != 0 || emit_value(em, val, err) != 0)
                return -1;
        }
        yaml_mapping_end_event_initialize(&ev);
        return emit(em, &ev, err);
    }
    case JSON_ARRAY: {
        size_t i;
        json_t *val;
        yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
        if (emit(em, &ev, err) != 0)
            return -1;
        json_array_foreach(v, i, val)
        {
            if (emit_value(em, val, err) != 0)
                return -1;
        }
        yaml_sequence_end_event_initialize(&ev);
        return emit(em, &ev, err);
    }
    case JSON_STRING: {
        /* an embedded NUL can only be written escaped, in double quotes */
        size_t len = json_string_length(v);
        int plain = len == strlen(json_string_value(v)) && !needs_quotes(json_string_value(v));
        return emit_scalar_n(em, json_string_value(v), len, plain, err);
    }
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(em, num, 1, err);
    case JSON_REAL:
        snprintf(num, sizeof(num), "%.17g", json_real_value(v));
        if (!strpbrk(num, ".eEn")) /* keep it a real when read back: 1 -> 1.0 */
            strncat(num, ".0", sizeof(num) - strlen(num) - 1);
        return emit_scalar(em, num, 1, err);
    case JSON_TRUE:
        return emit_scalar(em, "true", 1, err);
    case JSON_FALSE:
        return emit_scalar(em, "false", 1, err);
    case JSON_NULL:
    default:
        return emit_scalar(em, "null", 1, err);
    }
}

int k8s_yaml_emit(FILE *f, const json_t *docs, struct kp_err *err)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    size_t i;
    json_t *doc;
    int rc = -1;

    if (!json_is_array(docs))
        return kp_err_set(err, "YAML output needs an array of documents");
    if (!yaml_emitter_initialize(&em))
        return kp_err_set(err, "cannot initialise the YAML emitter");
    yaml_emitter_set_output_file(&em, f);
    yaml_emitter_set_width(&em, 100);
    yaml_emitter_set_unicode(&em, 1);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (emit(&em, &ev, err) != 0)
        goto out;
    json_array_foreach(docs, i, doc)
    {
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0);
        if (emit(&em, &ev, err) != 0 || emit_value(&em, doc, err) != 0)
            goto out;
        yaml_document_end_event_initialize(&ev, 1);
        if (emit(&em, &ev, err) != 0)
            goto out;
    }
    yaml_stream_end_event_initialize(&ev);
    if (emit(&em, &ev, err) != 0)
        goto out;
    if (!yaml_emitter_flush(&em)) {
        kp_err_set(err, "cannot write YAML: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    yaml_emitter_delete(&em);
    return rc;
}

/* ---- parsing: base/yaml_load with the manifest rules ---- */

int k8s_yaml_parse(const char *buf, size_t len, const char *name, json_t **out, struct kp_err *err)
{
    struct yaml_load_fault fault;
    const struct yaml_load_opts o = {
        .max_bytes = K8S_YAML_MAX_BYTES,
        .max_depth = K8S_YAML_MAX_DEPTH,
        .typed_scalars = true,
        .all_documents = true,
        .unique_keys = true,
        .fault = &fault,
    };

    if (yaml_load(buf, len, &o, out, err) == 0)
        return 0;
    if (fault.fail == YAML_LOAD_TOO_DEEP) /* the limit in numbers, as this message always said */
        return kp_err_set(err, "%s: line %zu column %zu: nested deeper than %d levels", name,
                          fault.line, fault.column, K8S_YAML_MAX_DEPTH);
    return kp_err_prefix(err, "%s", name);
}

int k8s_yaml_parse_file(const char *path, json_t **out, struct kp_err *err)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t len;
    int rc = -1;

    *out = NULL;
    if (!f)
        return kp_err_set(err, "cannot open %s: %s", path, strerror(errno));
    buf = kp_xmalloc(K8S_YAML_MAX_BYTES + 1);
    len = fread(buf, 1, K8S_YAML_MAX_BYTES + 1, f);
    if (ferror(f))
        kp_err_set(err, "cannot read %s: %s", path, strerror(errno));
    else if (len > K8S_YAML_MAX_BYTES)
        kp_err_set(err, "%s: larger than %u bytes", path, K8S_YAML_MAX_BYTES);
    else
        rc = k8s_yaml_parse(buf, len, path, out, err);
    free(buf);
    fclose(f);
    return rc;
}
