/*
 * The exact search's bounded selection for a small k over a small base,
 * one warp per query (exact_warp_select, exact_device.h): what the
 * inverted file's probes ask (k = nprobe, a few to 64, among at most
 * 65,536 centroids).  exact_select's block of 512 threads spends most of
 * such a query in radix passes and barriers for a row of a few thousand
 * products; a warp reads the row twice and needs no barrier.
 *
 * The candidates are engine/exact_bound.h's, with a threshold that costs
 * no selection:
 *
 *   1. each lane computes the upper bounds a + e of its base vectors
 *      (i = lane, lane + 32, ...) and keeps its two smallest.  The warp's
 *      64 kept values are upper bounds of 64 distinct vectors (of every
 *      vector when nBase <= 64, k <= nBase), so their k-th smallest u0 is
 *      at least U, the row's k-th smallest upper bound (the k-th smallest
 *      of a subset is never below the whole set's), and T0 =
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
 * candidates exceed EXACT_WARP_CAND, or which is flagged already (outside
 * the bound's range) keeps or gets FLAG_DIRECT and no answer here:
 * exact_gpu.cu answers it from its direct distances, as exact_select's
 * overflows.  The answers are exact_select's: both return the k smallest
 * (distance, id) of the direct distances, a total order.
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
#define FULL 0xffffffffu

/* The k-th smallest (1 <= k <= 64) of the 64 values of sV, ties by position; warp-wide. */
__device__ static float kth_of_64(const float *sV, uint32_t k, float *pOut)
{
    unsigned lane = threadIdx.x & 31u;
    for (uint32_t h = 0; h < 2; h++) {
        uint32_t j = h * 32 + lane, rank = 0;
        float v = sV[j];
        for (uint32_t t = 0; t < 64; t++) {
            float w = sV[t];
            rank += w < v || (w == v && t < j);
        }
        if (rank == k - 1)
            *pOut = v; /* exactly one of the 64 has this rank: the values are never NaN */
    }
    __syncwarp();
    return *pOut;
}

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

__global__ void __launch_bounds__(32 * WARP_QUERIES)
exact_warp_kernel(const float *S, uint32_t nBase, uint32_t nq, int metric, exact_bound bound, const float4 *aInfo,
                  const float4 *aQInfo, uint32_t k, const float *x, const float *q, uint32_t dim, const float *aXDot,
                  const float *aQDot, unsigned *aFlag, genie_neighbor *out)
{
    __shared__ unsigned long long sCand[WARP_QUERIES][EXACT_WARP_CAND];
    __shared__ float sVal[WARP_QUERIES][64], sKth[WARP_QUERIES];
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
    /* 1. Each lane's two smallest upper bounds (a NaN is never kept: step 2 finds it). */
    float m0 = INFINITY, m1 = INFINITY;
    for (uint32_t i = lane; i < nBase; i += 32) {
        float u = upper_bound(metric, row[i], __ldg(aInfo + i), qInfo, &bound, c);
        if (u < m1) {
            m1 = u < m0 ? m0 : u;
            m0 = u < m0 ? u : m0;
        }
    }
    sVal[warp][lane] = m0;
    sVal[warp][32 + lane] = m1;
    __syncwarp();
    float T0 = exact_bound_threshold((genie_metric)metric, kth_of_64(sVal[warp], k, &sKth[warp]));
    /* 2. Every vector whose lower bound is at most T0. */
    unsigned long long *sC = sCand[warp];
    uint32_t nC = 0;
    bool bad = !isfinite(T0);
    for (uint32_t i0 = 0; i0 < nBase && !bad; i0 += 32) {
        uint32_t i = i0 + lane;
        bool take = false;
        if (i < nBase) {
            float4 xi = __ldg(aInfo + i);
            float e = exact_bound_pair(&bound, c, xi.y, xi.z, qInfo.y, qInfo.z);
            float upper = approx_distance(metric, row[i], xi, qInfo) + e;
            float lower = upper - 2.0f * e;
            take = lower <= T0;
            if (!take && !(lower > T0))
                bad = true; /* NaN */
        }
        unsigned mask = __ballot_sync(FULL, take);
        uint32_t pos = nC + __popc(mask & ((1u << lane) - 1u));
        if (take && pos < EXACT_WARP_CAND)
            sC[pos] = i;
        nC += __popc(mask);
        bad = __any_sync(FULL, bad);
    }
    if (bad || nC > EXACT_WARP_CAND || nC < k) { /* nC >= k always, by the bound: a guard, never a wrong answer */
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
    exact_warp_kernel<<<nBlock, 32 * WARP_QUERIES, 0, stream>>>(S, nBase, nq, metric, bound, aInfo, aQInfo, k, x, q,
                                                                dim, aXDot, aQDot, aFlag, out);
    CUDA_CHECK_LAUNCH(rc, "exact_warp_kernel", fail);
fail:
    return rc;
}
