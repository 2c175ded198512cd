/*
 * genie: exact search in metric spaces with the List of Clusters (the
 * metric front-end).  The core API is genie/genie.h, which this header
 * includes.
 *
 * The index is the List of Clusters (LC) of Gil-Costa, Marin and Reyes,
 * "Parallel query processing on distributed clustering indexes" (Journal
 * of Discrete Algorithms 7, 2009), section 2, with the stored distances of
 * section 3: center-to-center distances (3.1) and each member's distance
 * to its center, members sorted by it (3.2, the "T" variants).  Range
 * search follows Fig. 5 with the table of 3.2, k-NN search Fig. 6 (3.3)
 * with the shrinking radius.  Both are exact: they return what comparing
 * the query with every object would (see docs/METRIC.md), while computing
 * far fewer distances when the data has structure.
 */
#ifndef GENIE_METRIC_H
#define GENIE_METRIC_H

#include "genie/genie.h"
#include "genie/vectors.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The distances of a metric index.  Vectors: l2 (Euclidean), l1 (sum of
 * absolute differences), cosine (1 - cos(angle), as genie_vector_distance;
 * pruning works on the metric sqrt(2 (1 - cos)), the Euclidean distance of
 * the unit vectors, which orders objects the same way).  Strings: edit
 * (Levenshtein, unit costs, over bytes).  Sets of strings, one per line:
 * jaccard (1 - |A n B| / |A u B|; two empty sets are at distance 0).
 */
typedef enum genie_lc_metric {
    GENIE_LC_L2 = 0,
    GENIE_LC_L1 = 1,
    GENIE_LC_COSINE = 2,
    GENIE_LC_EDIT = 3,
    GENIE_LC_JACCARD = 4
} genie_lc_metric;

/** "l2", "l1", "cosine", "edit", "jaccard"; NULL for an unknown value. */
GENIE_API const char *genie_lc_metric_name(genie_lc_metric metric);
/** @return GENIE_OK or GENIE_EINVAL. */
GENIE_API genie_status genie_lc_metric_parse(const char *name, genie_lc_metric *out);

/*
 * How the next center is chosen (section 2).  farthest: the remaining
 * object with the largest sum of distances to the centers chosen so far
 * (ties by smaller id), the heuristic the paper uses; the first center is
 * drawn from the seed.  random: a remaining object drawn from the seed.
 */
typedef enum genie_lc_centers {
    GENIE_LC_CENTERS_FARTHEST = 0,
    GENIE_LC_CENTERS_RANDOM = 1
} genie_lc_centers;

/** "farthest", "random"; NULL for an unknown value. */
GENIE_API const char *genie_lc_centers_name(genie_lc_centers centers);
/** @return GENIE_OK or GENIE_EINVAL. */
GENIE_API genie_status genie_lc_centers_parse(const char *name, genie_lc_centers *out);

typedef struct genie_lc_params {
    genie_lc_metric metric;
    uint32_t cluster_size;    /* K: members per cluster besides the center, 1..2^20; 0 = 32 */
    genie_lc_centers centers;
    /**
     * The center-to-center distances (3.1): m (m - 1) / 2 doubles for m
     * clusters.  0: stored when m <= 4096 (at most 64 MiB); 1: always;
     * -1: never.
     */
    int center_distances;
    uint64_t seed;            /* of the center choice */
    char separator;           /* jaccard: element separator; 0 = white space; not '\n' */
    unsigned threads;         /* building; 0 = all cores */
} genie_lc_params;

/**
 * Build the LC of @p base (vectors; metric l2, l1 or cosine) and write it
 * to @p path, the vectors included.
 * @return GENIE_OK, GENIE_EINVAL (empty base, wrong metric, bad
 *         parameter), GENIE_ERANGE (2^32 or more objects), GENIE_EIO,
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_lc_build_vectors(const genie_vectors *base, const genie_lc_params *p,
                                              const genie_build_options *opt, const char *path);
/**
 * Build the LC of @p n strings (metric edit) or sets (metric jaccard; one
 * set per string, parsed like the sets front-end: elements separated by
 * runs of white space or by p->separator, repeats count once) and write it
 * to @p path; the strings are stored as the objects' records.
 * @return as genie_lc_build_vectors().
 */
GENIE_API genie_status genie_lc_build_strings(const char *const *strings, const size_t *lengths, size_t n,
                                              const genie_lc_params *p, const genie_build_options *opt,
                                              const char *path);

/** What a metric index holds. */
typedef struct genie_lc_info {
    genie_lc_metric metric;
    genie_lc_centers centers;
    uint32_t dim;            /* vectors; 0 for strings and sets */
    uint32_t cluster_size;   /* K */
    uint32_t n_clusters;     /* m */
    uint64_t n_objects;
    int has_center_distances;
    char separator;          /* jaccard */
    uint64_t seed;
} genie_lc_info;

/** @return GENIE_OK, GENIE_EINVAL (not a metric index), GENIE_ECORRUPT. */
GENIE_API genie_status genie_lc_index_info(const genie_index *idx, genie_lc_info *out);

/** The largest k of the metric searches: any 32-bit k (see genie_index_type_max_k()). */
#define GENIE_LC_MAX_K 4294967295u

typedef struct genie_lc_options {
    uint32_t size; /* sizeof, set by genie_lc_options_init() (0: this header's size) */
    uint32_t k;        /* >= 1: the k nearest; 0: range search */
    double radius;     /* range search: the radius (>= 0); k-NN: see bounded */
    int bounded;       /* k-NN: only objects within radius */
    genie_backend backend; /* auto, cpu or cuda: l2, l1, cosine and edit batched on a GPU; jaccard and brute_force on the CPU */
    unsigned threads;  /* over queries; 0 = all cores */
    int brute_force;   /* non-zero: compare with every object (the baseline) */
    /**
     * The clusters searched: [first_cluster, first_cluster + n_clusters),
     * n_clusters = 0 meaning all from first_cluster on.  The answers are
     * exactly those of the objects of these clusters (centers and
     * members), so disjoint ranges covering every cluster, searched apart
     * (on other processes, say) and merged by (distance, id), give the
     * whole index's answers: the seam for the distributed LC (section 4).
     */
    uint32_t first_cluster;
    uint32_t n_clusters;
    /**
     * The objects that may be returned (genie/genie.h's genie_filter over
     * the index's object ids), NULL = all.  The others still serve as
     * centers for pruning; they are never answered, so the answers are
     * exactly those of the same search over the allowed objects alone.
     */
    const genie_filter *filter;
} genie_lc_options;

/** Set @p opt to the defaults (every field 0) and its size (genie.h, "Options"). */
GENIE_API void genie_lc_options_init(genie_lc_options *opt);

typedef struct genie_lc_hit {
    uint32_t object;
    double distance;
} genie_lc_hit;

typedef struct genie_lc_results genie_lc_results;

/**
 * Exact range or k-NN search of every query in @p queries (vectors of the
 * index's dimension) on a vectors metric index.  Hits come nearest first,
 * ties by smaller object id: all objects within the radius (range), or
 * the min(k, n) nearest (k-NN; with bounded, only those within radius).
 * @param[out] out  the results; free with genie_lc_results_free().
 * @return GENIE_OK, GENIE_EINVAL (not a vectors metric index, dimensions
 *         differ, negative or NaN radius, cluster range outside the index),
 *         GENIE_ENOTSUP or GENIE_EGPU (a GPU backend for jaccard or
 *         brute_force, or none usable), GENIE_ECORRUPT, GENIE_ENOMEM.
 */
GENIE_API genie_status genie_lc_search_vectors(const genie_index *idx, const genie_vectors *queries,
                                               const genie_lc_options *opt, genie_lc_results **out);
/** The same for strings (edit) or sets (jaccard), one query per string. */
GENIE_API genie_status genie_lc_search_strings(const genie_index *idx, const char *const *queries,
                                               const size_t *lengths, size_t n_queries,
                                               const genie_lc_options *opt, genie_lc_results **out);

GENIE_API size_t genie_lc_results_queries(const genie_lc_results *r);
/** @param[out] n  hits of @p query, nearest first; valid until _free(). */
GENIE_API const genie_lc_hit *genie_lc_results_get(const genie_lc_results *r, size_t query, size_t *n);
/** Distances computed for @p query (centers and members). */
GENIE_API uint64_t genie_lc_results_distances(const genie_lc_results *r, size_t query);
/**
 * What the search did: backend cpu, total_seconds, and verified = the
 * distances computed over all queries (the paper's cost measure).
 */
GENIE_API void genie_lc_results_stats(const genie_lc_results *r, genie_search_stats *out);
GENIE_API void genie_lc_results_free(genie_lc_results *r);

/* ------------------------------------------------- distributed search */

/*
 * The pieces of the distributed LC (Gil-Costa, Marin and Reyes, section
 * 4.2), for genie-mpi: the search of one query in quanta of at most Q
 * distance computations that resumes where it stopped (the round-robin
 * quanta of 4.1), in two parts that can run on different processes:
 *
 *   centers  the query against the centers, in construction order, with
 *            the pivot bounds and the stop rule of the sequential search;
 *            it reports the centers within reach and leaves a plan: the
 *            clusters whose members must be looked at, with d(q, c), the
 *            cluster from which on nothing need be visited, and (k-NN)
 *            the k-th distance among the centers;
 *   members  the members of a plan's clusters (range: those in the window
 *            of 3.2; k-NN: nearest bound first, Fig. 6, the radius
 *            shrinking), only those of one share of the objects: ids o
 *            with o % share_stride == share_offset.
 *
 * GENIE_LC_WALK_WHOLE runs both in one walk over all objects: the strategy
 * LL runs it on each processor's own index.  LG runs the centers part once,
 * on the query's ranker, and a members part on every processor over its
 * share.  The centers part's answers and every share's members answers,
 * merged by (distance, id) (k-NN: the best k), are those of
 * genie_lc_search_*() on the whole index: each part is exact for the
 * objects it covers, and the plan radius only removes objects farther
 * than k centers already are.
 */
typedef struct genie_lc_walker genie_lc_walker;
typedef struct genie_lc_walk genie_lc_walk;

typedef enum genie_lc_walk_part {
    GENIE_LC_WALK_WHOLE = 0,
    GENIE_LC_WALK_CENTERS = 1,
    GENIE_LC_WALK_MEMBERS = 2
} genie_lc_walk_part;

typedef struct genie_lc_walk_options {
    uint32_t size; /* sizeof, set by genie_lc_walk_options_init() (0: this header's size) */
    uint32_t k;        /* as genie_lc_options: >= 1 k-NN, 0 range */
    double radius;
    int bounded;
    genie_lc_walk_part part;
    uint32_t share_stride; /* members: the objects o with o % stride == offset; 0 or 1: all */
    uint32_t share_offset;
} genie_lc_walk_options;

/** Set @p opt to the defaults (every field 0) and its size (genie.h, "Options"). */
GENIE_API void genie_lc_walk_options_init(genie_lc_walk_options *opt);

/* What a centers part leaves for the members parts. */
typedef struct genie_lc_plan {
    uint32_t n;                     /* clusters to look into */
    const uint32_t *clusters;       /* their numbers */
    const double *center_distances; /* the pruning distance from the query to each one's center */
    uint32_t stop;                  /* no cluster numbered stop or more holds an answer */
    double radius;                  /* k-NN: the k-th distance among the centers (INFINITY: fewer; cosine: may be a hair below 0) */
} genie_lc_plan;

/**
 * Open @p idx for walks: one walker, shared read-only by any number of
 * threads and walks, valid while @p idx is open; free it before the walks'
 * index closes, after its walks.
 * @return GENIE_OK, GENIE_EINVAL (not a metric index), GENIE_ECORRUPT,
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_lc_walker_new(const genie_index *idx, genie_lc_walker **out);
GENIE_API void genie_lc_walker_free(genie_lc_walker *w);

/**
 * Start the search of one query: a vector of the index's dimension
 * (@p vec) or a string / set line (@p z, @p n), copied.  A members walk
 * needs its plan (genie_lc_walk_set_plan) before its first step.
 * @return GENIE_OK, GENIE_EINVAL (bad options, the wrong kind of query),
 *         GENIE_ENOMEM.
 */
GENIE_API genie_status genie_lc_walk_start(const genie_lc_walker *w, const genie_lc_walk_options *o, const float *vec,
                                           const char *z, size_t n, genie_lc_walk **out);
/**
 * Give a members walk its plan (made by a centers walk of the same index,
 * query and options), copied.
 * @return GENIE_OK, GENIE_EINVAL (not a members walk, a cluster number
 *         outside the index, a NaN distance), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_lc_walk_set_plan(genie_lc_walk *walk, const genie_lc_plan *plan);
/**
 * Compute at most @p quantum (>= 1) more distances.
 * @param[out] done  non-zero once the walk is over (further steps do nothing).
 * @return GENIE_OK, GENIE_EINVAL (a members walk without its plan), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_lc_walk_step(genie_lc_walk *walk, uint64_t quantum, int *done);
/**
 * A finished centers walk's plan; its arrays are valid until _free().
 * @return GENIE_OK, GENIE_EINVAL (not a finished centers walk).
 */
GENIE_API genie_status genie_lc_walk_plan(const genie_lc_walk *walk, genie_lc_plan *out);
/**
 * A finished walk's answers among the objects it looked at (a centers
 * part: centers; a members part: its share of the members; whole: all),
 * nearest first, ties by smaller id; valid until _free().  NULL and
 * *n = 0 before the walk is over.
 */
GENIE_API const genie_lc_hit *genie_lc_walk_hits(const genie_lc_walk *walk, size_t *n);
/** Distances the walk has computed so far. */
GENIE_API uint64_t genie_lc_walk_distances(const genie_lc_walk *walk);
GENIE_API void genie_lc_walk_free(genie_lc_walk *walk);

/**
 * Build the LC of one share of a metric index's objects, those o with
 * o % @p stride == @p offset, in id order (object i of the new index is
 * object offset + i * stride of @p idx): a processor's local index under
 * the strategy LL.  The metric and the separator are @p idx's, the rest
 * comes from @p p.
 * @return as genie_lc_build_vectors(); GENIE_EINVAL also when @p stride
 *         is not above @p offset or the share is empty.
 */
GENIE_API genie_status genie_lc_build_share(const genie_index *idx, uint32_t stride, uint32_t offset,
                                            const genie_lc_params *p, const genie_build_options *opt,
                                            const char *path);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_METRIC_H */
