/*
 * The List Array cut into tiles of object ids, host side: what the CUDA
 * backend's tile layout (src/engine/cuda/count/tile.cu) derives from an index
 * when it uploads it.  Plain C, compiled into the library (for the tests)
 * and into the CUDA module (which uses it).
 *
 * The tile layout cuts the object ids into tiles of TILE_OBJECTS.
 * Postings are sorted by id within a list, so a list splits into one
 * segment per tile.  Derived here:
 *
 *   - rows: for every list longer than TILE_ROW_MIN_PER_TILE postings per
 *     tile, the start of each tile's segment (relative to the list start,
 *     nTile + 1 entries: a "row"), so a block finds its segment with two
 *     loads.  The rows take at most 4 / TILE_ROW_MIN_PER_TILE bytes per
 *     posting.
 *   - tile-local ids: every posting's id within its tile, id mod
 *     TILE_OBJECTS (15 bits), in 16 bits: the counting kernel reads these
 *     instead of the 32-bit ids, half the bytes.  A segment's tile is
 *     known to the block that reads it, so nothing is lost to it.
 *   - short postings: the lists without a row are found by binary search
 *     on their ids, which tile-local ids cannot serve (they restart at 0 in
 *     every tile); their 32-bit ids are kept, list after list, with the
 *     start of each such list.  With a single tile there is nothing to
 *     search and this array is empty.
 *
 * The file keeps 32-bit ids (docs/FORMAT.md says why): these arrays live
 * on the device only.
 */
#ifndef GENIE_ENGINE_TILE_LISTS_H
#define GENIE_ENGINE_TILE_LISTS_H

#include <stdint.h>

#include "index/index.h"

#define TILE_LOG2 15u
#define TILE_OBJECTS (1u << TILE_LOG2)
#define TILE_ROW_MIN_PER_TILE 2u
#define TILE_NO_ROW 0xffffffffu

#ifdef __cplusplus
extern "C" {
#endif

/** Tiles of @p idx's object ids: ceil(n_objects / TILE_OBJECTS), at least 1. */
uint32_t tile_count(const genie_index *idx);
/**
 * Which lists of @p idx get a tile row: aRowOf[l] (n_keywords entries; may
 * be NULL to count only) is the row of list l, or TILE_NO_ROW.
 * @return the number of rows.
 */
uint64_t tile_row_of(const genie_index *idx, uint32_t nTile, uint32_t *aRowOf);
/** Fill the rows (nTile + 1 words each) that aRowOf names; one pass over those lists. */
void tile_rows_fill(const genie_index *idx, uint32_t nTile, const uint32_t *aRowOf, uint32_t *aOff);

/**
 * aLocal[i] = aPosting[i] mod TILE_OBJECTS for i < n, on up to @p nThread
 * threads (0: all cores; small arrays take one).
 */
void tile_local_ids(const uint32_t *aPosting, uint64_t n, unsigned nThread, uint16_t *aLocal);

/**
 * The postings of the lists of @p idx without a row (aRowOf[l] ==
 * TILE_NO_ROW), list after list into @p aShort (may be NULL to count
 * only), and into @p aShortOff[l] (n_keywords entries, may be NULL) where
 * list l starts in aShort (0 for lists with a row).  With nTile == 1 no
 * list is searched: nothing is copied, aShortOff is all 0.
 * @return the number of short postings.
 */
uint64_t tile_short_postings(const genie_index *idx, uint32_t nTile, const uint32_t *aRowOf, uint32_t *aShort,
                             uint64_t *aShortOff);

#ifdef __cplusplus
}
#endif

#endif
