/* SPDX-License-Identifier: Apache-2.0 */
/* localnet_int.h - what localnet.c (names, state, removal) shares with localnet_build.c
 * (building). Not for other modules: they use localnet.h. */
#ifndef KPERF_LOCAL_LOCALNET_INT_H
#define KPERF_LOCAL_LOCALNET_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "base/kp_err.h"
#include "controller/local/cni_json.h"
#include "controller/local/localnet.h"

#define NETNS_DIR "/run/netns"

struct kp_err;

/* A pod whose network a CNI conflist sets up (localnet_cni.c). Its record exists (and is in the
 * state file) before its ADD starts, so teardown and a later run can DEL it. */
enum ln_cni_state { LN_CNI_RESERVED = 0, LN_CNI_ADDING, LN_CNI_UP, LN_CNI_GONE };

struct ln_cni_pod {
    char ns[64];           /* its namespace */
    char id[64];           /* CNI_CONTAINERID: the namespace's name */
    enum localnet_ns node; /* LN_NODE1 or LN_NODE2 */
    enum ln_cni_state state;
    json_t *result; /* the ADD result (DEL's prevResult); owned */
    struct cni_result r;
};

#define LN_CNI_MAX_IFS 8

struct localnet {
    char id[LOCALNET_ID_LEN + 1];
    int mtu;
    char *state_dir;               /* owned */
    char *state_path;              /* owned: <state_dir>/<id>.state */
    char *run_dir;                 /* owned: <state_dir>/<id> */
    char *ns[LN_NS_COUNT];         /* owned names */
    volatile sig_atomic_t *cancel; /* borrowed during create */
    char **pods;                   /* owned: short-lived pod namespaces made so far (recorded) */
    size_t n_pods;
    struct local_cni *cni;       /* borrowed: --cni-conf, or NULL (the hand-built bridge+veth) */
    char *cni_copy;              /* owned: <run_dir>/cni.conflist, for a later run's DEL */
    struct ln_cni_pod *cni_pods; /* owned: never reallocated while readiness threads run */
    size_t n_cni_pods;
    /* the CNI's addresses of the run's pods [which - LN_POD_CLIENT][family] */
    char pod_addr[3][2][CNI_ADDR_LEN];
    /* each node's interfaces that face its pods (from the run's pods' results): where proxy
     * NDP answers for the other node's pods */
    char host_ifs[2][LN_CNI_MAX_IFS][CNI_IFNAME_LEN];
    size_t n_host_ifs[2];
};

/* ---- localnet_cni.c ---- */

/* Builds the run's three pods through the CNI (after the nodes' links and addresses), routes
 * each pod address to its node from the other node, and records the addresses. */
KP_MUST_CHECK int localnet_cni_build(struct localnet *ln, struct kp_err *err);
/* Adds a record for pod namespace ns on node (no ADD yet). Returns its index. */
size_t localnet_cni_reserve(struct localnet *ln, enum localnet_ns node, const char *ns);
/* ADD for the recorded pod ns, then its routes on the other node. Returns 0 or -1 with err
 * (then nothing of it is left). */
KP_MUST_CHECK int localnet_cni_attach(struct localnet *ln, const char *ns, struct kp_err *err);
/* Its routes off the other node, then DEL. 0 when it was never attached. */
KP_MUST_CHECK int localnet_cni_detach(struct localnet *ln, const char *ns, struct kp_err *err);
/* DEL of every pod still attached (or whose ADD began), before the namespaces go. */
KP_MUST_CHECK int localnet_cni_teardown(struct localnet *ln, struct kp_err *err);
/* The state file's lines for the CNI ("cni ..." and "cnipod ..."). */
void localnet_cni_state(const struct localnet *ln, FILE *f);
/* A later run's DEL of what a killed run's state file lists: its "cni" line and "cnipod"
 * lines (collected by the reader). Returns 0 or -1 with err. */
KP_MUST_CHECK int localnet_cni_leftovers(const char *copy, const char *cni_path, char **pods, int n,
                                         struct kp_err *err);

/* "-u", "-n1", ...: namespace name = id + suffix. */
extern const char *const localnet_ns_suffix[LN_NS_COUNT];

/* Runs a command given as NULL-terminated string arguments (at most 32); fails with err,
 * or with "interrupted" when ln's cancel flag is set. ln may be NULL. */
KP_MUST_CHECK int localnet_cmd(struct localnet *ln, struct kp_err *err, ...);

/* True when /run/netns/<name> exists. */
bool localnet_ns_exists(const char *name);

/* Kills what runs in our namespace `name` and deletes it; 0 when it is not there or not ours.
 * Returns 0 or -1 with err. */
KP_MUST_CHECK int localnet_remove_ns(const char *name, struct kp_err *err);

/* Writes <state_dir>/<id>.state (owner pid and start time, the namespaces, the short-lived
 * pods' too), atomically. */
KP_MUST_CHECK int localnet_write_state(struct localnet *ln, struct kp_err *err);

#endif
