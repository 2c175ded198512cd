/*
 * Batched distances of (query, object) pairs for the metric front-end's
 * List of Clusters search (engine/pairs.h): the host decides which pairs
 * the triangle inequality cannot rule out (transform/metric_batch.c), the
 * device computes them in one launch per batch.
 *
 * Exactness.  Answers are ranked by these distances, ties by smaller id,
 * and must be the CPU's: so each distance is computed bit for bit as
 * genie_vector_distance does on the host, one thread per pair walking the
 * dimensions in order with round-to-nearest intrinsics (__fadd_rn,
 * __fmul_rn, ...) that the compiler may not contract into fused
 * multiply-adds.  A GEMM would be faster for large batches but sums in
 * another order; the pair lists here are short per query (the pruning
 * leaves few), which a pair-per-thread kernel serves well.
 *
 * Thread contract: thread i of the grid handles pair i (grid-stride loop);
 * no shared memory, no synchronisation.  The base is resident in the slot
 * (uploaded once per index); queries and pairs are copied per call, in
 * batches of at most METRIC_GPU_BATCH pairs.
 */
#include <math.h>
#include <stdlib.h>

#include "engine/cuda/cuda_common.h"
#include "engine/cuda/cuda_entry.h"

#define METRIC_GPU_BATCH (1u << 22)
#define METRIC_GPU_THREADS 256

struct metric_resident {
    const float *hBase; /* the host base it was uploaded from: the key */
    uint64_t nBase;
    uint32_t dim;
    float *d_base;
    cudaStream_t stream;
    /* Per call: the queries; per batch: the pairs and the distances. */
    float *d_q;
    uint64_t nQCap;
    uint32_t *d_pair;
    float *d_out;
};

/* genie_vector_distance's loops (engine/distance.c), operation for operation. */
__device__ static float dot_rn(const float *a, const float *b, uint32_t dim)
{
    float s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s = __fadd_rn(s, __fmul_rn(a[i], b[i]));
    return s;
}

__global__ static void pair_distances(const float *d_q, const float *d_base, uint32_t dim, int metric,
                                      const uint32_t *d_pair, uint64_t nPair, float *d_out)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < nPair;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const float *a = d_q + (uint64_t)d_pair[2 * i] * dim;
        const float *b = d_base + (uint64_t)d_pair[2 * i + 1] * dim;
        float s = 0;
        if (metric == GENIE_METRIC_L2) {
            for (uint32_t j = 0; j < dim; j++) {
                float d = __fsub_rn(a[j], b[j]);
                s = __fadd_rn(s, __fmul_rn(d, d));
            }
            s = __fsqrt_rn(s);
        } else if (metric == GENIE_METRIC_L1) {
            for (uint32_t j = 0; j < dim; j++)
                s = __fadd_rn(s, fabsf(__fsub_rn(a[j], b[j])));
        } else {
            float na = dot_rn(a, a, dim), nb = dot_rn(b, b, dim);
            if (na == 0 || nb == 0)
                s = 1;
            else
                s = __fsub_rn(1.0f, __fdiv_rn(dot_rn(a, b, dim), __fmul_rn(__fsqrt_rn(na), __fsqrt_rn(nb))));
        }
        d_out[i] = s;
    }
}

extern "C" void metric_cuda_pairs_free(void *p)
{
    metric_resident *r = (metric_resident *)p;
    if (!r)
        return;
    cudaSetDevice(0);
    cudaFree(r->d_base);
    cudaFree(r->d_q);
    cudaFree(r->d_pair);
    cudaFree(r->d_out);
    if (r->stream)
        cudaStreamDestroy(r->stream);
    free(r);
}

static genie_status resident_create(const float *base, uint64_t nBase, uint32_t dim, metric_resident **out)
{
    genie_status rc = GENIE_OK;
    metric_resident *r = (metric_resident *)calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return util_error(GENIE_ENOMEM, "metric GPU distances: out of memory");
    r->hBase = base;
    r->nBase = nBase;
    r->dim = dim;
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_base, nBase * dim * sizeof(float)), fail);
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_base, base, nBase * dim * sizeof(float), cudaMemcpyHostToDevice, r->stream),
                  fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_pair, 2 * (uint64_t)METRIC_GPU_BATCH * sizeof(uint32_t)), fail);
    CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_out, (uint64_t)METRIC_GPU_BATCH * sizeof(float)), fail);
    *out = r;
    return GENIE_OK;
fail:
    metric_cuda_pairs_free(r);
    return rc;
}

extern "C" genie_status metric_cuda_pairs(void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                                          genie_metric metric, const float *queries, uint64_t nQuery,
                                          const uint32_t *aPair, uint64_t nPair, float *out)
{
    if (metric != GENIE_METRIC_L2 && metric != GENIE_METRIC_L1 && metric != GENIE_METRIC_COSINE)
        return util_error(GENIE_EINVAL, "metric GPU distances: metric %d is not l2, l1 or cosine", (int)metric);
    if (nPair == 0)
        return GENIE_OK;
    genie_status rc = GENIE_OK;
    CUDA_TRY(cudaSetDevice(0));
    metric_resident *r = (metric_resident *)*ppResident;
    if (r && (r->hBase != base || r->nBase != nBase || r->dim != dim)) {
        metric_cuda_pairs_free(r);
        *ppResident = r = NULL;
    }
    if (!r) {
        GENIE_TRY(resident_create(base, nBase, dim, &r));
        *ppResident = r;
    }
    if (nQuery > r->nQCap) {
        cudaFree(r->d_q);
        r->d_q = NULL;
        r->nQCap = 0;
        CUDA_TRY_GOTO(rc, cudaMalloc(&r->d_q, nQuery * dim * sizeof(float)), fail);
        r->nQCap = nQuery;
    }
    CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_q, queries, nQuery * dim * sizeof(float), cudaMemcpyHostToDevice, r->stream),
                  fail);
    for (uint64_t p0 = 0; p0 < nPair; p0 += METRIC_GPU_BATCH) {
        uint64_t nb = nPair - p0 < METRIC_GPU_BATCH ? nPair - p0 : METRIC_GPU_BATCH;
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(r->d_pair, aPair + 2 * p0, 2 * nb * sizeof(uint32_t),
                                          cudaMemcpyHostToDevice, r->stream),
                      fail);
        unsigned nBlock = (unsigned)((nb + METRIC_GPU_THREADS - 1) / METRIC_GPU_THREADS);
        pair_distances<<<nBlock, METRIC_GPU_THREADS, 0, r->stream>>>(r->d_q, r->d_base, dim, (int)metric, r->d_pair,
                                                                      nb, r->d_out);
        CUDA_CHECK_LAUNCH(rc, "pair_distances", fail);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(out + p0, r->d_out, nb * sizeof(float), cudaMemcpyDeviceToHost, r->stream),
                      fail);
        CUDA_TRY_GOTO(rc, cudaStreamSynchronize(r->stream), fail);
    }
    return GENIE_OK;
fail:
    metric_cuda_pairs_free(r);
    *ppResident = NULL;
    return rc;
}
