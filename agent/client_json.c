/* SPDX-License-Identifier: Apache-2.0 */
/* client_json.c - one finished sample as a kperf.result/v1 result object. Decides which side's
 * count is authoritative: the receiver's bytes for streams (the server's in forward mode, ours
 * in reverse), the sender's TCP_INFO, each side's own CPU. */
#include "agent/client_int.h"

#include "base/kp_alloc.h"
#include "base/result.h"

static double mbps(uint64_t bytes, double secs)
{
    return secs > 0 ? (double)bytes * 8.0 / secs / 1e6 : 0.0;
}

static json_t *tcp_json(uint64_t retrans, double rtt_us, uint32_t mss)
{
    return json_pack("{s:I, s:f, s:I}", "retransmits", (json_int_t)retrans, "rtt_us", rtt_us, "mss",
                     (json_int_t)mss);
}

static void add_latency(json_t *r, const struct sample *s)
{
    struct hist *h = hist_new(); /* ours */
    double secs = (double)(s->t_deadline_ns - s->t_mark_ns) / 1e9;

    for (unsigned i = 0; i < s->nworkers; i++)
        hist_merge(h, s->workers[i].hist);
    json_object_set_new(r, "duration_s", json_real(secs));
    json_object_set_new(r, "ops", json_integer((json_int_t)hist_count(h)));
    json_object_set_new(r, "ops_per_sec", json_real(secs > 0 ? (double)hist_count(h) / secs : 0));
    json_object_set_new(r, "latency_us", result_latency_json(h));
    json_object_set_new(r, "histogram", hist_to_json(h));
    if (s->req.test == PROTO_TCP_CRR && s->o->parallel) { /* a capacity step */
        uint64_t failed = 0;
        for (unsigned i = 0; i < s->nworkers; i++)
            failed += s->workers[i].conn_errors;
        json_object_set_new(r, "parallel", json_integer((json_int_t)s->nworkers));
        json_object_set_new(r, "conn_errors", json_integer((json_int_t)failed));
    }
    if (s->req.test == PROTO_TCP_RR) {
        const struct sysinfo_tcp *t = &s->workers[0].tcp;
        json_object_set_new(r, "tcp", tcp_json(t->retransmits, t->rtt_us, t->mss));
    }
    if (s->req.test == PROTO_UDP_RR) {
        const struct worker *w = &s->workers[0];
        uint64_t lost = w->udp_sent > w->udp_received ? w->udp_sent - w->udp_received : 0;
        json_object_set_new(
            r, "udp",
            json_pack("{s:I, s:I, s:I, s:f}", "sent", (json_int_t)w->udp_sent, "received",
                      (json_int_t)w->udp_received, "lost", (json_int_t)lost, "loss_pct",
                      w->udp_sent ? 100.0 * (double)lost / (double)w->udp_sent : 0.0));
    }
    hist_free(h);
}

/* A stream's own threads: "cpu_seconds" over the window and "cpu" (the CPU it last ran on),
 * each side's only when known (a server stream that shared the event loop has neither). */
static void add_stream_cpu(json_t *st, const struct worker *w, const struct proto_stream_stats *sv)
{
    json_t *secs = json_object();
    json_t *cpu = json_object();
    int c = atomic_load(&w->cpu);

    json_object_set_new(secs, "client",
                        json_real(w->cpu_ns > w->cpu_mark_ns
                                      ? (double)(w->cpu_ns - w->cpu_mark_ns) / 1e9 /
                                            (w->cpu_share ? w->cpu_share : 1)
                                      : 0.0));
    if (c >= 0)
        json_object_set_new(cpu, "client", json_integer(c));
    if (sv && sv->cpu != PROTO_CPU_UNKNOWN) {
        json_object_set_new(secs, "server", json_real((double)sv->cpu_us / 1e6));
        json_object_set_new(cpu, "server", json_integer((json_int_t)sv->cpu));
    }
    json_object_set_new(st, "cpu_seconds", secs);
    json_object_set_new(st, "cpu", cpu);
}

static void add_tcp_streams(json_t *r, const struct sample *s, double secs)
{
    json_t *streams = json_array();
    uint64_t retrans = 0;
    double rtt = 0;
    uint32_t mss = 0;
    int low_unsent;

    for (unsigned i = 0; i < s->nworkers; i++) {
        const struct worker *w = &s->workers[i];
        uint64_t bytes;
        struct sysinfo_tcp t = w->tcp;
        if (s->reverse) {
            bytes = atomic_load(&w->bytes) - w->bytes_mark;
            if (i < s->server.nstreams) {
                t.retransmits = s->server.streams[i].retransmits;
                t.rtt_us = s->server.streams[i].rtt_us;
                t.mss = s->server.streams[i].mss;
            }
        } else {
            bytes = i < s->server.nstreams ? s->server.streams[i].rx_bytes : 0;
        }
        retrans += t.retransmits;
        rtt += t.rtt_us;
        if (i == 0)
            mss = t.mss;
        {
            json_t *st = json_pack("{s:I, s:f, s:I, s:I, s:I}", "bytes", (json_int_t)bytes,
                                   "throughput_mbps", mbps(bytes, secs), "retransmits",
                                   (json_int_t)t.retransmits, "rtt_us", (json_int_t)t.rtt_us, "mss",
                                   (json_int_t)t.mss);
            add_stream_cpu(st, w, i < s->server.nstreams ? &s->server.streams[i] : NULL);
            json_array_append_new(streams, st);
        }
    }
    json_object_set_new(r, "streams", streams);
    low_unsent = (s->req.flags & PROTO_FLAG_LOW_UNSENT) ? PROTO_LOW_UNSENT_BYTES : 0;
    json_object_set_new(r, "placement",
                        json_pack("{s:b, s:i, s:I, s:i, s:i, s:I}", "same_kernel", s->same_kernel,
                                  "client_threads", (int)s->nthreads, "msg_size_bytes",
                                  (json_int_t)s->req.msg_size, "low_unsent_bytes", low_unsent,
                                  "client_cpus", (int)s->cpus, "client_cpu_quota_millicores",
                                  (json_int_t)s->cpu_quota_millis));
    json_object_set_new(r, "tcp", tcp_json(retrans, s->nworkers ? rtt / s->nworkers : 0, mss));
}

static void add_stream(json_t *r, const struct sample *s)
{
    uint64_t ours = 0, last_rx = 0, rx, tx;
    double secs;

    for (unsigned i = 0; i < s->nworkers; i++) {
        ours += atomic_load(&s->workers[i].bytes) - s->workers[i].bytes_mark;
        if (s->workers[i].last_rx_ns > last_rx)
            last_rx = s->workers[i].last_rx_ns;
    }
    if (s->reverse) {
        rx = ours;
        tx = s->server.tx_bytes;
        if (s->req.test == PROTO_UDP_STREAM || last_rx < s->t_mark_ns)
            last_rx = s->t_deadline_ns;
        secs = (double)(last_rx - s->t_mark_ns) / 1e9;
    } else {
        rx = s->server.rx_bytes;
        tx = ours;
        secs = (double)s->server.window_ns / 1e9;
    }
    json_object_set_new(r, "duration_s", json_real(secs));
    json_object_set_new(r, "bytes", json_integer((json_int_t)rx));
    json_object_set_new(r, "bytes_sent", json_integer((json_int_t)tx));
    json_object_set_new(r, "throughput_mbps", json_real(mbps(rx, secs)));
    if (s->req.test != PROTO_UDP_STREAM) {
        add_tcp_streams(r, s, secs);
        return;
    }
    {
        const struct worker *w = &s->workers[0];
        uint64_t sent = s->reverse ? s->server.udp_sent : w->udp_sent;
        uint64_t recv = s->reverse ? w->udp_received : s->server.udp_received;
        uint64_t lost = sent > recv ? sent - recv : 0;
        double jitter = s->reverse ? w->jitter_ns : (double)s->server.udp_jitter_ns;
        uint64_t ooo = s->reverse ? w->udp_ooo : s->server.udp_out_of_order;
        uint64_t drops = s->reverse ? s->rcvbuf1 - s->rcvbuf0 : s->server.udp_rcvbuf_errors;
        json_object_set_new(r, "udp",
                            json_pack("{s:I, s:I, s:I, s:f, s:f, s:I, s:I}", "sent",
                                      (json_int_t)sent, "received", (json_int_t)recv, "lost",
                                      (json_int_t)lost, "loss_pct",
                                      sent ? 100.0 * (double)lost / (double)sent : 0.0, "jitter_us",
                                      jitter / 1000.0, "out_of_order", (json_int_t)ooo,
                                      "rcvbuf_errors", (json_int_t)drops));
    }
}

static json_t *intervals_json(const struct sample *s)
{
    json_t *a = json_array();
    int lat = !proto_test_is_stream(s->req.test);

    for (unsigned i = 0; i < s->nintervals; i++) {
        const struct interval *iv = &s->intervals[i];
        double secs = iv->end_s - iv->start_s;
        json_array_append_new(
            a, json_pack("{s:f, s:f, s:f}", "start_s", iv->start_s, "end_s", iv->end_s,
                         lat ? "ops_per_sec" : "throughput_mbps",
                         lat ? (secs > 0 ? (double)iv->ops / secs : 0) : mbps(iv->bytes, secs)));
    }
    return a;
}

json_t *client_sample_json(const struct sample *s, unsigned index)
{
    /* a TCP_RR_LOADED pair's latency half carries the name and its load's figures */
    uint8_t test = s->load ? PROTO_TCP_RR_LOADED : s->req.test;
    json_t *r = json_pack("{s:s, s:i, s:b, s:s}", "test", proto_test_name(test), "sample",
                          (int)index, "reverse", s->reverse, "start_time", s->start_time);
    uint64_t node[SYSINFO_CPU_FIELDS];
    double cpu_client = (double)(s->cpu_user1 - s->cpu_user0 + s->cpu_sys1 - s->cpu_sys0) / 1e6;
    double cpu_server = (double)(s->server.cpu_user_us + s->server.cpu_sys_us) / 1e6;

    if (proto_test_is_stream(s->req.test))
        add_stream(r, s);
    else
        add_latency(r, s);
    for (int i = 0; i < SYSINFO_CPU_FIELDS; i++)
        node[i] = s->node1[i] >= s->node0[i] ? s->node1[i] - s->node0[i] : 0;
    json_object_set_new(r, "cpu_seconds",
                        json_pack("{s:f, s:f}", "client", cpu_client, "server", cpu_server));
    json_object_set_new(r, "node_cpu",
                        json_pack("{s:o, s:o}", "client", result_node_cpu_json(node), "server",
                                  result_node_cpu_json(s->server.node_cpu)));
    if (s->req.flags & PROTO_FLAG_COUNTERS)
        json_object_set_new(r, "counters", client_counters_json(s));
    if (s->prof)
        json_object_set_new(r, "profile", kprof_json(s->prof));
    else if (s->prof_error[0])
        json_object_set_new(r, "profile", kprof_error_json(s->prof_error));
    if (s->o->interval_ms)
        json_object_set_new(r, "intervals", intervals_json(s));
    if (s->load)
        json_object_set_new(r, "load", client_load_json(s->load));
    return r;
}

json_t *client_facts_parse(const char *text)
{
    json_t *f = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;

    if (!json_is_object(f)) {
        json_decref(f);
        return NULL;
    }
    return f;
}

json_t *client_doc_new(const struct client_opts *o)
{
    char host[256], kernel[256], machine[64];
    json_t *tests = json_array();

    sysinfo_host(host, sizeof(host), kernel, sizeof(kernel));
    sysinfo_machine(machine, sizeof(machine));
    for (unsigned i = 0; i < o->ntests; i++)
        json_array_append_new(tests, json_string(proto_test_name(o->tests[i])));
    return json_pack("{s:s, s:{s:s, s:s, s:s, s:s}, s:{s:s, s:i}, s:{s:o, s:f, s:f, s:f, s:i, s:i, "
                     "s:I, s:I, s:b}, s:{}, s:[], s:[]}",
                     "schema", "kperf.result/v1", "agent", "version", KPERF_VERSION, "hostname",
                     host, "kernel", kernel, "machine", machine, "server", "host", o->host, "port",
                     (int)o->port, "params", "tests", tests, "duration_s",
                     (double)o->duration_ms / 1000.0, "omit_s", (double)o->omit_ms / 1000.0,
                     "interval_s", (double)o->interval_ms / 1000.0, "samples", (int)o->samples,
                     "streams", (int)o->streams, "msg_size_bytes", (json_int_t)o->msg_size,
                     "udp_rate_bps", (json_int_t)o->udp_rate_bps, "reverse", o->reverse, "mtu",
                     "results", "errors");
}
