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

/* Words of a batch before its queries: kind, sequence (2), queries, k, five options, the threshold (2), nprobe. */
#define WIRE_BATCH_HEAD 13

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

/* ---------------------------------------------------------------- batches */

void wire_batch_free(wire_batch *w)
{
    free(w->aStr);
    free(w->aStrLen);
    w->aStr = NULL;
    w->aStrLen = NULL;
    w->nStrCap = 0;
}

static genie_status pack_items(wire_buf *b, const genie_queries *q, size_t nQuery)
{
    TRY(reserve(b, 2 * nQuery));
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

static genie_status pack_strings(wire_buf *b, const wire_batch *w)
{
    size_t nByte = 0;
    TRY(reserve(b, w->nQuery));
    for (size_t i = 0; i < w->nQuery; i++) {
        if (w->anStr[i] > UINT32_MAX - 3) {
            fprintf(stderr, "genie-mpi: query %zu of a batch is longer than 4 GiB\n", i + 1);
            return GENIE_EINVAL;
        }
        put(b, (uint32_t)w->anStr[i]);
        nByte += w->anStr[i];
    }
    size_t nWord = (nByte + 3) / 4;
    TRY(reserve(b, nWord));
    if (nWord)
        b->a[b->n + nWord - 1] = 0; /* the last word's padding */
    char *p = (char *)(b->a + b->n);
    for (size_t i = 0; i < w->nQuery; i++) {
        if (w->anStr[i])
            memcpy(p, w->azStr[i], w->anStr[i]);
        p += w->anStr[i];
    }
    b->n += nWord;
    return GENIE_OK;
}

void wire_batch_options(const wire_batch *w, itype_options *o)
{
    o->k = w->k;
    o->candidates = w->candidates;
    o->radius = w->radius;
    o->exact = (int)w->exact;
    o->maxCandidates = w->maxCandidates;
    o->measure = (int)w->measure;
    o->minSimilarity = w->minSimilarity;
    o->nprobe = w->nprobe;
}

genie_status wire_pack_batch(wire_buf *b, const wire_batch *w)
{
    b->n = 0;
    size_t nQuery = w->kind == WIRE_STOP ? 0 : w->nQuery;
    TRY(reserve(b, WIRE_BATCH_HEAD + 1));
    put(b, (uint32_t)w->kind);
    put64(b, w->seq);
    put(b, (uint32_t)nQuery);
    put(b, w->k);
    put(b, w->candidates);
    put(b, w->radius);
    put(b, w->exact);
    put(b, w->maxCandidates);
    put(b, w->measure);
    uint64_t bits;
    memcpy(&bits, &w->minSimilarity, sizeof bits);
    put64(b, bits);
    put(b, w->nprobe);
    switch (w->kind) {
    case WIRE_STOP: return GENIE_OK;
    case WIRE_ITEMS: return pack_items(b, w->q, nQuery);
    case WIRE_VECTORS:
        put(b, w->dim);
        TRY(reserve(b, nQuery * w->dim));
        memcpy(b->a + b->n, w->aVec, nQuery * w->dim * sizeof(float));
        b->n += nQuery * w->dim;
        return GENIE_OK;
    case WIRE_STRINGS: return pack_strings(b, w);
    }
    return GENIE_EINVAL;
}

static genie_status unpack_items(const uint32_t *a, size_t n, wire_batch *w)
{
    size_t nQuery = w->nQuery;
    if (nQuery > n / 2)
        return bad("batch");
    const uint32_t *aHead = a, *aItem = a + 2 * nQuery;
    size_t nItemWords = n - 2 * nQuery;
    genie_queries_clear(w->q);
    for (size_t i = 0; i < nQuery; i++) {
        size_t nItem = aHead[2 * i];
        if (nItem > nItemWords / 3)
            return bad("batch");
        genie_item aOne[64], *aIt = nItem <= 64 ? aOne : malloc(nItem * sizeof *aIt);
        if (!aIt)
            return GENIE_ENOMEM;
        for (size_t j = 0; j < nItem; j++)
            aIt[j] = (genie_item){aItem[3 * j], aItem[3 * j + 1], aItem[3 * j + 2]};
        genie_status rc = genie_queries_add(w->q, aIt, nItem, aHead[2 * i + 1]);
        if (aIt != aOne)
            free(aIt);
        TRY(rc);
        aItem += 3 * nItem;
        nItemWords -= 3 * nItem;
    }
    return nItemWords == 0 ? GENIE_OK : bad("batch");
}

static genie_status unpack_strings(const uint32_t *a, size_t n, wire_batch *w)
{
    size_t nQuery = w->nQuery;
    if (nQuery > n)
        return bad("batch");
    if (nQuery > w->nStrCap) {
        const char **az = realloc(w->aStr, nQuery * sizeof *az);
        if (az)
            w->aStr = az;
        size_t *an = realloc(w->aStrLen, nQuery * sizeof *an);
        if (an)
            w->aStrLen = an;
        if (!az || !an)
            return GENIE_ENOMEM;
        w->nStrCap = nQuery;
    }
    uint64_t nByte = 0;
    for (size_t i = 0; i < nQuery; i++)
        nByte += a[i];
    if ((nByte + 3) / 4 != n - nQuery)
        return bad("batch");
    const char *p = (const char *)(a + nQuery);
    for (size_t i = 0; i < nQuery; i++) {
        w->aStr[i] = p;
        w->aStrLen[i] = a[i];
        p += a[i];
    }
    w->azStr = w->aStr;
    w->anStr = w->aStrLen;
    return GENIE_OK;
}

genie_status wire_unpack_batch(const void *p, size_t nBytes, wire_batch *w)
{
    const uint32_t *a = p;
    size_t n = nBytes / 4, h = WIRE_BATCH_HEAD;
    if (nBytes % 4 || n < h || a[0] > WIRE_STRINGS)
        return bad("batch");
    w->kind = (wire_kind)a[0];
    w->seq = get64(a + 1);
    w->nQuery = a[3];
    w->k = a[4];
    w->candidates = a[5];
    w->radius = a[6];
    w->exact = a[7];
    w->maxCandidates = a[8];
    w->measure = a[9];
    uint64_t bits = get64(a + 10);
    memcpy(&w->minSimilarity, &bits, sizeof bits);
    w->nprobe = a[12];
    if (w->kind == WIRE_STOP)
        return GENIE_OK;
    if (w->kind == WIRE_ITEMS)
        return unpack_items(a + h, n - h, w);
    if (w->kind == WIRE_STRINGS)
        return unpack_strings(a + h, n - h, w);
    if (n < h + 1 || a[h] == 0 || (uint64_t)w->nQuery * a[h] != n - h - 1)
        return bad("batch");
    w->dim = a[h];
    w->aVec = (const float *)(const void *)(a + h + 1);
    return GENIE_OK;
}

/* ---------------------------------------------------------------- answers */

wire_kind wire_kind_of(itype_batch_form form)
{
    switch (form) {
    case ITYPE_BATCH_VECTORS: return WIRE_VECTORS;
    case ITYPE_BATCH_STRINGS: return WIRE_STRINGS;
    default: return WIRE_ITEMS;
    }
}

genie_status wire_answer_begin(wire_answer_builder *a, size_t nQuery)
{
    uint32_t *p = realloc(a->aHead, (nQuery ? nQuery : 1) * 3 * sizeof *p);
    if (!p) {
        fprintf(stderr, "genie-mpi: out of memory for an answer of %zu queries\n", nQuery);
        return GENIE_ENOMEM;
    }
    a->aHead = p;
    a->nQuery = nQuery;
    a->nHit = 0;
    return GENIE_OK;
}

genie_status wire_answer_add(wire_answer_builder *a, size_t i, const wire_hit *aHit, size_t n, int certified,
                             uint32_t usedK)
{
    if (a->nHit + n > a->nHitCap) {
        size_t c = a->nHitCap ? a->nHitCap : 1024;
        while (c < a->nHit + n)
            c *= 2;
        wire_hit *p = realloc(a->aHit, c * sizeof *p);
        if (!p) {
            fprintf(stderr, "genie-mpi: out of memory for an answer of %zu hits\n", c);
            return GENIE_ENOMEM;
        }
        a->aHit = p;
        a->nHitCap = c;
    }
    if (n) /* a query without hits may come with no array */
        memcpy(a->aHit + a->nHit, aHit, n * sizeof *aHit);
    a->nHit += n;
    a->aHead[3 * i] = (uint32_t)n;
    a->aHead[3 * i + 1] = certified != 0;
    a->aHead[3 * i + 2] = usedK;
    return GENIE_OK;
}

void wire_answer_builder_free(wire_answer_builder *a)
{
    free(a->aHead);
    free(a->aHit);
    memset(a, 0, sizeof *a);
}

genie_status wire_pack_answer(wire_buf *b, uint64_t seq, const wire_answer_builder *a)
{
    b->n = 0;
    TRY(reserve(b, 4 + 3 * a->nQuery + 3 * a->nHit));
    put(b, 0);
    put64(b, seq);
    put(b, (uint32_t)a->nQuery);
    if (a->nQuery)
        memcpy(b->a + b->n, a->aHead, 3 * a->nQuery * sizeof *a->aHead);
    b->n += 3 * a->nQuery;
    if (a->nHit) /* no hits at all: aHit may never have been allocated */
        memcpy(b->a + b->n, a->aHit, a->nHit * sizeof *a->aHit);
    b->n += 3 * a->nHit;
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
    size_t nHit = 4 + 3 * nQuery + 3 * nQuery * (size_t)k, nErr = 5 + (WIRE_MAX_MESSAGE + 3) / 4;
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
    a->aHead = NULL;
    a->aHit = NULL;
    a->zMessage[0] = 0;
    if (a->status != GENIE_OK)
        return get_message(w + 4, n - 4, a->zMessage, "answer");
    if ((n - 4) / 3 < nQuery)
        return bad("answer");
    uint64_t nHit = 0;
    for (size_t i = 0; i < nQuery; i++) {
        if (w[4 + 3 * i] > k)
            return bad("answer");
        nHit += w[4 + 3 * i];
    }
    if (n - 4 - 3 * nQuery != 3 * nHit)
        return bad("answer");
    a->aHead = w + 4;
    a->aHit = (const wire_hit *)(const void *)(w + 4 + 3 * nQuery);
    return GENIE_OK;
}
