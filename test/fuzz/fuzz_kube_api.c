/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_kube_api.c - libFuzzer target for what the kube client decodes from servers and plugins:
 * Status error bodies (JSON or text, any HTTP code) and ExecCredential output. Each must give
 * one line or a credential, never a crash or leak. Corpus: test/fuzz/corpus/kube_api/. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "controller/kube/exec.h"
#include "controller/kube/status.h"

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
    static const long codes[] = {400, 401, 403, 404, 409, 410, 422, 429, 500, 503, 302, 0};
    struct kp_err err;
    struct exec_cred cred;
    char reason[64];
    long code;

    if (size < 1)
        return 0;
    code = codes[data[0] % (sizeof(codes) / sizeof(codes[0]))];
    kp_err_clear(&err);
    status_error(code, data[0] & 1 ? "application/json" : "text/plain", (const char *)data + 1,
                 size - 1, "get pods", NULL, 2, reason, &err);
    if (!err.msg[0] || strlen(reason) >= sizeof(reason))
        __builtin_trap();
    if (exec_parse((const char *)data + 1, size - 1, "client.authentication.k8s.io/v1", &cred,
                   &err) == 0) {
        if (!cred.token && !cred.cert)
            __builtin_trap();
        exec_cred_cleanup(&cred);
    }
    return 0;
}
