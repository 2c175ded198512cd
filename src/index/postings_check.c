/*
 * Postings validation at open time (see postings_check.h), the largest
 * cost of opening an index after the checksums.
 *
 * The most postings of one object needs a count per object.  Counting
 * list by list into an array over all objects misses the cache on every
 * posting once the array outgrows it, so the check runs in object blocks
 * instead, as the cpu engine counts (engine/cpu/cpu_block.h):
 *
 * Blocked (postings_check_blocked), when lists are few enough that a
 * cursor per list and block costs little next to the postings: the ids
 * are cut into one range per thread (taken from a shared counter), and
 * the range into blocks of POSTINGS_BLOCK objects whose 32-bit counters
 * stay in the core's L2.  A thread starts each list at the first id of
 * its range (a binary search), then walks every list through one block
 * at a time, checking that the ids of the block strictly increase, and
 * takes the block's largest count.  At the end of its range each list's
 * cursor must stand exactly where the next range's binary search puts
 * that list's start (or at the list's end, for the last range).  Why that
 * proves every list strictly increasing with ids below n_objects even
 * when the lists are corrupt: a binary search for x ends at a position
 * whose id is at least x (or at the end), so a range's piece of a list
 * holds ids in [its first id, its end) in strictly increasing order; the
 * pieces of ranges in increasing order follow one another without gap or
 * overlap from the list's start to its end; so the whole list increases,
 * and its ids stay below the last range's end, n_objects.
 *
 * By lists (postings_check_lists), otherwise: lists in chunks of about
 * equal postings, which threads take from a shared counter.  Each thread
 * checks the order of its lists and counts every object's postings in an
 * array of its own with 16-bit counters (the threads' arrays are summed
 * object by object at the end, again on all threads).  When an object
 * reaches 65,535 postings in one thread's array, the counts are redone on
 * one thread with 32-bit counters.  The number of threads is bounded so
 * that their arrays stay within POSTINGS_SCRATCH bytes.
 */
#include "index/postings_check.h"

#include <stdlib.h>

#include "util/threads.h"

#define POSTINGS_CHUNKS_PER_THREAD 8
#define POSTINGS_SCRATCH (256ull << 20)
#define POSTINGS_PARALLEL_MIN (1u << 20) /* fewer postings: one thread */
#define POSTINGS_MERGE_SLICE 65536u
#define POSTINGS_BLOCK 65536u      /* objects per block: 256 KiB of 32-bit counters, in L2 */
#define POSTINGS_BLOCK_VISITS 4    /* blocked when lists x blocks <= postings / this */

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

static postings_verdict postings_check_lists(const uint64_t *aListOffset, const uint32_t *aPosting,
                                            uint64_t nKeywords, uint64_t nObjects, uint64_t *pLongest,
                                            uint32_t *pMaxLen)
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

/* ---- Blocked: a range of ids per thread, every list walked block by block. ---- */

typedef struct block_job {
    const uint64_t *aListOffset;
    const uint32_t *aPosting;
    uint64_t nKeywords, nObjects;
    unsigned nRange;       /* ranges of ids, one per thread */
    unsigned next;         /* shared: next range */
    int bad, noMemory;     /* shared flags */
    uint32_t *aMaxLen;     /* per range */
} block_job;

/* First position of list j whose id is at least @p x (the list's end when none); any list, sorted or not. */
static uint64_t list_lower_bound(const block_job *job, uint64_t j, uint64_t x)
{
    uint64_t lo = job->aListOffset[j], hi = job->aListOffset[j + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (job->aPosting[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint64_t range_start(const block_job *job, unsigned r)
{
    /* Whole blocks per range, so that only the last block of all is short. */
    uint64_t nBlock = (job->nObjects + POSTINGS_BLOCK - 1) / POSTINGS_BLOCK;
    uint64_t o = nBlock * r / job->nRange * POSTINGS_BLOCK;
    return o < job->nObjects ? o : job->nObjects;
}

/* Check range r; 0 when a list is found bad. */
static int check_range(block_job *job, unsigned r, uint64_t *aCursor, uint32_t *aCount)
{
    const uint32_t *a = job->aPosting;
    uint64_t o0 = range_start(job, r), o1 = r + 1 == job->nRange ? job->nObjects : range_start(job, r + 1);
    for (uint64_t j = 0; j < job->nKeywords; j++)
        aCursor[j] = r == 0 ? job->aListOffset[j] : list_lower_bound(job, j, o0);
    uint32_t best = 0;
    for (uint64_t base = o0; base < o1; base += POSTINGS_BLOCK) {
        uint64_t lim = o1 - base < POSTINGS_BLOCK ? o1 : base + POSTINGS_BLOCK;
        for (uint64_t j = 0; j < job->nKeywords; j++) {
            uint64_t i = aCursor[j], e = job->aListOffset[j + 1];
            /* Lists a few ahead start their pieces of this block far from here: fetch them now. */
            if (j + 8 < job->nKeywords)
                __builtin_prefetch(a + aCursor[j + 8]);
            int64_t prev = (int64_t)base - 1; /* the piece's first id is at least base (see the top) */
            for (; i < e && a[i] < lim; i++) {
                if ((int64_t)a[i] <= prev)
                    return 0;
                prev = a[i];
                aCount[a[i] - base]++;
            }
            aCursor[j] = i;
        }
        for (uint64_t o = 0; o < lim - base; o++) {
            best = aCount[o] > best ? aCount[o] : best;
            aCount[o] = 0;
        }
    }
    for (uint64_t j = 0; j < job->nKeywords; j++)
        if (aCursor[j] != (r + 1 == job->nRange ? job->aListOffset[j + 1] : list_lower_bound(job, j, o1)))
            return 0;
    job->aMaxLen[r] = best;
    return 1;
}

static void block_worker(void *ctx, unsigned t)
{
    (void)t;
    block_job *job = ctx;
    uint64_t *aCursor = malloc((job->nKeywords ? job->nKeywords : 1) * sizeof *aCursor);
    uint32_t *aCount = calloc(POSTINGS_BLOCK, sizeof *aCount);
    if (!aCursor || !aCount) {
        __atomic_store_n(&job->noMemory, 1, __ATOMIC_RELAXED);
    } else {
        for (;;) {
            unsigned r = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
            if (r >= job->nRange || __atomic_load_n(&job->bad, __ATOMIC_RELAXED))
                break;
            if (!check_range(job, r, aCursor, aCount)) {
                __atomic_store_n(&job->bad, 1, __ATOMIC_RELAXED);
                break;
            }
        }
    }
    free(aCursor);
    free(aCount);
}

static postings_verdict postings_check_blocked(const uint64_t *aListOffset, const uint32_t *aPosting,
                                               uint64_t nKeywords, uint64_t nObjects, unsigned nThread,
                                               uint32_t *pMaxLen)
{
    block_job job = {aListOffset, aPosting, nKeywords, nObjects, nThread, 0, 0, 0, NULL};
    job.aMaxLen = calloc(nThread, sizeof *job.aMaxLen);
    if (!job.aMaxLen)
        return POSTINGS_NO_MEMORY;
    util_parallel_run(nThread, block_worker, &job);
    postings_verdict v = job.bad ? POSTINGS_BAD_ORDER : job.noMemory ? POSTINGS_NO_MEMORY : POSTINGS_OK;
    *pMaxLen = 0;
    for (unsigned r = 0; r < nThread; r++)
        *pMaxLen = job.aMaxLen[r] > *pMaxLen ? job.aMaxLen[r] : *pMaxLen;
    free(job.aMaxLen);
    return v;
}

postings_verdict postings_check(const uint64_t *aListOffset, const uint32_t *aPosting, uint64_t nKeywords,
                                uint64_t nObjects, uint64_t *pLongest, uint32_t *pMaxLen)
{
    uint64_t nPostings = aListOffset[nKeywords], nBlock = (nObjects + POSTINGS_BLOCK - 1) / POSTINGS_BLOCK;
    if (nObjects == 0 || nPostings < POSTINGS_PARALLEL_MIN || nKeywords > nPostings / POSTINGS_BLOCK_VISITS / nBlock)
        return postings_check_lists(aListOffset, aPosting, nKeywords, nObjects, pLongest, pMaxLen);
    *pLongest = 0;
    for (uint64_t j = 0; j < nKeywords; j++)
        if (aListOffset[j + 1] - aListOffset[j] > *pLongest)
            *pLongest = aListOffset[j + 1] - aListOffset[j];
    unsigned nThread = util_ncores();
    if (nThread > nBlock)
        nThread = (unsigned)nBlock;
    return postings_check_blocked(aListOffset, aPosting, nKeywords, nObjects, nThread, pMaxLen);
}
