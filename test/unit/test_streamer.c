/* SPDX-License-Identifier: Apache-2.0 */
/* test_streamer.c - the hand-off of one data stream to its own thread: a sink counts every byte
 * up to EOF and tells its owner; a source's count is exactly what reaches the peer; a stop ends
 * a silent or stalled stream; the descriptor comes back non-blocking; bad parameters fail
 * without touching it. Every test runs twice: on a thread of its own, then on a stream pool
 * of one epoll thread (streampool.h) that the streams of a test share; then many streams on
 * a pool of two, and the pool's bad sizes. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/streamer.h"
#include "agent/streampool.h"
#include "base/kp_err.h"
#include "test/unit/test_assert.h"

static sem_t ended;
static struct streampool *pool; /* the group's: NULL = a thread per stream */

static void on_end(void *arg)
{
    sem_post(arg);
}

/* sv[0]: the streamer's side (non-blocking, as libuv leaves it), sv[1]: the peer's. */
static void pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
}

static void params(struct streamer_params *p, int fd, enum streamer_mode mode,
                   _Atomic uint64_t *bytes)
{
    static const uint8_t block[1000];

    memset(p, 0, sizeof(*p));
    p->fd = fd;
    p->mode = mode;
    p->block = block;
    p->block_len = sizeof(block);
    p->bytes = bytes;
    p->on_end = on_end;
    p->arg = &ended;
    p->pool = pool;
}

static void assert_cpu_allowed(int cpu)
{
    cpu_set_t set;

    assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
    assert_true(cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set));
}

static int setup(void **state)
{
    (void)state;
    return sem_init(&ended, 0, 0);
}

static int teardown(void **state)
{
    (void)state;
    return sem_destroy(&ended);
}

static int setup_pool(void **state)
{
    struct kp_err err;

    kp_err_clear(&err);
    if (streampool_new(1, &pool, &err) != 0)
        return -1;
    return setup(state);
}

static int teardown_pool(void **state)
{
    streampool_free(pool);
    pool = NULL;
    return teardown(state);
}

static void test_sink_counts_to_eof(void **state)
{
    static uint8_t chunk[64 * 1024];
    _Atomic uint64_t bytes = 0;
    struct streamer_params p;
    struct streamer_stats st;
    struct streamer *s;
    struct kp_err err;
    int sv[2];
    (void)state;

    kp_err_clear(&err);
    pair(sv);
    params(&p, sv[0], STREAMER_SINK, &bytes);
    assert_int_equal(streamer_start(&p, &s, &err), 0);
    streamer_mark(s);
    for (int i = 0; i < 64; i++)
        assert_int_equal(write(sv[1], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
    assert_int_equal(write(sv[1], chunk, 123), 123);
    shutdown(sv[1], SHUT_WR);
    /* the owner is told when the thread's loop ends */
    assert_int_equal(sem_wait(&ended), 0);
    assert_true(streamer_ended(s));
    streamer_stop(s, &st);
    assert_int_equal(atomic_load(&bytes), 64 * sizeof(chunk) + 123);
    assert_int_equal(st.eof, 1);
    assert_int_equal(st.err_no, 0);
    assert_true(st.cpu_ns > 0 && st.cpu_mark_ns <= st.cpu_ns);
    assert_cpu_allowed(st.cpu);
    assert_true(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    close(sv[0]);
    close(sv[1]);
}

static void test_source_count_is_what_arrives(void **state)
{
    static uint8_t buf[64 * 1024];
    _Atomic uint64_t bytes = 0;
    uint64_t got = 0;
    struct streamer_params p;
    struct streamer_stats st;
    struct streamer *s;
    struct kp_err err;
    ssize_t n;
    int sv[2];
    (void)state;

    kp_err_clear(&err);
    pair(sv);
    params(&p, sv[0], STREAMER_SOURCE, &bytes);
    assert_int_equal(streamer_start(&p, &s, &err), 0);
    while (got < 4u << 20) {
        n = read(sv[1], buf, sizeof(buf));
        assert_true(n > 0);
        got += (uint64_t)n;
    }
    streamer_stop(s, &st);
    assert_int_equal(sem_wait(&ended), 0);
    /* everything counted is in the peer's queue: nothing more, nothing less */
    assert_int_equal(fcntl(sv[1], F_SETFL, O_NONBLOCK), 0);
    while ((n = read(sv[1], buf, sizeof(buf))) > 0)
        got += (uint64_t)n;
    assert_int_equal(n, -1);
    assert_int_equal(errno, EAGAIN);
    assert_int_equal(got, atomic_load(&bytes));
    assert_int_equal(st.eof, 0);
    assert_int_equal(st.err_no, 0);
    assert_cpu_allowed(st.cpu);
    assert_true(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    close(sv[0]);
    close(sv[1]);
}

/* A peer that never sends (sink) or never reads (source): stop still returns. */
static void test_stop_ends_a_stalled_stream(void **state)
{
    _Atomic uint64_t bytes = 0;
    struct streamer_params p;
    struct streamer_stats st;
    struct streamer *a, *b;
    struct kp_err err;
    int sa[2], sb[2];
    (void)state;

    kp_err_clear(&err);
    pair(sa);
    pair(sb);
    params(&p, sa[0], STREAMER_SINK, &bytes);
    assert_int_equal(streamer_start(&p, &a, &err), 0);
    params(&p, sb[0], STREAMER_SOURCE, &bytes);
    assert_int_equal(streamer_start(&p, &b, &err), 0);
    streamer_request_stop(a);
    streamer_request_stop(b);
    streamer_stop(a, &st);
    assert_int_equal(st.eof, 0); /* stopped, not the peer's EOF */
    assert_int_equal(st.err_no, 0);
    streamer_stop(b, NULL);
    assert_int_equal(sem_wait(&ended), 0);
    assert_int_equal(sem_wait(&ended), 0);
    for (int i = 0; i < 2; i++) {
        close(sa[i]);
        close(sb[i]);
    }
}

static void test_peer_gone_is_an_error(void **state)
{
    _Atomic uint64_t bytes = 0;
    struct streamer_params p;
    struct streamer_stats st;
    struct streamer *s;
    struct kp_err err;
    int sv[2];
    (void)state;

    kp_err_clear(&err);
    pair(sv);
    params(&p, sv[0], STREAMER_SOURCE, &bytes);
    assert_int_equal(streamer_start(&p, &s, &err), 0);
    close(sv[1]);
    assert_int_equal(sem_wait(&ended), 0);
    streamer_stop(s, &st);
    /* a peer that closes with our data unread resets the connection (ECONNRESET); one whose
     * close arrived first makes the next send fail with EPIPE: both are "peer gone" */
    assert_true(st.err_no == EPIPE || st.err_no == ECONNRESET);
    close(sv[0]);
}

static void test_bad_params_leave_the_fd(void **state)
{
    _Atomic uint64_t bytes = 0;
    struct streamer_params p;
    struct streamer *s = (struct streamer *)&p;
    struct kp_err err;
    int sv[2];
    (void)state;

    kp_err_clear(&err);
    pair(sv);
    params(&p, sv[0], STREAMER_SOURCE, &bytes);
    p.block = NULL;
    assert_int_equal(streamer_start(&p, &s, &err), -1);
    assert_null(s);
    assert_non_null(strstr(kp_err_msg(&err), "needs a block"));
    assert_true(fcntl(sv[0], F_GETFL) & O_NONBLOCK);
    p.block_len = 0;
    p.mode = STREAMER_SINK;
    p.fd = -1;
    assert_int_equal(streamer_start(&p, &s, &err), -1);
    assert_non_null(strstr(kp_err_msg(&err), "F_GETFL"));
    streamer_stop(NULL, NULL); /* a no-op */
    close(sv[0]);
    close(sv[1]);
}

/* 16 sinks on two pool threads: each counts exactly its own bytes and sees its own EOF. */
static void test_pool_many_streams(void **state)
{
    static uint8_t chunk[32 * 1024];
    enum { N = 16 };
    _Atomic uint64_t bytes[N];
    struct streamer_params p;
    struct streamer_stats st;
    struct streamer *s[N];
    struct kp_err err;
    int sv[N][2];
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(sem_init(&ended, 0, 0), 0);
    assert_int_equal(streampool_new(2, &pool, &err), 0);
    for (int i = 0; i < N; i++) {
        atomic_init(&bytes[i], 0);
        pair(sv[i]);
        params(&p, sv[i][0], STREAMER_SINK, &bytes[i]);
        assert_int_equal(streamer_start(&p, &s[i], &err), 0);
    }
    for (int i = 0; i < N; i++) {
        for (int k = 0; k <= i; k++)
            assert_int_equal(write(sv[i][1], chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
        shutdown(sv[i][1], SHUT_WR);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(sem_wait(&ended), 0);
    for (int i = 0; i < N; i++) {
        assert_true(streamer_ended(s[i]));
        streamer_stop(s[i], &st);
        assert_int_equal(st.eof, 1);
        assert_int_equal(atomic_load(&bytes[i]), (uint64_t)(i + 1) * sizeof(chunk));
        assert_cpu_allowed(st.cpu);
        close(sv[i][0]);
        close(sv[i][1]);
    }
    streampool_free(pool);
    pool = NULL;
    assert_int_equal(sem_destroy(&ended), 0);
}

static void test_pool_sizes(void **state)
{
    struct streampool *pl = (struct streampool *)&pl;
    struct kp_err err;
    (void)state;

    kp_err_clear(&err);
    assert_int_equal(streampool_new(0, &pl, &err), -1);
    assert_null(pl);
    assert_non_null(strstr(kp_err_msg(&err), "0 threads"));
    assert_int_equal(streampool_new(STREAMPOOL_MAX_THREADS + 1, &pl, &err), -1);
    streampool_free(NULL); /* a no-op */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sink_counts_to_eof),
        cmocka_unit_test(test_source_count_is_what_arrives),
        cmocka_unit_test(test_stop_ends_a_stalled_stream),
        cmocka_unit_test(test_peer_gone_is_an_error),
        cmocka_unit_test(test_bad_params_leave_the_fd),
    };
    const struct CMUnitTest pool_only[] = {
        cmocka_unit_test(test_pool_many_streams),
        cmocka_unit_test(test_pool_sizes),
    };
    int failed = cmocka_run_group_tests_name("own thread", tests, setup, teardown);

    failed += cmocka_run_group_tests_name("stream pool", tests, setup_pool, teardown_pool);
    return failed + cmocka_run_group_tests_name("pool only", pool_only, NULL, NULL);
}
