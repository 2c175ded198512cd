/*
 * Blocked match counting with 16-bit counters (see cpu_block.h for the
 * scheme and its contract).
 */
#include "engine/cpu/cpu_block.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "engine/engine.h"
#include "index/index.h"
#include "util/search.h"
#include "util/threads.h"

/* A counter must exceed this to enter the heap now (threshold >= 1). */
static inline uint32_t cutoff(const select_heap *h, uint32_t threshold)
{
    if (h->n < h->k)
        return threshold - 1;
    uint32_t least = (uint32_t)(h->aKey[0] >> 32);
    return least > threshold - 1 ? least : threshold - 1;
}

/* Offer counter @p c of object @p id to @p h if it beats the cutoff @p thr; the cutoff after. */
static inline uint32_t offer(select_heap *h, uint32_t thr, uint32_t threshold, uint32_t c, uint32_t id)
{
    if (c > thr) {
        select_push(h, select_key(c, id));
        thr = cutoff(h, threshold);
    }
    return thr;
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
 * The two counter widths, T = uint8_t (count bounds up to 255, 16,384
 * objects per block) and uint16_t (up to 65,535, 8,192 objects):
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
 *                 once the heap is full; a filter's bitmap skips a chunk
 *                 with no allowed object before it, and the counters of the
 *                 others are visited by their set bits.
 */
#define CPU_BLOCK_WIDTH(T, W, SET1, SUBS)                                                                            \
    static const uint32_t *count_block_##W(T *aCount, const uint32_t *p, const uint32_t *pEnd, uint64_t lim,       \
                                           uint32_t base, T w)                                                       \
    {                                                                                                                \
        /* c[id] is the counter of object id of this block (GCC defines the integer-to-pointer conversion). */  \
        T *c = (T *)(void *)((uintptr_t)aCount - (uintptr_t)base * sizeof(T));                                     \
        while (pEnd - p >= 8 && p[7] < lim) {                                                                        \
            __builtin_prefetch(p + 64);                                                                              \
            c[p[0]] += w;                                                                                            \
            c[p[1]] += w;                                                                                            \
            c[p[2]] += w;                                                                                            \
            c[p[3]] += w;                                                                                            \
            c[p[4]] += w;                                                                                            \
            c[p[5]] += w;                                                                                            \
            c[p[6]] += w;                                                                                            \
            c[p[7]] += w;                                                                                            \
            p += 8;                                                                                                  \
        }                                                                                                            \
        for (; p < pEnd && *p < lim; p++)                                                                            \
            c[*p] += w;                                                                                              \
        return p;                                                                                                    \
    }                                                                                                                \
    static void scan_block_##W(T *aCount, uint32_t nScan, uint32_t base, uint32_t threshold, const uint64_t *aAllow, \
                               select_heap *h)                                                                       \
    {                                                                                                                \
        enum { CHUNK = 64 / sizeof(T) };                                                                             \
        const uint64_t all = CHUNK == 64 ? ~0ull : (1ull << (CHUNK & 63)) - 1;                                       \
        uint32_t thr = cutoff(h, threshold);                                                                         \
        for (uint32_t i = 0; i < nScan; i += CHUNK) {                                                                \
            T *c = aCount + i;                                                                                       \
            /* The chunk's allowed objects: CHUNK bits of one bitmap word (base + i is a multiple of CHUNK). */      \
            uint64_t m = aAllow ? aAllow[(base + i) >> 6] >> ((base + i) & 63) & all : all;                          \
            if (m == 0) {                                                                                            \
                memset(c, 0, 64);                                                                                    \
                continue;                                                                                            \
            }                                                                                                        \
            SIMD_SKIP(c, thr, SET1, SUBS)                                                                            \
            /* All allowed: each counter in turn; else the allowed ones by their bits (no branch on a random bit) */ \
            if (m == all)                                                                                            \
                for (uint32_t j = 0; j < CHUNK; j++)                                                                 \
                    thr = offer(h, thr, threshold, c[j], base + i + j);                                              \
            else                                                                                                     \
                for (; m; m &= m - 1) {                                                                              \
                    uint32_t j = (uint32_t)__builtin_ctzll(m);                                                       \
                    thr = offer(h, thr, threshold, c[j], base + i + j);                                              \
                }                                                                                                    \
            memset(c, 0, 64);                                                                                        \
        }                                                                                                            \
    }                                                                                                                \
    /*                                                                                                               \
     * Count and scan the blocks of [lo, hi) (lo a multiple of the block's objects) for one query whose first        \
     * nBits cursors are bitmaps.                                                                                    \
     */                                                                                                              \
    static void count_range_##W(T *aCount, cpu_cursor *aCursor, size_t nBits, size_t nCursor, uint64_t lo,           \
                                uint64_t hi, uint32_t threshold, const uint64_t *aAllow, select_heap *heap)          \
    {                                                                                                                \
        const uint64_t nPer = CPU_BLOCK_BYTES / sizeof(T);                                                           \
        for (uint64_t base = lo; base < hi; base += nPer) {                                                          \
            uint64_t nIn = hi - base < nPer ? hi - base : nPer, nChunk = 64 / sizeof(T);                             \
            size_t nCounted = nBits;                                                                                 \
            if (nBits)                                                                                               \
                add_bits_##W(aCount, aCursor, nBits, base, (uint32_t)nIn);                                           \
            for (size_t c = nBits; c < nCursor; c++) {                                                               \
                cpu_cursor *u = &aCursor[c];                                                                         \
                const uint32_t *q = count_block_##W(aCount, u->p, u->pEnd, base + nPer, (uint32_t)base, (T)u->weight); \
                nCounted += (size_t)(q - u->p);                                                                      \
                u->p = q;                                                                                            \
                /* The list's next block starts here: fetch it while the others count. */                        \
                __builtin_prefetch(q);                                                                               \
            }                                                                                                        \
            if (nCounted) {                                                                                          \
                scan_block_##W(aCount, (uint32_t)((nIn + nChunk - 1) / nChunk * nChunk), (uint32_t)base, threshold,  \
                               aAllow, heap);                                                                        \
            }                                                                                                        \
        }                                                                                                            \
    }

/*
 * add_bits_W adds the bitmaps of cursors aCur[0 .. nCur) to the counters
 * of the block at @p base (nIn objects): for each 32 (8-bit) or 16 (16-bit)
 * objects, the counters stay in one AVX2 register while each bitmap's
 * 32 or 16 bits are spread to one lane per object (a lane all ones where
 * the bit is set) and the weight is added to the lanes set.  Bitmaps are
 * zero past the last object, and a block's counters hold whole chunks, so
 * the last chunk needs no care.  Only called when cpu_dense_min_length()
 * found AVX2.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define CPU_HAVE_BITS 1
__attribute__((target("avx2"))) static void add_bits_8(uint8_t *aCount, const cpu_cursor *aCur, size_t nCur,
                                                       uint64_t base, uint32_t nIn)
{
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
                                            3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i sel = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    for (uint32_t i = 0; i < nIn; i += 32) {
        __m256i acc = _mm256_load_si256((const __m256i *)(void *)(aCount + i));
        for (size_t c = 0; c < nCur; c++) {
            uint32_t x;
            memcpy(&x, (const unsigned char *)aCur[c].pBits + (base + i) / 8, sizeof x);
            __m256i m = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32((int)x), spread), sel);
            m = _mm256_cmpeq_epi8(m, sel);
            if (aCur[c].weight == 1)
                acc = _mm256_sub_epi8(acc, m);
            else
                acc = _mm256_add_epi8(acc, _mm256_and_si256(m, _mm256_set1_epi8((char)aCur[c].weight)));
        }
        _mm256_store_si256((__m256i *)(void *)(aCount + i), acc);
    }
}

__attribute__((target("avx2"))) static void add_bits_16(uint16_t *aCount, const cpu_cursor *aCur, size_t nCur,
                                                        uint64_t base, uint32_t nIn)
{
    const __m256i sel = _mm256_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
                                          (short)0x8000);
    for (uint32_t i = 0; i < nIn; i += 16) {
        __m256i acc = _mm256_load_si256((const __m256i *)(void *)(aCount + i));
        for (size_t c = 0; c < nCur; c++) {
            uint16_t x;
            memcpy(&x, (const unsigned char *)aCur[c].pBits + (base + i) / 8, sizeof x);
            __m256i m = _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_set1_epi16((short)x), sel), sel);
            if (aCur[c].weight == 1)
                acc = _mm256_sub_epi16(acc, m);
            else
                acc = _mm256_add_epi16(acc, _mm256_and_si256(m, _mm256_set1_epi16((short)aCur[c].weight)));
        }
        _mm256_store_si256((__m256i *)(void *)(aCount + i), acc);
    }
}
#else
#define CPU_HAVE_BITS 0
/* Never called: cpu_dense_min_length() gives no list a bitmap here. */
static void add_bits_8(uint8_t *aCount, const cpu_cursor *aCur, size_t nCur, uint64_t base, uint32_t nIn)
{
    (void)aCount, (void)aCur, (void)nCur, (void)base, (void)nIn;
}
static void add_bits_16(uint16_t *aCount, const cpu_cursor *aCur, size_t nCur, uint64_t base, uint32_t nIn)
{
    (void)aCount, (void)aCur, (void)nCur, (void)base, (void)nIn;
}
#endif

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

/* The bitmap of list @p l in @p d, or NULL. */
static const uint64_t *dense_bits(const cpu_dense *d, uint32_t l)
{
    size_t lo = util_lower_bound_u32(d->aList, 0, d->nList, l);
    return lo < d->nList && d->aList[lo] == l ? d->aBits + lo * d->nWord : NULL;
}

genie_status cpu_block_count(const genie_index *idx, const cpu_dense *d, const uint64_t *aAllow, cpu_block_query *aQ,
                             size_t nQ, cpu_block_scratch *s)
{
    if (!s->pCount) {
        /* 64-byte aligned for the SIMD scan; zero between queries. */
        void *p;
        if (posix_memalign(&p, 64, CPU_BLOCK_BYTES))
            return GENIE_ENOMEM;
        s->pCount = memset(p, 0, CPU_BLOCK_BYTES);
    }
    uint64_t minBits = d && d->nList ? cpu_dense_min_length(idx) : 0;
    size_t nCursor = 0;
    for (size_t i = 0; i < nQ; i++) {
        aQ[i].iCursor = nCursor;
        aQ[i].nBits = 0;
        for (size_t j = 0; j < aQ[i].nItem; j++) {
            if (engine_cancelled(s->cancel))
                return GENIE_ECANCELED;
            const genie_item *it = &aQ[i].aItem[j];
            size_t first, end;
            index_keyword_range(idx, it->lo, it->hi, &first, &end);
            for (size_t l = first; l < end; l++) {
                if (nCursor == s->nCursorCap) {
                    size_t cap = s->nCursorCap ? 2 * s->nCursorCap : 64;
                    cpu_cursor *a = realloc(s->aCursor, cap * sizeof *a);
                    if (!a)
                        return GENIE_ENOMEM;
                    s->aCursor = a;
                    s->nCursorCap = cap;
                }
                uint64_t o = idx->aListOffset[l], oEnd = idx->aListOffset[l + 1];
                const uint64_t *pBits = minBits && oEnd - o >= minBits ? dense_bits(d, (uint32_t)l) : NULL;
                cpu_cursor u = {idx->aPosting + o, idx->aPosting + oEnd, pBits, it->weight};
                size_t iFirst = aQ[i].iCursor + aQ[i].nBits; /* the query's first postings cursor */
                if (pBits && iFirst < nCursor) {
                    /* Bitmaps first: move that postings cursor to the end. */
                    s->aCursor[nCursor++] = s->aCursor[iFirst];
                    s->aCursor[iFirst] = u;
                } else {
                    s->aCursor[nCursor++] = u;
                }
                aQ[i].nBits += pBits != NULL;
            }
        }
        aQ[i].nCursor = nCursor - aQ[i].iCursor;
    }
    /*
     * Block-major order: every query of the batch counts super-block b
     * before any counts b + 1, so the lists' postings in b, shared by many
     * queries, come from the cache rather than from memory.
     */
    uint64_t n = idx->info.n_objects;
    for (uint64_t lo = 0; lo < n; lo += CPU_BLOCK_BYTES) {
        if (engine_cancelled(s->cancel))
            return GENIE_ECANCELED;
        uint64_t hi = n - lo < CPU_BLOCK_BYTES ? n : lo + CPU_BLOCK_BYTES;
        for (size_t i = 0; i < nQ; i++) {
            cpu_block_query *q = &aQ[i];
            /* Counts never exceed the bound: a threshold above it leaves nothing (and a cutoff fits T). */
            if (q->threshold > q->bound)
                continue;
            if (q->bound <= UINT8_MAX)
                count_range_8((uint8_t *)s->pCount, s->aCursor + q->iCursor, q->nBits, q->nCursor, lo, hi,
                              q->threshold, aAllow, q->heap);
            else
                count_range_16((uint16_t *)s->pCount, s->aCursor + q->iCursor, q->nBits, q->nCursor, lo, hi,
                               q->threshold, aAllow, q->heap);
        }
    }
    return GENIE_OK;
}

void cpu_block_scratch_free(cpu_block_scratch *s)
{
    free(s->pCount);
    free(s->aCursor);
}

uint64_t cpu_dense_min_length(const genie_index *idx)
{
#if CPU_HAVE_BITS
    if (__builtin_cpu_supports("avx2"))
        return idx->info.n_objects / CPU_BITS_RATIO + 1;
#endif
    (void)idx;
    return 0;
}

typedef struct dense_fill {
    const genie_index *idx;
    cpu_dense *d;
    size_t next; /* the next list to fill (atomic) */
} dense_fill;

/* Set the bits of the objects of one list after another. */
static void dense_fill_worker(void *ctx, unsigned t)
{
    (void)t;
    dense_fill *j = ctx;
    const cpu_dense *d = j->d;
    for (;;) {
        size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= d->nList)
            return;
        uint64_t *aBits = d->aBits + i * d->nWord;
        const uint32_t *p = j->idx->aPosting + j->idx->aListOffset[d->aList[i]];
        const uint32_t *pEnd = j->idx->aPosting + j->idx->aListOffset[d->aList[i] + 1];
        for (; p < pEnd; p++)
            aBits[*p / 64] |= 1ull << (*p % 64);
    }
}

genie_status cpu_dense_build(const genie_index *idx, const uint32_t *aList, size_t nList, unsigned nThread,
                             cpu_dense *d)
{
    memset(d, 0, sizeof *d);
    if (!nList || !cpu_dense_min_length(idx))
        return GENIE_OK;
    d->nWord = (size_t)((idx->info.n_objects + 63) / 64);
    d->aList = malloc(nList * sizeof *d->aList);
    d->aBits = calloc(nList * d->nWord, sizeof *d->aBits);
    if (!d->aList || !d->aBits) {
        cpu_dense_free(d);
        return GENIE_ENOMEM;
    }
    memcpy(d->aList, aList, nList * sizeof *d->aList);
    d->nList = nList;
    dense_fill j = {idx, d, 0};
    util_parallel_run(nThread < nList ? nThread : (unsigned)nList, dense_fill_worker, &j);
    return GENIE_OK;
}

void cpu_dense_free(cpu_dense *d)
{
    free(d->aList);
    free(d->aBits);
    memset(d, 0, sizeof *d);
}
