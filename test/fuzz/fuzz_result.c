/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_result.c - libFuzzer target for the kperf.result/v1 reader (base/result.c), which
 * the controller runs on whatever an agent pod printed. Any input gives a document or one
 * error line, without crashes or leaks. Corpus: test/fuzz/corpus/result/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/hist.h"
#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "base/result.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    kp_alloc_init_json();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = NULL;
    struct kp_err err;

    kp_err_clear(&err);
    if (result_parse((const char *)data, size, &doc, &err) != 0) {
        if (!kp_err_is_set(&err))
            abort();
        return 0;
    }
    for (size_t i = 0; i < result_count(doc); i++) {
        const json_t *r = result_get(doc, i);
        struct hist *h;
        double v;
        (void)result_number(r, "latency_us.p99", &v);
        h = result_histogram(r, &err);
        hist_free(h);
    }
    json_decref(doc);
    return 0;
}
