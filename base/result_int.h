/* SPDX-License-Identifier: Apache-2.0 */
/* result_int.h - what the files of the result module share (result.c the document,
 * result_check.c the checker and one measurement's checks, result_agg.c the aggregates): the
 * test classes, the field tables of the checker and its entry points. Private to them. */
#ifndef KPERF_BASE_RESULT_INT_H
#define KPERF_BASE_RESULT_INT_H

#include <stddef.h>

#include <jansson.h>

#include "base/kp_err.h"

/* Test classes: which fields a result must or may carry (from base/testkind.h). */
#define C_ANY    0x01u
#define C_LAT    0x02u /* latency tests: TCP_RR, TCP_CRR, UDP_RR */
#define C_STREAM 0x04u /* stream tests: TCP_STREAM, TCP_STREAM_MULTI, UDP_STREAM */
#define C_UDP    0x08u
#define C_TCP    0x10u /* TCP tests that keep a connection: all but TCP_CRR */
#define C_TSTRM  0x20u /* TCP stream tests */
#define C_LOAD   0x40u /* latency under load: TCP_RR_LOADED (load{}) */

enum kind { K_STR, K_INT, K_NUM, K_BOOL, K_OBJ, K_ARR };

struct field {
    const char *name;
    enum kind kind;
    unsigned required; /* classes that must carry it */
    unsigned allowed;  /* classes that may carry it */
    int (*check)(const json_t *v, const char *path, unsigned classes, struct kp_err *err);
};

#define ALL        (C_ANY)
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

/* The check of one value (a field's, an array item's): 0, or -1 with err naming path. */
typedef int result_check_fn(const json_t *v, const char *path, unsigned classes,
                            struct kp_err *err);

/* The classes of a test name; 0 when the name is not a test. */
unsigned result_classes(const char *name);
/* obj has exactly the fields of f[0..n) that classes allow, those that classes require, each
 * of its kind and passing its check. */
int result_check_object(const json_t *obj, const char *path, const struct field *f, size_t n,
                        unsigned classes, struct kp_err *err);
/* At most RESULT_MAX_ENTRIES items, each passing each. */
int result_check_array(const json_t *arr, const char *path, unsigned classes, result_check_fn *each,
                       struct kp_err *err);
/* A known test name (base/testkind.h). */
int result_check_test_name(const json_t *v, const char *path, unsigned classes, struct kp_err *err);
/* One results[] entry, one aggregates[] entry (their classes from their "test"). */
int result_check_entry(const json_t *v, const char *path, unsigned unused, struct kp_err *err);
int result_check_aggregate(const json_t *v, const char *path, unsigned unused, struct kp_err *err);
/* A results[] entry's "counters" (result_counters.c). */
int result_check_counters(const json_t *v, const char *path, unsigned classes, struct kp_err *err);
/* result_profile.c: a results[] entry's "profile". */
int result_check_profile(const json_t *v, const char *path, unsigned classes, struct kp_err *err);
/* A results[] entry's "dns": the lookups of a DNS row (dnsresult.c). */
int result_check_dns(const json_t *v, const char *path, unsigned classes, struct kp_err *err);

#endif
