/*
 * Work units: what one thread block of a counting kernel scans.
 *
 * Every query item maps to one contiguous slice of the List Array (the
 * postings of the keywords in [lo, hi] lie next to each other).  Without
 * load balance a unit is one item's whole slice (Zhou et al. (GENIE) III-B: a block
 * per query item).  With load balance (III-B1) a unit is at most two
 * consecutive sublists of the item's lists, each at most the index's
 * sublist length, so no block scans more than 2 * L postings.  For the
 * tile layout (tile.cu) a unit is one list: iBegin is the list's index
 * (the keyword's position in the index) and nPosting its length, because
 * a tile block needs each list's own per-tile segment.
 *
 * Plain C so that host planning compiles without nvcc; the kernels read the
 * same struct.
 */
#ifndef GENIE_ENGINE_CUDA_WORK_PLAN_H
#define GENIE_ENGINE_CUDA_WORK_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* A unit of 16 bytes; uQueryWeight = (query within the batch) << 8 | weight. */
typedef struct cuda_unit {
    uint64_t iBegin;      /* first posting of the slice (PLAN_LISTS: the list's index) */
    uint32_t nPosting;    /* postings in the slice, >= 1 */
    uint32_t uQueryWeight;
} cuda_unit;

/* Longest slice one unit takes without load balance (keeps nPosting in 32 bits). */
#define PLAN_MAX_UNIT_POSTINGS (1u << 30)
/* Most queries one batch may hold (the query number has 24 bits in a unit). */
#define PLAN_MAX_BATCH_QUERIES (1u << 24)

/*
 * Keyword lookup for planning: the index's sorted keywords cut into
 * buckets by (keyword - min) >> shift, with aBucket[b] the first keyword
 * of bucket b or later.  lower_bound(key) is then a search inside one
 * bucket (about one keyword per bucket: at most as many buckets as
 * keywords, rounded up to a power of two) instead of a binary search over
 * all keywords, which took 60-200 ns per item (cache and branch misses on
 * indexes of 10^5-10^6 keywords) and was most of a CUDA search's time.
 * Built once per uploaded index; never changes an answer.
 */
typedef struct plan_keywords {
    const uint32_t *aKeyword; /* the index's keywords, ascending */
    uint64_t nKeyword;
    uint32_t *aBucket;        /* nBucket + 1 entries; NULL when nKeyword == 0 */
    uint64_t nBucket;
    uint32_t kwMin;
    unsigned shift;
} plan_keywords;

/** Build @p pKw for @p idx (a one-part index or a part's view).  @return GENIE_OK or GENIE_ENOMEM. */
genie_status plan_keywords_build(const genie_index *idx, plan_keywords *pKw);
void plan_keywords_free(plan_keywords *pKw);

/** Same as index_keyword_range(): lists [*pFirst, *pEnd) hold the keywords in [lo, hi]. */
void plan_keyword_range(const plan_keywords *pKw, uint32_t lo, uint32_t hi, size_t *pFirst, size_t *pEnd);

/* How a query's postings are cut into units. */
typedef enum plan_mode {
    PLAN_ITEMS = 0,    /* one unit per query item (its whole slice) */
    PLAN_SUBLISTS = 1, /* load balance: at most two sublists per unit */
    PLAN_LISTS = 2     /* one unit per non-empty list of an item */
} plan_mode;

/**
 * Write the units of query @p iQuery of @p q (global number) to @p aUnit,
 * tagged with batch-local number @p iLocal; with @p aUnit NULL only count.
 * Keywords are looked up through @p pKw (built for @p idx), or with
 * index_keyword_range() when it is NULL.
 * @param[out] pnPosting  postings the query scans (may be NULL).
 * @return the number of units.
 */
size_t plan_query_units(const genie_index *idx, const plan_keywords *pKw, const genie_queries *q, size_t iQuery,
                        plan_mode mode, uint32_t iLocal, cuda_unit *aUnit, uint64_t *pnPosting);

#endif
