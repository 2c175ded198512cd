/*
 * The exact GPU search's selection (exact_select.h; exact_gpu.cu runs it
 * in steps 3 and 4 of its search, Johnson et al. (Faiss) sections 4,
 * 5.1): one block per query over its row of S, in one of two modes.
 *
 * SELECT_BOUND: the row holds the GEMM's products, from which a(x, q)
 * approximates the distance, and the candidates are every vector whose
 * lower bound (a + e) - 2e is at most T = exact_bound_threshold(U), U the
 * k-th smallest upper bound a + e (engine/exact_bound.h).  Usually in one
 * pass over the row (candidates_sampled): a sample's k-th upper bound
 * u0 >= U gives T0 >= T, the pass keeps the few vectors with lower bound
 * <= T0 (global scratch, kept_cap of them a query), and U and the
 * candidates come from those alone.  Otherwise (a sample too large for
 * the base, sample_size 0; the kept overflowing) by radix selection of U
 * on the bounds' 32-bit ordered keys (kth_upper: a histogram of the next
 * 8 bits among the keys that share the prefix found so far picks the
 * bucket holding the k-th key; four passes, the first computing the
 * bounds into the row) and a gather pass.  The candidates go to shared
 * memory; the block computes their direct distances exactly as the CPU
 * does (round-to-nearest intrinsics in the CPU's order, which the
 * compiler may not contract: direct_distance), sorts (distance, id) with
 * the module's block sort (common/block_sort.cuh) and keeps k.
 * exact_bound.h proves the exact top k is among the candidates.  A query
 * whose candidates exceed EXACT_CUDA_MAX_K, or whose bounds are not
 * finite, is flagged FLAG_DIRECT and left to SELECT_FINAL.
 *
 * SELECT_FINAL: the row holds direct distances (exact_gpu.cu's
 * exact_direct_rows, or l1's), selected exactly: radix selection on
 * 64-bit keys, ordered float << 32 | id, until a bucket holds exactly the
 * keys still needed, so ties go to the smaller id without a special case.
 *
 * A base vector that the call's bitmap does not allow has the largest key
 * in every selection (DENIED_KEY) and is never a candidate.
 *
 * Thread contract of exact_select: blockDim.x == SELECT_THREADS; every
 * thread runs every loop and a block takes each branch as a whole (the
 * __syncthreads() are unconditional); k <= EXACT_CUDA_MAX_K, so the
 * gathered keys fit the shared array.  The histogram adds through warp
 * aggregation (__match_any_sync), because in the first passes nearly all
 * keys fall in one or two buckets.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "engine/cuda/common/block_sort.cuh"
#include "engine/cuda/vectors/direct_distance.cuh"
#include "engine/cuda/vectors/exact_bound_gpu.cuh"
#include "engine/cuda/vectors/exact_select.h"

extern "C" {
#include "genie/genie.h"
#include "engine/exact_bound.h"
#include "engine/cuda/common/cuda_entry.h"
}

#define KEPT_MAX 65536u /* candidates_sampled's survivors per query, at most */

/*
 * A base vector that the bitmap does not allow (d_allowed) has the key
 * DENIED_KEY, after every distance's (a distance's key is below it: it
 * would be the NaN 0x7fffffff), so with k at most the allowed count the
 * selections below never take one.
 */
#define DENIED_KEY 0xffffffffu

/* Add @p bin (-1: none) to the shared histogram, one atomic per distinct bin of the warp; every lane calls it. */
static __device__ __forceinline__ void hist_add(uint32_t *hist, int bin, unsigned lane)
{
    unsigned active = __activemask();
    unsigned peers = __match_any_sync(active, bin);
    if (bin >= 0 && lane == (unsigned)(__ffs(peers) - 1))
        atomicAdd(&hist[bin], (uint32_t)__popc(peers));
}

/* Thread 0: the bucket of @p hist holding the *pNeed-th key: appended to *pPrefix, *pNeed made relative to it. */
static __device__ uint32_t pick_bucket(const uint32_t *hist, uint64_t *pPrefix, uint32_t *pNeed)
{
    uint32_t cum = 0, b = 0;
    for (; b < 255 && cum + hist[b] < *pNeed; b++)
        cum += hist[b];
    *pNeed -= cum;
    *pPrefix = (*pPrefix << 8) | b;
    return b;
}

/*
 * The k-th smallest of @p n 32-bit keys by radix selection in four passes
 * of 8 bits (a histogram of the next 8 bits among the keys that share the
 * prefix found so far picks the bucket holding the k-th key); fewer than k
 * keys give 0xffffffff.  keyOf(i, pass) gives key i, in every pass (pass 0
 * first).  Whole block; hist, *pPrefix and *pNeed are shared scratch.
 */
template <typename KeyOf>
static __device__ uint32_t radix_kth32(uint32_t n, uint32_t k, KeyOf keyOf, uint32_t *hist, uint64_t *pPrefix,
                                       uint32_t *pNeed)
{
    uint32_t tid = threadIdx.x, lane = tid & 31;
    for (uint32_t b = tid; b < 256; b += SELECT_THREADS)
        hist[b] = 0;
    if (tid == 0) {
        *pPrefix = 0;
        *pNeed = k;
    }
    __syncthreads();
    for (int pass = 0; pass < 4; pass++) {
        int shift = 24 - 8 * pass;
        uint32_t pre = (uint32_t)*pPrefix;
        for (uint32_t i0 = 0; i0 < n; i0 += SELECT_THREADS) {
            uint32_t i = i0 + tid;
            int bin = -1;
            if (i < n) {
                uint32_t key = keyOf(i, pass);
                if (pass == 0 || (key >> (shift + 8)) == pre)
                    bin = (int)((key >> shift) & 0xff);
            }
            hist_add(hist, bin, lane);
        }
        __syncthreads();
        if (tid == 0)
            pick_bucket(hist, pPrefix, pNeed);
        __syncthreads();
        for (uint32_t b = tid; b < 256; b += SELECT_THREADS)
            hist[b] = 0;
        __syncthreads();
    }
    return (uint32_t)*pPrefix;
}

/*
 * SELECT_BOUND's selection: row[i] becomes the upper bound a + e of base
 * vector i (in place, in the first pass), and the result is the ordered
 * key (d_key) of the k-th smallest of them (radix_kth32).  Whole block.
 */
static __device__ uint32_t kth_upper(float *row, uint32_t nBase, uint32_t k, int metric, const exact_bound *bound,
                                     float c, const float4 *aInfo, float4 qInfo, const uint32_t *allow, uint32_t *hist,
                                     uint64_t *pPrefix, uint32_t *pNeed)
{
    auto keyOf = [&](uint32_t i, int pass) {
        if (pass == 0)
            row[i] = upper_bound(metric, row[i], aInfo[i], qInfo, bound, c);
        return d_allowed(allow, i) ? d_key(row[i]) : DENIED_KEY;
    };
    return radix_kth32(nBase, k, keyOf, hist, pPrefix, pNeed);
}

/* The k-th smallest of the keys a[0 .. n); 0xffffffff when n < k.  Whole block. */
static __device__ uint32_t kth_of_keys(const uint32_t *a, uint32_t n, uint32_t k, uint32_t *hist, uint64_t *pPrefix,
                                       uint32_t *pNeed)
{
    return radix_kth32(n, k, [a](uint32_t i, int) { return a[i]; }, hist, pPrefix, pNeed);
}

/* What candidates_sampled found (block-uniform). */
enum { SAMPLED_OK = 0, SAMPLED_DIRECT = 1, SAMPLED_FALLBACK = 2 };

/*
 * SELECT_BOUND's candidates in one pass over the row instead of kth_upper's
 * four and a gather (Johnson et al. (Faiss) 5.1: select without repeated
 * passes over the distance matrix; here by sampling, so each distance is
 * read once and only a few survivors are written).
 *
 *   1. The upper bounds of nSample base vectors spread over the row give
 *      u0, the k-th smallest of the sample (radix_kth32 over the sample's
 *      keys, written to @p gKept first): the row has at least k upper
 *      bounds <= u0, so U (the row's k-th smallest) <= u0 and
 *      T = exact_bound_threshold(U) <= T0 = exact_bound_threshold(u0).
 *   2. One pass computes every vector's bounds and appends (upper key <<
 *      32 | id) to @p gKept when lower <= T0: a superset of the
 *      candidates {lower <= T}, holding every upper <= u0 (lower <= upper,
 *      u0 <= T0), so the k-th smallest upper kept is U.
 *   3. U is found among the kept keys, then the kept with lower <= T are
 *      gathered into @p aSel (*pnSel of them; more than EXACT_CUDA_MAX_K:
 *      the caller answers the query directly).
 *
 * The check that the k-th kept is <= u0 makes the result exact whatever
 * rounding each evaluation of a bound takes (exact_bound.h: every one is a
 * valid bound): the exact top k then has d <= U <= u0, so lower <= T0 and
 * all of it was kept.  SAMPLED_FALLBACK (the kept overflowed @p cap, T0 is
 * not finite, or the check fails) leaves the row as it was, for
 * kth_upper; SAMPLED_DIRECT: a bound is NaN or T is not finite.  nSample
 * (block-uniform) is at most 2 cap (the sample's 32-bit keys share gKept).
 * Vectors @p allow does not allow are sampled as DENIED_KEY (fewer than k
 * allowed in the sample: u0 is not finite, SAMPLED_FALLBACK) and never
 * kept.  Whole block.
 */
static __device__ int candidates_sampled(const float *row, uint32_t nBase, uint32_t k, uint32_t nSample, int metric,
                                         const exact_bound *bound, float c, const float4 *aInfo, float4 qInfo,
                                         const uint32_t *allow, uint64_t *gKept, uint32_t cap, uint64_t *aSel, uint32_t *pnSel,
                                         uint32_t *pnKept, int *pBad, uint32_t *hist, uint64_t *pPrefix,
                                         uint32_t *pNeed)
{
    uint32_t tid = threadIdx.x;
    uint32_t *gSample = (uint32_t *)gKept;
    if (nSample > nBase)
        nSample = nBase;
    for (uint32_t j = tid; j < nSample; j += SELECT_THREADS) {
        uint32_t i = (uint32_t)((uint64_t)j * nBase / nSample);
        gSample[j] = d_allowed(allow, i) ? d_key(upper_bound(metric, row[i], aInfo[i], qInfo, bound, c)) : DENIED_KEY;
    }
    if (tid == 0) {
        *pnKept = 0;
        *pBad = 0;
    }
    __syncthreads(); /* the sample's keys are visible to the block */
    /* Ends with a barrier: the sample is read before gKept is reused. */
    uint32_t u0 = kth_of_keys(gSample, nSample, k, hist, pPrefix, pNeed);
    float T0 = exact_bound_threshold((genie_metric)metric, d_key_value(u0));
    if (!isfinite(T0))
        return SAMPLED_FALLBACK;
    for (uint32_t i = tid; i < nBase; i += SELECT_THREADS) {
        if (!d_allowed(allow, i))
            continue;
        float4 xi = aInfo[i];
        float e = exact_bound_pair(bound, c, xi.y, xi.z, qInfo.y, qInfo.z);
        float upper = approx_distance(metric, row[i], xi, qInfo) + e;
        float lower = upper - 2.0f * e;
        if (lower <= T0) {
            uint32_t pos = atomicAdd(pnKept, 1u);
            if (pos < cap)
                gKept[pos] = (uint64_t)d_key(upper) << 32 | i;
        } else if (!(lower > T0)) {
            *pBad = 1; /* NaN */
        }
    }
    __syncthreads();
    uint32_t nKept = *pnKept;
    if (*pBad)
        return SAMPLED_DIRECT;
    if (nKept > cap)
        return SAMPLED_FALLBACK;
    uint32_t kth = radix_kth32(nKept, k, [gKept](uint32_t i, int) { return (uint32_t)(gKept[i] >> 32); }, hist,
                               pPrefix, pNeed);
    if (kth > u0) /* fewer than k kept at most u0: the bounds' roundings disagreed */
        return SAMPLED_FALLBACK;
    float T = exact_bound_threshold((genie_metric)metric, d_key_value(kth));
    if (!isfinite(T))
        return SAMPLED_DIRECT;
    if (tid == 0)
        *pnSel = 0;
    __syncthreads();
    for (uint32_t t = tid; t < nKept; t += SELECT_THREADS) {
        uint64_t v = gKept[t];
        uint32_t i = (uint32_t)v;
        float4 xi = aInfo[i];
        float e = exact_bound_pair(bound, c, xi.y, xi.z, qInfo.y, qInfo.z);
        float lower = d_key_value((uint32_t)(v >> 32)) - 2.0f * e;
        if (lower <= T) {
            uint32_t pos = atomicAdd(pnSel, 1u);
            if (pos < EXACT_CUDA_MAX_K)
                aSel[pos] = i;
        }
    }
    __syncthreads();
    return SAMPLED_OK;
}

/*
 * The top bits of the k-th smallest key (float key << 32 | id) of @p row:
 * *pPrefix, *pBits such that exactly k keys have (key >> (64 - bits)) <=
 * prefix.  Whole block; hist is shared scratch.
 */
static __device__ void radix_kth(const float *row, uint32_t nBase, uint32_t k, const uint32_t *allow, uint32_t *hist,
                                 uint64_t *pPrefix, int *pBits, uint32_t *pNeed, int *pDone)
{
    uint32_t tid = threadIdx.x, lane = tid & 31;
    if (tid == 0) {
        *pPrefix = 0;
        *pBits = 0;
        *pNeed = k;
        *pDone = 0;
    }
    __syncthreads();
    for (int pass = 0; pass < 8 && !*pDone; pass++) {
        for (uint32_t b = tid; b < 256; b += SELECT_THREADS)
            hist[b] = 0;
        __syncthreads();
        int shift = 56 - 8 * pass, bits = *pBits;
        uint64_t pre = *pPrefix;
        for (uint32_t i0 = 0; i0 < nBase; i0 += SELECT_THREADS) {
            uint32_t i = i0 + tid;
            int bin = -1;
            if (i < nBase) {
                uint64_t key = (uint64_t)(d_allowed(allow, i) ? d_key(row[i]) : DENIED_KEY) << 32 | i;
                if (bits == 0 || (key >> (64 - bits)) == pre)
                    bin = (int)((key >> shift) & 0xff);
            }
            hist_add(hist, bin, lane);
        }
        __syncthreads();
        if (tid == 0) {
            uint32_t b = pick_bucket(hist, pPrefix, pNeed);
            *pBits += 8;
            *pDone = hist[b] == *pNeed;
        }
        __syncthreads();
    }
}

/*
 * One block per query.  SELECT_BOUND: row = GEMM products; the candidates
 * of exact_bound.h re-ranked by their direct distances; a query flagged
 * FLAG_DIRECT is skipped, one whose candidates overflow (or whose bounds
 * are not finite) is flagged and left for SELECT_FINAL.  SELECT_FINAL:
 * row = direct distances (l1, or exact_direct_rows); the k smallest keys.
 * With @p onlyFlagged, blocks of unflagged queries return at once.
 * @p nSample: SELECT_BOUND's sample for candidates_sampled (sample_size),
 * 0 for kth_upper; aKept + q keptCap: query q's keptCap survivors of
 * candidates_sampled (global scratch).  aCand[q]: candidates re-ranked (SELECT_BOUND; the
 * search's engine_exact_counts).  @p allow: the base vectors allowed (NULL: all).
 */
__global__ void __launch_bounds__(SELECT_THREADS)
exact_select(float *S, uint32_t nBase, int mode, int onlyFlagged, int metric, exact_bound bound, const float4 *aInfo,
             const float4 *aQInfo, uint32_t k, uint32_t nSample, uint64_t *aKept, uint32_t keptCap, const float *x,
             const float *q, uint32_t dim, const float *aXDot, const float *aQDot, const uint32_t *allow, unsigned *aFlag,
             uint32_t *aCand, genie_neighbor *out)
{
    __shared__ uint32_t hist[256];
    __shared__ uint64_t aSel[EXACT_CUDA_MAX_K];
    __shared__ uint64_t prefix;
    __shared__ uint32_t need, nSel, nKept;
    __shared__ int prefixBits, done, bad;
    uint32_t qi = blockIdx.x, tid = threadIdx.x;
    unsigned flag = aFlag[qi];
    if (mode == SELECT_BOUND ? (flag & FLAG_DIRECT) != 0 : onlyFlagged && !(flag & FLAG_DIRECT))
        return; /* uniform over the block */
    float *row = S + (uint64_t)qi * nBase;
    float4 qInfo = aQInfo ? aQInfo[qi] : make_float4(0, 0, 0, 1);
    float c = exact_bound_query_c(&bound, qInfo.y);
    if (tid == 0) {
        nSel = 0;
        bad = 0;
    }
    uint32_t nCand = k;
    if (mode == SELECT_FINAL) {
        radix_kth(row, nBase, k, allow, hist, &prefix, &prefixBits, &need, &done);
        /* Exactly k keys have their top prefixBits bits <= prefix. */
        int bits = prefixBits;
        uint64_t pre = prefix;
        for (uint32_t i = tid; i < nBase; i += SELECT_THREADS) {
            uint64_t key = (uint64_t)(d_allowed(allow, i) ? d_key(row[i]) : DENIED_KEY) << 32 | i;
            if ((key >> (64 - bits)) <= pre)
                aSel[atomicAdd(&nSel, 1u)] = key;
        }
        __syncthreads();
    } else {
        int how = nSample ? candidates_sampled(row, nBase, k, nSample, metric, &bound, c, aInfo, qInfo, allow,
                                               aKept + (uint64_t)qi * keptCap, keptCap, aSel, &nSel, &nKept, &bad,
                                               hist, &prefix, &need)
                          : SAMPLED_FALLBACK;
        if (how == SAMPLED_FALLBACK) {
            __syncthreads(); /* every thread has read the last selection's prefix */
            uint32_t kthKey = kth_upper(row, nBase, k, metric, &bound, c, aInfo, qInfo, allow, hist, &prefix, &need);
            if (tid == 0) {
                nSel = 0;
                bad = 0;
            }
            __syncthreads();
            float T = exact_bound_threshold((genie_metric)metric, d_key_value(kthKey));
            int finite = isfinite(T);
            for (uint32_t i = tid; i < nBase && finite; i += SELECT_THREADS) {
                if (!d_allowed(allow, i))
                    continue;
                float4 xi = aInfo[i];
                float e = exact_bound_pair(&bound, c, xi.y, xi.z, qInfo.y, qInfo.z);
                float lower = row[i] - 2.0f * e; /* the row holds the upper bounds now */
                if (lower <= T) {
                    uint32_t pos = atomicAdd(&nSel, 1u);
                    if (pos < EXACT_CUDA_MAX_K)
                        aSel[pos] = i;
                } else if (!(lower > T)) {
                    bad = 1; /* NaN */
                }
            }
            __syncthreads();
            how = !finite || bad ? SAMPLED_DIRECT : SAMPLED_OK;
        }
        if (how == SAMPLED_DIRECT || nSel > EXACT_CUDA_MAX_K) {
            if (tid == 0)
                aFlag[qi] = flag | FLAG_DIRECT;
            return; /* uniform: shared values read after the barrier */
        }
        nCand = nSel;
        const float *pq = q + (uint64_t)qi * dim;
        float nq = aQDot ? aQDot[qi] : 0.0f;
        for (uint32_t t = tid; t < nCand; t += SELECT_THREADS) {
            uint32_t id = (uint32_t)aSel[t];
            float d = direct_distance(metric, x + (uint64_t)id * dim, pq, dim, aXDot ? aXDot[id] : 0.0f, nq);
            aSel[t] = (uint64_t)d_key(d) << 32 | id;
        }
        if (tid == 0 && aCand)
            aCand[qi] = nCand;
        __syncthreads();
    }
    uint32_t nPad = 1;
    while (nPad < nCand)
        nPad <<= 1;
    for (uint32_t i = nCand + tid; i < nPad; i += SELECT_THREADS)
        aSel[i] = UINT64_MAX;
    __syncthreads();
    block_sort_keys<SELECT_THREADS>((unsigned long long *)aSel, nPad);
    for (uint32_t i = tid; i < k; i += SELECT_THREADS) {
        uint64_t key = aSel[i];
        out[(uint64_t)qi * k + i].id = (uint32_t)key;
        out[(uint64_t)qi * k + i].distance = d_key_value((uint32_t)(key >> 32));
    }
}

/* candidates_sampled's survivors per query: a quarter of the base, at most KEPT_MAX. */
uint32_t kept_cap(uint64_t nBase)
{
    uint64_t c = nBase / 4;
    return c > KEPT_MAX ? KEPT_MAX : c ? (uint32_t)c : 1u;
}

/*
 * exact_select's nSample for candidates_sampled: about sqrt(nBase k) (the
 * sample's selection and the kept's then cost alike), and large enough
 * that the nBase k / nSample keys expected at most its k-th stay under an
 * eighth of kept_cap (room for the bound's margin); a multiple of
 * SELECT_THREADS.  0 (kth_upper's four passes) when that takes more than
 * half the base or than the kept buffer holds.  Either way the answer is
 * the same.
 */
uint32_t sample_size(uint64_t nBase, uint32_t k)
{
    uint64_t cap = kept_cap(nBase), m = (uint64_t)ceil(sqrt((double)nBase * k));
    uint64_t mCap = (8 * nBase * k + cap - 1) / cap;
    m = m > mCap ? m : mCap;
    m = (m + SELECT_THREADS - 1) / SELECT_THREADS * SELECT_THREADS;
    return m > nBase / 2 || m > 2 * cap ? 0 : (uint32_t)m;
}
