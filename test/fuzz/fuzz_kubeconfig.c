/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_kubeconfig.c - libFuzzer target for the kubeconfig parser (YAML guard, merge, context
 * resolution, base64 fields, exec stanza). Any input must give a config or one error line,
 * without crashes, leaks or unbounded memory. Corpus: test/fuzz/corpus/kubeconfig/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/kube/config.h"

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
    struct kube_config *cfg = NULL;
    struct kp_err err;

    kp_err_clear(&err);
    if (kube_config_parse((const char *)data, size, "fuzz", "/nonexistent", NULL, &cfg, &err) ==
        0) {
        if (!cfg || !cfg->server || !cfg->ns)
            __builtin_trap(); /* success must give a usable config */
        kube_config_free(cfg);
    } else if (cfg || !err.msg[0] || strchr(err.msg, '\n')) {
        __builtin_trap(); /* failure must give exactly one line and no config */
    }
    return 0;
}
