/*
 * The list-major IVF-Flat scan of a large batch (private to the CUDA
 * module; ivf_listmajor.cu says how), after Johnson, Douze and Jegou,
 * "Billion-scale similarity search with GPUs", section 5.3: the batch's
 * (query, list) probes grouped by list, each list's vectors multiplied by
 * all the queries that probe it in fp16 tiles on the tensor cores, and
 * each query's candidates re-ranked by engine/exact_bound.h's rule, so
 * that the answers are ivf_cpu.c's, bit for bit.  ivf_gpu.cu chooses it
 * per batch (ivf_lm_worth) and runs it in place of its query-major scan.
 */
#ifndef GENIE_ENGINE_CUDA_VECTORS_IVF_LISTMAJOR_H
#define GENIE_ENGINE_CUDA_VECTORS_IVF_LISTMAJOR_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "genie/genie.h"
}

/* The largest k the list-major selection serves (its threshold comes from each thread's two smallest bounds). */
#define IVF_LM_MAX_K 256u

typedef struct ivf_lm ivf_lm;

/**
 * The list-major state of an IVF-Flat index on the device: its vectors'
 * fp16 operands by position and their bound data.  @p d_vec the vectors
 * by id, @p d_id the ids by position, @p d_start the nlist + 1 list
 * starts, all on the device, and @p aStart the same starts on the host;
 * queued on @p stream and waited for.
 * *pOut = NULL (and GENIE_OK) when the index cannot take this path (a
 * base vector outside the bound's range, exact_bound.h, or a GPU before
 * compute capability 8.0).
 * @return GENIE_OK, GENIE_ENOMEM, GENIE_EGPU.
 */
genie_status ivf_lm_create(int device, const float *d_vec, const uint32_t *d_id, const uint64_t *d_start,
                           const uint64_t *aStart, uint64_t n, uint32_t dim, uint32_t nlist, genie_metric metric,
                           cudaStream_t stream, ivf_lm **pOut);

void ivf_lm_free(ivf_lm *lm);

/**
 * Whether a batch of @p nb queries of @p nprobe probes over @p nlist lists
 * and k = @p k is worth the list-major scan: at least 16 queries per
 * list on average, batch x nprobe / nlist (below that the query-major
 * scan reads each list only a few times and the tiles would be mostly
 * empty; GloVe-150k and the clustered million in docs/BENCHMARKS.md
 * suggest the crossover is lower, unmeasured), and k at most
 * IVF_LM_MAX_K.
 */
int ivf_lm_worth(uint32_t nb, uint32_t nprobe, uint32_t nlist, uint32_t k);

/**
 * The most queries a list-major batch may hold when a query has at most
 * @p maxCand candidates (the sum of the nprobe longest lists): its
 * products take at most 1 GiB.
 */
uint32_t ivf_lm_batch_cap(uint64_t maxCand);

/**
 * The workspace for batches of @p nb queries of @p nprobe probes with at
 * most @p maxCand candidates a query (the sum of the nprobe longest
 * lists): the products of every probed (query, vector) pair, nb *
 * maxCand floats.
 */
genie_status ivf_lm_reserve(ivf_lm *lm, uint32_t nb, uint32_t nprobe, uint64_t maxCand);

/**
 * Queue on @p stream the list-major scan of @p nb queries at @p d_q with
 * their probes @p d_probe (nb x nprobe) and prefix sums @p d_off (nb x
 * (nprobe + 1), ivf_scan.cu's ivf_plan): the k nearest of each to d_out
 * (nb x k) and their number to d_n, as ivf_flat_search writes them;
 * except for the queries it leaves to the query-major scan, whose indices
 * go to d_rest and their count to *d_nRest (a query outside the bound's
 * range, a non-finite bound, more candidates in the margin than it
 * holds).  @p d_allow the call's bitmap (NULL: all allowed), @p d_norm
 * cosine's squared norms by id (NULL otherwise).
 * @return GENIE_OK, GENIE_EGPU.
 */
genie_status ivf_lm_enqueue(ivf_lm *lm, cudaStream_t stream, const float *d_q, uint32_t nb,
                            const genie_neighbor *d_probe, const uint32_t *d_off, uint32_t nprobe, const float *d_vec,
                            const float *d_norm, const uint32_t *d_allow, uint32_t k, genie_neighbor *d_out,
                            uint32_t *d_n, uint32_t *d_rest, uint32_t *d_nRest);

#endif
