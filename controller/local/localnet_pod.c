/* SPDX-License-Identifier: Apache-2.0 */
/* localnet_pod.c - the short-lived pods of localnet.h: a namespace attached to a node's bridge
 * the way localnet_build.c attaches the run's client pod, made and removed one at a time. */
#include "controller/local/localnet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kp_alloc.h"
#include "base/kp_err.h"
#include "controller/local/localnet_int.h"

static int node_number(enum localnet_ns node)
{
    return node == LN_NODE2 ? 2 : 1;
}

const char *localnet_pod_ns(const struct localnet *ln, enum localnet_ns node, int slot, char *buf,
                            size_t len)
{
    snprintf(buf, len, "%s-r%dp%d", ln->id, node_number(node), slot);
    return buf;
}

const char *localnet_pod_addr(enum localnet_ns node, int slot, enum localnet_family family,
                              char *buf, size_t len)
{
    if (family == LOCALNET_IPV6)
        snprintf(buf, len, "2001:2:0:%d::%x", node_number(node), 10 + slot);
    else
        snprintf(buf, len, "198.18.%d.%d", node_number(node), 10 + slot);
    return buf;
}

static int check_args(enum localnet_ns node, int slot, struct kp_err *err)
{
    if ((node != LN_NODE1 && node != LN_NODE2) || slot < 0 || slot >= LOCALNET_MAX_PODS)
        return kp_err_set(err, "no pod slot %d on namespace %d", slot, (int)node);
    return 0;
}

int localnet_pods_reserve(struct localnet *ln, int n, struct kp_err *err)
{
    char ns[64];

    if (n < 0 || n > LOCALNET_MAX_PODS)
        return kp_err_set(err, "%d pods per node: at most %d", n, LOCALNET_MAX_PODS);
    for (int slot = 0; slot < n; slot++)
        for (int node = LN_NODE1; node <= LN_NODE2; node++) {
            bool known = false;
            localnet_pod_ns(ln, (enum localnet_ns)node, slot, ns, sizeof(ns));
            for (size_t i = 0; i < ln->n_pods && !known; i++)
                known = strcmp(ln->pods[i], ns) == 0;
            if (known)
                continue;
            ln->pods = kp_xrealloc(ln->pods, (ln->n_pods + 1) * sizeof(*ln->pods));
            ln->pods[ln->n_pods++] = kp_xstrdup(ns);
            if (ln->cni) /* its CNI record too: no reallocation once pods are made */
                (void)localnet_cni_reserve(ln, (enum localnet_ns)node, ns);
        }
    return localnet_write_state(ln, err);
}

int localnet_pod_sandbox(struct localnet *ln, enum localnet_ns node, int slot, struct kp_err *err)
{
    char ns[64];
    bool known = false;

    if (check_args(node, slot, err) != 0)
        return -1;
    localnet_pod_ns(ln, node, slot, ns, sizeof(ns));
    for (size_t i = 0; i < ln->n_pods && !known; i++)
        known = strcmp(ln->pods[i], ns) == 0;
    if (!known)
        return kp_err_set(err, "pod %s was not reserved", ns);
    if (localnet_ns_exists(ns))
        return kp_err_set(err, "network namespace %s already exists", ns);
    /* no sysctls: a new namespace has the kernel's defaults (no forwarding, IPv6 on); the
     * addresses are nodad and nothing sends router advertisements on the pod bridge. A CNI's
     * IPv6 address would wait for DAD, which the run's pods do not do: turned off alike */
    if (localnet_cmd(ln, err, "ip", "netns", "add", ns, NULL) != 0)
        return -1;
    if (!ln->cni)
        return 0;
    return localnet_cmd(ln, err, "ip", "netns", "exec", ns, "sysctl", "-q", "-e", "-w",
                        "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                        NULL);
}

/* Writes text to <run_dir>/ip-<name>.batch and runs it in namespace ns. */
static int run_batch(struct localnet *ln, const char *ns, const char *name, const char *text,
                     struct kp_err *err)
{
    char *file = kp_xasprintf("ip-%s.batch", name);
    char *path = localnet_write(ln, file, text, err);
    int rc = -1;

    free(file);
    if (path) {
        rc = localnet_cmd(ln, err, "ip", "-n", ns, "-batch", path, NULL);
        unlink(path);
        free(path);
    }
    return rc;
}

int localnet_pod_network(struct localnet *ln, enum localnet_ns node, int slot, struct kp_err *err)
{
    char ns[64], a4[32], a6[64], name[80];
    int n = node_number(node);
    char *text;
    int rc;

    if (check_args(node, slot, err) != 0)
        return -1;
    localnet_pod_ns(ln, node, slot, ns, sizeof(ns));
    if (ln->cni) /* the plugins' ADD, and its routes on the other node */
        return localnet_cni_attach(ln, ns, err);
    localnet_pod_addr(node, slot, LOCALNET_IPV4, a4, sizeof(a4));
    localnet_pod_addr(node, slot, LOCALNET_IPV6, a6, sizeof(a6));
    /* the node's end: a veth whose peer is born inside the pod, joined to the pod bridge */
    text = kp_xasprintf("link add vr%d mtu %d type veth peer name eth0 netns %s mtu %d\n"
                        "link set vr%d master cni0 up\n",
                        slot, ln->mtu, ns, ln->mtu, slot);
    snprintf(name, sizeof(name), "r%dp%d-node", n, slot);
    rc = run_batch(ln, ln->ns[node], name, text, err);
    free(text);
    if (rc != 0)
        return -1;
    /* the pod's end, as config_host of localnet_build.c: /32 and /128 via the bridge */
    text = kp_xasprintf("link set lo up\n"
                        "link set eth0 up\n"
                        "addr add %s/32 dev eth0\n"
                        "route add default via 198.18.%d.1 dev eth0 onlink\n"
                        "addr add %s/128 dev eth0 nodad\n"
                        "route add default via 2001:2:0:%d::1 dev eth0 onlink\n",
                        a4, n, a6, n);
    snprintf(name, sizeof(name), "r%dp%d-pod", n, slot);
    rc = run_batch(ln, ns, name, text, err);
    free(text);
    return rc;
}

int localnet_pod_remove(struct localnet *ln, enum localnet_ns node, int slot, struct kp_err *err)
{
    char ns[64];

    if (check_args(node, slot, err) != 0)
        return -1;
    localnet_pod_ns(ln, node, slot, ns, sizeof(ns));
    if (ln->cni && localnet_cni_detach(ln, ns, err) != 0)
        return -1;
    if (!localnet_ns_exists(ns))
        return 0;
    /* deleting the namespace deletes its veth, and with it the node's end */
    return localnet_cmd(NULL, err, "ip", "netns", "del", ns, NULL);
}

char *localnet_counters_netns(const struct localnet *ln, enum localnet_ns ns)
{
    if (ns == LN_POD_CLIENT || ns == LN_POD_SERVER1)
        return kp_xasprintf("/run/netns/%s", localnet_ns_name(ln, LN_NODE1));
    if (ns == LN_POD_SERVER2)
        return kp_xasprintf("/run/netns/%s", localnet_ns_name(ln, LN_NODE2));
    return NULL;
}
