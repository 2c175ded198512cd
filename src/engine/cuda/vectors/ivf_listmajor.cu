/*
 * The list-major IVF-Flat scan (ivf_listmajor.h), after Johnson, Douze
 * and Jegou, "Billion-scale similarity search with GPUs", section 5.3.
 *
 * Why: the query-major scan (ivf_scan.cu, ivf_flat_search) reads each
 * candidate's vector once per query that probes its list.  When a batch
 * has many queries per list (GloVe at recall 0.95: about 200 of a batch's
 * 2,500 queries per list) that is the whole cost, bound by bytes; reading
 * each list once per batch and multiplying it by all its queries makes it
 * a GEMM.  The steps, queued on the batch's stream after ivf_gpu.cu's
 * probes and plan:
 *
 *   1. the queries' fp16 operands and bound data (exact_gpu.cu's
 *      exact_prepare: for cosine the normalised vectors, each vector
 *      scaled by a power of two so its largest value is below 2^15, the
 *      rounding and the flush of what falls below fp16's normal range
 *      counted in its rho; a query outside the bound's range is flagged);
 *      the base's were made once, by position (ivf_lm_create), so that a
 *      list is one contiguous matrix, with per list the largest w and rho
 *      of its vectors.  fp16 rather than TF32: the same 11 significant
 *      bits and the same bound (engine/exact_bound.h), half the bytes
 *      staged and kept, and the dimensions twice as far per MMA step;
 *   2. the probes grouped by list (a counting sort of the (query, probe)
 *      pairs: ivf_lm_count, ivf_lm_lists, ivf_lm_scatter), and each
 *      query's products given a place: its candidates in its probes'
 *      order (the plan's prefix sums) after the batch's queries before it;
 *   3. ivf_lm_gemm, a block per LM_TILE vectors of a list (the index's
 *      (list, vector tile) items, made once): the tile's operands staged
 *      once, then for every LM_TILE of the pairs probing the list their
 *      queries' operands, the products on the tensor cores (WMMA, fp16
 *      operands, fp32 accumulation), unscaled and written as the
 *      approximate distances a(x, q) of engine/exact_bound.h;
 *   4. ivf_lm_select, one block per query: exact_bound.h's candidates and
 *      their direct distances.  The bound of a (query, list) pair is
 *      e = exact_bound_pair with the list's largest w and rho, at least
 *      every vector's own e (e grows with both), so a - e/2 <= d <= a + e/2
 *      holds for each.  Each thread keeps the two smallest upper bounds
 *      a + e of its candidates; the 2 LM_THREADS kept belong to distinct
 *      vectors, so their k-th smallest u0 (k <= 2 LM_THREADS) is at least
 *      U, the k-th smallest upper bound of all, and T0 =
 *      exact_bound_threshold(u0) >= T (as exact_warp.cu's lanes do).
 *      Every candidate whose lower bound a - e is at most T0 is gathered
 *      (a superset of exact_bound.h's, so it holds the exact k nearest,
 *      ties on the k-th distance included), its direct distance computed
 *      with the CPU's operations (direct_distance), and the (distance,
 *      id) keys sorted: the first k are ivf_cpu.c's answers.
 *
 * A query flagged in step 1, with a bound that is not a number, or with
 * more than LM_CAND gathered candidates is left to the query-major scan
 * (d_rest): slower, the same answers.  A candidate the call's bitmap does
 * not allow is skipped in both passes and not counted, as the query-major
 * scan does.
 *
 * Memory on the device: the base's operands by position (n x dim fp16
 * values) and bound data (n float4), per list two floats, the (list, vector
 * tile) items; per batch the queries' operands, bound data and cosine
 * norms, the grouping (nlist + 1 words three times, nb x nprobe pairs)
 * and the products, nb x the most candidates a query of the batch can
 * have (the nprobe longest lists), at most LM_BATCH_BYTES.
 *
 * Thread contracts: ivf_lm_gemm blockDim.x == LM_GEMM_THREADS (8 warps, each
 * a 32 x 16 eighth of the tile), a block per (list, vector tile) item,
 * dynamic shared memory LM_GEMM_SMEM; ivf_lm_select blockDim.x ==
 * LM_THREADS, one block per query, dynamic shared memory
 * lm_select_smem(nprobe, dim); ivf_lm_lists one block of
 * LM_SCAN_THREADS.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine/cuda/common/block_scan.cuh"
#include "engine/cuda/common/block_sort.cuh"
#include "engine/cuda/common/cuda_common.h"
#include "engine/cuda/vectors/direct_distance.cuh"
#include "engine/cuda/vectors/exact_bound_gpu.cuh"
#include "engine/cuda/vectors/exact_device.h"
#include "engine/cuda/vectors/ivf_listmajor.h"

extern "C" {
#include "engine/exact_bound.h"
#include "util/error.h"
}

#define LM_TILE 64u             /* queries and vectors of a tile */
#define LM_KMAX 128u            /* dimensions staged at a time */
#define LM_LDK (LM_KMAX + 8u)   /* staged rows' stride (halves; WMMA wants a multiple of 8) */
#define LM_GEMM_SMEM (2u * LM_TILE * LM_LDK * 2u)
#define LM_LDC (LM_TILE + 4u)   /* the products' stride (floats), over the staged queries */
#define LM_GEMM_THREADS 256u /* 8 warps: 2 x 4 of 32 queries x 16 vectors */
#define LM_THREADS 256u
#define LM_CAND 2048u /* gathered candidates a query, at most */
#define LM_UNROLL 8u   /* products a thread of ivf_lm_select loads at once */
#define LM_SCAN_THREADS 1024u
#define LM_MIN_QPL 16u /* queries per list, on average, from which a batch goes list-major */
#define LM_PREP_THREADS 256u
#define LM_BATCH_BYTES ((size_t)1 << 30) /* the products of a batch, at most */

struct ivf_lm {
    int device;
    uint64_t n;
    uint32_t dim, nlist;
    genie_metric metric;
    exact_bound bound;
    const uint32_t *d_id;    /* the resident's */
    const uint64_t *d_start; /* the resident's */
    __half *d_op;            /* n x dim: the operands by position */
    float4 *d_info;          /* n: exact_prepare's bound data by position */
    float2 *d_listWR;        /* nlist: the list's largest w and rho */
    unsigned *d_flag;
    /* The batch workspace: nbCap queries of nprobeCap probes, sCap products. */
    uint32_t nbCap, nprobeCap;
    uint64_t sCap;
    __half *d_qop;
    float *d_S, *d_qdot;
    float4 *d_qinfo;
    unsigned *d_qflag;
    uint32_t *d_qBase, *d_count, *d_pairStart, *d_cursor, *d_pair;
    uint2 *d_item;  /* nItem: every (list, vector tile) of the index, the GEMM's blocks */
    uint32_t nItem;
};

/* ------------------------------------------------------------ kernels */

/* Row p of @p out = the operand of the object at position p (aId), and its bound data. */
__global__ void ivf_lm_gather(const __half *op, const float4 *info, const uint32_t *aId, uint64_t n, uint32_t dim,
                              __half *out, float4 *outInfo)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n * dim) {
        uint64_t p = i / dim, j = i - p * dim;
        out[i] = op[(uint64_t)aId[p] * dim + j];
        if (j == 0)
            outInfo[p] = info[aId[p]];
    }
}

/* Per list, a warp each: the largest w and rho (info .y, .z) of its vectors; 0 for an empty list. */
__global__ void ivf_lm_list_bounds(const float4 *aInfo, const uint64_t *aStart, uint32_t nlist, float2 *aWR)
{
    uint32_t l = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31u;
    if (l >= nlist)
        return;
    float w = 0, r = 0;
    for (uint64_t p = aStart[l] + lane; p < aStart[l + 1]; p += 32) {
        w = fmaxf(w, aInfo[p].y);
        r = fmaxf(r, aInfo[p].z);
    }
    for (int o = 16; o > 0; o >>= 1) {
        w = fmaxf(w, __shfl_xor_sync(0xffffffffu, w, o));
        r = fmaxf(r, __shfl_xor_sync(0xffffffffu, r, o));
    }
    if (lane == 0)
        aWR[l] = make_float2(w, r);
}

/* A thread per (query, probe) pair: its list's pairs counted. */
__global__ void ivf_lm_count(const genie_neighbor *aProbe, uint32_t nPair, uint32_t *aCount)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nPair)
        atomicAdd(&aCount[aProbe[i].id], 1u);
}

/*
 * One block: the lists' first pairs (aPairStart, nlist + 1; aCursor a
 * copy) and each query's first product (aQBase, nb + 1: the candidates
 * of the queries before it, aOff's last sums).
 */
__global__ void __launch_bounds__(LM_SCAN_THREADS)
ivf_lm_lists(const uint32_t *aCount, uint32_t nlist, const uint32_t *aOff, uint32_t nb,
         uint32_t nprobe, uint32_t *aPairStart, uint32_t *aCursor, uint32_t *aQBase)
{
    block_scan<LM_SCAN_THREADS>(nlist, [&](uint32_t l) { return aCount[l]; },
               [&](uint32_t l, uint32_t v) {
                   aPairStart[l] = v;
                   if (l < nlist)
                       aCursor[l] = v;
               });
    block_scan<LM_SCAN_THREADS>(nb, [&](uint32_t i) { return aOff[(uint64_t)i * (nprobe + 1) + nprobe]; },
               [&](uint32_t i, uint32_t v) { aQBase[i] = v; });
}

/* A thread per pair: its index (query nprobe + probe) at the next place of its list. */
__global__ void ivf_lm_scatter(const genie_neighbor *aProbe, uint32_t nPair, uint32_t *aCursor, uint32_t *aPair)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nPair)
        aPair[atomicAdd(&aCursor[aProbe[i].id], 1u)] = i;
}

/*
 * Stage rows into shared memory for the MMA: warp-wide, rows warp,
 * warp + 8, ... of LM_TILE, each lane 4 consecutive dimensions of
 * [0, kPad) (kPad <= LM_KMAX, a multiple of 16); src(r) the row's first
 * dimension of the chunk (NULL: a row of zeros), kLen <= kPad of them
 * real, the rest 0.  Every load is issued before any store, so a warp has
 * all its rows in flight at once.  @p vec4: 8-byte loads of 4 values
 * (rows 8-byte aligned: the dimension a multiple of 4).
 */
template <typename Src>
__device__ __forceinline__ void stage_rows(__half *dst, Src src, uint32_t kLen, uint32_t kPad, bool vec4)
{
    uint32_t warp = threadIdx.x / 32, c = (threadIdx.x & 31u) * 4;
    uint2 v[LM_TILE / (LM_GEMM_THREADS / 32)];
#pragma unroll
    for (uint32_t i = 0; i < LM_TILE / (LM_GEMM_THREADS / 32); i++) {
        const __half *row = src(warp + i * (LM_GEMM_THREADS / 32));
        v[i] = make_uint2(0, 0);
        if (row && c < kPad) {
            if (vec4 && c + 4 <= kLen) {
                v[i] = __ldg((const uint2 *)(row + c));
            } else {
                uint32_t h[4];
                for (uint32_t t = 0; t < 4; t++)
                    h[t] = c + t < kLen ? __half_as_ushort(row[c + t]) : 0u;
                v[i] = make_uint2(h[0] | h[1] << 16, h[2] | h[3] << 16);
            }
        }
    }
#pragma unroll
    for (uint32_t i = 0; i < LM_TILE / (LM_GEMM_THREADS / 32); i++)
        if (c < kPad)
            *(uint2 *)(dst + (warp + i * (LM_GEMM_THREADS / 32)) * LM_LDK + c) = v[i];
}

/*
 * Step 3, a block per (list, vector tile) of the index (aItem): for each
 * tile of LM_TILE of the batch's pairs that probe the list, the products
 * of their queries' operands and the tile's vectors', written as
 * approximate distances at S[the pair's place + the vector's place in
 * its list].  The dimensions go LM_KMAX at a time; when one chunk holds
 * them all, the vectors are staged once and kept for every query tile.
 * Dynamic shared memory: LM_GEMM_SMEM (sA, sB; the products sC over sA).
 */
__global__ void __launch_bounds__(LM_GEMM_THREADS)
ivf_lm_gemm(const __half *qop, const float4 *aQInfo, const __half *xop, const float4 *aXInfo, uint32_t dim, int metric,
            const uint64_t *aStart, const uint2 *aItem, const uint32_t *aPairStart, const uint32_t *aPair,
            uint32_t nprobe, const uint32_t *aOff, const uint32_t *aQBase, float *S)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    using namespace nvcuda;
    extern __shared__ __align__(128) __half sBuf[];
    __shared__ uint32_t sQRow[LM_TILE], sDst[LM_TILE];
    __shared__ float4 sQInfo[LM_TILE], sXInfo[LM_TILE];
    __half *sA = sBuf, *sB = sBuf + LM_TILE * LM_LDK;
    float *sC = (float *)sBuf; /* LM_TILE x LM_LDC floats: the bytes of sA */
    uint32_t tid = threadIdx.x, warp = tid / 32, lane = tid & 31u, wm = warp / 4, wn = warp % 4;
    uint2 item = aItem[blockIdx.x];
    uint32_t l = item.x, vt = item.y, pair0 = aPairStart[l], nPairL = aPairStart[l + 1] - pair0;
    if (nPairL == 0)
        return; /* the whole block: no query of the batch probes this list */
    uint32_t len = (uint32_t)(aStart[l + 1] - aStart[l]);
    uint32_t nv = len - vt * LM_TILE < LM_TILE ? len - vt * LM_TILE : LM_TILE;
    uint64_t p0 = aStart[l] + (uint64_t)vt * LM_TILE;
    uint32_t nChunk = (dim + LM_KMAX - 1) / LM_KMAX;
    bool vec4 = (dim & 3u) == 0;
    if (tid < nv)
        sXInfo[tid] = aXInfo[p0 + tid];
    for (uint32_t q0 = 0; q0 < nPairL; q0 += LM_TILE) {
        uint32_t nq = nPairL - q0 < LM_TILE ? nPairL - q0 : LM_TILE;
        __syncthreads(); /* the last query tile's sC and row data are read */
        if (tid < nq) {
            uint32_t pr = aPair[pair0 + q0 + tid], qi = pr / nprobe, p = pr - qi * nprobe;
            sQRow[tid] = qi;
            sDst[tid] = aQBase[qi] + aOff[(uint64_t)qi * (nprobe + 1) + p] + vt * LM_TILE;
            sQInfo[tid] = aQInfo[qi];
        }
        __syncthreads();
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
        for (int i = 0; i < 2; i++)
            wmma::fill_fragment(acc[i], 0.0f);
        for (uint32_t ch = 0; ch < nChunk; ch++) {
            uint32_t k0 = ch * LM_KMAX, kLen = dim - k0 < LM_KMAX ? dim - k0 : LM_KMAX, kPad = (kLen + 15) / 16 * 16;
            if (nChunk > 1 || q0 == 0)
                stage_rows(sB, [&](uint32_t r) { return r < nv ? xop + (p0 + r) * dim + k0 : (const __half *)NULL; },
                           kLen, kPad, vec4);
            stage_rows(sA,
                       [&](uint32_t r) { return r < nq ? qop + (uint64_t)sQRow[r] * dim + k0 : (const __half *)NULL; },
                       kLen, kPad, vec4);
            __syncthreads();
            for (uint32_t kk = 0; kk < kPad; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
                wmma::load_matrix_sync(b, sB + wn * 16 * LM_LDK + kk, LM_LDK);
                for (int i = 0; i < 2; i++) {
                    wmma::load_matrix_sync(a[i], sA + (wm * 32 + i * 16) * LM_LDK + kk, LM_LDK);
                    wmma::mma_sync(acc[i], a[i], b, acc[i]);
                }
            }
            __syncthreads(); /* the next chunk (or sC) overwrites sA */
        }
        for (int i = 0; i < 2; i++)
            wmma::store_matrix_sync(sC + (wm * 32 + i * 16) * LM_LDC + wn * 16, acc[i], LM_LDC, wmma::mem_row_major);
        __syncthreads();
        for (uint32_t r = warp; r < nq; r += LM_GEMM_THREADS / 32) {
            float *dst = S + sDst[r];
            float4 qi = sQInfo[r];
            for (uint32_t c = lane; c < nv; c += 32)
                dst[c] = approx_distance(metric, sC[r * LM_LDC + c], sXInfo[c], qi);
        }
    }
#endif
}

/*
 * Dynamic shared memory of ivf_lm_select: gathered keys; per probe its
 * first position, bound and prefix sum; the query and a row per warp
 * (dim floats each, from a multiple of 16 bytes).
 */
static size_t lm_select_smem(uint32_t nprobe, uint32_t dim)
{
    size_t head = (size_t)LM_CAND * 8 + (size_t)nprobe * 8 + (size_t)nprobe * 4 + ((size_t)nprobe + 1) * 4;
    return (head + 15) / 16 * 16 + 16 + (1 + LM_THREADS / 32) * (size_t)dim * 4; /* 16: the rounding up */
}

/*
 * f(c, p, row[c]) for the thread's candidates c = threadIdx.x,
 * + LM_THREADS, ... < nCand in order, p the probe of c (sOff: the
 * probes' prefix sums).  LM_UNROLL products are loaded before any is
 * used, so that a thread waits on memory once per LM_UNROLL.
 */
template <typename F>
__device__ __forceinline__ void scan_row(const float *row, uint32_t nCand, const uint32_t *sOff, F f)
{
    uint32_t p = 0;
    for (uint32_t c0 = threadIdx.x; c0 < nCand; c0 += LM_UNROLL * LM_THREADS) {
        float v[LM_UNROLL];
#pragma unroll
        for (uint32_t j = 0; j < LM_UNROLL; j++)
            v[j] = c0 + j * LM_THREADS < nCand ? row[c0 + j * LM_THREADS] : 0.0f;
#pragma unroll
        for (uint32_t j = 0; j < LM_UNROLL; j++) {
            uint32_t c = c0 + j * LM_THREADS;
            if (c >= nCand)
                break;
            while (sOff[p + 1] <= c) /* c only grows: p moves forward */
                p++;
            f(c, p, v[j]);
        }
    }
}

/* Step 4, one block per query (above): its answers to out and aN, or its index to aRest. */
__global__ void __launch_bounds__(LM_THREADS)
ivf_lm_select(const float *S, const uint32_t *aQBase, const float *q, uint32_t dim, int metric, exact_bound bound,
          const float4 *aQInfo, const unsigned *aQFlag, const genie_neighbor *aProbe, const uint32_t *aOff,
          uint32_t nprobe, const uint64_t *aStart, const float2 *aListWR, const uint32_t *aId, const float *aVec,
          const float *aNorm, const float *aQDot, const uint32_t *aAllow, uint32_t k, genie_neighbor *out, uint32_t *aN,
          uint32_t *aRest, uint32_t *pNRest)
{
    extern __shared__ unsigned long long smem[];
    __shared__ uint32_t sCount, sAllowed;
    __shared__ int sBad;
    unsigned long long *sCand = smem;
    uint64_t *sBase = (uint64_t *)(smem + LM_CAND);
    float *sE = (float *)(sBase + nprobe);
    uint32_t *sOff = (uint32_t *)(sE + nprobe);
    float *sQ = (float *)((uintptr_t)(sOff + nprobe + 1 + 3) & ~(uintptr_t)15), *sRow = sQ + dim;
    uint32_t qi = blockIdx.x, tid = threadIdx.x;
    if (aQFlag[qi] & FLAG_DIRECT) { /* outside the bound's range */
        if (tid == 0)
            aRest[atomicAdd(pNRest, 1u)] = qi;
        return;
    }
    const float *row = S + aQBase[qi], *pq = q + (uint64_t)qi * dim;
    const uint32_t *off = aOff + (uint64_t)qi * (nprobe + 1);
    const genie_neighbor *probe = aProbe + (uint64_t)qi * nprobe;
    float4 qInfo = aQInfo[qi];
    float c = exact_bound_query_c(&bound, qInfo.y);
    for (uint32_t p = tid; p <= nprobe; p += LM_THREADS) {
        sOff[p] = off[p];
        if (p < nprobe) {
            uint32_t l = probe[p].id;
            float2 wr = aListWR[l];
            sBase[p] = aStart[l];
            sE[p] = exact_bound_pair(&bound, c, wr.x, wr.y, qInfo.y, qInfo.z);
        }
    }
    for (uint32_t t = tid; t < dim; t += LM_THREADS)
        sQ[t] = pq[t];
    if (tid == 0) {
        sCount = sAllowed = 0;
        sBad = 0;
    }
    __syncthreads();
    uint32_t nCand = sOff[nprobe], nAllowed = 0;
    /* Pass 1: each thread's two smallest upper bounds (a NaN is never kept: pass 2 finds it). */
    float m0 = INFINITY, m1 = INFINITY;
    scan_row(row, nCand, sOff, [&](uint32_t cc, uint32_t p, float a) {
        if (aAllow && !d_allowed(aAllow, aId[sBase[p] + (cc - sOff[p])]))
            return;
        nAllowed++;
        float u = a + sE[p];
        if (u < m1) {
            m1 = u < m0 ? m0 : u;
            m0 = u < m0 ? u : m0;
        }
    });
    /* Their k-th smallest, by a sort of the 2 LM_THREADS (key, place) in the gathering array (free until pass 2). */
    sCand[tid] = (unsigned long long)d_key(m0) << 32 | tid;
    sCand[LM_THREADS + tid] = (unsigned long long)d_key(m1) << 32 | (LM_THREADS + tid);
    if (aAllow)
        atomicAdd(&sAllowed, nAllowed);
    __syncthreads();
    block_sort_keys<LM_THREADS>(sCand, 2 * LM_THREADS);
    float T0 = exact_bound_threshold((genie_metric)metric, d_key_value((uint32_t)(sCand[k - 1] >> 32)));
    __syncthreads(); /* every thread has read sCand[k - 1] before pass 2 gathers into it */
    if (!aAllow)
        nAllowed = nCand;
    else
        nAllowed = sAllowed;
    /* Pass 2: every candidate whose lower bound is at most T0. */
    scan_row(row, nCand, sOff, [&](uint32_t cc, uint32_t p, float a) {
        const uint32_t *pId = aId + sBase[p] + (cc - sOff[p]);
        if (aAllow && !d_allowed(aAllow, *pId))
            return;
        float e = sE[p], upper = a + e, lower = upper - 2.0f * e;
        if (lower <= T0) {
            uint32_t at = atomicAdd(&sCount, 1u);
            if (at < LM_CAND)
                sCand[at] = *pId;
        } else if (!(lower > T0)) {
            sBad = 1; /* NaN */
        }
    });
    __syncthreads();
    uint32_t nC = sCount, n = nAllowed < k ? nAllowed : k;
    if (sBad || nC > LM_CAND || nC < n) { /* nC >= n always, by the bound: a guard, never a wrong answer */
        if (tid == 0)
            aRest[atomicAdd(pNRest, 1u)] = qi;
        return;
    }
    /*
     * Their direct distances, a warp per candidate: the row staged in the
     * warp's shared row by all lanes at once, then lane 0 runs the CPU's
     * loop over it (direct_distance; cosine's query norm is exact_prepare's
     * aDot, dot_rn as the CPU's).
     */
    uint32_t warp = tid / 32, lane = tid & 31u;
    float *sX = sRow + warp * dim, nq = aQDot ? aQDot[qi] : 0.0f;
    for (uint32_t t = warp; t < nC; t += LM_THREADS / 32) {
        uint32_t id = (uint32_t)sCand[t];
        const float *x = aVec + (uint64_t)id * dim;
        for (uint32_t j = lane; j < dim; j += 32)
            sX[j] = x[j];
        __syncwarp();
        if (lane == 0) {
            float d = direct_distance(metric, sX, sQ, dim, aNorm ? aNorm[id] : 0.0f, nq);
            sCand[t] = (unsigned long long)d_key(d) << 32 | id;
        }
        __syncwarp(); /* the next candidate overwrites sX */
    }
    uint32_t nPad = 1;
    while (nPad < nC)
        nPad <<= 1;
    for (uint32_t t = nC + tid; t < nPad; t += LM_THREADS)
        sCand[t] = ~0ull;
    __syncthreads();
    block_sort_keys<LM_THREADS>(sCand, nPad);
    for (uint32_t t = tid; t < n; t += LM_THREADS) {
        unsigned long long key = sCand[t];
        out[(uint64_t)qi * k + t].id = (uint32_t)key;
        out[(uint64_t)qi * k + t].distance = d_key_value((uint32_t)(key >> 32));
    }
    if (tid == 0)
        aN[qi] = n;
}

/* ------------------------------------------------------------ the host */

static void lm_workspace_free(ivf_lm *lm)
{
    cudaFree(lm->d_qop);
    cudaFree(lm->d_S);
    cudaFree(lm->d_qdot);
    cudaFree(lm->d_qinfo);
    cudaFree(lm->d_qflag);
    cudaFree(lm->d_qBase);
    cudaFree(lm->d_count);
    cudaFree(lm->d_pairStart);
    cudaFree(lm->d_cursor);
    cudaFree(lm->d_pair);
    lm->d_qop = NULL;
    lm->d_S = lm->d_qdot = NULL;
    lm->d_qinfo = NULL;
    lm->d_qflag = NULL;
    lm->d_qBase = lm->d_count = lm->d_pairStart = lm->d_cursor = lm->d_pair = NULL;
    lm->nbCap = lm->nprobeCap = 0;
    lm->sCap = 0;
}

void ivf_lm_free(ivf_lm *lm)
{
    if (!lm)
        return;
    lm_workspace_free(lm);
    cudaFree(lm->d_op);
    cudaFree(lm->d_info);
    cudaFree(lm->d_listWR);
    cudaFree(lm->d_flag);
    cudaFree(lm->d_item);
    free(lm);
}

int ivf_lm_worth(uint32_t nb, uint32_t nprobe, uint32_t nlist, uint32_t k)
{
    return k <= IVF_LM_MAX_K && (uint64_t)nb * nprobe >= (uint64_t)LM_MIN_QPL * nlist;
}

genie_status ivf_lm_create(int device, const float *d_vec, const uint32_t *d_id, const uint64_t *d_start,
                           const uint64_t *aStart, uint64_t n, uint32_t dim, uint32_t nlist, genie_metric metric,
                           cudaStream_t stream, ivf_lm **pOut)
{
    *pOut = NULL;
    int major = 0;
    CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 8 || n == 0)
        return GENIE_OK;
    ivf_lm *lm = (ivf_lm *)calloc(1, sizeof *lm);
    if (!lm)
        return util_error(GENIE_ENOMEM, "IVF GPU search: out of memory");
    genie_status rc = GENIE_OK;
    unsigned flag = 0;
    uint2 *aItem = NULL;
    __half *d_opById = NULL;   /* the operands and bound data by id, before they are put by position */
    float4 *d_infoById = NULL;
    lm->device = device;
    lm->n = n;
    lm->dim = dim;
    lm->nlist = nlist;
    lm->metric = metric;
    lm->bound = exact_bound_make(metric, GENIE_PRECISION_FP16, dim);
    lm->d_id = d_id;
    lm->d_start = d_start;
    for (uint32_t l = 0; l < nlist; l++)
        lm->nItem += (uint32_t)((aStart[l + 1] - aStart[l] + LM_TILE - 1) / LM_TILE);
    aItem = (uint2 *)malloc((lm->nItem ? lm->nItem : 1) * sizeof *aItem);
    if (!aItem) {
        rc = util_error(GENIE_ENOMEM, "IVF GPU search: out of memory");
        goto fail;
    }
    for (uint32_t l = 0, i = 0; l < nlist; l++)
        for (uint64_t t = 0; t * LM_TILE < aStart[l + 1] - aStart[l]; t++)
            aItem[i++] = make_uint2(l, (uint32_t)t);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_item, (lm->nItem ? lm->nItem : 1) * sizeof(uint2)), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(lm->d_item, aItem, lm->nItem * sizeof(uint2), cudaMemcpyHostToDevice, stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaFuncSetAttribute(ivf_lm_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)LM_GEMM_SMEM),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_op, (size_t)n * dim * sizeof(__half)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_info, (size_t)n * sizeof(float4)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&d_opById, (size_t)n * dim * sizeof(__half)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&d_infoById, (size_t)n * sizeof(float4)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_listWR, (size_t)nlist * sizeof(float2)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_flag, sizeof(unsigned)), fail);
    CUDA_TRY_GOTO(rc, cudaMemsetAsync(lm->d_flag, 0, sizeof(unsigned), stream), fail);
    exact_prepare<<<(unsigned)((n * 32 + LM_PREP_THREADS - 1) / LM_PREP_THREADS), LM_PREP_THREADS, 0, stream>>>(
        d_vec, n, dim, (int)metric, (int)GENIE_PRECISION_FP16, NULL, d_opById, d_infoById, NULL, lm->d_flag, 0, 0);
    CUDA_CHECK_LAUNCH(rc, "exact_prepare", fail);
    ivf_lm_gather<<<(unsigned)((n * dim + 255) / 256), 256, 0, stream>>>(d_opById, d_infoById, d_id, n, dim,
                                                                         lm->d_op, lm->d_info);
    CUDA_CHECK_LAUNCH(rc, "ivf_lm_gather", fail);
    ivf_lm_list_bounds<<<(nlist * 32 + 255) / 256, 256, 0, stream>>>(lm->d_info, d_start, nlist, lm->d_listWR);
    CUDA_CHECK_LAUNCH(rc, "ivf_lm_list_bounds", fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(&flag, lm->d_flag, sizeof flag, cudaMemcpyDeviceToHost, stream), fail);
    CUDA_TRY_GOTO(rc, cudaStreamSynchronize(stream), fail);
    if (flag & FLAG_DIRECT) /* a base vector outside the bound's range: the query-major scan only */
        goto fail;
    free(aItem);
    cudaFree(d_opById);
    cudaFree(d_infoById);
    *pOut = lm;
    return GENIE_OK;
fail:
    free(aItem); /* pageable: a queued copy from it has been staged already */
    cudaStreamSynchronize(stream); /* the queued kernels may still read the arrays by id */
    cudaFree(d_opById);
    cudaFree(d_infoById);
    ivf_lm_free(lm);
    return rc;
}

genie_status ivf_lm_reserve(ivf_lm *lm, uint32_t nb, uint32_t nprobe, uint64_t maxCand)
{
    uint64_t need = (uint64_t)nb * maxCand;
    if (lm->nbCap >= nb && lm->nprobeCap >= nprobe && lm->sCap >= need)
        return GENIE_OK;
    lm_workspace_free(lm);
    genie_status rc = GENIE_OK;
    size_t nPair = (size_t)nb * nprobe;
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_qop, (size_t)nb * lm->dim * sizeof(__half)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_S, (size_t)(need ? need : 1) * sizeof(float)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_qinfo, (size_t)nb * sizeof(float4)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_qdot, (size_t)nb * sizeof(float)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_qflag, (size_t)nb * sizeof(unsigned)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_qBase, ((size_t)nb + 1) * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_count, (size_t)lm->nlist * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_pairStart, ((size_t)lm->nlist + 1) * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_cursor, (size_t)lm->nlist * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&lm->d_pair, nPair * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaFuncSetAttribute(ivf_lm_select, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           (int)lm_select_smem(nprobe, lm->dim)),
                  fail);
    lm->nbCap = nb;
    lm->nprobeCap = nprobe;
    lm->sCap = need;
    return GENIE_OK;
fail:
    lm_workspace_free(lm);
    return rc;
}

uint32_t ivf_lm_batch_cap(uint64_t maxCand)
{
    uint64_t nb = LM_BATCH_BYTES / sizeof(float) / (maxCand ? maxCand : 1);
    return nb > UINT32_MAX ? UINT32_MAX : (uint32_t)nb;
}

genie_status ivf_lm_enqueue(ivf_lm *lm, cudaStream_t stream, const float *d_q, uint32_t nb,
                            const genie_neighbor *d_probe, const uint32_t *d_off, uint32_t nprobe, const float *d_vec,
                            const float *d_norm, const uint32_t *d_allow, uint32_t k, genie_neighbor *d_out,
                            uint32_t *d_n, uint32_t *d_rest, uint32_t *d_nRest)
{
    genie_status rc = GENIE_OK;
    uint32_t nPair = nb * nprobe, dim = lm->dim;
    float *qdot = lm->metric == GENIE_METRIC_COSINE ? lm->d_qdot : NULL; /* cosine's CPU |q|^2 */
    CUDA_TRY(cudaMemsetAsync(lm->d_count, 0, (size_t)lm->nlist * sizeof(uint32_t), stream));
    CUDA_TRY(cudaMemsetAsync(d_nRest, 0, sizeof(uint32_t), stream));
    exact_prepare<<<(nb * 32 + LM_PREP_THREADS - 1) / LM_PREP_THREADS, LM_PREP_THREADS, 0, stream>>>(
        d_q, nb, dim, (int)lm->metric, (int)GENIE_PRECISION_FP16, NULL, lm->d_qop, lm->d_qinfo, qdot, lm->d_qflag, 1,
        0);
    CUDA_CHECK_LAUNCH(rc, "exact_prepare", fail);
    ivf_lm_count<<<(nPair + 255) / 256, 256, 0, stream>>>(d_probe, nPair, lm->d_count);
    CUDA_CHECK_LAUNCH(rc, "ivf_lm_count", fail);
    ivf_lm_lists<<<1, LM_SCAN_THREADS, 0, stream>>>(lm->d_count, lm->nlist, d_off, nb, nprobe, lm->d_pairStart,
                                                    lm->d_cursor, lm->d_qBase);
    CUDA_CHECK_LAUNCH(rc, "ivf_lm_lists", fail);
    ivf_lm_scatter<<<(nPair + 255) / 256, 256, 0, stream>>>(d_probe, nPair, lm->d_cursor, lm->d_pair);
    CUDA_CHECK_LAUNCH(rc, "ivf_lm_scatter", fail);
    if (lm->nItem) {
        ivf_lm_gemm<<<lm->nItem, LM_GEMM_THREADS, LM_GEMM_SMEM, stream>>>(
            lm->d_qop, lm->d_qinfo, lm->d_op, lm->d_info, dim, (int)lm->metric, lm->d_start, lm->d_item,
            lm->d_pairStart, lm->d_pair, nprobe, d_off, lm->d_qBase, lm->d_S);
        CUDA_CHECK_LAUNCH(rc, "ivf_lm_gemm", fail);
    }
    ivf_lm_select<<<nb, LM_THREADS, lm_select_smem(nprobe, dim), stream>>>(
        lm->d_S, lm->d_qBase, d_q, dim, (int)lm->metric, lm->bound, lm->d_qinfo, lm->d_qflag, d_probe, d_off, nprobe,
        lm->d_start, lm->d_listWR, lm->d_id, d_vec, d_norm, qdot, d_allow, k, d_out, d_n, d_rest, d_nRest);
    CUDA_CHECK_LAUNCH(rc, "ivf_lm_select", fail);
fail:
    return rc;
}
