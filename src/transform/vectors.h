/*
 * The vectors front-end's internals shared with the recall estimate
 * (recall_sample.c): opening a vectors index and the candidate search by
 * match count (vectors.c says how queries become items).  Private to
 * src/transform.
 */
#ifndef GENIE_TRANSFORM_VECTORS_H
#define GENIE_TRANSFORM_VECTORS_H

#include "genie/vectors.h"
#include "transform/vectors_lsh.h"

/**
 * The LSH functions and the base vectors of vectors index @p idx (the
 * base is a view into the mapping).  vlsh_free(@p h) releases the first.
 */
genie_status vec_open(const genie_index *idx, vlsh *h, genie_vectors *base);

/**
 * The top-@p K objects by match count for each query (the items of
 * vectors.c with @p radius) among the objects of parts [@p first_part,
 * + @p n_parts) (genie_search_parts), on @p opt's backend; its k is
 * replaced by K.
 * @param[out] pRes  free with genie_results_free();
 * @param[out] pSt   the engine's stats;  @param[out] pHashSeconds  hashing.
 */
genie_status vec_candidates(const genie_index *idx, uint32_t first_part, uint32_t n_parts, const vlsh *h,
                            const genie_vectors *queries, uint32_t radius, const genie_search_options *opt, uint32_t K,
                            genie_results **pRes, genie_search_stats *pSt, double *pHashSeconds);

#endif
