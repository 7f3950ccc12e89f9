/* SPDX-License-Identifier: Apache-2.0 */
/* yaml_load.c - see yaml_load.h. Walks libyaml's event stream with an explicit stack of open
 * collections; each event is attached to the collection on top (or becomes a document root). */
#include "base/yaml_load.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"

struct frame {
    json_t *node; /* borrowed from its parent (or the root, owned by the loader) */
    char *key;    /* pending mapping key, or NULL; ours */
};

struct loader {
    yaml_parser_t parser;
    const struct yaml_load_opts *o;
    struct kp_err *err;
    struct frame *stack; /* ours; o->max_depth frames */
    int depth;
    long nodes;
    json_t *root; /* the current document's root; ours until handed out */
    json_t *docs; /* all_documents: the array; ours until handed out */
    bool done;    /* no more events wanted */
};

static int fail_at(struct loader *ld, enum yaml_load_fail fail, const yaml_mark_t *m,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct loader *ld, enum yaml_load_fail fail, const yaml_mark_t *m,
                   const char *fmt, ...)
{
    char what[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (ld->o->fault) {
        ld->o->fault->fail = fail;
        ld->o->fault->line = m->line + 1;
        ld->o->fault->column = m->column + 1;
    }
    return kp_err_set(ld->err, "line %zu column %zu: %s", m->line + 1, m->column + 1, what);
}

/* go-yaml v2's integers, as kubectl reads them: '_' removed, then Go's strconv.ParseInt (or
 * ParseUint) with base 0: an optional sign, then 0x / 0o / 0b / a leading 0 (octal) or
 * decimal digits. NULL when the text is not one. */
static json_t *go_yaml_int(const char *s)
{
    char plain[72];
    size_t n = 0;
    const char *p;
    int neg = 0, base = 10;
    unsigned long long v;
    char *end;

    for (p = s; *p && n + 1 < sizeof(plain); p++)
        if (*p != '_')
            plain[n++] = *p;
    if (*p)
        return NULL;
    plain[n] = '\0';
    p = plain;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
        base = 8, p += 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
        base = 2, p += 2;
    else if (p[0] == '0' && p[1])
        base = 8, p += 1;
    if (!*p || !isalnum((unsigned char)*p))
        return NULL;
    errno = 0;
    v = strtoull(p, &end, base);
    if (errno != 0 || *end)
        return NULL;
    if (neg && v > (unsigned long long)LLONG_MAX + 1)
        return NULL;
    if (neg)
        return json_integer(v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v);
    return v <= LLONG_MAX ? json_integer((long long)v) : json_real((double)v);
}

/* A plain scalar by the YAML 1.2 core schema: null, booleans, integers, reals; else a string.
 * With yaml11 (kubeconfig: go-yaml v2, as kubectl): y/yes/on..., and go_yaml_int's forms. */
static json_t *typed_scalar(const char *s, size_t len, bool yaml11)
{
    static const char *const yes11[] = {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *const no11[] = {"n", "N", "no", "No", "NO", "off", "Off", "OFF"};
    char *end = NULL;

    for (size_t i = 0; yaml11 && i < sizeof(yes11) / sizeof(yes11[0]); i++) {
        if (strcmp(s, yes11[i]) == 0)
            return json_true();
        if (strcmp(s, no11[i]) == 0)
            return json_false();
    }

    if (len == 0 || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
        strcmp(s, "NULL") == 0)
        return json_null();
    if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0)
        return json_true();
    if (strcmp(s, "false") == 0 || strcmp(s, "False") == 0 || strcmp(s, "FALSE") == 0)
        return json_false();
    if (yaml11 && (isdigit((unsigned char)s[0]) || s[0] == '+' || s[0] == '-')) {
        json_t *i = go_yaml_int(s);
        if (i)
            return i;
    }
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

static json_t *scalar(const struct loader *ld, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;

    if (ld->o->typed_scalars && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        !ev->data.scalar.tag)
        return typed_scalar(s, len, ld->o->yaml11_bools);
    return json_stringn(s, len);
}

/* Ends a document: keeps its root (all_documents) or stops (first document only). */
static void end_document(struct loader *ld)
{
    if (!ld->o->all_documents) {
        ld->done = true;
        return;
    }
    if (ld->root && !json_is_null(ld->root))
        json_array_append(ld->docs, ld->root);
    json_decref(ld->root);
    ld->root = NULL;
}

static int count_node(struct loader *ld, const yaml_event_t *ev)
{
    if (ld->o->max_nodes > 0 && ++ld->nodes > ld->o->max_nodes)
        return fail_at(ld, YAML_LOAD_TOO_MANY_NODES, &ev->start_mark,
                       "document has too many nodes");
    return 0;
}

/* Attaches a scalar (a mapping key when one is due) to the collection on top. */
static int on_scalar(struct loader *ld, const yaml_event_t *ev)
{
    struct frame *top = ld->depth ? &ld->stack[ld->depth - 1] : NULL;
    json_t *v;

    if (count_node(ld, ev) != 0)
        return -1;
    if (top && json_is_object(top->node) && !top->key) {
        /* keys are never typed: "true: x" has the key "true" */
        top->key = kp_xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
        if (ld->o->unique_keys && json_object_get(top->node, top->key))
            return fail_at(ld, YAML_LOAD_DUPLICATE_KEY, &ev->start_mark, "duplicate key '%s'",
                           top->key);
        return 0;
    }
    v = scalar(ld, ev);
    if (!v)
        return fail_at(ld, YAML_LOAD_BAD_TEXT, &ev->start_mark, "a scalar is not valid UTF-8");
    if (!top) {
        json_decref(ld->root);
        ld->root = v;
        return 0;
    }
    if (json_is_array(top->node))
        return json_array_append_new(top->node, v);
    json_object_set_new(top->node, top->key, v);
    free(top->key);
    top->key = NULL;
    return 0;
}

/* Opens a collection: attaches it to the one on top (or makes it the root) and pushes it. */
static int on_start(struct loader *ld, json_t *node, const yaml_event_t *ev)
{
    struct frame *top = ld->depth ? &ld->stack[ld->depth - 1] : NULL;

    if (ld->depth >= ld->o->max_depth) {
        json_decref(node);
        return fail_at(ld, YAML_LOAD_TOO_DEEP, &ev->start_mark, "nesting is too deep");
    }
    if (count_node(ld, ev) != 0) {
        json_decref(node);
        return -1;
    }
    if (top && json_is_object(top->node) && !top->key) {
        json_decref(node);
        return fail_at(ld, YAML_LOAD_KEY, &ev->start_mark, "mapping keys must be plain strings");
    }
    if (!top) {
        json_decref(ld->root);
        ld->root = json_incref(node);
    } else if (json_is_array(top->node)) {
        json_array_append(top->node, node);
    } else {
        json_object_set(top->node, top->key, node);
        free(top->key);
        top->key = NULL;
    }
    ld->stack[ld->depth].node = node; /* the frame's reference: dropped by pop */
    ld->stack[ld->depth].key = NULL;
    ld->depth++;
    return 0;
}

static void pop(struct loader *ld)
{
    struct frame *f = &ld->stack[--ld->depth];

    free(f->key);
    json_decref(f->node);
}

static int on_event(struct loader *ld, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return fail_at(ld, YAML_LOAD_ALIAS, &ev->start_mark,
                       "YAML aliases (*name) are not allowed%s%s", ld->o->doc_kind ? " in " : "",
                       ld->o->doc_kind ? ld->o->doc_kind : "");
    case YAML_SCALAR_EVENT:
        return on_scalar(ld, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(ld, json_array(), ev);
    case YAML_MAPPING_START_EVENT:
        return on_start(ld, json_object(), ev);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        pop(ld);
        return 0;
    case YAML_DOCUMENT_END_EVENT:
        end_document(ld);
        return 0;
    case YAML_STREAM_END_EVENT:
        ld->done = true;
        return 0;
    default:
        return 0; /* stream and document starts */
    }
}

static int syntax_error(struct loader *ld)
{
    const yaml_parser_t *p = &ld->parser;
    char ctx[160] = "";

    if (p->context)
        snprintf(ctx, sizeof(ctx), " %s (started at line %zu)", p->context,
                 p->context_mark.line + 1);
    return fail_at(ld, YAML_LOAD_SYNTAX, &p->problem_mark, "invalid YAML: %s%s",
                   p->problem ? p->problem : "syntax error", ctx);
}

int yaml_load(const char *buf, size_t len, const struct yaml_load_opts *o, json_t **out,
              struct kp_err *err)
{
    struct loader ld = {.o = o, .err = err};
    int rc = -1;

    *out = NULL;
    if (o->fault)
        memset(o->fault, 0, sizeof(*o->fault));
    if (len > o->max_bytes) {
        if (o->fault)
            o->fault->fail = YAML_LOAD_TOO_BIG;
        return kp_err_set(err, "file is larger than %zu bytes", o->max_bytes);
    }
    if (!yaml_parser_initialize(&ld.parser))
        return kp_err_set(err, "cannot initialise the YAML parser");
    ld.stack = kp_xcalloc(o->max_depth > 0 ? (size_t)o->max_depth : 1, sizeof(*ld.stack));
    ld.docs = o->all_documents ? json_array() : NULL;
    yaml_parser_set_input_string(&ld.parser, (const unsigned char *)buf, len);
    while (!ld.done) {
        yaml_event_t ev;
        int r;

        if (!yaml_parser_parse(&ld.parser, &ev)) {
            syntax_error(&ld);
            goto out;
        }
        r = on_event(&ld, &ev);
        yaml_event_delete(&ev);
        if (r != 0)
            goto out;
    }
    if (o->all_documents) {
        *out = ld.docs;
        ld.docs = NULL;
    } else {
        *out = ld.root ? ld.root : json_object();
        ld.root = NULL;
    }
    rc = 0;
out:
    while (ld.depth > 0)
        pop(&ld);
    json_decref(ld.root);
    json_decref(ld.docs);
    free(ld.stack);
    yaml_parser_delete(&ld.parser);
    return rc;
}
