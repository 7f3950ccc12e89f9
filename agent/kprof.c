/* SPDX-License-Identifier: Apache-2.0 */
/* kprof.c - see kprof.h. One event per CPU, each with its own ring buffer of RING_PAGES pages;
 * a thread drains them every DRAIN_MS (at KPROF_HZ a buffer holds about a second of deep
 * stacks, so none is lost unless the thread is starved that long: "lost" counts them). */
#include "agent/kprof.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/ksyms.h"
#include "base/kp_alloc.h"

#define RING_PAGES 64 /* data pages per CPU (a power of two) */
#define DRAIN_MS   20
#define MAX_CPUS   1024
#define MAX_DEPTH  128
#define PID_CACHE  1024 /* processes remembered per profile (a power of two) */

struct cpu_ring {
    int fd;
    struct perf_event_mmap_page *meta;
    uint8_t *data;
};

struct pid_seen {
    int32_t pid; /* 0: empty slot */
    int8_t ours;
};

struct kprof {
    const struct ksyms *syms;
    struct cpu_ring *rings;
    unsigned nrings;
    size_t page, data_size;
    uint32_t *self, *stack; /* per symbol */
    uint64_t samples, unknown, lost, other, idle;
    long softirq[2];                  /* handle_softirqs, __do_softirq (or -1) */
    struct pid_seen cache[PID_CACHE]; /* whose tasks are agents */
    char comm[32];                    /* ours, from /proc/self/comm */
    pthread_t thread;
    atomic_int stop;
    int running, stopped;
};

static struct ksyms *g_syms; /* loaded once per process */

static long perf_open(struct perf_event_attr *a, int cpu)
{
    return syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attr_init(struct perf_event_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->size = sizeof(*a);
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_CPU_CLOCK;
    a->freq = 1;
    a->sample_freq = KPROF_HZ;
    a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
    a->disabled = 1;
    a->exclude_user = 1;
    a->exclude_hv = 1;
    /* not exclude_idle: it would drop the softirq work done on an idle CPU's stack too;
     * the pure idle samples are dropped in take_sample */
    a->exclude_callchain_user = 1;
}

/* Whether process pid is an agent (its comm is ours): read once per process and profile. A
 * process gone before we look is not an agent (they outlive the window). */
static int is_ours(struct kprof *p, int32_t pid)
{
    size_t h = ((uint32_t)pid * 2654435761u) & (PID_CACHE - 1);
    char path[48], comm[32] = "";
    FILE *f;

    for (size_t i = 0; i < PID_CACHE; i++, h = (h + 1) & (PID_CACHE - 1)) {
        if (p->cache[h].pid == pid)
            return p->cache[h].ours;
        if (p->cache[h].pid == 0)
            break;
    }
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    if ((f = fopen(path, "r")) != NULL) {
        if (!fgets(comm, sizeof(comm), f))
            comm[0] = '\0';
        fclose(f);
    }
    if (p->cache[h].pid == 0) { /* a full cache asks again next time */
        p->cache[h].pid = pid;
        p->cache[h].ours = strcmp(comm, p->comm) == 0;
    }
    return strcmp(comm, p->comm) == 0;
}

/* The functions of a sample's kernel stack (ips[0] the leaf), each once, into seen[]; how
 * many. *soft: the stack holds the softirq handler; it then ends there, since what it
 * interrupted (an idle loop, any process's system call) is no part of the softirq's work. */
static size_t stack_functions(const struct kprof *p, const uint64_t *ips, size_t nr, long *seen,
                              int *soft)
{
    size_t nseen = 0;

    *soft = 0;
    for (size_t i = 0; i < nr && !*soft; i++) {
        long s;
        size_t j;
        if (ips[i] >= (uint64_t)PERF_CONTEXT_MAX) /* a context marker */
            continue;
        if ((s = ksyms_find(p->syms, ips[i])) < 0)
            continue;
        *soft = s == p->softirq[0] || s == p->softirq[1];
        for (j = 0; j < nseen && seen[j] != s; j++)
            ;
        if (j == nseen && nseen < MAX_DEPTH)
            seen[nseen++] = s;
    }
    return nseen;
}

/* One sample (ip, pid and tid, nr, ips[nr]). Kept when it is the measurement's: softirq work
 * (its stack holds the softirq handler), whoever's stack it ran on, or an agent's kernel time;
 * else counted as the node's "other" kernel time, or "idle". Kept, its leaf's function counts
 * as "self" and each function of its stack once as "stack". */
static void take_sample(struct kprof *p, const uint64_t *rec, size_t words)
{
    long seen[MAX_DEPTH], leaf;
    size_t nseen, nr;
    int32_t pid;
    int soft;

    if (words < 3)
        return;
    pid = (int32_t)(uint32_t)(rec[1] & 0xffffffffu);
    nr = rec[2] < words - 3 ? rec[2] : words - 3;
    nseen = stack_functions(p, rec + 3, nr, seen, &soft);
    if (!soft && pid == 0) {
        p->idle++;
        return;
    }
    if (!soft && !is_ours(p, pid)) {
        p->other++;
        return;
    }
    p->samples++;
    leaf = ksyms_find(p->syms, rec[0]);
    if (leaf < 0)
        p->unknown++;
    else
        p->self[leaf]++;
    for (size_t j = 0; j < nseen; j++)
        p->stack[seen[j]]++;
    if (nseen == 0 && leaf >= 0) /* no chain: the leaf is the stack */
        p->stack[leaf]++;
}

static void drain(struct kprof *p, struct cpu_ring *r)
{
    uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->meta->data_tail;
    uint64_t buf[(MAX_DEPTH + 8) * 2];

    while (tail < head) {
        struct perf_event_header h;
        size_t off = tail & (p->data_size - 1), size;
        uint8_t *rec = (uint8_t *)buf;

        for (size_t i = 0; i < sizeof(h); i++)
            ((uint8_t *)&h)[i] = r->data[(off + i) & (p->data_size - 1)];
        if (h.size < sizeof(h))
            break;
        size = h.size < sizeof(buf) ? h.size : sizeof(buf);
        for (size_t i = 0; i < size; i++)
            rec[i] = r->data[(off + i) & (p->data_size - 1)];
        if (h.type == PERF_RECORD_SAMPLE)
            take_sample(p, buf + 1, (size - sizeof(h)) / 8);
        else if (h.type == PERF_RECORD_LOST && size >= sizeof(h) + 16)
            p->lost += buf[2];
        tail += h.size;
    }
    __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void *drainer(void *arg)
{
    struct kprof *p = arg;
    struct timespec ts = {0, DRAIN_MS * 1000000L};

    while (!atomic_load(&p->stop)) {
        for (unsigned i = 0; i < p->nrings; i++)
            drain(p, &p->rings[i]);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int open_rings(struct kprof *p, struct kp_err *err)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    struct perf_event_attr a;
    int first_errno = 0;

    attr_init(&a);
    if (ncpu < 1 || ncpu > MAX_CPUS)
        ncpu = ncpu < 1 ? 1 : MAX_CPUS;
    p->rings = kp_xcalloc((size_t)ncpu, sizeof(*p->rings));
    for (long c = 0; c < ncpu; c++) {
        struct cpu_ring *r = &p->rings[p->nrings];
        long fd = perf_open(&a, (int)c);
        void *m;
        if (fd < 0) {
            if (errno != ENODEV && !first_errno) /* ENODEV: an offline CPU */
                first_errno = errno;
            continue;
        }
        m = mmap(NULL, p->page * (RING_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
        if (m == MAP_FAILED) {
            first_errno = errno;
            close((int)fd);
            continue;
        }
        r->fd = (int)fd;
        r->meta = m;
        r->data = (uint8_t *)m + p->page;
        p->nrings++;
    }
    if (p->nrings > 0 && !first_errno)
        return 0;
    if (first_errno == EACCES || first_errno == EPERM)
        return kp_err_set(err,
                          "perf_event_open: %s (system-wide kernel sampling needs CAP_PERFMON or "
                          "CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0)",
                          strerror(first_errno));
    return kp_err_set(err, "perf_event_open: %s", strerror(first_errno ? first_errno : ENODEV));
}

static void close_rings(struct kprof *p)
{
    for (unsigned i = 0; i < p->nrings; i++) {
        munmap(p->rings[i].meta, p->page * (RING_PAGES + 1));
        close(p->rings[i].fd);
    }
    free(p->rings);
    p->rings = NULL;
    p->nrings = 0;
}

static void read_comm(char *buf, size_t len)
{
    FILE *f = fopen("/proc/self/comm", "r");

    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)len, f))
            buf[0] = '\0';
        fclose(f);
    }
    if (!buf[0])
        snprintf(buf, len, "kperf-agent\n");
}

struct kprof *kprof_start(struct kp_err *err)
{
    struct kprof *p = kp_xcalloc(1, sizeof(*p));

    p->page = (size_t)sysconf(_SC_PAGESIZE);
    p->data_size = p->page * RING_PAGES;
    /* the events first: when the kernel refuses them, that is the reason to give */
    if (open_rings(p, err) != 0 || (!g_syms && !(g_syms = ksyms_load("/proc/kallsyms", err)))) {
        close_rings(p);
        free(p);
        return NULL;
    }
    p->syms = g_syms;
    p->softirq[0] = ksyms_by_name(g_syms, "handle_softirqs");
    p->softirq[1] = ksyms_by_name(g_syms, "__do_softirq");
    read_comm(p->comm, sizeof(p->comm));
    p->self = kp_xcalloc(ksyms_count(g_syms), sizeof(*p->self));
    p->stack = kp_xcalloc(ksyms_count(g_syms), sizeof(*p->stack));
    if (pthread_create(&p->thread, NULL, drainer, p) != 0) {
        kp_err_set(err, "cannot start the profile's thread");
        kprof_free(p);
        return NULL;
    }
    p->running = 1;
    for (unsigned i = 0; i < p->nrings; i++)
        ioctl(p->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
    return p;
}

void kprof_stop(struct kprof *p)
{
    if (!p || p->stopped)
        return;
    p->stopped = 1;
    for (unsigned i = 0; i < p->nrings; i++)
        ioctl(p->rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
    if (p->running) {
        atomic_store(&p->stop, 1);
        pthread_join(p->thread, NULL);
        p->running = 0;
    }
    for (unsigned i = 0; i < p->nrings; i++)
        drain(p, &p->rings[i]);
}

static const struct kprof *g_sort; /* qsort has no context argument in C11 */

static int by_self(const void *a, const void *b)
{
    uint32_t x = g_sort->self[*(const size_t *)a], y = g_sort->self[*(const size_t *)b];

    return x > y ? -1 : x < y;
}

static int by_stack(const void *a, const void *b)
{
    uint32_t x = g_sort->stack[*(const size_t *)a], y = g_sort->stack[*(const size_t *)b];

    return x > y ? -1 : x < y;
}

static void add_function(const struct kprof *p, json_t *arr, size_t i)
{
    json_array_append_new(arr,
                          json_pack("{s:s, s:I, s:I}", "name", ksyms_name(p->syms, i), "samples",
                                    (json_int_t)p->self[i], "stack", (json_int_t)p->stack[i]));
}

/* The most sampled functions by self samples, then by stack samples (those not listed yet). */
static json_t *functions_json(struct kprof *p)
{
    size_t n = 0, cnt = ksyms_count(p->syms), listed = 0;
    size_t *idx = kp_xcalloc(cnt ? cnt : 1, sizeof(*idx));
    json_t *arr = json_array();

    for (size_t i = 0; i < cnt; i++)
        if (p->stack[i] || p->self[i])
            idx[n++] = i;
    g_sort = p;
    qsort(idx, n, sizeof(*idx), by_self);
    for (size_t i = 0; i < n && listed < KPROF_FUNCTIONS && p->self[idx[i]]; i++, listed++) {
        add_function(p, arr, idx[i]);
        p->stack[idx[i]] |= 0x80000000u; /* listed: kept apart from the second pass */
    }
    qsort(idx, n, sizeof(*idx), by_stack);
    for (size_t i = 0, more = 0; i < n && more < KPROF_FUNCTIONS; i++) {
        if (p->stack[idx[i]] & 0x80000000u)
            continue;
        add_function(p, arr, idx[i]);
        more++;
    }
    for (size_t i = 0; i < n; i++)
        p->stack[idx[i]] &= 0x7fffffffu;
    free(idx);
    return arr;
}

json_t *kprof_json(struct kprof *p)
{
    kprof_stop(p);
    return json_pack("{s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:o}", "hz", KPROF_HZ, "cpus",
                     (int)p->nrings, "samples", (json_int_t)p->samples, "other",
                     (json_int_t)p->other, "idle", (json_int_t)p->idle, "unknown",
                     (json_int_t)p->unknown, "lost", (json_int_t)p->lost, "functions",
                     functions_json(p));
}

json_t *kprof_error_json(const char *msg)
{
    return json_pack("{s:s}", "error", msg);
}

void kprof_free(struct kprof *p)
{
    if (!p)
        return;
    kprof_stop(p);
    close_rings(p);
    free(p->self);
    free(p->stack);
    free(p);
}
