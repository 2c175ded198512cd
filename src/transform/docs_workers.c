/*
 * Docs queries on the CPU threads (docs_eval.h): the loop the CPU search
 * (docs_search.c) and the GPU search's post-processing (docs_gpu_search.c)
 * share.  Each thread owns a docs_worker (its query terms, cursors and a
 * top-k heap, reused across queries) and takes queries DOCS_GRAB at a time
 * from a shared counter (Wang et al., "Efficient GPU-based Query Processing
 * with Pruned List Caching in Search Engines", section 4.4: one query is
 * one task).  Queries are independent, so the answers do not depend on the
 * thread count or on which thread took a query.
 */
#include <stdlib.h>
#include <string.h>

#include "transform/docs_eval.h"
#include "util/threads.h"

#define DOCS_GRAB 16

genie_docs_hit *docs_topk_sorted(const docs_topk *h)
{
    genie_docs_hit *a = malloc((h->n ? h->n : 1) * sizeof *a);
    if (!a)
        return NULL;
    memcpy(a, h->aHit, h->n * sizeof *a);
    qsort(a, h->n, sizeof *a, docs_cmp_best_first);
    return a;
}

typedef struct docs_run {
    size_t nQuery;
    uint32_t k;
    docs_answer_fn *xAnswer;
    void *ctx;
    docs_worker *aWorker;
    size_t next;
    int failed;
} docs_run;

static void docs_run_thread(void *ctx, unsigned t)
{
    docs_run *r = ctx;
    docs_worker *w = &r->aWorker[t];
    w->heap.k = r->k;
    w->heap.aHit = malloc((r->k ? r->k : 1) * sizeof *w->heap.aHit);
    if (!w->heap.aHit) {
        __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    while (!__atomic_load_n(&r->failed, __ATOMIC_RELAXED)) {
        size_t q0 = __atomic_fetch_add(&r->next, DOCS_GRAB, __ATOMIC_RELAXED);
        if (q0 >= r->nQuery)
            break;
        size_t q1 = q0 + DOCS_GRAB < r->nQuery ? q0 + DOCS_GRAB : r->nQuery;
        for (size_t q = q0; q < q1; q++)
            if (r->xAnswer(r->ctx, w, q) != 0) {
                __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
                break;
            }
    }
}

int docs_run_queries(unsigned nThread, size_t nQuery, uint32_t k, docs_answer_fn *xAnswer, void *ctx,
                     genie_docs_stats *pCounts)
{
    if (nThread == 0)
        nThread = util_ncores();
    if (nThread > nQuery / DOCS_GRAB + 1)
        nThread = (unsigned)(nQuery / DOCS_GRAB + 1);
    docs_run r = {.nQuery = nQuery, .k = k, .xAnswer = xAnswer, .ctx = ctx};
    r.aWorker = calloc(nThread, sizeof *r.aWorker);
    if (!r.aWorker)
        return -1;
    util_parallel_run(nThread, docs_run_thread, &r);
    for (unsigned t = 0; t < nThread; t++) {
        docs_worker *w = &r.aWorker[t];
        pCounts->postings_read += w->stats.postings_read;
        pCounts->postings_total += w->stats.postings_total;
        pCounts->docs_scored += w->stats.docs_scored;
        pCounts->stopped_early += w->stats.stopped_early;
        pCounts->post_processed += w->stats.post_processed;
        free(w->heap.aHit);
        free(w->aTerm);
        free(w->aPos);
        free(w->aRead);
    }
    free(r.aWorker);
    /* A thread that could not start leaves its share to the others (the
     * first runs on the calling thread), so every query is answered unless
     * memory ran out. */
    return r.failed ? -1 : 0;
}
