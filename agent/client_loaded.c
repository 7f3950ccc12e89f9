/* SPDX-License-Identifier: Apache-2.0 */
/* client_loaded.c - TCP_RR_LOADED, latency under load: one TCP_RR sample and one
 * TCP_STREAM_MULTI sample against the same server at the same time, in this process (two
 * threads, each running an ordinary sample with its own control connection and session, so
 * the server needs nothing new). Both set up first; then the streams start, and only once
 * they run does the request/response start, so the whole latency window is under load. The
 * stream runs LOAD_TAIL_MS longer than the latency test, so it still fills the path while the
 * last transactions finish. The result is the TCP_RR sample's, named TCP_RR_LOADED, with
 * load{} holding the stream's figures (docs/result-schema.md). */
#include "agent/client_int.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "base/kp_alloc.h"

#define LOAD_TAIL_MS 200

struct load_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived;    /* halves past set-up */
    int failed;     /* a half's set-up failed */
    int load_state; /* 0 not yet, 1 streams running, 2 failed */
};

int load_gate_arrive(struct load_gate *g, int ok)
{
    int both;

    pthread_mutex_lock(&g->mu);
    g->arrived++;
    if (!ok)
        g->failed = 1;
    pthread_cond_broadcast(&g->cv);
    while (g->arrived < 2 && !g->failed)
        pthread_cond_wait(&g->cv, &g->mu);
    both = !g->failed;
    pthread_mutex_unlock(&g->mu);
    return both;
}

int load_gate_wait_load(struct load_gate *g)
{
    int ok;

    pthread_mutex_lock(&g->mu);
    while (g->load_state == 0)
        pthread_cond_wait(&g->cv, &g->mu);
    ok = g->load_state == 1;
    pthread_mutex_unlock(&g->mu);
    return ok;
}

void load_gate_load_started(struct load_gate *g, int ok)
{
    pthread_mutex_lock(&g->mu);
    if (g->load_state == 0) {
        g->load_state = ok ? 1 : 2;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
}

struct load_half {
    struct sample s;
    struct kp_err err;
    int rc;
};

static void *load_main(void *arg)
{
    struct load_half *h = arg;

    h->rc = client_run_sample(&h->s, &h->err);
    return NULL;
}

static void half_init(struct load_half *h, const struct client_opts *o, const struct sample *base,
                      uint8_t test, struct load_gate *g)
{
    h->s = *base;
    h->s.o = o;
    h->s.ctrl = -1;
    h->s.gate = g;
    h->s.is_load = test == PROTO_TCP_STREAM_MULTI;
    client_build_req(o, test, &h->s.req);
    h->s.req.flags &= (uint8_t)~PROTO_FLAG_REVERSE; /* the load always fills client -> server */
    h->s.reverse = 0;
    h->s.intervals =
        o->interval_ms ? kp_xcalloc(CLIENT_MAX_INTERVALS, sizeof(*h->s.intervals)) : NULL;
    kp_err_clear(&h->err);
    h->rc = -1;
}

/* The stream half's figures as the latency result's load{} (new reference). */
json_t *client_load_json(const struct sample *ld)
{
    json_t *st = client_sample_json(ld, 0); /* ours */
    json_t *out = json_pack("{s:s, s:i, s:O, s:O, s:O}", "test", "TCP_STREAM_MULTI", "streams",
                            (int)ld->nworkers, "duration_s", json_object_get(st, "duration_s"),
                            "bytes", json_object_get(st, "bytes"), "throughput_mbps",
                            json_object_get(st, "throughput_mbps"));
    const json_t *tcp = json_object_get(st, "tcp");

    if (tcp)
        json_object_set(out, "retransmits", json_object_get(tcp, "retransmits"));
    json_decref(st);
    return out;
}

int client_run_loaded(const struct client_opts *o, const struct sample *base, unsigned index,
                      json_t **out, struct kp_err *err)
{
    struct load_gate g = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    struct load_half rr, ld;
    pthread_t th;
    int rc = -1;

    *out = NULL;
    half_init(&rr, o, base, PROTO_TCP_RR, &g);
    half_init(&ld, o, base, PROTO_TCP_STREAM_MULTI, &g);
    if (ld.s.req.duration_ms + LOAD_TAIL_MS <= PROTO_MAX_DURATION_MS)
        ld.s.req.duration_ms += LOAD_TAIL_MS;
    if (pthread_create(&th, NULL, load_main, &ld) != 0) {
        kp_err_set(err, "cannot start a thread: %s", strerror(errno));
        goto out;
    }
    rr.rc = client_run_sample(&rr.s, &rr.err);
    pthread_join(th, NULL);
    /* the stream half's own failure is the cause; the latency half only says it could not go */
    if (ld.rc != 0) {
        kp_err_set(err, "load (TCP_STREAM_MULTI): %s", kp_err_msg(&ld.err));
        goto out;
    }
    if (rr.rc != 0) {
        kp_err_set(err, "%s", kp_err_msg(&rr.err));
        goto out;
    }
    rr.s.load = &ld.s;
    *out = client_sample_json(&rr.s, index);
    rc = 0;
out:
    client_sample_cleanup(&rr.s);
    client_sample_cleanup(&ld.s);
    pthread_cond_destroy(&g.cv);
    pthread_mutex_destroy(&g.mu);
    return rc;
}
