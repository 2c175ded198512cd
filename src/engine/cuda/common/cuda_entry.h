/*
 * The CUDA module's entry points, gathered by module.cu into the entries
 * of its backends (engine/backend.h) and the table the module exports
 * (engine/cuda_module.h).  Nothing outside src/engine/cuda/ calls them
 * directly.
 */
#ifndef GENIE_ENGINE_CUDA_CUDA_ENTRY_H
#define GENIE_ENGINE_CUDA_CUDA_ENTRY_H

#include "genie/genie.h"
#include "engine/cuda_module.h"
#include "engine/docs_gpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Keep the library's host table for the calls of host.cu (module.cu's xInit, before any other call). */
void cuda_host_set(const engine_host *h);

/* The matching methods (tile.cu, spq.cu, cpq.cu); engine_search_fn each. */
genie_status engine_cuda_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
genie_status engine_cuda_spq_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
genie_status engine_cuda_cpq_paper_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);

/* Parts streamed through the device (part_stream.cu): engine_parts_ops (backend.h). */
int cuda_stream_fits(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory);
genie_status cuda_stream_begin(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory,
                               int serialUpload, engine_stream **ppS, int *pOverlap, uint64_t *pLeft);
genie_status cuda_stream_start(engine_stream *s, genie_index *view);
genie_status cuda_stream_ready(engine_stream *s, genie_index *view);
genie_status cuda_stream_done(engine_stream *s, genie_index *view, double *pUpload, double *pWait);
void cuda_stream_end(engine_stream *s);

/**
 * Exact k-NN (exact_gpu.cu) on GPU @p device: @p k already in 1..min(nBase,
 * EXACT_CUDA_MAX_K); writes nQuery * k neighbours to @p out, bit for bit
 * the direct loop's answer (genie_vector_distance, ties by smaller id)
 * whatever @p precision (fp32 alone for l1, checked by the caller).
 * @param[in,out] ppResident  NULL: upload the base and free everything
 *        before returning.  Else a slot (initially NULL) for the base kept
 *        on the device with its workspace: reused when it holds the same
 *        base (host address, count, dimension, metric, precision), replaced
 *        otherwise, emptied on failure.  The caller serialises calls on one
 *        slot and frees it with exact_cuda_resident_free(); the base must
 *        not change while the slot holds it.
 * @return GENIE_OK, GENIE_EGPU, GENIE_ENOMEM.
 */
genie_status exact_cuda_search(int device, void **ppResident, const float *base, uint64_t nBase, const float *queries,
                               uint64_t nQuery, uint32_t dim, genie_metric metric, genie_precision precision,
                               const uint64_t *aAllow, uint32_t k, genie_neighbor *out, engine_exact_counts *pCounts);
/** Free a slot's resident base and workspace; NULL is a no-op. */
void exact_cuda_resident_free(void *pResident);

/* The docs index type's engine (docs_gpu.cu): the engine_docs_ops of backend.h, as engine/docs_gpu.h says. */
genie_status docs_cuda_search(void **ppResident, engine_docs_request *req);
void docs_cuda_free(void *pResident);
/**
 * Distances of (query, object) pairs (metric_gpu.cu), the engine_pairs_fn
 * contract of engine/pairs.h: bit for bit genie_vector_distance.
 * @return GENIE_OK, GENIE_EGPU, GENIE_ENOMEM, GENIE_EINVAL (metric).
 */
genie_status metric_cuda_pairs(void **ppResident, const float *base, uint64_t nBase, uint32_t dim,
                               genie_metric metric, const float *queries, uint64_t nQuery, const uint32_t *aPair,
                               uint64_t nPair, float *out);
/** Free a slot's resident base; NULL is a no-op. */
void metric_cuda_pairs_free(void *pResident);

/**
 * Edit distances of a batch of pairs (edit_gpu.cu), the engine_edit_fn
 * contract of engine/edit.h: the CPU's values; queries longer than
 * EDIT_CUDA_MAX_QUERY bytes come back ENGINE_EDIT_UNDONE.
 * @return GENIE_OK, GENIE_EGPU, GENIE_ENOMEM.
 */
genie_status edit_cuda_distances(void **ppResident, const struct engine_edit_batch *b);
/** Free a slot's resident strings; NULL is a no-op. */
void edit_cuda_free(void *pResident);

/**
 * LSH keywords of a batch of vectors on GPU @p device (lsh_gpu.cu), the
 * engine_lsh_fn contract of backend.h: bit for bit vlsh_keywords's.
 * @return GENIE_OK, GENIE_EGPU, GENIE_ENOMEM.
 */
genie_status lsh_cuda_keywords(int device, const engine_lsh_batch *b);

/**
 * Inverted-file search (ivf_gpu.cu), the xSearch of engine/ivf.h's
 * capability: the CPU's answers bit for bit; the index kept on GPU
 * @p device in *ppResident (ivf_cuda_free frees it).
 * @return GENIE_OK, GENIE_EGPU, GENIE_ENOMEM, GENIE_EINVAL (a search whose
 *         tables or depth need more shared memory than the GPU has).
 */
genie_status ivf_cuda_search(int device, void **ppResident, const engine_ivf *ix, const engine_ivf_query *q,
                             genie_neighbor *out, uint32_t *aN);
void ivf_cuda_free(void *pResident);
/** k-means' step on the GPU (kmeans_gpu.cu), the xKmeansStep of engine/ivf.h. */
genie_status kmeans_cuda_step(int device, void **ppState, kmeans_step_job *job);
void kmeans_cuda_free(void *pState);

/** Largest k the GPU selection kernel handles (its shared-memory sort). */
#define EXACT_CUDA_MAX_K 2048u

/* The exact set similarity search (sim_gpu.cu): engine_sim_fn of engine/sim.h. */
genie_status sim_cuda_search(void **ppResident, const sim_request *req, sim_results *out, uint8_t *aUndone);
void sim_cuda_free(void *pResident);

#ifdef __cplusplus
}
#endif

#endif
