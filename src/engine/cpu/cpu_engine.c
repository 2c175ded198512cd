/*
 * The CPU backends: the reference ("cpu") and the CPU-Idx baseline.
 *
 * cpu      counts a query in cache-sized object blocks with 8- or 16-bit
 *          counters (cpu_block.c) when its count bound fits 16 bits and it scans
 *          enough postings to pay for a pass over every block (at least
 *          n_objects / CPU_DENSE_RATIO); otherwise it counts into a 32-bit
 *          counter per object, remembers which objects it touched, offers
 *          only those to the top-k heap and clears only those counters.
 *          Both paths give the same hits in the same order.
 * cpu-idx  is Zhou et al. (GENIE) VI-A2's CPU-Idx: a 32-bit counter per object, every
 *          object offered to the selection, the whole array cleared per
 *          query.  Kept as the paper's baseline.
 * Threads take groups of consecutive queries from a shared counter (full
 * groups while more than half the queries remain, then smaller ones, so
 * that the threads finish together: take_group); the group's blocked queries are counted together, block-major, so the
 * postings they share are read from memory once per block (cpu_block.h).
 * Before the threads start, the long lists that several of the request's
 * blocked queries use become bitmaps (cpu_dense), shared by all threads.
 * Each query's answer depends on nothing but the query, so results are
 * deterministic whatever the thread count and grouping.  Memory per
 * thread: the blocked path's 16 KiB of counters, the group's cursors and
 * heaps (at most CPU_GROUP_HEAP_KEYS keys), plus n_objects * (4 + 4) bytes
 * once a query takes the touched path (cpu-idx: n_objects * 4); never a
 * count table per query.  The bitmaps take at most three quarters of the
 * bytes of the postings of the lists they stand for.
 *
 * A live index's delta (engine_request.pDelta, cpu only) is counted in the
 * same pass: each query's lists in the delta after its lists in the base,
 * on the path the delta's size picks for it (its own counters, bitmaps and
 * count bounds), offered to the same heap as the base's objects under ids
 * idDelta on.  Those ids are larger than every id of the base, so offering
 * them after the base's blocks keeps the blocked path's pruning exact, and
 * the heap ends with the top k of the two indexes together: the merged
 * answer, with no second round of threads, no second selection, no merge.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/cpu/cpu_block.h"
#include "engine/engine.h"
#include "engine/select.h"
#include "index/index.h"
#include "util/bitmap.h"
#include "util/error.h"
#include "util/threads.h"

#define CPU_DENSE_RATIO 16
#define CPU_BLOCK_MAX_CURSORS (1u << 20) /* lists of one query on the blocked path at most: 32 MiB of cursors */
#define CPU_GROUP_MAX 256           /* queries a thread counts together over each block */
#define CPU_GROUP_MIN 8             /* the smallest group of the tail (take_group) */
#define CPU_GROUP_HEAP_KEYS (1u << 20) /* their heaps: at most 8 MiB per thread */

typedef struct cpu_job {
    const engine_request *req;
    genie_hit *aHit;
    uint32_t *aN;
    int fullScan;      /* cpu-idx */
    size_t nGroup;     /* queries a thread takes at most at once (the blocked path's batch) */
    unsigned nThread;
    const cpu_dense *dense; /* bitmaps of the long lists the request's queries share */
    const cpu_dense *denseDelta; /* the same in the request's delta (engine_request.pDelta) */
    size_t next;       /* shared: first query of the next group, atomically taken */
    int failed;        /* shared: CPU_FAILED_* once a thread stops early */
} cpu_job;

enum { CPU_FAILED_MEMORY = 1, CPU_FAILED_CANCELLED = 2 };

typedef struct cpu_scratch {
    uint32_t *aCount;   /* n_objects, all zero between queries; allocated on first need */
    uint32_t *aTouched; /* objects with a non-zero count (cpu only) */
    uint32_t *aDeltaCount, *aDeltaTouched; /* the same for the request's delta (engine_request.pDelta) */
    uint64_t *aHeap;    /* nGroup * k keys */
    select_heap *aSel;  /* nGroup heaps */
    cpu_block_query *aBatch; /* nGroup: the group's queries on the blocked path */
    uint64_t *aDeltaHeap;    /* nGroup * k keys: the delta's own heaps of its blocked queries (answer_group_delta) */
    select_heap *aDeltaSel;
    uint32_t *aDeltaQuery;   /* their queries' places in the group */
    cpu_block_scratch block;
} cpu_scratch;

/*
 * Add each item's weight to the counters of the objects in its lists; a
 * cancelled request stops between items (its counters are still cleared
 * by the caller, its answer is dropped).
 */
static size_t count_query(const genie_index *idx, const genie_item *aItem, size_t nItem, uint32_t *aCount,
                          uint32_t *aTouched, const int *cancel)
{
    size_t nTouched = 0;
    for (size_t j = 0; j < nItem && !engine_cancelled(cancel); j++) {
        size_t first, end;
        index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
        const uint32_t *p = idx->aPosting + idx->aListOffset[first];
        const uint32_t *pEnd = idx->aPosting + idx->aListOffset[end];
        uint32_t w = aItem[j].weight;
        if (aTouched) {
            for (; p < pEnd; p++) {
                if (aCount[*p] == 0)
                    aTouched[nTouched++] = *p;
                aCount[*p] += w;
            }
        } else {
            for (; p < pEnd; p++)
                aCount[*p] += w;
        }
    }
    return nTouched;
}

/* Postings that query's items scan, and in *pLists the lists they scan them in. */
static uint64_t query_postings(const genie_index *idx, const genie_item *aItem, size_t nItem, uint64_t *pLists)
{
    uint64_t n = 0;
    *pLists = 0;
    for (size_t j = 0; j < nItem; j++) {
        size_t first, end;
        index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
        n += idx->aListOffset[end] - idx->aListOffset[first];
        *pLists += end - first;
    }
    return n;
}

/* The n_objects-sized arrays, on first need; 0 when out of memory. */
static int have_arrays(uint32_t **paCount, uint32_t **paTouched, size_t nObj, int fullScan)
{
    if (!*paCount)
        *paCount = calloc(nObj ? nObj : 1, sizeof **paCount);
    if (!fullScan && !*paTouched)
        *paTouched = malloc((nObj ? nObj : 1) * sizeof **paTouched);
    return *paCount && (fullScan || *paTouched);
}

/*
 * Whether query i of the chunk takes the blocked path (cpu): its counts fit
 * 16 bits, it scans enough postings to pay for a pass over every block,
 * and its lists (a cursor each, cpu_block.c) are not past
 * CPU_BLOCK_MAX_CURSORS: wide ranges given many times over (a count bound
 * kept small by short objects) would otherwise take gigabytes of cursors.
 */
static int blocked_in(const genie_index *idx, const engine_request *req, const uint32_t *aBound, size_t i)
{
    size_t nItem;
    const genie_item *aItem = engine_query_items(req->q, req->first + i, &nItem);
    if (aBound[i] > CPU_BLOCK_MAX_COUNT)
        return 0;
    uint64_t nLists, nPostings = query_postings(idx, aItem, nItem, &nLists);
    return nLists <= CPU_BLOCK_MAX_CURSORS && nPostings * CPU_DENSE_RATIO >= idx->info.n_objects;
}

static int blocked(const engine_request *req, size_t i)
{
    return blocked_in(req->idx, req, req->aCountBound, i);
}

typedef struct dense_count {
    const engine_request *req;
    uint64_t minLen;
    uint32_t *aUses; /* n_keywords: blocked queries that scan the list (atomic) */
    size_t next;     /* the first query of the next grab (atomic) */
} dense_count;

#define DENSE_GRAB 64 /* queries a thread takes at a time while counting uses */

/* Count, for every list at least minLen long, the blocked queries that scan it. */
static void dense_count_worker(void *ctx, unsigned t)
{
    (void)t;
    dense_count *j = ctx;
    const engine_request *req = j->req;
    for (;;) {
        size_t b = __atomic_fetch_add(&j->next, DENSE_GRAB, __ATOMIC_RELAXED);
        if (b >= req->n)
            return;
        size_t e = req->n - b < DENSE_GRAB ? req->n : b + DENSE_GRAB;
        for (size_t i = b; i < e; i++) {
            if (!blocked(req, i))
                continue;
            size_t nItem;
            const genie_item *aItem = engine_query_items(req->q, req->first + i, &nItem);
            for (size_t k = 0; k < nItem; k++) {
                size_t first, end;
                index_keyword_range(req->idx, aItem[k].lo, aItem[k].hi, &first, &end);
                for (size_t l = first; l < end; l++)
                    if (req->idx->aListOffset[l + 1] - req->idx->aListOffset[l] >= j->minLen)
                        __atomic_fetch_add(&j->aUses[l], 1, __ATOMIC_RELAXED);
            }
        }
    }
}

/*
 * Bitmaps of the long lists that at least CPU_DENSE_MIN_USES of the
 * request's blocked queries share (cpu_dense); none when the CPU cannot use
 * them.  The uses are counted and the bitmaps filled on @p nThread threads:
 * this step runs before the search's threads start, so on one thread it
 * would be the serial part of every call.
 */
static genie_status make_dense(const engine_request *req, unsigned nThread, cpu_dense *d)
{
    const genie_index *idx = req->idx;
    uint64_t minLen = cpu_dense_min_length(idx);
    memset(d, 0, sizeof *d);
    if (!minLen || req->n < CPU_DENSE_MIN_USES)
        return GENIE_OK;
    size_t nList = (size_t)idx->info.n_keywords, nLong = 0;
    for (size_t l = 0; l < nList && !nLong; l++)
        nLong = idx->aListOffset[l + 1] - idx->aListOffset[l] >= minLen;
    if (!nLong)
        return GENIE_OK; /* no list is long enough: nothing to count */
    uint32_t *aUses = calloc(nList, sizeof *aUses);
    if (!aUses)
        return GENIE_ENOMEM;
    dense_count j = {req, minLen, aUses, 0};
    size_t nGrab = (req->n + DENSE_GRAB - 1) / DENSE_GRAB;
    util_parallel_run(nThread < nGrab ? nThread : (unsigned)nGrab, dense_count_worker, &j);
    /* the kept list numbers, ascending, in place (l >= nKeep throughout) */
    size_t nKeep = 0;
    for (size_t l = 0; l < nList; l++)
        if (aUses[l] >= CPU_DENSE_MIN_USES)
            aUses[nKeep++] = (uint32_t)l;
    genie_status rc = cpu_dense_build(idx, aUses, nKeep, nThread, d);
    free(aUses);
    return rc;
}

/* What an object's key must exceed to enter @p h: the least key when full, else that of a count threshold - 1. */
static inline uint64_t entry_floor(const select_heap *h, uint32_t threshold)
{
    uint64_t f = select_key(threshold - 1, 0);
    return h->n == h->k && h->aKey[0] > f ? h->aKey[0] : f;
}

/*
 * Offer object @p o's count @p c to @p h under id @p idBase + o (its count
 * zero when @p aAllow, by o, does not allow it), *pFloor its entry_floor():
 * one well-predicted compare per object, where a branch on a random
 * bitmap's bit would mispredict half the time.  select_push takes exactly
 * the keys above the floor.
 */
static inline void offer(select_heap *h, uint32_t threshold, uint64_t *pFloor, const uint64_t *aAllow, uint32_t c,
                         uint32_t o, uint32_t idBase)
{
    if (aAllow)
        c &= 0u - (uint32_t)util_bitmap_get(aAllow, o);
    uint64_t key = select_key(c, idBase + o);
    if (key > *pFloor) {
        select_push(h, key);
        *pFloor = entry_floor(h, threshold);
    }
}

/*
 * The touched path: count the query's lists of @p idx, offer every object
 * counted (offer(), by @p aAllow and @p idBase), clear its counter.
 */
static void offer_touched(const genie_index *idx, const genie_item *aItem, size_t nItem, uint32_t *aCount,
                          uint32_t *aTouched, const uint64_t *aAllow, uint32_t idBase, select_heap *heap,
                          uint32_t threshold, const int *cancel)
{
    uint64_t floor = entry_floor(heap, threshold);
    size_t nTouched = count_query(idx, aItem, nItem, aCount, aTouched, cancel);
    for (size_t t = 0; t < nTouched; t++) {
        uint32_t o = aTouched[t];
        offer(heap, threshold, &floor, aAllow, aCount[o], o, idBase);
        aCount[o] = 0;
    }
}

/* Answer query i of the chunk with the 32-bit counters into @p heap; 0 when out of memory. */
static int answer_full(cpu_job *job, cpu_scratch *s, size_t i, select_heap *heap)
{
    const engine_request *req = job->req;
    const genie_index *idx = req->idx;
    size_t nItem;
    const genie_item *aItem = engine_query_items(req->q, req->first + i, &nItem);
    uint32_t threshold = engine_query_threshold(req->q, req->first + i);
    uint32_t n = (uint32_t)idx->info.n_objects;
    if (!have_arrays(&s->aCount, &s->aTouched, n, job->fullScan))
        return 0;
    if (job->fullScan) {
        uint64_t floor = entry_floor(heap, threshold);
        count_query(idx, aItem, nItem, s->aCount, NULL, req->cancel);
        for (uint32_t o = 0; o < n; o++)
            offer(heap, threshold, &floor, req->aAllow, s->aCount[o], o, 0);
        memset(s->aCount, 0, n * sizeof *s->aCount);
    } else {
        offer_touched(idx, aItem, nItem, s->aCount, s->aTouched, req->aAllow, 0, heap, threshold, req->cancel);
    }
    return 1;
}

/*
 * Offer query i's objects of the request's delta to @p heap, which holds
 * its base's: the touched path over the delta's counters; 0 when out of
 * memory.
 */
static int answer_delta(cpu_job *job, cpu_scratch *s, size_t i, select_heap *heap)
{
    const engine_request *req = job->req;
    size_t nItem, nObj = (size_t)req->pDelta->info.n_objects;
    const genie_item *aItem = engine_query_items(req->q, req->first + i, &nItem);
    if (!have_arrays(&s->aDeltaCount, &s->aDeltaTouched, nObj, 0))
        return 0;
    offer_touched(req->pDelta, aItem, nItem, s->aDeltaCount, s->aDeltaTouched, req->aDeltaAllow, req->idDelta, heap,
                  engine_query_threshold(req->q, req->first + i), req->cancel);
    return 1;
}

/*
 * The delta's share of queries i0 .. i1-1 (engine_request.pDelta), after
 * their base's: each query on the path the delta's own size picks for it.
 * The touched path offers straight to the query's heap; the blocked path
 * (whose pruning needs a heap of its own ids alone) fills a heap of its
 * own, whose keys then move to the query's under ids idDelta on.  0, or
 * CPU_FAILED_*.
 */
static int answer_group_delta(cpu_job *job, cpu_scratch *s, size_t i0, size_t i1)
{
    const engine_request *req = job->req;
    size_t nBatch = 0;
    for (size_t i = i0; i < i1; i++) {
        if (blocked_in(req->pDelta, req, req->aDeltaBound, i)) {
            select_heap *heap = &s->aDeltaSel[nBatch];
            select_reset(heap, s->aDeltaHeap + nBatch * (size_t)req->k, req->k);
            size_t nItem;
            const genie_item *aItem = engine_query_items(req->q, req->first + i, &nItem);
            s->aBatch[nBatch++] = (cpu_block_query){aItem, nItem, engine_query_threshold(req->q, req->first + i),
                                                    req->aDeltaBound[i], heap, 0, 0, 0};
            s->aDeltaQuery[nBatch - 1] = (uint32_t)(i - i0);
        } else if (!answer_delta(job, s, i, &s->aSel[i - i0])) {
            return CPU_FAILED_MEMORY;
        }
    }
    if (!nBatch)
        return 0;
    genie_status rc = cpu_block_count(req->pDelta, job->denseDelta, req->aDeltaAllow, s->aBatch, nBatch, &s->block);
    if (rc != GENIE_OK)
        return rc == GENIE_ECANCELED ? CPU_FAILED_CANCELLED : CPU_FAILED_MEMORY;
    for (size_t b = 0; b < nBatch; b++) {
        const select_heap *h = &s->aDeltaSel[b];
        select_heap *to = &s->aSel[s->aDeltaQuery[b]];
        for (size_t j = 0; j < h->n; j++) /* select_key(c, o) - idDelta = select_key(c, idDelta + o) */
            select_push(to, h->aKey[j] - req->idDelta);
    }
    return 0;
}

/*
 * Answer queries i0 .. i1-1 of the chunk: those for the touched or full
 * path one by one, the others together through the blocked path; 0, or
 * CPU_FAILED_* when it stopped early.
 */
static int answer_group(cpu_job *job, cpu_scratch *s, size_t i0, size_t i1)
{
    const engine_request *req = job->req;
    const genie_index *idx = req->idx;
    size_t nBatch = 0;
    for (size_t i = i0; i < i1; i++) {
        select_heap *heap = &s->aSel[i - i0];
        select_reset(heap, s->aHeap + (i - i0) * (size_t)req->k, req->k);
        if (!job->fullScan && blocked(req, i)) {
            size_t nItem;
            const genie_item *aItem = engine_query_items(req->q, req->first + i, &nItem);
            s->aBatch[nBatch++] = (cpu_block_query){aItem, nItem, engine_query_threshold(req->q, req->first + i),
                                                    req->aCountBound[i], heap, 0, 0, 0};
        } else if (!answer_full(job, s, i, heap)) {
            return CPU_FAILED_MEMORY;
        }
    }
    if (nBatch) {
        genie_status rc = cpu_block_count(idx, job->dense, req->aAllow, s->aBatch, nBatch, &s->block);
        if (rc != GENIE_OK)
            return rc == GENIE_ECANCELED ? CPU_FAILED_CANCELLED : CPU_FAILED_MEMORY;
    }
    if (req->pDelta) { /* after the base's blocks: the delta's ids are the larger */
        int failed = answer_group_delta(job, s, i0, i1);
        if (failed)
            return failed;
    }
    if (engine_cancelled(req->cancel))
        return CPU_FAILED_CANCELLED;
    for (size_t i = i0; i < i1; i++)
        job->aN[i] = (uint32_t)select_finish(&s->aSel[i - i0], job->aHit + i * (size_t)req->k);
    return 0;
}

/*
 * The first query of the calling thread's next group, and *pEnd its end;
 * req->n when none is left.  A group is a fraction 1 / (2 nThread) of the
 * queries left, at least CPU_GROUP_MIN and at most nGroup: full groups
 * first, smaller ones at the end (guided self-scheduling), so that no
 * thread starts a full group when the others are about to finish.
 */
static size_t take_group(cpu_job *job, size_t *pEnd)
{
    size_t n = job->req->n, i = __atomic_load_n(&job->next, __ATOMIC_RELAXED);
    for (;;) {
        if (i >= n)
            return n;
        size_t left = n - i, g = left / (2 * (size_t)job->nThread);
        if (g < CPU_GROUP_MIN)
            g = CPU_GROUP_MIN;
        if (g > job->nGroup) /* the thread's scratch holds nGroup queries */
            g = job->nGroup;
        if (g > left)
            g = left;
        if (__atomic_compare_exchange_n(&job->next, &i, i + g, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            *pEnd = i + g;
            return i;
        }
    }
}

static void cpu_worker(void *ctx, unsigned t)
{
    (void)t;
    cpu_job *job = ctx;
    cpu_scratch s;
    memset(&s, 0, sizeof s);
    s.aHeap = malloc(job->nGroup * job->req->k * sizeof *s.aHeap);
    s.aSel = malloc(job->nGroup * sizeof *s.aSel);
    s.aBatch = malloc(job->nGroup * sizeof *s.aBatch);
    s.block.cancel = job->req->cancel;
    if (job->req->pDelta) {
        s.aDeltaHeap = malloc(job->nGroup * job->req->k * sizeof *s.aDeltaHeap);
        s.aDeltaSel = malloc(job->nGroup * sizeof *s.aDeltaSel);
        s.aDeltaQuery = malloc(job->nGroup * sizeof *s.aDeltaQuery);
    }
    if (!s.aHeap || !s.aSel || !s.aBatch ||
        (job->req->pDelta && (!s.aDeltaHeap || !s.aDeltaSel || !s.aDeltaQuery))) {
        __atomic_store_n(&job->failed, CPU_FAILED_MEMORY, __ATOMIC_RELAXED);
    } else {
        for (;;) {
            size_t end = 0, i = take_group(job, &end);
            if (i >= job->req->n || __atomic_load_n(&job->failed, __ATOMIC_RELAXED))
                break;
            int failed = engine_cancelled(job->req->cancel) ? CPU_FAILED_CANCELLED : answer_group(job, &s, i, end);
            if (failed) {
                __atomic_store_n(&job->failed, failed, __ATOMIC_RELAXED);
                break;
            }
        }
    }
    free(s.aCount);
    free(s.aTouched);
    free(s.aDeltaCount);
    free(s.aDeltaTouched);
    free(s.aDeltaHeap);
    free(s.aDeltaSel);
    free(s.aDeltaQuery);
    free(s.aHeap);
    free(s.aSel);
    free(s.aBatch);
    cpu_block_scratch_free(&s.block);
}

static genie_status cpu_run(const engine_request *req, genie_hit *aHit, uint32_t *aN, int fullScan)
{
    unsigned nThreads = req->threads ? req->threads : util_ncores();
    if (nThreads > req->n)
        nThreads = (unsigned)req->n;
    /*
     * Groups: the first is half a thread's share, the later ones shrink
     * (take_group); at most CPU_GROUP_MAX queries and CPU_GROUP_HEAP_KEYS
     * heap keys.
     */
    size_t nGroup = (req->n + 2 * (size_t)nThreads - 1) / (2 * (size_t)nThreads);
    if (nGroup > CPU_GROUP_MAX)
        nGroup = CPU_GROUP_MAX;
    if (nGroup > CPU_GROUP_HEAP_KEYS / req->k)
        nGroup = CPU_GROUP_HEAP_KEYS / req->k;
    if (nGroup < 1)
        nGroup = 1;
    cpu_dense dense, denseDelta;
    memset(&dense, 0, sizeof dense);
    memset(&denseDelta, 0, sizeof denseDelta);
    engine_request dreq = *req; /* the delta's queries as a request of their own, for its bitmaps */
    dreq.idx = req->pDelta;
    dreq.aCountBound = req->aDeltaBound;
    dreq.pDelta = NULL;
    if (!fullScan && (make_dense(req, nThreads, &dense) != GENIE_OK ||
                      (req->pDelta && make_dense(&dreq, nThreads, &denseDelta) != GENIE_OK))) {
        cpu_dense_free(&dense);
        return util_error(GENIE_ENOMEM, "out of memory for the bitmaps of long lists (%llu objects)",
                          (unsigned long long)req->idx->info.n_objects);
    }
    cpu_job job = {req, aHit, aN, fullScan, nGroup, nThreads, &dense, &denseDelta, 0, 0};
    util_parallel_run(nThreads, cpu_worker, &job);
    cpu_dense_free(&dense);
    cpu_dense_free(&denseDelta);
    if (job.failed == CPU_FAILED_CANCELLED || (job.failed && engine_cancelled(req->cancel)))
        return engine_cancelled_error();
    if (job.failed)
        return util_error(GENIE_ENOMEM, "out of memory for per-thread counters (%llu objects)",
                          (unsigned long long)req->idx->info.n_objects);
    return GENIE_OK;
}

genie_status engine_cpu_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    return cpu_run(req, aHit, aN, 0);
}

genie_status engine_cpu_idx_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    return cpu_run(req, aHit, aN, 1);
}
