/* Hash functions and the two build-time hash maps (see hash.h). */
#include "util/hash.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static inline uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

uint32_t util_murmur3_32(const void *data, size_t n, uint32_t seed)
{
    const unsigned char *p = data;
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed;
    size_t nBlocks = n / 4;
    for (size_t i = 0; i < nBlocks; i++) {
        uint32_t k;
        memcpy(&k, p + 4 * i, 4); /* little-endian hosts only, as the file format */
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
        h = rotl32(h, 13);
        h = h * 5 + 0xe6546b64u;
    }
    const unsigned char *tail = p + 4 * nBlocks;
    uint32_t k = 0;
    switch (n & 3) {
    case 3: k ^= (uint32_t)tail[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)tail[1] << 8;  /* fall through */
    case 1:
        k ^= tail[0];
        k *= c1;
        k = rotl32(k, 15);
        k *= c2;
        h ^= k;
    }
    h ^= (uint32_t)n;
    return util_fmix32(h);
}

/* ------------------------------------------------------------- u32 map */

static size_t pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c <<= 1;
    return c;
}

genie_status util_u32map_init(util_u32map *m, size_t nExpect)
{
    memset(m, 0, sizeof *m);
    m->nCap = pow2_at_least(nExpect * 2);
    m->aKey = malloc(m->nCap * sizeof *m->aKey);
    m->aVal = malloc(m->nCap * sizeof *m->aVal);
    m->aUsed = calloc(m->nCap, 1);
    if (!m->aKey || !m->aVal || !m->aUsed) {
        util_u32map_free(m);
        return util_error(GENIE_ENOMEM, "out of memory for a hash map");
    }
    return GENIE_OK;
}

void util_u32map_free(util_u32map *m)
{
    free(m->aKey);
    free(m->aVal);
    free(m->aUsed);
    memset(m, 0, sizeof *m);
}

static size_t u32map_slot(const util_u32map *m, uint32_t key)
{
    size_t mask = m->nCap - 1;
    size_t i = util_fmix32(key) & mask;
    while (m->aUsed[i] && m->aKey[i] != key)
        i = (i + 1) & mask;
    return i;
}

static int u32map_grow(util_u32map *m)
{
    util_u32map g;
    if (util_u32map_init(&g, m->nCap) != GENIE_OK)
        return 0;
    for (size_t i = 0; i < m->nCap; i++) {
        if (m->aUsed[i]) {
            size_t j = u32map_slot(&g, m->aKey[i]);
            g.aUsed[j] = 1;
            g.aKey[j] = m->aKey[i];
            g.aVal[j] = m->aVal[i];
        }
    }
    g.nUsed = m->nUsed;
    util_u32map_free(m);
    *m = g;
    return 1;
}

uint64_t *util_u32map_upsert(util_u32map *m, uint32_t key)
{
    if ((m->nUsed + 1) * 2 > m->nCap && !u32map_grow(m))
        return NULL;
    size_t i = u32map_slot(m, key);
    if (!m->aUsed[i]) {
        m->aUsed[i] = 1;
        m->aKey[i] = key;
        m->aVal[i] = 0;
        m->nUsed++;
    }
    return &m->aVal[i];
}

uint64_t *util_u32map_find(const util_u32map *m, uint32_t key)
{
    size_t i = u32map_slot(m, key);
    return m->aUsed[i] ? &m->aVal[i] : NULL;
}

/* ---------------------------------------------------------- string map */

genie_status util_strmap_init(util_strmap *m)
{
    memset(m, 0, sizeof *m);
    m->nCap = 1024;
    m->aSlot = calloc(m->nCap, sizeof *m->aSlot);
    m->nOffsetCap = 512;
    m->aOffset = malloc(m->nOffsetCap * sizeof *m->aOffset);
    if (!m->aSlot || !m->aOffset) {
        util_strmap_free(m);
        return util_error(GENIE_ENOMEM, "out of memory for a vocabulary");
    }
    m->aOffset[0] = 0;
    return GENIE_OK;
}

void util_strmap_free(util_strmap *m)
{
    free(m->aSlot);
    free(m->aOffset);
    free(m->aArena);
    memset(m, 0, sizeof *m);
}

static size_t strmap_probe(const util_strmap *m, const char *key, size_t n, uint32_t h)
{
    size_t mask = m->nCap - 1;
    size_t i = h & mask;
    for (;;) {
        uint32_t s = m->aSlot[i];
        if (s == 0)
            return i;
        size_t kn;
        const char *k = util_strmap_key(m, s - 1, &kn);
        if (kn == n && (n == 0 || memcmp(k, key, n) == 0))
            return i;
        i = (i + 1) & mask;
    }
}

static genie_status strmap_grow(util_strmap *m)
{
    size_t nCap = m->nCap * 2;
    uint32_t *aSlot = calloc(nCap, sizeof *aSlot);
    if (!aSlot)
        return util_error(GENIE_ENOMEM, "out of memory for a vocabulary");
    for (size_t i = 0; i < m->nCap; i++) {
        uint32_t s = m->aSlot[i];
        if (s) {
            size_t kn;
            const char *k = util_strmap_key(m, s - 1, &kn);
            size_t j = util_murmur3_32(k, kn, 0) & (nCap - 1);
            while (aSlot[j])
                j = (j + 1) & (nCap - 1);
            aSlot[j] = s;
        }
    }
    free(m->aSlot);
    m->aSlot = aSlot;
    m->nCap = nCap;
    return GENIE_OK;
}

genie_status util_strmap_intern(util_strmap *m, const char *key, size_t n, uint32_t *id, int *isNew)
{
    uint32_t h = util_murmur3_32(key, n, 0);
    size_t i = strmap_probe(m, key, n, h);
    if (m->aSlot[i]) {
        *id = m->aSlot[i] - 1;
        *isNew = 0;
        return GENIE_OK;
    }
    if (m->nIds == UINT32_MAX - 1)
        return util_error(GENIE_ERANGE, "vocabulary has more than 2^32-2 words");
    if ((size_t)m->nIds + 2 > m->nOffsetCap) {
        size_t c = m->nOffsetCap * 2;
        uint64_t *a = realloc(m->aOffset, c * sizeof *a);
        if (!a)
            return util_error(GENIE_ENOMEM, "out of memory for a vocabulary");
        m->aOffset = a;
        m->nOffsetCap = c;
    }
    if (m->nArena + n > m->nArenaCap) {
        size_t c = m->nArenaCap ? m->nArenaCap * 2 : 4096;
        while (c < m->nArena + n)
            c *= 2;
        char *a = realloc(m->aArena, c);
        if (!a)
            return util_error(GENIE_ENOMEM, "out of memory for a vocabulary");
        m->aArena = a;
        m->nArenaCap = c;
    }
    if (n)
        memcpy(m->aArena + m->nArena, key, n);
    m->nArena += n;
    *id = m->nIds++;
    m->aOffset[m->nIds] = m->nArena;
    m->aSlot[i] = *id + 1;
    *isNew = 1;
    if ((size_t)m->nIds * 2 > m->nCap)
        return strmap_grow(m);
    return GENIE_OK;
}

int util_strmap_find(const util_strmap *m, const char *key, size_t n, uint32_t *id)
{
    size_t i = strmap_probe(m, key, n, util_murmur3_32(key, n, 0));
    if (!m->aSlot[i])
        return 0;
    *id = m->aSlot[i] - 1;
    return 1;
}
