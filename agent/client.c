/* SPDX-License-Identifier: Apache-2.0 */
/* client.c - see client.h. Owns the control connection (HELLO, CHALLENGE, AUTH, TEST_REQ,
 * START, STOP, RESULT), the data connections' set-up, the sample's clock (warm-up mark,
 * intervals, CPU snapshots) and the document. The worker loops are in client_loops.c. */
#include "agent/client.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/client_int.h"
#include "agent/sha256.h"
#include "agent/testops.h"
#include "agent/thread_cpu.h"
#include "base/clock.h"
#include "base/kp_alloc.h"
#include "base/kp_log.h"
#include "base/result.h"
#include "base/testkind.h"

#define HANDSHAKE_TIMEOUT_MS 5000
#define RESULT_TIMEOUT_MS    15000
#define UDP_HELLO_EVERY_MS   100
#define UDP_GRACE_MS         500 /* reverse UDP: datagrams still in flight after RESULT */

void client_opts_default(struct client_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->port = TESTKIND_DEFAULT_PORT;
    o->duration_ms = 10000;
    o->samples = 1;
    o->streams = 4;
    o->udp_rate_bps = 1000ull * 1000 * 1000;
    o->connect_timeout_ms = 5000;
    o->connect_retry_ms = CLIENT_REFUSED_RETRY_MS;
    o->stream_threads = CLIENT_STREAM_THREADS_PLACED; /* docs/benchmark.md, "Same kernel" */
}

/* The threads of the multiplexed stream engine for s's test (0: a thread per worker). */
static unsigned stream_thread_count(const struct sample *s)
{
    int t = s->o->stream_threads;
    unsigned n;

    if (!proto_test_is_stream(s->req.test) || proto_test_is_udp(s->req.test) || t == 0)
        return 0;
    if (t == CLIENT_STREAM_THREADS_PLACED) {
        if (!(s->req.flags & PROTO_FLAG_SAME_KERNEL))
            return 0;
        n = sysinfo_half_cpus(s->cpus); /* the server has the other half */
    } else {
        n = t < 0 ? sysinfo_usable_cpus() : (unsigned)t;
    }
    return n < s->nworkers ? n : s->nworkers;
}

/* This kernel's boot id, read once per process (it changes only at a reboot). */
static char boot_id[64];
static size_t boot_id_len;
static pthread_once_t boot_id_once = PTHREAD_ONCE_INIT;

static void read_boot_id(void)
{
    boot_id_len = sysinfo_boot_id(boot_id, sizeof(boot_id));
}

/* After CHALLENGE: when the server runs on this kernel, a TCP stream test with no more streams
 * than CPUs, or more than CLIENT_MUX_STREAMS_PER_CPU per CPU, is placed for a shared machine
 * (client.h, CLIENT_STREAM_THREADS_PLACED): the request says so, and with no more streams
 * than CPUs writes are 64 KiB unless --msg-size chose. In between, the streams keep a thread
 * each and, with more than one CPU to spread over, the sender keeps little unsent
 * (PROTO_FLAG_LOW_UNSENT). Measured on 2 vCPUs over veth, docs/benchmark.md "Same kernel" and
 * "Little unsent". */
static void place_streams(struct sample *s, const uint8_t nonce[PROTO_NONCE_LEN],
                          const uint8_t kernel[PROTO_KERNEL_TAG_LEN])
{
    uint8_t mine[PROTO_KERNEL_TAG_LEN];
    unsigned cpus = sysinfo_usable_cpus_quota(&s->cpu_quota_millis);

    s->cpus = cpus;
    (void)pthread_once(&boot_id_once, read_boot_id);
    proto_kernel_tag(nonce, boot_id, boot_id_len, mine);
    s->same_kernel = proto_kernel_tag_same(kernel, mine);
    if (!s->same_kernel || s->o->stream_threads != CLIENT_STREAM_THREADS_PLACED ||
        !proto_test_is_stream(s->req.test) || proto_test_is_udp(s->req.test))
        return;
    if (s->req.streams > cpus && s->req.streams <= CLIENT_MUX_STREAMS_PER_CPU * cpus) {
        if (cpus > 1)
            s->req.flags |= PROTO_FLAG_LOW_UNSENT;
        return;
    }
    s->req.flags |= PROTO_FLAG_SAME_KERNEL;
    if (!s->o->msg_size && s->req.streams <= cpus)
        s->req.msg_size = CLIENT_SAME_KERNEL_MSG_SIZE;
}

/* --- control messages --------------------------------------------------------------------- */

static int read_deadline(int fd, uint8_t *buf, size_t len, uint64_t deadline_ns)
{
    size_t got = 0;

    while (got < len) {
        uint64_t now = sysinfo_now_ns();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n;
        int rc;

        if (now >= deadline_ns) {
            errno = ETIMEDOUT;
            return -1;
        }
        rc = poll(&p, 1, (int)((deadline_ns - now) / 1000000 + 1));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        n = recv(fd, buf + got, len - got, 0);
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return -1;
        if (n > 0)
            got += (size_t)n;
    }
    return 0;
}

static const char *refuse_hint(uint16_t code)
{
    switch (code) {
    case PROTO_REFUSE_AUTH:
        return " (check --token-file: it must hold the server's token)";
    case PROTO_REFUSE_BUSY:
        return " (try again later)";
    case PROTO_REFUSE_LIMIT:
        return " (lower the request or raise the server's limits)";
    case PROTO_REFUSE_VERSION:
        return " (client and server are different kperf-agent versions: run the same on both)";
    default:
        return "";
    }
}

/* Reads one message within timeout_ms; a REFUSE becomes an error. Returns 0 or -1 with err. */
static int ctrl_recv(int fd, struct proto_msg *m, uint8_t want, uint64_t timeout_ms,
                     struct kp_err *err)
{
    uint8_t buf[PROTO_HEADER_LEN + PROTO_MAX_PAYLOAD];
    uint64_t deadline = sysinfo_now_ns() + timeout_ms * 1000000ull;
    struct proto_header h;
    size_t used;

    if (read_deadline(fd, buf, PROTO_HEADER_LEN, deadline) != 0)
        return kp_err_set(err, "waiting for %s: %s", proto_type_name(want),
                          errno == ECONNRESET ? "server closed the connection" : strerror(errno));
    if (proto_decode_header(buf, PROTO_HEADER_LEN, &h, err) != PROTO_OK)
        return kp_err_prefix(err, "from server");
    if (read_deadline(fd, buf + PROTO_HEADER_LEN, h.length, deadline) != 0)
        return kp_err_set(err, "reading %s: %s", proto_type_name(h.type), strerror(errno));
    if (proto_decode(buf, PROTO_HEADER_LEN + h.length, m, &used, err) != PROTO_OK)
        return kp_err_prefix(err, "from server");
    if (m->type == PROTO_REFUSE)
        return kp_err_set(err, "refused by server: %s%s", m->u.refuse.reason,
                          refuse_hint(m->u.refuse.code));
    if (m->type != want)
        return kp_err_set(err, "server sent %s, expected %s", proto_type_name(m->type),
                          proto_type_name(want));
    return 0;
}

static int ctrl_send(int fd, const struct proto_msg *m, struct kp_err *err)
{
    uint8_t buf[PROTO_HEADER_LEN + 64];
    size_t n = proto_encode(m, buf, sizeof(buf));

    if (n == 0 || client_write_all(fd, buf, n) != 0)
        return kp_err_set(err, "sending %s: %s", proto_type_name(m->type), strerror(errno));
    return 0;
}

static int ctrl_simple(int fd, uint8_t type, struct kp_err *err)
{
    struct proto_msg m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    return ctrl_send(fd, &m, err);
}

#define NO_PROOF "server did not prove it knows the token; refusing"

/* AUTH (our nonce and MAC) pipelined with TEST_REQ, then the server's proof in AUTH_OK: with a
 * token, nothing past TEST_REQ (no data connection, no START) happens before the server has
 * shown that it knows the token too. Returns 0, or -1 with err. */
static int authenticate(struct sample *s, const uint8_t server_nonce[PROTO_NONCE_LEN],
                        struct kp_err *err)
{
    const struct client_opts *o = s->o;
    uint8_t client_nonce[PROTO_NONCE_LEN], want[PROTO_MAC_LEN];
    struct proto_msg m;
    int rc = -1;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_AUTH;
    if (sha256_random(client_nonce, sizeof(client_nonce)) != 0)
        return kp_err_set(err, "no random bytes for the handshake: getrandom: %s", strerror(errno));
    memcpy(m.u.auth.nonce, client_nonce, PROTO_NONCE_LEN);
    if (o->token)
        proto_auth_mac(o->token, o->token_len, PROTO_AUTH_CLIENT, server_nonce, client_nonce,
                       m.u.auth.mac);
    if (ctrl_send(s->ctrl, &m, err) != 0)
        goto out;
    memset(&m, 0, sizeof(m));
    m.type = PROTO_TEST_REQ;
    m.u.test_req = s->req;
    if (ctrl_send(s->ctrl, &m, err) != 0 ||
        ctrl_recv(s->ctrl, &m, PROTO_AUTH_OK, HANDSHAKE_TIMEOUT_MS, err) != 0)
        goto out;
    if (o->token) {
        proto_auth_mac(o->token, o->token_len, PROTO_AUTH_SERVER, server_nonce, client_nonce, want);
        if (!sha256_ct_equal(want, m.u.auth_ok.mac, PROTO_MAC_LEN)) {
            kp_err_set(err, NO_PROOF " (its proof does not match our token)");
            goto out;
        }
    }
    rc = 0;
out:
    explicit_bzero(want, sizeof(want));
    explicit_bzero(&m, sizeof(m));
    return rc;
}

static int handshake(struct sample *s, struct kp_err *err)
{
    const struct client_opts *o = s->o;
    uint8_t server_nonce[PROTO_NONCE_LEN];
    struct proto_msg m;

    memset(&m, 0, sizeof(m));
    m.type = PROTO_HELLO;
    m.u.hello.version_min = PROTO_VERSION;
    m.u.hello.version_max = PROTO_VERSION;
    if (ctrl_send(s->ctrl, &m, err) != 0 ||
        ctrl_recv(s->ctrl, &m, PROTO_CHALLENGE, HANDSHAKE_TIMEOUT_MS, err) != 0)
        return -1;
    if ((m.u.challenge.flags & PROTO_FLAG_AUTH) && !o->token)
        return kp_err_set(err, "server requires a token: pass --token-file");
    /* a server without a token cannot prove it knows ours: it may be anyone */
    if (!(m.u.challenge.flags & PROTO_FLAG_AUTH) && o->token)
        return kp_err_set(err, NO_PROOF " (it requires no token: start it with --token-file, "
                                        "or run this client without one)");
    memcpy(server_nonce, m.u.challenge.nonce, sizeof(server_nonce));
    place_streams(s, server_nonce, m.u.challenge.kernel);
    if (authenticate(s, server_nonce, err) != 0 ||
        ctrl_recv(s->ctrl, &m, PROTO_ACCEPT, HANDSHAKE_TIMEOUT_MS, err) != 0)
        return -1;
    s->session = m.u.accept.session;
    if (s->req.flags & PROTO_FLAG_FACTS) {
        if (ctrl_recv(s->ctrl, &m, PROTO_FACTS, HANDSHAKE_TIMEOUT_MS, err) != 0)
            return -1;
        s->facts = client_facts_parse(m.u.facts.text);
        if (!s->facts)
            kp_log(KP_LOG_WARN, "the server's FACTS are not a JSON object; left out");
    }
    return 0;
}

/* --- data connections --------------------------------------------------------------------- */

int client_open_tcp(struct sample *s, struct worker *w, struct kp_err *err)
{
    uint8_t buf[PROTO_HEADER_LEN + 16];
    struct proto_msg m;
    size_t n;

    w->fd = client_connect(s, s->o->connect_timeout_ms, err);
    if (w->fd < 0)
        return kp_err_prefix(err, "data connection %u", w->index);
    memset(&m, 0, sizeof(m));
    m.type = PROTO_DATA_HELLO;
    m.u.data_hello.session = s->session;
    m.u.data_hello.stream = (uint16_t)w->index;
    n = proto_encode(&m, buf, sizeof(buf));
    if (n == 0)
        return kp_err_set(err, "data connection %u: cannot encode DATA_HELLO", w->index);
    if (client_write_all(w->fd, buf, n) != 0) {
        kp_err_set(err, "sending DATA_HELLO: %s", strerror(errno));
        return kp_err_prefix(err, "data connection %u", w->index);
    }
    if (ctrl_recv(w->fd, &m, PROTO_DATA_OK, HANDSHAKE_TIMEOUT_MS, err) != 0)
        return kp_err_prefix(err, "data connection %u", w->index);
    if ((s->req.flags & PROTO_FLAG_LOW_UNSENT) && !(s->req.flags & PROTO_FLAG_REVERSE)) {
        struct kp_err why;

        kp_err_clear(&why); /* it only shapes CPU use: the stream runs without it */
        if (sysinfo_low_unsent(w->fd, PROTO_LOW_UNSENT_BYTES, &why) != 0)
            kp_log(KP_LOG_WARN, "data connection %u: %s", w->index, kp_err_msg(&why));
    }
    return 0;
}

int client_open_udp(struct sample *s, struct worker *w, struct kp_err *err)
{
    uint64_t deadline = sysinfo_now_ns() + HANDSHAKE_TIMEOUT_MS * 1000000ull;
    uint8_t hello[PROTO_MIN_UDP_SIZE];
    struct kp_err why;

    w->fd = socket(s->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (w->fd < 0 || connect(w->fd, (struct sockaddr *)&s->addr, s->addr_len) != 0)
        return kp_err_set(err, "UDP socket: %s", strerror(errno));
    /* Buffer sizes are a hint by design (the kernel caps them at net.core.*mem_max): the test
     * still runs without them, and drops show up as rcvbuf_errors. */
    kp_err_clear(&why);
    if (sysinfo_set_bufs(w->fd, 4 << 20, 8 << 20, &why) != 0)
        kp_log(KP_LOG_DEBUG, "UDP socket buffers left as they are: %s", kp_err_msg(&why));
    if (!(s->req.test == PROTO_UDP_STREAM && s->reverse))
        return 0;
    /* reverse: tell the server where to send, until it confirms on the control channel */
    proto_udp_put(hello, s->session, PROTO_UDP_HELLO_SEQ, 0);
    while (sysinfo_now_ns() < deadline) {
        struct pollfd p = {.fd = s->ctrl, .events = POLLIN};
        struct proto_msg m;
        if (send(w->fd, hello, sizeof(hello), 0) < 0 && errno != ECONNREFUSED)
            return kp_err_set(err, "UDP hello: %s", strerror(errno));
        if (poll(&p, 1, UDP_HELLO_EVERY_MS) > 0)
            return ctrl_recv(s->ctrl, &m, PROTO_UDP_READY, HANDSHAKE_TIMEOUT_MS, err);
    }
    return kp_err_set(err, "server never saw our UDP datagrams (UDP blocked on the path?)");
}

/* --- one sample --------------------------------------------------------------------------- */

static void sleep_until(uint64_t t_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(t_ns / 1000000000ull),
                          .tv_nsec = (long)(t_ns % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void totals(const struct sample *s, uint64_t *bytes, uint64_t *ops)
{
    *bytes = 0;
    *ops = 0;
    for (unsigned i = 0; i < s->nworkers; i++) {
        *bytes += atomic_load_explicit(&s->workers[i].bytes, memory_order_relaxed);
        *ops += atomic_load_explicit(&s->workers[i].ops, memory_order_relaxed);
    }
}

/* RESULT, after COUNTERS when the request asked for them (docs/protocol.md). 0 or -1. */
static int recv_result(struct sample *s, struct proto_msg *m, struct kp_err *err)
{
    if (s->req.flags & PROTO_FLAG_COUNTERS) {
        if (ctrl_recv(s->ctrl, m, PROTO_COUNTERS, RESULT_TIMEOUT_MS, err) != 0)
            return -1;
        json_decref(s->server_counters);
        if (!(s->server_counters = client_facts_parse(m->u.counters.text)))
            kp_log(KP_LOG_WARN, "the server's COUNTERS are not a JSON object; left out");
    }
    return ctrl_recv(s->ctrl, m, PROTO_RESULT, RESULT_TIMEOUT_MS, err);
}

static void take_mark(struct sample *s)
{
    struct kp_err why;

    kp_err_clear(&why);
    client_counters_snapshot(s, &s->cnt0); /* first: its ~1 ms stays outside the window */
    client_profile_start(s);
    s->t_mark_ns = sysinfo_now_ns();
    sysinfo_process_cpu_us(&s->cpu_user0, &s->cpu_sys0);
    /* best effort by design: node CPU reads as all 0 when /proc/stat is unreadable
     * (docs/result-schema.md), and the measurement itself does not depend on it */
    if (sysinfo_node_cpu(s->node0) != 0)
        kp_log(KP_LOG_DEBUG, "/proc/stat unreadable: node CPU will read 0");
    s->rcvbuf0 = sysinfo_udp_rcvbuf_errors();
    for (unsigned i = 0; i < s->nworkers; i++) {
        s->workers[i].bytes_mark = atomic_load(&s->workers[i].bytes);
        s->workers[i].ops_mark = atomic_load(&s->workers[i].ops);
        if (s->workers[i].running &&
            thread_cpu_of(s->workers[i].thread, &s->workers[i].cpu_mark_ns, &why) != 0)
            kp_log(KP_LOG_DEBUG, "stream %u: thread CPU clock unreadable: %s", i, kp_err_msg(&why));
    }
}

/* The main thread's clock while workers run: warm-up mark, intervals, end snapshot. */
static void keep_time(struct sample *s)
{
    const struct client_opts *o = s->o;
    int marked = o->omit_ms == 0;
    uint64_t next = 0, prev_t = 0, prev_bytes = 0, prev_ops = 0;

    if (marked) {
        prev_t = s->t_mark_ns;
        next = o->interval_ms ? s->t_mark_ns + o->interval_ms * 1000000ull : 0;
    }
    for (;;) {
        uint64_t wake = s->t_deadline_ns, now;
        if (!marked && s->t_mark_ns < wake)
            wake = s->t_mark_ns;
        if (marked && next && next < wake)
            wake = next;
        sleep_until(wake);
        now = sysinfo_now_ns();
        if (!marked && now >= s->t_mark_ns) {
            take_mark(s);
            marked = 1;
            totals(s, &prev_bytes, &prev_ops);
            prev_t = s->t_mark_ns;
            next = o->interval_ms ? prev_t + o->interval_ms * 1000000ull : 0;
            continue;
        }
        if (marked && next && now >= next && s->nintervals < CLIENT_MAX_INTERVALS) {
            struct interval *iv = &s->intervals[s->nintervals++];
            uint64_t b, n;
            totals(s, &b, &n);
            iv->start_s = (double)(prev_t - s->t_mark_ns) / 1e9;
            iv->end_s = (double)(now - s->t_mark_ns) / 1e9;
            iv->bytes = b - prev_bytes;
            iv->ops = n - prev_ops;
            prev_t = now;
            prev_bytes = b;
            prev_ops = n;
            next += o->interval_ms * 1000000ull;
        }
        if (now >= s->t_deadline_ns)
            break;
    }
    kprof_stop(s->prof);
    sysinfo_process_cpu_us(&s->cpu_user1, &s->cpu_sys1);
    if (sysinfo_node_cpu(s->node1) != 0) /* best effort, as in take_mark */
        kp_log(KP_LOG_DEBUG, "/proc/stat unreadable: node CPU will read 0");
    s->rcvbuf1 = sysinfo_udp_rcvbuf_errors();
    client_counters_snapshot(s, &s->cnt1);
}

static unsigned worker_count(const struct sample *s)
{
    if (s->ops->kind == TEST_TCP_CRR && s->o->parallel > 1)
        return s->o->parallel;
    return testkind_get(s->ops->kind)->multi_stream ? s->req.streams : 1;
}

static int setup(struct sample *s, struct kp_err *err)
{
    struct kp_err why;

    if (proto_check_test_req(&s->req, err) != 0)
        return kp_err_prefix(err, "bad parameters");
    s->ops = testops_get(s->req.test);
    if (!s->ops || !s->ops->client_loop)
        return kp_err_set(err, "bad parameters: %s is not run as one sample",
                          proto_test_name(s->req.test));
    s->ctrl = client_connect_ctrl(s, err);
    if (s->ctrl < 0)
        return -1;
    s->connected_unix_s = clock_unix_s();
    /* Best effort by design: keepalive only notices a vanished server sooner; every wait on
     * the control connection has its own deadline anyway. */
    kp_err_clear(&why);
    if (sysinfo_keepalive(s->ctrl, 10, 30000, &why) != 0)
        kp_log(KP_LOG_DEBUG, "control connection keepalive incomplete: %s", kp_err_msg(&why));
    if (handshake(s, err) != 0)
        return -1;
    s->mtu = sysinfo_socket_mtu(s->ctrl);
    s->nworkers = worker_count(s);
    s->nthreads = stream_thread_count(s);
    s->workers = kp_xcalloc(s->nworkers, sizeof(*s->workers));
    for (unsigned i = 0; i < s->nworkers; i++)
        atomic_init(&s->workers[i].cpu, -1);
    for (unsigned i = 0; i < s->nworkers; i++) {
        struct worker *w = &s->workers[i];
        w->smp = s;
        w->index = i;
        w->fd = -1;
        w->cpu_share =
            s->nthreads ? (s->nworkers - i % s->nthreads + s->nthreads - 1) / s->nthreads : 1;
        w->hist = proto_test_is_stream(s->req.test) ? NULL : hist_new();
    }
    for (unsigned i = 0; i < s->nworkers; i++) {
        struct worker *w = &s->workers[i];
        if (s->ops->client_open && s->ops->client_open(s, w, err) != 0)
            return -1;
    }
    return 0;
}

/* Reverse UDP_STREAM: the server's RESULT says how many datagrams it sent; the receiving
 * worker stops once it has them all, or UDP_GRACE_MS later. Returns 1 with m holding RESULT,
 * 0 on failure (the worker then stops at its own hard deadline and err is set). */
static int reverse_udp_result(struct sample *s, struct proto_msg *m, struct kp_err *err)
{
    if (recv_result(s, m, err) != 0) {
        atomic_store(&s->udp_grace_end_ns, sysinfo_now_ns());
        return 0;
    }
    atomic_store(&s->udp_grace_end_ns, sysinfo_now_ns() + UDP_GRACE_MS * 1000000ull);
    atomic_store(&s->udp_expect, m->u.result.udp_sent);
    return 1;
}

/* Reverse UDP_STREAM: true (with err) when RESULT says the server stopped sending before STOP
 * (docs/protocol.md): the sample measured a stream that did not run its course. */
static int udp_stopped_early(const struct sample *s, struct kp_err *err)
{
    static const char *const why[] = {
        [PROTO_UDP_STOP_UNREACHABLE] = "an ICMP unreachable came back from our address (is UDP "
                                       "from the server to this client rejected on the way?)",
        [PROTO_UDP_STOP_SILENT] = "it heard no keep-alive from us for 1 s (is UDP from this "
                                  "client to the server lost?)",
        [PROTO_UDP_STOP_SEND_FAILED] = "a send failed on the server (see its log)",
    };
    uint16_t stop = s->server.udp_stop;

    if (s->req.test != PROTO_UDP_STREAM || !s->reverse || stop == PROTO_UDP_STOP_NONE ||
        stop > PROTO_UDP_STOP_MAX)
        return 0;
    kp_err_set(err, "reverse UDP_STREAM: the server stopped sending after %.3f s: %s",
               (double)s->server.udp_send_ns / 1e9, why[stop]);
    return 1;
}

int client_run_sample(struct sample *s, struct kp_err *err)
{
    const struct client_opts *o = s->o;
    struct proto_msg m;
    unsigned started = 0, nthreads = 0;
    int have_result = 0;
    int rc = -1;
    int set_up = setup(s, err) == 0;

    /* a loaded pair: both halves set up, then the stream half starts first */
    if (s->gate && !load_gate_arrive(s->gate, set_up) && set_up)
        kp_err_set(err, "the other half of TCP_RR_LOADED could not start");
    if (!set_up || kp_err_is_set(err))
        goto out;
    if (s->gate && !s->is_load && !load_gate_wait_load(s->gate)) {
        kp_err_set(err, "the TCP_STREAM_MULTI load of TCP_RR_LOADED could not start");
        goto out;
    }
    if (ctrl_simple(s->ctrl, PROTO_START, err) != 0 ||
        ctrl_recv(s->ctrl, &m, PROTO_STARTED, HANDSHAKE_TIMEOUT_MS, err) != 0)
        goto out;
    s->t_start_ns = sysinfo_now_ns();
    {
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(s->start_time, sizeof(s->start_time), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    s->t_mark_ns = s->t_start_ns + o->omit_ms * 1000000ull;
    s->t_deadline_ns = s->t_mark_ns + (uint64_t)s->req.duration_ms * 1000000ull;
    s->udp_expect = UINT64_MAX;
    s->udp_grace_end_ns = UINT64_MAX;
    if (o->omit_ms == 0)
        take_mark(s);
    nthreads = s->nthreads ? s->nthreads : s->nworkers;
    for (; started < nthreads; started++) {
        int e = pthread_create(&s->workers[started].thread, NULL,
                               s->nthreads ? client_mux_main : client_worker_main,
                               &s->workers[started]);
        if (e != 0) {
            kp_err_set(err, "cannot start a thread: %s", strerror(e));
            s->t_deadline_ns = 0; /* stop the ones running */
            break;
        }
        s->workers[started].running = 1;
    }
    /* a multiplexed stream's CPU clock is its thread's (take_mark) */
    for (unsigned i = nthreads; started == nthreads && i < s->nworkers; i++) {
        s->workers[i].thread = s->workers[i % nthreads].thread;
        s->workers[i].running = 1;
    }
    if (s->gate && s->is_load)
        load_gate_load_started(s->gate, started == nthreads);
    if (started == nthreads)
        keep_time(s);
    /* reverse streams run until the server stops sending */
    if (s->reverse && started == nthreads) {
        memset(&m, 0, sizeof(m));
        m.type = PROTO_STOP;
        if (ctrl_send(s->ctrl, &m, err) != 0)
            s->t_deadline_ns = 0;
        else if (s->req.test == PROTO_UDP_STREAM)
            have_result = reverse_udp_result(s, &m, err);
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(s->workers[i].thread, NULL);
    s->t_end_ns = sysinfo_now_ns();
    if (started < nthreads || kp_err_is_set(err))
        goto out;
    for (unsigned i = 0; i < s->nworkers; i++)
        if (s->workers[i].err[0]) {
            kp_err_set(err, "%s", s->workers[i].err);
            goto out;
        }
    if (!s->reverse) {
        memset(&m, 0, sizeof(m));
        m.type = PROTO_STOP;
        for (unsigned i = 0; i < s->nworkers; i++) {
            m.u.stop.sent_bytes += atomic_load(&s->workers[i].bytes);
            m.u.stop.udp_sent += s->workers[i].udp_sent;
        }
        if (ctrl_send(s->ctrl, &m, err) != 0)
            goto out;
    }
    if (!have_result && recv_result(s, &m, err) != 0)
        goto out;
    s->server = m.u.result;
    if (udp_stopped_early(s, err))
        goto out;
    rc = 0;
out:
    if (s->gate && s->is_load)
        load_gate_load_started(s->gate, 0); /* no-op once reported */
    return rc;
}

int client_run_inline(struct sample *s, void (*fn)(struct sample *s, void *arg), void *arg,
                      struct kp_err *err)
{
    struct proto_msg m;

    if (setup(s, err) != 0 || ctrl_simple(s->ctrl, PROTO_START, err) != 0 ||
        ctrl_recv(s->ctrl, &m, PROTO_STARTED, HANDSHAKE_TIMEOUT_MS, err) != 0)
        return -1;
    s->t_start_ns = s->t_mark_ns = sysinfo_now_ns();
    fn(s, arg);
    s->t_end_ns = sysinfo_now_ns();
    memset(&m, 0, sizeof(m));
    m.type = PROTO_STOP;
    m.u.stop.sent_bytes = atomic_load(&s->workers[0].bytes);
    m.u.stop.udp_sent = s->workers[0].udp_sent;
    if (ctrl_send(s->ctrl, &m, err) != 0 || recv_result(s, &m, err) != 0)
        return -1;
    s->server = m.u.result;
    return 0;
}

void client_sample_cleanup(struct sample *s)
{
    json_decref(s->facts);
    s->facts = NULL;
    json_decref(s->server_counters);
    s->server_counters = NULL;
    client_counters_cleanup(s);
    for (unsigned i = 0; s->workers && i < s->nworkers; i++) {
        if (s->workers[i].fd >= 0)
            close(s->workers[i].fd);
        hist_free(s->workers[i].hist);
    }
    free(s->workers);
    free(s->intervals);
    if (s->ctrl >= 0)
        close(s->ctrl);
}

/* --- the document ------------------------------------------------------------------------- */

void client_build_req(const struct client_opts *o, uint8_t test, struct proto_test_req *r)
{
    const struct test_ops *ops = testops_get(test);
    const struct testkind *tk = testkind_by_wire(test);

    memset(r, 0, sizeof(*r));
    r->test = test;
    r->streams = (uint16_t)(tk && tk->multi_stream ? o->streams : 1);
    r->msg_size = o->msg_size ? o->msg_size : ops ? ops->default_msg_size : 1;
    if (proto_test_is_udp(test) && r->msg_size < PROTO_MIN_UDP_SIZE)
        r->msg_size = PROTO_MIN_UDP_SIZE;
    r->duration_ms = (uint32_t)o->duration_ms;
    r->omit_ms = (uint32_t)o->omit_ms;
    if (!o->no_counters)
        r->flags |= PROTO_FLAG_COUNTERS;
    r->rate_bps = test == PROTO_UDP_STREAM ? o->udp_rate_bps : 0;
    if (o->reverse && proto_test_is_stream(test))
        r->flags |= PROTO_FLAG_REVERSE;
}

static int resolve(const struct client_opts *o, struct sample *s, struct kp_err *err)
{
    struct addrinfo hints, *res = NULL;
    char port[8];
    int rc;

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    snprintf(port, sizeof(port), "%u", o->port);
    rc = getaddrinfo(o->host, port, &hints, &res);
    if (rc != 0)
        return kp_err_set(err, "cannot resolve %s: %s", o->host, gai_strerror(rc));
    memcpy(&s->addr, res->ai_addr, res->ai_addrlen);
    s->addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static void add_error(json_t *doc, uint8_t test, unsigned sample, const char *msg)
{
    json_array_append_new(json_object_get(doc, "errors"),
                          json_pack("{s:s, s:i, s:s}", "test", proto_test_name(test), "sample",
                                    (int)sample, "error", msg));
}

/* Errors that mean the server cannot be reached: later tests would only repeat them. */
static int is_unreachable(const char *msg)
{
    return strstr(msg, "cannot connect to ") != NULL || strstr(msg, "cannot resolve ") != NULL;
}

json_t *client_run(const struct client_opts *o, unsigned *failed)
{
    json_t *doc = client_doc_new(o);
    char fatal[KP_ERR_MAX] = "";
    struct sample base;

    memset(&base, 0, sizeof(base));
    *failed = 0;
    {
        struct kp_err err;
        kp_err_clear(&err);
        if (resolve(o, &base, &err) != 0)
            snprintf(fatal, sizeof(fatal), "%s", kp_err_msg(&err));
    }
    for (unsigned t = 0; t < o->ntests; t++) {
        for (unsigned i = 0; i < o->samples; i++) {
            struct sample s = base;
            struct kp_err err;

            kp_err_clear(&err);
            if (fatal[0]) {
                add_error(doc, o->tests[t], i, fatal);
                (*failed)++;
                continue;
            }
            if (o->tests[t] == PROTO_TCP_RR_LOADED) {
                json_t *res = NULL;
                kp_log(KP_LOG_INFO, "running %s sample %u", proto_test_name(o->tests[t]), i);
                if (client_run_loaded(o, &base, i, &res, &err) == 0) {
                    json_array_append_new(json_object_get(doc, "results"), res);
                } else {
                    kp_log(KP_LOG_WARN, "%s sample %u failed: %s", proto_test_name(o->tests[t]), i,
                           kp_err_msg(&err));
                    add_error(doc, o->tests[t], i, kp_err_msg(&err));
                    (*failed)++;
                    if (is_unreachable(kp_err_msg(&err)))
                        snprintf(fatal, sizeof(fatal), "%s", kp_err_msg(&err));
                }
                continue;
            }
            s.o = o;
            s.ctrl = -1;
            client_build_req(o, o->tests[t], &s.req);
            s.reverse = (s.req.flags & PROTO_FLAG_REVERSE) != 0;
            s.intervals =
                o->interval_ms ? kp_xcalloc(CLIENT_MAX_INTERVALS, sizeof(*s.intervals)) : NULL;
            kp_log(KP_LOG_INFO, "running %s sample %u", proto_test_name(s.req.test), i);
            /* the server's host facts: asked once, with the first sample that gets them */
            if (o->server_facts && !json_object_get(doc, "server_facts"))
                s.req.flags |= PROTO_FLAG_FACTS;
            if (client_run_sample(&s, &err) == 0) {
                if (s.facts && !json_object_get(doc, "server_facts"))
                    json_object_set(doc, "server_facts", s.facts);
                json_array_append_new(json_object_get(doc, "results"), client_sample_json(&s, i));
                if (json_object_size(json_object_get(doc, "mtu")) == 0)
                    client_pmtu_note(doc, &s);
            } else {
                kp_log(KP_LOG_WARN, "%s sample %u failed: %s", proto_test_name(s.req.test), i,
                       kp_err_msg(&err));
                add_error(doc, o->tests[t], i, kp_err_msg(&err));
                (*failed)++;
                if (is_unreachable(kp_err_msg(&err)))
                    snprintf(fatal, sizeof(fatal), "%s", kp_err_msg(&err));
            }
            /* the first answered packet of this client (pod network readiness) */
            if (s.connected_unix_s > 0 && !json_object_get(doc, "first_answer_unix_s"))
                json_object_set_new(doc, "first_answer_unix_s", json_real(s.connected_unix_s));
            client_sample_cleanup(&s);
        }
    }
    {
        struct kp_err err;
        kp_err_clear(&err);
        if (result_add_aggregates(doc, &err) != 0)
            kp_log(KP_LOG_WARN, "cannot aggregate samples: %s", kp_err_msg(&err));
    }
    return doc;
}
