/*
 * Match counting in cache-sized object blocks (the cpu backend's main path).
 *
 * A plain CPU-Idx (Zhou et al. (GENIE) VI-A2) increments one counter per posting in
 * an array over all n objects: for n in the millions every increment is a
 * cache miss, and the selection pass reads the whole array again.  Here
 * the objects are cut into blocks whose counters (CPU_BLOCK_BYTES: 16,384
 * 8-bit or 8,192 16-bit counters) stay in the core's L1 while the
 * postings that fall in the block are counted, as the GPU's tile layout
 * counts a tile in shared memory.  The lists need no table of their own:
 * postings of a list are sorted by object id, so each list keeps a cursor
 * that walks forward block by block.  After the block is counted, one SIMD
 * pass finds the few counters that can still enter the top k, offers
 * those to the heap and clears the block.  Blocks go in id order, so once the heap is full a counter must
 * beat the heap's smallest count (an equal count has a larger id and loses
 * the tie): the same answers as counting everything, in the same order.
 *
 * Queries are counted in batches, block-major: every query of a batch
 * counts super-block b (CPU_BLOCK_BYTES objects) before any counts b + 1,
 * so the postings of b, which the batch's queries share, are read from
 * memory once and then from the cache.  Long lists that many queries share
 * are counted from bitmaps with SIMD (cpu_dense below).
 *
 * 8-bit counters hold counts when the query's count bound is at most 255,
 * 16-bit ones when it is at most CPU_BLOCK_MAX_COUNT (engine_count_bounds);
 * other queries, and queries
 * with too few postings to pay for passes over every block, take the
 * touched-list path of cpu_engine.c.
 */
#ifndef GENIE_ENGINE_CPU_BLOCK_H
#define GENIE_ENGINE_CPU_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "engine/select.h"
#include "genie/genie.h"

#define CPU_BLOCK_BYTES 16384u /* a block's counters: half a core's L1 data cache, the rest for the lists */
#define CPU_BLOCK_MAX_COUNT 65535u

/* One list of the query being counted: its postings not yet counted, or its bitmap. */
typedef struct cpu_cursor {
    const uint32_t *p, *pEnd;
    const uint64_t *pBits; /* the list as a bitmap over all objects (cpu_dense), or NULL */
    uint32_t weight;
} cpu_cursor;

/*
 * Long lists as bitmaps, made once per request for the lists that many of
 * its queries share.  A list holding at least one object in
 * CPU_BITS_RATIO is cheaper to add to a block's counters 32 (8-bit) or
 * 16 (16-bit) objects at a time from its bitmap, with AVX2, than one
 * posting at a time; its bitmap (n/8 bytes) is also smaller than its
 * postings (4 bytes each).  Without AVX2 no list gets a bitmap.
 */
#define CPU_BITS_RATIO 24
#define CPU_DENSE_MIN_USES 4 /* queries of the request that must share a list to pay for its bitmap */

typedef struct cpu_dense {
    size_t nList;
    uint32_t *aList; /* sorted list numbers that have a bitmap */
    uint64_t *aBits; /* nList bitmaps of nWord words: bit o % 64 of word o / 64 is object o */
    size_t nWord;
} cpu_dense;

/** Lists at least this long may get a bitmap; 0 when this CPU cannot use bitmaps. */
uint64_t cpu_dense_min_length(const genie_index *idx);

/**
 * Make bitmaps for the @p nList lists of @p aList (list numbers, ascending,
 * each at least cpu_dense_min_length() long), filled on up to @p nThread
 * threads.
 * @return GENIE_OK or GENIE_ENOMEM (no message set).
 */
genie_status cpu_dense_build(const genie_index *idx, const uint32_t *aList, size_t nList, unsigned nThread,
                             cpu_dense *d);

void cpu_dense_free(cpu_dense *d);

/* A thread's scratch for the blocked path; all zero before first use. */
typedef struct cpu_block_scratch {
    void *pCount;        /* CPU_BLOCK_BYTES of counters, zero between queries */
    cpu_cursor *aCursor; /* nCursorCap */
    size_t nCursorCap;
    const int *cancel;   /* the request's cancel flag (engine_request.cancel), or NULL; set by the caller */
} cpu_block_scratch;

/* One query of a batch: its items, minimum count, count bound and heap. */
typedef struct cpu_block_query {
    const genie_item *aItem;
    size_t nItem;
    uint32_t threshold, bound;
    select_heap *heap;
    size_t iCursor, nBits, nCursor; /* set by cpu_block_count: its lists in the scratch's cursors, bitmaps first */
} cpu_block_query;

/**
 * Count the @p nQ queries of @p aQ on @p idx block by block, all queries
 * over one block before the next block, and offer every object counting
 * at least a query's threshold to its heap (reset, capacity k).  A query's
 * bound (no object counts more) must be at most CPU_BLOCK_MAX_COUNT; it
 * picks 8-bit counters when it is at most 255.  Lists with a bitmap in
 * @p d (may be NULL) are counted from it.  Only objects that @p aAllow
 * allows (engine/filter.h; NULL = all) are offered.  Each query's heap
 * ends as if the query had been counted alone.  The scratch's cancel flag is
 * polled once per super-block of every query's objects.
 * @return GENIE_OK, GENIE_ENOMEM (scratch could not grow) or GENIE_ECANCELED
 *         (the heaps are then incomplete); no message set: the caller
 *         reports it once.
 */
genie_status cpu_block_count(const genie_index *idx, const cpu_dense *d, const uint64_t *aAllow, cpu_block_query *aQ,
                             size_t nQ, cpu_block_scratch *s);

/** Free the scratch's buffers. */
void cpu_block_scratch_free(cpu_block_scratch *s);

#endif
