/*
 * Edit distances in batches on a backend that computes them (a GPU, through
 * engine/edit.h), for the front-ends that compare strings: the sequences
 * front-end's full scans (exact mode and --certify's fallback) and the
 * metric front-end's edit-distance search.  What the backend leaves undone
 * (queries longer than it handles) is computed here on the CPU with
 * seq_pattern_distance, so the answers are the CPU's in every case.
 * Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_EDIT_BATCH_H
#define GENIE_TRANSFORM_EDIT_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "genie/sequences.h"
#include "engine/edit.h"

/**
 * Copy the strings az[aWhich[i]] (or az[i] when @p aWhich is NULL), i <
 * @p n, into one buffer: *pOut views *paByte and *paStart, which the
 * caller frees.
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status edit_strings_pack(const char *const *az, const size_t *an, const size_t *aWhich, size_t n,
                               engine_strings *pOut, char **paByte, uint64_t **paStart);

/**
 * The full scan of the sequences front-end on @p be (which has xEdit): for
 * each query azQ[aWhich[i]], i < @p nQuery, the k best (distance, object
 * id) over the strings @p first .. first + n - 1 of @p idx (all of them,
 * or the range of genie_seq_search_parts) that @p aAllow allows (engine/filter.h,
 * the index's ids; NULL = all) whose distance is at most aBound[i], into
 * aHit + aWhich[i] * k and aN[aWhich[i]] (sorted, as the CPU scan gives).
 * Queries are ranked on @p nThread threads; *pVerified grows by the
 * distances computed.
 * @return GENIE_OK, the backend's errors, GENIE_ENOMEM.
 */
genie_status seq_scan_gpu(const engine_backend *be, const genie_index *idx, uint64_t first, uint64_t n,
                          const uint64_t *aAllow, const char *const *azQ, const size_t *anQ, const size_t *aWhich,
                          size_t nQuery, const uint32_t *aBound, uint32_t k, genie_seq_hit *aHit, uint32_t *aN,
                          unsigned nThread, uint64_t *pVerified);

/**
 * The exact edit distances of @p nPair pairs on @p be: aPair[2i] a string
 * of @p queries, aPair[2i+1] a record of @p idx (the base), into out[i].
 * Pairs of one query should be consecutive (they become one run).
 * @return GENIE_OK, the backend's errors, GENIE_ENOMEM.
 */
genie_status edit_pairs(const engine_backend *be, const genie_index *idx, const engine_strings *queries,
                        const uint32_t *aPair, uint64_t nPair, uint32_t *out);

#endif
