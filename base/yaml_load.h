/* SPDX-License-Identifier: Apache-2.0 */
/* yaml_load.h - a guarded YAML loader: a YAML (or JSON) stream into a jansson tree, over
 * libyaml's event API. Owns the safety limits (size, nesting depth, node count; aliases are
 * always refused, so no alias bombs), the two ways of reading scalars (as strings, or typed by
 * the YAML 1.2 core schema) and the messages. Leaves the meaning of the documents to its
 * callers (kube/config.c: one kubeconfig; k8s/k8s_yaml.c: a stream of manifests). */
#ifndef KPERF_BASE_YAML_LOAD_H
#define KPERF_BASE_YAML_LOAD_H

#include "base/kp_err.h"

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct kp_err;

/* What stopped a load, for callers that word a refusal their own way. */
enum yaml_load_fail {
    YAML_LOAD_OK = 0,
    YAML_LOAD_TOO_BIG,        /* more than max_bytes */
    YAML_LOAD_SYNTAX,         /* not YAML (libyaml's reason is in the message) */
    YAML_LOAD_ALIAS,          /* an alias (*name); anchors alone are harmless */
    YAML_LOAD_KEY,            /* a mapping key that is not a scalar */
    YAML_LOAD_DUPLICATE_KEY,  /* a key given twice (unique_keys) */
    YAML_LOAD_TOO_DEEP,       /* collections nested deeper than max_depth */
    YAML_LOAD_TOO_MANY_NODES, /* more than max_nodes */
    YAML_LOAD_BAD_TEXT,       /* a scalar jansson refuses (not UTF-8) */
};

struct yaml_load_fault {
    enum yaml_load_fail fail;
    size_t line, column; /* 1-based where it was found; 0 for YAML_LOAD_TOO_BIG */
};

struct yaml_load_opts {
    size_t max_bytes;     /* longer input is refused before parsing */
    int max_depth;        /* at most this many collections nested in one another (the root
                             collection is the first); the next one is refused */
    long max_nodes;       /* scalars (keys included) + collections per load; 0 = no limit */
    bool typed_scalars;   /* plain untagged scalars become integers, reals, booleans and null by
                             the YAML 1.2 core rules (quoted or tagged ones stay strings); otherwise
                             every scalar is a string and the caller interprets "443", "true" */
    bool yaml11_bools;    /* with typed_scalars: plain y/yes/on and n/no/off (in the three case
                             forms of YAML 1.1) are booleans too, and 0x1F, 0o17, 017, 0b101,
                             1_000 integers, as go-yaml v2 reads them (the loader behind
                             kubectl's kubeconfig) */
    bool all_documents;   /* *out is an array of every document, empty and null ones left out;
                             otherwise *out is the first document ({} when there is none) and the
                             rest of the stream is not read */
    bool unique_keys;     /* a mapping key given twice is refused; otherwise the last one wins */
    const char *doc_kind; /* "a kubeconfig": the alias message says "... not allowed in <it>";
                             NULL = no such words */
    struct yaml_load_fault *fault; /* optional out: what stopped the load (OK on success) */
};

/* Loads buf[0..len) by o (borrowed). Returns 0 with *out = a new reference (caller
 * json_decref), or -1 with *out NULL and one line in err: "line L column C: what" (e.g.
 * "line 2 column 4: YAML aliases (*name) are not allowed in a kubeconfig"), or "file is larger
 * than N bytes". Nesting is walked with an explicit stack, never the C stack. */
KP_MUST_CHECK int yaml_load(const char *buf, size_t len, const struct yaml_load_opts *o,
                            json_t **out, struct kp_err *err);

#endif
