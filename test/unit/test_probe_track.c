/* SPDX-License-Identifier: Apache-2.0 */
/* test_probe_track.c - the probe accounting of `kperf-agent probe` on synthetic events (no
 * sockets, no clock): answered probes, isolated losses that are no outage, a loss run that is
 * one (start = first lost send, end = next answered send), an outage open at the end, missed
 * slots, skipped slots (the prober's own stall: no loss), late and duplicate answers, the longest
 * gap, the bounded ring and outage list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "agent/probe_track.h"
#include "base/hist.h"

#define MS      1000000ull
#define PERIOD  (10 * MS) /* 100 probes/s */
#define TIMEOUT (200 * MS)
#define OUTAGE  (100 * MS)

static struct probe_track *mk(void)
{
    struct probe_track *t = malloc(sizeof(*t));
    assert_non_null(t);
    probe_track_init(t, TIMEOUT, OUTAGE, PERIOD);
    return t;
}

static void drop(struct probe_track *t)
{
    probe_track_free(t);
    free(t);
}

/* n probes from time *now, one per PERIOD; answered after rtt unless lost(i) says so. */
static void feed(struct probe_track *t, uint64_t *now, unsigned n, uint64_t rtt, unsigned lost_from,
                 unsigned lost_to)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t seq = probe_track_send(t, *now);
        if (i < lost_from || i >= lost_to)
            probe_track_answer(t, seq, *now + rtt);
        *now += PERIOD;
        probe_track_expire(t, *now);
    }
}

static void all_answered(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 1000 * MS;
    (void)state;

    feed(t, &now, 100, 50000, 0, 0);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->sent, 100);
    assert_int_equal(t->answered, 100);
    assert_int_equal(t->lost, 0);
    assert_int_equal(t->outages_total, 0);
    assert_int_equal(t->longest_gap_ns, PERIOD);
    assert_int_equal(hist_count(t->lat), 100);
    assert_int_equal(hist_max(t->lat), 50000);
    drop(t);
}

static void short_loss_is_no_outage(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 0;
    (void)state;

    /* 10 consecutive losses span exactly 100 ms: not more than one interval */
    feed(t, &now, 100, 1000, 40, 50);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->lost, 10);
    assert_int_equal(t->outages_total, 0);
    assert_int_equal(t->longest_gap_ns, 11 * PERIOD);
    drop(t);
}

static void loss_run_is_outage(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 5000 * MS, t0 = now;
    json_t *j;
    (void)state;

    /* probes 100..299 lost: 2 s */
    feed(t, &now, 500, 1000, 100, 300);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->lost, 200);
    assert_int_equal(t->answered, 300);
    assert_int_equal(t->outages_total, 1);
    assert_int_equal(t->n_outages, 1);
    assert_int_equal(t->outages[0].start_ns, t0 + 100 * PERIOD);
    assert_int_equal(t->outages[0].end_ns, t0 + 300 * PERIOD);
    assert_int_equal(t->outages[0].lost, 200);
    assert_false(t->outages[0].open);
    assert_int_equal(t->longest_outage_ns, 2000 * MS);
    assert_int_equal(t->longest_gap_ns, 201 * PERIOD);
    /* the latency histogram holds answered probes outside outages: the 20 sent within the
     * 200 ms timeout after the outage ended (recovery) are left out */
    assert_int_equal(hist_count(t->lat), 280);
    assert_int_equal(t->lat_excluded, 20);
    j = probe_track_json(t, t0);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "outages")), 1);
    assert_true(json_real_value(json_object_get(json_array_get(json_object_get(j, "outages"), 0),
                                                "length_s")) == 2.0);
    assert_true(json_real_value(json_object_get(json_array_get(json_object_get(j, "outages"), 0),
                                                "start_s")) == 1.0);
    json_decref(j);
    drop(t);
}

static void outage_open_at_end(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 0;
    (void)state;

    feed(t, &now, 100, 1000, 50, 100);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->outages_total, 1);
    assert_true(t->outages[0].open);
    assert_int_equal(t->outages[0].start_ns, 50 * PERIOD);
    assert_int_equal(t->outages[0].end_ns, 100 * PERIOD);
    drop(t);
}

static void missed_slots_count_as_lost(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 0;
    (void)state;

    feed(t, &now, 10, 1000, 0, 0);
    for (int i = 0; i < 30; i++, now += PERIOD)
        probe_track_missed(t, now);
    feed(t, &now, 10, 1000, 0, 0);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->sent, 50);
    assert_int_equal(t->missed, 30);
    assert_int_equal(t->lost, 30);
    assert_int_equal(t->outages_total, 1);
    assert_int_equal(t->outages[0].start_ns, 10 * PERIOD);
    assert_int_equal(t->outages[0].end_ns, 40 * PERIOD);
    drop(t);
}

/* A stall of the prober: the slots it skipped are neither sent nor lost, so no outage; inside a
 * loss run they neither end nor split it. */
static void skipped_slots_are_no_loss(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 0;
    (void)state;

    feed(t, &now, 10, 1000, 0, 0);
    for (int i = 0; i < 50; i++, now += PERIOD)
        probe_track_skipped(t);
    feed(t, &now, 10, 1000, 0, 0);
    assert_int_equal(t->sent, 20);
    assert_int_equal(t->skipped, 50);
    assert_int_equal(t->lost, 0);
    assert_int_equal(t->outages_total, 0);
    /* lost 10, skipped 20, lost 10, answered: one outage from the first lost probe */
    uint64_t lost_at = now;
    feed(t, &now, 10, 1000, 0, 10);
    for (int i = 0; i < 20; i++, now += PERIOD)
        probe_track_skipped(t);
    feed(t, &now, 10, 1000, 0, 10);
    uint64_t back_at = now;
    feed(t, &now, 10, 1000, 0, 0);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->lost, 20);
    assert_int_equal(t->skipped, 70);
    assert_int_equal(t->outages_total, 1);
    assert_int_equal(t->outages[0].start_ns, lost_at);
    assert_int_equal(t->outages[0].end_ns, back_at);
    assert_int_equal(t->outages[0].lost, 20);
    drop(t);
}

/* An answer stamped (by the kernel's receive time, converted) a hair before its send time is
 * answered with a zero round trip, not late. */
static void answer_stamped_before_send(void **state)
{
    struct probe_track *t = mk();
    (void)state;

    uint64_t seq = probe_track_send(t, 1000 * MS);
    probe_track_answer(t, seq, 1000 * MS - 1000);
    probe_track_finish(t, 1000 * MS + TIMEOUT);
    assert_int_equal(t->answered, 1);
    assert_int_equal(t->late, 0);
    drop(t);
}

static void late_duplicate_and_unknown_answers(void **state)
{
    struct probe_track *t = mk();
    uint64_t s0, s1;
    (void)state;

    s0 = probe_track_send(t, 0);
    s1 = probe_track_send(t, PERIOD);
    probe_track_answer(t, s0, TIMEOUT + 1); /* late: lost */
    probe_track_answer(t, s1, PERIOD + 5);
    probe_track_answer(t, s1, PERIOD + 6); /* duplicate: ignored */
    probe_track_answer(t, 99, PERIOD + 7); /* never sent: ignored */
    probe_track_expire(t, 10 * TIMEOUT);
    probe_track_answer(t, s0, 10 * TIMEOUT); /* decided already: ignored */
    probe_track_finish(t, 10 * TIMEOUT);
    assert_int_equal(t->sent, 2);
    assert_int_equal(t->late, 1);
    assert_int_equal(t->lost, 1);
    assert_int_equal(t->answered, 1);
    assert_int_equal(hist_max(t->lat), 5);
    drop(t);
}

static void out_of_order_answers_decide_in_send_order(void **state)
{
    struct probe_track *t = mk();
    uint64_t a, b;
    (void)state;

    a = probe_track_send(t, 0);
    b = probe_track_send(t, PERIOD);
    probe_track_answer(t, b, PERIOD + 10);
    probe_track_expire(t, PERIOD + 10); /* a still pending and in time: nothing decided */
    assert_int_equal(t->answered + t->lost, 0);
    probe_track_answer(t, a, PERIOD + 20);
    probe_track_expire(t, PERIOD + 20);
    assert_int_equal(t->answered, 2);
    drop(t);
}

static void bounded_memory(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 0;
    (void)state;

    /* more probes in flight than the ring holds: the oldest are decided (lost) */
    for (unsigned i = 0; i < PROBE_RING + 100; i++)
        (void)probe_track_send(t, now);
    assert_true(t->next - t->head <= PROBE_RING);
    assert_int_equal(t->lost, 100);
    probe_track_finish(t, now);
    /* 2x the kept outages, each 150 ms of loss then 50 ms answered: all counted, some kept */
    probe_track_free(t);
    probe_track_init(t, TIMEOUT, OUTAGE, PERIOD);
    for (unsigned k = 0; k < 2 * PROBE_MAX_OUTAGES; k++)
        feed(t, &now, 20, 1000, 0, 15);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->outages_total, 2 * PROBE_MAX_OUTAGES);
    assert_int_equal(t->n_outages, PROBE_MAX_OUTAGES);
    assert_int_equal(t->longest_outage_ns, 150 * MS);
    drop(t);
}

static void short_loss_keeps_latency(void **state)
{
    struct probe_track *t = mk();
    uint64_t now = 0;
    (void)state;

    /* losses that are no outage do not hide the answers after them */
    feed(t, &now, 100, 1000, 40, 45);
    probe_track_finish(t, now + TIMEOUT);
    assert_int_equal(t->lat_excluded, 0);
    assert_int_equal(hist_count(t->lat), 95);
    drop(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_answered),
        cmocka_unit_test(short_loss_is_no_outage),
        cmocka_unit_test(loss_run_is_outage),
        cmocka_unit_test(outage_open_at_end),
        cmocka_unit_test(missed_slots_count_as_lost),
        cmocka_unit_test(skipped_slots_are_no_loss),
        cmocka_unit_test(answer_stamped_before_send),
        cmocka_unit_test(late_duplicate_and_unknown_answers),
        cmocka_unit_test(out_of_order_answers_decide_in_send_order),
        cmocka_unit_test(bounded_memory),
        cmocka_unit_test(short_loss_keeps_latency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
