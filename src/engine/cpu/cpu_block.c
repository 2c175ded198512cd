/*
 * Blocked match counting with 16-bit counters (see cpu_block.h for the
 * scheme and its contract).
 */
#include "engine/cpu/cpu_block.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "index/index.h"

/* A counter must exceed this to enter the heap now (threshold >= 1). */
static inline uint32_t cutoff(const select_heap *h, uint32_t threshold)
{
    if (h->n < h->k)
        return threshold - 1;
    uint32_t least = (uint32_t)(h->aKey[0] >> 32);
    return least > threshold - 1 ? least : threshold - 1;
}

#if defined(__SSE2__)
/* Non-zero when no counter of the 64 bytes at @p v exceeds @p t (saturating subtract, SSE2). */
#define CHUNK_QUIET(v, t, SUBS)                                                                                      \
    (_mm_movemask_epi8(_mm_cmpeq_epi8(                                                                              \
         _mm_or_si128(_mm_or_si128(SUBS(_mm_load_si128(v), t), SUBS(_mm_load_si128((v) + 1), t)),                  \
                      _mm_or_si128(SUBS(_mm_load_si128((v) + 2), t), SUBS(_mm_load_si128((v) + 3), t))),            \
         _mm_setzero_si128())) == 0xffff)
#endif

/*
 * The two counter widths, T = uint8_t (count bounds up to 255, 32,768
 * objects per block) and uint16_t (up to 65,535, 16,384 objects):
 *
 * count_block_W   counts the postings of [p, pEnd) below @p lim (the
 *                 block's end) and returns where the next block's begin.
 *                 The list is read straight through, eight postings per
 *                 bound test: a search for the block's end would touch
 *                 lines far ahead and miss the cache on dense lists, where
 *                 this loop streams.
 * scan_block_W    offers the counters of one block (nScan counters, a
 *                 multiple of one 64-byte chunk, from id @p base) that beat
 *                 the cutoff to the heap and clears them all.  The SIMD test
 *                 skips a chunk when none beats it, which is nearly always
 *                 once the heap is full.
 */
#define CPU_BLOCK_WIDTH(T, W, SET1, SUBS)                                                                            \
    static const uint32_t *count_block_##W(T *aCount, const uint32_t *p, const uint32_t *pEnd, uint64_t lim,       \
                                           uint32_t base, T w)                                                       \
    {                                                                                                                \
        while (pEnd - p >= 8 && p[7] < lim) {                                                                        \
            aCount[p[0] - base] += w;                                                                                \
            aCount[p[1] - base] += w;                                                                                \
            aCount[p[2] - base] += w;                                                                                \
            aCount[p[3] - base] += w;                                                                                \
            aCount[p[4] - base] += w;                                                                                \
            aCount[p[5] - base] += w;                                                                                \
            aCount[p[6] - base] += w;                                                                                \
            aCount[p[7] - base] += w;                                                                                \
            p += 8;                                                                                                  \
        }                                                                                                            \
        for (; p < pEnd && *p < lim; p++)                                                                            \
            aCount[*p - base] += w;                                                                                  \
        return p;                                                                                                    \
    }                                                                                                                \
    static void scan_block_##W(T *aCount, uint32_t nScan, uint32_t base, uint32_t threshold, select_heap *h)        \
    {                                                                                                                \
        enum { CHUNK = 64 / sizeof(T) };                                                                             \
        uint32_t thr = cutoff(h, threshold);                                                                         \
        for (uint32_t i = 0; i < nScan; i += CHUNK) {                                                                \
            T *c = aCount + i;                                                                                       \
            SIMD_SKIP(c, thr, SET1, SUBS)                                                                            \
            for (uint32_t j = 0; j < CHUNK; j++) {                                                                   \
                if (c[j] > thr) {                                                                                    \
                    select_push(h, select_key(c[j], base + i + j));                                                  \
                    thr = cutoff(h, threshold);                                                                      \
                }                                                                                                    \
                c[j] = 0;                                                                                            \
            }                                                                                                        \
        }                                                                                                            \
    }                                                                                                                \
    static void count_blocks_##W(T *aCount, cpu_cursor *aCursor, size_t nCursor, uint64_t n, uint32_t threshold,    \
                                 select_heap *heap)                                                                  \
    {                                                                                                                \
        const uint64_t nPer = CPU_BLOCK_BYTES / sizeof(T);                                                           \
        for (uint64_t base = 0; base < n; base += nPer) {                                                            \
            size_t nCounted = 0;                                                                                     \
            for (size_t c = 0; c < nCursor; c++) {                                                                   \
                cpu_cursor *u = &aCursor[c];                                                                         \
                const uint32_t *q = count_block_##W(aCount, u->p, u->pEnd, base + nPer, (uint32_t)base, (T)u->weight); \
                nCounted += (size_t)(q - u->p);                                                                      \
                u->p = q;                                                                                            \
            }                                                                                                        \
            if (nCounted) {                                                                                          \
                uint64_t nIn = n - base < nPer ? n - base : nPer, nChunk = 64 / sizeof(T);                           \
                scan_block_##W(aCount, (uint32_t)((nIn + nChunk - 1) / nChunk * nChunk), (uint32_t)base, threshold,  \
                               heap);                                                                                \
            }                                                                                                        \
        }                                                                                                            \
    }

#if defined(__SSE2__)
#define SIMD_SKIP(c, thr, SET1, SUBS)                                                                                \
    {                                                                                                                \
        __m128i *v = (__m128i *)(void *)(c), t = SET1(thr);                                                          \
        if (CHUNK_QUIET(v, t, SUBS)) {                                                                               \
            __m128i z = _mm_setzero_si128();                                                                         \
            _mm_store_si128(v, z);                                                                                   \
            _mm_store_si128(v + 1, z);                                                                               \
            _mm_store_si128(v + 2, z);                                                                               \
            _mm_store_si128(v + 3, z);                                                                               \
            continue;                                                                                                \
        }                                                                                                            \
    }
#define SET1_8(x) _mm_set1_epi8((char)(uint8_t)(x))
#define SET1_16(x) _mm_set1_epi16((short)(uint16_t)(x))
CPU_BLOCK_WIDTH(uint8_t, 8, SET1_8, _mm_subs_epu8)
CPU_BLOCK_WIDTH(uint16_t, 16, SET1_16, _mm_subs_epu16)
#else
#define SIMD_SKIP(c, thr, SET1, SUBS)
CPU_BLOCK_WIDTH(uint8_t, 8, , )
CPU_BLOCK_WIDTH(uint16_t, 16, , )
#endif

genie_status cpu_block_count(const genie_index *idx, const genie_item *aItem, size_t nItem, uint32_t threshold,
                             uint32_t bound, cpu_block_scratch *s, select_heap *heap)
{
    if (!s->pCount) {
        /* 64-byte aligned for the SIMD scan; zero between queries. */
        void *p;
        if (posix_memalign(&p, 64, CPU_BLOCK_BYTES))
            return GENIE_ENOMEM;
        s->pCount = memset(p, 0, CPU_BLOCK_BYTES);
    }
    size_t nCursor = 0;
    for (size_t j = 0; j < nItem; j++) {
        size_t first, end;
        index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
        for (size_t l = first; l < end; l++) {
            if (nCursor == s->nCursorCap) {
                size_t cap = s->nCursorCap ? 2 * s->nCursorCap : 64;
                cpu_cursor *a = realloc(s->aCursor, cap * sizeof *a);
                if (!a)
                    return GENIE_ENOMEM;
                s->aCursor = a;
                s->nCursorCap = cap;
            }
            s->aCursor[nCursor++] = (cpu_cursor){idx->aPosting + idx->aListOffset[l],
                                                 idx->aPosting + idx->aListOffset[l + 1], aItem[j].weight};
        }
    }
    /* Counts never exceed the bound: a threshold above it leaves nothing (and a cutoff fits T). */
    if (threshold > bound)
        return GENIE_OK;
    if (bound <= UINT8_MAX)
        count_blocks_8((uint8_t *)s->pCount, s->aCursor, nCursor, idx->info.n_objects, threshold, heap);
    else
        count_blocks_16((uint16_t *)s->pCount, s->aCursor, nCursor, idx->info.n_objects, threshold, heap);
    return GENIE_OK;
}

void cpu_block_scratch_free(cpu_block_scratch *s)
{
    free(s->pCount);
    free(s->aCursor);
}
