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
 * Threads take queries from a shared counter; each query's answer depends
 * on nothing but the query, so results are deterministic whatever the
 * thread count.  Memory per thread: the blocked path's 32 KiB of counters
 * and cursors, plus n_objects * (4 + 4) bytes once a query takes the
 * touched path (cpu-idx: n_objects * 4); never a count table per query.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/cpu/cpu_block.h"
#include "engine/engine.h"
#include "engine/select.h"
#include "index/index.h"
#include "util/error.h"
#include "util/threads.h"

#define CPU_DENSE_RATIO 16

typedef struct cpu_job {
    const engine_request *req;
    genie_hit *aHit;
    uint32_t *aN;
    int fullScan;      /* cpu-idx */
    size_t next;       /* shared: next query of the chunk, atomically taken */
    int failed;        /* shared: a thread could not allocate */
} cpu_job;

typedef struct cpu_scratch {
    uint32_t *aCount;   /* n_objects, all zero between queries; allocated on first need */
    uint32_t *aTouched; /* objects with a non-zero count (cpu only) */
    uint64_t *aHeap;    /* k keys */
    cpu_block_scratch block;
} cpu_scratch;

/* Add each item's weight to the counters of the objects in its lists. */
static size_t count_query(const genie_index *idx, const genie_item *aItem, size_t nItem, cpu_scratch *s,
                          int trackTouched)
{
    size_t nTouched = 0;
    for (size_t j = 0; j < nItem; j++) {
        size_t first, end;
        index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
        const uint32_t *p = idx->aPosting + idx->aListOffset[first];
        const uint32_t *pEnd = idx->aPosting + idx->aListOffset[end];
        uint32_t w = aItem[j].weight;
        if (trackTouched) {
            for (; p < pEnd; p++) {
                if (s->aCount[*p] == 0)
                    s->aTouched[nTouched++] = *p;
                s->aCount[*p] += w;
            }
        } else {
            for (; p < pEnd; p++)
                s->aCount[*p] += w;
        }
    }
    return nTouched;
}

/* Postings that query's items scan. */
static uint64_t query_postings(const genie_index *idx, const genie_item *aItem, size_t nItem)
{
    uint64_t n = 0;
    for (size_t j = 0; j < nItem; j++) {
        size_t first, end;
        index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
        n += idx->aListOffset[end] - idx->aListOffset[first];
    }
    return n;
}

/* The n_objects-sized arrays, on first need; 0 when out of memory. */
static int have_full_arrays(cpu_scratch *s, size_t nObj, int fullScan)
{
    if (!s->aCount)
        s->aCount = calloc(nObj ? nObj : 1, sizeof *s->aCount);
    if (!fullScan && !s->aTouched)
        s->aTouched = malloc((nObj ? nObj : 1) * sizeof *s->aTouched);
    return s->aCount && (fullScan || s->aTouched);
}

/* Answer query i of the chunk; 0 when out of memory. */
static int answer_query(cpu_job *job, cpu_scratch *s, size_t i)
{
    const engine_request *req = job->req;
    const genie_index *idx = req->idx;
    size_t qi = req->first + i, nItem;
    const genie_item *aItem = engine_query_items(req->q, qi, &nItem);
    uint32_t threshold = engine_query_threshold(req->q, qi);
    uint32_t n = (uint32_t)idx->info.n_objects;
    select_heap heap;
    select_reset(&heap, s->aHeap, req->k);
    if (!job->fullScan && req->aCountBound[i] <= CPU_BLOCK_MAX_COUNT &&
        query_postings(idx, aItem, nItem) * CPU_DENSE_RATIO >= n) {
        if (cpu_block_count(idx, aItem, nItem, threshold, req->aCountBound[i], &s->block, &heap) != GENIE_OK)
            return 0;
    } else if (!have_full_arrays(s, n, job->fullScan)) {
        return 0;
    } else if (job->fullScan) {
        count_query(idx, aItem, nItem, s, 0);
        for (uint32_t o = 0; o < n; o++)
            if (s->aCount[o] >= threshold)
                select_push(&heap, select_key(s->aCount[o], o));
        memset(s->aCount, 0, n * sizeof *s->aCount);
    } else {
        size_t nTouched = count_query(idx, aItem, nItem, s, 1);
        for (size_t t = 0; t < nTouched; t++) {
            uint32_t o = s->aTouched[t];
            if (s->aCount[o] >= threshold)
                select_push(&heap, select_key(s->aCount[o], o));
            s->aCount[o] = 0;
        }
    }
    job->aN[i] = (uint32_t)select_finish(&heap, job->aHit + i * (size_t)req->k);
    return 1;
}

static void cpu_worker(void *ctx, unsigned t)
{
    (void)t;
    cpu_job *job = ctx;
    cpu_scratch s;
    memset(&s, 0, sizeof s);
    s.aHeap = malloc(job->req->k * sizeof *s.aHeap);
    if (!s.aHeap) {
        __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    } else {
        for (;;) {
            size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
            if (i >= job->req->n || __atomic_load_n(&job->failed, __ATOMIC_RELAXED))
                break;
            if (!answer_query(job, &s, i)) {
                __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
                break;
            }
        }
    }
    free(s.aCount);
    free(s.aTouched);
    free(s.aHeap);
    cpu_block_scratch_free(&s.block);
}

static genie_status cpu_run(const engine_request *req, genie_hit *aHit, uint32_t *aN, int fullScan)
{
    cpu_job job = {req, aHit, aN, fullScan, 0, 0};
    unsigned nThreads = req->threads ? req->threads : util_ncores();
    if (nThreads > req->n)
        nThreads = (unsigned)req->n;
    util_parallel_run(nThreads, cpu_worker, &job);
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
