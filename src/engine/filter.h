/*
 * The object bitmap of one search: which objects may take a place in its
 * answers (an allow-list).  One mechanism serves filters and deletes: a
 * caller's genie_filter and, on a live index, the bitmap of the objects
 * not deleted (index/live.h) are ANDed into one effective bitmap per
 * search, which every search path consults where an object would enter
 * the answers, so a search over a filtered index answers exactly as the
 * same search over an index of the allowed objects alone (ids mapped).
 *
 * The layout is the one every consumer reads, host and device alike
 * (util/bitmap.h): bit o % 64 of 64-bit word o / 64 is object o
 * (little-endian, so the same bytes read as 32-bit words put object o at
 * bit o % 32 of word o / 32, as the CUDA kernels read them); 1 = allowed.  A genie_filter
 * keeps the bits past its last object 0; a slice (filter_slice) may have
 * bits set past its last object, so a consumer tests objects below its
 * count only.  A NULL bitmap allows every object.
 *
 * Where it is consulted: the CPU backends before an object is offered to
 * a top-k heap (cpu/cpu_engine.c, cpu/cpu_block.c); the CUDA backends'
 * counting kernels (tile.cu masks a tile's counters before its
 * selection; cpq.cu and spq.cu count allowed objects only); the exact
 * vector search (exact.c, exact_blas.c, cuda/vectors/exact_select.cu); the
 * front-ends' own full scans (sets and sequences exact modes, the
 * sequences fallback, docs, metric).  Candidate searches (LSH, MinHash,
 * n-grams) get their candidates from genie_search, which applies it.
 */
#ifndef GENIE_ENGINE_FILTER_H
#define GENIE_ENGINE_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "util/bitmap.h"

struct genie_filter {
    uint64_t nObject; /* objects the bitmap covers: ids 0 .. nObject-1 */
    uint64_t *aBits;  /* (nObject + 63) / 64 words, never NULL */
};

/** Words of a bitmap over @p n objects. */
static inline uint64_t filter_words(uint64_t n)
{
    return util_bitmap_words(n);
}

/** Non-zero when @p aBits (NULL: every object) allows object @p o. */
static inline int filter_allows(const uint64_t *aBits, uint64_t o)
{
    return !aBits || util_bitmap_get(aBits, o);
}

/** Allowed objects among [first, first + n) of @p aBits (n when NULL). */
uint64_t filter_count_range(const uint64_t *aBits, uint64_t first, uint64_t n);

/**
 * Bits [first, first + n) of @p aBits as a bitmap of its own (bit 0 =
 * object first), for a part of an index or the delta of a live index:
 * *pOut is NULL when every one of them is allowed (or @p aBits is NULL),
 * a pointer into @p aBits when first is a multiple of 64, else a copy in
 * *pOwned (free it; NULL otherwise).
 * @return GENIE_OK, GENIE_ENOMEM.
 */
genie_status filter_slice(const uint64_t *aBits, uint64_t first, uint64_t n, const uint64_t **pOut,
                          uint64_t **pOwned);

/**
 * The effective bitmap of a search of @p idx (genie_index_get_info's
 * n_objects bits): @p filter (may be NULL) AND the objects not deleted
 * from a live index.  *pOut is NULL when every object is allowed; *pOwned
 * is what to free (NULL when *pOut points into @p filter).
 * @return GENIE_OK, GENIE_EINVAL (a filter of another object count: the
 *         message says both), GENIE_ENOMEM.
 */
genie_status filter_effective(const genie_index *idx, const genie_filter *filter, const uint64_t **pOut,
                              uint64_t **pOwned);

#endif
