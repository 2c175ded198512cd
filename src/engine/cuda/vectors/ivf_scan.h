/*
 * The kernels of the inverted-file search on the GPU (private to the CUDA
 * module; ivf_scan.cu says how, ivf_gpu.cu queues them): the plan of a
 * batch's probes, the query-major scans of IVF-Flat and IVF-PQ, cosine's
 * squared norms; their block sizes, and what sizes the flat scan's shared
 * memory.
 */
#ifndef GENIE_ENGINE_CUDA_VECTORS_IVF_SCAN_H
#define GENIE_ENGINE_CUDA_VECTORS_IVF_SCAN_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "genie/genie.h"
}

#define IVF_THREADS 256u    /* blockDim.x of ivf_flat_search and ivf_pq_search */
#define PLAN_THREADS 256u   /* blockDim.x of ivf_plan (a warp per query) */
#define ORDER_THREADS 1024u /* blockDim.x of ivf_order (one block) */
#define IVF_CHUNK 32u       /* dimensions a warp of ivf_flat_search stages at a time (staged_distance) */

/* aNorm[i] = the CPU's dot(x_i, x_i) for the @p n vectors of @p x; one thread per vector. */
__global__ void ivf_norms(const float *x, uint64_t n, uint32_t dim, float *aNorm);

/* Step 2a of a batch: per query the prefix sums of its probed lists' lengths, its nearest list counted. */
__global__ void ivf_plan(const genie_neighbor *aProbe, uint32_t nb, uint32_t nprobe, const uint64_t *aStart,
                         uint32_t *aOff, uint32_t *aCount);

/* Step 2b, one block: the queries in aOrder by their nearest list (aCount, ivf_plan's, reused as places). */
__global__ void ivf_order(const genie_neighbor *aProbe, uint32_t nb, uint32_t nprobe, uint32_t *aCount,
                          uint32_t nlist, uint32_t *aOrder);

/* IVF-Flat's scan, one block per query (ivf_scan.cu: its arguments and dynamic shared memory). */
__global__ void ivf_flat_search(const float *q, uint32_t dim, int metric, const uint32_t *aOrder,
                                const uint32_t *pNOrder, const genie_neighbor *aProbe, const uint32_t *aOff,
                                uint32_t nprobe, const uint64_t *aStart, const uint32_t *aId, const float *aVec,
                                const float *aNorm, const uint32_t *aAllow, uint32_t k, genie_neighbor *out,
                                uint32_t *aN);

/* IVF-PQ's scan and refinement, one block per query (ivf_scan.cu: its arguments and dynamic shared memory). */
__global__ void ivf_pq_search(const float *q, uint32_t dim, int metric, const uint32_t *aOrder,
                              const genie_neighbor *aProbe, const uint32_t *aOff, uint32_t nprobe,
                              const uint64_t *aStart, const uint32_t *aId, const float *aCentroid,
                              const float *aCodebook, const uint8_t *aCode, uint32_t M, uint32_t bits,
                              const float *aVec, const float *aNorm, const uint32_t *aAllow, int squared,
                              uint32_t k, uint32_t nRefine, genie_neighbor *out, uint32_t *aN);

#endif
