/*
 * Match counting in cache-sized object blocks (the cpu backend's main path).
 *
 * A plain CPU-Idx (Zhou et al. (GENIE) VI-A2) increments one counter per posting in
 * an array over all n objects: for n in the millions every increment is a
 * cache miss, and the selection pass reads the whole array again.  Here
 * the objects are cut into blocks whose counters (CPU_BLOCK_BYTES: 32,768
 * 8-bit or 16,384 16-bit counters) stay in the core's L1 while the
 * postings that fall in the block are counted, as the GPU's tile layout
 * counts a tile in shared memory.  The lists need no table of their own:
 * postings of a list are sorted by object id, so each list keeps a cursor
 * that walks forward block by block.  After the block is counted, one SIMD
 * pass finds the few counters that can still enter the top k, offers
 * those to the heap and clears the block.  Blocks go in id order, so once the heap is full a counter must
 * beat the heap's smallest count (an equal count has a larger id and loses
 * the tie): the same answers as counting everything, in the same order.
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

#define CPU_BLOCK_BYTES 32768u /* a block's counters: a core's L1 data cache */
#define CPU_BLOCK_MAX_COUNT 65535u

/* One list of the query being counted: its postings not yet counted. */
typedef struct cpu_cursor {
    const uint32_t *p, *pEnd;
    uint32_t weight;
} cpu_cursor;

/* A thread's scratch for the blocked path; all zero before first use. */
typedef struct cpu_block_scratch {
    void *pCount;        /* CPU_BLOCK_BYTES of counters, zero between queries */
    cpu_cursor *aCursor; /* nCursorCap */
    size_t nCursorCap;
} cpu_block_scratch;

/**
 * Count query @p aItem (nItem items) on @p idx block by block and offer
 * every object counting at least @p threshold to @p heap (reset, capacity
 * k).  @p bound, the query's count bound (no object counts more), must be
 * at most CPU_BLOCK_MAX_COUNT; it picks 8-bit counters when it is at most
 * 255.
 * @return GENIE_OK or GENIE_ENOMEM (scratch could not grow; no message set:
 *         the caller reports it once).
 */
genie_status cpu_block_count(const genie_index *idx, const genie_item *aItem, size_t nItem, uint32_t threshold,
                             uint32_t bound, cpu_block_scratch *s, select_heap *heap);

/** Free the scratch's buffers. */
void cpu_block_scratch_free(cpu_block_scratch *s);

#endif
