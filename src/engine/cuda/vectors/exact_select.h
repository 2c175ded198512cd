/*
 * The exact GPU search's block selection (private to the CUDA module;
 * exact_select.cu says how): the kernel exact_gpu.cu launches for the
 * candidates of its bound (SELECT_BOUND) and for the rows of direct
 * distances (SELECT_FINAL), its block size, and the sizes of the global
 * scratch the host gives it.
 */
#ifndef GENIE_ENGINE_CUDA_VECTORS_EXACT_SELECT_H
#define GENIE_ENGINE_CUDA_VECTORS_EXACT_SELECT_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "genie/genie.h"
#include "engine/exact_bound.h"
}

#define SELECT_THREADS 512 /* exact_select's blockDim.x (its thread contract) */

/* exact_select's modes: the GEMM's row and the bound's candidates; a row of direct distances. */
enum { SELECT_BOUND = 0, SELECT_FINAL = 1 };

/* The survivors per query that candidates_sampled may keep: the keptCap of exact_select's global scratch. */
uint32_t kept_cap(uint64_t nBase);

/* exact_select's nSample for a base of @p nBase vectors and @p k; 0: no sample (kth_upper's four passes). */
uint32_t sample_size(uint64_t nBase, uint32_t k);

/*
 * One block of SELECT_THREADS per query of S (nBase per row), mode
 * SELECT_BOUND or SELECT_FINAL: the k nearest to out (k per query), a
 * query left to SELECT_FINAL flagged FLAG_DIRECT in @p aFlag (exact_select.cu
 * says which, and every argument).
 */
__global__ void exact_select(float *S, uint32_t nBase, int mode, int onlyFlagged, int metric, exact_bound bound,
                             const float4 *aInfo, const float4 *aQInfo, uint32_t k, uint32_t nSample, uint64_t *aKept,
                             uint32_t keptCap, const float *x, const float *q, uint32_t dim, const float *aXDot,
                             const float *aQDot, const uint32_t *allow, unsigned *aFlag, uint32_t *aCand,
                             genie_neighbor *out);

#endif
