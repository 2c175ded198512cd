/*
 * Batched distances of (query, object) pairs of dense vectors on a backend
 * (private interface): what the metric front-end's batched List of
 * Clusters search (transform/metric_batch.c) hands to a GPU.
 *
 * Contract of engine_pairs_fn (backend.h): out[i] is
 * genie_vector_distance(metric, queries + aPair[2i] * dim,
 * base + aPair[2i+1] * dim, dim), bit for bit: the same float operations
 * in the same order, none fused, so that answers ranked by these distances
 * are those of the CPU.  metric is l2, l1 or cosine.  The resident slot
 * keeps the base on the device across calls: reused when it holds the same
 * base (host address, count, dimension), replaced otherwise; the caller
 * serialises calls on one slot.
 */
#ifndef GENIE_ENGINE_PAIRS_H
#define GENIE_ENGINE_PAIRS_H

#include "engine/backend.h"
#include "index/index.h"

/**
 * @p be's xPairs with @p idx's resident slot (under the index's device
 * lock; the slot is freed by genie_index_close()).
 * @return GENIE_OK, GENIE_ENOTSUP (the backend has no xPairs), its errors.
 */
genie_status engine_pair_distances(const engine_backend *be, const genie_index *idx, const float *base,
                                   uint64_t nBase, uint32_t dim, genie_metric metric, const float *queries,
                                   uint64_t nQuery, const uint32_t *aPair, uint64_t nPair, float *out);

#endif
