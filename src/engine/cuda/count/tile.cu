/*
 * The tile layout, the default of the `cuda` backend (docs/CUDA.md): one thread
 * block per (query, tile of TILE_OBJECTS object ids) keeps the tile's
 * counters as 16-bit fields in shared memory, finds the tile's exact
 * top-k, and one block per query merges the tiles' candidates.
 *
 * Why: in the paper's layout (cpq.cu) every posting is a global atomic on
 * a per-query Bitmap Counter much larger than L2, and the Gate is a
 * per-query hot spot.  Here increments are shared-memory atomics; global
 * memory sees the postings (coalesced, read once per query, and shared in
 * L2 by the queries of a batch that scan the same lists: blocks are
 * ordered tile-major, so the blocks of one tile run together) and at most
 * k candidates per tile.
 *
 * Per (query q, tile t) block, tile_count_kernel:
 *   1. counting.  The query's units are its lists (PLAN_LISTS); a list's
 *      segment in tile t comes from its tile row (two loads) or a binary
 *      search over the list's 32-bit ids (short lists, see
 *      engine/tile_lists.h).  The segments of up to TILE_BLOCK lists are
 *      flattened by a block prefix sum of their lengths, and each warp
 *      takes TILE_UNROLL * 32 consecutive flattened postings at a time
 *      (TILE_UNROLL loads in flight per thread), so short and long
 *      segments alike keep the lanes busy.  The postings it reads are the
 *      16-bit tile-local ids (id mod TILE_OBJECTS, 2 bytes a posting)
 *      where the index has them, else the 32-bit ids (a streamed part; or
 *      a benchmark's choice, tile_testing_set_variant), the same counts
 *      either way.  The counter of tile-local id o is 16-bit field o >> 14
 *      of word o & 16383 (consecutive ids fall in consecutive banks); an
 *      increment is atomicAdd(w << 16 * field) on the word, exact because
 *      the query's count bound is at most TILE_MAX_BOUND: no carry ever
 *      leaves a field.  Optionally (a compile-time variant chosen at run
 *      time, for benchmarks) the lanes of a warp that hit the same word
 *      add their increments first (__match_any_sync) and one of them
 *      does the atomic: fewer conflicting atomics where many postings of
 *      one warp step hit the same objects, more instructions everywhere.
 *      With a bitmap of allowed objects (engine/filter.h), the counters
 *      of the tile's objects it does not allow are then cleared
 *      (tile_mask), so the steps below see the allowed objects alone.
 *   2. threshold.  kth = the largest v >= the query's min count with
 *      #{counters >= v} >= k, by bisection between the min count and the
 *      tile's largest count (each step one block-wide counting pass over
 *      shared memory, two counters per 32-bit SIMD compare); the min count
 *      itself when fewer than k counters reach it.
 *   3. candidates.  Every counter above kth (fewer than k) and the ties at
 *      kth with the smallest ids, at most k in all, written in id order
 *      (a block prefix sum over the threads' id ranges), and their number:
 *      exactly the tile's top-k in the CPU's order.
 * Per query, tile_merge_kernel: the same bisection over all candidates
 * gives the query's k-th count, the candidates above it are gathered and
 * sorted, the ties follow in id order (tiles in order, each in id order).
 *
 * Why the answer is exact: an object of the query's top-k (count desc, id
 * asc, count >= min count) has fewer than k objects before it in that
 * order among all objects, hence fewer than k within its tile, so it is
 * one of its tile's candidates; the top-k of the candidates is therefore
 * the top-k of all objects.
 *
 * Queries whose count bound exceeds TILE_MAX_BOUND take the paper's layout
 * (engine_cuda_cpq_paper_search) for the whole request.
 */
#include "engine/cuda/count/topk_device.cuh"
#include "engine/cuda/common/cuda_entry.h"

#define TILE_BLOCK 512u
#define TILE_WARPS (TILE_BLOCK / 32u)
#define TILE_WORDS (TILE_OBJECTS / 2u)             /* two 16-bit counters a word */
#define TILE_WORDS_PER_THREAD (TILE_WORDS / TILE_BLOCK) /* 32 */
#define TILE_UNROLL 8u
#define TILE_MAX_BOUND 65535u
/* Blocks resident per SM: 3 x (64 KB counters + 8 KB) fits Hopper's 228 KB. */
#define TILE_MIN_BLOCKS 3

typedef struct tile_args {
    const void *d_aPost;          /* the postings the kernel counts: uint16_t tile-local ids or uint32_t ids */
    const uint32_t *d_aShortPost; /* the 32-bit ids a short list's binary search reads ... */
    const uint64_t *d_aShortOff;  /* ... list l's from d_aShortPost + d_aShortOff[l] */
    const uint64_t *d_aListOffset;
    const uint32_t *d_aListRow;
    const uint32_t *d_aTileOff;
    const cuda_unit *d_aUnit;
    const uint32_t *d_aQueryUnit; /* nQuery + 1: query q's units are [q], [q + 1]) */
    const uint32_t *d_aThreshold; /* nQuery: min count, >= 1 */
    const uint32_t *d_aAllow;     /* allowed objects (cuda_batch.d_aAllow), or NULL */
    uint32_t *d_aNCand;           /* nQuery * nTile */
    genie_hit *d_aCand;           /* nQuery * nTile rows of nCandPerTile */
    genie_hit *d_aHit;
    cuda_query_info *d_aInfo;
    uint32_t nQuery, nTile, tileFirst, nCandPerTile, k;
} tile_args;

/* Block-wide sum / max of x over TILE_BLOCK threads; same result in all. */
__device__ static uint32_t tile_reduce(uint32_t x, int isMax)
{
    __shared__ uint32_t s_part[TILE_WARPS];
    for (uint32_t o = 16; o > 0; o >>= 1) {
        uint32_t y = __shfl_xor_sync(FULL_MASK, x, o);
        x = isMax ? max(x, y) : x + y;
    }
    if ((threadIdx.x & 31u) == 0)
        s_part[threadIdx.x >> 5] = x;
    __syncthreads();
    uint32_t r = 0;
    for (uint32_t i = 0; i < TILE_WARPS; i++)
        r = isMax ? max(r, s_part[i]) : r + s_part[i];
    __syncthreads(); /* s_part is reused by the next call */
    return r;
}

/* Exclusive prefix sum of a 64-bit x over TILE_BLOCK threads; *pTotal gets the sum. */
__device__ static uint64_t tile_exclusive_sum(uint64_t x, uint64_t *pTotal)
{
    return block_exclusive_scan<uint64_t, TILE_WARPS>(x, pTotal);
}

/* First index of post[0..n) whose id is >= key (n when none). */
__device__ static uint32_t lower_bound_id(const uint32_t *post, uint32_t n, uint64_t key)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (__ldg(post + mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The postings of unit @p u's list that fall in tile @p t: [*pBegin, *pBegin + *pLen). */
__device__ static void tile_segment(const tile_args &a, cuda_unit u, uint32_t t, uint64_t *pBegin, uint32_t *pLen)
{
    uint64_t off = a.d_aListOffset[u.iBegin];
    uint32_t b = 0, e = u.nPosting;
    if (a.nTile > 1) {
        uint32_t row = a.d_aListRow[u.iBegin];
        if (row != TILE_NO_ROW) {
            const uint32_t *r = a.d_aTileOff + (uint64_t)row * (a.nTile + 1u);
            b = r[t];
            e = r[t + 1u];
        } else {
            const uint32_t *post = a.d_aShortPost + a.d_aShortOff[u.iBegin];
            b = lower_bound_id(post, u.nPosting, (uint64_t)t << TILE_LOG2);
            e = b + lower_bound_id(post + b, u.nPosting - b, (uint64_t)(t + 1u) << TILE_LOG2);
        }
    }
    *pBegin = off + b;
    *pLen = e - b;
}

/*
 * Warp-aggregated increment: the lanes whose @p word is the same add their
 * @p inc (0 for a lane with nothing to add) and the lowest of them does one
 * atomicAdd of the sum.  The sum is exact: each field's share is part of
 * that counter's final count, at most TILE_MAX_BOUND, so it never carries
 * into the next field.  All 32 lanes call it (warp-uniform control flow).
 * The segmented sum is Westphal's "reduce_peers" (NVIDIA developer blog,
 * "Voting and Shuffling to Optimize Atomic Operations"): log2(group size)
 * rounds of shuffles.
 */
__device__ static void tile_add_aggregated(uint32_t *s_cnt, uint32_t word, uint32_t inc)
{
#if __CUDA_ARCH__ < 700 /* no __match_any_sync before Volta: plain atomics */
    if (inc)
        atomicAdd(&s_cnt[word], inc);
#else
    uint32_t lane = threadIdx.x & 31u;
    uint32_t key = inc ? word : TILE_WORDS + lane; /* idle lanes are groups of their own */
    uint32_t peers = __match_any_sync(FULL_MASK, key);
    uint32_t first = __ffs(peers) - 1u, rank = __popc(peers & ((1u << lane) - 1u));
    uint32_t higher = peers & ~((2u << lane) - 1u); /* the group's lanes above this one */
    while (__any_sync(FULL_MASK, higher != 0)) {
        uint32_t next = __ffs(higher); /* 1 + the next lane above, or 0 */
        uint32_t x = __shfl_sync(FULL_MASK, inc, next ? next - 1u : lane);
        if (next)
            inc += x;
        /* Lanes of odd rank have passed their sum on; the next round skips them. */
        higher &= ~__ballot_sync(FULL_MASK, rank & 1u);
        rank >>= 1;
    }
    if (lane == first && key < TILE_WORDS)
        atomicAdd(&s_cnt[word], inc);
#endif
}

/*
 * The postings base + 32 r + lane (r < TILE_UNROLL) of a chunk's
 * flattening (see tile_count_chunk) into aV[r] as weight << 16 | tile-local
 * id (weight <= 255, id < 2^15), 0 past the end.  @p lo is the segment of
 * posting base; each step of 32 moves on from the last (one broadcast load
 * while the 32 stay in one segment, a binary search over the later
 * segments when they leave it), and each lane walks to its own segment
 * from there (fewer than 32 steps).  Warp-uniform except the lanes' walks.
 */
template <typename P>
__device__ static __forceinline__ void tile_gather_mixed(const P *post, const uint64_t *s_base, const uint32_t *s_end,
                                                         const uint32_t *s_w, uint32_t nChunk, uint32_t total,
                                                         uint32_t base, uint32_t lo, uint32_t *aV)
{
    uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (uint32_t r = 0; r < TILE_UNROLL; r++) {
        uint32_t b = base + r * 32u, p = b + lane;
        aV[r] = 0;
        if (b >= total)
            continue;
        if (s_end[lo] <= b) { /* the first segment ending after b */
            uint32_t l = lo + 1u, h = nChunk - 1u;
            while (l < h) {
                uint32_t mid = (l + h) >> 1;
                if (s_end[mid] > b)
                    h = mid;
                else
                    l = mid + 1u;
            }
            lo = l;
        }
        if (p < total) {
            uint32_t j = lo;
            while (s_end[j] <= p)
                j++;
            aV[r] = s_w[j] << 16 | ((uint32_t)__ldg(post + (s_base[j] + p)) & (TILE_OBJECTS - 1u));
        }
    }
}

/*
 * Count the flattened segments of one chunk: s_end[j] is the end of
 * segment j in the flattened order (inclusive prefix sum), posting p of the
 * flattening is post[s_base[j] + p].  A warp takes TILE_UNROLL * 32
 * consecutive postings; one binary search finds the segment of the first.
 * When they all lie in that segment (the common case on long lists) their
 * loads go out back to back, else tile_gather_mixed finds each one's
 * segment.  Warp-uniform loops; no barrier.
 */
template <typename P, bool AGGREGATE>
__device__ static void tile_count_chunk(const tile_args &a, uint32_t *s_cnt, const uint64_t *s_base,
                                        const uint32_t *s_end, const uint32_t *s_w, uint32_t nChunk, uint32_t total)
{
    const P *post = (const P *)a.d_aPost;
    uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    for (uint32_t base = warp * 32u * TILE_UNROLL; base < total; base += TILE_BLOCK * TILE_UNROLL) {
        uint32_t lo = 0, hi = nChunk - 1u; /* the first segment ending after base */
        while (lo < hi) {
            uint32_t mid = (lo + hi) >> 1;
            if (s_end[mid] > base)
                hi = mid;
            else
                lo = mid + 1u;
        }
        uint32_t aV[TILE_UNROLL]; /* weight << 16 | tile-local id, 0 when none */
        if (s_end[lo] >= base + 32u * TILE_UNROLL) {
            const P *q = post + (s_base[lo] + base + lane);
            uint32_t w = s_w[lo] << 16;
#pragma unroll
            for (uint32_t r = 0; r < TILE_UNROLL; r++)
                aV[r] = w | ((uint32_t)__ldg(q + 32u * r) & (TILE_OBJECTS - 1u));
        } else {
            tile_gather_mixed(post, s_base, s_end, s_w, nChunk, total, base, lo, aV);
        }
#pragma unroll
        for (uint32_t r = 0; r < TILE_UNROLL; r++) {
            uint32_t word = aV[r] & (TILE_WORDS - 1u), inc = (aV[r] >> 16) << ((aV[r] >> 14 & 1u) << 4);
            if (AGGREGATE) {
                if (base + r * 32u < total) /* warp-uniform */
                    tile_add_aggregated(s_cnt, word, inc);
            } else if (inc) {
                atomicAdd(&s_cnt[word], inc);
            }
        }
    }
}

/*
 * Clear the counters of the tile's objects that the bitmap does not allow,
 * so that the selection below ranks the allowed ones alone.  Thread i owns
 * words [32 i, 32 i + 32), as in tile_emit: their low fields are ids
 * tileLo + 32 i + j, one 32-bit word of the bitmap, their high fields
 * ids tileLo + 16384 + 32 i + j, another.  It walks them 16 bytes at a
 * time from a rotated start, as tile_emit does: in order, the 8 threads of
 * a 16-byte access phase would hit the same banks, an 8-way conflict on
 * every load and store of the pass.  Four words whose 8 counters are all
 * allowed are left alone, four with none allowed are zeroed unread.  No
 * barrier inside; the caller syncs before the counters are read by other
 * threads.
 */
__device__ static void tile_mask(uint32_t *s_cnt, const uint32_t *d_aAllow, uint32_t tileLo)
{
    uint32_t w0 = threadIdx.x * TILE_WORDS_PER_THREAD;
    uint32_t lo = __ldg(d_aAllow + ((tileLo + w0) >> 5)), hi = __ldg(d_aAllow + ((tileLo + 16384u + w0) >> 5));
    if ((lo & hi) == 0xffffffffu)
        return;
    for (uint32_t i = 0; i < TILE_WORDS_PER_THREAD / 4u; i++) {
        uint32_t j = (i + threadIdx.x) & (TILE_WORDS_PER_THREAD / 4u - 1u);
        uint32_t l = lo >> (4u * j) & 15u, h = hi >> (4u * j) & 15u;
        uint4 *p = (uint4 *)(s_cnt + w0 + 4u * j);
        if ((l & h) == 15u)
            continue;
        if ((l | h) == 0) {
            *p = make_uint4(0, 0, 0, 0);
            continue;
        }
        uint4 x = *p;
        /* Word e's keep mask: its low (high) 16 bits where its low (high) object is allowed. */
        x.x &= ((0u - (l & 1u)) & 0xffffu) | ((0u - (h & 1u)) & 0xffff0000u);
        x.y &= ((0u - (l >> 1 & 1u)) & 0xffffu) | ((0u - (h >> 1 & 1u)) & 0xffff0000u);
        x.z &= ((0u - (l >> 2 & 1u)) & 0xffffu) | ((0u - (h >> 2 & 1u)) & 0xffff0000u);
        x.w &= ((0u - (l >> 3)) & 0xffffu) | ((0u - (h >> 3)) & 0xffff0000u);
        *p = x;
    }
}

/* Counters of the tile >= v (1 <= v <= 65535); all threads, same result. */
__device__ static uint32_t tile_count_ge(const uint32_t *s_cnt, uint32_t v)
{
    uint32_t vv = v | v << 16, n = 0;
    for (uint32_t i = threadIdx.x * 4u; i < TILE_WORDS; i += TILE_BLOCK * 4u) {
        uint4 x = *(const uint4 *)(s_cnt + i);
        n += __popc(__vcmpgeu2(x.x, vv)) + __popc(__vcmpgeu2(x.y, vv)) + __popc(__vcmpgeu2(x.z, vv)) +
             __popc(__vcmpgeu2(x.w, vv));
    }
    return tile_reduce(n >> 4, 0); /* 16 set bits per counter */
}

/* The tile's largest count; all threads, same result. */
__device__ static uint32_t tile_max_count(const uint32_t *s_cnt)
{
    uint32_t m = 0;
    for (uint32_t i = threadIdx.x * 4u; i < TILE_WORDS; i += TILE_BLOCK * 4u) {
        uint4 x = *(const uint4 *)(s_cnt + i);
        m = __vmaxu2(m, __vmaxu2(__vmaxu2(x.x, x.y), __vmaxu2(x.z, x.w)));
    }
    return tile_reduce(max(m & 0xffffu, m >> 16), 1);
}

/*
 * Write the tile's candidates in id order: counters above kth, then (in id
 * order among them) the ties at kth while fewer than kk candidates.  Thread
 * i owns words [32 i, 32 i + 32): ids 32 i + j (low fields) and
 * 16384 + 32 i + j (high fields).
 */
__device__ static void tile_emit(const uint32_t *s_cnt, uint32_t kth, uint32_t kk, uint32_t tileLo, genie_hit *out,
                                 uint32_t *pN)
{
    uint32_t w0 = threadIdx.x * TILE_WORDS_PER_THREAD, kk2 = kth | kth << 16;
    uint32_t aLo = 0, tLo = 0, aHi = 0, tHi = 0;
    for (uint32_t i = 0; i < TILE_WORDS_PER_THREAD / 4u; i++) {
        /* Rotated start: the 8 threads of a 16-byte access phase hit distinct banks. */
        uint32_t j = (i + threadIdx.x) & (TILE_WORDS_PER_THREAD / 4u - 1u);
        uint4 x = *(const uint4 *)(s_cnt + w0 + 4u * j);
        uint32_t aX[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
        for (uint32_t e = 0; e < 4; e++) {
            uint32_t gt = __vcmpgtu2(aX[e], kk2), eq = __vcmpeq2(aX[e], kk2);
            aLo += gt & 1u;
            aHi += gt >> 31;
            tLo += eq & 1u;
            tHi += eq >> 31;
        }
    }
    /* Four 16-bit fields: no field sum exceeds 16384, so none carries into the next. */
    uint64_t total, ex = tile_exclusive_sum(aLo | tLo << 16 | (uint64_t)aHi << 32 | (uint64_t)tHi << 48, &total);
    uint32_t totALo = (uint32_t)total & 0xffffu, totTLo = (uint32_t)(total >> 16) & 0xffffu;
    uint32_t totAHi = (uint32_t)(total >> 32) & 0xffffu, totTHi = (uint32_t)(total >> 48);
    uint32_t nAbove = totALo + totAHi, r = min(kk - nAbove, totTLo + totTHi);
    if (threadIdx.x == 0)
        *pN = nAbove + r;
    for (uint32_t f = 0; f < 2; f++) {
        uint32_t above = f == 0 ? (uint32_t)ex & 0xffffu : totALo + ((uint32_t)(ex >> 32) & 0xffffu);
        uint32_t ties = f == 0 ? (uint32_t)(ex >> 16) & 0xffffu : totTLo + (uint32_t)(ex >> 48);
        /* Only threads with something to write walk their words (usually few: ties past r are not). */
        if (f == 0 ? aLo == 0 && (tLo == 0 || ties >= r) : aHi == 0 && (tHi == 0 || ties >= r))
            continue;
        for (uint32_t j = 0; j < TILE_WORDS_PER_THREAD / 4u; j++) {
            uint4 x = *(const uint4 *)(s_cnt + w0 + 4u * j);
            uint32_t aX[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
            for (uint32_t e = 0; e < 4; e++) {
                uint32_t c = (aX[e] >> (16u * f)) & 0xffffu;
                if (c < kth || (c == kth && ties >= r)) {
                    ties += c == kth;
                    continue;
                }
                out[above + min(ties, r)] = genie_hit{tileLo + (f << 14) + w0 + 4u * j + e, c};
                if (c > kth)
                    above++;
                else
                    ties++;
            }
        }
    }
}

/*
 * One block per (query, tile); see the top of the file.  All syncs are
 * block-uniform.  P: the type of the postings read (uint16_t tile-local
 * ids or uint32_t ids); AGGREGATE: warp-aggregated increments.
 */
template <typename P, bool AGGREGATE>
__global__ void __launch_bounds__(TILE_BLOCK, TILE_MIN_BLOCKS) tile_count_kernel(tile_args a)
{
    extern __shared__ uint4 s_dyn[]; /* TILE_WORDS counters */
    __shared__ uint64_t s_base[TILE_BLOCK];
    __shared__ uint32_t s_end[TILE_BLOCK], s_w[TILE_BLOCK];
    uint32_t *s_cnt = (uint32_t *)s_dyn;
    uint32_t iQuery = blockIdx.x % a.nQuery, t = a.tileFirst + blockIdx.x / a.nQuery;
    for (uint32_t i = threadIdx.x; i < TILE_WORDS / 4u; i += TILE_BLOCK)
        s_dyn[i] = make_uint4(0, 0, 0, 0);
    uint32_t u0 = a.d_aQueryUnit[iQuery], u1 = a.d_aQueryUnit[iQuery + 1u];
    for (uint32_t c = u0; c < u1; c += TILE_BLOCK) {
        uint32_t nChunk = min(u1 - c, TILE_BLOCK), len = 0, w = 0;
        uint64_t begin = 0, total;
        if (threadIdx.x < nChunk) {
            cuda_unit u = a.d_aUnit[c + threadIdx.x];
            w = u.uQueryWeight & 255u;
            tile_segment(a, u, t, &begin, &len);
        }
        /* A chunk flattens at most TILE_BLOCK * TILE_OBJECTS = 2^24 postings: 32 bits suffice. */
        uint32_t before = (uint32_t)tile_exclusive_sum(len, &total);
        s_base[threadIdx.x] = begin - before; /* modulo 2^64: s_base + p is the posting */
        s_end[threadIdx.x] = before + len;
        s_w[threadIdx.x] = w;
        __syncthreads(); /* also orders the zeroing before the first increment */
        tile_count_chunk<P, AGGREGATE>(a, s_cnt, s_base, s_end, s_w, nChunk, (uint32_t)total);
        __syncthreads();
    }
    if (a.d_aAllow) { /* uniform */
        tile_mask(s_cnt, a.d_aAllow, t << TILE_LOG2);
        __syncthreads();
    }
    uint64_t iRow = (uint64_t)iQuery * a.nTile + t;
    uint32_t thr = a.d_aThreshold[iQuery], top = tile_max_count(s_cnt);
    if (top < thr) {
        if (threadIdx.x == 0)
            a.d_aNCand[iRow] = 0;
        return;
    }
    uint32_t lo = thr, hi = top + 1u; /* #(>= lo) >= k or lo == thr; #(>= hi) < k */
    while (hi - lo > 1u) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (tile_count_ge(s_cnt, mid) >= a.k)
            lo = mid;
        else
            hi = mid;
    }
    tile_emit(s_cnt, lo, a.nCandPerTile, t << TILE_LOG2, a.d_aCand + iRow * a.nCandPerTile, &a.d_aNCand[iRow]);
}

/* Candidates of one query with a count >= v; all CUDA_BLOCK threads, same result. */
__device__ static uint32_t merge_count_ge(const genie_hit *cand, const uint32_t *nCand, const tile_args &a,
                                          uint32_t v)
{
    uint32_t n = 0, total;
    for (uint32_t t = 0; t < a.nTile; t++)
        for (uint32_t i = threadIdx.x; i < nCand[t]; i += CUDA_BLOCK)
            n += cand[(uint64_t)t * a.nCandPerTile + i].count >= v;
    block_exclusive_sum(n, &total);
    return total;
}

/* One block (CUDA_BLOCK threads) per query: the top-k of its tiles' candidates. */
__global__ void __launch_bounds__(CUDA_BLOCK) tile_merge_kernel(tile_args a)
{
    __shared__ uint32_t s_top, s_nAbove;
    uint32_t iQuery = blockIdx.x;
    const genie_hit *cand = a.d_aCand + (uint64_t)iQuery * a.nTile * a.nCandPerTile;
    const uint32_t *nCand = a.d_aNCand + (uint64_t)iQuery * a.nTile;
    genie_hit *out = a.d_aHit + (uint64_t)iQuery * a.k;
    cuda_query_info *info = &a.d_aInfo[iQuery];
    if (threadIdx.x == 0) {
        s_top = 0;
        s_nAbove = 0;
    }
    __syncthreads();
    uint32_t m = 0;
    for (uint32_t t = 0; t < a.nTile; t++)
        for (uint32_t i = threadIdx.x; i < nCand[t]; i += CUDA_BLOCK)
            m = max(m, cand[(uint64_t)t * a.nCandPerTile + i].count);
    atomicMax(&s_top, m);
    __syncthreads();
    uint32_t top = s_top, thr = a.d_aThreshold[iQuery];
    if (top < thr) { /* no candidate at all (they are all >= thr) */
        if (threadIdx.x == 0)
            info->nHit = 0;
        return;
    }
    uint32_t lo = thr, hi = top + 1u;
    while (hi - lo > 1u) {
        uint32_t mid = lo + (hi - lo) / 2u;
        if (merge_count_ge(cand, nCand, a, mid) >= a.k)
            lo = mid;
        else
            hi = mid;
    }
    uint32_t kth = lo;
    for (uint32_t t = 0; t < a.nTile; t++) {
        for (uint32_t i = threadIdx.x; i < nCand[t]; i += CUDA_BLOCK) {
            genie_hit h = cand[(uint64_t)t * a.nCandPerTile + i];
            if (h.count > kth)
                out[atomicAdd(&s_nAbove, 1u)] = h; /* fewer than k above kth */
        }
    }
    __syncthreads();
    uint32_t nAbove = s_nAbove;
    if (nAbove <= TOPK_SORT_MAX)
        topk_sort_hits(out, nAbove);
    /* Ties at kth in id order: tiles in order, each tile's candidates in id order. */
    uint32_t r = a.k - nAbove, found = 0;
    for (uint32_t t = 0; t < a.nTile && found < r; t++) {
        uint32_t n = nCand[t];
        for (uint32_t b = 0; b < n && found < r; b += CUDA_BLOCK) {
            uint32_t i = b + threadIdx.x, total;
            genie_hit h = i < n ? cand[(uint64_t)t * a.nCandPerTile + i] : genie_hit{0, 0};
            uint32_t isTie = i < n && h.count == kth;
            uint32_t pos = found + block_exclusive_sum(isTie, &total);
            if (isTie && pos < r)
                out[nAbove + pos] = h;
            found += total;
        }
    }
    if (threadIdx.x == 0) {
        info->nAbove = nAbove;
        info->nHit = nAbove + min(found, r);
    }
}

#ifdef GENIE_TESTING
#include "engine/cuda/common/cuda_testing.h"

/* The variant of the counting kernel (tile_testing_set_variant): 32-bit ids, warp aggregation. */
static int gTileWide, gTileAggregate;

extern "C" void tile_testing_set_variant(int widePostings, int warpAggregate)
{
    gTileWide = widePostings;
    gTileAggregate = warpAggregate;
}
#else
/* A release build runs the default variant alone. */
#define gTileWide 0
#define gTileAggregate 0
#endif

static uint32_t tile_cand_per_tile(const engine_request *req)
{
    return req->k < TILE_OBJECTS ? req->k : TILE_OBJECTS;
}

/* Per query: its unit offset and min count, its candidate counts and rows, and alignment slack. */
static uint64_t tile_query_bytes(const engine_request *req, size_t i, unsigned shift)
{
    (void)i;
    (void)shift;
    const cuda_index *dev = (const cuda_index *)cuda_slot_state(req->idx, req->device);
    uint64_t nTile = dev->nTile;
    return 2 * sizeof(uint32_t) + nTile * sizeof(uint32_t) + nTile * tile_cand_per_tile(req) * sizeof(genie_hit) +
           3 * CUDA_ALIGN;
}

static genie_status tile_run(const cuda_batch *b)
{
    const engine_request *req = b->req;
    const cuda_index *dev = (const cuda_index *)cuda_slot_state(req->idx, req->device);
    genie_status rc = GENIE_OK;
    uint32_t nQuery = b->nQuery;
    /* 16-bit tile-local ids where the index has them and no benchmark asks for the 32-bit ones. */
    int wide = gTileWide || !dev->d_aLocal;
    if (wide && !b->d_aPosting)
        return util_error(GENIE_EGPU, "CUDA c-PQ tiles: the 32-bit postings are not on the device");
    void (*kernel)(tile_args) = wide ? (gTileAggregate ? tile_count_kernel<uint32_t, true>
                                                       : tile_count_kernel<uint32_t, false>)
                                     : (gTileAggregate ? tile_count_kernel<uint16_t, true>
                                                       : tile_count_kernel<uint16_t, false>);
    /* Pinned host (the driver's, valid until its sync): [unit offsets (nQuery + 1) | min counts (nQuery)]. */
    uint32_t *h_aQueryUnit = b->h_aAux, *h_aThreshold = b->h_aAux + nQuery + 1;
    for (uint32_t j = 0, u = 0; j <= nQuery; j++) {
        while (u < b->nUnit && (b->h_aUnit[u].uQueryWeight >> 8) < j)
            u++;
        h_aQueryUnit[j] = u;
    }
    for (uint32_t j = 0; j < nQuery; j++)
        h_aThreshold[j] = engine_query_threshold(req->q, req->first + b->aQuery[j]);

    tile_args a;
    char *p = (char *)b->d_scratch;
    a.d_aPost = wide ? (const void *)b->d_aPosting : (const void *)dev->d_aLocal;
    a.d_aShortPost = wide ? b->d_aPosting : dev->d_aShortPost;
    a.d_aShortOff = wide ? dev->d_aListOffset : dev->d_aShortOff;
    a.d_aListOffset = dev->d_aListOffset;
    a.d_aListRow = dev->d_aListRow;
    a.d_aTileOff = dev->d_aTileOff;
    a.d_aUnit = b->d_aUnit;
    a.d_aQueryUnit = (const uint32_t *)p;
    a.d_aThreshold = (const uint32_t *)p + nQuery + 1;
    a.d_aAllow = b->d_aAllow;
    p += cuda_align((2 * (uint64_t)nQuery + 1) * sizeof(uint32_t));
    a.nQuery = nQuery;
    a.nTile = dev->nTile;
    a.nCandPerTile = tile_cand_per_tile(req);
    a.k = req->k;
    a.d_aNCand = (uint32_t *)p;
    p += cuda_align((uint64_t)nQuery * a.nTile * sizeof(uint32_t));
    a.d_aCand = (genie_hit *)p;
    a.d_aHit = b->d_aHit;
    a.d_aInfo = b->d_aInfo;
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync((void *)a.d_aQueryUnit, b->h_aAux, (2 * (size_t)nQuery + 1) * sizeof(uint32_t),
                                      cudaMemcpyHostToDevice, b->stream), done);
    CUDA_TRY_GOTO(rc, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)(TILE_WORDS * sizeof(uint32_t))), done);
    {
        /* Grids of at most 2^31 - 1 blocks: a range of tiles per launch. */
        uint32_t perLaunch = (uint32_t)(0x7fffffffu / nQuery);
        for (uint32_t t0 = 0; t0 < a.nTile; t0 += perLaunch) {
            uint32_t nT = min(a.nTile - t0, perLaunch);
            a.tileFirst = t0;
            kernel<<<nT * nQuery, TILE_BLOCK, TILE_WORDS * sizeof(uint32_t), b->stream>>>(a);
            CUDA_CHECK_LAUNCH(rc, "tile_count_kernel", done);
        }
    }
    cuda_batch_counted(b);
    tile_merge_kernel<<<nQuery, CUDA_BLOCK, 0, b->stream>>>(a);
    CUDA_CHECK_LAUNCH(rc, "tile_merge_kernel", done);
    /* No synchronisation here: the driver's follows the copies back. */
done:
    return rc;
}

/* The 32-bit variant asks the driver for the 32-bit ids (a benchmark's choice; parts have them anyway). */
static const cuda_method tile_method = {"c-PQ tiles", 1, 0, 0, tile_query_bytes, tile_run};
static const cuda_method tile_method_wide = {"c-PQ tiles", 1, 0, 1, tile_query_bytes, tile_run};

extern "C" genie_status engine_cuda_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    for (size_t i = 0; i < req->n; i++)
        if (req->aCountBound[i] > TILE_MAX_BOUND) /* 16-bit counters could overflow */
            return engine_cuda_cpq_paper_search(req, aHit, aN);
    return cuda_run_batches(req, gTileWide ? &tile_method_wide : &tile_method, aHit, aN);
}
