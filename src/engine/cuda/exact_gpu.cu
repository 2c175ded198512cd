/*
 * Exact k-nearest-neighbour search on the GPU (Johnson et al. (Faiss) sections 4, 5.1).
 *
 * Per batch of queries:
 *   1. a distance tile S (nBatch x nBase floats, row q = query q) comes from
 *      one cuBLAS SGEMM for l2, ip and cosine (S = Q . X^T; l2 adds the
 *      norms, |x|^2 - 2 x.q + |q|^2; cosine works on normalised copies), or
 *      from a direct tiled kernel for l1 (sum |x - q| has no GEMM form);
 *   2. one block per query selects the k nearest by radix selection on a
 *      64-bit key, (ordered distance key << 32 | id): a histogram of the
 *      next 8 bits among the keys that share the prefix found so far picks
 *      the bucket holding the k-th key, until a bucket holds exactly the
 *      keys still needed (ids make keys distinct, so ties are resolved by
 *      the smaller id without a special case); then every key at or below
 *      the prefix is gathered into shared memory and bitonic-sorted; for
 *      l2 the k distances are then recomputed directly from the vectors
 *      (the GEMM expansion loses digits for near points) and sorted again.
 *
 * Thread contract of exact_select: blockDim.x == SELECT_THREADS; every
 * thread runs every loop (the __syncthreads() are unconditional); k <=
 * EXACT_CUDA_MAX_K, so the gathered keys fit the shared array.  The
 * histogram adds through warp aggregation (__match_any_sync), because in
 * the first passes nearly all keys fall in one or two buckets.
 *
 * Memory: the base, its norms, one query batch and its distance tile; the
 * batch is sized so the tile takes at most a quarter of free memory (and
 * at most 2 GiB).  All of it lives in an exact_resident: the base as
 * prepared for the metric (normalised for cosine, with norms for l2), the
 * cuBLAS handle, a stream, the device workspace and pinned host staging.
 * With a slot from the caller (a vectors index keeps one), the resident
 * outlives the call: a later call with the same base (same host address,
 * count, dimension and metric form; the index's vectors are a read-only
 * mapping, so the address names the data) uploads only its queries and
 * allocates nothing once the workspace is large enough.  Without a slot
 * it is built and freed within the call.  Both paths run the same kernels
 * on the same data, so their answers are identical.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "genie/vectors.h"
#include "engine/exact.h"
#include "engine/cuda/cuda_entry.h"
#include "util/error.h"
}

#define SELECT_THREADS 512
#define L1_TILE 16

static genie_status gpu_fail(cudaError_t err, const char *zWhat)
{
    cudaGetLastError();
    if (err == cudaErrorMemoryAllocation)
        return util_error(GENIE_ENOMEM, "exact GPU search: out of GPU memory (%s)", zWhat);
    return util_error(GENIE_EGPU, "exact GPU search: %s failed: %s", zWhat, cudaGetErrorString(err));
}

#define GPU_TRY(rc, call, label)                         \
    do {                                                 \
        cudaError_t e_ = (call);                         \
        if (e_ != cudaSuccess) {                         \
            (rc) = gpu_fail(e_, #call);                  \
            goto label;                                  \
        }                                                \
    } while (0)

#define GPU_LAUNCHED(rc, zKernel, label) GPU_TRY(rc, cudaGetLastError(), label)

__device__ __forceinline__ uint32_t d_key(float f)
{
    uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float d_key_value(uint32_t key)
{
    uint32_t u = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
    return __uint_as_float(u);
}

/* Row norms: aNorm[i] = |x_i|^2; with normalise, x_i /= |x_i| (0 stays 0). */
__global__ void exact_norms(float *x, uint64_t n, uint32_t dim, float *aNorm, int normalise)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float *p = x + i * dim, s = 0;
    for (uint32_t j = 0; j < dim; j++)
        s += p[j] * p[j];
    if (aNorm)
        aNorm[i] = s;
    if (normalise && s > 0) {
        float r = rsqrtf(s);
        for (uint32_t j = 0; j < dim; j++)
            p[j] *= r;
    }
}

/* S[q * nBase + i] = sum_j |x_i[j] - q[j]|, one 16 x 16 output tile per block. */
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
        for (uint32_t t = 0; t < L1_TILE; t++)
            s += fabsf(sx[tx][t] - sq[ty][t]);
        __syncthreads();
    }
    uint64_t i = i0 + tx;
    uint32_t iq = q0 + ty;
    if (i < nBase && iq < nq)
        S[(uint64_t)iq * nBase + i] = s;
}

/* The key of base vector i for the query whose row of S is @p row. */
__device__ __forceinline__ uint64_t select_key_at(const float *row, uint32_t i, int metric, const float *aNorm,
                                                  float qNorm)
{
    float s = row[i], d;
    if (metric == GENIE_METRIC_L2)
        d = fmaxf(aNorm[i] + qNorm - 2.0f * s, 0.0f);
    else if (metric == GENIE_METRIC_IP)
        d = -s;
    else if (metric == GENIE_METRIC_COSINE)
        d = 1.0f - s;
    else
        d = s;
    return (uint64_t)d_key(d) << 32 | i;
}

/* Ascending bitonic sort of a[0 .. nPad), nPad a power of two; whole block. */
static __device__ void bitonic_sort(uint64_t *a, uint32_t nPad, uint32_t tid)
{
    for (uint32_t size = 2; size <= nPad; size <<= 1) {
        for (uint32_t stride = size >> 1; stride > 0; stride >>= 1) {
            for (uint32_t i = tid; i < nPad; i += SELECT_THREADS) {
                uint32_t j = i ^ stride;
                if (j > i) {
                    int up = (i & size) == 0;
                    uint64_t u = a[i], v = a[j];
                    if ((u > v) == up) {
                        a[i] = v;
                        a[j] = u;
                    }
                }
            }
            __syncthreads();
        }
    }
}

__global__ void __launch_bounds__(SELECT_THREADS)
exact_select(const float *S, uint32_t nBase, int metric, const float *aNorm, const float *aQNorm, uint32_t k,
             const float *x, const float *q, uint32_t dim, genie_neighbor *out)
{
    __shared__ uint32_t hist[256];
    __shared__ uint64_t aSel[EXACT_CUDA_MAX_K];
    __shared__ uint64_t prefix;
    __shared__ uint32_t need, nSel;
    __shared__ int prefixBits, done;
    const float *row = S + (uint64_t)blockIdx.x * nBase;
    float qNorm = aQNorm ? aQNorm[blockIdx.x] : 0.0f;
    uint32_t tid = threadIdx.x, lane = tid & 31;
    if (tid == 0) {
        prefix = 0;
        prefixBits = 0;
        need = k;
        done = 0;
        nSel = 0;
    }
    __syncthreads();
    for (int pass = 0; pass < 8 && !done; pass++) {
        for (uint32_t b = tid; b < 256; b += SELECT_THREADS)
            hist[b] = 0;
        __syncthreads();
        int shift = 56 - 8 * pass, bits = prefixBits;
        uint64_t pre = prefix;
        for (uint32_t i0 = 0; i0 < nBase; i0 += SELECT_THREADS) {
            uint32_t i = i0 + tid;
            int bin = -1;
            if (i < nBase) {
                uint64_t key = select_key_at(row, i, metric, aNorm, qNorm);
                if (bits == 0 || (key >> (64 - bits)) == pre)
                    bin = (int)((key >> shift) & 0xff);
            }
            unsigned active = __activemask();
            unsigned peers = __match_any_sync(active, bin);
            if (bin >= 0 && lane == (unsigned)(__ffs(peers) - 1))
                atomicAdd(&hist[bin], (uint32_t)__popc(peers));
        }
        __syncthreads();
        if (tid == 0) {
            uint32_t cum = 0, b = 0;
            for (; b < 255 && cum + hist[b] < need; b++)
                cum += hist[b];
            need -= cum;
            prefix = (prefix << 8) | b;
            prefixBits += 8;
            done = hist[b] == need;
        }
        __syncthreads();
    }
    /* Every key whose top prefixBits bits are <= prefix: exactly k of them. */
    int bits = prefixBits;
    uint64_t pre = prefix;
    for (uint32_t i = tid; i < nBase; i += SELECT_THREADS) {
        uint64_t key = select_key_at(row, i, metric, aNorm, qNorm);
        if ((key >> (64 - bits)) <= pre) {
            uint32_t pos = atomicAdd(&nSel, 1u);
            if (pos < EXACT_CUDA_MAX_K)
                aSel[pos] = key;
        }
    }
    __syncthreads();
    uint32_t nPad = 1;
    while (nPad < k)
        nPad <<= 1;
    for (uint32_t i = k + tid; i < nPad; i += SELECT_THREADS)
        aSel[i] = UINT64_MAX;
    __syncthreads();
    bitonic_sort(aSel, nPad, tid);
    if (metric == GENIE_METRIC_L2) {
        /*
         * The expansion |x|^2 - 2 x.q + |q|^2 loses digits when x and q are
         * close: recompute the k selected distances directly and sort again,
         * so the distances returned are as exact as the CPU's.
         */
        const float *pq = q + (uint64_t)blockIdx.x * dim;
        for (uint32_t i = tid; i < k; i += SELECT_THREADS) {
            uint32_t id = (uint32_t)aSel[i];
            const float *px = x + (uint64_t)id * dim;
            float s = 0;
            for (uint32_t j = 0; j < dim; j++)
                s += (px[j] - pq[j]) * (px[j] - pq[j]);
            aSel[i] = (uint64_t)d_key(sqrtf(s)) << 32 | id;
        }
        __syncthreads();
        bitonic_sort(aSel, nPad, tid);
    }
    for (uint32_t i = tid; i < k; i += SELECT_THREADS) {
        uint64_t key = aSel[i];
        out[(uint64_t)blockIdx.x * k + i].id = (uint32_t)key;
        out[(uint64_t)blockIdx.x * k + i].distance = d_key_value((uint32_t)(key >> 32));
    }
}

/* The metric's form of the prepared base: raw, normalised (cosine) or raw with norms (l2). */
static int base_form(genie_metric metric)
{
    return metric == GENIE_METRIC_COSINE ? 1 : metric == GENIE_METRIC_L2 ? 2 : 0;
}

struct exact_resident {
    int device;         /* the GPU it lives on */
    const float *hBase; /* the host base it was uploaded from: the key */
    uint64_t nBase;
    uint32_t dim;
    int form;
    float *d_x, *d_norm; /* the prepared base; d_norm for l2 only */
    cublasHandle_t hBlas;
    cudaStream_t stream;
    /* Workspace for nCap queries: their vectors, norms, distance tile, results. */
    uint64_t nCap, nOutCap; /* queries; result slots (queries * k) */
    float *d_q, *d_qnorm, *d_S;
    genie_neighbor *d_out;
    float *h_q;             /* pinned: one batch of queries */
    genie_neighbor *h_out;  /* pinned: one batch of results */
};

static void workspace_free(exact_resident *r)
{
    cudaFree(r->d_q);
    cudaFree(r->d_qnorm);
    cudaFree(r->d_S);
    cudaFree(r->d_out);
    cudaFreeHost(r->h_q);
    cudaFreeHost(r->h_out);
    r->d_q = r->d_qnorm = r->d_S = NULL;
    r->d_out = r->h_out = NULL;
    r->h_q = NULL;
    r->nCap = r->nOutCap = 0;
}

extern "C" void exact_cuda_resident_free(void *p)
{
    exact_resident *r = (exact_resident *)p;
    if (!r)
        return;
    cudaSetDevice(r->device);
    workspace_free(r);
    cudaFree(r->d_x);
    cudaFree(r->d_norm);
    if (r->hBlas)
        cublasDestroy(r->hBlas);
    if (r->stream)
        cudaStreamDestroy(r->stream);
    free(r);
}

/* Upload and prepare @p base for @p metric into a new resident. */
static genie_status resident_create(int device, const float *base, uint64_t nBase, uint32_t dim,
                                    genie_metric metric, exact_resident **out)
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
    r->form = base_form(metric);
    GPU_TRY(rc, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), fail);
    GPU_TRY(rc, cudaMalloc(&r->d_x, nBase * dim * sizeof(float)), fail);
    GPU_TRY(rc, cudaMemcpyAsync(r->d_x, base, nBase * dim * sizeof(float), cudaMemcpyHostToDevice, r->stream),
            fail);
    if (r->form == 2)
        GPU_TRY(rc, cudaMalloc(&r->d_norm, nBase * sizeof(float)), fail);
    if (r->form != 0) {
        exact_norms<<<(unsigned)((nBase + 255) / 256), 256, 0, r->stream>>>(r->d_x, nBase, dim, r->d_norm,
                                                                              r->form == 1);
        GPU_LAUNCHED(rc, "exact_norms", fail);
    }
    if (metric != GENIE_METRIC_L1) {
        if (cublasCreate(&r->hBlas) != CUBLAS_STATUS_SUCCESS) {
            rc = util_error(GENIE_EGPU, "exact GPU search: cublasCreate failed");
            goto fail;
        }
        cublasSetStream(r->hBlas, r->stream);
    }
    *out = r;
    return GENIE_OK;
fail:
    exact_cuda_resident_free(r);
    return rc;
}

/*
 * Make the workspace hold a batch of min(nQuery, what a quarter of free
 * memory allows) queries; keeps a workspace that already does.  Sets
 * *pBatch to the batch size to use.
 */
static genie_status workspace_reserve(exact_resident *r, uint64_t nQuery, uint32_t k, uint64_t *pBatch)
{
    genie_status rc = GENIE_OK;
    size_t freeMem = 0, totalMem = 0;
    uint64_t nBase = r->nBase, dim = r->dim;
    uint64_t rowBytes = nBase * sizeof(float);
    GPU_TRY(rc, cudaMemGetInfo(&freeMem, &totalMem), fail);
    {
        /* Memory our own workspace holds counts as free: it can be reused. */
        uint64_t avail = freeMem + r->nCap * rowBytes;
        uint64_t tileBudget = avail / 4 < (2ull << 30) ? avail / 4 : (2ull << 30);
        uint64_t nBatch = tileBudget / rowBytes;
        if (nBatch > 65535)
            nBatch = 65535; /* gridDim.y of the l1 kernel, and plenty */
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
        GPU_TRY(rc, cudaMalloc(&r->d_q, nBatch * dim * sizeof(float)), fail);
        GPU_TRY(rc, cudaMalloc(&r->d_qnorm, nBatch * sizeof(float)), fail);
        GPU_TRY(rc, cudaMalloc(&r->d_S, nBatch * rowBytes), fail);
        GPU_TRY(rc, cudaMalloc(&r->d_out, nBatch * k * sizeof(genie_neighbor)), fail);
        GPU_TRY(rc, cudaMallocHost(&r->h_q, nBatch * dim * sizeof(float)), fail);
        GPU_TRY(rc, cudaMallocHost(&r->h_out, nBatch * k * sizeof(genie_neighbor)), fail);
        r->nCap = nBatch;
        r->nOutCap = nBatch * k;
        *pBatch = nBatch;
        return GENIE_OK;
    }
fail:
    workspace_free(r);
    return rc;
}

/* One batch of @p nb queries (already in r->h_q) to @p out. */
static genie_status search_batch(exact_resident *r, uint32_t nb, genie_metric metric, uint32_t k,
                                 genie_neighbor *out)
{
    genie_status rc = GENIE_OK;
    uint64_t nBase = r->nBase;
    uint32_t dim = r->dim;
    GPU_TRY(rc, cudaMemcpyAsync(r->d_q, r->h_q, (size_t)nb * dim * sizeof(float), cudaMemcpyHostToDevice, r->stream),
            fail);
    if (r->form != 0) {
        exact_norms<<<(nb + 255) / 256, 256, 0, r->stream>>>(r->d_q, nb, dim, r->form == 2 ? r->d_qnorm : NULL,
                                                              r->form == 1);
        GPU_LAUNCHED(rc, "exact_norms", fail);
    }
    if (metric != GENIE_METRIC_L1) {
        /* Column-major view: S^T (nBase x nb) = X^T' (nBase x dim) . Q (dim x nb). */
        const float one = 1.0f, zero = 0.0f;
        cublasStatus_t st = cublasSgemm(r->hBlas, CUBLAS_OP_T, CUBLAS_OP_N, (int)nBase, (int)nb, (int)dim, &one,
                                        r->d_x, (int)dim, r->d_q, (int)dim, &zero, r->d_S, (int)nBase);
        if (st != CUBLAS_STATUS_SUCCESS)
            return util_error(GENIE_EGPU, "exact GPU search: cublasSgemm failed (status %d)", (int)st);
    } else {
        dim3 grid((unsigned)((nBase + L1_TILE - 1) / L1_TILE), (nb + L1_TILE - 1) / L1_TILE);
        exact_l1<<<grid, dim3(L1_TILE, L1_TILE), 0, r->stream>>>(r->d_x, nBase, r->d_q, nb, dim, r->d_S);
        GPU_LAUNCHED(rc, "exact_l1", fail);
    }
    exact_select<<<nb, SELECT_THREADS, 0, r->stream>>>(r->d_S, (uint32_t)nBase, (int)metric, r->d_norm,
                                                       r->form == 2 ? r->d_qnorm : NULL, k, r->d_x, r->d_q, dim,
                                                       r->d_out);
    GPU_LAUNCHED(rc, "exact_select", fail);
    GPU_TRY(rc, cudaMemcpyAsync(r->h_out, r->d_out, (size_t)nb * k * sizeof(genie_neighbor), cudaMemcpyDeviceToHost,
                                r->stream),
            fail);
    GPU_TRY(rc, cudaStreamSynchronize(r->stream), fail);
    memcpy(out, r->h_out, (size_t)nb * k * sizeof(genie_neighbor));
fail:
    return rc;
}

extern "C" genie_status exact_cuda_search(int device, void **ppResident, const float *base, uint64_t nBase,
                                          const float *queries, uint64_t nQuery, uint32_t dim, genie_metric metric,
                                          uint32_t k, genie_neighbor *out)
{
    genie_status rc = GENIE_OK;
    exact_resident *r = ppResident ? (exact_resident *)*ppResident : NULL;
    uint64_t nBatch = 0;
    GPU_TRY(rc, cudaSetDevice(device), fail);
    if (r && !(r->device == device && r->hBase == base && r->nBase == nBase && r->dim == dim && r->form == base_form(metric) &&
               (metric == GENIE_METRIC_L1 || r->hBlas))) {
        exact_cuda_resident_free(r);
        r = NULL;
        *ppResident = NULL;
    }
    if (!r) {
        GENIE_TRY_GOTO(rc, resident_create(device, base, nBase, dim, metric, &r), fail);
        if (ppResident)
            *ppResident = r;
    }
    GENIE_TRY_GOTO(rc, workspace_reserve(r, nQuery, k, &nBatch), fail);
    for (uint64_t q0 = 0; q0 < nQuery; q0 += nBatch) {
        uint32_t nb = (uint32_t)(nQuery - q0 < nBatch ? nQuery - q0 : nBatch);
        memcpy(r->h_q, queries + q0 * dim, (size_t)nb * dim * sizeof(float));
        GENIE_TRY_GOTO(rc, search_batch(r, nb, metric, k, out + q0 * k), fail);
    }
fail:
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
