/* SPDX-License-Identifier: Apache-2.0 */
/* local_cni.h - calls a user's CNI plugins as a container runtime does, for `kperf run --local
 * --cni-conf FILE` (docs/local-backend.md "Your own CNI"). Owns the conflist as loaded, where
 * each plugin binary is (CNI_PATH), their identities (VERSION answer, `about` line, sha256) and
 * running them: ADD down the list with each result as the next plugin's prevResult, DEL up the
 * list, CHECK; each plugin inside the node's namespace (`ip netns exec NODE PLUGIN`, as a
 * runtime runs them in the host's), the pod's namespace given as CNI_NETNS, the config on
 * stdin, stdout the result, stderr kept for the message, a deadline. Knows nothing of the
 * topology (localnet_cni.c uses the results); parsing is cni_json.c's. */
#ifndef KPERF_LOCAL_LOCAL_CNI_H
#define KPERF_LOCAL_LOCAL_CNI_H

#include <jansson.h>
#include <signal.h>
#include <stdint.h>

#include "base/kp_err.h"
#include "controller/local/cni_json.h"

struct kp_err;

#define LOCAL_CNI_DEFAULT_PATH "/opt/cni/bin:/usr/lib/cni"

struct local_cni; /* opaque */

/* Reads the conflist at path (a network configuration list, or one network configuration) and
 * finds every plugin it names (ipam types too) in cni_path (NULL = LOCAL_CNI_DEFAULT_PATH).
 * Each plugin call may last timeout_ms. Returns the loaded list (local_cni_free), or NULL with
 * a one-line reason (a missing plugin names its type and the directories searched). */
struct local_cni *local_cni_load(const char *path, const char *cni_path, uint64_t timeout_ms,
                                 struct kp_err *err);
void local_cni_free(struct local_cni *c); /* NULL is a no-op */

/* Asks every plugin its VERSION and hashes its binary; fails when a plugin does not support
 * the conflist's cniVersion. Returns 0 or -1 with err. */
KP_MUST_CHECK int local_cni_identify(struct local_cni *c, struct kp_err *err);

/* The conflist as given (borrowed), its name, and its search path (borrowed). */
const char *local_cni_text(const struct local_cni *c);
const char *local_cni_path(const struct local_cni *c);
const char *local_cni_name(const struct local_cni *c);

/* The report's metadata.cni: {name: "<list name> (<types>)", version: the first plugin's
 * `about` line when it tells a version, else "sha256:<12 hex of its binary>",
 * settings: {conflist, cni_version, plugins, and what kperf adds (routing, proxy, egress)},
 * plugins: [{type, path, sha256, about, cniVersion, supportedVersions}]}. New reference. */
json_t *local_cni_describe(const struct local_cni *c, int mtu);

/* A pod as CNI sees it: the namespace the plugins run in (the node's), CNI_NETNS, the
 * container id and CNI_IFNAME. Borrowed strings. */
struct local_cni_pod {
    const char *node_ns; /* the node's network namespace name */
    const char *pod_ns;  /* the pod's: CNI_NETNS=/run/netns/<pod_ns> */
    const char *id;      /* CNI_CONTAINERID */
    const char *ifname;  /* CNI_IFNAME, "eth0" */
};

/* ADD through the whole list. Returns the last plugin's result (a new reference: the
 * prevResult of CHECK and DEL) with its IPs in r, or NULL with err ("CNI plugin \"T\" failed
 * (add) for pod P: MSG (code N)"); then DEL has already run through the list, so nothing of
 * the pod's network is left (nor an address reserved). cancel (may be NULL) stops a call. */
json_t *local_cni_add(struct local_cni *c, const struct local_cni_pod *p, struct cni_result *r,
                      volatile sig_atomic_t *cancel, struct kp_err *err);

/* CHECK through the list against prev (the ADD result). Returns 0 or -1 with err. */
KP_MUST_CHECK int local_cni_check(struct local_cni *c, const struct local_cni_pod *p,
                                  const json_t *prev, struct kp_err *err);

/* DEL through the list in reverse, prev (the ADD result, or NULL) as prevResult. Every plugin
 * is called even when one fails (the first failure is reported). Returns 0 or -1 with err. */
KP_MUST_CHECK int local_cni_del(struct local_cni *c, const struct local_cni_pod *p,
                                const json_t *prev, struct kp_err *err);

#endif
