/* SPDX-License-Identifier: Apache-2.0 */
/* probe_track.c - see probe_track.h. */
#include "agent/probe_track.h"

#include <string.h>

#include "base/hist.h"

enum { PENDING = 0, ANSWERED = 1, LOST = 2 };

void probe_track_init(struct probe_track *t, uint64_t timeout_ns, uint64_t outage_min_ns,
                      uint64_t period_ns)
{
    memset(t, 0, sizeof(*t));
    t->timeout_ns = timeout_ns;
    t->outage_min_ns = outage_min_ns;
    t->period_ns = period_ns;
    t->lat = hist_new();
}

void probe_track_free(struct probe_track *t)
{
    hist_free(t->lat);
    t->lat = NULL;
}

static void gap_to(struct probe_track *t, uint64_t ts)
{
    uint64_t from = t->have_ok ? t->last_ok_ns : t->first_ns;

    if (ts > from && ts - from > t->longest_gap_ns)
        t->longest_gap_ns = ts - from;
}

/* Ends the loss run at end_ns; returns true when it was an outage. */
static bool close_run(struct probe_track *t, uint64_t end_ns, bool open)
{
    bool outage = false;
    uint64_t len = end_ns > t->run_start_ns ? end_ns - t->run_start_ns : 0;

    if (t->in_run && len > t->outage_min_ns) {
        t->outages_total++;
        t->outage_ns_total += len;
        if (len > t->longest_outage_ns)
            t->longest_outage_ns = len;
        t->last_outage_ns = len;
        if (t->n_outages < PROBE_MAX_OUTAGES)
            t->outages[t->n_outages++] =
                (struct probe_outage){t->run_start_ns, end_ns, t->run_lost, open};
        outage = true;
    }
    t->in_run = false;
    t->run_lost = 0;
    return outage;
}

/* One probe's outcome, in send order. */
static void outcome(struct probe_track *t, uint64_t ts, bool ok, uint64_t rtt_ns)
{
    if (ok) {
        t->answered++;
        if (close_run(t, ts, false))
            t->recover_until_ns = ts + t->timeout_ns;
        if (ts >= t->recover_until_ns)
            hist_record(t->lat, rtt_ns);
        else
            t->lat_excluded++;
        gap_to(t, ts);
        t->have_ok = true;
        t->last_ok_ns = ts;
        return;
    }
    t->lost++;
    if (!t->in_run) {
        t->in_run = true;
        t->run_start_ns = ts;
    }
    t->run_last_ns = ts;
    t->run_lost++;
}

static void first(struct probe_track *t, uint64_t now_ns)
{
    if (!t->have_first) {
        t->have_first = true;
        t->first_ns = now_ns;
    }
    t->sent++;
}

/* Decides the head probe: answered, or lost. */
static void decide_head(struct probe_track *t)
{
    struct probe_slot *p = &t->ring[t->head % PROBE_RING];

    outcome(t, p->t_sent, p->state == ANSWERED, p->rtt_ns);
    t->head++;
}

static uint64_t push(struct probe_track *t, uint64_t now_ns, uint8_t state)
{
    uint64_t seq;

    if (t->next - t->head >= PROBE_RING)
        decide_head(t);
    seq = t->next++;
    t->ring[seq % PROBE_RING].t_sent = now_ns;
    t->ring[seq % PROBE_RING].state = state;
    t->ring[seq % PROBE_RING].rtt_ns = 0;
    first(t, now_ns);
    return seq;
}

uint64_t probe_track_send(struct probe_track *t, uint64_t now_ns)
{
    return push(t, now_ns, PENDING);
}

void probe_track_missed(struct probe_track *t, uint64_t now_ns)
{
    t->missed++;
    (void)push(t, now_ns, LOST);
}

void probe_track_skipped(struct probe_track *t)
{
    t->skipped++;
}

void probe_track_answer(struct probe_track *t, uint64_t seq, uint64_t now_ns)
{
    struct probe_slot *p;
    uint64_t rtt;

    if (seq < t->head || seq >= t->next)
        return; /* already decided, or never sent */
    p = &t->ring[seq % PROBE_RING];
    if (p->state != PENDING)
        return;
    rtt = now_ns > p->t_sent ? now_ns - p->t_sent : 0;
    if (rtt > t->timeout_ns) {
        t->late++;
        p->state = LOST;
        return;
    }
    p->state = ANSWERED;
    p->rtt_ns = rtt;
}

void probe_track_expire(struct probe_track *t, uint64_t now_ns)
{
    while (t->head < t->next) {
        struct probe_slot *p = &t->ring[t->head % PROBE_RING];
        if (p->state == PENDING && now_ns - p->t_sent <= t->timeout_ns)
            break;
        decide_head(t);
    }
}

void probe_track_finish(struct probe_track *t, uint64_t now_ns)
{
    (void)now_ns;
    while (t->head < t->next)
        decide_head(t);
    if (t->in_run) {
        uint64_t end = t->run_last_ns + t->period_ns;
        gap_to(t, end);
        (void)close_run(t, end, true);
    }
}

bool probe_track_down(const struct probe_track *t)
{
    return t->in_run && t->run_last_ns - t->run_start_ns >= t->outage_min_ns;
}

static double s_of(uint64_t ns)
{
    return (double)ns / 1e9;
}

json_t *probe_track_json(const struct probe_track *t, uint64_t t0_ns)
{
    json_t *outs = json_array();
    json_t *lat;

    for (unsigned i = 0; i < t->n_outages; i++) {
        const struct probe_outage *o = &t->outages[i];
        json_array_append_new(outs,
                              json_pack("{s:f, s:f, s:f, s:I, s:b}", "start_s",
                                        s_of(o->start_ns - t0_ns), "end_s", s_of(o->end_ns - t0_ns),
                                        "length_s", s_of(o->end_ns - o->start_ns), "lost",
                                        (json_int_t)o->lost, "open", o->open));
    }
    lat =
        json_pack("{s:I, s:f, s:f, s:f}", "count", (json_int_t)hist_count(t->lat), "p50",
                  (double)hist_percentile(t->lat, 50) / 1e3, "p99",
                  (double)hist_percentile(t->lat, 99) / 1e3, "max", (double)hist_max(t->lat) / 1e3);
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:o, s:I, s:f, s:f, s:f, s:o}", "sent",
                     (json_int_t)t->sent, "answered", (json_int_t)t->answered, "lost",
                     (json_int_t)t->lost, "missed", (json_int_t)t->missed, "late",
                     (json_int_t)t->late, "skipped", (json_int_t)t->skipped, "loss_pct",
                     t->sent ? 100.0 * (double)t->lost / (double)t->sent : 0.0, "outages", outs,
                     "outages_total", (json_int_t)t->outages_total, "outage_s_total",
                     s_of(t->outage_ns_total), "longest_outage_s", s_of(t->longest_outage_ns),
                     "longest_gap_s", s_of(t->longest_gap_ns), "latency_us", lat);
}
