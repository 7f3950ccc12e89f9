/* SPDX-License-Identifier: Apache-2.0 */
/* test_pmtu.c - the path-MTU probe's bisection and verdict (agent/pmtu.h) against simulated
 * paths: a path that carries the interface MTU is settled in one packet; a lower hop is found
 * within PMTU_STEP bytes from below, never above, in a bounded number of sizes, at once when
 * an ICMP names it; a full size lost once is found by the last try; nothing crossing ends after the
 * floor; the verdict tells ok, reduced (ICMP said so), black hole (no ICMP, or the full-MSS
 * transfer stalled) and unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/pmtu.h"

/* Runs a search over a path whose largest crossing packet is path (0: nothing crosses); with
 * icmp, a packet too big brings back an ICMP naming path. Returns the sizes tried. */
static unsigned simulate(struct pmtu_search *p, uint32_t iface, uint32_t floor, uint32_t path,
                         int icmp)
{
    uint32_t size;

    pmtu_search_init(p, iface, floor);
    while ((size = pmtu_next(p)) != 0) {
        int crossed = size <= path;
        assert_true(size >= floor || size == path);
        assert_true(size <= iface || iface < floor);
        pmtu_report(p, size, crossed, !crossed && icmp ? path : 0);
    }
    return p->steps;
}

static enum pmtu_verdict verdict(uint32_t client, uint32_t server, const struct pmtu_search *p,
                                 int tcp)
{
    struct pmtu_facts f = {.client_mtu = client,
                           .server_mtu = server,
                           .path_mtu = p->lo,
                           .icmp_mtu = p->icmp_mtu,
                           .tcp_full_mss = tcp};
    return pmtu_verdict(&f);
}

static void test_pmtu_clean_path_is_one_packet(void **state)
{
    struct pmtu_search p;

    (void)state;
    assert_int_equal(simulate(&p, 1500, PMTU_IPV4_MIN, 1500, 0), 1);
    assert_int_equal(p.lo, 1500);
    assert_int_equal(verdict(1500, 1500, &p, 1), PMTU_OK);
    assert_int_equal(simulate(&p, 9001, PMTU_IPV6_MIN, 9001, 0), 1);
    assert_int_equal(verdict(9001, 9001, &p, 1), PMTU_OK);
}

static void test_pmtu_silent_lower_hop_is_a_black_hole(void **state)
{
    struct pmtu_search p;
    unsigned steps = simulate(&p, 1500, PMTU_IPV4_MIN, 1400, 0);

    (void)state;
    assert_true(p.lo <= 1400 && p.lo + PMTU_STEP >= 1400);
    assert_true(steps <= 11);
    assert_int_equal(p.icmp_mtu, 0);
    assert_int_equal(verdict(1500, 1500, &p, 1), PMTU_BLACK_HOLE);
    assert_int_equal(verdict(1500, 1500, &p, -1), PMTU_BLACK_HOLE);
    /* IPv6: the same from its floor */
    steps = simulate(&p, 1500, PMTU_IPV6_MIN, 1400, 0);
    assert_true(p.lo <= 1400 && p.lo + PMTU_STEP >= 1400);
    assert_true(steps <= 9);
    assert_int_equal(verdict(1500, 1500, &p, 1), PMTU_BLACK_HOLE);
}

static void test_pmtu_icmp_names_the_hop_at_once(void **state)
{
    struct pmtu_search p;

    (void)state;
    /* full size (ICMP 1400), 1400 itself, the full size once more: three sizes, exact */
    assert_int_equal(simulate(&p, 1500, PMTU_IPV4_MIN, 1400, 1), 3);
    assert_int_equal(p.lo, 1400);
    assert_int_equal(p.icmp_mtu, 1400);
    assert_int_equal(verdict(1500, 1500, &p, 1), PMTU_REDUCED);
    /* reported, yet the transfer at full MSS stalled: still a hole for TCP */
    assert_int_equal(verdict(1500, 1500, &p, 0), PMTU_BLACK_HOLE);
}

/* The full size lost once (a dropped datagram, not the path): the last try finds it. */
static void test_pmtu_a_lost_full_size_is_tried_again(void **state)
{
    struct pmtu_search p;
    uint32_t size;
    int first = 1;

    (void)state;
    pmtu_search_init(&p, 1500, PMTU_IPV4_MIN);
    while ((size = pmtu_next(&p)) != 0) {
        pmtu_report(&p, size, size <= 1500 && !first, 0);
        first = 0;
    }
    assert_int_equal(p.lo, 1500);
    assert_true(p.steps <= PMTU_MAX_STEPS);
    assert_int_equal(verdict(1500, 1500, &p, 1), PMTU_OK);
}

static void test_pmtu_every_path_found_from_below(void **state)
{
    struct pmtu_search p;

    (void)state;
    for (uint32_t path = PMTU_IPV4_MIN; path <= 9001; path += 7) {
        simulate(&p, 9001, PMTU_IPV4_MIN, path, 0);
        assert_true(p.lo <= path);
        assert_true(p.lo + PMTU_STEP >= path);
        assert_true(p.steps <= PMTU_MAX_STEPS);
    }
}

static void test_pmtu_nothing_crossing_stops_at_the_floor(void **state)
{
    struct pmtu_search p;

    (void)state;
    assert_int_equal(simulate(&p, 1500, PMTU_IPV6_MIN, 0, 0), 2);
    assert_int_equal(p.lo, 0);
    assert_int_equal(verdict(1500, 1500, &p, 1), PMTU_UNKNOWN);
    assert_int_equal(verdict(1500, 1500, &p, 0), PMTU_BLACK_HOLE);
    /* an interface at the floor: one size */
    assert_int_equal(simulate(&p, 1280, PMTU_IPV6_MIN, 0, 0), 1);
    assert_int_equal(simulate(&p, 1280, PMTU_IPV6_MIN, 1280, 0), 1);
    assert_int_equal(verdict(1280, 1280, &p, 1), PMTU_OK);
}

static void test_pmtu_verdict_uses_the_smaller_interface(void **state)
{
    struct pmtu_search p;

    (void)state;
    /* jumbo client, 1500 server: TCP's MSS follows the server, so 1500 is the whole path */
    simulate(&p, 9001, PMTU_IPV4_MIN, 1500, 0);
    assert_int_equal(verdict(9001, 1500, &p, 1), PMTU_OK);
    assert_int_equal(verdict(9001, 9001, &p, 1), PMTU_BLACK_HOLE);
    assert_int_equal(verdict(9001, 0, &p, 1), PMTU_BLACK_HOLE);
    assert_string_equal(pmtu_verdict_name(PMTU_BLACK_HOLE), "black-hole");
    assert_string_equal(pmtu_verdict_name(PMTU_REDUCED), "reduced");
    assert_string_equal(pmtu_verdict_name(PMTU_OK), "ok");
    assert_string_equal(pmtu_verdict_name(PMTU_UNKNOWN), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pmtu_clean_path_is_one_packet),
        cmocka_unit_test(test_pmtu_silent_lower_hop_is_a_black_hole),
        cmocka_unit_test(test_pmtu_icmp_names_the_hop_at_once),
        cmocka_unit_test(test_pmtu_a_lost_full_size_is_tried_again),
        cmocka_unit_test(test_pmtu_every_path_found_from_below),
        cmocka_unit_test(test_pmtu_nothing_crossing_stops_at_the_floor),
        cmocka_unit_test(test_pmtu_verdict_uses_the_smaller_interface),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
