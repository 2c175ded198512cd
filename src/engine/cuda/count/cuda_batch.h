/*
 * Batching, shared by the c-PQ and the GEN-SPQ methods.
 *
 * cuda_run_batches() answers one engine_request on the GPU:
 *   1. plans batches: each query needs method->query_bytes() of method
 *      scratch plus its work units, its k output hits and one
 *      cuda_query_info; consecutive queries join a batch while the total
 *      stays within the memory budget (--gpu-memory, or most of the free);
 *   2. grows one workspace to the largest batch and reuses it, also across
 *      calls (cuda_index.pWs: kept until the index is closed);
 *   3. plans every query's work units once per request, on several
 *      threads (keyword lookups through the index's bucket table,
 *      work_plan.h), sets the request's pPlanned signal (engine.h),
 *      then waits for a streamed part's upload (cuda_index.pfnReady); per batch: copies
 *      the batch's units into pinned staging, uploads them, zeroes the
 *      infos (and the method scratch when the method asks), calls
 *      method->run(), copies hits and infos back (pinned, asynchronous on
 *      the cached stream, one synchronisation per batch);
 *   4. queries whose info says "overflow" (the c-PQ hash table filled up)
 *      are run again, with a larger table (shift + 1), until none remains.
 * A request with a bitmap of allowed objects (engine_request.aAllow) has
 * it uploaded once, for all its batches (cuda_batch.d_aAllow); every
 * method consults it in its counting kernel.
 * Methods write, per batch query, the hits best first except that the first
 * nAbove hits may be unsorted when nAbove > TOPK_SORT_MAX (the driver then
 * sorts them on the host; counts above the k-th count come first, ties at
 * the k-th count follow in id order).
 */
#ifndef GENIE_ENGINE_CUDA_CUDA_BATCH_H
#define GENIE_ENGINE_CUDA_CUDA_BATCH_H

#include "engine/cuda/count/device_index.h"

/* Per batch query; zeroed before method->run(). */
typedef struct cuda_query_info {
    uint32_t atMinus1; /* c-PQ: AuditThreshold - 1 */
    uint32_t overflow; /* c-PQ: the hash table overflowed; rerun */
    uint32_t nAbove;   /* hits with a count above the k-th count */
    uint32_t nHit;     /* hits written */
} cuda_query_info;

typedef struct cuda_batch {
    const engine_request *req;
    const uint32_t *aQuery;   /* chunk-local query numbers, nQuery of them */
    const uint8_t *aShift;    /* per chunk query: hash-table growth steps */
    uint32_t nQuery;
    const uint32_t *d_aPosting; /* the 32-bit ids; NULL unless the method is wide or the index a streamed part */
    /* The request's bitmap of allowed objects (engine/filter.h) read as 32-bit words: bit o % 32 of word
     * o / 32, at least nTile * TILE_OBJECTS bits, zero past the view's objects; NULL = all allowed. */
    const uint32_t *d_aAllow;
    const cuda_unit *d_aUnit; /* units of the batch, query tag = batch position */
    const cuda_unit *h_aUnit; /* their host copy, grouped by query in batch order */
    uint32_t nUnit;
    genie_hit *d_aHit;        /* nQuery * k */
    cuda_query_info *d_aInfo; /* nQuery */
    void *d_scratch;          /* the method's scratch (zeroed when zeroScratch) */
    uint32_t *h_aAux;         /* pinned host scratch of 2 * nQuery + 1 words, valid until the batch's sync */
    cudaStream_t stream;
    cudaEvent_t evCounted;    /* when timing phases: record after the counting kernel (cuda_batch_counted) */
} cuda_batch;

/* A method calls this after launching its counting kernel (phase timing only). */
static inline void cuda_batch_counted(const cuda_batch *b)
{
    if (b->evCounted)
        cudaEventRecord(b->evCounted, b->stream);
}

typedef struct cuda_method {
    const char *zName;
    int listUnits;   /* units are whole lists (PLAN_LISTS), whatever --load-balance says */
    int zeroScratch; /* the scratch must be zero before run() */
    int wide;        /* reads the 32-bit ids (cuda_batch.d_aPosting): the driver has them uploaded */
    /** Scratch bytes for chunk query @p i at growth @p shift; UINT64_MAX if it can never run. */
    uint64_t (*query_bytes)(const engine_request *req, size_t i, unsigned shift);
    /** Launch the method's kernels for @p b (asynchronously on b->stream). */
    genie_status (*run)(const cuda_batch *b);
} cuda_method;

/* The device sorts at most this many hits above the k-th count per query. */
#define TOPK_SORT_MAX 4096u

/* Alignment of every carved region of the workspace. */
#define CUDA_ALIGN 256u

static inline uint64_t cuda_align(uint64_t n)
{
    return (n + CUDA_ALIGN - 1) & ~(uint64_t)(CUDA_ALIGN - 1);
}

genie_status cuda_run_batches(const engine_request *req, const cuda_method *method, genie_hit *aHit,
                              uint32_t *aN);

#endif
