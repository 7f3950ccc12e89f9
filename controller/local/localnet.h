/* SPDX-License-Identifier: Apache-2.0 */
/* localnet.h - a small cluster made of network namespaces, for `kperf run --local`.
 * Owns the topology, its names and addresses, the state file that records what a run created,
 * and the removal of it all (also of leftovers of an earlier run that was killed). Knows
 * nothing of agents or measurements; runs `ip` and `nft` as child processes.
 *
 *   <id>-n1p1 client pod  198.18.1.2/32 ─┐               ┌─ <id>-n2p1 server pod 198.18.2.2/32
 *   <id>-n1p2 server pod  198.18.1.3/32 ─┤ cni0          │ cni0
 *                     <id>-n1 node 1 ────┘ 198.18.1.1    └── <id>-n2 node 2   198.18.2.1
 *                     eth0 198.18.0.1 ──┐                 ┌── eth0 198.18.0.2
 *                                       └─ <id>-u br0 ────┘  "VPC": underlay 198.18.0.0/24,
 *                                          198.18.0.254        router to 198.18.4.0/24
 *                                          ext 198.18.4.1 ─── <id>-ext external host 198.18.4.2
 *
 * Pods have /32 addresses and route everything via their node (as Calico, Cilium or the AWS
 * VPC CNI do), so the node's netfilter sees all pod traffic: nftables DNATs the service
 * addresses 198.18.3.10 (backed by the server pod on node 1) and 198.18.3.11 (on node 2), as
 * kube-proxy does, and masquerades pod traffic leaving the cluster (198.18.0.0/22), as the VPC
 * CNI's SNAT does. Node pod CIDRs are routed across the underlay; the "VPC router" knows only
 * the nodes. Every name starts with the run id "kpl<6 hex>"; links are created directly inside
 * the run's namespaces, so removing the namespaces (after their processes) removes them all.
 *
 * The cluster is dual-stack: every address above has an IPv6 twin in 2001:2::/48 (the IPv6
 * benchmarking range), the IPv4 prefix 198.18.X. becoming 2001:2:0:X:: (pods 2001:2:0:1::2,
 * services 2001:2:0:3::a and ::b, external 2001:2:0:4::2, the cluster 2001:2::/62), with the
 * same routes, DNAT and SNAT (an nftables `inet` table). DAD and router advertisements are
 * off, so addresses are usable at once and nothing else appears. */
#ifndef KPERF_LOCAL_LOCALNET_H
#define KPERF_LOCAL_LOCALNET_H

#include "base/kp_err.h"
#include "base/testkind.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct kp_err;

#define LOCALNET_STATE_DIR "/run/kperf"
#define LOCALNET_PREFIX    "kpl"
#define LOCALNET_ID_LEN    9 /* "kpl" + 6 hex digits */
#define LOCALNET_PORT      TESTKIND_DEFAULT_PORT

enum localnet_ns {
    LN_UNDERLAY = 0, /* the "VPC": underlay bridge and router to the external network */
    LN_NODE1,        /* node 1: host network of the client and of the same-node servers */
    LN_NODE2,        /* node 2 */
    LN_POD_CLIENT,   /* client pod on node 1 */
    LN_POD_SERVER1,  /* server pod on node 1 */
    LN_POD_SERVER2,  /* server pod on node 2 */
    LN_EXTERNAL,     /* a host outside the cluster */
    LN_NS_COUNT,
};

enum localnet_addr {
    LA_NODE1 = 0,   /* 198.18.0.1 */
    LA_NODE2,       /* 198.18.0.2 */
    LA_POD_CLIENT,  /* 198.18.1.2 */
    LA_POD_SERVER1, /* 198.18.1.3 */
    LA_POD_SERVER2, /* 198.18.2.2 */
    LA_SVC_SAME,    /* 198.18.3.10 -> server pod on node 1 */
    LA_SVC_OTHER,   /* 198.18.3.11 -> server pod on node 2 */
    LA_EXTERNAL,    /* 198.18.4.2 */
    LA_COUNT,
};

enum localnet_family {
    LOCALNET_IPV4 = 0,
    LOCALNET_IPV6,
};

struct localnet; /* opaque */

/* Fills id with a fresh run id ("kpl" + 6 random hex digits, NUL-terminated). */
void localnet_new_id(char id[LOCALNET_ID_LEN + 1]);

/* True when name is one of ours: "kpl" + 6 lower-case hex digits, then '-' or the end. */
bool localnet_name_is_ours(const char *name);

/* A topology description; nothing is created yet. state_dir is usually LOCALNET_STATE_DIR
 * (tests pass another). Strings are copied. Never NULL; free with localnet_free. */
struct localnet *localnet_new(const char *run_id, int mtu, const char *state_dir);
void localnet_free(struct localnet *ln); /* does not remove anything; NULL is a no-op */

/* Checks the machine first (root, `ip netns`, `nft`); then records the plan in the state file
 * <state_dir>/<id>.state and builds the topology. Stops early when *cancel becomes non-zero
 * (returns -1, "interrupted"). On failure, what was created stays recorded: call
 * localnet_destroy. Returns 0 or -1 with err. */
KP_MUST_CHECK int localnet_create(struct localnet *ln, volatile sig_atomic_t *cancel,
                                  struct kp_err *err);

/* Kills every process left in the run's namespaces, deletes the namespaces, the run directory
 * and the state file. Idempotent; safe when nothing was created. Returns 0 or -1 with err. */
KP_MUST_CHECK int localnet_destroy(struct localnet *ln, struct kp_err *err);

/* Pods through the user's CNI conflist (--cni-conf, local_cni.h) instead of the hand-built
 * veth to cni0: the run's pods and the readiness pods get their network by the plugins' ADD
 * (DEL at removal and teardown), in namespaces and nodes as above; their addresses are the
 * plugins' (localnet_addr_of). Call before localnet_create; cni is borrowed until
 * localnet_free. */
struct local_cni;
void localnet_set_cni(struct localnet *ln, struct local_cni *cni);

/* The address of `which` in this run: the CNI's for the pods when a conflist made them (NULL
 * when it gave that pod no address of the family), else localnet_addr's. Borrowed. */
const char *localnet_addr_of(const struct localnet *ln, enum localnet_addr which,
                             enum localnet_family family);

/* With a CNI: checks that the plugins gave each of the run's pods an address of the family and
 * a default route of that family. Returns 0 (also without a CNI) or -1 with what to change. */
KP_MUST_CHECK int localnet_cni_require(const struct localnet *ln, enum localnet_family family,
                                       struct kp_err *err);

/* Names and addresses (borrowed until localnet_free / static). */
const char *localnet_ns_name(const struct localnet *ln, enum localnet_ns which);
const char *localnet_addr(enum localnet_addr which, enum localnet_family family);
const char *localnet_id(const struct localnet *ln);
/* The namespace whose counters an agent in ns reports: a pod's node (/run/netns/NAME, as a
 * host-network agent sees them: the node's links, qdiscs and conntrack, which the pod's traffic
 * crosses), or NULL for a node or the external host (their own). Caller frees. */
char *localnet_counters_netns(const struct localnet *ln, enum localnet_ns ns);
int localnet_mtu(const struct localnet *ln);
/* <state_dir>/<id>: a 0700 directory for the token and agent logs, made by localnet_create. */
const char *localnet_run_dir(const struct localnet *ln);
/* Writes text to <run dir>/NAME (for `ip -batch` and `nft -f`). Returns the file's path (free
 * it), or NULL with err. */
char *localnet_write(const struct localnet *ln, const char *name, const char *text,
                     struct kp_err *err);

/* ---- short-lived pods: pod network readiness (backend_local.c, docs/local-backend.md) ----
 * Pod SLOT (0 .. LOCALNET_MAX_PODS-1) of node LN_NODE1 or LN_NODE2 (N = 1 or 2) is attached as
 * the run's client pod is: namespace <id>-r<N>p<SLOT>, eth0 a veth to the node's cni0 (node end
 * "vr<SLOT>"), addresses 198.18.N.(10+SLOT)/32 and 2001:2:0:N::(10+SLOT, hex)/128, default
 * routes via the node's bridge addresses. Names are unique in the run; the namespaces are
 * recorded in the state file before they are made (localnet_pods_reserve), so
 * localnet_destroy and a later run's localnet_cleanup_leftovers remove what an interrupted
 * pod left. */
#define LOCALNET_MAX_PODS 100

/* Records the namespaces of pods 0..n-1 (n <= LOCALNET_MAX_PODS) of both nodes in the state
 * file, before any is made. Returns 0 or -1 with err. */
KP_MUST_CHECK int localnet_pods_reserve(struct localnet *ln, int n, struct kp_err *err);

/* The pod's sandbox: creates its namespace, which must have been reserved. The pod calls below may
 * run in two threads at once for two different pods (reserve before, not during). Returns 0 or -1
 * with err ("... already exists" when the namespace is there already). */
KP_MUST_CHECK int localnet_pod_sandbox(struct localnet *ln, enum localnet_ns node, int slot,
                                       struct kp_err *err);
/* Its network (what a CNI ADD does): the veth, addresses and routes. Returns 0 or -1 with err. */
KP_MUST_CHECK int localnet_pod_network(struct localnet *ln, enum localnet_ns node, int slot,
                                       struct kp_err *err);
/* Removes the pod (namespace and veth; its processes must have ended: the caller waited for
 * them, and localnet_destroy kills what is left); 0 when it is not there. */
KP_MUST_CHECK int localnet_pod_remove(struct localnet *ln, enum localnet_ns node, int slot,
                                      struct kp_err *err);
/* The pod's namespace name and address (family) into buf; returns buf. */
const char *localnet_pod_ns(const struct localnet *ln, enum localnet_ns node, int slot, char *buf,
                            size_t len);
const char *localnet_pod_addr(enum localnet_ns node, int slot, enum localnet_family family,
                              char *buf, size_t len);

/* Checks that this process may build namespaces: root (CAP_SYS_ADMIN + CAP_NET_ADMIN) and the
 * `ip` and `nft` tools. Returns 0 or -1 with a one-line reason and what to do. */
KP_MUST_CHECK int localnet_check_host(struct kp_err *err);

/* Removes what earlier runs recorded in state_dir when the process that made them is gone
 * (a run still in progress is left alone). Only names listed in a state file and passing
 * localnet_name_is_ours are touched. *n_removed counts the runs cleaned. Returns 0, or -1
 * with err when something could not be removed. */
KP_MUST_CHECK int localnet_cleanup_leftovers(const char *state_dir, int *n_removed,
                                             struct kp_err *err);

#endif
