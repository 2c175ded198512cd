/*
 * The answers of the block algorithm (sim_block.h) as sim_results: the k
 * best of each query as the blocks wrote them, or the pool's answers
 * grouped by query and sorted.  Compiled into the library (the host
 * emulation of tests/test_sim.c) and into the CUDA module (cuda/sets/sim_gpu.cu).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/sim_block.h"
#include "util/error.h"
#include "util/threads.h"

typedef struct pool_order {
    uint32_t measure;
    const sim_query *aQuery;
    const uint32_t *aSize;
} pool_order;

/* By query, then best first (the answer order of sim.h). */
static int cmp_pooled(const void *pa, const void *pb, void *pCtx)
{
    const sim_pooled *a = pa, *b = pb;
    const pool_order *o = pCtx;
    if (a->query != b->query)
        return a->query < b->query ? -1 : 1;
    uint32_t q = o->aQuery[a->query].size;
    sim_frac fa = sim_score(o->measure, a->count, q, o->aSize[a->object]);
    sim_frac fb = sim_score(o->measure, b->count, q, o->aSize[b->object]);
    return sim_before(fa, a->object, fb, b->object) ? -1 : sim_before(fb, b->object, fa, a->object);
}

/* Queries [q * GROUP_QUERIES, ...) sorted by one thread at a time. */
#define GROUP_QUERIES 64u

typedef struct pool_job {
    pool_order o;
    sim_pooled *aTmp;
    const uint64_t *aEnd; /* each query's end in aTmp */
    uint32_t nQ;
    uint32_t next; /* the next group (atomic) */
} pool_job;

static void pool_worker(void *ctx, unsigned t)
{
    (void)t;
    pool_job *j = ctx;
    for (;;) {
        uint32_t g = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if ((uint64_t)g * GROUP_QUERIES >= j->nQ)
            break;
        for (uint32_t q = g * GROUP_QUERIES; q < j->nQ && q < (g + 1) * GROUP_QUERIES; q++) {
            uint64_t first = q ? j->aEnd[q - 1] : 0;
            qsort_r(j->aTmp + first, (size_t)(j->aEnd[q] - first), sizeof *j->aTmp, cmp_pooled, &j->o);
        }
    }
}

/*
 * The pool in answer order: grouped by query with a counting sort, then
 * each query's answers sorted alone, queries spread over the threads.  A
 * batch's pool can hold millions of answers (Debian's threshold 0.5: 3.7
 * million), whose sort on one thread took most of the half second that
 * search spent on the GPU machine.
 */
static genie_status pool_sort(const sim_request *req, sim_pooled *aPool, uint64_t nPooled)
{
    uint32_t nQ = req->nQuery;
    uint64_t *aStart = calloc((size_t)nQ + 1, sizeof *aStart);
    sim_pooled *aTmp = malloc((size_t)(nPooled ? nPooled : 1) * sizeof *aTmp);
    if (!aStart || !aTmp) {
        free(aStart);
        free(aTmp);
        return util_error(GENIE_ENOMEM, "out of memory ordering %llu answers", (unsigned long long)nPooled);
    }
    for (uint64_t p = 0; p < nPooled; p++) /* the blocks pool answers of the call's queries only */
        aStart[aPool[p].query + 1]++;
    for (uint32_t q = 0; q < nQ; q++)
        aStart[q + 1] += aStart[q];
    for (uint64_t p = 0; p < nPooled; p++) /* aStart[q] moves to query q's end, which is q + 1's start */
        aTmp[aStart[aPool[p].query]++] = aPool[p];
    pool_job job = {{req->measure, req->aQuery, req->pData->aSize}, aTmp, aStart, nQ, 0};
    unsigned nGroup = (nQ + GROUP_QUERIES - 1) / GROUP_QUERIES, nThread = req->threads ? req->threads : util_ncores();
    util_parallel_run(nThread < nGroup ? nThread : (nGroup ? nGroup : 1), pool_worker, &job);
    memcpy(aPool, aTmp, (size_t)nPooled * sizeof *aPool);
    free(aStart);
    free(aTmp);
    return GENIE_OK;
}

genie_status sim_gather_results(const sim_request *req, const genie_hit *aHit, const uint32_t *aN,
                                sim_pooled *aPool, uint64_t nPooled, sim_results *out, uint8_t *aUndone)
{
    memset(out, 0, sizeof *out);
    uint32_t nQ = req->nQuery;
    uint64_t nHit = 0;
    if (req->k) {
        for (uint32_t i = 0; i < nQ; i++)
            nHit += aN[i] == UINT32_MAX ? 0 : aN[i];
    } else {
        GENIE_TRY(pool_sort(req, aPool, nPooled));
        nHit = nPooled;
    }
    out->aEnd = malloc((nQ ? nQ : 1) * sizeof *out->aEnd);
    out->aHit = malloc((size_t)(nHit ? nHit : 1) * sizeof *out->aHit);
    if (!out->aEnd || !out->aHit) {
        free(out->aEnd);
        free(out->aHit);
        memset(out, 0, sizeof *out);
        return util_error(GENIE_ENOMEM, "out of memory for %llu answers", (unsigned long long)nHit);
    }
    uint64_t n = 0, p = 0;
    for (uint32_t i = 0; i < nQ; i++) {
        aUndone[i] = aN[i] == UINT32_MAX;
        if (req->k) {
            for (uint32_t j = 0; !aUndone[i] && j < aN[i]; j++)
                out->aHit[n++] = aHit[(uint64_t)i * req->k + j];
        } else {
            for (; p < nPooled && aPool[p].query == i; p++)
                if (!aUndone[i])
                    out->aHit[n++] = (genie_hit){aPool[p].object, aPool[p].count};
        }
        out->aEnd[i] = n;
    }
    return GENIE_OK;
}
