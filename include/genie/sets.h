/*
 * genie: sets under Jaccard similarity (the sets front-end).
 * The core API is genie/genie.h, which this header includes.
 */
#ifndef GENIE_SETS_H
#define GENIE_SETS_H

#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------ sets (Jaccard and others) */

/*
 * Sets of strings under Jaccard (and other set) similarity: one set per
 * line.  Elements are bytes separated by a separator byte (0 = runs of
 * white space); empty elements are ignored and repeats count once.  An
 * empty set matches nothing.  Two ways to answer (docs/SETS.md):
 *   - MinHash with m seeded hash functions, one attribute per function
 *     (Zhou et al. (GENIE) IV-A): candidates by match count, re-ranked by
 *     exact Jaccard; approximate;
 *   - exact, through the element lists: each distinct element is a
 *     keyword per size class, the match count of a query's elements is
 *     |A n B|, and the engine selects by similarity from it and the set
 *     sizes, reading only the size classes and lists that can still
 *     matter.
 * By default a search takes whichever its cost estimate finds cheaper.
 */
typedef struct genie_set_params {
    uint32_t hashes; /* m, MinHash functions, 1..4096; 0 = 64 */
    uint32_t seed;   /* of the hash functions */
    char separator;  /* element separator; 0 = white space; not '\n' */
} genie_set_params;

typedef struct genie_set_builder genie_set_builder;

/** @param[in] p  parameters (stored in the index), or NULL for defaults. */
GENIE_API genie_status genie_set_builder_new(genie_set_builder **out, const genie_build_options *opt,
                                   const genie_set_params *p);
/**
 * Add one set given as a line of @p len bytes; it gets the next object id.
 * @return GENIE_OK, GENIE_ERANGE (more than 2^26 distinct elements in the
 *         set, or more than 2^25 in all the sets), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_set_builder_add(genie_set_builder *sb, const char *line, size_t len);
GENIE_API genie_status genie_set_builder_write(genie_set_builder *sb, const char *path);
GENIE_API uint64_t genie_set_builder_count(const genie_set_builder *sb);
GENIE_API void genie_set_builder_free(genie_set_builder *sb);

/*
 * The similarity of query set A and indexed set B (c = |A n B|):
 * Jaccard c / |A u B|, cosine c / sqrt(|A| |B|), Dice 2 c / (|A| + |B|),
 * overlap c / min(|A|, |B|) (the overlap coefficient), containment c / |A|
 * (how much of the query the set holds).  Computed in double precision
 * from the integers (correctly rounded), ordered by the exact fraction.
 */
typedef enum genie_set_measure {
    GENIE_SET_JACCARD = 0,
    GENIE_SET_COSINE = 1,
    GENIE_SET_DICE = 2,
    GENIE_SET_OVERLAP = 3,
    GENIE_SET_CONTAINMENT = 4
} genie_set_measure;

/**
 * The similarity of a query of @p q elements and a set of @p s elements
 * sharing @p shared (1 <= shared <= min(q, s), q and s at most 2^26) under
 * @p measure, as genie_set_search() computes it (the same bits): what a
 * caller that keeps (shared, set size) pairs, such as a merge of answers
 * searched apart, prints.
 */
GENIE_API double genie_set_similarity(genie_set_measure measure, uint32_t shared, uint32_t q, uint32_t s);
/**
 * -1, 0 or 1 as the similarity of (shared1, s1) to a query of @p q
 * elements is below, equal to or above that of (shared2, s2), compared
 * exactly (as fractions; doubles can tie where the fractions do not): the
 * order of genie_set_search()'s answers, which then breaks ties by the
 * smaller object id.
 */
GENIE_API int genie_set_similarity_cmp(genie_set_measure measure, uint32_t q, uint32_t shared1, uint32_t s1,
                                       uint32_t shared2, uint32_t s2);

/** "jaccard", "cosine", "dice", "overlap", "containment"; NULL for an unknown value. */
GENIE_API const char *genie_set_measure_name(genie_set_measure measure);
/** Parse a measure name. @return GENIE_OK or GENIE_EINVAL. */
GENIE_API genie_status genie_set_measure_parse(const char *name, genie_set_measure *out);

/** The largest k of genie_set_search() (see genie_index_type_max_k()). */
#define GENIE_SETS_MAX_K 65536u

typedef struct genie_set_options {
    uint32_t size; /* sizeof, set by genie_set_options_init() (0: this header's size) */
    /** Answers per query, 1..GENIE_SETS_MAX_K; with min_similarity also 0 = every set that reaches it. */
    uint32_t k;
    /** K, MinHash candidates by match count (raised to k): asks for MinHash; 0 = chosen. */
    uint32_t candidates;
    /** Non-zero: exact answers (the element lists; an index without them scans every set). */
    int exact;
    /**
     * A recall target R in (0, 1], or 0 for none: MinHash with the smallest
     * K whose estimated recall@k is at least R (genie_recall_prepare()),
     * unless the exact search is estimated cheaper (or no K up to the
     * estimate's 4096 reaches R).  Needs candidates = 0, exact = 0,
     * k <= 100, Jaccard and no min_similarity.  The choice is in the stats
     * and in genie_set_results_plan().
     */
    double recall;
    /** The similarity; any but Jaccard is answered exactly. */
    genie_set_measure measure;
    /**
     * 0, or a threshold in (0, 1]: every set whose similarity is at least
     * it, best first (at most k when k > 0), exactly.
     */
    double min_similarity;
} genie_set_options;

/** Set @p opt to the defaults (every field 0, k = 10) and its size (genie.h, "Options"). */
GENIE_API void genie_set_options_init(genie_set_options *opt);

typedef struct genie_set_hit {
    uint32_t object;
    uint32_t shared;     /* |A n B| */
    uint32_t union_size; /* |A u B|; Jaccard = shared / union_size */
    uint32_t count;      /* MinHash match count (0 when answered exactly) */
    double similarity;   /* under the search's measure */
} genie_set_hit;

typedef struct genie_set_results genie_set_results;

/**
 * The sets of @p idx most similar to each query line (descending
 * similarity, ties by smaller object id, similarity 0 never returned):
 * the top-k, or those reaching min_similarity; exactly, or among the
 * top-K MinHash candidates found with @p opt's backend.
 * @param[in] opt  backend, threads, ... (its k is not used: @p sopt gives
 *                 k and K).
 * @return GENIE_OK; GENIE_EINVAL (not a sets index, k, measure,
 *         min_similarity, an option that needs the element lists on an
 *         index built without them, a query of more than 2^26 elements),
 *         the errors of genie_search(), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_set_search(const genie_index *idx, const char *const *queries, const size_t *lengths,
                              size_t n_queries, const genie_set_options *sopt, const genie_search_options *opt,
                              genie_set_results **out);
/**
 * genie_set_search() over the sets of parts first_part ..
 * first_part+n_parts-1 alone (the others left out as if absent), with the
 * index's object ids: what a process of a distributed search (genie-mpi)
 * does with its shard.  The exact search's answers of disjoint ranges,
 * merged by similarity (genie_set_similarity_cmp()) and then smaller
 * object id, keeping k, are those of their union; MinHash's candidates
 * are the range's own top K.  A recall target uses the whole index's
 * estimate.
 * @return as genie_set_search(); GENIE_EINVAL when n_parts is 0 or the
 *         range passes the last part.
 */
GENIE_API genie_status genie_set_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                              const char *const *queries, const size_t *lengths, size_t n_queries,
                                              const genie_set_options *sopt, const genie_search_options *opt,
                                              genie_set_results **out);
GENIE_API size_t genie_set_results_queries(const genie_set_results *r);
/** @param[out] n  hits of @p query, best first; valid until _free(). */
GENIE_API const genie_set_hit *genie_set_results_get(const genie_set_results *r, size_t query, size_t *n);
/**
 * The size of @p query as the search parsed it (its distinct elements,
 * those the index does not hold included): with a hit's shared and
 * union_size, the set's size (union_size - q + shared), so that answers
 * searched apart can be merged by genie_set_similarity_cmp().
 */
GENIE_API uint32_t genie_set_results_query_size(const genie_set_results *r, size_t query);
/**
 * What the search did (genie_search_stats): the backend that ran and its
 * times; for MinHash the candidate count K and rerank_seconds for the
 * exact re-rank; for the exact search candidates = 0, match_seconds for
 * the engine, verified = the similarities computed.
 */
GENIE_API void genie_set_results_stats(const genie_set_results *r, genie_search_stats *out);

/* How the answers were found. */
typedef enum genie_set_method {
    GENIE_SET_MINHASH = 0,     /* MinHash candidates, exact re-rank */
    GENIE_SET_EXACT_LISTS = 1, /* exact, through the element lists */
    GENIE_SET_EXACT_SCAN = 2   /* exact, every stored set compared (an index without element lists) */
} genie_set_method;

typedef struct genie_set_plan {
    genie_set_method method;
    /* MinHash's K: the one that ran, or the one the choice weighed against the exact search; 0: none. */
    uint32_t candidates;
    double recall;         /* MinHash's estimated recall@k at that K; -1: not estimated */
    /* The cost estimates the choice compared (seconds for the whole call); -1 when no choice was made. */
    double exact_cost, minhash_cost;
    const char *reason;    /* why this method (static text) */
} genie_set_plan;

/** The method of the search that made @p r, and why. */
GENIE_API void genie_set_results_plan(const genie_set_results *r, genie_set_plan *out);
GENIE_API void genie_set_results_free(genie_set_results *r);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_SETS_H */
