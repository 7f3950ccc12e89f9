/* SPDX-License-Identifier: Apache-2.0 */
/* k8s_history.h - the run history kept in the cluster, as ConfigMaps of kperf's namespace, for
 * clusters with no volume to keep it on (a new EKS cluster has no default StorageClass). The
 * location is "configmap:NAME" wherever a history DIR is taken (kperf run --history, kperf
 * compare --baseline, kperf history). One ConfigMap per run:
 *     name         NAME-<16 hex digits of the run's key folder and file name>
 *     labels       kperf.io/history=NAME, kperf.io/history-key=<16 hex digits of the key>,
 *                  app.kubernetes.io/name=kperf (never app.kubernetes.io/managed-by=kperf:
 *                  kperf cleanup removes what carries it, and history must outlive runs)
 *     annotations  kperf.io/history-key=<key folder, history.h>, kperf.io/history-file=<name>
 *     data         report.json: history_compact_json (a few KB per row; a ConfigMap holds
 *                  1 MiB, so a report above K8S_HISTORY_MAX_BYTES is refused, never cut)
 * The newest `keep` runs of each key are kept (the file names sort by time). Reading lists
 * the runs in memory: a pod with a read-only root needs no scratch space. docs/history-volume.md.
 */
#ifndef KPERF_K8S_K8S_HISTORY_H
#define KPERF_K8S_K8S_HISTORY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/kp_err.h"

struct kube_client;

#define K8S_HISTORY_SCHEME     "configmap:"
#define K8S_HISTORY_LABEL      "kperf.io/history"
#define K8S_HISTORY_LABEL_KEY  "kperf.io/history-key"
#define K8S_HISTORY_ANNOT_KEY  "kperf.io/history-key"
#define K8S_HISTORY_ANNOT_FILE "kperf.io/history-file"
#define K8S_HISTORY_DATA_KEY   "report.json"
#define K8S_HISTORY_MAX_BYTES  (1000u * 1024u) /* of report.json; the object's limit is 1 MiB */
#define K8S_HISTORY_NAME_MAX   40              /* NAME: a DNS label this long at most */

/* Whether loc names a history in ConfigMaps ("configmap:..."). */
bool k8s_history_is_cm(const char *loc);

/* NAME of "configmap:NAME" (borrowed from loc), checked: a DNS-1123 label of at most
 * K8S_HISTORY_NAME_MAX characters. Returns 0 or -1 with err. */
KP_MUST_CHECK int k8s_history_name(const char *loc, const char **name, struct kp_err *err);

/* Stores a run (its key folder, file name and compact report text: history_key,
 * history_file_name, history_compact_json of controller/report/history.h, which the caller
 * makes; this module knows nothing of reports) as a ConfigMap of history NAME in ns, then
 * deletes the oldest runs of its key beyond keep (>= 1). *obj_out (optional):
 * "configmap/<object name> (N KiB)" (caller frees). Returns 0 or -1 with err. */
KP_MUST_CHECK int k8s_history_add(struct kube_client *kc, const char *ns, const char *name,
                                  const char *key, const char *file, const char *text, size_t keep,
                                  char **obj_out, struct kp_err *err);

/* Every run of history NAME in ns, oldest first (by file name): *runs a new array of
 * {"key", "file", "text", "object"}. A ConfigMap whose annotations or data are not a run's is
 * skipped with a warning and counted in *skipped. Returns 0 or -1 with err. */
KP_MUST_CHECK int k8s_history_runs(struct kube_client *kc, const char *ns, const char *name,
                                   json_t **runs, size_t *skipped, struct kp_err *err);

/* The claim of manifests/history-pvc.yaml (K8S_HISTORY_CLAIM in ns, 1Gi, ReadWriteOnce, with
 * storageClassName when one is named), after checking that it can bind: the named class exists,
 * or the cluster has a default class; otherwise NULL with err saying so in seconds, instead of a
 * claim that stays Pending and a nightly that never starts. New reference. */
#define K8S_HISTORY_CLAIM "kperf-history"
json_t *k8s_history_claim(struct kube_client *kc, const char *ns, const char *storage_class,
                          struct kp_err *err);

/* The 16 hex digits of FNV-1a 64 of s (label values and object names; not a secure hash). */
void k8s_history_hash(const char *s, char out[17]);

#endif
