/* SPDX-License-Identifier: Apache-2.0 */
/* test_client.c - a socket option the measurement needs that cannot be set fails the sample,
 * and its entry in errors[] names the call and the errno text; on the server it drops only
 * that connection. The handshake authenticates both ways: a client with a token refuses a
 * server that cannot prove it knows the token. Real servers run on loopback in threads (one
 * without a token, one with); stream tests run on the server's stream threads, or on its loop
 * when a thread cannot be set up. This executable's setsockopt stands in for libc's (and libuv's,
 * which calls it through the dynamic linker) and fails the one option a test arms. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/client.h"
#include "agent/proto.h"
#include "agent/server.h"
#include "base/kp_err.h"
#include "base/result.h"

/* --- the seam: setsockopt that fails one armed option ------------------------------------ */

/* atomic: the server thread reads them while a test arms them */
static _Atomic int armed_level, armed_opt; /* armed_opt 0 = nothing armed */
static _Atomic int armed_server_only;
static _Atomic unsigned armed_hits;
static pthread_t server_thread;

int setsockopt(int fd, int level, int opt, const void *val, socklen_t len)
{
    if (armed_opt != 0 && level == armed_level && opt == armed_opt &&
        (!armed_server_only || pthread_equal(pthread_self(), server_thread))) {
        armed_hits++;
        errno = ENOPROTOOPT;
        return -1;
    }
    return (int)syscall(SYS_setsockopt, fd, level, opt, val, len);
}

static void arm(int level, int opt, int server_only)
{
    armed_opt = 0;
    armed_level = level;
    armed_server_only = server_only;
    armed_hits = 0;
    armed_opt = opt;
}

/* --- a server on loopback ---------------------------------------------------------------- */

#define TOKEN "s3cret-token"

struct test_server {
    const char *token;    /* NULL: a server without authentication */
    unsigned stream_pool; /* server_opts.stream_pool */
    pthread_t *thread;
    uint16_t port;
    int rc;
};

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static pthread_t token_server_thread, pool_server_thread;
static struct test_server plain = {.thread = &server_thread, .rc = -2};
static struct test_server with_token = {.token = TOKEN, .thread = &token_server_thread, .rc = -2};
/* a plain server whose streams share two epoll threads (streampool.h) */
static struct test_server pooled = {.stream_pool = 2, .thread = &pool_server_thread, .rc = -2};
static uint16_t server_port; /* plain's */

static void on_ready(const char *addr, uint16_t port, void *arg)
{
    struct test_server *ts = arg;

    (void)addr;
    pthread_mutex_lock(&ready_lock);
    ts->port = port;
    pthread_cond_signal(&ready_cond);
    pthread_mutex_unlock(&ready_lock);
}

static void *server_main(void *arg)
{
    struct test_server *ts = arg;
    struct server_opts o;
    struct kp_err err;
    int rc;

    kp_err_clear(&err);
    server_opts_default(&o);
    o.bind_addr = "127.0.0.1";
    o.port = 0;
    o.token = ts->token;
    o.token_len = ts->token ? strlen(ts->token) : 0;
    o.stream_pool = ts->stream_pool;
    rc = server_run(&o, on_ready, ts, &err);
    pthread_mutex_lock(&ready_lock);
    ts->rc = rc;
    pthread_cond_signal(&ready_cond); /* also when it could not start */
    pthread_mutex_unlock(&ready_lock);
    return NULL;
}

static int start_one(struct test_server *ts)
{
    if (pthread_create(ts->thread, NULL, server_main, ts) != 0)
        return -1;
    pthread_mutex_lock(&ready_lock);
    while (ts->port == 0 && ts->rc == -2)
        pthread_cond_wait(&ready_cond, &ready_lock);
    pthread_mutex_unlock(&ready_lock);
    return ts->port != 0 ? 0 : -1;
}

static int start_server(void **state)
{
    (void)state;
    /* as kperf-agent's main does: libuv writes with write(2) */
    signal(SIGPIPE, SIG_IGN);
    if (start_one(&plain) != 0 || start_one(&with_token) != 0 || start_one(&pooled) != 0)
        return -1;
    server_port = plain.port;
    return 0;
}

static int stop_server(void **state)
{
    (void)state;
    /* each server's uv_signal handle turns SIGTERM into a clean shutdown */
    kill(getpid(), SIGTERM);
    pthread_join(server_thread, NULL);
    pthread_join(token_server_thread, NULL);
    pthread_join(pool_server_thread, NULL);
    return plain.rc == 0 && with_token.rc == 0 && pooled.rc == 0 ? 0 : -1;
}

/* --- helpers ----------------------------------------------------------------------------- */

/* Runs one sample of test against the server on port with token (NULL: none); returns the
 * document (caller decrefs). */
static json_t *run_at(uint16_t port, const char *token, uint8_t test, unsigned *failed)
{
    struct client_opts o;

    client_opts_default(&o);
    o.host = "127.0.0.1";
    o.port = port;
    o.token = token;
    o.token_len = token ? strlen(token) : 0;
    o.tests[0] = test;
    o.ntests = 1;
    o.duration_ms = 20; /* the failures come at set-up; a pass needs a few transactions */
    return client_run(&o, failed);
}

/* One sample against the server without a token. */
static json_t *run_one(uint8_t test, unsigned *failed)
{
    return run_at(server_port, NULL, test, failed);
}

static const char *first_error(json_t *doc, const char **test)
{
    json_t *e = json_array_get(json_object_get(doc, "errors"), 0);

    assert_non_null(e);
    *test = json_string_value(json_object_get(e, "test"));
    return json_string_value(json_object_get(e, "error"));
}

/* TCP_STREAM_MULTI with 2 streams (reverse: the server sends) for 100 ms. */
static json_t *run_streams_at(uint16_t port, int reverse, int stream_threads, unsigned *failed)
{
    struct client_opts o;

    client_opts_default(&o);
    o.host = "127.0.0.1";
    o.port = port;
    o.tests[0] = PROTO_TCP_STREAM_MULTI;
    o.ntests = 1;
    o.streams = 2;
    o.reverse = reverse;
    o.stream_threads = stream_threads;
    o.duration_ms = 100;
    return client_run(&o, failed);
}

static json_t *run_streams_on(int reverse, int stream_threads, unsigned *failed)
{
    return run_streams_at(server_port, reverse, stream_threads, failed);
}

static json_t *run_streams(int reverse, unsigned *failed)
{
    return run_streams_on(reverse, 0, failed);
}

/* Each stream of doc's only result: bytes arrived, the client's thread figures are there, and
 * the server's are there exactly when want_server (the stream had a server thread). */
static void assert_stream_threads(json_t *doc, int want_server)
{
    json_t *streams =
        json_object_get(json_array_get(json_object_get(doc, "results"), 0), "streams");
    struct kp_err err;

    kp_err_clear(&err);
    if (result_validate(doc, &err) != 0)
        fail_msg("result refused: %s", kp_err_msg(&err));
    assert_int_equal(json_array_size(streams), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *st = json_array_get(streams, i);
        json_t *secs = json_object_get(st, "cpu_seconds");
        json_t *cpu = json_object_get(st, "cpu");
        assert_true(json_integer_value(json_object_get(st, "bytes")) > 0);
        assert_non_null(json_object_get(secs, "client"));
        assert_true(json_integer_value(json_object_get(cpu, "client")) >= 0);
        assert_int_equal(json_object_get(secs, "server") != NULL, want_server);
        assert_int_equal(json_object_get(cpu, "server") != NULL, want_server);
        if (want_server)
            assert_true(json_real_value(json_object_get(secs, "server")) > 0);
    }
}

/* --- tests -------------------------------------------------------------------------------- */

static void test_client_streams_on_server_threads(void **state)
{
    unsigned failed = 9;
    json_t *doc;

    (void)state;
    for (int reverse = 0; reverse < 2; reverse++) {
        doc = run_streams(reverse, &failed);
        assert_int_equal(failed, 0);
        assert_stream_threads(doc, 1);
        json_decref(doc);
    }
}

/* The client's multiplexed engine (client_mux.c), both ways: one epoll thread for both
 * streams, whose CPU time each stream reports half of; two threads (and more asked than
 * there are streams: one per stream). */
static void test_client_streams_multiplexed(void **state)
{
    static const int threads[] = {1, 2, 9, CLIENT_STREAM_THREADS_AUTO};
    unsigned failed = 9;
    json_t *doc;

    (void)state;
    for (int reverse = 0; reverse < 2; reverse++)
        for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
            json_t *streams;
            double a, b;
            doc = run_streams_on(reverse, threads[t], &failed);
            assert_int_equal(failed, 0);
            assert_stream_threads(doc, 1);
            streams =
                json_object_get(json_array_get(json_object_get(doc, "results"), 0), "streams");
            a = json_real_value(json_object_get(
                json_object_get(json_array_get(streams, 0), "cpu_seconds"), "client"));
            b = json_real_value(json_object_get(
                json_object_get(json_array_get(streams, 1), "cpu_seconds"), "client"));
            assert_true(a > 0 && b > 0);
            if (threads[t] == 1)
                assert_true(a == b); /* one thread's time, shared evenly */
            json_decref(doc);
        }
}

/* A server with --stream-pool 2: both ways, the streams report the pool's per-stream CPU
 * time and CPU; a second run on the same pool works (streams leave it cleanly). */
static void test_client_streams_on_a_server_pool(void **state)
{
    unsigned failed = 9;
    json_t *doc;

    (void)state;
    for (int i = 0; i < 4; i++) {
        doc = run_streams_at(pooled.port, i % 2, i / 2, &failed);
        assert_int_equal(failed, 0);
        assert_stream_threads(doc, 1);
        json_decref(doc);
    }
}

/* The hand-off to a thread fails (its socket timeouts cannot be set): the streams stay on the
 * server's event loop and the test still measures, without server thread figures. */
static void test_client_streams_stay_on_the_loop_without_a_thread(void **state)
{
    unsigned failed = 9;
    json_t *doc;

    (void)state;
    for (int reverse = 0; reverse < 2; reverse++) {
        unsigned hits;
        arm(SOL_SOCKET, SO_SNDTIMEO, 1);
        doc = run_streams(reverse, &failed);
        hits = armed_hits;
        arm(0, 0, 0);
        assert_int_equal(failed, 0);
        assert_int_equal(hits, 2); /* one hand-off per stream, each refused */
        assert_stream_threads(doc, 0);
        json_decref(doc);
    }
}

/* TCP_RR_LOADED: one result named so, valid, with the load's figures from a stream that ran
 * over the whole latency window. */
static void test_client_loaded_runs_rr_under_a_stream(void **state)
{
    unsigned failed = 9;
    struct client_opts o;
    json_t *doc, *r, *load;
    struct kp_err err;

    (void)state;
    client_opts_default(&o);
    o.host = "127.0.0.1";
    o.port = server_port;
    o.tests[0] = PROTO_TCP_RR_LOADED;
    o.ntests = 1;
    o.duration_ms = 200; /* as run_streams: long enough for the streams to move bytes */
    doc = client_run(&o, &failed);
    kp_err_clear(&err);
    assert_int_equal(failed, 0);
    if (result_validate(doc, &err) != 0)
        fail_msg("result refused: %s", kp_err_msg(&err));
    assert_int_equal(json_array_size(json_object_get(doc, "results")), 1);
    r = json_array_get(json_object_get(doc, "results"), 0);
    load = json_object_get(r, "load");
    assert_string_equal(json_string_value(json_object_get(r, "test")), "TCP_RR_LOADED");
    assert_non_null(json_object_get(r, "histogram")); /* the TCP_RR half's figures */
    assert_non_null(json_object_get(r, "tcp"));
    assert_string_equal(json_string_value(json_object_get(load, "test")), "TCP_STREAM_MULTI");
    assert_int_equal(json_integer_value(json_object_get(load, "streams")), 4);
    assert_true(json_integer_value(json_object_get(load, "bytes")) > 0);
    assert_true(json_real_value(json_object_get(load, "duration_s")) >=
                json_real_value(json_object_get(r, "duration_s")));
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(doc, "aggregates"), 0), "test")),
                        "TCP_RR_LOADED");
    json_decref(doc);
}

/* A loaded pair whose halves fail at set-up (every connection refuses TCP_NODELAY), or whose
 * latency half fails while the stream runs: one error for TCP_RR_LOADED, no result, and no
 * half left waiting for the other. */
static void test_client_loaded_fails_as_one(void **state)
{
    unsigned failed = 0;
    const char *test, *msg;
    json_t *doc;

    (void)state;
    arm(IPPROTO_TCP, TCP_NODELAY, 0);
    doc = run_one(PROTO_TCP_RR_LOADED, &failed);
    arm(0, 0, 0);
    assert_int_equal(failed, 1);
    msg = first_error(doc, &test);
    assert_string_equal(test, "TCP_RR_LOADED");
    assert_non_null(strstr(msg, "setsockopt TCP_NODELAY"));
    assert_int_equal(json_array_size(json_object_get(doc, "results")), 0);
    json_decref(doc);

    arm(SOL_SOCKET, SO_RCVTIMEO, 0); /* the client's TCP_RR loop only */
    doc = run_one(PROTO_TCP_RR_LOADED, &failed);
    arm(0, 0, 0);
    assert_int_equal(failed, 1);
    msg = first_error(doc, &test);
    assert_string_equal(test, "TCP_RR_LOADED");
    assert_string_equal(msg, "TCP_RR setsockopt SO_RCVTIMEO (stream 0): Protocol not available");
    json_decref(doc);
}

static void test_client_nodelay_failure_names_the_call(void **state)
{
    unsigned failed = 0;
    const char *test;
    char want[160];
    json_t *doc;

    (void)state;
    arm(IPPROTO_TCP, TCP_NODELAY, 0);
    doc = run_one(PROTO_TCP_RR, &failed);
    arm(0, 0, 0);
    assert_int_equal(failed, 1);
    snprintf(want, sizeof(want),
             "setsockopt TCP_NODELAY on the connection to 127.0.0.1:%u: Protocol not available",
             server_port);
    assert_string_equal(first_error(doc, &test), want);
    assert_string_equal(test, "TCP_RR");
    assert_int_equal(json_array_size(json_object_get(doc, "results")), 0);
    json_decref(doc);
}

static void test_client_rr_timeout_failure_fails_the_sample(void **state)
{
    unsigned failed = 0;
    const char *test;
    json_t *doc;

    (void)state;
    /* the server sets SO_RCVTIMEO only for UDP_RR: this hits the client's TCP_RR loop */
    arm(SOL_SOCKET, SO_RCVTIMEO, 0);
    doc = run_one(PROTO_TCP_RR, &failed);
    arm(0, 0, 0);
    assert_int_equal(failed, 1);
    assert_string_equal(first_error(doc, &test),
                        "TCP_RR setsockopt SO_RCVTIMEO (stream 0): Protocol not available");
    assert_string_equal(test, "TCP_RR");
    json_decref(doc);
}

static void test_client_crr_linger_failure_fails_the_sample(void **state)
{
    unsigned failed = 0;
    const char *test;
    json_t *doc;

    (void)state;
    arm(SOL_SOCKET, SO_LINGER, 0);
    doc = run_one(PROTO_TCP_CRR, &failed);
    arm(0, 0, 0);
    assert_int_equal(failed, 1);
    assert_string_equal(first_error(doc, &test),
                        "TCP_CRR setsockopt SO_LINGER (stream 0): Protocol not available");
    assert_string_equal(test, "TCP_CRR");
    json_decref(doc);
}

static void test_client_server_drops_only_that_connection(void **state)
{
    unsigned failed = 0;
    const char *test;
    json_t *doc;

    (void)state;
    /* the server cannot set TCP_NODELAY on the accepted connection: it drops it... */
    arm(IPPROTO_TCP, TCP_NODELAY, 1);
    doc = run_one(PROTO_TCP_RR, &failed);
    assert_true(armed_hits > 0);
    arm(0, 0, 0);
    assert_int_equal(failed, 1);
    assert_string_equal(first_error(doc, &test),
                        "waiting for CHALLENGE: server closed the connection");
    json_decref(doc);
    /* ...and keeps serving */
    doc = run_one(PROTO_TCP_RR, &failed);
    assert_int_equal(failed, 0);
    assert_int_equal(json_array_size(json_object_get(doc, "results")), 1);
    json_decref(doc);
}

/* The server proves it knows the token (AUTH_OK) and the client checks it: a test runs. */
static void test_client_mutual_auth_with_the_same_token(void **state)
{
    unsigned failed = 9;
    json_t *doc;

    (void)state;
    doc = run_at(with_token.port, TOKEN, PROTO_TCP_RR, &failed);
    assert_int_equal(failed, 0);
    assert_int_equal(json_array_size(json_object_get(doc, "results")), 1);
    json_decref(doc);
}

static void test_client_wrong_or_missing_token_refused_by_the_server(void **state)
{
    unsigned failed = 0;
    const char *test;
    json_t *doc;

    (void)state;
    doc = run_at(with_token.port, "s3cret-tokeN", PROTO_TCP_RR, &failed);
    assert_int_equal(failed, 1);
    assert_string_equal(first_error(doc, &test),
                        "refused by server: authentication failed: wrong or missing token "
                        "(check --token-file: it must hold the server's token)");
    json_decref(doc);
    doc = run_at(with_token.port, NULL, PROTO_TCP_RR, &failed);
    assert_int_equal(failed, 1);
    assert_string_equal(first_error(doc, &test), "server requires a token: pass --token-file");
    json_decref(doc);
}

/* A client that holds a token does not talk to a server that holds none: it could be anyone,
 * and the client sends it no MAC. */
static void test_client_with_token_refuses_a_server_without_one(void **state)
{
    unsigned failed = 0;
    const char *test;
    json_t *doc;

    (void)state;
    doc = run_at(server_port, TOKEN, PROTO_TCP_RR, &failed);
    assert_int_equal(failed, 1);
    assert_string_equal(first_error(doc, &test),
                        "server did not prove it knows the token; refusing (it requires no "
                        "token: start it with --token-file, or run this client without one)");
    assert_int_equal(json_array_size(json_object_get(doc, "results")), 0);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_nodelay_failure_names_the_call),
        cmocka_unit_test(test_client_rr_timeout_failure_fails_the_sample),
        cmocka_unit_test(test_client_crr_linger_failure_fails_the_sample),
        cmocka_unit_test(test_client_server_drops_only_that_connection),
        cmocka_unit_test(test_client_mutual_auth_with_the_same_token),
        cmocka_unit_test(test_client_streams_on_server_threads),
        cmocka_unit_test(test_client_streams_multiplexed),
        cmocka_unit_test(test_client_streams_on_a_server_pool),
        cmocka_unit_test(test_client_streams_stay_on_the_loop_without_a_thread),
        cmocka_unit_test(test_client_wrong_or_missing_token_refused_by_the_server),
        cmocka_unit_test(test_client_with_token_refuses_a_server_without_one),
        cmocka_unit_test(test_client_loaded_runs_rr_under_a_stream),
        cmocka_unit_test(test_client_loaded_fails_as_one),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
