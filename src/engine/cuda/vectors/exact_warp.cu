/*
 * The exact search's bounded selection for a small k over a small base,
 * one warp per query (exact_warp_select, exact_device.h): what the
 * inverted file's probes ask (k = nprobe, a few to 256, among at most
 * 65,536 centroids).  exact_select's block of 512 threads spends most of
 * such a query in radix passes and barriers for a row of a few thousand
 * products (GloVe's 128 probes of 1,549 centroids: 197 us a batch of
 * 2,500 queries, docs/BENCHMARKS.md); a warp reads the row twice and
 * needs no barrier.
 *
 * The candidates are engine/exact_bound.h's, with a threshold that costs
 * no pass of selection:
 *
 *   1. each lane computes the upper bounds a + e of its base vectors
 *      (i = lane, lane + 32, ...) and keeps its KEEP smallest in
 *      registers (KEEP = 2, 4 or 8, the least with 32 KEEP >= k).  The
 *      warp's 32 KEEP kept values are upper bounds of distinct vectors,
 *      at least k of them finite (when a lane has fewer than KEEP vectors
 *      every lane keeps all of its own, nBase >= k of them), so their
 *      k-th smallest u0 (a warp sort of the kept values) is at least U,
 *      the row's k-th smallest upper bound (the k-th smallest of a subset
 *      is never below the whole set's), and T0 =
 *      exact_bound_threshold(u0) >= T;
 *   2. a second pass gathers every vector whose lower bound (a + e) - 2e
 *      is at most T0, in shared memory: a superset of exact_bound.h's
 *      candidates {lower <= T}, so it holds the exact top k, ties on the
 *      k-th distance included (every evaluation of a bound is a valid
 *      bound, exact_bound.h, so computing them again here is safe);
 *   3. the candidates' direct distances (direct_distance, the CPU's
 *      operations), their (distance, id) keys sorted by the warp (the
 *      bitonic network of common/block_sort.cuh, with warp barriers), the
 *      k first written.
 *
 * A query whose bounds are not finite (a NaN, T0 infinite), whose
 * candidates exceed the warp's room (warp_cand: 512, 1,024 for KEEP 8),
 * or which is flagged already (outside the bound's range) keeps or gets
 * FLAG_DIRECT and no answer here: exact_gpu.cu answers it from its direct
 * distances, as exact_select's overflows.  The answers are
 * exact_select's: both return the k smallest (distance, id) of the
 * direct distances, a total order.
 *
 * Thread contract: blockDim.x == 32 WARP_QUERIES, warp w of block b
 * serves query b WARP_QUERIES + w; the warps never wait for each other
 * (warp barriers only).
 */
#include <math.h>
#include <stdint.h>

#include "engine/cuda/common/cuda_common.h"
#include "engine/cuda/vectors/direct_distance.cuh"
#include "engine/cuda/vectors/exact_bound_gpu.cuh"
#include "engine/cuda/vectors/exact_device.h"

#define WARP_QUERIES 4u /* warps (queries) per block */
#define WARP_AHEAD 4u   /* a lane's products loaded before any is used: one wait per WARP_AHEAD */
#define FULL 0xffffffffu

/* Ascending sort of the warp's keys a[0 .. n), n a power of two (block_sort_network's pairs, warp barriers). */
__device__ static void warp_sort_keys(unsigned long long *a, uint32_t n)
{
    unsigned lane = threadIdx.x & 31u;
    for (uint32_t size = 2; size <= n; size <<= 1)
        for (uint32_t stride = size >> 1; stride > 0; stride >>= 1) {
            for (uint32_t i = lane; i < n; i += 32) {
                uint32_t j = i ^ stride;
                if (j > i) {
                    unsigned long long u = a[i], v = a[j];
                    if ((u > v) == ((i & size) == 0)) {
                        a[i] = v;
                        a[j] = u;
                    }
                }
            }
            __syncwarp();
        }
}

/* The candidates a warp holds for its query when each lane keeps @p KEEP bounds (the header: warp_cand). */
template <int KEEP> __host__ __device__ constexpr uint32_t warp_cand()
{
    return KEEP <= 4 ? 512u : 1024u;
}

/* Keep @p u among the lane's KEEP smallest, @p m ascending (a NaN is never kept). */
template <int KEEP> __device__ __forceinline__ void keep_smallest(float (&m)[KEEP], float u)
{
    if (u < m[KEEP - 1]) {
        m[KEEP - 1] = u;
#pragma unroll
        for (int j = KEEP - 1; j > 0; j--) { /* one bubble pass restores the order */
            float lo = fminf(m[j - 1], m[j]), hi = fmaxf(m[j - 1], m[j]);
            m[j - 1] = lo;
            m[j] = hi;
        }
    }
}

template <int KEEP>
__global__ void __launch_bounds__(32 * WARP_QUERIES)
exact_warp_kernel(const float *S, uint32_t nBase, uint32_t nq, int metric, exact_bound bound, const float4 *aInfo,
                  const float4 *aQInfo, uint32_t k, const float *x, const float *q, uint32_t dim, const float *aXDot,
                  const float *aQDot, unsigned *aFlag, genie_neighbor *out)
{
    constexpr uint32_t CAND = warp_cand<KEEP>();
    static_assert(CAND >= 32u * KEEP, "the kept bounds are sorted in the candidates' room");
    __shared__ unsigned long long sCand[WARP_QUERIES][CAND];
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x & 31u;
    uint32_t qi = blockIdx.x * WARP_QUERIES + warp;
    if (qi >= nq)
        return; /* the whole warp */
    unsigned flag = aFlag[qi];
    if (flag & FLAG_DIRECT)
        return;
    const float *row = S + (uint64_t)qi * nBase;
    float4 qInfo = aQInfo[qi];
    float c = exact_bound_query_c(&bound, qInfo.y);
    unsigned long long *sC = sCand[warp];
    /* 1. Each lane's KEEP smallest upper bounds (a NaN is never kept: step 2 finds it), their k-th by a sort. */
    float m[KEEP];
#pragma unroll
    for (int j = 0; j < KEEP; j++)
        m[j] = INFINITY;
    for (uint32_t i0 = lane; i0 < nBase; i0 += 32 * WARP_AHEAD) {
        float a[WARP_AHEAD];
        float4 xi[WARP_AHEAD];
#pragma unroll
        for (uint32_t t = 0; t < WARP_AHEAD; t++)
            if (i0 + 32 * t < nBase) {
                a[t] = row[i0 + 32 * t];
                xi[t] = __ldg(aInfo + i0 + 32 * t);
            }
#pragma unroll
        for (uint32_t t = 0; t < WARP_AHEAD; t++)
            if (i0 + 32 * t < nBase)
                keep_smallest<KEEP>(m, upper_bound(metric, a[t], xi[t], qInfo, &bound, c));
    }
#pragma unroll
    for (int j = 0; j < KEEP; j++)
        sC[j * 32 + lane] = (unsigned long long)d_key(m[j]) << 32 | (j * 32 + lane);
    __syncwarp();
    warp_sort_keys(sC, 32u * KEEP);
    float T0 = exact_bound_threshold((genie_metric)metric, d_key_value((uint32_t)(sC[k - 1] >> 32)));
    __syncwarp(); /* every lane has read sC[k - 1] before step 2 gathers into it */
    /* 2. Every vector whose lower bound is at most T0. */
    uint32_t nC = 0;
    bool bad = !isfinite(T0);
    for (uint32_t i0 = 0; i0 < nBase && !bad; i0 += 32 * WARP_AHEAD) {
        float a[WARP_AHEAD];
        float4 xi[WARP_AHEAD];
#pragma unroll
        for (uint32_t t = 0; t < WARP_AHEAD; t++)
            if (i0 + 32 * t + lane < nBase) {
                a[t] = row[i0 + 32 * t + lane];
                xi[t] = __ldg(aInfo + i0 + 32 * t + lane);
            }
#pragma unroll
        for (uint32_t t = 0; t < WARP_AHEAD; t++) {
            uint32_t i = i0 + 32 * t + lane;
            bool take = false;
            if (i < nBase) {
                float e = exact_bound_pair(&bound, c, xi[t].y, xi[t].z, qInfo.y, qInfo.z);
                float upper = approx_distance(metric, a[t], xi[t], qInfo) + e;
                float lower = upper - 2.0f * e;
                take = lower <= T0;
                if (!take && !(lower > T0))
                    bad = true; /* NaN */
            }
            unsigned mask = __ballot_sync(FULL, take);
            uint32_t pos = nC + __popc(mask & ((1u << lane) - 1u));
            if (take && pos < CAND)
                sC[pos] = i;
            nC += __popc(mask);
        }
        bad = __any_sync(FULL, bad);
    }
    if (bad || nC > CAND || nC < k) { /* nC >= k always, by the bound: a guard, never a wrong answer */
        if (lane == 0)
            aFlag[qi] = flag | FLAG_DIRECT;
        return;
    }
    __syncwarp();
    /* 3. Their direct distances, sorted by (distance, id); the k first. */
    const float *pq = q + (uint64_t)qi * dim;
    float nqDot = aQDot ? aQDot[qi] : 0.0f;
    for (uint32_t t = lane; t < nC; t += 32) {
        uint32_t id = (uint32_t)sC[t];
        float d = direct_distance(metric, x + (uint64_t)id * dim, pq, dim, aXDot ? aXDot[id] : 0.0f, nqDot);
        sC[t] = (unsigned long long)d_key(d) << 32 | id;
    }
    uint32_t nPad = 1;
    while (nPad < nC)
        nPad <<= 1;
    for (uint32_t t = nC + lane; t < nPad; t += 32)
        sC[t] = ~0ull;
    __syncwarp();
    warp_sort_keys(sC, nPad);
    for (uint32_t t = lane; t < k; t += 32) {
        unsigned long long key = sC[t];
        out[(uint64_t)qi * k + t].id = (uint32_t)key;
        out[(uint64_t)qi * k + t].distance = d_key_value((uint32_t)(key >> 32));
    }
}

genie_status exact_warp_select(cudaStream_t stream, const float *S, uint32_t nBase, uint32_t nq, int metric,
                               exact_bound bound, const float4 *aInfo, const float4 *aQInfo, uint32_t k, const float *x,
                               const float *q, uint32_t dim, const float *aXDot, const float *aQDot, unsigned *aFlag,
                               genie_neighbor *out)
{
    genie_status rc = GENIE_OK;
    unsigned nBlock = (nq + WARP_QUERIES - 1) / WARP_QUERIES;
    if (nBlock == 0)
        return GENIE_OK;
    if (k <= 64)
        exact_warp_kernel<2><<<nBlock, 32 * WARP_QUERIES, 0, stream>>>(S, nBase, nq, metric, bound, aInfo, aQInfo, k,
                                                                       x, q, dim, aXDot, aQDot, aFlag, out);
    else if (k <= 128)
        exact_warp_kernel<4><<<nBlock, 32 * WARP_QUERIES, 0, stream>>>(S, nBase, nq, metric, bound, aInfo, aQInfo, k,
                                                                       x, q, dim, aXDot, aQDot, aFlag, out);
    else
        exact_warp_kernel<8><<<nBlock, 32 * WARP_QUERIES, 0, stream>>>(S, nBase, nq, metric, bound, aInfo, aQInfo, k,
                                                                       x, q, dim, aXDot, aQDot, aFlag, out);
    CUDA_CHECK_LAUNCH(rc, "exact_warp_kernel", fail);
fail:
    return rc;
}
