/* SPDX-License-Identifier: Apache-2.0 */
/* localnet_int.h - what localnet.c (names, state, removal) shares with localnet_build.c
 * (building). Not for other modules: they use localnet.h. */
#ifndef KPERF_LOCAL_LOCALNET_INT_H
#define KPERF_LOCAL_LOCALNET_INT_H

#include <signal.h>
#include <stdbool.h>

#include "base/kp_err.h"
#include "controller/local/localnet.h"

#define NETNS_DIR "/run/netns"

struct kp_err;

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
};

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
