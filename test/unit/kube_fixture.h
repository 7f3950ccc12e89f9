/* SPDX-License-Identifier: Apache-2.0 */
/* kube_fixture.h - harness shared by the test_kube_* transport tests (data files through
 * fixture.h): spawns test/unit/data/kube/fixture_server.py (HTTPS on 127.0.0.1, certificates
 * made with openssl in a temp dir), talks to its control endpoints, writes kubeconfigs for it,
 * and provides a fake clock so that retries and rate limits never really sleep. Header-only,
 * test use only; include it after <cmocka.h>. */
#ifndef KPERF_TEST_KUBE_FIXTURE_H
#define KPERF_TEST_KUBE_FIXTURE_H

#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/kp_alloc.h"
#include "controller/kube/kube.h"
#include "test/unit/fixture.h"

#define FX_UNUSED __attribute__((unused))

struct fixture {
    pid_t pid;
    int port;
    int proxy_port; /* HTTP CONNECT proxy in the same server */
    char dir[64];   /* temp dir with certificates and kubeconfigs */
};

static struct fixture fx;
static CURL *fx_curl; /* control requests: one handle, so one kept-alive TLS connection */

struct fake_clock {
    uint64_t now_ms;
    uint64_t slept_ms;
    unsigned sleeps;
    uint64_t step_ms; /* added on every now_ms() call (deadline tests) */
};

static uint64_t fake_now(void *arg)
{
    struct fake_clock *c = arg;
    c->now_ms += c->step_ms;
    return c->now_ms;
}

static void fake_sleep(void *arg, uint64_t ms)
{
    struct fake_clock *c = arg;
    c->now_ms += ms;
    c->slept_ms += ms;
    c->sleeps++;
}

static FX_UNUSED char *fx_data(const char *name)
{
    return fixture_path("kube", name);
}

/* Starts the server; returns 0 or -1 (the group setup then fails: no test runs, ctest fails).
 * Test programs start it once, through fx_group_setup(). */
static FX_UNUSED int fx_start(void)
{
    char *script = fx_data("fixture_server.py");
    int p[2];
    char line[64] = "";
    FILE *f;

    snprintf(fx.dir, sizeof(fx.dir), "/tmp/kperf-kube-fx-XXXXXX");
    if (!mkdtemp(fx.dir) || pipe(p) != 0)
        return -1;
    fx.pid = fork();
    if (fx.pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(p[1], 1);
        close(p[0]);
        execlp("python3", "python3", script, "--dir", fx.dir, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    free(script);
    f = fdopen(p[0], "r");
    if (!f || !fgets(line, sizeof(line), f) ||
        sscanf(line, "READY %d %d", &fx.port, &fx.proxy_port) != 2) {
        fprintf(stderr, "fixture server did not start: %s\n", line);
        return -1;
    }
    fclose(f);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return 0;
}

static FX_UNUSED void fx_stop(void)
{
    char *cmd;
    if (fx_curl)
        curl_easy_cleanup(fx_curl);
    fx_curl = NULL;
    if (fx.pid > 0) {
        kill(fx.pid, SIGTERM);
        waitpid(fx.pid, NULL, 0);
    }
    cmd = kp_xasprintf("rm -rf '%s'", fx.dir);
    if (fx.dir[0] && system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", fx.dir);
    free(cmd);
}

static size_t fx_collect(char *p, size_t size, size_t n, void *arg)
{
    char **buf = arg;
    size_t old = *buf ? strlen(*buf) : 0;
    *buf = kp_xrealloc(*buf, old + size * n + 1);
    memcpy(*buf + old, p, size * n);
    (*buf)[old + size * n] = '\0';
    return size * n;
}

/* Calls a control endpoint; returns the parsed reply (caller decrefs) or NULL. */
static FX_UNUSED json_t *fx_ctl(const char *path, const char *body)
{
    CURL *k = fx_curl ? fx_curl : (fx_curl = curl_easy_init());
    char *url = kp_xasprintf("https://127.0.0.1:%d%s", fx.port, path);
    char *ca = kp_xasprintf("%s/ca.crt", fx.dir);
    char *out = NULL;
    json_t *doc;

    curl_easy_setopt(k, CURLOPT_URL, url);
    curl_easy_setopt(k, CURLOPT_CAINFO, ca);
    curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, fx_collect);
    curl_easy_setopt(k, CURLOPT_WRITEDATA, &out);
    if (body)
        curl_easy_setopt(k, CURLOPT_POSTFIELDS, body);
    curl_easy_perform(k);
    curl_easy_reset(k); /* keeps the connection */
    doc = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    free(url);
    free(ca);
    return doc;
}

static FX_UNUSED void fx_do(const char *path, const char *body)
{
    json_decref(fx_ctl(path, body ? body : "{}"));
}

/* The server's request log (caller decrefs). */
static FX_UNUSED json_t *fx_log(void)
{
    json_t *doc = fx_ctl("/_fixture/log", NULL);
    json_t *reqs = json_incref(json_object_get(doc, "requests"));
    json_decref(doc);
    return reqs;
}

/* The fake clock of the clients that tests make; fx_reset() zeroes it. */
static struct fake_clock fx_clk;

/* cmocka group setup and teardown: one fixture server for the whole test program (its Python
 * start-up and certificate generation take seconds on a loaded CI machine). */
static FX_UNUSED int fx_group_setup(void **state)
{
    (void)state;
    kp_alloc_init_json();
    return fx_start() == 0 ? 0 : -1;
}

static FX_UNUSED int fx_group_teardown(void **state)
{
    (void)state;
    fx_stop();
    return 0;
}

/* cmocka per-test setup: a fresh fake clock, and the server's request log and faults cleared. */
static FX_UNUSED int fx_reset(void **state)
{
    (void)state;
    memset(&fx_clk, 0, sizeof(fx_clk));
    fx_do("/_fixture/reset", NULL);
    return 0;
}

/* Writes DIR/name with cluster lines (NULL = server + CA) and user lines (4-space indented
 * mapping body). Returns the path (caller frees). */
static FX_UNUSED char *fx_kubeconfig(const char *name, const char *cluster, const char *user)
{
    char *path = kp_xasprintf("%s/%s", fx.dir, name);
    FILE *f = fopen(path, "w");

    fprintf(f, "apiVersion: v1\nkind: Config\ncurrent-context: t\nclusters:\n- name: c\n"
               "  cluster:\n");
    if (cluster)
        fprintf(f, "%s", cluster);
    else
        fprintf(f, "    server: https://127.0.0.1:%d\n    certificate-authority: ca.crt\n",
                fx.port);
    fprintf(f, "users:\n- name: u\n  user:\n%s", user ? user : "    token: good-token\n");
    fprintf(f, "contexts:\n- {name: t, context: {cluster: c, user: u, namespace: ns1}}\n");
    fclose(f);
    return path;
}

/* A client for kubeconfig path with a fake clock and no rate limit unless o says otherwise. */
static FX_UNUSED struct kube_client *fx_client(const char *kc, struct kube_client_opts *o,
                                               struct fake_clock *fc)
{
    static struct kube_clock clk;
    struct kube_client_opts def = {0};
    struct kube_client *c = NULL;
    struct kp_err err = {{0}};

    if (!o) {
        def.qps = -1;
        o = &def;
    }
    o->kubeconfig = kc;
    clk.now_ms = fake_now;
    clk.sleep_ms = fake_sleep;
    clk.arg = fc;
    o->clock = &clk;
    if (kube_client_new(o, &c, &err) != 0)
        fprintf(stderr, "client: %s\n", err.msg);
    return c;
}

/* A client for DIR/token.yaml (the fixture server, its CA, token "good-token") on fx_clk.
 * Caller frees with kube_client_free(); fails the test when it cannot be made. */
static FX_UNUSED struct kube_client *fx_token_client(void)
{
    char *kc = fx_kubeconfig("token.yaml", NULL, NULL);
    struct kube_client *c = fx_client(kc, NULL, &fx_clk);
    free(kc);
    assert_non_null(c);
    return c;
}

#endif
