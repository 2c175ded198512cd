/*
 * The List of Clusters (LC) of Gil-Costa, Marin and Reyes, "Parallel
 * query processing on distributed clustering indexes" (J. Discrete
 * Algorithms 7, 2009), sections 2 and 3: private parts of the metric
 * front-end.
 *
 *   metric_space.c   the objects and their distances (vectors, strings,
 *                    sets), the metric used for pruning, float slack
 *   metric_build.c   construction (Fig. 1) and center selection
 *   metric_format.c  the FRONTEND section: encoding, validation on open
 *   metric_search.c  range (Fig. 5 + 3.2) and k-NN (Fig. 6) search
 *   metric_walk.c    the same search of one query in quanta, split into a
 *                    centers part and members parts (the distributed LC)
 *   metric_share.c   the LC of one share of an index's objects (LL)
 *
 * Two distances.  The REPORTED distance D is what the user asked for
 * (1 - cos for cosine); the PRUNING distance delta = lc_to_metric(D) is a
 * true metric (sqrt(2 D) for cosine, D itself otherwise), monotone in D.
 * Everything stored in the index (radii, member-to-center and
 * center-to-center distances) is delta; answers are ranked by D, ties by
 * smaller object id, exactly as a brute-force scan would.
 *
 * Float slack.  A bound |delta(q,c) - delta(o,c)| > r proves
 * delta(q,o) > r only in exact arithmetic; vector distances are float sums
 * whose rounding can break the triangle inequality by a little, so every
 * pruning test compares against r + lc_slack(): pruning gets slightly
 * weaker, answers stay exact.
 */
#ifndef GENIE_TRANSFORM_METRIC_H
#define GENIE_TRANSFORM_METRIC_H

#include <stddef.h>
#include <stdint.h>

#include "genie/metric.h"
#include "transform/sequences.h"
#include "transform/sets.h"

#define LC_PARAMS_VERSION 1u
#define LC_HEADER_SIZE 64u
#define LC_FLAG_CENTER_DISTANCES 1u
#define LC_CLUSTER_SIZE_MAX (1u << 20)
#define LC_CLUSTER_SIZE_DEFAULT 32u
#define LC_AUTO_CENTER_MATRIX_MAX 4096u
/* Centers used as pivots by a search: the first ones compared (metric_search.c). */
#define LC_PIVOTS 64

/* ------------------------------------------------------------ objects */

/*
 * The objects of an index (or of a build): vectors (aVec, n * dim floats),
 * strings (azStr/anStr) or parsed sets (aSet + aSetStart).  Read-only once
 * made; shared by all threads.
 */
typedef struct lc_space {
    genie_lc_metric metric;
    uint64_t n;
    uint32_t dim;
    const float *aVec;
    const char *const *azStr;
    const size_t *anStr;
    const set_slice *aSet;    /* jaccard: every object's elements */
    const uint64_t *aSetStart; /* n + 1: object i's are aSet[start[i] .. start[i+1]) */
    double relSlack, absSlack;
    /* Owned copies made by lc_space_open_* (freed by lc_space_free). */
    const char **azOwnStr;
    size_t *anOwnStr;
    set_slice *aOwnSet;
    uint64_t *aOwnSetStart;
} lc_space;

/*
 * One side of a distance: a query or an object, prepared once.  Strings
 * keep a bit-parallel pattern (sequences.h); sets their sorted elements.
 */
typedef struct lc_probe {
    const float *v;
    const char *z;
    size_t n;
    seq_pattern pat;
    int hasPat;
    const set_slice *aS;
    size_t nS;
    set_slice *aOwnS; /* the query's parsed elements (owned) */
    size_t nOwnCap;
} lc_probe;

int lc_metric_is_vector(genie_lc_metric metric);
/** Fill slack and derived fields; the caller set metric, n, dim and the data. */
void lc_space_init_slack(lc_space *s);
/** Views of caller strings (edit) or their parsed sets (jaccard; owned). */
genie_status lc_space_from_strings(lc_space *s, genie_lc_metric metric, const char *const *az, const size_t *an,
                                   uint64_t n, char separator);
void lc_space_free(lc_space *s);

/** Prepare object @p o of @p s as a probe. */
void lc_probe_object(lc_probe *p, const lc_space *s, uint32_t o);
/** Prepare a query: a vector (@p v) or a string / set line (@p z, @p n). */
genie_status lc_probe_query(lc_probe *p, const lc_space *s, const float *v, const char *z, size_t n, char separator);
void lc_probe_free(lc_probe *p);

/**
 * The reported distance D(p, o).  For edit distance only values up to
 * @p max are exact (larger ones come back as some value > max); pass
 * INFINITY for the exact distance.
 */
genie_status lc_distance(const lc_space *s, lc_probe *p, uint32_t o, double max, double *pD);
/** delta = the pruning metric of a reported distance (monotone). */
double lc_to_metric(const lc_space *s, double d);
/** The slack added to every pruning radius when comparing bounds built from a, b and r. */
double lc_slack(const lc_space *s, double a, double b, double r);

/* ------------------------------------------------------------- layout */

/*
 * A decoded LC (views into the FRONTEND section, validated).  Cluster i:
 * center aCenter[i], members aMember[aEnd[i-1] .. aEnd[i]) (aEnd[-1] = 0)
 * sorted by (aMemberDist, id), covering radius aRadius[i] (0 when it has
 * no members) and aOuter[i], the smallest distance from the center to any
 * object of a later cluster (INFINITY when none): every object after
 * cluster i is at distance >= aOuter[i] >= aRadius[i] from its center.
 * aCenterDist: for j < i, delta(c_i, c_j) at [i (i - 1) / 2 + j], or NULL.
 */
typedef struct lc_layout {
    genie_lc_info info;
    const uint32_t *aCenter;
    const uint32_t *aEnd;
    const double *aRadius;
    const double *aOuter;
    const uint32_t *aMember;
    const double *aMemberDist;
    const double *aCenterDist;
    const float *aVec; /* vectors: n * dim */
} lc_layout;

/** The bytes of the FRONTEND section of @p L (all arrays filled). */
genie_status lc_layout_encode(const lc_layout *L, unsigned char **paOut, size_t *pnOut);
/**
 * Decode and validate a FRONTEND section of @p nSection bytes for an index
 * of @p nObjects objects: sizes are checked against @p nSection before any
 * array is read, then every field (ranges, orderings, finiteness, each
 * object exactly once).  Allocates only a bitmap of nObjects bits.
 */
genie_status lc_layout_decode(const unsigned char *p, uint64_t nSection, uint64_t nObjects, lc_layout *L);

/**
 * Cluster the objects of @p s by @p p (checked by the caller) and write the
 * index to @p path (records: the strings, if any), each object with label
 * @p aLabel[i] (NULL: no labels) (metric_build.c; a live index's
 * compaction too).
 * @return GENIE_OK, GENIE_EIO, GENIE_ENOMEM.
 */
genie_status lc_build_write(const lc_space *s, const genie_lc_params *p, const uint64_t *aLabel,
                            const genie_build_options *opt, const char *path);

/**
 * The objects a live metric index's log added (index/live.h), compared
 * with each query (a scan: they are in no cluster) and merged into the
 * answers @p res already holds from the clusters, as if they were the
 * index's (ids after the file's; only those @p aAllow allows, the live id
 * space's bitmap, NULL = all) (metric_live.c).
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status lc_live_scan(const genie_index *idx, const lc_layout *L, const float *aQVec, const char *const *azQ,
                          const size_t *anQ, size_t nQuery, const genie_lc_options *opt, const uint64_t *aAllow,
                          genie_lc_results *res);
/**
 * The objects a live metric index holds now (not deleted, base first) as
 * a space, and their labels, for its compaction (metric_live.c): *pnKept
 * objects; free *paLabel, and the space with lc_space_free (the vectors
 * it owns in *paVec, freed by the caller).
 */
genie_status lc_live_kept(const genie_index *idx, const lc_layout *L, lc_space *s, float **paVec, uint64_t **paLabel);

/** The open index: layout plus objects.  lc_open_index validates both. */
genie_status lc_open_index(const genie_index *idx, lc_layout *L, lc_space *s);

/* ------------------------------------------------------------ search */

/* Per query: its hits (malloc'ed, nearest first) and distances computed. */
struct genie_lc_results {
    size_t n;
    genie_lc_hit **aaHit;
    size_t *anHit;
    uint64_t *anDist;
    genie_search_stats stats;
};

/* Hits ordered by (distance, id). */
int lc_hit_less(const genie_lc_hit *a, const genie_lc_hit *b);
int lc_cmp_hit(const void *a, const void *b);

/* A cluster to look into: clusters are visited by (lb, dc, i) ascending (lc_cmp_cand). */
typedef struct lc_cand {
    double lb, dc; /* max(dc - rc, 0); the pruning distance to the center */
    uint32_t i;
} lc_cand;
int lc_cmp_cand(const void *a, const void *b);

/* A max-heap of at most k hits by (distance, id): a[0] is the worst. */
typedef struct lc_heap {
    genie_lc_hit *a;
    size_t n, k;
} lc_heap;

void lc_heap_push(lc_heap *h, genie_lc_hit x);
/** The k-NN radius: the k-th distance once the heap is full, else @p r0. */
double lc_knn_radius(const lc_heap *h, double r0);
/** First member index of cluster i (aEnd[i - 1], or 0). */
uint32_t lc_cluster_begin(const lc_layout *L, uint32_t i);

/*
 * Distances of nPair (query, object) pairs, aPair[2i] a query of the block
 * of @p nQuery queries that starts at query @p q0, aPair[2i+1] an object
 * id: out[i] must equal lc_distance() on that pair (vectors: bit for bit
 * genie_vector_distance; edit: the exact integer distance).
 */
typedef genie_status (*lc_pairs_fn)(void *ctx, size_t q0, size_t nQuery, const uint32_t *aPair, uint64_t nPair,
                                    double *out);

/**
 * The batched search (metric_batch.c) of @p nQuery queries (vectors, or
 * strings under edit distance) over clusters [first, end): distances in
 * batches through @p xPairs (a GPU), pruning on the host; the answers of
 * metric_search.c's sequential search.  @p res has its arrays for nQuery
 * queries; fills hits and distance counts.  Only objects that @p aAllow
 * allows (engine/filter.h; NULL = all) are answered.
 */
genie_status lc_batch_search(const lc_layout *L, const lc_space *s, const genie_lc_options *opt,
                             const uint64_t *aAllow, uint32_t first, uint32_t end, size_t nQuery, lc_pairs_fn xPairs,
                             void *ctx, genie_lc_results *res);

/** The center-to-center distance of clusters i != j (needs aCenterDist). */
static inline double lc_center_dist(const lc_layout *L, uint32_t i, uint32_t j)
{
    if (i < j) {
        uint32_t t = i;
        i = j;
        j = t;
    }
    return L->aCenterDist[(uint64_t)i * (i - 1) / 2 + j];
}

#endif
