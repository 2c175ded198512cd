/*
 * Exact k-nearest-neighbour search on the GPU (Johnson et al. (Faiss) sections 4, 5.1).
 *
 * The answer is defined by the direct loop, genie_vector_distance()
 * (distance.c): the k smallest (distance, id), every distance computed in
 * fp32 over the dimensions in order.  The GPU returns that answer bit for
 * bit, whatever the precision of its GEMM:
 *
 *   1. the base and each query batch are prepared (exact_prepare, a warp
 *      per vector): the GEMM operand (fp32; for cosine the normalised
 *      vector; TF32 or fp16 rounded, fp16 scaled by a power of two so the
 *      largest value is below 2^15), and per vector the quantities of the
 *      error bound (engine/exact_bound.h): the fp32 squared norm the l2
 *      expansion uses, w >= max(|x|, |operand|), rho = |x - operand|
 *      (both in double, rounded up), the inverse scale;
 *   2. one GEMM gives S = Q~ . X~^T for a batch of queries (cuBLAS SGEMM;
 *      cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 on fp32 operands
 *      already rounded to TF32, so hardware that truncates and hardware
 *      that rounds see the same values; or fp16 operands with fp32
 *      accumulation), from which a(x, q) approximates the distance (l2:
 *      |x|^2 + |q|^2 - 2 s, ip: -s, cosine: 1 - s);
 *   3. one block per query (exact_select, SELECT_BOUND: exact_select.cu
 *      says how) finds the candidates: every vector whose lower bound
 *      (a + e) - 2e is at most T = exact_bound_threshold(U), U the k-th
 *      smallest upper bound a + e; it computes their direct distances
 *      exactly as the CPU does and keeps the k smallest (distance, id).
 *      exact_bound.h proves the exact top k is among the candidates.
 *      A search queued inside another pipeline (exact_cuda_enqueue,
 *      exact_device.h: the inverted file's probes) with k <= 256 over at
 *      most 65,536 base vectors selects with a warp per query instead
 *      (exact_warp.cu: a threshold from each lane's few smallest upper
 *      bounds, no radix passes), by the same rule, to the same answers;
 *   4. a query the bound cannot serve is answered directly: its row is
 *      replaced by the direct distances of every base vector
 *      (exact_direct_rows) and selected exactly (exact_select,
 *      SELECT_FINAL: the k smallest (distance, id) keys).  That
 *      happens when the candidates exceed EXACT_CUDA_MAX_K (many vectors
 *      within the bound of the k-th, e.g. thousands of duplicates), when a
 *      query's squared norm is outside the bound's range (exact_bound.h),
 *      and for every query when a base vector is.  Slower, same answer.
 *
 * l1 (sum |x - q|) has no product form: a tiled kernel computes the direct
 * distances themselves (each output summed over the dimensions in order,
 * as the CPU does), selected with SELECT_FINAL; only fp32 is accepted
 * (exact.c refuses the others).
 *
 * A bitmap of allowed base vectors (engine/filter.h), uploaded once per
 * call, gives the vectors it does not allow the largest key in every
 * selection (DENIED_KEY, exact_select.cu) and keeps them out of the
 * candidates: with k at most the allowed count (the caller's), the answer
 * is the direct loop's over the allowed vectors alone.
 *
 * Thread contracts: exact_select's in exact_select.cu.  exact_prepare:
 * one warp per vector, blockDim.x a multiple of 32; lane 0 alone walks
 * the vector in order for the CPU's own squared norm (cosine's direct
 * distance needs it).
 *
 * Memory: the raw base (for the direct distances), its operand and
 * per-vector bound data, one query batch (raw in two slots, operand, bound
 * data, flags, candidates_sampled's survivors) and its distance tile; the
 * batch is sized so the tile takes at most a quarter of free memory (and
 * at most 2 GiB), and so a call has a few batches: batch b + 1 is staged
 * on the host (on several threads, cuda_stage_copy) and uploaded on a copy
 * stream while batch b computes, and batch b's answers are read back
 * while b + 1 computes.  All of it lives in an exact_resident with the
 * cuBLAS handle, the streams and two slots of pinned host staging.  With
 * a slot from the caller (a vectors index keeps one), the resident
 * outlives the call: a later call with the same base (same host
 * address, count, dimension, metric and precision; the index's vectors are
 * a read-only mapping, so the address names the data) uploads only its
 * queries and allocates nothing once the workspace is large enough.
 * Without a slot it is built and freed within the call.  Both paths run the
 * same kernels on the same data, so their answers are identical.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/common/blas_gpu.h"
#include "engine/cuda/common/cuda_common.h"
#include "engine/cuda/vectors/direct_distance.cuh"
#include "engine/cuda/vectors/exact_bound_gpu.cuh"
#include "engine/cuda/vectors/exact_device.h"
#include "engine/cuda/vectors/exact_select.h"

extern "C" {
#include "genie/genie.h"
#include "engine/exact.h"
#include "engine/exact_bound.h"
#include "engine/cuda/common/cuda_entry.h"
#include "util/error.h"
}

#define PIPE_BATCHES 4    /* a call's queries in at least this many batches ... */
#define PIPE_MIN 1024u    /* ... of at least this many queries */
#define PREP_THREADS 256
#define L1_TILE 16

template <typename T> __device__ __forceinline__ T warp_sum(T v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/*
 * One warp per vector of @p x: the GEMM operand (opF, fp32 and TF32;
 * opH, fp16; neither when the operand is x itself), the bound data
 * aInfo[i] = (fp32 |x|^2, w, rho, inverse operand scale), for cosine the
 * CPU's squared norm aDot[i], and the range check of exact_bound.h: with
 * @p aFlag per vector (@p perVector) aFlag[i] = FLAG_DIRECT when outside
 * or @p preset, else aFlag[0] |= FLAG_DIRECT when outside.
 */
__global__ void __launch_bounds__(PREP_THREADS)
exact_prepare(const float *x, uint64_t n, uint32_t dim, int metric, int precision, float *opF, __half *opH,
              float4 *aInfo, float *aDot, unsigned *aFlag, int perVector, unsigned preset)
{
    uint64_t i = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned lane = threadIdx.x & 31;
    if (i >= n)
        return; /* whole warps: i is the same on every lane */
    const float *p = x + i * dim;
    int cosine = metric == GENIE_METRIC_COSINE;
    float nrm = 0;
    double nrmD = 0;
    for (uint32_t j = lane; j < dim; j += 32) {
        nrm = fmaf(p[j], p[j], nrm);
        nrmD += (double)p[j] * p[j];
    }
    nrm = warp_sum(nrm);
    nrmD = warp_sum(nrmD);
    float r = cosine && nrm > 0 ? rsqrtf(nrm) : 1.0f;
    float scale = 1.0f, inv = 1.0f;
    if (precision == GENIE_PRECISION_FP16) {
        float m = 0;
        for (uint32_t j = lane; j < dim; j += 32)
            m = fmaxf(m, fabsf(__fmul_rn(p[j], r)));
        for (int o = 16; o > 0; o >>= 1)
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        if (m > 0) {
            int e;
            frexpf(m, &e); /* m < 2^e */
            scale = ldexpf(1.0f, 15 - e);
            inv = ldexpf(1.0f, e - 15);
        }
    }
    double rho2 = 0, v2 = 0, o2 = 0;
    for (uint32_t j = lane; j < dim; j += 32) {
        float v = __fmul_rn(p[j], r); /* r = 1 unless cosine: v = x exactly */
        float o = exact_round_operand(__fmul_rn(v, scale), (genie_precision)precision);
        if (opF)
            opF[i * dim + j] = o;
        if (opH)
            opH[i * dim + j] = __float2half_rn(o); /* exact: o is an fp16 value */
        double back = (double)o * inv, dv = (double)v - back;
        rho2 += dv * dv;
        v2 += (double)v * v;
        o2 += back * back;
    }
    rho2 = warp_sum(rho2);
    v2 = warp_sum(v2);
    o2 = warp_sum(o2);
    if (lane != 0)
        return;
    double up = 1 + 0x1p-30; /* the double sums' own rounding */
    float w = __double2float_ru(sqrt(v2 > o2 ? v2 : o2) * up);
    float rho = __double2float_ru(sqrt(rho2) * up);
    aInfo[i] = make_float4(nrm, w, rho, inv);
    if (aDot)
        aDot[i] = dot_rn(p, p, dim);
    int outside = !(nrmD <= EXACT_BOUND_MAX_SQ) || (cosine && nrmD > 0 && nrmD < EXACT_BOUND_MIN_SQ);
    if (perVector)
        aFlag[i] = outside ? FLAG_DIRECT : preset;
    else if (outside)
        atomicOr(aFlag, FLAG_DIRECT);
}

/* S[q * nBase + i] = sum_j |x_i[j] - q[j]| summed in j order (the CPU's), one 16 x 16 output tile per block. */
__global__ void exact_l1(const float *x, uint64_t nBase, const float *q, uint32_t nq, uint32_t dim, float *S)
{
    __shared__ float sx[L1_TILE][L1_TILE + 1], sq[L1_TILE][L1_TILE + 1];
    uint64_t i0 = (uint64_t)blockIdx.x * L1_TILE;
    uint32_t q0 = blockIdx.y * L1_TILE;
    uint32_t tx = threadIdx.x, ty = threadIdx.y;
    float s = 0;
    for (uint32_t j0 = 0; j0 < dim; j0 += L1_TILE) {
        uint64_t ix = i0 + ty;
        uint32_t iq = q0 + ty, j = j0 + tx;
        sx[ty][tx] = (ix < nBase && j < dim) ? x[ix * dim + j] : 0.0f;
        sq[ty][tx] = (iq < nq && j < dim) ? q[(uint64_t)iq * dim + j] : 0.0f;
        __syncthreads();
        /* Past dim both are 0: adding |0 - 0| = +0 leaves s unchanged. */
        for (uint32_t t = 0; t < L1_TILE; t++)
            s = __fadd_rn(s, fabsf(__fsub_rn(sx[tx][t], sq[ty][t])));
        __syncthreads();
    }
    uint64_t i = i0 + tx;
    uint32_t iq = q0 + ty;
    if (i < nBase && iq < nq)
        S[(uint64_t)iq * nBase + i] = s;
}

/* Row q of S = the direct distance of every base vector, for the queries flagged FLAG_DIRECT. */
__global__ void exact_direct_rows(const float *x, uint64_t nBase, const float *q, uint32_t dim, int metric,
                                  const float *aXDot, const float *aQDot, const unsigned *aFlag, float *S)
{
    if (!(aFlag[blockIdx.x] & FLAG_DIRECT))
        return;
    const float *pq = q + (uint64_t)blockIdx.x * dim;
    float nq = aQDot ? aQDot[blockIdx.x] : 0.0f, *row = S + (uint64_t)blockIdx.x * nBase;
    for (uint64_t i = threadIdx.x; i < nBase; i += blockDim.x)
        row[i] = direct_distance(metric, x + i * dim, pq, dim, aXDot ? aXDot[i] : 0.0f, nq);
}

struct exact_resident {
    int device;         /* the GPU it lives on */
    const float *hBase; /* the host base it was uploaded from: the key */
    uint64_t nBase;
    uint32_t dim;
    genie_metric metric;
    genie_precision precision;
    float *d_x;         /* the raw base: GEMM operand for fp32 l2 / ip, always the direct distances' */
    void *d_op;         /* the base's GEMM operand when it is not d_x (float, or __half for fp16) */
    float4 *d_info;     /* per base vector: exact_prepare's bound data */
    float *d_dot;       /* cosine: the CPU's squared norm of each base vector */
    unsigned *d_baseFlag;
    unsigned baseFlag;  /* FLAG_DIRECT: a base vector is outside the bound's range */
    const gpu_blas *blas; /* cuBLAS, opened by the first resident */
    cublasHandle_t hBlas;    /* bound to the stream of each GEMM (gemm) */
    cudaStream_t stream;     /* the batches' kernels and result copies, in order */
    cudaStream_t copyStream; /* the queries' uploads, ahead of the kernels (exact_cuda_search) */
    cudaEvent_t aUploaded[2], aDone[2]; /* per slot: its queries on the device; its results on the host */
    /*
     * Workspace for nCap queries: raw (two slots, so one batch uploads
     * while the one before computes) and operand vectors, bound data,
     * flags, tile, results (two pinned slots: one batch is staged and one
     * read back while the one between computes).
     */
    uint64_t nCap, nOutCap; /* queries; result slots (queries * k) */
    float *d_q[2], *d_qdot, *d_S;
    void *d_qop;
    float4 *d_qinfo;
    unsigned *d_flag;
    uint32_t *d_cand;
    uint64_t *d_kept; /* kept_cap(nBase) per query: candidates_sampled's survivors */
    genie_neighbor *d_out;
    float *h_q[2];            /* pinned: one batch of queries */
    genie_neighbor *h_out[2]; /* pinned: one batch of results */
    unsigned *h_flag[2];      /* pinned: the batch's flags and candidate counts (engine_exact_counts) */
    uint32_t *h_cand[2];
};

/* The GEMM operand is the raw vectors themselves: fp32 without normalisation. */
static int operand_is_raw(const exact_resident *r)
{
    return r->precision == GENIE_PRECISION_FP32 && r->metric != GENIE_METRIC_COSINE;
}

static size_t operand_bytes(const exact_resident *r)
{
    return r->precision == GENIE_PRECISION_FP16 ? sizeof(__half) : sizeof(float);
}

static void workspace_free(exact_resident *r)
{
    for (int t = 0; t < 2; t++) {
        cudaFree(r->d_q[t]);
        cudaFreeHost(r->h_q[t]);
        cudaFreeHost(r->h_out[t]);
        cudaFreeHost(r->h_flag[t]);
        cudaFreeHost(r->h_cand[t]);
        r->d_q[t] = r->h_q[t] = NULL;
        r->h_out[t] = NULL;
        r->h_flag[t] = NULL;
        r->h_cand[t] = NULL;
    }
    cudaFree(r->d_qop);
    cudaFree(r->d_qinfo);
    cudaFree(r->d_qdot);
    cudaFree(r->d_flag);
    cudaFree(r->d_cand);
    cudaFree(r->d_kept);
    cudaFree(r->d_S);
    cudaFree(r->d_out);
    r->d_qdot = r->d_S = NULL;
    r->d_qop = NULL;
    r->d_qinfo = NULL;
    r->d_flag = NULL;
    r->d_cand = NULL;
    r->d_kept = NULL;
    r->d_out = NULL;
    r->nCap = r->nOutCap = 0;
}

extern "C" void exact_cuda_resident_free(void *p)
{
    exact_resident *r = (exact_resident *)p;
    if (!r)
        return;
    cudaSetDevice(r->device);
    if (r->stream)
        cudaStreamSynchronize(r->stream); /* a failed call may leave a batch in flight */
    if (r->copyStream)
        cudaStreamSynchronize(r->copyStream);
    workspace_free(r);
    cudaFree(r->d_x);
    cudaFree(r->d_op);
    cudaFree(r->d_info);
    cudaFree(r->d_dot);
    cudaFree(r->d_baseFlag);
    if (r->hBlas)
        r->blas->destroy(r->hBlas);
    for (int t = 0; t < 2; t++) {
        if (r->aUploaded[t])
            cudaEventDestroy(r->aUploaded[t]);
        if (r->aDone[t])
            cudaEventDestroy(r->aDone[t]);
    }
    if (r->stream)
        cudaStreamDestroy(r->stream);
    if (r->copyStream)
        cudaStreamDestroy(r->copyStream);
    free(r);
}

/* exact_prepare over @p n vectors at @p d_v into @p op / info / dot / flags, queued on @p stream. */
static genie_status prepare(exact_resident *r, cudaStream_t stream, const float *d_v, uint64_t n, void *d_opOut,
                            float4 *d_infoOut, float *d_dotOut, unsigned *d_flagOut, int perVector, unsigned preset)
{
    genie_status rc = GENIE_OK;
    int fp16 = r->precision == GENIE_PRECISION_FP16;
    uint64_t nBlock = (n * 32 + PREP_THREADS - 1) / PREP_THREADS;
    exact_prepare<<<(unsigned)nBlock, PREP_THREADS, 0, stream>>>(
        d_v, n, r->dim, (int)r->metric, (int)r->precision, d_opOut && !fp16 ? (float *)d_opOut : NULL,
        d_opOut && fp16 ? (__half *)d_opOut : NULL, d_infoOut, d_dotOut, d_flagOut, perVector, preset);
    CUDA_CHECK_LAUNCH(rc, "exact_prepare", fail);
fail:
    return rc;
}

/* Upload and prepare @p base for @p metric and @p precision into a new resident. */
static genie_status resident_create(int device, const float *base, uint64_t nBase, uint32_t dim,
                                    genie_metric metric, genie_precision precision, exact_resident **out)
{
    genie_status rc = GENIE_OK;
    exact_resident *r = (exact_resident *)calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return util_error(GENIE_ENOMEM, "exact GPU search: out of memory");
    r->device = device;
    r->hBase = base;
    r->nBase = nBase;
    r->dim = dim;
    r->metric = metric;
    r->precision = precision;
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), fail);
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&r->copyStream, cudaStreamNonBlocking), fail);
    for (int t = 0; t < 2; t++) {
        CUDA_TRY_GOTO(rc, cudaEventCreateWithFlags(&r->aUploaded[t], cudaEventDisableTiming), fail);
        CUDA_TRY_GOTO(rc, cudaEventCreateWithFlags(&r->aDone[t], cudaEventDisableTiming), fail);
    }
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_x, nBase * dim * sizeof(float)), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_x, base, nBase * dim * sizeof(float), cudaMemcpyHostToDevice, r->stream),
                  fail);
    if (metric != GENIE_METRIC_L1) {
        if (!operand_is_raw(r))
            CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_op, nBase * dim * operand_bytes(r)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_info, nBase * sizeof(float4)), fail);
        if (metric == GENIE_METRIC_COSINE)
            CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_dot, nBase * sizeof(float)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_baseFlag, sizeof(unsigned)), fail);
        CUDA_TRY_GOTO(rc, cudaMemsetAsync(r->d_baseFlag, 0, sizeof(unsigned), r->stream), fail);
        GENIE_TRY_GOTO(rc, prepare(r, r->stream, r->d_x, nBase, r->d_op, r->d_info, r->d_dot, r->d_baseFlag, 0, 0),
                       fail);
        CUDA_TRY_GOTO(rc,
                      cudaMemcpyAsync(&r->baseFlag, r->d_baseFlag, sizeof(unsigned), cudaMemcpyDeviceToHost, r->stream),
                      fail);
        CUDA_TRY_GOTO(rc, cudaStreamSynchronize(r->stream), fail);
        GENIE_TRY_GOTO(rc, gpu_blas_get(&r->blas), fail);
        if (r->blas->create(&r->hBlas) != CUBLAS_STATUS_SUCCESS) {
            rc = util_error(GENIE_EGPU, "exact GPU search: cublasCreate failed");
            goto fail;
        }
    }
    *out = r;
    return GENIE_OK;
fail:
    exact_cuda_resident_free(r);
    return rc;
}

/*
 * Make the workspace hold a batch of min(nQuery, nMax, what a quarter of
 * free memory allows, max(PIPE_MIN, nQuery / PIPE_BATCHES)) queries; keeps
 * a workspace that already does.  Sets *pBatch to the batch size to use.
 */
static genie_status workspace_reserve(exact_resident *r, uint64_t nQuery, uint64_t nMax, uint32_t k,
                                      uint64_t *pBatch)
{
    genie_status rc = GENIE_OK;
    size_t freeMem = 0, totalMem = 0;
    uint64_t nBase = r->nBase, dim = r->dim;
    /* Per query: its distance row, its vectors (two raw, operand), its bound data and its kept survivors. */
    uint64_t rowBytes = nBase * sizeof(float) + dim * 3 * sizeof(float) + 32 + kept_cap(nBase) * sizeof(uint64_t);
    CUDA_TRY_GOTO(rc, cudaMemGetInfo(&freeMem, &totalMem), fail);
    {
        /* Memory our own workspace holds counts as free: it can be reused. */
        uint64_t avail = freeMem + r->nCap * rowBytes;
        uint64_t tileBudget = avail / 4 < (2ull << 30) ? avail / 4 : (2ull << 30);
        uint64_t nBatch = tileBudget / rowBytes;
        if (nBatch > nMax)
            nBatch = nMax;
        /* A few batches at least, so that uploads and read-backs overlap the kernels (exact_cuda_search). */
        uint64_t nPipe = (nQuery + PIPE_BATCHES - 1) / PIPE_BATCHES;
        nPipe = nPipe < PIPE_MIN ? PIPE_MIN : nPipe;
        if (nBatch > nPipe)
            nBatch = nPipe;
        if (nBatch > nQuery)
            nBatch = nQuery;
        if (nBatch == 0) {
            return util_error(GENIE_ENOMEM, "exact GPU search: one row of %llu distances does not fit GPU memory",
                              (unsigned long long)nBase);
        }
        if (r->nCap >= nBatch && r->nOutCap >= nBatch * k) {
            *pBatch = nBatch;
            return GENIE_OK;
        }
        workspace_free(r);
        for (int t = 0; t < 2; t++) {
            CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_q[t], nBatch * dim * sizeof(float)), fail);
            CUDA_TRY_GOTO(rc, cudaMallocHost(&r->h_q[t], nBatch * dim * sizeof(float)), fail);
            CUDA_TRY_GOTO(rc, cudaMallocHost(&r->h_out[t], nBatch * k * sizeof(genie_neighbor)), fail);
            CUDA_TRY_GOTO(rc, cudaMallocHost(&r->h_flag[t], nBatch * sizeof(unsigned)), fail);
            CUDA_TRY_GOTO(rc, cudaMallocHost(&r->h_cand[t], nBatch * sizeof(uint32_t)), fail);
        }
        if (r->metric != GENIE_METRIC_L1 && !operand_is_raw(r))
            CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_qop, nBatch * dim * operand_bytes(r)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_qinfo, nBatch * sizeof(float4)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_qdot, nBatch * sizeof(float)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_flag, nBatch * sizeof(unsigned)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_cand, nBatch * sizeof(uint32_t)), fail);
        if (r->metric != GENIE_METRIC_L1)
            CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_kept, nBatch * kept_cap(nBase) * sizeof(uint64_t)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_S, nBatch * nBase * sizeof(float)), fail);
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_out, nBatch * k * sizeof(genie_neighbor)), fail);
        r->nCap = nBatch;
        r->nOutCap = nBatch * k;
        *pBatch = nBatch;
        return GENIE_OK;
    }
fail:
    workspace_free(r);
    return rc;
}

/*
 * S^T (nBase x nb, column-major) = X~ (the base operand) . Q~^T in the
 * resident's precision, queued on @p stream; @p d_q the raw queries.
 */
static genie_status gemm(exact_resident *r, cudaStream_t stream, const float *d_q, uint32_t nb)
{
    const float one = 1.0f, zero = 0.0f;
    r->blas->setStream(r->hBlas, stream);
    int n = (int)r->nBase, d = (int)r->dim;
    const void *A = operand_is_raw(r) ? (const void *)r->d_x : r->d_op;
    const void *B = operand_is_raw(r) ? (const void *)d_q : r->d_qop;
    cublasStatus_t st;
    if (r->precision == GENIE_PRECISION_FP32)
        st = r->blas->sgemm(r->hBlas, CUBLAS_OP_T, CUBLAS_OP_N, n, (int)nb, d, &one, (const float *)A, d,
                         (const float *)B, d, &zero, r->d_S, n);
    else if (r->precision == GENIE_PRECISION_TF32)
        st = r->blas->gemmEx(r->hBlas, CUBLAS_OP_T, CUBLAS_OP_N, n, (int)nb, d, &one, A, CUDA_R_32F, d, B, CUDA_R_32F,
                          d, &zero, r->d_S, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    else
        st = r->blas->gemmEx(r->hBlas, CUBLAS_OP_T, CUBLAS_OP_N, n, (int)nb, d, &one, A, CUDA_R_16F, d, B, CUDA_R_16F,
                          d, &zero, r->d_S, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS)
        return util_error(GENIE_EGPU, "exact GPU search: the %s GEMM failed (cuBLAS status %d)",
                          r->precision == GENIE_PRECISION_FP32   ? "fp32"
                          : r->precision == GENIE_PRECISION_TF32 ? "TF32"
                                                                 : "fp16",
                          (int)st);
    return GENIE_OK;
}

/*
 * Queue on @p stream the kernels of one batch of @p nb queries at @p d_q
 * (on the device), their answers to @p d_out, their re-ranked candidates
 * to @p d_cand (NULL: not counted).  @p warp: exact_warp_select instead
 * of exact_select's bounded selection (its limits checked by the caller;
 * no bitmap).
 */
static genie_status enqueue_kernels(exact_resident *r, cudaStream_t stream, const float *d_q, uint32_t nb, uint32_t k,
                                    const uint32_t *d_allow, genie_neighbor *d_out, uint32_t *d_cand, int warp)
{
    genie_status rc = GENIE_OK;
    uint64_t nBase = r->nBase;
    uint32_t dim = r->dim;
    int metric = (int)r->metric;
    exact_bound bound = exact_bound_make(r->metric, r->precision, dim);
    float *d_qdot = r->metric == GENIE_METRIC_COSINE ? r->d_qdot : NULL;
    if (d_cand)
        CUDA_TRY_GOTO(rc, cudaMemsetAsync(d_cand, 0, nb * sizeof(uint32_t), stream), fail);
    if (r->metric == GENIE_METRIC_L1) {
        CUDA_TRY_GOTO(rc, cudaMemsetAsync(r->d_flag, 0, nb * sizeof(unsigned), stream), fail);
        dim3 grid((unsigned)((nBase + L1_TILE - 1) / L1_TILE), (nb + L1_TILE - 1) / L1_TILE);
        exact_l1<<<grid, dim3(L1_TILE, L1_TILE), 0, stream>>>(r->d_x, nBase, d_q, nb, dim, r->d_S);
        CUDA_CHECK_LAUNCH(rc, "exact_l1", fail);
        exact_select<<<nb, SELECT_THREADS, 0, stream>>>(r->d_S, (uint32_t)nBase, SELECT_FINAL, 0, metric, bound, NULL,
                                                        NULL, k, 0, NULL, 0, r->d_x, d_q, dim, NULL, NULL, d_allow,
                                                        r->d_flag, NULL, d_out);
        CUDA_CHECK_LAUNCH(rc, "exact_select", fail);
        return GENIE_OK;
    }
    GENIE_TRY_GOTO(rc,
                   prepare(r, stream, d_q, nb, operand_is_raw(r) ? NULL : r->d_qop, r->d_qinfo, d_qdot, r->d_flag, 1,
                           r->baseFlag),
                   fail);
    if (!r->baseFlag) {
        GENIE_TRY_GOTO(rc, gemm(r, stream, d_q, nb), fail);
        if (warp) {
            GENIE_TRY_GOTO(rc,
                           exact_warp_select(stream, r->d_S, (uint32_t)nBase, nb, metric, bound, r->d_info,
                                             r->d_qinfo, k, r->d_x, d_q, dim, r->d_dot, d_qdot, r->d_flag, d_out),
                           fail);
        } else {
            exact_select<<<nb, SELECT_THREADS, 0, stream>>>(r->d_S, (uint32_t)nBase, SELECT_BOUND, 0, metric, bound,
                                                            r->d_info, r->d_qinfo, k, sample_size(nBase, k),
                                                            r->d_kept, kept_cap(nBase), r->d_x, d_q, dim, r->d_dot,
                                                            d_qdot, d_allow, r->d_flag, d_cand, d_out);
            CUDA_CHECK_LAUNCH(rc, "exact_select", fail);
        }
    }
    exact_direct_rows<<<nb, SELECT_THREADS, 0, stream>>>(r->d_x, nBase, d_q, dim, metric, r->d_dot, d_qdot, r->d_flag,
                                                         r->d_S);
    CUDA_CHECK_LAUNCH(rc, "exact_direct_rows", fail);
    exact_select<<<nb, SELECT_THREADS, 0, stream>>>(r->d_S, (uint32_t)nBase, SELECT_FINAL, 1, metric, bound, NULL,
                                                    NULL, k, 0, NULL, 0, r->d_x, d_q, dim, NULL, NULL, d_allow,
                                                    r->d_flag, NULL, d_out);
    CUDA_CHECK_LAUNCH(rc, "exact_select", fail);
fail:
    return rc;
}

/*
 * Queue one batch of @p nb queries, staged in r->h_q[slot]: the upload on
 * the copy stream, then on the stream (after the upload) the kernels and
 * the read-back into the slot's pinned results, and aDone[slot].  The
 * caller has collected the slot's previous batch (batch_collect), so its
 * staging, device queries and results are free.
 */
static genie_status batch_enqueue(exact_resident *r, int slot, uint32_t nb, uint32_t k, const uint32_t *d_allow)
{
    genie_status rc = GENIE_OK;
    float *d_q = r->d_q[slot];
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(d_q, r->h_q[slot], (size_t)nb * r->dim * sizeof(float), cudaMemcpyHostToDevice,
                                      r->copyStream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaEventRecord(r->aUploaded[slot], r->copyStream), fail);
    CUDA_TRY_GOTO(rc, cudaStreamWaitEvent(r->stream, r->aUploaded[slot], 0), fail);
    GENIE_TRY_GOTO(rc, enqueue_kernels(r, r->stream, d_q, nb, k, d_allow, r->d_out, r->d_cand, 0), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->h_out[slot], r->d_out, (size_t)nb * k * sizeof(genie_neighbor),
                                      cudaMemcpyDeviceToHost, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc,
                  cudaMemcpyAsync(r->h_flag[slot], r->d_flag, nb * sizeof(unsigned), cudaMemcpyDeviceToHost, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc,
                  cudaMemcpyAsync(r->h_cand[slot], r->d_cand, nb * sizeof(uint32_t), cudaMemcpyDeviceToHost, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaEventRecord(r->aDone[slot], r->stream), fail);
fail:
    return rc;
}

/* Wait for the batch of @p nb queries queued in @p slot; its answers to @p out, what it did added to @p pCounts. */
static genie_status batch_collect(exact_resident *r, int slot, uint32_t nb, uint32_t k, genie_neighbor *out,
                                  engine_exact_counts *pCounts)
{
    genie_status rc = GENIE_OK;
    CUDA_TRY_GOTO(rc, cudaEventSynchronize(r->aDone[slot]), fail);
    memcpy(out, r->h_out[slot], (size_t)nb * k * sizeof(genie_neighbor));
    for (uint32_t i = 0; i < nb; i++) { /* l1 has no bound: every distance is direct */
        int direct = (r->h_flag[slot][i] & FLAG_DIRECT) != 0;
        pCounts->direct += direct;
        pCounts->distances += direct || r->metric == GENIE_METRIC_L1 ? r->nBase : r->h_cand[slot][i];
    }
fail:
    return rc;
}

/*
 * The slot's resident when it holds this base (device, host address,
 * count, dimension, metric, precision), else a new one (stored in the slot
 * when there is one); an old one is freed.
 */
static genie_status resident_get(int device, void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                                 genie_metric metric, genie_precision precision, exact_resident **pOut)
{
    exact_resident *r = ppResident ? (exact_resident *)*ppResident : NULL;
    if (r && !(r->device == device && r->hBase == base && r->nBase == nBase && r->dim == dim && r->metric == metric &&
               r->precision == precision)) {
        exact_cuda_resident_free(r);
        r = NULL;
        *ppResident = NULL;
    }
    if (!r) {
        GENIE_TRY(resident_create(device, base, nBase, dim, metric, precision, &r));
        if (ppResident)
            *ppResident = r;
    }
    *pOut = r;
    return GENIE_OK;
}

extern "C" genie_status exact_cuda_search(int device, void **ppResident, const float *base, uint64_t nBase,
                                          const float *queries, uint64_t nQuery, uint32_t dim, genie_metric metric,
                                          genie_precision precision, const uint64_t *aAllow, uint32_t k,
                                          genie_neighbor *out, engine_exact_counts *pCounts)
{
    genie_status rc = GENIE_OK;
    exact_resident *r = NULL;
    uint64_t nBatch = 0;
    uint32_t *d_allow = NULL; /* the call's bitmap of allowed base vectors (engine/filter.h), one upload */
    CUDA_TRY_GOTO(rc, cudaSetDevice(device), fail);
    GENIE_TRY_GOTO(rc, resident_get(device, ppResident, base, nBase, dim, metric, precision, &r), fail);
    GENIE_TRY_GOTO(rc, workspace_reserve(r, nQuery, 65535, k, &nBatch), fail); /* gridDim.y of exact_l1 */
    if (aAllow) {
        size_t nAllowBytes = (size_t)(nBase + 63) / 64 * 8;
        CUDA_TRY_GOTO(rc, cudaMalloc(&d_allow, nAllowBytes), fail);
        CUDA_TRY_GOTO(rc, cudaMemcpy(d_allow, aAllow, nAllowBytes, cudaMemcpyHostToDevice), fail);
    }
    /*
     * Two slots in turn: batch b is staged on the host and queued while
     * batch b - 1 computes, then batch b - 1 is collected.  Batch b's slot
     * was batch b - 2's, collected (its event waited for) the round before.
     */
    {
        uint64_t q0Prev = 0;
        uint32_t nbPrev = 0;
        int b = 0;
        for (uint64_t q0 = 0; q0 < nQuery; q0 += nBatch, b++) {
            uint32_t nb = (uint32_t)(nQuery - q0 < nBatch ? nQuery - q0 : nBatch);
            cuda_stage_copy(r->h_q[b & 1], queries + q0 * dim, (uint64_t)nb * dim * sizeof(float));
            GENIE_TRY_GOTO(rc, batch_enqueue(r, b & 1, nb, k, d_allow), fail);
            if (b > 0)
                GENIE_TRY_GOTO(rc, batch_collect(r, (b - 1) & 1, nbPrev, k, out + q0Prev * k, pCounts), fail);
            q0Prev = q0;
            nbPrev = nb;
        }
        if (b > 0)
            GENIE_TRY_GOTO(rc, batch_collect(r, (b - 1) & 1, nbPrev, k, out + q0Prev * k, pCounts), fail);
    }
fail:
    cudaFree(d_allow); /* waits for the device: no kernel of the call still reads it */
    if (rc != GENIE_OK && ppResident && *ppResident) {
        /* A failed call leaves no half-usable state behind. */
        exact_cuda_resident_free(*ppResident);
        *ppResident = NULL;
        r = NULL;
    }
    if (!ppResident)
        exact_cuda_resident_free(r);
    return rc;
}

genie_status exact_cuda_reserve(int device, void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                                genie_metric metric, genie_precision precision, uint64_t nQuery, uint32_t nMax,
                                uint32_t k, uint32_t *pBatch)
{
    genie_status rc = GENIE_OK;
    exact_resident *r = NULL;
    uint64_t nBatch = 0;
    CUDA_TRY_GOTO(rc, cudaSetDevice(device), fail);
    GENIE_TRY_GOTO(rc, resident_get(device, ppResident, base, nBase, dim, metric, precision, &r), fail);
    GENIE_TRY_GOTO(rc, workspace_reserve(r, nQuery, nMax, k, &nBatch), fail);
    *pBatch = (uint32_t)nBatch;
fail:
    if (rc != GENIE_OK && *ppResident) {
        exact_cuda_resident_free(*ppResident);
        *ppResident = NULL;
    }
    return rc;
}

genie_status exact_cuda_enqueue(void *pResident, const float *d_q, uint32_t nb, uint32_t k, cudaStream_t stream,
                                genie_neighbor *d_out)
{
    exact_resident *r = (exact_resident *)pResident;
    int warp = k <= EXACT_WARP_MAX_K && r->nBase <= EXACT_WARP_MAX_BASE && r->metric != GENIE_METRIC_L1;
    return enqueue_kernels(r, stream, d_q, nb, k, NULL, d_out, NULL, warp);
}
