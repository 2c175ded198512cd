/*
 * Searching an index of several parts (parts.c), for genie_search().
 */
#ifndef GENIE_ENGINE_PARTS_H
#define GENIE_ENGINE_PARTS_H

#include "engine/devices.h"

/**
 * Answer every query of @p q on parts [@p iFirst, @p iEnd) of the
 * multi-part index @p idx with backend @p be on the devices @p devs (one,
 * replicas or shards): each part's view, chunk by chunk (@p chunk queries
 * at a time), the per-part top-k merged into @p r with global object ids
 * (r's aEnd is allocated for every query; aHit is grown).  @p k is already
 * clamped to the range's objects.  @p aAllow: the objects that may be
 * answered (engine/filter.h, global ids; NULL = all); a part with none
 * allowed is skipped.  @p pPlanned (NULL: none) goes with every request
 * (engine_request.pPlanned).
 * Adds its times, and whether parts streamed, to @p stats.
 */
genie_status engine_search_parts(const genie_index *idx, uint32_t iFirst, uint32_t iEnd, const genie_queries *q,
                                 const genie_search_options *opt, const uint64_t *aAllow, engine_signal *pPlanned,
                                 const engine_backend *be, const engine_devices *devs, uint32_t k, size_t chunk,
                                 genie_results *r, genie_search_stats *stats);

#endif
