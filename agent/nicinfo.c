/* SPDX-License-Identifier: Apache-2.0 */
/* nicinfo.c - see nicinfo.h. */
#include "agent/nicinfo.h"

#include <dirent.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/kp_alloc.h"

char *nicinfo_sysctl(const char *path)
{
    char *full = kp_xasprintf("/proc/sys/%s", path);
    FILE *f = fopen(full, "re");
    char buf[256];
    size_t n = 0;

    free(full);
    if (!f)
        return NULL;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    if (n == 0)
        return NULL;
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '\t')
            *p = ' ';
    return kp_xstrdup(buf);
}

static int ethtool(int s, const char *ifname, void *cmd)
{
    struct ifreq req;

    memset(&req, 0, sizeof(req));
    snprintf(req.ifr_name, sizeof(req.ifr_name), "%s", ifname);
    req.ifr_data = cmd;
    return ioctl(s, SIOCETHTOOL, &req);
}

static void ethtool_flag(int s, const char *ifname, unsigned cmd, const char *field, json_t *out)
{
    struct ethtool_value v = {.cmd = cmd};

    if (ethtool(s, ifname, &v) == 0)
        json_object_set_new(out, field, json_boolean(v.data != 0));
}

/* queue counts from /sys/class/net/<if>/queues/{rx,tx}-N, only when that sysfs entry is the
 * interface of our namespace (sysfs shows the namespace that mounted it) */
static void sysfs_queues(const char *ifname, unsigned ifindex, json_t *out)
{
    char *path = kp_xasprintf("/sys/class/net/%s/ifindex", ifname);
    FILE *f = fopen(path, "re");
    unsigned idx = 0;
    int ok = f && fscanf(f, "%u", &idx) == 1 && idx == ifindex;
    DIR *d;
    struct dirent *e;
    int rx = 0, tx = 0;

    if (f)
        fclose(f);
    free(path);
    if (!ok)
        return;
    path = kp_xasprintf("/sys/class/net/%s/queues", ifname);
    d = opendir(path);
    free(path);
    if (!d)
        return;
    while ((e = readdir(d))) {
        rx += strncmp(e->d_name, "rx-", 3) == 0;
        tx += strncmp(e->d_name, "tx-", 3) == 0;
    }
    closedir(d);
    if (!json_object_get(out, "rx_queues") && rx > 0)
        json_object_set_new(out, "rx_queues", json_integer(rx));
    if (!json_object_get(out, "tx_queues") && tx > 0)
        json_object_set_new(out, "tx_queues", json_integer(tx));
}

static json_t *one_nic(int s, const char *ifname, unsigned ifindex)
{
    json_t *out = json_pack("{s:s}", "name", ifname);
    struct ethtool_drvinfo drv = {.cmd = ETHTOOL_GDRVINFO};
    struct ethtool_cmd link = {.cmd = ETHTOOL_GSET};
    struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
    struct ifreq req;

    memset(&req, 0, sizeof(req));
    snprintf(req.ifr_name, sizeof(req.ifr_name), "%s", ifname);
    if (ioctl(s, SIOCGIFMTU, &req) == 0)
        json_object_set_new(out, "mtu", json_integer(req.ifr_mtu));
    if (ethtool(s, ifname, &drv) == 0) {
        if (drv.driver[0])
            json_object_set_new(out, "driver", json_string(drv.driver));
        if (drv.version[0])
            json_object_set_new(out, "driver_version", json_string(drv.version));
        if (drv.bus_info[0])
            json_object_set_new(out, "bus", json_string(drv.bus_info));
    }
    if (ethtool(s, ifname, &link) == 0) {
        /* the kernel header's ethtool_cmd_speed() shifts a promoted int (UB for 0xffff) */
        uint32_t speed = ((uint32_t)link.speed_hi << 16) | link.speed;
        if (speed != 0 && speed != (unsigned)SPEED_UNKNOWN)
            json_object_set_new(out, "speed_mbps", json_integer(speed));
    }
    if (ethtool(s, ifname, &ch) == 0) {
        if (ch.rx_count)
            json_object_set_new(out, "rx_queues", json_integer(ch.rx_count));
        if (ch.tx_count)
            json_object_set_new(out, "tx_queues", json_integer(ch.tx_count));
        if (ch.combined_count)
            json_object_set_new(out, "combined_queues", json_integer(ch.combined_count));
    }
    sysfs_queues(ifname, ifindex, out);
    ethtool_flag(s, ifname, ETHTOOL_GGRO, "gro", out);
    ethtool_flag(s, ifname, ETHTOOL_GGSO, "gso", out);
    ethtool_flag(s, ifname, ETHTOOL_GTSO, "tso", out);
    return out;
}

json_t *nicinfo_node_facts(const char *only_iface)
{
    static const struct {
        const char *path, *field;
    } sysctls[] = {
        {"net/ipv4/tcp_congestion_control", "tcp_congestion_control"},
        {"net/core/rmem_max", "rmem_max"},
        {"net/core/wmem_max", "wmem_max"},
        {"net/ipv4/tcp_rmem", "tcp_rmem"},
        {"net/ipv4/tcp_wmem", "tcp_wmem"},
        {"net/netfilter/nf_conntrack_max", "nf_conntrack_max"},
    };
    json_t *nics = json_array(), *sys = json_object();
    struct if_nameindex *ifs = if_nameindex();
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    for (struct if_nameindex *i = ifs; s >= 0 && i && i->if_index; i++) {
        if (strcmp(i->if_name, "lo") == 0 && !(only_iface && strcmp(only_iface, "lo") == 0))
            continue;
        if (only_iface && strcmp(only_iface, i->if_name) != 0)
            continue;
        json_array_append_new(nics, one_nic(s, i->if_name, i->if_index));
    }
    if (s >= 0)
        close(s);
    if (ifs)
        if_freenameindex(ifs);
    for (size_t k = 0; k < sizeof(sysctls) / sizeof(sysctls[0]); k++) {
        char *v = nicinfo_sysctl(sysctls[k].path);
        if (v)
            json_object_set_new(sys, sysctls[k].field, json_string(v));
        free(v);
    }
    return json_pack("{s:o, s:o}", "nics", nics, "sysctls", sys);
}
