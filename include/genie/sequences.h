/*
 * genie: strings under edit distance (the sequences front-end).
 * The core API is genie/genie.h, which this header includes.
 */
#ifndef GENIE_SEQUENCES_H
#define GENIE_SEQUENCES_H

#include "genie/genie.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------ sequences (edit distance) */

/*
 * Strings searched under edit distance (Zhou et al. (GENIE) V-A): each string is
 * indexed by its ordered n-grams (Example V.1) and stored as the object's
 * record.  Strings are bytes: no UTF-8 decoding, invalid UTF-8 is fine, a
 * multi-byte character counts as several symbols.  A string shorter than
 * n has no n-grams: it is found only by the exact mode.  Duplicates are
 * separate objects.  See docs/SEQUENCES.md.
 */
typedef struct genie_seq_builder genie_seq_builder;

/**
 * @param[in] gram  the n-gram length n, 1..64; 0 = 3.  Stored in the index.
 * @param[out] out  free with genie_seq_builder_free().
 * @return GENIE_OK, GENIE_EINVAL (gram > 64), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_seq_builder_new(genie_seq_builder **out, const genie_build_options *opt, uint32_t gram);
/** Add one string of @p len bytes (copied); it gets the next object id. */
GENIE_API genie_status genie_seq_builder_add(genie_seq_builder *sb, const char *s, size_t len);
/** Write the index (see genie_builder_write()). */
GENIE_API genie_status genie_seq_builder_write(genie_seq_builder *sb, const char *path);
GENIE_API uint64_t genie_seq_builder_count(const genie_seq_builder *sb);
GENIE_API void genie_seq_builder_free(genie_seq_builder *sb);

/** The n-gram length of a sequences index; GENIE_EINVAL for other types. */
GENIE_API genie_status genie_seq_gram_length(const genie_index *idx, uint32_t *gram);

/** The largest k of genie_seq_search() (see genie_index_type_max_k()). */
#define GENIE_SEQ_MAX_K 65536u

typedef struct genie_seq_options {
    uint32_t size; /* sizeof, set by genie_seq_options_init() (0: this header's size) */
    uint32_t k;              /* answers per query, 1..GENIE_SEQ_MAX_K */
    uint32_t candidates;     /* K, candidates by match count; 0 = 32; raised to k */
    /** 0: one round (answers may be uncertified).  Else --certify: queries
     *  not certified are searched again with K doubled (8, 16, 32, ...)
     *  until certified or K reaches this limit (the CLI's default is 4096);
     *  without certify_only the doubling also stops before a round whose
     *  K would exceed a quarter of the strings, and then the queries
     *  still uncertified are compared with every string (the fallback, on
     *  the GPU when @p opt's backend is cuda): every answer is certified,
     *  the exact top-k, and stats.fallback counts those queries. */
    uint32_t max_candidates;
    int exact;               /* non-zero: brute force over every string */
    /** With max_candidates: non-zero keeps the cheap mode (certificate or
     *  nothing): no fallback, a query uncertified after its last round
     *  stays so and may miss closer strings. */
    int certify_only;
    /**
     * A recall target R in (0, 1], or 0 for none (the mode without
     * certificates): K becomes the smallest whose estimated recall@k is at
     * least R (genie_recall_prepare(); exact mode when no K up to the
     * estimate's 4096 does), for the edit rate that a pilot search of up
     * to 200 of the queries (K = 32) measures (docs/RECALL.md).  Needs
     * candidates = max_candidates = 0, exact = 0, k <= 100.  The choice
     * (and stats.recall_edit_rate, the rate assumed) is in the stats.
     */
    double recall;
} genie_seq_options;

/** Set @p opt to the defaults (every field 0, k = 10) and its size (genie.h, "Options"). */
GENIE_API void genie_seq_options_init(genie_seq_options *opt);

typedef struct genie_seq_hit {
    uint32_t object;
    uint32_t distance; /* exact edit distance (unit costs) */
    uint32_t count;    /* match count of the candidate (0 in exact mode) */
} genie_seq_hit;

typedef struct genie_seq_results genie_seq_results;

/**
 * The top-k strings of @p idx by (edit distance, object id) for each query:
 * top-K candidates by match count through genie_search() with @p opt's
 * backend and threads, verified by Algorithm 2; a query is certified when
 * Theorem V.2 proves its answer is the exact top-k, or when the full scan
 * of the fallback (see max_candidates) or of the exact mode answered it:
 * then it is exactly the top-k of a brute force, by (distance, id).  An
 * answer has fewer than k hits only when uncertified (or the index has
 * fewer than k strings).
 * @param[in]  opt  backend, threads, ... of the candidate searches (its k
 *                  is not used: @p sopt gives k and K).
 * @param[out] out  free with genie_seq_results_free().
 * @return GENIE_OK, GENIE_EINVAL (not a sequences index, k out of range,
 *         limit below K), the errors of genie_search(), GENIE_ENOMEM.
 */
GENIE_API genie_status genie_seq_search(const genie_index *idx, const char *const *queries, const size_t *lengths,
                              size_t n_queries, const genie_seq_options *sopt, const genie_search_options *opt,
                              genie_seq_results **out);
/**
 * genie_seq_search() over the strings of parts first_part ..
 * first_part+n_parts-1 alone (the others left out as if absent), with the
 * index's object ids: what a process of a distributed search (genie-mpi)
 * does with its shard.  Rounds, the certificate and the final comparison
 * with every string all count the range's strings: a certified answer is
 * the exact top-k of the range, so certified answers of disjoint ranges,
 * merged by (distance, object id) keeping k, are the exact top-k of their
 * union.
 * @return as genie_seq_search(); GENIE_EINVAL when n_parts is 0 or the
 *         range passes the last part.
 */
GENIE_API genie_status genie_seq_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                    const char *const *queries, const size_t *lengths, size_t n_queries,
                                    const genie_seq_options *sopt, const genie_search_options *opt,
                                    genie_seq_results **out);
GENIE_API size_t genie_seq_results_queries(const genie_seq_results *r);
/**
 * @param[out] n          hits of @p query, best first;
 * @param[out] certified  non-zero when the answer is proven exact (may be NULL);
 * @param[out] used_k     K of the query's last round, 0 in exact mode (may be NULL).
 * @return the hits, valid until genie_seq_results_free().
 */
GENIE_API const genie_seq_hit *genie_seq_results_get(const genie_seq_results *r, size_t query, size_t *n, int *certified,
                                           uint32_t *used_k);
/**
 * Non-zero when @p query's answer came from comparing every string: the
 * exact mode, or the fallback of max_candidates without certify_only.
 */
GENIE_API int genie_seq_results_scanned(const genie_seq_results *r, size_t query);
/**
 * What the search did (genie_search_stats): the backend of the candidate
 * searches (in exact mode, that of the scan), match_seconds and rounds
 * over every round, rerank_seconds and verified for the edit distances
 * (full scans included); fallback, the queries the fallback scanned, and
 * scan_backend, where full scans ran (cpu or cuda; auto when none ran).
 */
GENIE_API void genie_seq_results_stats(const genie_seq_results *r, genie_search_stats *out);
GENIE_API void genie_seq_results_free(genie_seq_results *r);

#ifdef __cplusplus
}
#endif

#endif /* GENIE_SEQUENCES_H */
