/*
 * The kernels of the inverted-file search on the GPU (ivf_scan.h;
 * ivf_gpu.cu queues them, steps 2 and 3 of its batches), after Johnson,
 * Douze and Jegou, "Billion-scale similarity search with GPUs", sections
 * 5.2-5.3, computing the CPU's answers (ivf_cpu.c) bit for bit:
 *   - the plan (ivf_plan, ivf_order): per query, where each probed
 *     list's candidates start in the query's sequence of candidates (a
 *     prefix sum of the lists' lengths), and an order of the queries by
 *     their nearest list (a counting sort), so that blocks running at the
 *     same time scan the same lists (they meet in the L2 cache);
 *   - the scans, one block per query: all its candidates, its k nearest
 *     selected as they come (select_block.cuh: the scan and the selection
 *     fused, the "fused kernel" of section 5.3, no distances written to
 *     global memory):
 *       IVF-Flat (ivf_flat_search): thread c of a round takes candidate
 *       c of the query's sequence, finds its list by a binary search of
 *       the prefix sums, and computes its distance with
 *       genie_vector_distance's operations in its order, the vectors by
 *       id staged through shared memory a warp at a time so that rows
 *       are read coalesced, each warp's 32 row loads in flight at once
 *       (staged_distance);
 *       IVF-PQ (ivf_pq_search): per probed list, the lookup tables of
 *       engine/ivf.h in shared memory (each entry one thread's sum over
 *       the slice in order, rounded operations), then each thread one
 *       vector: M look-ups and additions in order; the R best estimates
 *       selected; with a refinement, their direct distances and the k
 *       best of those, in the same block;
 *   - ivf_norms: cosine's squared norms of the vectors, the CPU's.
 *
 * A candidate that the call's bitmap does not allow (deletes, filters:
 * engine_ivf_query.aAllow) is dropped before its distance or estimate:
 * never offered to a selection, and not counted in the query's candidates
 * (a shared counter of the allowed ones).
 *
 * Every distance or estimate is computed with the CPU's operations in the
 * CPU's order (round-to-nearest intrinsics, which the compiler may not
 * contract into fused multiply-adds); keys are (ordered float << 32 |
 * id), a total order, so the selection returns the CPU's keys in its
 * order.
 *
 * Thread contract of both scan kernels: blockDim.x == IVF_THREADS; every
 * thread runs every round (the selection's contract); dynamic shared
 * memory as each kernel's comment (and ivf_gpu.cu's smem_bytes) says.
 * ivf_plan: a warp per query, blockDim.x == PLAN_THREADS; ivf_order: one
 * block of ORDER_THREADS; ivf_norms: a thread per vector.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "engine/cuda/common/block_scan.cuh"
#include "engine/cuda/vectors/direct_distance.cuh"
#include "engine/cuda/vectors/ivf_scan.h"
#include "engine/cuda/common/select_block.cuh"

extern "C" {
#include "genie/genie.h"
}

#define FULL 0xffffffffu

/* aNorm[i] = the CPU's dot(x_i, x_i) (cosine's direct distance needs it); one thread per vector. */
__global__ void ivf_norms(const float *x, uint64_t n, uint32_t dim, float *aNorm)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        aNorm[i] = dot_rn(x + i * dim, x + i * dim, dim);
}

/*
 * Step 2a, a warp per query: off[0 .. nprobe] the prefix sums of its
 * probed lists' lengths (aOff, nprobe + 1 per query), and its nearest
 * list counted in aCount.
 */
__global__ void __launch_bounds__(PLAN_THREADS)
ivf_plan(const genie_neighbor *aProbe, uint32_t nb, uint32_t nprobe, const uint64_t *aStart, uint32_t *aOff,
         uint32_t *aCount)
{
    uint32_t qi = (blockIdx.x * PLAN_THREADS + threadIdx.x) / 32, lane = threadIdx.x & 31u;
    if (qi >= nb)
        return; /* the whole warp */
    const genie_neighbor *probe = aProbe + (uint64_t)qi * nprobe;
    uint32_t *off = aOff + (uint64_t)qi * (nprobe + 1), carry = 0;
    if (lane == 0) {
        off[0] = 0;
        atomicAdd(&aCount[probe[0].id], 1u);
    }
    for (uint32_t p0 = 0; p0 < nprobe; p0 += 32) {
        uint32_t p = p0 + lane, len = 0;
        if (p < nprobe) {
            uint32_t l = probe[p].id;
            len = (uint32_t)(aStart[l + 1] - aStart[l]); /* a query's candidates are fewer than 2^32: ids are u32 */
        }
        for (uint32_t o = 1; o < 32; o <<= 1) {
            uint32_t t = __shfl_up_sync(FULL, len, o);
            if (lane >= o)
                len += t;
        }
        if (p < nprobe)
            off[p + 1] = carry + len;
        carry += __shfl_sync(FULL, len, 31);
    }
}

/*
 * Step 2b, one block: aCount (per list, its queries' count) becomes each
 * list's first place, then every query takes the next place of its
 * nearest list in aOrder (within a list in any order: only the scan's
 * timing depends on it).
 */
__global__ void __launch_bounds__(ORDER_THREADS)
ivf_order(const genie_neighbor *aProbe, uint32_t nb, uint32_t nprobe, uint32_t *aCount, uint32_t nlist,
          uint32_t *aOrder)
{
    block_scan<ORDER_THREADS>(nlist, [&](uint32_t l) { return aCount[l]; },
                              [&](uint32_t l, uint32_t v) {
                                  if (l < nlist)
                                      aCount[l] = v;
                              });
    /* block_scan ends with a barrier: the places, in global memory, are visible to the block */
    for (uint32_t i = threadIdx.x; i < nb; i += ORDER_THREADS)
        aOrder[atomicAdd(&aCount[aProbe[(uint64_t)i * nprobe].id], 1u)] = i;
}

/* The probe of candidate @p c: the last p with off[p] <= c (off ascending, off[0] = 0). */
__device__ static uint32_t probe_of(const uint32_t *off, uint32_t nprobe, uint32_t c)
{
    uint32_t lo = 0, hi = nprobe - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (off[mid] <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The answers of one query from the selection's keys: n of them, distances as kept (l2 estimates: roots). */
__device__ static void write_answers(const select_block *s, uint32_t n, int sqrtDistance, genie_neighbor *out)
{
    for (uint32_t j = threadIdx.x; j < n; j += IVF_THREADS) {
        unsigned long long key = s->a[j];
        float d = d_key_value((uint32_t)(key >> 32));
        out[j].id = (uint32_t)key;
        out[j].distance = sqrtDistance ? __fsqrt_rn(d) : d;
    }
}

/*
 * The direct distance (genie_vector_distance) of each thread's candidate
 * @p id (@p valid; an invalid one's id still names a row of @p aVec, 0
 * when there is none, and its result is garbage) to the query @p sQ
 * (shared), every sum over the
 * dimensions in order, the rows read coalesced: the warp stages its 32
 * candidates' rows IVF_CHUNK dimensions at a time in @p sX (its own
 * 32 x (IVF_CHUNK + 1) floats: the padding puts the lanes' rows in
 * different banks), a lane per dimension, the 32 rows' loads issued
 * before any is stored (registers v: 32 loads in flight per warp instead
 * of one, which made the scan wait on memory latency); then each lane
 * adds its row's dimensions in order.  Warp-synchronous: every lane of
 * the warp calls it.
 */
__device__ static float staged_distance(int metric, const float *aVec, const float *aNorm, uint32_t dim,
                                        const float *sQ, float nq, uint32_t id, bool valid, float *sX)
{
    unsigned lane = threadIdx.x & 31u;
    float acc = 0;
    for (uint32_t d0 = 0; d0 < dim; d0 += IVF_CHUNK) {
        uint32_t len = dim - d0 < IVF_CHUNK ? dim - d0 : IVF_CHUNK, col = d0 + (lane < len ? lane : 0);
        float v[32];
#pragma unroll
        for (uint32_t r = 0; r < 32; r++) /* unconditional: every id names a row, every col is in it */
            v[r] = __ldg(aVec + (uint64_t)__shfl_sync(FULL, id, r) * dim + col);
#pragma unroll
        for (uint32_t r = 0; r < 32; r++)
            sX[r * (IVF_CHUNK + 1) + lane] = v[r];
        __syncwarp();
        const float *x = sX + lane * (IVF_CHUNK + 1);
        for (uint32_t t = 0; t < len; t++) {
            if (metric == GENIE_METRIC_L2) {
                float e = __fsub_rn(x[t], sQ[d0 + t]);
                acc = __fadd_rn(acc, __fmul_rn(e, e));
            } else {
                acc = __fadd_rn(acc, __fmul_rn(x[t], sQ[d0 + t]));
            }
        }
        __syncwarp(); /* the next chunk overwrites sX */
    }
    if (metric == GENIE_METRIC_L2)
        return __fsqrt_rn(acc);
    if (metric == GENIE_METRIC_IP)
        return -acc;
    float nx = valid ? aNorm[id] : 0.0f;
    if (nx == 0 || nq == 0)
        return 1.0f;
    return __fsub_rn(1.0f, __fdiv_rn(acc, __fmul_rn(__fsqrt_rn(nx), __fsqrt_rn(nq))));
}

/*
 * IVF-Flat, one block per query (in the order aOrder; with @p pNOrder, the
 * *pNOrder first blocks only, the list-major scan's leftovers): its candidates, the
 * lists of its probes aProbe with prefix sums aOff (nprobe + 1 per query),
 * by their direct distances (staged_distance); the k nearest to out, their
 * number to aN.  Dynamic shared memory: select_block_keys(k) keys, nprobe
 * u64 (the probed lists' first positions), IVF_THREADS x (IVF_CHUNK + 1)
 * floats (the warps' rows), dim floats (the query), nprobe + 1 u32 (the
 * prefix sums).
 */
__global__ void __launch_bounds__(IVF_THREADS)
ivf_flat_search(const float *q, uint32_t dim, int metric, const uint32_t *aOrder, const uint32_t *pNOrder,
                const genie_neighbor *aProbe, const uint32_t *aOff, uint32_t nprobe, const uint64_t *aStart,
                const uint32_t *aId, const float *aVec, const float *aNorm, const uint32_t *aAllow, uint32_t k,
                genie_neighbor *out, uint32_t *aN)
{
    extern __shared__ unsigned long long smem[];
    __shared__ select_block_shared sh;
    __shared__ float sNq;
    __shared__ uint32_t sAllowed;
    if (pNOrder && blockIdx.x >= *pNOrder)
        return; /* the whole block: aOrder holds fewer queries than the grid */
    uint32_t qi = aOrder[blockIdx.x];
    select_block s;
    uint64_t *sBase = (uint64_t *)(smem + select_block_keys(k, IVF_THREADS));
    float *sX = (float *)(sBase + nprobe);
    float *sQ = sX + IVF_THREADS * (IVF_CHUNK + 1);
    uint32_t *sOff = (uint32_t *)(sQ + dim);
    const uint32_t *off = aOff + (uint64_t)qi * (nprobe + 1);
    const genie_neighbor *probe = aProbe + (uint64_t)qi * nprobe;
    const float *pq = q + (uint64_t)qi * dim;
    for (uint32_t p = threadIdx.x; p <= nprobe; p += IVF_THREADS) {
        sOff[p] = off[p];
        if (p < nprobe)
            sBase[p] = aStart[probe[p].id];
    }
    for (uint32_t t = threadIdx.x; t < dim; t += IVF_THREADS)
        sQ[t] = pq[t];
    if (threadIdx.x == 0) {
        sNq = metric == GENIE_METRIC_COSINE ? dot_rn(pq, pq, dim) : 0.0f;
        sAllowed = 0;
    }
    select_block_init<IVF_THREADS>(&s, smem, &sh, k); /* begins and ends with a barrier */
    uint32_t nCand = sOff[nprobe];
    float *sWarpX = sX + (threadIdx.x / 32) * 32 * (IVF_CHUNK + 1);
    for (uint32_t c0 = 0; c0 < nCand; c0 += IVF_THREADS) {
        uint32_t c = c0 + threadIdx.x, id = 0; /* row 0 exists: nCand > 0 */
        bool valid = c < nCand;
        if (valid) {
            uint32_t p = probe_of(sOff, nprobe, c);
            id = aId[sBase[p] + (c - sOff[p])];
            valid = d_allowed(aAllow, id); /* deleted or filtered out: never a candidate */
            if (valid && aAllow)
                atomicAdd(&sAllowed, 1u);
        }
        float d = staged_distance(metric, aVec, aNorm, dim, sQ, sNq, id, valid, sWarpX);
        unsigned long long key = (unsigned long long)d_key(d) << 32 | id;
        select_block_offer<IVF_THREADS>(&s, key, valid);
    }
    select_block_finish<IVF_THREADS>(&s);
    __syncthreads(); /* every thread's count of allowed candidates in */
    if (aAllow)
        nCand = sAllowed;
    uint32_t n = nCand < k ? nCand : k;
    write_answers(&s, n, 0, out + (uint64_t)qi * k);
    if (threadIdx.x == 0)
        aN[qi] = n;
}

/*
 * IVF-PQ, one block per query (in the order aOrder): the R = nRefine or k
 * best estimates (engine/ivf.h; a probe's coarse distance is the base of
 * ip and cosine), then with nRefine their direct distances and the k
 * best; to out and aN.  Dynamic shared memory: select_block_keys(max(R,
 * k)) keys, M x 2^bits table floats, dim floats (the query's residual or
 * the query), R u32 (the refinement's ids).
 */
__global__ void __launch_bounds__(IVF_THREADS)
ivf_pq_search(const float *q, uint32_t dim, int metric, const uint32_t *aOrder, const genie_neighbor *aProbe,
              const uint32_t *aOff, uint32_t nprobe, const uint64_t *aStart, const uint32_t *aId,
              const float *aCentroid, const float *aCodebook, const uint8_t *aCode, uint32_t M, uint32_t bits,
              const float *aVec, const float *aNorm, const uint32_t *aAllow, int squared, uint32_t k,
              uint32_t nRefine, genie_neighbor *out, uint32_t *aN)
{
    extern __shared__ unsigned long long smem[];
    __shared__ select_block_shared sh;
    __shared__ float sNq;
    __shared__ uint32_t sAllowed;
    uint32_t qi = aOrder[blockIdx.x], ksub = 1u << bits, ds = dim / M, R = nRefine ? nRefine : k;
    uint32_t nKeys = select_block_keys(R, IVF_THREADS);
    float *sT = (float *)(smem + nKeys), *sR = sT + (size_t)M * ksub;
    uint32_t *sIds = (uint32_t *)(sR + dim);
    const float *pq = q + (uint64_t)qi * dim;
    const genie_neighbor *probe = aProbe + (uint64_t)qi * nprobe;
    int l2 = metric == GENIE_METRIC_L2;
    if (threadIdx.x == 0) {
        sNq = metric == GENIE_METRIC_COSINE ? dot_rn(pq, pq, dim) : 1.0f;
        sAllowed = 0;
    }
    select_block s;
    select_block_init<IVF_THREADS>(&s, smem, &sh, R);
    for (uint32_t p = 0; p < nprobe; p++) {
        uint32_t l = probe[p].id;
        const float *cen = aCentroid + (uint64_t)l * dim;
        for (uint32_t t = threadIdx.x; t < dim; t += IVF_THREADS)
            sR[t] = l2 ? __fsub_rn(pq[t], cen[t])
                       : metric == GENIE_METRIC_IP ? pq[t] : sNq == 0 ? 0.0f : __fdiv_rn(pq[t], __fsqrt_rn(sNq));
        __syncthreads();
        for (uint32_t e = threadIdx.x; e < M * ksub; e += IVF_THREADS) {
            uint32_t m = e / ksub, j = e % ksub;
            const float *cw = aCodebook + ((uint64_t)m * ksub + j) * ds, *r = sR + (size_t)m * ds;
            float acc = 0;
            for (uint32_t t = 0; t < ds; t++) {
                if (l2) {
                    float d = __fsub_rn(r[t], cw[t]);
                    acc = __fadd_rn(acc, __fmul_rn(d, d));
                } else {
                    acc = __fadd_rn(acc, __fmul_rn(r[t], cw[t]));
                }
            }
            sT[e] = l2 ? acc : -acc;
        }
        __syncthreads();
        float base = l2 ? 0.0f : probe[p].distance;
        uint64_t p0 = aStart[l], len = aStart[l + 1] - p0;
        for (uint64_t c0 = 0; c0 < len; c0 += IVF_THREADS) {
            uint64_t c = c0 + threadIdx.x;
            unsigned long long key = SELECT_BLOCK_EMPTY;
            bool valid = c < len && d_allowed(aAllow, aId[p0 + c]); /* deleted or filtered out: never a candidate */
            if (valid) {
                if (aAllow)
                    atomicAdd(&sAllowed, 1u);
                const uint8_t *code = aCode + (p0 + c) * M;
                float est = base;
                for (uint32_t m = 0; m < M; m++)
                    est = __fadd_rn(est, sT[m * ksub + code[m]]);
                key = (unsigned long long)d_key(est) << 32 | aId[p0 + c];
            }
            select_block_offer<IVF_THREADS>(&s, key, valid);
        }
    }
    select_block_finish<IVF_THREADS>(&s);
    __syncthreads(); /* every thread's count of allowed candidates in */
    uint32_t nCand = aAllow ? sAllowed : aOff[(uint64_t)qi * (nprobe + 1) + nprobe], nR = nCand < R ? nCand : R;
    uint32_t n = nCand < k ? nCand : k;
    if (!nRefine) {
        write_answers(&s, n, l2 && !squared, out + (uint64_t)qi * k);
    } else {
        for (uint32_t j = threadIdx.x; j < nR; j += IVF_THREADS)
            sIds[j] = (uint32_t)s.a[j];
        select_block_init<IVF_THREADS>(&s, smem, &sh, k);
        for (uint32_t c0 = 0; c0 < nR; c0 += IVF_THREADS) {
            uint32_t c = c0 + threadIdx.x;
            unsigned long long key = SELECT_BLOCK_EMPTY;
            if (c < nR) {
                uint32_t id = sIds[c];
                float nq = metric == GENIE_METRIC_COSINE ? sNq : 0.0f;
                float d = direct_distance(metric, aVec + (uint64_t)id * dim, pq, dim, aNorm ? aNorm[id] : 0.0f, nq);
                key = (unsigned long long)d_key(d) << 32 | id;
            }
            select_block_offer<IVF_THREADS>(&s, key, c < nR);
        }
        select_block_finish<IVF_THREADS>(&s);
        write_answers(&s, n, 0, out + (uint64_t)qi * k);
    }
    if (threadIdx.x == 0)
        aN[qi] = n;
}
