/*
 * The broker's exact merge (merge.c): the best k hits of several sorted
 * lists, in the order the caller gives (an index type's whose key alone
 * does not order its hits: sets), by default smaller key first, then
 * smaller object id (wire.h: the key is
 * the front-end's order: count descending for keywords, as genie_search()
 * merges the parts of one index, src/engine/parts.c; distance ascending
 * for vectors and sequences).  Every list is one shard's top-k of the same
 * query, best first, with global ids; the shards hold disjoint objects,
 * so the global top-k is the best k of their union (an object in the
 * global top-k is in its own shard's top-k: every object that beats it in
 * its shard beats it globally).
 */
#ifndef GENIE_MPI_MERGE_H
#define GENIE_MPI_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* Scratch space for merging up to nCap lists (merge_init sizes it). */
typedef struct merge_heap {
    size_t nCap;
    uint32_t *aHeap; /* list numbers, a binary heap by their current head */
    size_t *aPos;    /* per list: its next hit */
} merge_heap;

/** @return 0, or -1 when out of memory. */
int merge_init(merge_heap *h, size_t nList);
void merge_free(merge_heap *h);

/* Whether hit @p a comes before hit @p b in a merge (@p pCtx the caller's). */
typedef int (*merge_before_fn)(const wire_hit *a, const wire_hit *b, const void *pCtx);

/**
 * Merge @p nList lists (aList[i] has aN[i] hits, best first by @p xBefore,
 * NULL: the key order) into the best @p k, written to @p aOut (room for
 * k).  O(k log nList).
 * @return the hits written (at most k, fewer when the lists hold fewer).
 */
size_t merge_topk(merge_heap *h, const wire_hit *const *aList, const uint32_t *aN, size_t nList, uint32_t k,
                  merge_before_fn xBefore, const void *pCtx, wire_hit *aOut);

#endif
