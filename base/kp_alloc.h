/* SPDX-License-Identifier: Apache-2.0 */
/* kp_alloc.h - allocation that aborts with a message on OOM, so small allocations need no
 * NULL checks. Sizes that come from the network, files or the API server must be checked
 * against a limit by the caller before they reach these. */
#ifndef KPERF_BASE_KP_ALLOC_H
#define KPERF_BASE_KP_ALLOC_H

#include <stddef.h>

void *kp_xmalloc(size_t n);                  /* caller frees with free() */
void *kp_xcalloc(size_t nmemb, size_t size); /* zeroed; caller frees */
void *kp_xrealloc(void *p, size_t n);        /* caller frees the result */
char *kp_xstrdup(const char *s);             /* NULL in, NULL out; caller frees */
char *kp_xstrndup(const char *s, size_t n);  /* caller frees */
char *kp_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* caller frees */

/* Frees a secret after wiping it (explicit_bzero). NULL is a no-op. */
void kp_free_secret(char *s);

/* Points jansson at these allocators. Call once at start-up. */
void kp_alloc_init_json(void);

#endif
