/* SPDX-License-Identifier: Apache-2.0 */
/* srclimit.c - see srclimit.h. Chained hash table; the hash is HMAC-SHA256 under a random key
 * (agent/sha256.h), truncated: an accept costs one short HMAC, and nobody outside the process
 * can steer sources into one bucket. */
#include "agent/srclimit.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sha256.h"
#include "base/kp_alloc.h"

struct entry {
    struct srclimit_key key;
    unsigned count;
    struct entry *next;
};

struct srclimit {
    struct entry **buckets; /* ours, and every entry in them */
    size_t nbuckets;        /* a power of two */
    unsigned sources;
    uint8_t seed[32];
};

struct srclimit *srclimit_new(unsigned expected)
{
    struct srclimit *t = kp_xcalloc(1, sizeof(*t));

    t->nbuckets = 64;
    while (t->nbuckets < expected && t->nbuckets < (1u << 16))
        t->nbuckets <<= 1;
    t->buckets = kp_xcalloc(t->nbuckets, sizeof(*t->buckets));
    /* without the kernel's random bytes, a seed from the table's address still differs per
     * process; collisions then only cost speed, never correctness */
    if (sha256_random(t->seed, sizeof(t->seed)) != 0) {
        uintptr_t p = (uintptr_t)t;
        memcpy(t->seed, &p, sizeof(p));
    }
    return t;
}

void srclimit_free(struct srclimit *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nbuckets; i++) {
        struct entry *e = t->buckets[i];
        while (e) {
            struct entry *next = e->next;
            free(e);
            e = next;
        }
    }
    free(t->buckets);
    free(t);
}

void srclimit_key_of(const struct sockaddr *sa, struct srclimit_key *k)
{
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

    memset(k, 0, sizeof(*k));
    if (sa->sa_family == AF_INET) {
        k->family = AF_INET;
        k->len = 4;
        memcpy(k->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
        if (memcmp(a, v4mapped, sizeof(v4mapped)) == 0) {
            k->family = AF_INET;
            k->len = 4;
            memcpy(k->addr, a + 12, 4);
        } else {
            k->family = AF_INET6;
            k->len = 8; /* the /64 */
            memcpy(k->addr, a, 8);
        }
    }
}

static size_t bucket_of(const struct srclimit *t, const struct srclimit_key *k)
{
    uint8_t mac[SHA256_LEN];
    uint64_t h;

    hmac_sha256(t->seed, sizeof(t->seed), k, sizeof(*k), mac);
    memcpy(&h, mac, sizeof(h));
    return (size_t)(h & (t->nbuckets - 1));
}

static int same_key(const struct srclimit_key *a, const struct srclimit_key *b)
{
    return a->family == b->family && a->len == b->len && memcmp(a->addr, b->addr, a->len) == 0;
}

static struct entry **find(const struct srclimit *t, const struct srclimit_key *k)
{
    struct entry **pp = &t->buckets[bucket_of(t, k)];

    while (*pp && !same_key(&(*pp)->key, k))
        pp = &(*pp)->next;
    return pp;
}

unsigned srclimit_count(const struct srclimit *t, const struct srclimit_key *k)
{
    struct entry *e;

    if (k->family == 0)
        return 0;
    e = *find(t, k);
    return e ? e->count : 0;
}

unsigned srclimit_add(struct srclimit *t, const struct srclimit_key *k)
{
    struct entry **pp;

    if (k->family == 0)
        return 0;
    pp = find(t, k);
    if (!*pp) {
        *pp = kp_xcalloc(1, sizeof(**pp));
        (*pp)->key = *k;
        t->sources++;
    }
    return ++(*pp)->count;
}

void srclimit_del(struct srclimit *t, const struct srclimit_key *k)
{
    struct entry **pp;
    struct entry *e;

    if (k->family == 0)
        return;
    pp = find(t, k);
    e = *pp;
    if (!e)
        return;
    if (--e->count > 0)
        return;
    *pp = e->next;
    free(e);
    t->sources--;
}

unsigned srclimit_sources(const struct srclimit *t)
{
    return t->sources;
}
