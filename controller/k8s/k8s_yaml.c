/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_yaml.c - JSON <-> YAML with libyaml's event API (emitter and parser). */
#include "controller/k8s/k8s_yaml.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "base/kp_alloc.h"

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

/* ---- parsing ---- */

struct yparse {
    yaml_parser_t p;
    const char *name;
    struct kp_err *err;
};

static int next_event(struct yparse *y, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&y->p, ev))
        return kp_err_set(y->err, "%s:%zu: %s", y->name, y->p.problem_mark.line + 1,
                          y->p.problem ? y->p.problem : "YAML syntax error");
    return 0;
}

static json_t *plain_scalar(const char *s, size_t len)
{
    char *end = NULL;

    if (len == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
        strcmp(s, "NULL") == 0)
        return json_null();
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
        return json_true();
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
        return json_false();
    if (isdigit((unsigned char)s[0]) ||
        ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1]))) {
        errno = 0;
        long long ll = strtoll(s, &end, 10);
        if (errno == 0 && end && *end == '\0')
            return json_integer(ll);
        errno = 0;
        double d = strtod(s, &end);
        if (errno == 0 && end && *end == '\0' && isfinite(d) && !strpbrk(s, "xXnN"))
            return json_real(d);
    }
    return json_stringn(s, len);
}

static json_t *parse_node(struct yparse *y, yaml_event_t *ev, int depth);

static json_t *parse_collection(struct yparse *y, int mapping, int depth)
{
    json_t *out = mapping ? json_object() : json_array();
    yaml_event_t ev;

    for (;;) {
        if (next_event(y, &ev) != 0)
            goto fail;
        if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return out;
        }
        if (!mapping) {
            json_t *v = parse_node(y, &ev, depth + 1);
            if (!v)
                goto fail;
            json_array_append_new(out, v);
            continue;
        }
        if (ev.type != YAML_SCALAR_EVENT) {
            kp_err_set(y->err, "%s:%zu: only scalar mapping keys are supported", y->name,
                       ev.start_mark.line + 1);
            yaml_event_delete(&ev);
            goto fail;
        }
        char *key = kp_xstrndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
        size_t line = ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (next_event(y, &ev) != 0) {
            free(key);
            goto fail;
        }
        json_t *v = parse_node(y, &ev, depth + 1);
        if (!v || json_object_get(out, key)) {
            if (v)
                kp_err_set(y->err, "%s:%zu: duplicate key '%s'", y->name, line, key);
            json_decref(v);
            free(key);
            goto fail;
        }
        json_object_set_new(out, key, v);
        free(key);
    }
fail:
    json_decref(out);
    return NULL;
}

/* Consumes ev (and the events of its children). Returns a new reference or NULL with err. */
static json_t *parse_node(struct yparse *y, yaml_event_t *ev, int depth)
{
    json_t *v = NULL;

    if (depth > K8S_YAML_MAX_DEPTH) {
        kp_err_set(y->err, "%s:%zu: nested deeper than %d levels", y->name, ev->start_mark.line + 1,
                   K8S_YAML_MAX_DEPTH);
    } else if (ev->type == YAML_SCALAR_EVENT) {
        const char *s = (const char *)ev->data.scalar.value;
        if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag)
            v = plain_scalar(s, ev->data.scalar.length);
        else
            v = json_stringn(s, ev->data.scalar.length);
    } else if (ev->type == YAML_MAPPING_START_EVENT || ev->type == YAML_SEQUENCE_START_EVENT) {
        int mapping = ev->type == YAML_MAPPING_START_EVENT;
        yaml_event_delete(ev);
        return parse_collection(y, mapping, depth);
    } else {
        kp_err_set(y->err, "%s:%zu: aliases and anchors are not supported", y->name,
                   ev->start_mark.line + 1);
    }
    yaml_event_delete(ev);
    return v;
}

int k8s_yaml_parse(const char *buf, size_t len, const char *name, json_t **out, struct kp_err *err)
{
    struct yparse y = {.name = name, .err = err};
    json_t *docs = json_array();
    yaml_event_t ev;
    int rc = -1;

    if (len > K8S_YAML_MAX_BYTES)
        return kp_err_set(err, "%s: larger than %u bytes", name, K8S_YAML_MAX_BYTES);
    if (!yaml_parser_initialize(&y.p))
        return kp_err_set(err, "cannot initialise the YAML parser");
    yaml_parser_set_input_string(&y.p, (const unsigned char *)buf, len);
    for (;;) {
        if (next_event(&y, &ev) != 0)
            goto out;
        if (ev.type == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (ev.type != YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue; /* stream start, document end */
        }
        yaml_event_delete(&ev);
        if (next_event(&y, &ev) != 0)
            goto out;
        if (ev.type == YAML_DOCUMENT_END_EVENT) { /* empty document */
            yaml_event_delete(&ev);
            continue;
        }
        json_t *doc = parse_node(&y, &ev, 0);
        if (!doc)
            goto out;
        if (!json_is_null(doc))
            json_array_append(docs, doc);
        json_decref(doc);
    }
    *out = docs;
    docs = NULL;
    rc = 0;
out:
    json_decref(docs);
    yaml_parser_delete(&y.p);
    return rc;
}
