/*
 * k-means' assignment step on the GPU (the xKmeansStep of engine/ivf.h's
 * capability; the rule is engine/kmeans.h's), after Johnson, Douze and
 * Jegou, "Billion-scale similarity search with GPUs", section 6.2: a
 * cuBLAS GEMM of the centroids by a tile of points (SGEMM, or with
 * precision TF32 cublasGemmEx on the tensor cores: the products then
 * carry TF32's rounding, kmeans.h), then one warp per
 * point for its argmin (k = 1 needs a reduction, not a selection), then
 * the fixed-point sums by 64-bit integer atomics, which are exact and
 * associative: the sums do not depend on the order the atomics land in,
 * so a seed gives the same centroids on every run.
 *
 * The points stay on the device between the steps of one training
 * (km_state, kept by the driver while it trains); the centroids go up and
 * the sums and counts come down each step (kmeans.c divides, splits the
 * empty clusters and normalises, the same code as for the CPU).
 *
 * Thread contract: km_argmin, one warp per point, blockDim.x ==
 * KM_THREADS, every thread at its barrier; km_sums, one thread per
 * component of a point.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/common/blas_gpu.h"
#include "engine/cuda/common/cuda_common.h"
#include "engine/cuda/common/cuda_entry.h"

extern "C" {
#include "engine/kmeans.h"
}

#define KM_TILE_FLOATS (1ull << 26) /* products per tile: 256 MiB */
#define KM_THREADS 256u

typedef struct km_state {
    int device;
    cudaStream_t stream;
    const gpu_blas *blas;
    cublasHandle_t hBlas;
    const float *hX; /* the points it holds */
    uint64_t n;
    uint32_t dim, kCap;
    float *d_x, *d_c, *d_cnorm, *d_tile;
    uint32_t *d_assign, *d_count;
    unsigned long long *d_sum;
    double *d_obj;
    int64_t *h_sum; /* pinned staging of the sums and counts */
    uint32_t *h_count;
    double *h_obj;
} km_state;

/* |c|^2 of each centroid (the score's constant). */
__global__ void km_norms(const float *c, uint32_t k, uint32_t dim, float *aNorm)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k)
        return;
    float s = 0;
    for (uint32_t d = 0; d < dim; d++)
        s = __fadd_rn(s, __fmul_rn(c[(uint64_t)i * dim + d], c[(uint64_t)i * dim + d]));
    aNorm[i] = s;
}

/*
 * Point r0 + w of the tile (w = the warp's number in the grid): the
 * centroid of the best score (l2: |c|^2 - 2 <x, c>; ip: -<x, c>), ties to the
 * smaller; the block's share of the objective added once (it is for
 * progress lines only).
 */
__global__ void __launch_bounds__(KM_THREADS)
km_argmin(const float *tile, uint64_t nRow, uint32_t k, const float *aNorm, int mode, const float *x, uint32_t dim,
          uint64_t r0, uint32_t *aAssign, double *pObj)
{
    __shared__ double sObj[KM_THREADS / 32];
    uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned lane = threadIdx.x & 31u;
    bool valid = w < nRow; /* whole warps */
    float best = INFINITY, xx = 0;
    uint32_t bestI = 0xffffffffu;
    if (valid) {
        const float *row = tile + w * k;
        for (uint32_t i = lane; i < k; i += 32) {
            float s = mode == KMEANS_L2 ? aNorm[i] - 2.0f * row[i] : -row[i];
            if (s < best || (s == best && i < bestI)) {
                best = s;
                bestI = i;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            float b = __shfl_xor_sync(0xffffffffu, best, o);
            uint32_t bi = __shfl_xor_sync(0xffffffffu, bestI, o);
            if (b < best || (b == best && bi < bestI)) {
                best = b;
                bestI = bi;
            }
        }
        for (uint32_t d = lane; mode == KMEANS_L2 && d < dim; d += 32)
            xx += x[(r0 + w) * dim + d] * x[(r0 + w) * dim + d];
        for (int o = 16; o > 0; o >>= 1)
            xx += __shfl_xor_sync(0xffffffffu, xx, o);
        if (lane == 0)
            aAssign[r0 + w] = bestI < k ? bestI : 0; /* a NaN row (none: points are finite) keeps 0 */
    }
    if (lane == 0)
        sObj[threadIdx.x / 32] = valid ? (double)xx + best : 0.0;
    __syncthreads();
    if (threadIdx.x == 0) {
        double sum = 0;
        for (uint32_t i = 0; i < KM_THREADS / 32; i++)
            sum += sObj[i];
        atomicAdd(pObj, sum);
    }
}

/* The fixed-point sums: component d of point i adds llrint(x * 2^scale) to its centroid's sum. */
__global__ void km_sums(const float *x, uint64_t n, uint32_t dim, const uint32_t *aAssign, double f,
                        unsigned long long *aSum, uint32_t *aCount)
{
    uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n * dim)
        return;
    uint64_t i = e / dim;
    uint32_t d = (uint32_t)(e % dim), c = aAssign[i];
    long long v = __double2ll_rn((double)x[e] * f);
    atomicAdd(&aSum[(uint64_t)c * dim + d], (unsigned long long)v);
    if (d == 0)
        atomicAdd(&aCount[c], 1u);
}

extern "C" void kmeans_cuda_free(void *p)
{
    km_state *s = (km_state *)p;
    if (!s)
        return;
    cudaSetDevice(s->device);
    cudaFree(s->d_x);
    cudaFree(s->d_c);
    cudaFree(s->d_cnorm);
    cudaFree(s->d_tile);
    cudaFree(s->d_assign);
    cudaFree(s->d_count);
    cudaFree(s->d_sum);
    cudaFree(s->d_obj);
    cudaFreeHost(s->h_sum);
    cudaFreeHost(s->h_count);
    cudaFreeHost(s->h_obj);
    if (s->hBlas)
        s->blas->destroy(s->hBlas);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    free(s);
}

/* The points of @p j on the device with room for its centroids and one tile. */
static genie_status state_create(int device, const kmeans_step_job *j, km_state **pOut)
{
    km_state *s = (km_state *)calloc(1, sizeof *s);
    if (!s)
        return util_error(GENIE_ENOMEM, "k-means on the GPU: out of memory");
    genie_status rc = GENIE_OK;
    s->device = device;
    s->hX = j->aX;
    s->n = j->n;
    s->dim = j->dim;
    s->kCap = j->k;
    uint64_t nRow = KM_TILE_FLOATS / j->k;
    nRow = nRow < 1 ? 1 : nRow > j->n ? j->n : nRow;
    size_t nX = (size_t)j->n * j->dim * sizeof(float);
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_x, nX ? nX : 4), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(s->d_x, j->aX, nX, cudaMemcpyHostToDevice, s->stream), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_c, (size_t)j->k * j->dim * sizeof(float)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_cnorm, (size_t)j->k * sizeof(float)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_tile, (size_t)nRow * j->k * sizeof(float)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_assign, (j->n ? j->n : 1) * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_count, (size_t)j->k * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_sum, (size_t)j->k * j->dim * sizeof(unsigned long long)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&s->d_obj, sizeof(double)), fail);
    CUDA_TRY_GOTO(rc, cudaMallocHost(&s->h_sum, (size_t)j->k * j->dim * sizeof(int64_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMallocHost(&s->h_count, (size_t)j->k * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMallocHost(&s->h_obj, sizeof(double)), fail);
    GENIE_TRY_GOTO(rc, gpu_blas_get(&s->blas), fail);
    if (s->blas->create(&s->hBlas) != CUBLAS_STATUS_SUCCESS) {
        rc = util_error(GENIE_EGPU, "k-means on the GPU: cublasCreate failed");
        goto fail;
    }
    s->blas->setStream(s->hBlas, s->stream);
    *pOut = s;
    return GENIE_OK;
fail:
    kmeans_cuda_free(s);
    return rc;
}

extern "C" genie_status kmeans_cuda_step(int device, void **ppState, kmeans_step_job *j)
{
    genie_status rc = GENIE_OK;
    CUDA_TRY(cudaSetDevice(device));
    km_state *s = (km_state *)*ppState;
    if (s && !(s->device == device && s->hX == j->aX && s->n == j->n && s->dim == j->dim && s->kCap >= j->k)) {
        kmeans_cuda_free(s);
        *ppState = s = NULL;
    }
    if (!s) {
        GENIE_TRY(state_create(device, j, &s));
        *ppState = s;
    }
    uint32_t k = j->k, dim = j->dim;
    uint64_t nRow = KM_TILE_FLOATS / k;
    nRow = nRow < 1 ? 1 : nRow > j->n ? j->n : nRow;
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(s->d_c, j->aC, (size_t)k * dim * sizeof(float), cudaMemcpyHostToDevice, s->stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMemsetAsync(s->d_obj, 0, sizeof(double), s->stream), fail);
    km_norms<<<(k + KM_THREADS - 1) / KM_THREADS, KM_THREADS, 0, s->stream>>>(s->d_c, k, dim, s->d_cnorm);
    CUDA_CHECK_LAUNCH(rc, "km_norms", fail);
    for (uint64_t r0 = 0; r0 < j->n; r0 += nRow) {
        uint64_t nr = j->n - r0 < nRow ? j->n - r0 : nRow;
        const float one = 1.0f, zero = 0.0f;
        /* tile (column-major k x nr) = C (k x dim) . X_tile^T: row r of the tile is point r0 + r's products. */
        cublasStatus_t st =
            j->precision == GENIE_PRECISION_TF32
                ? s->blas->gemmEx(s->hBlas, CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)nr, (int)dim, &one, s->d_c,
                                  CUDA_R_32F, (int)dim, s->d_x + r0 * dim, CUDA_R_32F, (int)dim, &zero, s->d_tile,
                                  CUDA_R_32F, (int)k, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT)
                : s->blas->sgemm(s->hBlas, CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)nr, (int)dim, &one, s->d_c,
                                 (int)dim, s->d_x + r0 * dim, (int)dim, &zero, s->d_tile, (int)k);
        if (st != CUBLAS_STATUS_SUCCESS) {
            rc = util_error(GENIE_EGPU, "k-means on the GPU: the %s GEMM failed (cuBLAS status %d)",
                            j->precision == GENIE_PRECISION_TF32 ? "TF32" : "fp32", (int)st);
            goto fail;
        }
        uint64_t nThread = nr * 32;
        km_argmin<<<(unsigned)((nThread + KM_THREADS - 1) / KM_THREADS), KM_THREADS, 0, s->stream>>>(
            s->d_tile, nr, k, s->d_cnorm, j->mode, s->d_x, dim, r0, s->d_assign, s->d_obj);
        CUDA_CHECK_LAUNCH(rc, "km_argmin", fail);
    }
    if (j->aSum || j->aCount) {
        CUDA_TRY_GOTO(rc, cudaMemsetAsync(s->d_sum, 0, (size_t)k * dim * sizeof(unsigned long long), s->stream), fail);
        CUDA_TRY_GOTO(rc, cudaMemsetAsync(s->d_count, 0, (size_t)k * sizeof(uint32_t), s->stream), fail);
        uint64_t nE = j->n * dim;
        km_sums<<<(unsigned)((nE + KM_THREADS - 1) / KM_THREADS), KM_THREADS, 0, s->stream>>>(
            s->d_x, j->n, dim, s->d_assign, ldexp(1.0, j->scale), s->d_sum, s->d_count);
        CUDA_CHECK_LAUNCH(rc, "km_sums", fail);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(s->h_sum, s->d_sum, (size_t)k * dim * sizeof(int64_t),
                                          cudaMemcpyDeviceToHost, s->stream),
                      fail);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(s->h_count, s->d_count, (size_t)k * sizeof(uint32_t),
                                          cudaMemcpyDeviceToHost, s->stream),
                      fail);
    }
    if (j->aAssign)
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(j->aAssign, s->d_assign, j->n * sizeof(uint32_t), cudaMemcpyDeviceToHost,
                                          s->stream),
                      fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(s->h_obj, s->d_obj, sizeof(double), cudaMemcpyDeviceToHost, s->stream), fail);
    CUDA_TRY_GOTO(rc, cudaStreamSynchronize(s->stream), fail);
    if (j->aSum)
        memcpy(j->aSum, s->h_sum, (size_t)k * dim * sizeof(int64_t));
    if (j->aCount)
        memcpy(j->aCount, s->h_count, (size_t)k * sizeof(uint32_t));
    j->objective = *s->h_obj;
    return GENIE_OK;
fail:
    kmeans_cuda_free(s);
    *ppState = NULL;
    return rc;
}
