/* SPDX-License-Identifier: Apache-2.0 */
/* yamldoc.c - see yamldoc.h. Walks libyaml's event stream with an explicit stack so that
 * nesting is bounded by the limit, never by the C stack. */
#include "controller/kube/yamldoc.h"

#include <string.h>
#include <yaml.h>

#include "base/kp_alloc.h"

struct frame {
    json_t *node; /* borrowed from its parent (or the root, owned by the loader) */
    char *key;    /* pending mapping key, or NULL; ours */
};

struct loader {
    yaml_parser_t parser;
    const struct yamldoc_limits *lim;
    struct frame *stack; /* ours; lim->max_depth + 1 frames */
    int depth;
    long nodes;
    json_t *root; /* ours until handed out */
};

static int fail_at(struct kp_err *err, const yaml_mark_t *m, const char *what)
{
    return kp_err_set(err, "line %zu column %zu: %s", m->line + 1, m->column + 1, what);
}

/* Attaches a new node (steals it) to the current container. */
static int attach(struct loader *ld, json_t *node, const yaml_event_t *ev, struct kp_err *err)
{
    struct frame *top;

    if (++ld->nodes > ld->lim->max_nodes) {
        json_decref(node);
        return fail_at(err, &ev->start_mark, "document has too many nodes");
    }
    if (ld->depth == 0) {
        json_decref(ld->root);
        ld->root = node;
        return 0;
    }
    top = &ld->stack[ld->depth - 1];
    if (json_is_array(top->node))
        return json_array_append_new(top->node, node) == 0 ? 0 : -1;
    if (!top->key) {
        /* a mapping key must be a scalar */
        if (!json_is_string(node)) {
            json_decref(node);
            return fail_at(err, &ev->start_mark, "mapping keys must be plain strings");
        }
        top->key = kp_xstrdup(json_string_value(node));
        json_decref(node);
        return 0;
    }
    json_object_set_new(top->node, top->key, node);
    free(top->key);
    top->key = NULL;
    return 0;
}

static int push(struct loader *ld, json_t *node, const yaml_event_t *ev, struct kp_err *err)
{
    if (ld->depth >= ld->lim->max_depth) {
        json_decref(node);
        return fail_at(err, &ev->start_mark, "nesting is too deep");
    }
    json_incref(node); /* one reference for the parent, one held by the frame */
    if (attach(ld, node, ev, err) != 0) {
        json_decref(node);
        return -1;
    }
    ld->stack[ld->depth].node = node;
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

/* Handles one event; *done = 1 at the end of the first document. */
static int on_event(struct loader *ld, const yaml_event_t *ev, int *done, struct kp_err *err)
{
    switch (ev->type) {
    case YAML_ALIAS_EVENT:
        return fail_at(err, &ev->start_mark,
                       "YAML aliases (*name) are not allowed in a kubeconfig");
    case YAML_SCALAR_EVENT:
        return attach(ld, json_stringn((const char *)ev->data.scalar.value, ev->data.scalar.length),
                      ev, err);
    case YAML_SEQUENCE_START_EVENT:
        return push(ld, json_array(), ev, err);
    case YAML_MAPPING_START_EVENT:
        return push(ld, json_object(), ev, err);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        pop(ld);
        return 0;
    case YAML_DOCUMENT_END_EVENT:
    case YAML_STREAM_END_EVENT:
        *done = 1;
        return 0;
    default:
        return 0;
    }
}

int yamldoc_load(const char *buf, size_t len, const struct yamldoc_limits *lim, json_t **out,
                 struct kp_err *err)
{
    struct loader ld;
    int done = 0;
    int rc = -1;

    *out = NULL;
    if (len > lim->max_bytes)
        return kp_err_set(err, "file is larger than %zu bytes", lim->max_bytes);
    memset(&ld, 0, sizeof(ld));
    ld.lim = lim;
    ld.stack = kp_xcalloc((size_t)lim->max_depth + 1, sizeof(*ld.stack));
    if (!yaml_parser_initialize(&ld.parser)) {
        kp_err_set(err, "cannot initialise the YAML parser");
        free(ld.stack);
        return -1;
    }
    yaml_parser_set_input_string(&ld.parser, (const unsigned char *)buf, len);
    while (!done) {
        yaml_event_t ev;
        int r;

        if (!yaml_parser_parse(&ld.parser, &ev)) {
            char what[256];
            char ctx[96] = "";
            if (ld.parser.context)
                snprintf(ctx, sizeof(ctx), " %s (started at line %zu)", ld.parser.context,
                         ld.parser.context_mark.line + 1);
            snprintf(what, sizeof(what), "invalid YAML: %s%s",
                     ld.parser.problem ? ld.parser.problem : "syntax error", ctx);
            fail_at(err, &ld.parser.problem_mark, what);
            goto out;
        }
        r = on_event(&ld, &ev, &done, err);
        yaml_event_delete(&ev);
        if (r != 0)
            goto out;
    }
    *out = ld.root ? ld.root : json_object();
    ld.root = NULL;
    rc = 0;
out:
    while (ld.depth > 0)
        pop(&ld);
    json_decref(ld.root);
    free(ld.stack);
    yaml_parser_delete(&ld.parser);
    return rc;
}
