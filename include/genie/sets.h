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

/* ------------------------------------------------ sets (Jaccard, MinHash) */

/*
 * Sets of strings under Jaccard similarity (Zhou et al. (GENIE) IV-A): one set per
 * line; MinHash with m seeded hash functions, one attribute per function;
 * candidates by match count, re-ranked by exact Jaccard.  Elements are
 * bytes separated by a separator byte (0 = runs of white space); empty
 * elements are ignored and repeats count once.  An empty set matches
 * nothing.  See docs/SETS.md.
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
/** Add one set given as a line of @p len bytes; it gets the next object id. */
GENIE_API genie_status genie_set_builder_add(genie_set_builder *sb, const char *line, size_t len);
GENIE_API genie_status genie_set_builder_write(genie_set_builder *sb, const char *path);
GENIE_API uint64_t genie_set_builder_count(const genie_set_builder *sb);
GENIE_API void genie_set_builder_free(genie_set_builder *sb);

/** The largest k of genie_set_search() (see genie_index_type_max_k()). */
#define GENIE_SETS_MAX_K 65536u

typedef struct genie_set_options {
    uint32_t size; /* sizeof, set by genie_set_options_init() (0: this header's size) */
    uint32_t k;          /* answers per query, 1..GENIE_SETS_MAX_K */
    uint32_t candidates; /* K, candidates by match count; 0 = 100; raised to k */
    int exact;           /* non-zero: exact Jaccard against every set */
    /**
     * A recall target R in (0, 1], or 0 for none: K becomes the smallest
     * whose estimated recall@k is at least R (genie_recall_prepare();
     * exact mode when no K up to the estimate's 4096 does).  Needs
     * candidates = 0, exact = 0, k <= 100.  The choice is in the stats.
     */
    double recall;
} genie_set_options;

/** Set @p opt to the defaults (every field 0, k = 10) and its size (genie.h, "Options"). */
GENIE_API void genie_set_options_init(genie_set_options *opt);

typedef struct genie_set_hit {
    uint32_t object;
    uint32_t shared;     /* |A n B| */
    uint32_t union_size; /* |A u B|; Jaccard = shared / union_size */
    uint32_t count;      /* MinHash match count (0 in exact mode) */
} genie_set_hit;

typedef struct genie_set_results genie_set_results;

/**
 * The top-k sets of @p idx by exact Jaccard similarity to each query line
 * (descending, ties by smaller object id, Jaccard 0 never returned), among
 * the top-K MinHash candidates found with @p opt's backend, or among all
 * sets in exact mode.
 * @param[in] opt  backend, threads, ... of the candidate search (its k is
 *                 not used: @p sopt gives k and K).
 * @return GENIE_OK, GENIE_EINVAL (not a sets index, k), the errors of
 *         genie_search(), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_set_search(const genie_index *idx, const char *const *queries, const size_t *lengths,
                              size_t n_queries, const genie_set_options *sopt, const genie_search_options *opt,
                              genie_set_results **out);
GENIE_API size_t genie_set_results_queries(const genie_set_results *r);
/** @param[out] n  hits of @p query, best first; valid until _free(). */
GENIE_API const genie_set_hit *genie_set_results_get(const genie_set_results *r, size_t query, size_t *n);
/**
 * What the search did (genie_search_stats): the candidate search's backend
 * (cpu in exact mode) and times, rerank_seconds and verified for the exact
 * Jaccard ranking.
 */
GENIE_API void genie_set_results_stats(const genie_set_results *r, genie_search_stats *out);
GENIE_API void genie_set_results_free(genie_set_results *r);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_SETS_H */
