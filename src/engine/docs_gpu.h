/*
 * The GPU engine of the docs index type, as the library hands it to the
 * CUDA module (engine/cuda/docs/docs_gpu.cu): plain data, so that the module
 * needs nothing of the docs front-end (src/transform/docs*.c), which
 * prepares the queries and finishes what the GPU could not.
 *
 * The method is Algorithm 1 of Wang, Yu, Stones, Ren, Wang, Liu and Ren,
 * "Efficient GPU-based Query Processing with Pruned List Caching in Search
 * Engines" (section 3.2), with their pruned list cache (3.3) and CPU
 * post-processing (3.4):
 *
 *   - the device holds the per-document arrays and a cache: for each list a
 *     prefix of aPrefix[list] postings (docIDs and term frequencies); a list
 *     with no cached prefix travels whole with the batch that needs it;
 *   - one block per query, one thread per document of the shortest list
 *     (round by round), lookups in the other lists by binary search, the
 *     block's top-k kept in device memory, early termination between rounds
 *     by the global score bound (docs/DOCS.md);
 *   - a query whose shortest list reaches past m = min over its pruned lists
 *     of their last cached docID, before it could stop, is handed back with
 *     the position to resume from (unless the bound stops the search right
 *     there): the caller finishes it on the CPU from the full lists,
 *     starting from the block's top-k (section 3.4), batch by batch while
 *     the device runs the next batch.
 *
 * Scores are computed as on the CPU (transform/docs.h) with the module
 * compiled without fused multiply-add, so a document's score is the same
 * bits on both, and answers equal exhaustive evaluation.
 */
#ifndef GENIE_ENGINE_DOCS_GPU_H
#define GENIE_ENGINE_DOCS_GPU_H

#include <stdint.h>

#include "genie/docs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The collection, host arrays valid for the call (the index's mapping). */
typedef struct engine_docs_data {
    uint64_t nDocs, nPostings, nLists;
    const uint64_t *aListOffset;  /* nLists + 1: list j is aPosting[off[j], off[j+1]) */
    const uint32_t *aPosting, *aTf;
    const uint32_t *aRecord, *aLength;
    const double *aPagerank, *aGs;
    double alpha, k1, b, maxPagerank, avgLength;
} engine_docs_data;

/*
 * One term of a query: list @p list, the query's weight w_t / W, the
 * list's length and its cached prefix, min(aPrefix[list], len) (len when
 * aPrefix is NULL; 0: the list travels with the batch).
 */
typedef struct engine_docs_term {
    uint32_t list;
    double weight;
    uint64_t len, cached;
} engine_docs_term;

/*
 * A query: its terms aTerm[first .. first + n), shortest list first; from
 * the cache: m, the smallest last cached docID over its pruned lists (those
 * with 0 < cached < len; UINT32_MAX: none), and next0, the first uncached
 * docID of its shortest list when that list is pruned.
 */
typedef struct engine_docs_query {
    uint32_t first, n;
    uint32_t m, next0;
} engine_docs_query;

/* What the GPU did with a query. */
typedef struct engine_docs_outcome {
    uint32_t nHit;       /* hits written (<= k) */
    uint32_t finished;   /* 1: the answer is final; 0: resume on the CPU */
    uint64_t resume;     /* unfinished: position in the shortest list to continue from */
    uint64_t read;       /* postings of the shortest list the GPU scored */
} engine_docs_outcome;

/*
 * The queries of a batch are done: entry i is query aQuery[i] (a request
 * index), with outcome aOutcome[i] and hits aHit[i * k .. i * k + nHit),
 * best first.  aHit is NULL for queries the GPU did not run (their lists
 * do not fit a batch: every outcome is {0, 0, 0, 0}).  The arrays are valid
 * during the call only; the device runs the next batch meanwhile.
 * @return GENIE_OK, or an error (its message set) that ends the search.
 */
typedef genie_status engine_docs_done_fn(void *ctx, const uint32_t *aQuery, const engine_docs_outcome *aOutcome,
                                const genie_docs_hit *aHit, uint32_t n);

/* Time spent, seconds, summed over a call's batches. */
typedef struct engine_docs_times {
    double setup;  /* device state made or checked, buffers */
    double batch;  /* host: batches built (queries' arrays, lists staged) */
    double h2d;    /* device: host-to-device copies */
    double kernel; /* device: the kernel (it writes the results to host memory) */
    double wait;   /* host: blocked until a batch's results were there */
    double done;   /* host: in xDone (post-processing, beside the next batch) */
} engine_docs_times;

typedef struct engine_docs_request {
    const engine_docs_data *pData;
    /* Cached prefix of each list (nLists entries, postings); NULL: every
     * list whole.  The resident state is rebuilt when this changes. */
    const uint64_t *aPrefix;
    uint64_t planId;      /* identifies aPrefix's contents for the resident state */
    uint64_t bufferBytes; /* S_b: the most bytes a batch may move to the device */
    uint32_t k;           /* 1..ENGINE_DOCS_GPU_MAX_K */
    int exhaustive;
    /* The documents (docIDs) that may be answered, the bitmap of
     * engine/filter.h; NULL = all.  Uploaded once per call; the kernel
     * scores no other document. */
    const uint64_t *aAllow;
    const engine_docs_query *aQuery;
    uint32_t nQuery;
    const engine_docs_term *aTerm;
    /* At most this many queries a batch (0: as S_b allows); smaller
     * batches let xDone overlap the device's next batch. */
    uint32_t batchQueries;
    engine_docs_done_fn *xDone; /* called once for every query, batch by batch */
    void *pDoneCtx;
    /* Filled: */
    uint64_t nBatch, bytesMoved;
    engine_docs_times times;
} engine_docs_request;

/* The largest k the kernel keeps in shared memory. */
#define ENGINE_DOCS_GPU_MAX_K 1024u
/* Postings per VFB block (section 3.3.1), and the kernel's block size B. */
#define ENGINE_DOCS_BLOCK 256u

/*
 * The contract of a backend's engine_docs_ops.xSearch (backend.h): run
 * @p req on the GPU.  @p ppResident: the device state (per-document
 * arrays and the cache), created on first use, replaced when planId or the
 * collection changes; freed with its xFree.  Calls on one slot
 * must be serialised.
 * Every query is handed to req->xDone once.  A query whose lists cannot
 * travel in one batch (or all of them, when the buffer cannot hold one
 * query's results) comes back unfinished at position 0 without hits, for
 * the CPU to answer whole.  Device and pinned host buffers are kept in the
 * resident state between calls (grown when a call needs more).
 * @return GENIE_OK, GENIE_EGPU (a CUDA call failed: the device cannot
 *         hold the per-document arrays and the cache), GENIE_ENOMEM, or
 *         what xDone returned.
 */

#ifdef __cplusplus
}
#endif

#endif
