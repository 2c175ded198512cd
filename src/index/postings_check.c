/*
 * Postings validation at open time (see postings_check.h), the largest
 * cost of opening an index after the checksums.
 *
 * The lists are cut into chunks of about equal postings, which threads
 * take from a shared counter.  Each thread checks the order of its lists
 * and counts every object's postings in an array of its own with 16-bit
 * counters (half the cache footprint of 32-bit ones; the threads' arrays
 * are summed object by object at the end, again on all threads).  When an
 * object reaches 65,535 postings in one thread's array, the counts are
 * redone on one thread with 32-bit counters.  The number of threads is
 * bounded so that their arrays stay within POSTINGS_SCRATCH bytes.
 */
#include "index/postings_check.h"

#include <stdlib.h>

#include "util/threads.h"

#define POSTINGS_CHUNKS_PER_THREAD 8
#define POSTINGS_SCRATCH (256ull << 20)
#define POSTINGS_PARALLEL_MIN (1u << 20) /* fewer postings: one thread */
#define POSTINGS_MERGE_SLICE 65536u

typedef struct check_job {
    const uint64_t *aListOffset;
    const uint32_t *aPosting;
    uint64_t nObjects;
    uint64_t *aChunkStart; /* nChunk + 1 list indexes */
    size_t nChunk;
    uint16_t **aaLen;      /* per thread: nObjects counters */
    uint64_t *aLongest;    /* per thread */
    uint32_t *aMaxLen;     /* per thread (merge) */
    size_t next;           /* shared: next chunk */
    uint64_t nextObject;   /* shared: next slice of objects to merge */
    int bad, wide;         /* shared flags */
    unsigned nThread;
} check_job;

static void check_worker(void *ctx, unsigned t)
{
    check_job *job = ctx;
    uint16_t *aLen = job->aaLen[t];
    uint64_t longest = 0;
    for (;;) {
        size_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (c >= job->nChunk || __atomic_load_n(&job->bad, __ATOMIC_RELAXED))
            break;
        for (uint64_t j = job->aChunkStart[c]; j < job->aChunkStart[c + 1]; j++) {
            uint64_t b = job->aListOffset[j], e = job->aListOffset[j + 1];
            if (e - b > longest)
                longest = e - b;
            int64_t prev = -1;
            int wide = 0;
            for (uint64_t i = b; i < e; i++) {
                uint32_t o = job->aPosting[i];
                if (o >= job->nObjects || (int64_t)o <= prev) {
                    __atomic_store_n(&job->bad, 1, __ATOMIC_RELAXED);
                    return;
                }
                prev = o;
                wide |= ++aLen[o] == UINT16_MAX;
            }
            if (wide)
                __atomic_store_n(&job->wide, 1, __ATOMIC_RELAXED);
        }
    }
    job->aLongest[t] = longest;
}

/* The most postings of one object: the threads' counters summed, slices of objects taken in turn. */
static void merge_worker(void *ctx, unsigned t)
{
    check_job *job = ctx;
    uint32_t best = 0;
    for (;;) {
        uint64_t o0 = __atomic_fetch_add(&job->nextObject, POSTINGS_MERGE_SLICE, __ATOMIC_RELAXED);
        if (o0 >= job->nObjects)
            break;
        uint64_t o1 = job->nObjects - o0 < POSTINGS_MERGE_SLICE ? job->nObjects : o0 + POSTINGS_MERGE_SLICE;
        for (uint64_t o = o0; o < o1; o++) {
            uint32_t sum = 0;
            for (unsigned u = 0; u < job->nThread; u++)
                sum += job->aaLen[u][o];
            best = sum > best ? sum : best;
        }
    }
    job->aMaxLen[t] = best;
}

/* One thread, 32-bit counters: the most postings of one object (order already checked). */
static postings_verdict max_len_wide(const uint32_t *aPosting, uint64_t nPostings, uint64_t nObjects,
                                     uint32_t *pMaxLen)
{
    uint32_t *aLen = calloc(nObjects ? nObjects : 1, sizeof *aLen);
    if (!aLen)
        return POSTINGS_NO_MEMORY;
    uint32_t best = 0;
    for (uint64_t i = 0; i < nPostings; i++)
        if (++aLen[aPosting[i]] > best)
            best = aLen[aPosting[i]];
    free(aLen);
    *pMaxLen = best;
    return POSTINGS_OK;
}

postings_verdict postings_check(const uint64_t *aListOffset, const uint32_t *aPosting, uint64_t nKeywords,
                                uint64_t nObjects, uint64_t *pLongest, uint32_t *pMaxLen)
{
    uint64_t nPostings = aListOffset[nKeywords];
    unsigned nThread = nPostings < POSTINGS_PARALLEL_MIN ? 1 : util_ncores();
    while (nThread > 1 && (uint64_t)nThread * nObjects * sizeof(uint16_t) > POSTINGS_SCRATCH)
        nThread--;
    size_t nChunk = (size_t)nThread * POSTINGS_CHUNKS_PER_THREAD;
    postings_verdict v = POSTINGS_NO_MEMORY;
    check_job job = {aListOffset, aPosting, nObjects, NULL, nChunk, NULL, NULL, NULL, 0, 0, 0, 0, nThread};
    job.aChunkStart = malloc((nChunk + 1) * sizeof *job.aChunkStart);
    job.aaLen = calloc(nThread, sizeof *job.aaLen);
    job.aLongest = calloc(nThread, sizeof *job.aLongest);
    job.aMaxLen = calloc(nThread, sizeof *job.aMaxLen);
    if (!job.aChunkStart || !job.aaLen || !job.aLongest || !job.aMaxLen)
        goto done;
    for (unsigned t = 0; t < nThread; t++)
        if (!(job.aaLen[t] = calloc(nObjects ? nObjects : 1, sizeof **job.aaLen)))
            goto done;
    /* Chunk c starts at the first list that starts at or after c / nChunk of the postings. */
    job.aChunkStart[0] = 0;
    for (size_t c = 1; c < nChunk; c++) {
        uint64_t want = nPostings / nChunk * c, lo = job.aChunkStart[c - 1], hi = nKeywords;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (aListOffset[mid] < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        job.aChunkStart[c] = lo;
    }
    job.aChunkStart[nChunk] = nKeywords;
    util_parallel_run(nThread, check_worker, &job);
    if (job.bad) {
        v = POSTINGS_BAD_ORDER;
        goto done;
    }
    *pLongest = 0;
    for (unsigned t = 0; t < nThread; t++)
        *pLongest = job.aLongest[t] > *pLongest ? job.aLongest[t] : *pLongest;
    if (job.wide) {
        v = max_len_wide(aPosting, nPostings, nObjects, pMaxLen);
        goto done;
    }
    util_parallel_run(nThread, merge_worker, &job);
    *pMaxLen = 0;
    for (unsigned t = 0; t < nThread; t++)
        *pMaxLen = job.aMaxLen[t] > *pMaxLen ? job.aMaxLen[t] : *pMaxLen;
    v = POSTINGS_OK;
done:
    for (unsigned t = 0; job.aaLen && t < nThread; t++)
        free(job.aaLen[t]);
    free(job.aaLen);
    free(job.aChunkStart);
    free(job.aLongest);
    free(job.aMaxLen);
    return v;
}
