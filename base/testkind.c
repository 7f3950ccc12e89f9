/* SPDX-License-Identifier: Apache-2.0 */
/* testkind.c - see testkind.h. The table is in canonical order: kinds[k].kind == k. */
#include "base/testkind.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

static const struct testkind kinds[TEST_COUNT] = {
    {.name = "TCP_RR", .kind = TEST_TCP_RR, .wire = 1, .latency = true},
    {.name = "TCP_CRR", .kind = TEST_TCP_CRR, .wire = 2, .latency = true, .conn_per_txn = true},
    {.name = "UDP_RR", .kind = TEST_UDP_RR, .wire = 5, .latency = true, .udp = true},
    {.name = "TCP_RR_LOADED",
     .kind = TEST_TCP_RR_LOADED,
     .wire = 7,
     .latency = true,
     .loaded = true},
    {.name = "TCP_STREAM", .kind = TEST_TCP_STREAM, .wire = 3, .reversible = true},
    {.name = "TCP_STREAM_MULTI",
     .kind = TEST_TCP_STREAM_MULTI,
     .wire = 4,
     .reversible = true,
     .multi_stream = true},
    {.name = "UDP_STREAM", .kind = TEST_UDP_STREAM, .wire = 6, .udp = true, .reversible = true},
};

const struct testkind *testkind_get(enum test_kind k)
{
    return (unsigned)k < TEST_COUNT ? &kinds[k] : NULL;
}

const struct testkind *testkind_by_name(const char *name)
{
    for (size_t i = 0; name && i < TEST_COUNT; i++)
        if (strcmp(name, kinds[i].name) == 0)
            return &kinds[i];
    return NULL;
}

const struct testkind *testkind_by_name_icase(const char *name)
{
    for (size_t i = 0; name && i < TEST_COUNT; i++)
        if (strcasecmp(name, kinds[i].name) == 0)
            return &kinds[i];
    return NULL;
}

const struct testkind *testkind_by_wire(unsigned wire)
{
    for (size_t i = 0; i < TEST_COUNT; i++)
        if (kinds[i].wire == wire)
            return &kinds[i];
    return NULL;
}

const char *testkind_name(enum test_kind k)
{
    return (unsigned)k < TEST_COUNT ? kinds[k].name : "?";
}
