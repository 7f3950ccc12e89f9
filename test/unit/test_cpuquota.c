/* SPDX-License-Identifier: Apache-2.0 */
/* test_cpuquota.c - a pod's CPU limit read from cgroup files laid out as the kernel lays them
 * out (v2 pure and hybrid, v1 with split or joined cpu,cpuacct), in a temporary directory that
 * stands for /sys/fs/cgroup; and this machine's own reading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <limits.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/cpuquota.h"
#include "agent/sysinfo.h"

static char root[PATH_MAX];

static void mkdirs(const char *rel)
{
    char path[PATH_MAX * 2];
    char *p;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (p = path + strlen(root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    mkdir(path, 0755);
}

static void put(const char *rel, const char *text)
{
    char path[PATH_MAX * 2];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/kperf-cpuquota.XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[PATH_MAX + 16];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_cpuquota_v2_pod_limit(void **state)
{
    (void)state;
    /* a Kubernetes pod: the pod's group holds the limit, the container's is unlimited */
    mkdirs("kubepods.slice/pod1/cri-abc");
    put("kubepods.slice/cpu.max", "max 100000\n");
    put("kubepods.slice/pod1/cpu.max", "150000 100000\n");
    put("kubepods.slice/pod1/cri-abc/cpu.max", "max 100000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/kubepods.slice/pod1/cri-abc\n"), 1500);
    assert_int_equal(cpuquota_cpus(1500), 2);
    /* the container's own, tighter limit wins over its parent's */
    put("kubepods.slice/pod1/cri-abc/cpu.max", "50000 100000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/kubepods.slice/pod1/cri-abc\n"), 500);
    /* a different period: 25 ms of every 50 ms is half a CPU */
    put("kubepods.slice/pod1/cri-abc/cpu.max", "25000 50000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/kubepods.slice/pod1/cri-abc\n"), 500);
}

static void test_cpuquota_v2_unlimited_and_namespaced(void **state)
{
    (void)state;
    mkdirs("free");
    put("free/cpu.max", "max 100000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/free\n"), 0);
    assert_int_equal(cpuquota_cpus(0), 0);
    /* a container with its own cgroup namespace sees "0::/" and its group mounted as the root */
    put("cpu.max", "200000 100000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/\n"), 2000);
    /* the host's path, which this mount does not show, walks up to the mount's root */
    assert_int_equal(cpuquota_millis_at(root, "0::/kubepods/burstable/podX/cid\n"), 2000);
}

static void test_cpuquota_v1_layouts(void **state)
{
    (void)state;
    /* joined cpu,cpuacct (Amazon Linux 2, older Ubuntu): pod 2.5 CPUs */
    mkdirs("cpu,cpuacct/kubepods/pod2/cid");
    put("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    put("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    put("cpu,cpuacct/kubepods/pod2/cpu.cfs_quota_us", "250000\n");
    put("cpu,cpuacct/kubepods/pod2/cpu.cfs_period_us", "100000\n");
    put("cpu,cpuacct/kubepods/pod2/cid/cpu.cfs_quota_us", "-1\n");
    put("cpu,cpuacct/kubepods/pod2/cid/cpu.cfs_period_us", "100000\n");
    assert_int_equal(cpuquota_millis_at(root, "12:memory:/kubepods/pod2/cid\n"
                                              "4:cpu,cpuacct:/kubepods/pod2/cid\n"
                                              "0::/\n"),
                     2500);
    assert_int_equal(cpuquota_cpus(2500), 3);
    /* a line for cpuacct alone is not the cpu controller */
    assert_int_equal(cpuquota_millis_at(root, "3:cpuacct:/kubepods/pod2/cid\n"), 0);
    /* split mounts (this CI machine's layout): /sys/fs/cgroup/cpu */
    mkdirs("cpu/job");
    put("cpu/job/cpu.cfs_quota_us", "100000\n");
    put("cpu/job/cpu.cfs_period_us", "100000\n");
    assert_int_equal(cpuquota_millis_at(root, "2:cpuacct:/\n1:cpu:/job\n"), 1000);
}

static void test_cpuquota_refuses_garbage(void **state)
{
    (void)state;
    mkdirs("bad");
    put("bad/cpu.max", "lots\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/bad\n"), 0);
    put("bad/cpu.max", "100000 0\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/bad\n"), 0);
    put("bad/cpu.max", "-5 100000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/bad\n"), 0);
    /* an absurd quota does not wrap around */
    put("bad/cpu.max", "9223372036854775807 1000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/bad\n"), UINT_MAX);
    /* a tiny quota still allows one CPU */
    put("bad/cpu.max", "1 100000\n");
    assert_int_equal(cpuquota_millis_at(root, "0::/bad\n"), 1);
    assert_int_equal(cpuquota_cpus(1), 1);
    /* lines that are not cgroup lines, and no file at all */
    assert_int_equal(cpuquota_millis_at(root, "garbage\n::\n1:cpu:relative\n"), 0);
    assert_int_equal(cpuquota_millis_at("/nonexistent-kperf-root", "0::/x\n1:cpu:/x\n"), 0);
    assert_int_equal(cpuquota_millis_at(root, ""), 0);
}

/* This machine: the CPU count placement uses is exactly the affinity mask capped by the
 * quota's CPUs (rounded up), the quota reported with it is the one cpuquota_millis reads, and
 * half of it is at least 1. */
static void test_cpuquota_this_process(void **state)
{
    unsigned q = 12345, cpus = sysinfo_usable_cpus_quota(&q);
    unsigned cap = cpuquota_cpus(cpuquota_millis());
    cpu_set_t set;
    unsigned mask;

    (void)state;
    assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
    mask = (unsigned)CPU_COUNT(&set);
    assert_int_equal(q, cpuquota_millis());
    assert_int_equal(cpus, cap && cap < mask ? cap : mask);
    assert_int_equal(sysinfo_usable_cpus(), cpus);
    assert_int_equal(sysinfo_half_cpus(1), 1);
    assert_int_equal(sysinfo_half_cpus(5), 2);
    assert_int_equal(sysinfo_half_cpus(cpus), cpus / 2 ? cpus / 2 : 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_cpuquota_v2_pod_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpuquota_v2_unlimited_and_namespaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpuquota_v1_layouts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cpuquota_refuses_garbage, setup, teardown),
        cmocka_unit_test(test_cpuquota_this_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
