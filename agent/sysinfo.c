/* SPDX-License-Identifier: Apache-2.0 */
/* sysinfo.c - see sysinfo.h. */
#include "agent/sysinfo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/cpuquota.h"
#include "agent/peeraddr.h"
#include "base/clock.h"

uint64_t sysinfo_now_ns(void)
{
    return clock_now_ns();
}

void sysinfo_process_cpu_us(uint64_t *user_us, uint64_t *sys_us)
{
    struct rusage ru;

    memset(&ru, 0, sizeof(ru));
    getrusage(RUSAGE_SELF, &ru);
    *user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000ull + (uint64_t)ru.ru_utime.tv_usec;
    *sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000ull + (uint64_t)ru.ru_stime.tv_usec;
}

int sysinfo_node_cpu(uint64_t out[SYSINFO_CPU_FIELDS])
{
    unsigned long long v[SYSINFO_CPU_FIELDS] = {0};
    FILE *f = fopen("/proc/stat", "re");
    int n = 0;

    memset(out, 0, sizeof(uint64_t) * SYSINFO_CPU_FIELDS);
    if (!f)
        return -1;
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
               &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 4)
        return -1;
    for (int i = 0; i < SYSINFO_CPU_FIELDS; i++)
        out[i] = v[i];
    return 0;
}

uint64_t sysinfo_udp_rcvbuf_errors(void)
{
    char names[1024];
    char values[1024];
    FILE *f = fopen("/proc/net/snmp", "re");
    uint64_t result = 0;

    if (!f)
        return 0;
    /* "Udp:" appears twice: a header line of names, then a line of values */
    while (fgets(names, sizeof(names), f)) {
        char *sn, *sv, *tn, *tv;
        if (strncmp(names, "Udp:", 4) != 0)
            continue;
        if (!fgets(values, sizeof(values), f))
            break;
        tn = strtok_r(names, " \n", &sn);
        tv = strtok_r(values, " \n", &sv);
        while (tn && tv) {
            if (strcmp(tn, "RcvbufErrors") == 0) {
                result = strtoull(tv, NULL, 10);
                break;
            }
            tn = strtok_r(NULL, " \n", &sn);
            tv = strtok_r(NULL, " \n", &sv);
        }
        break;
    }
    fclose(f);
    return result;
}

int sysinfo_socket_ifname(int fd, char *name, size_t len)
{
    struct sockaddr_storage local;
    socklen_t slen = sizeof(local);
    struct ifaddrs *ifa = NULL;
    int rc = -1;

    if (len == 0 || getsockname(fd, (struct sockaddr *)&local, &slen) != 0 || getifaddrs(&ifa) != 0)
        return -1;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
        /* a dual-stack socket's IPv4 address is ::ffff:a.b.c.d; the interface has a.b.c.d */
        if (!i->ifa_addr || !peeraddr_same_ip(i->ifa_addr, (const struct sockaddr *)&local))
            continue;
        snprintf(name, len, "%s", i->ifa_name);
        rc = 0;
        break;
    }
    freeifaddrs(ifa);
    return rc;
}

uint32_t sysinfo_socket_mtu(int fd)
{
    struct ifreq req;
    uint32_t mtu = 0;
    int s;

    memset(&req, 0, sizeof(req));
    if (sysinfo_socket_ifname(fd, req.ifr_name, sizeof(req.ifr_name)) != 0)
        return 0;
    s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s >= 0 && ioctl(s, SIOCGIFMTU, &req) == 0)
        mtu = (uint32_t)req.ifr_mtu;
    if (s >= 0)
        close(s);
    return mtu;
}

int sysinfo_tcp_info(int fd, struct sysinfo_tcp *out)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);

    memset(out, 0, sizeof(*out));
    memset(&ti, 0, sizeof(ti));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return -1;
    out->retransmits = ti.tcpi_total_retrans;
    out->rtt_us = ti.tcpi_rtt;
    out->mss = ti.tcpi_snd_mss;
    return 0;
}

/* One buffer size: the *FORCE option first (needs CAP_NET_ADMIN; EPERM without it is the normal
 * case), then the plain one, which the kernel clamps to the sysctl cap rather than refusing. */
static int set_buf(int fd, int force_opt, int opt, const char *name, int bytes, struct kp_err *err)
{
    if (bytes <= 0 || setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) == 0)
        return 0;
    if (setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes)) != 0)
        return kp_err_set(err, "setsockopt %s %d: %s", name, bytes, strerror(errno));
    return 0;
}

int sysinfo_set_bufs(int fd, int sndbuf, int rcvbuf, struct kp_err *err)
{
    int snd = set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, "SO_SNDBUF", sndbuf, err);
    /* the receive side even when the send side failed; err keeps the first failure */
    int rcv = set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, "SO_RCVBUF", rcvbuf, snd != 0 ? NULL : err);

    return snd != 0 || rcv != 0 ? -1 : 0;
}

int sysinfo_low_unsent(int fd, int bytes, struct kp_err *err)
{
    if (setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof(bytes)) != 0)
        return kp_err_set(err, "setsockopt TCP_NOTSENT_LOWAT %d: %s", bytes, strerror(errno));
    return 0;
}

int sysinfo_keepalive(int fd, int idle_s, unsigned user_timeout_ms, struct kp_err *err)
{
    int one = 1;
    int intvl = 5;
    int cnt = 3;
    const struct {
        int level, opt;
        const char *name;
        const void *val;
        socklen_t len;
    } opts[] = {
        {SOL_SOCKET, SO_KEEPALIVE, "SO_KEEPALIVE", &one, sizeof(one)},
        {IPPROTO_TCP, TCP_KEEPIDLE, "TCP_KEEPIDLE", &idle_s, sizeof(idle_s)},
        {IPPROTO_TCP, TCP_KEEPINTVL, "TCP_KEEPINTVL", &intvl, sizeof(intvl)},
        {IPPROTO_TCP, TCP_KEEPCNT, "TCP_KEEPCNT", &cnt, sizeof(cnt)},
        {IPPROTO_TCP, TCP_USER_TIMEOUT, "TCP_USER_TIMEOUT", &user_timeout_ms,
         sizeof(user_timeout_ms)},
    };
    int rc = 0;

    /* all of them even after a failure: each one left in place still helps */
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        if (setsockopt(fd, opts[i].level, opts[i].opt, opts[i].val, opts[i].len) == 0 || rc != 0)
            continue;
        rc = kp_err_set(err, "setsockopt %s: %s", opts[i].name, strerror(errno));
    }
    return rc;
}

void sysinfo_host(char *host, unsigned host_len, char *kernel, unsigned kernel_len)
{
    struct utsname u;

    if (uname(&u) != 0) {
        snprintf(host, host_len, "unknown");
        snprintf(kernel, kernel_len, "unknown");
        return;
    }
    snprintf(host, host_len, "%s", u.nodename);
    snprintf(kernel, kernel_len, "%s", u.release);
}

void sysinfo_machine(char *buf, unsigned len)
{
    struct utsname u;

    snprintf(buf, len, "%s", uname(&u) == 0 ? u.machine : "unknown");
}

size_t sysinfo_boot_id(char *buf, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    size_t n = 0;

    if (len == 0)
        return 0;
    buf[0] = '\0';
    if (!f)
        return 0;
    if (fgets(buf, (int)len, f))
        n = strcspn(buf, "\n");
    buf[n] = '\0';
    fclose(f);
    return n;
}

unsigned sysinfo_usable_cpus_quota(unsigned *quota_millis)
{
    unsigned millis = cpuquota_millis();
    unsigned quota = cpuquota_cpus(millis);
    cpu_set_t set;
    unsigned n;
    long online;

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
        n = (unsigned)CPU_COUNT(&set);
    } else {
        online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (unsigned)online : 1;
    }
    if (quota_millis)
        *quota_millis = millis;
    return quota && quota < n ? quota : n;
}

unsigned sysinfo_usable_cpus(void)
{
    return sysinfo_usable_cpus_quota(NULL);
}

unsigned sysinfo_half_cpus(unsigned cpus)
{
    return cpus / 2 ? cpus / 2 : 1;
}
