/*
 * The engine's private interface: the query store, the results, and the
 * table of backends (as Redis's ae_*.c sit behind one table).
 *
 * genie_search() (engine.c) validates the queries against the index,
 * computes each query's count bound, cuts the batch into chunks whose
 * output fits a memory cap, and hands each chunk to a backend as an
 * engine_request.  A backend writes, for query i of the chunk, at most k
 * hits to aHit[i * k ...], best first, and their number to aN[i].  Hits are
 * ordered by count descending, then object id ascending; objects below the
 * query's minimum count (at least 1) are left out.
 */
#ifndef GENIE_ENGINE_ENGINE_H
#define GENIE_ENGINE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

struct genie_queries {
    genie_item *aItem;
    size_t nItem, nItemCap;
    size_t *aItemEnd; /* end of query i in aItem */
    uint32_t *aMinCount;
    size_t nQuery, nQueryCap;
};

struct genie_results {
    size_t nQuery;
    uint64_t *aEnd; /* end of query i's hits in aHit */
    genie_hit *aHit;
};

typedef struct engine_request {
    const genie_index *idx;
    const genie_queries *q;
    size_t first, n;             /* queries first .. first+n-1 of q */
    uint32_t k;                  /* already clamped to 1..n_objects */
    const uint32_t *aCountBound; /* n: no object can count more than this */
    const genie_search_options *opt;
} engine_request;

typedef genie_status (*engine_search_fn)(const engine_request *req, genie_hit *aHit, uint32_t *aN);

/** Items of query @p i. */
static inline const genie_item *engine_query_items(const genie_queries *q, size_t i, size_t *n)
{
    size_t b = i ? q->aItemEnd[i - 1] : 0;
    *n = q->aItemEnd[i] - b;
    /* No items at all leaves aItem NULL, and NULL + 0 is undefined in C. */
    return *n ? q->aItem + b : NULL;
}

/** Minimum count that query @p i returns (at least 1). */
static inline uint32_t engine_query_threshold(const genie_queries *q, size_t i)
{
    return q->aMinCount[i] ? q->aMinCount[i] : 1;
}

/** Seconds on a monotonic clock. */
double engine_now(void);

/**
 * The count bound of queries first .. first+n-1 of @p q on @p idx (a
 * one-part index or a part's view) into aBound[0 .. n).
 * @return GENIE_OK, GENIE_ERANGE when a count could exceed 2^32-1.
 */
genie_status engine_count_bounds(const genie_index *idx, const genie_queries *q, size_t first, size_t n,
                                 uint32_t *aBound);

/**
 * Search an index of several parts (parts.c): @p fn on each part's view,
 * chunk by chunk, the per-part top-k merged into @p r (whose aEnd is
 * allocated for every query; aHit is grown).  Adds its times to @p stats.
 */
genie_status engine_search_parts(const genie_index *idx, const genie_queries *q, const genie_search_options *opt,
                                 engine_search_fn fn, uint32_t k, size_t chunk, genie_results *r,
                                 genie_search_stats *stats);

/* The backends. */
genie_status engine_cpu_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
genie_status engine_cpu_idx_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
genie_status engine_cuda_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
genie_status engine_cuda_spq_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
genie_status engine_cuda_cpq_paper_search(const engine_request *req, genie_hit *aHit, uint32_t *aN);
/** Non-zero when the CUDA backend is built and a device is usable. */
int engine_cuda_usable(void);

/*
 * Parts streamed through the GPU (cuda/part_stream.cu), for parts.c, which
 * holds the multi-part index's deviceLock around all of it.  The state
 * lives in that index's device slot until it is closed.
 */
typedef struct engine_stream engine_stream;

/**
 * Decide how the parts of @p idx meet the GPU under @p opt's budget.  When
 * they fit in half of it together, *ppS is NULL and each part keeps its own
 * device copy (the resident case).  Otherwise the views' resident copies
 * are freed and *ppS streams the parts through two device buffers (one when
 * only one part fits in three quarters of the budget); *pOverlap says the
 * next part may be uploaded while the current one is matched (two buffers
 * and not opt->serial_upload), *pHeld the device bytes the buffers take.
 * @return GENIE_OK, GENIE_EGPU (no device, a part larger than the budget
 *         allows, out of GPU memory), GENIE_ENOMEM.
 */
genie_status engine_cuda_stream_begin(const genie_index *idx, const genie_search_options *opt, engine_stream **ppS,
                                      int *pOverlap, uint64_t *pHeld);
/** Start uploading part @p view into the next buffer: on its own thread when overlapping, else now. */
genie_status engine_cuda_stream_start(engine_stream *s, genie_index *view);
/**
 * Make the started part @p view's buffer its device copy until
 * engine_cuda_stream_done(); a backend that uses it waits for the upload
 * after planning its queries (cuda_index.pfnReady).
 */
genie_status engine_cuda_stream_ready(engine_stream *s, genie_index *view);
/**
 * @p view's buffer is free again (its device copy is gone from the view).
 * *pUpload: the seconds the upload took; *pWait: those the search waited
 * for it.  @return the upload's failure, if it failed.
 */
genie_status engine_cuda_stream_done(engine_stream *s, genie_index *view, double *pUpload, double *pWait);
/** After a search, also a failed one: wait for uploads still running, take every device copy back. */
void engine_cuda_stream_end(engine_stream *s);

#endif
