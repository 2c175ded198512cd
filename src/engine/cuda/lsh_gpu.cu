/*
 * LSH keywords of query vectors on the GPU (the pLsh capability of backend.h):
 * the projections of the l2 and cosine families of transform/vectors_lsh.c
 * as one matrix product of the queries by the projection vectors, then the
 * bucket arithmetic, so that hashing costs a small share of an LSH search
 * (on the CPU it took longer than the GPU's match counting).
 *
 * Exactness.  The keywords must be the CPU's (vlsh_hash), and a bucket is
 * floor(...) of a projection or its sign: a projection that differs in the
 * last bit can land in the next bucket.  So each projection is computed as
 * the CPU's dotf does, in fp32 over the dimensions in order, every product
 * and sum rounded to nearest (__fmul_rn / __fadd_rn, which the compiler may
 * not contract into fused multiply-adds; vectors_lsh.c is compiled with
 * -ffp-contract=off for the same reason), and the bucket arithmetic in
 * double with the CPU's operations (__dsub_rn, __ddiv_rn, __dadd_rn,
 * floor), clamped as vlsh_hash clamps.  The product is tiled like a GEMM
 * (shared-memory tiles, a 4 x 4 block of outputs per thread), but every
 * output still walks the dimensions in order; padding past dim adds +0
 * products to a sum that is never -0, which changes nothing.  cuBLAS would
 * be faster but sums in an order of its own, which can move a value across
 * a bucket boundary.
 *
 * Thread contract: lsh_project: blockDim = (16, 16), one 64 x 64 output
 * tile per block, every thread at every __syncthreads(); lsh_buckets: one
 * thread per (vector, function), grid-stride.  Memory: the projection
 * vectors, and per batch of at most LSH_BATCH vectors (fewer when their
 * projections would pass LSH_BATCH_FLOATS) their values, projections and
 * keywords, allocated per call and freed before returning.
 */
#include <math.h>
#include <stdint.h>

#include "engine/cuda/cuda_common.h"
#include "engine/cuda/cuda_entry.h"

extern "C" {
#include "engine/backend.h"
}

#define LSH_TILE 64
#define LSH_KTILE 16
#define LSH_BATCH 16384u              /* vectors per batch, at most */
#define LSH_BATCH_FLOATS (1ull << 26) /* projections per batch, at most */

/* P[v][r] = dot(proj r, vec v) in the CPU's order, for nVec vectors and nRow projections. */
__global__ void lsh_project(const float *vec, uint64_t nVec, const float *proj, uint32_t nRow, uint32_t dim,
                            float *P)
{
    __shared__ float sV[LSH_KTILE][LSH_TILE + 1], sP[LSH_KTILE][LSH_TILE + 1];
    uint32_t tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
    uint64_t v0 = (uint64_t)blockIdx.y * LSH_TILE;
    uint32_t r0 = blockIdx.x * LSH_TILE;
    float acc[4][4] = {};
    for (uint32_t j0 = 0; j0 < dim; j0 += LSH_KTILE) {
        for (uint32_t e = tid; e < LSH_TILE * LSH_KTILE; e += 256) {
            uint32_t row = e / LSH_KTILE, j = j0 + e % LSH_KTILE;
            uint64_t v = v0 + row;
            uint32_t r = r0 + row;
            sV[e % LSH_KTILE][row] = v < nVec && j < dim ? vec[v * dim + j] : 0.0f;
            sP[e % LSH_KTILE][row] = r < nRow && j < dim ? proj[(uint64_t)r * dim + j] : 0.0f;
        }
        __syncthreads();
        for (uint32_t t = 0; t < LSH_KTILE; t++) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; i++) {
                a[i] = sV[t][ty * 4 + i];
                b[i] = sP[t][tx * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int c = 0; c < 4; c++)
                    acc[i][c] = __fadd_rn(acc[i][c], __fmul_rn(b[c], a[i]));
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; i++) {
        uint64_t v = v0 + ty * 4 + i;
#pragma unroll
        for (int c = 0; c < 4; c++) {
            uint32_t r = r0 + tx * 4 + c;
            if (v < nVec && r < nRow)
                P[v * nRow + r] = acc[i][c];
        }
    }
}

/* aKw[v * m + f] = f * D + bucket, from the projections P (nVec x nRow). */
__global__ void lsh_buckets(const float *P, uint64_t nVec, uint32_t nRow, int metric, uint32_t m, uint32_t D,
                            uint32_t bits, const float *aLo, const float *aW, const float *aShift, uint32_t *aKw)
{
    uint64_t n = nVec * m;
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t v = e / m;
        uint32_t f = (uint32_t)(e % m), b = 0;
        const float *p = P + v * nRow;
        if (metric == GENIE_METRIC_L2) {
            /* vlsh_hash: floor(((double)dot - lo) / w + shift), NaN to bucket 0, clamped to [0, D). */
            double x = floor(__dadd_rn(__ddiv_rn(__dsub_rn((double)p[f], (double)aLo[f]), (double)aW[f]),
                                       (double)aShift[f]));
            b = !(x > 0) ? 0 : x >= D - 1 ? D - 1 : (uint32_t)x;
        } else {
            for (uint32_t t = 0; t < bits; t++)
                b |= (uint32_t)(p[f * bits + t] >= 0) << t;
        }
        aKw[e] = f * D + b;
    }
}

extern "C" genie_status lsh_cuda_keywords(int device, const engine_lsh_batch *bt)
{
    genie_status rc = GENIE_OK;
    uint32_t dim = bt->dim, nRow = bt->metric == GENIE_METRIC_L2 ? bt->m : bt->m * bt->bits;
    /* A batch's projections take at most LSH_BATCH_FLOATS floats (256 MiB). */
    uint64_t nBatch = LSH_BATCH_FLOATS / nRow ? LSH_BATCH_FLOATS / nRow : 1;
    if (nBatch > LSH_BATCH)
        nBatch = LSH_BATCH;
    if (nBatch > bt->n)
        nBatch = bt->n;
    float *d_proj = NULL, *d_vec = NULL, *d_P = NULL, *d_par = NULL;
    uint32_t *d_kw = NULL;
    cudaStream_t stream = NULL;
    if (bt->n == 0)
        return GENIE_OK;
    CUDA_TRY_GOTO(rc, cudaSetDevice(device), done);
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), done);
    CUDA_TRY_GOTO(rc, cudaMalloc(&d_proj, (uint64_t)nRow * dim * sizeof(float)), done);
    CUDA_TRY_GOTO(rc, cudaMalloc(&d_vec, nBatch * dim * sizeof(float)), done);
    CUDA_TRY_GOTO(rc, cudaMalloc(&d_P, nBatch * nRow * sizeof(float)), done);
    CUDA_TRY_GOTO(rc, cudaMalloc(&d_kw, nBatch * bt->m * sizeof(uint32_t)), done);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(d_proj, bt->aProj, (uint64_t)nRow * dim * sizeof(float), cudaMemcpyHostToDevice,
                                      stream),
                  done);
    if (bt->metric == GENIE_METRIC_L2) {
        CUDA_TRY_GOTO(rc, cudaMalloc(&d_par, 3 * (uint64_t)bt->m * sizeof(float)), done);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(d_par, bt->aLo, bt->m * sizeof(float), cudaMemcpyHostToDevice, stream), done);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(d_par + bt->m, bt->aW, bt->m * sizeof(float), cudaMemcpyHostToDevice, stream),
                      done);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(d_par + 2 * bt->m, bt->aShift, bt->m * sizeof(float), cudaMemcpyHostToDevice,
                                          stream),
                      done);
    }
    for (uint64_t v0 = 0; v0 < bt->n; v0 += nBatch) {
        uint64_t nb = bt->n - v0 < nBatch ? bt->n - v0 : nBatch;
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(d_vec, bt->aVec + v0 * dim, nb * dim * sizeof(float),
                                          cudaMemcpyHostToDevice, stream),
                      done);
        dim3 grid((nRow + LSH_TILE - 1) / LSH_TILE, (unsigned)((nb + LSH_TILE - 1) / LSH_TILE));
        lsh_project<<<grid, dim3(16, 16), 0, stream>>>(d_vec, nb, d_proj, nRow, dim, d_P);
        CUDA_CHECK_LAUNCH(rc, "lsh_project", done);
        uint64_t nOut = nb * bt->m;
        unsigned nBlock = (unsigned)((nOut + 255) / 256 < 65535 ? (nOut + 255) / 256 : 65535);
        lsh_buckets<<<nBlock, 256, 0, stream>>>(d_P, nb, nRow, (int)bt->metric, bt->m, bt->D, bt->bits,
                                                d_par, d_par ? d_par + bt->m : NULL, d_par ? d_par + 2 * bt->m : NULL,
                                                d_kw);
        CUDA_CHECK_LAUNCH(rc, "lsh_buckets", done);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(bt->aKw + v0 * bt->m, d_kw, nOut * sizeof(uint32_t), cudaMemcpyDeviceToHost,
                                          stream),
                      done);
    }
    CUDA_TRY_GOTO(rc, cudaStreamSynchronize(stream), done);
done:
    if (stream)
        cudaStreamSynchronize(stream);
    cudaFree(d_proj);
    cudaFree(d_vec);
    cudaFree(d_P);
    cudaFree(d_par);
    cudaFree(d_kw);
    if (stream)
        cudaStreamDestroy(stream);
    return rc;
}
