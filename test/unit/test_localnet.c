/* SPDX-License-Identifier: Apache-2.0 */
/* test_localnet.c - the local cluster's names and addresses, and the removal of leftovers from
 * state files: dead owners are cleaned, live owners and foreign files are left alone. Builds
 * no namespaces (the e2e tests do, as root). */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/kp_err.h"
#include "controller/local/localnet.h"

static void test_localnet_name_is_ours(void **state)
{
    (void)state;
    assert_true(localnet_name_is_ours("kpl0a1b2c"));
    assert_true(localnet_name_is_ours("kpl0a1b2c-n1p1"));
    assert_false(localnet_name_is_ours("kpl0a1b2"));     /* too short */
    assert_false(localnet_name_is_ours("kpl0a1b2cd"));   /* no separator */
    assert_false(localnet_name_is_ours("kpl0A1b2c-n1")); /* upper case */
    assert_false(localnet_name_is_ours("kplxyz123-n1")); /* not hex */
    assert_false(localnet_name_is_ours("cni0"));
    assert_false(localnet_name_is_ours("kps0a1b2c-n1")); /* another helper's prefix */
    assert_false(localnet_name_is_ours(""));
}

static void test_localnet_ids_are_fresh_and_ours(void **state)
{
    char a[LOCALNET_ID_LEN + 1], b[LOCALNET_ID_LEN + 1];
    int same = 0;

    (void)state;
    for (int i = 0; i < 20; i++) {
        localnet_new_id(a);
        localnet_new_id(b);
        assert_int_equal(strlen(a), LOCALNET_ID_LEN);
        assert_true(localnet_name_is_ours(a));
        same += strcmp(a, b) == 0;
    }
    assert_true(same < 2); /* 24 random bits: a repeat in 20 draws is a broken generator */
}

static void test_localnet_names_and_addresses(void **state)
{
    struct localnet *ln = localnet_new("kpl123abc", 9001, "/tmp/kperf-state");
    struct in_addr base, a;

    (void)state;
    assert_string_equal(localnet_id(ln), "kpl123abc");
    assert_int_equal(localnet_mtu(ln), 9001);
    assert_string_equal(localnet_run_dir(ln), "/tmp/kperf-state/kpl123abc");
    for (int i = 0; i < LN_NS_COUNT; i++) {
        const char *n = localnet_ns_name(ln, (enum localnet_ns)i);
        assert_true(localnet_name_is_ours(n));
        assert_true(strlen(n) <= 15); /* fits an interface name too */
        for (int j = 0; j < i; j++)
            assert_string_not_equal(n, localnet_ns_name(ln, (enum localnet_ns)j));
    }
    /* every address in 198.18.0.0/18, all distinct */
    inet_pton(AF_INET, "198.18.0.0", &base);
    for (int i = 0; i < LA_COUNT; i++) {
        enum localnet_addr w = (enum localnet_addr)i;
        assert_int_equal(inet_pton(AF_INET, localnet_addr(w, LOCALNET_IPV4), &a), 1);
        assert_int_equal(ntohl(a.s_addr) & 0xffffc000u, ntohl(base.s_addr));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(localnet_addr(w, LOCALNET_IPV4),
                                    localnet_addr((enum localnet_addr)j, LOCALNET_IPV4));
    }
    /* every IPv6 twin in 2001:2::/48 (the benchmarking range), all distinct */
    for (int i = 0; i < LA_COUNT; i++) {
        enum localnet_addr w = (enum localnet_addr)i;
        struct in6_addr a6;
        static const unsigned char prefix[6] = {0x20, 0x01, 0x00, 0x02, 0x00, 0x00};
        assert_int_equal(inet_pton(AF_INET6, localnet_addr(w, LOCALNET_IPV6), &a6), 1);
        assert_memory_equal(a6.s6_addr, prefix, sizeof(prefix));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(localnet_addr(w, LOCALNET_IPV6),
                                    localnet_addr((enum localnet_addr)j, LOCALNET_IPV6));
    }
    localnet_free(ln);
}

/* The short-lived readiness pods: names ours, unique and distinct from the run's; addresses in
 * their node's pod range and distinct from the run's pods. */
static void test_localnet_pod_names_and_addresses(void **state)
{
    struct localnet *ln = localnet_new("kpl123abc", 1500, "/tmp/kperf-state");
    char a[64], b[64];

    (void)state;
    assert_string_equal(localnet_pod_ns(ln, LN_NODE2, 7, a, sizeof(a)), "kpl123abc-r2p7");
    assert_string_equal(localnet_pod_addr(LN_NODE1, 0, LOCALNET_IPV4, a, sizeof(a)), "198.18.1.10");
    assert_string_equal(localnet_pod_addr(LN_NODE2, 6, LOCALNET_IPV6, a, sizeof(a)),
                        "2001:2:0:2::10");
    for (int node = LN_NODE1; node <= LN_NODE2; node++)
        for (int slot = 0; slot < LOCALNET_MAX_PODS; slot++) {
            localnet_pod_ns(ln, (enum localnet_ns)node, slot, a, sizeof(a));
            assert_true(localnet_name_is_ours(a));
            assert_true(strlen(a) <= 15);
            for (int i = 0; i < LN_NS_COUNT; i++)
                assert_string_not_equal(a, localnet_ns_name(ln, (enum localnet_ns)i));
            localnet_pod_ns(ln, node == LN_NODE1 ? LN_NODE2 : LN_NODE1, slot, b, sizeof(b));
            assert_string_not_equal(a, b);
            for (int f = LOCALNET_IPV4; f <= LOCALNET_IPV6; f++) {
                localnet_pod_addr((enum localnet_ns)node, slot, (enum localnet_family)f, a,
                                  sizeof(a));
                assert_true(strncmp(a, node == LN_NODE1 ? "198.18.1." : "198.18.2.", 9) == 0 ||
                            strncmp(a, node == LN_NODE1 ? "2001:2:0:1::" : "2001:2:0:2::", 12) ==
                                0);
                for (int i = 0; i < LA_COUNT; i++)
                    assert_string_not_equal(
                        a, localnet_addr((enum localnet_addr)i, (enum localnet_family)f));
            }
        }
    localnet_free(ln);
}

/* Reserving pods records their namespaces in the state file (so that a killed run's pods are
 * found), a pod not reserved is refused before anything runs, destroy removes the state. */
static void test_localnet_pods_reserved_in_state(void **state)
{
    char dir[] = "/tmp/kperf-test-localnet-XXXXXX";
    char path[128], line[256];
    struct localnet *ln;
    struct kp_err err = {{0}};
    FILE *f;
    int n_netns = 0, n_pods = 0;

    (void)state;
    assert_non_null(mkdtemp(dir));
    ln = localnet_new("kpl0eeeee", 1500, dir);
    assert_int_equal(localnet_pods_reserve(ln, LOCALNET_MAX_PODS + 1, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "at most"));
    assert_int_equal(localnet_pods_reserve(ln, 2, &err), 0);
    assert_int_equal(localnet_pods_reserve(ln, 3, &err), 0); /* adds slot 2 only */
    assert_int_equal(localnet_pod_sandbox(ln, LN_NODE1, 3, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "kpl0eeeee-r1p3 was not reserved"));
    assert_int_equal(localnet_pod_sandbox(ln, LN_POD_CLIENT, 0, &err), -1);
    snprintf(path, sizeof(path), "%s/kpl0eeeee.state", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        n_netns += strncmp(line, "netns kpl0eeeee-", 16) == 0;
        n_pods += strncmp(line, "netns kpl0eeeee-r", 17) == 0;
    }
    fclose(f);
    assert_int_equal(n_pods, 6);
    assert_int_equal(n_netns, LN_NS_COUNT + 6);
    assert_int_equal(localnet_destroy(ln, &err), 0);
    assert_int_equal(access(path, F_OK), -1);
    localnet_free(ln);
    assert_int_equal(rmdir(dir), 0);
}

static long long starttime_of(pid_t pid)
{
    char path[64], buf[1024];
    FILE *f;
    char *p;
    int field = 2;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    p = strrchr(buf, ')');
    for (char *t = strtok(p + 1, " "); t; t = strtok(NULL, " "))
        if (++field == 22)
            return atoll(t);
    return -1;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[2048];
    FILE *f;
    int w = snprintf(path, sizeof(path), "%s/%s", dir, name);

    assert_true(w > 0 && (size_t)w < sizeof(path));
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *dir, const char *name)
{
    char path[512];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static void test_localnet_leftovers_of_dead_runs_only(void **state)
{
    char dir[] = "/tmp/kperf-test-localnet-XXXXXX";
    char text[1024];
    pid_t dead, live;
    int n = -1;
    struct kp_err err = {{0}};

    (void)state;
    assert_non_null(mkdtemp(dir));
    dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    live = fork();
    if (live == 0) {
        pause();
        _exit(0);
    }
    /* a run whose process is gone: its (here never created) namespaces and its dir go */
    snprintf(text, sizeof(text),
             "pid %d\nstarttime 1\nnetns kpl00dead-n1\nnetns kpl00dead-u\ndir %s/kpl00dead\n",
             (int)dead, dir);
    write_file(dir, "kpl00dead.state", text);
    snprintf(text, sizeof(text), "%s/kpl00dead", dir);
    assert_int_equal(mkdir(text, 0700), 0);
    write_file(text, "token", "secret");
    /* a run still in progress (same pid and start time): left alone */
    snprintf(text, sizeof(text), "pid %d\nstarttime %lld\nnetns kpl00a1fe-n1\n", (int)live,
             starttime_of(live));
    write_file(dir, "kpl00a1fe.state", text);
    /* a reused pid (start time differs) is a leftover */
    snprintf(text, sizeof(text), "pid %d\nstarttime %lld\n", (int)live, starttime_of(live) + 1);
    write_file(dir, "kpl00beef.state", text);
    /* not ours by name: never read */
    write_file(dir, "notes.state", "pid 1\n");
    write_file(dir, "kplzzzzzz.state", "pid 1\n");

    assert_int_equal(localnet_cleanup_leftovers(dir, &n, &err), 0);
    assert_int_equal(n, 2);
    assert_false(exists(dir, "kpl00dead.state"));
    assert_false(exists(dir, "kpl00dead"));
    assert_false(exists(dir, "kpl00beef.state"));
    assert_true(exists(dir, "kpl00a1fe.state"));
    assert_true(exists(dir, "notes.state"));
    assert_true(exists(dir, "kplzzzzzz.state"));

    kill(live, SIGKILL);
    waitpid(live, NULL, 0);
    assert_int_equal(localnet_cleanup_leftovers(dir, &n, &err), 0);
    assert_int_equal(n, 1); /* its owner is gone now */
    assert_false(exists(dir, "kpl00a1fe.state"));
    snprintf(text, sizeof(text), "%s/notes.state", dir);
    unlink(text);
    snprintf(text, sizeof(text), "%s/kplzzzzzz.state", dir);
    unlink(text);
    assert_int_equal(rmdir(dir), 0); /* nothing else was left */
}

static void test_localnet_missing_state_dir_is_fine(void **state)
{
    int n = -1;
    struct kp_err err = {{0}};

    (void)state;
    assert_int_equal(localnet_cleanup_leftovers("/nonexistent/kperf", &n, &err), 0);
    assert_int_equal(n, 0);
}

static void test_localnet_destroy_of_nothing_is_safe(void **state)
{
    char dir[] = "/tmp/kperf-test-localnet-XXXXXX";
    struct localnet *ln;
    struct kp_err err = {{0}};

    (void)state;
    assert_non_null(mkdtemp(dir));
    ln = localnet_new("kpl0fffff", 1500, dir);
    assert_int_equal(localnet_destroy(ln, &err), 0);
    assert_int_equal(localnet_destroy(ln, &err), 0); /* idempotent */
    localnet_free(ln);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_localnet_name_is_ours),
        cmocka_unit_test(test_localnet_ids_are_fresh_and_ours),
        cmocka_unit_test(test_localnet_names_and_addresses),
        cmocka_unit_test(test_localnet_pod_names_and_addresses),
        cmocka_unit_test(test_localnet_pods_reserved_in_state),
        cmocka_unit_test(test_localnet_leftovers_of_dead_runs_only),
        cmocka_unit_test(test_localnet_missing_state_dir_is_fine),
        cmocka_unit_test(test_localnet_destroy_of_nothing_is_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
