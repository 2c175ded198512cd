/*
 * Inverted-file vectors indexes, IVF-Flat and IVF-PQ (private to
 * src/transform): their FRONTEND bytes, opening and validating them, the
 * search behind genie_vectors_search, and the recall estimate that
 * chooses nprobe.  The search itself is the engine's (engine/ivf.h).
 *
 * The file (docs/FORMAT.md, index/format.h): a vectors index whose object
 * i has one keyword, the number of its list, so that each part's keyword
 * lists are the inverted lists of its objects (POSTINGS: part-relative
 * ids ascending within each list; one part, or, with the part options,
 * parts of consecutive objects, every part holding the lists of its own
 * objects under the whole index's centroids); the vector index sections
 * hold the centroids (14), the PQ codebooks (15) and the PQ codes
 * parallel to the parts' POSTINGS, parts in order (16: one posting per
 * object, so part p's codes start at its first object); FRONTEND holds
 * the parameters and the vectors by id.
 *
 * A search reads a view (vivf_view): the lists of a range of parts as one
 * engine_ivf, list l being the range's objects of list l, ids ascending
 * (one part: the part's sections in place; several: the ids and codes
 * copied into that order).  The view of every part is the whole index,
 * byte for byte the lists of a build without parts, so the answers do not
 * depend on the parts.  FRONTEND layout
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
 *   68      4        the target they were chosen for, recall@10 in
 *                    millionths, 1..1,000,000 (0 in files before it: 0.9)
 *   72      56       zero
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

typedef struct vivf_recall vivf_recall;

/* The lists of parts [firstPart, firstPart + nParts) as one engine_ivf. */
typedef struct vivf_view {
    uint32_t firstPart, nParts;
    uint64_t firstObject;      /* the view's ids (ix.aId) count from it */
    engine_ivf ix;             /* n: the range's objects; aVec from firstObject */
    uint64_t *aListStart;      /* nlist + 1 */
    uint32_t *aIdCopy;         /* several parts: the ids in list order; one part: NULL (its POSTINGS) */
    uint8_t *aCodeCopy;        /* several parts, IVF-PQ: the codes in that order; else NULL */
    ivf_cpu_cache cache;       /* the CPU search's layout of ix */
    const genie_index *pSlots; /* the index or part whose device slot keeps the GPU's copy; NULL: none */
} vivf_view;

/* Views kept with an open index; a search of yet another range makes one for the call. */
#define VIVF_MAX_VIEWS 8u

/* An open inverted-file index (kept with the index while it is open). */
typedef struct vivf {
    genie_ivf_info info;
    engine_ivf ix;          /* the whole index's parameters, centroids, codebooks and vectors; no lists */
    const uint8_t *aCode;   /* IVF-PQ: the codes of every part, in file order */
    pthread_mutex_t lock;   /* guards the views and pRecall */
    vivf_view *apView[VIVF_MAX_VIEWS]; /* apView[0] the whole index's, made at open */
    uint32_t nView;
    vivf_recall *pRecall;   /* the recall estimate (of the whole index), made on first need */
} vivf;

/** Non-zero when @p idx is an inverted-file vectors index (its FRONTEND's magic says so). */
int vivf_is_ivf(const genie_index *idx);

/**
 * The open state of @p idx, validated on the first call (FRONTEND, the
 * vector index sections, every part's lists) with the whole index's view,
 * and kept with the index.
 * @return GENIE_OK, GENIE_ECORRUPT naming the field, GENIE_EFORMAT (an
 *         unknown version), GENIE_ENOMEM.
 */
genie_status vivf_get(const genie_index *idx, vivf **out);

/**
 * The view of parts [@p firstPart, @p firstPart + @p nParts) of @p idx
 * (a valid range): kept with the index (made on first use, up to
 * VIVF_MAX_VIEWS), or, past them, made for the caller, who frees it with
 * vivf_view_free when *pOwned is set.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status vivf_view_get(const genie_index *idx, vivf *st, uint32_t firstPart, uint32_t nParts, vivf_view **out,
                           int *pOwned);
void vivf_view_free(vivf_view *v);

/**
 * genie_vectors_search_parts on an inverted-file index (not exact mode:
 * the caller runs that): the objects of parts [@p firstPart, @p firstPart
 * + @p nParts), the whole index when they are all its parts, searched as
 * one index, with the index's ids.  @p opt as genie_vsearch_options says
 * for these indexes; @p stats gets nprobe, candidates (the refinement
 * depth) and the recall estimate of a target (of the whole index: a range
 * probes what the whole index would).
 */
genie_status vivf_search(const genie_index *idx, vivf *st, uint32_t firstPart, uint32_t nParts,
                         const genie_vectors *queries, const genie_vsearch_options *opt, genie_neighbor *out,
                         uint32_t *aN, genie_search_stats *stats);

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

/** @p x (dim floats) divided by its norm (in double), into @p out: what cosine's quantizers see; 0 stays 0. */
void vivf_normalise(const float *x, uint32_t dim, float *out);

/* ------------------------------------------------------- live indexes (vectors_ivf_live.c) */

/**
 * The list of a vector added to the index of @p st, as the build assigns
 * it with the trained centroids: the nearest (l2) or largest product (ip;
 * cosine on the normalised vector), by the CPU's kmeans_assign.  (Its
 * IVF-PQ code is derived when a snapshot reads the log, with the file's
 * codebooks, as the build encodes.)
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status vivf_assign_list(const vivf *st, const float *v, uint32_t *pList);

/**
 * engine_ivf_search of @p q on the view @p v (the last parts of a live
 * index @p idx with added vectors) and on the added vectors, which lie in
 * the lists of their centroids (the delta: its lists, vectors and codes,
 * derived once per snapshot and kept with it, with its own device slot),
 * merged exactly as the one index a compaction writes would answer at the
 * same nprobe: IVF-Flat and IVF-PQ by (distance or estimate, id); with a
 * refinement depth R, the R best estimates of both re-ranked by their
 * direct distances.  @p aAllow: the search's bitmap over every id
 * (filter_effective; NULL: all).  Ids are the index's.
 * @return GENIE_OK, GENIE_EINVAL (k or R above IVF_MAX_K: compact first;
 *         R below k),
 *         GENIE_ECORRUPT (the delta's lists), the engine's errors.
 */
genie_status vivf_live_search(const genie_index *idx, vivf *st, vivf_view *v, const engine_ivf_query *q,
                              const uint64_t *aAllow, genie_backend backend, int device, genie_neighbor *out,
                              uint32_t *aN, genie_backend *pUsed);

/**
 * The compaction of a live inverted-file index @p idx whose open state
 * is @p st (vivf_get; live_compact.c): the kept objects in order with their lists and codes, the trained centroids and
 * codebooks kept (no retraining), the FRONTEND's n the kept count (and
 * its train_size at most that), written to @p zOut.
 * @return GENIE_OK, GENIE_EINVAL (fewer kept vectors than lists),
 *         GENIE_EIO, GENIE_ENOMEM.
 */
genie_status vivf_compact_write(const genie_index *idx, const vivf *st, const char *zOut);

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
