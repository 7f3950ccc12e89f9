/* SPDX-License-Identifier: Apache-2.0 */
/* probe_track.h - the accounting of one kind of probe (UDP request/response, TCP request/
 * response on a long-lived connection, fresh TCP connects) for `kperf-agent probe`: which
 * probes were answered in time, runs of consecutive losses turned into outages, the longest
 * gap between answers, and a latency histogram of answered probes. Pure: no sockets, no
 * clocks (every call carries the time), so unit tests feed synthetic events.
 *
 * Memory is bounded whatever the run's length: a ring of PROBE_RING probes in flight, at most
 * PROBE_MAX_OUTAGES outage records (later ones are counted, not kept), one histogram.
 *
 * A probe's outcome is decided in send order: answered within timeout_ns of its send time, or
 * lost (no answer in time, or a slot that could not be sent at all: probe_track_missed). A slot
 * the prober itself came too late to send (its thread was not running: a stalled machine, not
 * the network) is skipped (probe_track_skipped): counted, but neither sent, answered nor lost,
 * so it neither starts, extends nor ends a loss run. A run
 * of consecutive lost probes is an outage when it spans more than outage_min_ns: from the send
 * time of its first lost probe to the send time of the next answered probe (or, when the run
 * lasts until the end, to the last lost probe's send time plus one probe period: `open`).
 * The latency histogram holds answered probes outside outages: those sent within timeout_ns
 * after an outage ended (the path recovering: queues, neighbour resolution) are left out and
 * counted in lat_excluded. */
#ifndef KPERF_AGENT_PROBE_TRACK_H
#define KPERF_AGENT_PROBE_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#define PROBE_RING        4096 /* probes in flight: rate x timeout must stay below */
#define PROBE_MAX_OUTAGES 512

struct hist;

struct probe_outage {
    uint64_t start_ns, end_ns; /* on the caller's clock */
    uint64_t lost;             /* probes lost in it */
    bool open;                 /* still going when the run ended */
};

struct probe_track {
    /* settings */
    uint64_t timeout_ns;    /* an answer later than this is a loss */
    uint64_t outage_min_ns; /* a loss run longer than this is an outage */
    uint64_t period_ns;     /* the probe period (closes an outage open at the end) */
    /* counters */
    uint64_t sent;     /* probe slots, sent or missed */
    uint64_t answered; /* answered in time */
    uint64_t lost;     /* no answer in time, or missed */
    uint64_t missed;   /* of lost: slots that could not be sent (no connection) */
    uint64_t late;     /* answers that came after their timeout (counted lost) */
    uint64_t skipped;  /* slots the prober was too late to send: not in sent */
    /* probes in flight, in send order: seq head .. next-1 */
    uint64_t head, next;
    struct probe_slot {
        uint64_t t_sent;
        uint64_t rtt_ns;
        uint8_t state; /* 0 pending, 1 answered, 2 lost */
    } ring[PROBE_RING];
    /* the current loss run */
    bool in_run;
    uint64_t run_start_ns, run_last_ns, run_lost;
    /* gaps between answered probes */
    bool have_ok;
    uint64_t last_ok_ns, longest_gap_ns;
    bool have_first;
    uint64_t first_ns; /* send time of the first probe: a gap before the first answer counts */
    /* outages */
    struct probe_outage outages[PROBE_MAX_OUTAGES];
    unsigned n_outages;     /* kept */
    uint64_t outages_total; /* found, kept or not */
    uint64_t outage_ns_total;
    uint64_t longest_outage_ns;
    uint64_t last_outage_ns;   /* the length of the latest outage */
    uint64_t recover_until_ns; /* answers sent before this follow an outage: not in lat */
    uint64_t lat_excluded;     /* answered probes kept out of lat for that reason */
    struct hist *lat;          /* ours: round trips of answered probes */
};

/* Initialises t (allocates the histogram); free with probe_track_free. */
void probe_track_init(struct probe_track *t, uint64_t timeout_ns, uint64_t outage_min_ns,
                      uint64_t period_ns);
void probe_track_free(struct probe_track *t);

/* A probe sent at now_ns; returns its sequence number (what the answer must carry). When the
 * ring is full, the oldest probe is decided first (lost unless answered). */
uint64_t probe_track_send(struct probe_track *t, uint64_t now_ns);

/* A slot at now_ns that could not be sent (no connection): lost at once. */
void probe_track_missed(struct probe_track *t, uint64_t now_ns);

/* A slot the prober was too late to send (its own stall, not the network's): counted in
 * skipped only. */
void probe_track_skipped(struct probe_track *t);

/* The answer to seq arrived at now_ns. Unknown, duplicate or already decided seqs are
 * ignored; an answer after the timeout counts as late (and the probe as lost). */
void probe_track_answer(struct probe_track *t, uint64_t seq, uint64_t now_ns);

/* Decides, in send order, every probe answered or past its timeout at now_ns. */
void probe_track_expire(struct probe_track *t, uint64_t now_ns);

/* The run ended at now_ns: probes still pending are lost, a loss run in progress becomes an
 * open outage if long enough. Call once, after the last answers had their time. */
void probe_track_finish(struct probe_track *t, uint64_t now_ns);

/* True while the probes decided last are a loss run longer than outage_min_ns (an outage in
 * progress, as far as decided: decisions lag the sends by up to timeout_ns). */
bool probe_track_down(const struct probe_track *t);

/* {"sent","answered","lost","missed","late","skipped","loss_pct","outages":[{"start_s","end_s",
 * "length_s","lost","open"}],"outages_total","outage_s_total","longest_outage_s",
 * "longest_gap_s","latency_us":{"count","excluded","p50","p99","max"}}; times relative to t0_ns. */
json_t *probe_track_json(const struct probe_track *t, uint64_t t0_ns);

#endif
