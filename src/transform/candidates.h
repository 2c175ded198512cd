/*
 * What the front-ends that verify candidates share (sets.c, sequences.c):
 * the stored record of an object, and a bounded sorted list of the best
 * hits so far.  Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_CANDIDATES_H
#define GENIE_TRANSFORM_CANDIDATES_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

/**
 * The record stored with object @p o: its bytes in [*pz, *pz + *pn), not
 * NUL-terminated, valid while @p idx is open.  The index must hold
 * records (idx->aRecordOffset non-NULL) and @p o must be one of its
 * objects (a live index's added ones too, index/live.h).
 */
void cand_record(const genie_index *idx, uint32_t o, const char **pz, size_t *pn);

/** Non-zero when hit @p a ranks strictly before hit @p b. */
typedef int (*cand_better_fn)(const void *a, const void *b);

/**
 * Offer @p pHit (@p size bytes) to the list @p aHit of the *pN <= @p k best
 * hits so far, kept sorted best first under @p better: it is inserted at its
 * place when the list has room or it beats the last one (which then drops
 * out).  Hits that tie under @p better keep their arrival order.  @p k >= 1.
 */
void cand_topk_insert(void *aHit, uint32_t *pN, uint32_t k, size_t size, const void *pHit, cand_better_fn better);

#endif
