/*
 * Inverted-file search over dense vectors, IVF-Flat and IVF-PQ (IVFADC)
 * (private to the library), after Johnson, Douze and Jegou,
 * "Billion-scale similarity search with GPUs", sections 2.2 and 5.2-5.3.
 *
 * The data (engine_ivf): nlist centroids (the coarse quantizer), the
 * object ids of each list one list after another (list l holds positions
 * aListStart[l] .. aListStart[l + 1], ids ascending within it), the
 * vectors by object id, and for IVF-PQ the code of each position's
 * residual: M sub-quantizers of 2^bits centroids each (the codebooks) on
 * dim / M dimensions each, one byte per sub-quantizer.
 *
 * The answer of a query, the same on every backend (the CPU is the
 * reference; the GPU's kernels repeat its arithmetic operation for
 * operation, and its orders are total):
 *
 *   1. its probes: the nprobe nearest centroids by the exact search
 *      (engine/exact.h, metric of the index, ties to the smaller list
 *      number), whose answers are the direct loop's on every backend;
 *   2. its candidates: the objects of the probed lists that the query's
 *      bitmap allows (engine_ivf_query.aAllow: deletes and filters);
 *   3. IVF-Flat: each candidate's distance genie_vector_distance(metric,
 *      x, q), the direct loop; the k smallest (distance, id);
 *      IVF-PQ: each candidate's ADC estimate (below); the R smallest
 *      (estimate, id), R = nRefine or k; with nRefine, those R re-ranked
 *      by genie_vector_distance and the k smallest (distance, id) kept,
 *      else the k first with their estimates as distances.
 *
 * The ADC estimate (Equation 10 with the decomposition of the query
 * rather than of the tables) of a candidate in list l with code
 * c_0 .. c_{M-1}, every operation in fp32, rounded to nearest, in this
 * order: s = base; s = s + T[0][c_0]; ...; s = s + T[M-1][c_{M-1}], where
 * with q_m, p_mj the m-th slices of the query and of codeword j (t
 * running over the slice in order, each sum starting at 0):
 *
 *   l2      r = q - centroid_l (component by component);
 *           T[m][j] = sum_t (r_t - p_mjt)^2; base = 0; the distance is
 *           sqrt(s) (s >= 0);
 *   ip      T[m][j] = -(sum_t q_t p_mjt); base = the coarse distance of
 *           list l (-centroid.q, step 1's);
 *   cosine  q^ = q / sqrt(q.q) (each component divided; 0 for q = 0),
 *           T[m][j] = -(sum_t q^_t p_mjt); base = the coarse distance of
 *           list l (1 - cos); the centroids and residuals are of
 *           normalised vectors, so s estimates 1 - cos(q, x).
 *
 * Ties: keys are (ordered float << 32 | id), unique per query, so every
 * selection has one answer and the order is total.
 */
#ifndef GENIE_ENGINE_IVF_H
#define GENIE_ENGINE_IVF_H

#include <pthread.h>
#include <stdint.h>

#include "genie/vectors.h"
#include "engine/kmeans.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IVF_MAX_K 1024u      /* neighbours per query */
#define IVF_MAX_REFINE 2048u /* IVF-PQ candidates re-ranked per query */
#define IVF_MAX_PROBE 2048u  /* lists probed per query (the exact GPU search's largest k) */
#define IVF_MAX_BITS 8u      /* bits per code: one byte each */

typedef struct engine_ivf {
    genie_metric metric;        /* l2, ip or cosine */
    uint32_t dim, nlist;
    uint64_t n;
    const float *aCentroid;     /* nlist x dim; cosine: of normalised vectors */
    const uint64_t *aListStart; /* nlist + 1 */
    const uint32_t *aId;        /* n: the object at each position */
    const float *aVec;          /* n x dim, by object id */
    uint32_t pqM, pqBits;       /* 0, 0: IVF-Flat */
    const float *aCodebook;     /* pqM x 2^pqBits x (dim / pqM) */
    const uint8_t *aCode;       /* n x pqM, by position */
} engine_ivf;

typedef struct engine_ivf_query {
    const float *aQuery; /* n x dim */
    uint64_t n;
    uint32_t k;          /* 1..IVF_MAX_K */
    uint32_t nprobe;     /* 1..min(nlist, IVF_MAX_PROBE) */
    uint32_t nRefine;    /* IVF-PQ: 0, or k..IVF_MAX_REFINE candidates re-ranked; IVF-Flat: 0 */
    unsigned threads;    /* CPU threads; 0 = all cores */
    const int *cancel;   /* NULL, or genie_search_options.cancel: read before the search and (CPU) before each query */
    /* The objects that may be answered (engine/filter.h's layout, ids of the engine_ivf; NULL: all): a candidate
     * not allowed is skipped before it is offered to any selection, so it takes no place among the k (or the R
     * re-ranked), and a query gets min(k, its allowed candidates) answers. */
    const uint64_t *aAllow;
    /* IVF-PQ under l2 without a refinement: the estimates s themselves as distances, not sqrt(s) (the order is
     * s's; two searches' answers are merged exactly by s, transform/vectors_ivf_live.c). */
    int squared;
} engine_ivf_query;

/*
 * A backend's IVF capability (engine_backend.pIvf; NULL: the CPU's):
 *   xKmeansStep  one kmeans_step (kmeans.h) on device @p device, the
 *                points kept on the device in *ppState between calls with
 *                the same points (xKmeansFree frees it);
 *   xSearch      the answers of engine_ivf_search below on device
 *                @p device, the index kept on the device in *ppResident
 *                (reused while it holds the same data; xFree frees it).
 */
typedef struct engine_ivf_ops {
    genie_status (*xKmeansStep)(int device, void **ppState, kmeans_step_job *job);
    void (*xKmeansFree)(void *pState);
    genie_status (*xSearch)(int device, void **ppResident, const engine_ivf *ix, const engine_ivf_query *q,
                            genie_neighbor *out, uint32_t *aN);
    void (*xFree)(void *pResident);
} engine_ivf_ops;

/*
 * The CPU search's derived layout of one engine_ivf (ivf_cpu.c), made by
 * the first CPU search under the lock and read-only afterwards, so that
 * searches of one index may run at once.  Initialise the lock and set
 * pLayout to NULL; ivf_cpu_cache_free frees the layout (not the lock).
 */
typedef struct ivf_cpu_cache {
    pthread_mutex_t lock;
    void *pLayout;
} ivf_cpu_cache;

void ivf_cpu_cache_free(ivf_cpu_cache *c);

/**
 * The k nearest of each query by the rule above, on @p backend (its
 * pIvf, else the CPU), device @p device.  @p idx: the index whose device
 * slot keeps the GPU's copy (NULL: uploaded and freed within the call).
 * @p pCache: the CPU's derived layout, for the one @p ix it was made for
 * (NULL: made and freed within the call).
 * @param[out] out  n x k, query i's at out[i * k ...], nearest first;
 * @param[out] aN   how many each query got: min(k, its candidates).
 * @param[out] pUsed  the backend that ran (may be NULL).
 * @return GENIE_OK, GENIE_EINVAL (k, nprobe or nRefine out of range, with
 *         the range), GENIE_ENOMEM, GENIE_EGPU, GENIE_ECANCELED (q->cancel
 *         set: the answers are then unfinished).
 */
genie_status engine_ivf_search(const engine_ivf *ix, const genie_index *idx, ivf_cpu_cache *pCache,
                               const engine_ivf_query *q, genie_backend backend, int device, genie_neighbor *out,
                               uint32_t *aN, genie_backend *pUsed);

/** The CPU's search (ivf_cpu.c), the reference; arguments checked by engine_ivf_search. */
genie_status ivf_cpu_search(const engine_ivf *ix, ivf_cpu_cache *pCache, const engine_ivf_query *q,
                            genie_neighbor *out, uint32_t *aN);

/**
 * The probes of @p n queries (step 1): out[i * nprobe + j] the j-th
 * nearest list of query i and its coarse distance.
 */
genie_status ivf_probes(const engine_ivf *ix, const float *aQuery, uint64_t n, uint32_t nprobe, unsigned threads,
                        genie_neighbor *out);

#ifdef __cplusplus
}
#endif

#endif
