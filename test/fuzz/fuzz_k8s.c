/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_k8s.c - libFuzzer target for what the Kubernetes backend reads from the API server and
 * from manifests: YAML streams (k8s_yaml_parse, then emitted back and re-parsed to the same
 * JSON), and API objects given to the fact and diagnosis functions (nodes, DaemonSets, pods,
 * events, reports). Any input must give a result or one error line, never a crash or leak.
 * Corpus: test/fuzz/corpus/k8s/ (and test/unit/data/k8s/). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/kp_alloc.h"
#include "controller/k8s/k8s_facts.h"
#include "controller/k8s/k8s_facts_proxy.h"
#include "controller/k8s/k8s_podevents.h"
#include "controller/k8s/k8s_podfail.h"
#include "controller/k8s/k8s_wait.h"
#include "controller/k8s/k8s_yaml.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    kp_alloc_init_json();
    return 0;
}

static void yaml_round_trip(const char *buf, size_t len)
{
    json_t *docs = NULL, *back = NULL;
    char *out = NULL;
    size_t out_len = 0;
    struct kp_err err;
    FILE *f;

    if (k8s_yaml_parse(buf, len, "fuzz", &docs, &err) != 0)
        return;
    f = open_memstream(&out, &out_len);
    if (f && k8s_yaml_emit(f, docs, &err) == 0) {
        fclose(f);
        f = NULL;
        /* what we print must read back as what we had */
        if (k8s_yaml_parse(out, out_len, "emitted", &back, &err) != 0 || !json_equal(docs, back))
            abort();
    }
    if (f)
        fclose(f);
    free(out);
    json_decref(back);
    json_decref(docs);
}

static void api_objects(const json_t *doc)
{
    json_t *tol = json_pack("[{s:s}]", "operator", "Exists");
    struct k8s_node_filter f = {.tolerations = tol};
    const json_t *items = json_is_array(doc) ? doc : json_object_get(doc, "items");
    const json_t *a = NULL, *b = NULL;
    const char *note = NULL;
    char *why = NULL, *s = NULL, *n_a = NULL, *n_b = NULL;
    struct kp_err err;
    int fatal;

    (void)k8s_facts_node_eligible(doc, &f, &why);
    free(why);
    json_decref(k8s_facts_node_info(doc, "server"));
    (void)k8s_facts_choose_pair(items, NULL, NULL, &a, &b, &note, &err);
    json_decref(k8s_facts_cni(items, doc, doc));
    json_decref(k8s_facts_kube_proxy(items, doc, doc));
    free(k8s_facts_unread(doc));
    if (k8s_facts_nodes_from_report(doc, &n_a, &n_b, &err) == 0) {
        free(n_a);
        free(n_b);
    }
    s = k8s_wait_pod_problem(doc, &fatal);
    free(s);
    s = k8s_wait_events_summary(items, "ns");
    free(s);
    {
        struct k8s_podfail pf;
        json_t *kept = json_object();
        size_t i;
        const json_t *e;
        (void)k8s_podfail_classify(doc, items, doc, &pf);
        k8s_podfail_cleanup(&pf);
        json_array_foreach(items, i, e)(void) k8s_podevents_keep(kept, e);
        json_decref(kept);
    }
    json_decref(tol);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *doc;

    if (size > (1u << 20))
        return 0;
    doc = json_loadb((const char *)data, size, 0, &jerr);
    if (doc) {
        api_objects(doc);
        json_decref(doc);
    }
    yaml_round_trip((const char *)data, size);
    return 0;
}
