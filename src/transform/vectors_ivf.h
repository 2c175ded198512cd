/*
 * Inverted-file vectors indexes, IVF-Flat and IVF-PQ (private to
 * src/transform): their FRONTEND bytes, opening and validating them, the
 * search behind genie_vectors_search, and the recall estimate that
 * chooses nprobe.  The search itself is the engine's (engine/ivf.h).
 *
 * The file (docs/FORMAT.md, index/format.h): a vectors index of one part
 * whose object i has one keyword, the number of its list, so that the
 * keyword lists are the inverted lists (POSTINGS: ids ascending within
 * each list); the vector index sections hold the centroids (14), the PQ
 * codebooks (15) and the PQ codes parallel to POSTINGS (16); FRONTEND
 * holds the parameters and the vectors by id.  FRONTEND layout
 * (little-endian, util/codec.h), version 1:
 *
 *   offset  size     field
 *   0       4        magic "GIVF"
 *   4       4        version (1)
 *   8       4        metric (genie_metric: l2, ip or cosine)
 *   12      4        dim, 1..2^24
 *   16      4        nlist, 1..min(n, 65536)
 *   20      4        pq_m: 0 (IVF-Flat) or a divisor of dim
 *   24      4        pq_bits: 0 with pq_m = 0, else 1..8
 *   28      4        flags: bit 0 refine (IVF-PQ alone)
 *   32      8        seed
 *   40      8        n, the vectors (the index's objects)
 *   48      8        train_size, the vectors k-means trained on, nlist..n
 *   56      4        k-means iterations
 *   60      4        default nprobe, 1..min(nlist, 2048)
 *   64      4        default refinement depth: 0, or (refine) 10..2048
 *   68      60       zero
 *   128     4*n*dim  the vectors, float32, by object id
 */
#ifndef GENIE_TRANSFORM_VECTORS_IVF_H
#define GENIE_TRANSFORM_VECTORS_IVF_H

#include <pthread.h>
#include <stdint.h>

#include "genie/vectors.h"
#include "engine/ivf.h"

#define VIVF_HEADER 128u
#define VIVF_VERSION 1u
#define VIVF_MAX_NLIST 65536u
/* The build's default nprobe (and depth) are chosen for this recall@k. */
#define VIVF_DEFAULT_K 10u
#define VIVF_DEFAULT_RECALL 0.9

typedef struct vivf_recall vivf_recall;

/* An open inverted-file index (kept with the index while it is open). */
typedef struct vivf {
    genie_ivf_info info;
    engine_ivf ix;         /* views into the mapping, aListStart excepted */
    uint64_t *aListStart;  /* nlist + 1, from the keyword lists */
    ivf_cpu_cache cache;   /* the CPU search's layout */
    pthread_mutex_t lock;  /* guards pRecall */
    vivf_recall *pRecall;  /* the recall estimate, made on first need */
} vivf;

/** Non-zero when @p idx is an inverted-file vectors index (its FRONTEND's magic says so). */
int vivf_is_ivf(const genie_index *idx);

/**
 * The open state of @p idx, validated on the first call (FRONTEND, the
 * vector index sections, the lists) and kept with the index.
 * @return GENIE_OK, GENIE_ECORRUPT naming the field, GENIE_EFORMAT (an
 *         unknown version), GENIE_ENOMEM.
 */
genie_status vivf_get(const genie_index *idx, vivf **out);

/**
 * genie_vectors_search on an inverted-file index (not exact mode: the
 * caller runs that).  @p opt as genie_vsearch_options says for these
 * indexes; @p stats gets nprobe, candidates (the refinement depth) and
 * the recall estimate of a target.
 */
genie_status vivf_search(const genie_index *idx, vivf *st, const genie_vectors *queries,
                         const genie_vsearch_options *opt, genie_neighbor *out, uint32_t *aN,
                         genie_search_stats *stats);

/**
 * The ids of the estimate's pseudo-queries of an index of @p n vectors:
 * min(n, RECALL_SAMPLE) of them, one from each of as many equal ranges of
 * ids at a place drawn from RECALL_SEED, ascending; @return their number.
 * A build of n >= VIVF_HOLD_OUT_MIN vectors trains without them, so that
 * the estimate's queries, like real ones, did not shape the centroids
 * (k-means pulls each centroid toward the points it trains on: on 12,000
 * clustered vectors in 200 lists the estimate at nprobe 3 was 0.874 with
 * them among the training vectors, 0.844 without).
 */
uint32_t vivf_pseudo_queries(uint64_t n, uint32_t *aOut);
#define VIVF_HOLD_OUT_MIN 1000u

/** genie_recall_prepare on an inverted-file index: its estimate made now and kept with it. */
genie_status vivf_recall_prepare(const genie_index *idx, unsigned threads);

/**
 * The recall estimate of an inverted-file index (vectors_ivf_recall.c):
 * RECALL_SAMPLE of its vectors as pseudo-queries, each left out of its
 * own answers, with their exact RECALL_KMAX nearest.
 */
genie_status vivf_recall_make(const engine_ivf *ix, unsigned threads, vivf_recall **out);
void vivf_recall_free(vivf_recall *r);

/**
 * The choice for recall@k >= @p target (k <= RECALL_KMAX): IVF-Flat, the
 * smallest nprobe whose estimate reaches it (exact: the share of the
 * pseudo-queries' true k nearest whose lists are among their nprobe
 * nearest); IVF-PQ, by searching the pseudo-queries: for the depths
 * @p depths allows (VIVF_DEPTH_*: 0, no refinement; 2k, 4k, ... up to
 * IVF_MAX_REFINE), the
 * smallest nprobe that reaches it (doubling, then bisection), and of
 * those the cheapest (vectors scanned times the code length plus depth
 * times the dimension); when none does, the most that can be had.  @p r
 * is updated (searches it ran are kept).
 * @param[out] pNprobe, pRefine, pEstimate  the choice and its estimate.
 */
enum { VIVF_DEPTH_NONE = 0, VIVF_DEPTH_ANY = 1, VIVF_DEPTH_REFINED = 2 };
genie_status vivf_recall_plan(vivf_recall *r, const engine_ivf *ix, ivf_cpu_cache *cache, uint32_t k,
                              double target, int depths, unsigned threads, uint32_t *pNprobe, uint32_t *pRefine,
                              double *pEstimate);

/**
 * The estimated recall@k at @p nprobe and depth @p nRefine (searching
 * the pseudo-queries for IVF-PQ).
 */
genie_status vivf_recall_at(vivf_recall *r, const engine_ivf *ix, ivf_cpu_cache *cache, uint32_t k,
                            uint32_t nprobe, uint32_t nRefine, unsigned threads, double *pRecall);

#endif
