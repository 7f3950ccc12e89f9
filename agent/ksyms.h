/* SPDX-License-Identifier: Apache-2.0 */
/* ksyms.h - the kernel's function symbols from /proc/kallsyms, sorted by address, and the
 * function an instruction address falls in (binary search). Pure over the file's text, so the
 * parser and the look-up are unit-tested on a made-up file; ksyms_load reads the real one.
 * Only text symbols (t, T, w, W) are kept; with kptr_restrict hiding addresses every
 * address reads 0 and the table is empty (ksyms_count 0). */
#ifndef KPERF_AGENT_KSYMS_H
#define KPERF_AGENT_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "base/kp_err.h"

struct ksyms; /* opaque */

/* The symbols of kallsyms text (NUL-terminated; lines "ADDR TYPE NAME [MODULE]"). Never
 * NULL; a line that is not of that form is skipped. */
struct ksyms *ksyms_parse(const char *text);

/* ksyms_parse of path (normally /proc/kallsyms). NULL with err when it cannot be read or holds
 * no usable address (kptr_restrict). */
struct ksyms *ksyms_load(const char *path, struct kp_err *err);

void ksyms_free(struct ksyms *k);

size_t ksyms_count(const struct ksyms *k);

/* The index of the function holding addr (the last symbol at or below it), or -1 when addr
 * lies below the first symbol or beyond the last one by more than KSYMS_MAX_SIZE bytes. */
#define KSYMS_MAX_SIZE (1u << 20)
long ksyms_find(const struct ksyms *k, uint64_t addr);

/* The index of the first symbol named name (without its module), or -1. Linear. */
long ksyms_by_name(const struct ksyms *k, const char *name);

/* The name of symbol i ("tbf_dequeue", "nft_do_chain [nf_tables]" keeps the module). */
const char *ksyms_name(const struct ksyms *k, size_t i);

#endif
