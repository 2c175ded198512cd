/*
 * Exact top-k on the host, shared by the CPU backends.
 *
 * A candidate is packed into one 64-bit key, count in the high word and
 * the complement of the object id in the low word, so that a larger key
 * is a better hit: count descending, then smaller id first.  Selection keeps
 * a min-heap of the k best keys seen (O(n log k)).
 */
#ifndef GENIE_ENGINE_SELECT_H
#define GENIE_ENGINE_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

static inline uint64_t select_key(uint32_t count, uint32_t object)
{
    return ((uint64_t)count << 32) | (uint64_t)(UINT32_MAX - object);
}

typedef struct select_heap {
    uint64_t *aKey; /* capacity k */
    size_t n, k;
} select_heap;

static inline void select_reset(select_heap *h, uint64_t *aKey, size_t k)
{
    h->aKey = aKey;
    h->n = 0;
    h->k = k;
}

/** Offer one candidate. */
void select_push(select_heap *h, uint64_t key);
/** Write the kept candidates to @p aHit, best first; returns their number. */
size_t select_finish(select_heap *h, genie_hit *aHit);

#endif
