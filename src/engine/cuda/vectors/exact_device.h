/*
 * The exact GPU search as a step of another GPU pipeline (private to the
 * CUDA module): the inverted file's probes (ivf_gpu.cu) are the exact
 * search of its queries among the centroids, and read on the device by
 * the kernels that plan and scan the lists, so that no answer goes to the
 * host and back between the steps.  Also the warp-per-query selection
 * (exact_warp.cu) that exact_gpu.cu runs for such a search.
 */
#ifndef GENIE_ENGINE_CUDA_VECTORS_EXACT_DEVICE_H
#define GENIE_ENGINE_CUDA_VECTORS_EXACT_DEVICE_H

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "genie/genie.h"
#include "engine/exact_bound.h"
}

/**
 * Make the slot @p ppResident (exact_cuda_search's: the base kept on
 * device @p device, reused when it holds the same base, replaced
 * otherwise, emptied on failure) ready for calls of exact_cuda_enqueue of
 * up to *pBatch queries of @p k neighbours (1..min(nBase,
 * EXACT_CUDA_MAX_K)); *pBatch, at most @p nMax (>= 1), is sized for a
 * call of @p nQuery (>= 1) queries in all as exact_cuda_search sizes its
 * batches (a few per call, the distance tile within a quarter of free
 * memory).
 * @return GENIE_OK, GENIE_EGPU, GENIE_ENOMEM.
 */
genie_status exact_cuda_reserve(int device, void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                                genie_metric metric, genie_precision precision, uint64_t nQuery, uint32_t nMax,
                                uint32_t k, uint32_t *pBatch);

/**
 * Queue on @p stream the exact search of @p nb queries already on the
 * device at @p d_q (nb <= the reserved batch, the same k, l2, ip or
 * cosine): nb x k answers to the device array @p d_out, bit for bit
 * exact_cuda_search's, ready when @p stream reaches them; no wait for the
 * device and no copy to or from the host.  Every object allowed.  The
 * resident's workspace is used by the queued kernels: queue a slot's
 * calls on one stream.
 * @return GENIE_OK, GENIE_EGPU (a launch or cuBLAS failed).
 */
genie_status exact_cuda_enqueue(void *pResident, const float *d_q, uint32_t nb, uint32_t k, cudaStream_t stream,
                                genie_neighbor *d_out);

/*
 * exact_gpu.cu's preparation of vectors for its GEMM, one warp per vector
 * (blockDim.x a multiple of 32, at most 256): the operand of @p precision
 * (fp32 and TF32 to @p opF; for cosine of the normalised vector), the
 * bound data aInfo[i] = (fp32 |x|^2, w, rho, inverse scale) of
 * exact_bound.h, cosine's CPU squared norm to @p aDot (may be NULL), and
 * the bound's range check: with @p perVector, aFlag[i] = FLAG_DIRECT when
 * outside, else @p preset; otherwise aFlag[0] |= FLAG_DIRECT when any is
 * outside.  Each lane reads its elements of a vector before it writes
 * their operands, so @p opF may be @p x when @p aDot is NULL.  The
 * inverted file's list-major scan (ivf_listmajor.cu) prepares its base
 * and queries with it.
 */
__global__ void exact_prepare(const float *x, uint64_t n, uint32_t dim, int metric, int precision, float *opF,
                              __half *opH, float4 *aInfo, float *aDot, unsigned *aFlag, int perVector,
                              unsigned preset);

/* exact_warp_select's limits: k and the base vectors. */
#define EXACT_WARP_MAX_K 256u
#define EXACT_WARP_MAX_BASE 65536u

/**
 * exact_select.cu's bounded selection (SELECT_BOUND) for k <=
 * EXACT_WARP_MAX_K over nBase <= EXACT_WARP_MAX_BASE base vectors and no
 * bitmap, one warp per query (exact_warp.cu says how), queued on
 * @p stream: the same answers to @p out (nq x k), and the same flag
 * FLAG_DIRECT in @p aFlag for a query it leaves to the direct rows.  The
 * arguments are exact_select's: @p S the GEMM's products (nq rows of
 * nBase), the bound and the bound data, the raw base @p x and queries
 * @p q, cosine's squared norms @p aXDot and @p aQDot (NULL otherwise).
 * @return GENIE_OK, GENIE_EGPU (the launch failed).
 */
genie_status exact_warp_select(cudaStream_t stream, const float *S, uint32_t nBase, uint32_t nq, int metric,
                               exact_bound bound, const float4 *aInfo, const float4 *aQInfo, uint32_t k, const float *x,
                               const float *q, uint32_t dim, const float *aXDot, const float *aQDot, unsigned *aFlag,
                               genie_neighbor *out);

#endif
