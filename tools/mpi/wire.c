/* genie-mpi's messages: packing and checked unpacking (see wire.h). */
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GENIE_TRY is the library's own; the tools have the public API alone. */
#define TRY(expr)                          \
    do {                                   \
        genie_status rc_ = (expr);         \
        if (rc_ != GENIE_OK)               \
            return rc_;                    \
    } while (0)

/* Failures here have no library handle to keep a message: a short static one does. */
static genie_status bad(const char *zWhat)
{
    fprintf(stderr, "genie-mpi: malformed %s message\n", zWhat);
    return GENIE_ECORRUPT;
}

void wire_free(wire_buf *b)
{
    free(b->a);
    b->a = NULL;
    b->n = b->cap = 0;
}

size_t wire_bytes(const wire_buf *b)
{
    return b->n * sizeof *b->a;
}

static genie_status reserve(wire_buf *b, size_t nMore)
{
    if (b->n + nMore <= b->cap)
        return GENIE_OK;
    size_t c = b->cap ? b->cap : 256;
    while (c < b->n + nMore)
        c *= 2;
    uint32_t *a = realloc(b->a, c * sizeof *a);
    if (!a) {
        fprintf(stderr, "genie-mpi: out of memory for a message of %zu words\n", c);
        return GENIE_ENOMEM;
    }
    b->a = a;
    b->cap = c;
    return GENIE_OK;
}

static void put(wire_buf *b, uint32_t w)
{
    b->a[b->n++] = w;
}

static void put64(wire_buf *b, uint64_t v)
{
    put(b, (uint32_t)v);
    put(b, (uint32_t)(v >> 32));
}

static uint64_t get64(const uint32_t *a)
{
    return (uint64_t)a[0] | ((uint64_t)a[1] << 32);
}

/* A message string: its length, then its bytes in whole words. */
static genie_status put_message(wire_buf *b, const char *zMsg)
{
    size_t n = strlen(zMsg);
    if (n > WIRE_MAX_MESSAGE)
        n = WIRE_MAX_MESSAGE;
    TRY(reserve(b, 1 + (n + 3) / 4));
    put(b, (uint32_t)n);
    if (n)
        b->a[b->n + (n + 3) / 4 - 1] = 0; /* the last word's padding */
    memcpy(b->a + b->n, zMsg, n);
    b->n += (n + 3) / 4;
    return GENIE_OK;
}

static genie_status get_message(const uint32_t *a, size_t nWord, char *zOut, const char *zWhat)
{
    if (nWord < 1 || a[0] > WIRE_MAX_MESSAGE || (a[0] + 3) / 4 > nWord - 1)
        return bad(zWhat);
    memcpy(zOut, a + 1, a[0]);
    zOut[a[0]] = 0;
    return GENIE_OK;
}

genie_status wire_pack_setup(wire_buf *b, const wire_setup *s)
{
    b->n = 0;
    TRY(reserve(b, 5));
    put(b, (uint32_t)s->status);
    put64(b, s->firstObject);
    put64(b, s->nObjects);
    return put_message(b, s->zMessage);
}

genie_status wire_unpack_setup(const void *p, size_t nBytes, wire_setup *s)
{
    const uint32_t *a = p;
    size_t n = nBytes / 4;
    if (nBytes % 4 || n < 5)
        return bad("setup");
    s->status = (genie_status)a[0];
    s->firstObject = get64(a + 1);
    s->nObjects = get64(a + 3);
    return get_message(a + 5, n - 5, s->zMessage, "setup");
}

genie_status wire_pack_batch(wire_buf *b, uint64_t seq, const genie_queries *q, uint32_t k)
{
    b->n = 0;
    size_t nQuery = q ? genie_queries_count(q) : 0;
    TRY(reserve(b, 5 + 2 * nQuery));
    put(b, q != NULL);
    put64(b, seq);
    put(b, (uint32_t)nQuery);
    put(b, k);
    for (size_t i = 0; i < nQuery; i++) {
        const genie_item *aItem;
        size_t nItem;
        uint32_t min;
        TRY(genie_queries_get(q, i, &aItem, &nItem, &min));
        put(b, (uint32_t)nItem);
        put(b, min);
    }
    for (size_t i = 0; i < nQuery; i++) {
        const genie_item *aItem;
        size_t nItem;
        uint32_t min;
        TRY(genie_queries_get(q, i, &aItem, &nItem, &min));
        TRY(reserve(b, 3 * nItem));
        for (size_t j = 0; j < nItem; j++) {
            put(b, aItem[j].lo);
            put(b, aItem[j].hi);
            put(b, aItem[j].weight);
        }
    }
    return GENIE_OK;
}

genie_status wire_unpack_batch(const void *p, size_t nBytes, int *pStop, uint64_t *pSeq, uint32_t *pK,
                               genie_queries *q)
{
    const uint32_t *a = p;
    size_t n = nBytes / 4;
    if (nBytes % 4 || n < 5 || a[0] > 1)
        return bad("batch");
    *pStop = a[0] == 0;
    *pSeq = get64(a + 1);
    *pK = a[4];
    if (*pStop)
        return GENIE_OK;
    size_t nQuery = a[3];
    if (nQuery > (n - 5) / 2)
        return bad("batch");
    const uint32_t *aHead = a + 5, *aItem = a + 5 + 2 * nQuery;
    size_t nItemWords = n - 5 - 2 * nQuery;
    genie_queries_clear(q);
    for (size_t i = 0; i < nQuery; i++) {
        size_t nItem = aHead[2 * i];
        if (nItem > nItemWords / 3)
            return bad("batch");
        genie_item aOne[64], *aIt = nItem <= 64 ? aOne : malloc(nItem * sizeof *aIt);
        if (!aIt)
            return GENIE_ENOMEM;
        for (size_t j = 0; j < nItem; j++)
            aIt[j] = (genie_item){aItem[3 * j], aItem[3 * j + 1], aItem[3 * j + 2]};
        genie_status rc = genie_queries_add(q, aIt, nItem, aHead[2 * i + 1]);
        if (aIt != aOne)
            free(aIt);
        TRY(rc);
        aItem += 3 * nItem;
        nItemWords -= 3 * nItem;
    }
    return nItemWords == 0 ? GENIE_OK : bad("batch");
}

genie_status wire_pack_answer(wire_buf *b, uint64_t seq, const genie_results *r, uint64_t base)
{
    b->n = 0;
    size_t nQuery = genie_results_queries(r), nHit = 0;
    for (size_t i = 0; i < nQuery; i++) {
        size_t m;
        genie_results_get(r, i, &m);
        nHit += m;
    }
    TRY(reserve(b, 4 + nQuery + 2 * nHit));
    put(b, 0);
    put64(b, seq);
    put(b, (uint32_t)nQuery);
    for (size_t i = 0; i < nQuery; i++) {
        size_t m;
        genie_results_get(r, i, &m);
        put(b, (uint32_t)m);
    }
    for (size_t i = 0; i < nQuery; i++) {
        size_t m;
        const genie_hit *aHit = genie_results_get(r, i, &m);
        for (size_t j = 0; j < m; j++) {
            put(b, (uint32_t)(aHit[j].object + base)); /* the broker checked that shards end below 2^32 */
            put(b, aHit[j].count);
        }
    }
    return GENIE_OK;
}

genie_status wire_pack_error(wire_buf *b, uint64_t seq, size_t nQuery, genie_status status, const char *zMsg)
{
    b->n = 0;
    TRY(reserve(b, 4));
    put(b, (uint32_t)status);
    put64(b, seq);
    put(b, (uint32_t)nQuery);
    return put_message(b, zMsg);
}

size_t wire_answer_max_bytes(size_t nQuery, uint32_t k)
{
    size_t nHit = 4 + nQuery + 2 * nQuery * (size_t)k, nErr = 5 + (WIRE_MAX_MESSAGE + 3) / 4;
    return 4 * (nHit > nErr ? nHit : nErr);
}

genie_status wire_unpack_answer(const void *p, size_t nBytes, size_t nQuery, uint32_t k, wire_answer *a)
{
    const uint32_t *w = p;
    size_t n = nBytes / 4;
    if (nBytes % 4 || n < 4 || w[3] != nQuery)
        return bad("answer");
    a->status = (genie_status)w[0];
    a->seq = get64(w + 1);
    a->nQuery = nQuery;
    a->aCount = NULL;
    a->aHit = NULL;
    a->zMessage[0] = 0;
    if (a->status != GENIE_OK)
        return get_message(w + 4, n - 4, a->zMessage, "answer");
    if (n - 4 < nQuery)
        return bad("answer");
    uint64_t nHit = 0;
    for (size_t i = 0; i < nQuery; i++) {
        if (w[4 + i] > k)
            return bad("answer");
        nHit += w[4 + i];
    }
    if (n - 4 - nQuery != 2 * nHit)
        return bad("answer");
    a->aCount = w + 4;
    a->aHit = (const genie_hit *)(const void *)(w + 4 + nQuery);
    return GENIE_OK;
}
