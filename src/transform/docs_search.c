/*
 * Searching a docs index on the CPU: lists intersection (AND) or union
 * (OR) in docID order, scoring by Eqn. 3 and top-k selection with early
 * termination by the global score bound (Wang et al., "Efficient GPU-based
 * Query Processing with Pruned List Caching in Search Engines", sections
 * 2.1.2-2.1.4 and 3.2; section 4.4 for the multi-threaded CPU version:
 * each query is one task, docs_workers.c).
 *
 * AND: the shortest list drives; each of its documents d is looked up in
 * the other lists, shortest first, by galloping search (doubling steps
 * from the list's cursor, then binary search), the cursors only moving
 * forward since d increases.  OR: the lists are merged by a cursor each,
 * the next document being the smallest under the cursors.
 *
 * Early termination: docIDs are in descending GS order and S(d', q) <=
 * GS(d') <= GS(d) for d <= d' (transform/docs.h), so once k documents are
 * held and the k-th score exceeds GS(d) + DOCS_GS_MARGIN for the next
 * candidate d, no later document can enter the top-k, not even on a tie
 * (ties go to the smaller record number, which is not docID order, hence
 * the strict inequality).  docs/DOCS.md has the proof.  Exhaustive mode
 * skips the test and is otherwise the same code, so both modes compute
 * the same score for a document, bit for bit.
 */
#include <stdlib.h>
#include <string.h>

#include "genie/docs.h"
#include "genie/text.h"
#include "index/index.h"
#include "transform/docs.h"
#include "transform/docs_eval.h"
#include "engine/docs_gpu.h"
#include "engine/filter.h"
#include "transform/text.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/options.h"


struct genie_docs_results {
    size_t nQuery;
    genie_docs_hit **aaHit; /* per query, best first */
    uint32_t *anHit;
    genie_docs_stats stats;
};

/* ------------------------------------------------------------- driving */

typedef struct docs_job {
    const genie_docs *d;
    const uint64_t *aAllow; /* the documents that may be answered (engine/filter.h), or NULL */
    const char *const *azQuery;
    const size_t *anQuery;
    const genie_docs_options *opt;
    genie_docs_results *r;
} docs_job;

/* One query into r->aaHit[q] (docs_answer_fn). */
static int answer_one(void *ctx, docs_worker *w, size_t q)
{
    docs_job *j = ctx;
    int missing;
    long u = docs_query_terms(j->d, w, j->azQuery[q], j->anQuery[q], &missing);
    if (u < 0)
        return -1;
    w->heap.n = 0;
    w->aAllow = j->aAllow;
    if (u > 0 && !(j->opt->mode == GENIE_DOCS_AND && missing)) {
        if (j->opt->mode == GENIE_DOCS_AND)
            docs_eval_and(j->d, w, (size_t)u, j->opt->exhaustive, 0);
        else
            docs_eval_or(j->d, w, (size_t)u, j->opt->exhaustive);
    }
    genie_docs_hit *a = docs_topk_sorted(&w->heap);
    if (!a)
        return -1;
    j->r->aaHit[q] = a;
    j->r->anHit[q] = w->heap.n;
    return 0;
}

void genie_docs_options_init(genie_docs_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
    opt->k = 10;
}

genie_status genie_docs_search(const genie_docs *d, const char *const *queries, const size_t *lengths,
                               size_t n_queries, const genie_docs_options *opt, genie_docs_results **out)
{
    util_error_clear();
    *out = NULL;
    GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_docs_options, filter));
    if (opt->k < 1 || opt->k > GENIE_DOCS_MAX_K)
        return util_error(GENIE_EINVAL, "docs: k %u is not in 1..%u", opt->k, GENIE_DOCS_MAX_K);
    if (opt->mode != GENIE_DOCS_AND && opt->mode != GENIE_DOCS_OR)
        return util_error(GENIE_EINVAL, "docs: unknown mode %d", (int)opt->mode);
    double t0 = util_now();
    uint32_t k = opt->k < d->nDocs ? opt->k : (uint32_t)d->nDocs;
    genie_status rc = GENIE_OK;
    const uint64_t *aAllow = NULL;
    uint64_t *aAllowOwned = NULL;
    genie_docs_results *r = calloc(1, sizeof *r);
    if (!r)
        goto oom;
    r->nQuery = n_queries;
    r->aaHit = calloc(n_queries ? n_queries : 1, sizeof *r->aaHit);
    r->anHit = calloc(n_queries ? n_queries : 1, sizeof *r->anHit);
    if (!r->aaHit || !r->anHit)
        goto oom;
    r->stats.backend = GENIE_BACKEND_CPU;
    GENIE_TRY_GOTO(rc, filter_effective(d->idx, opt->filter, &aAllow, &aAllowOwned), fail);
    const engine_backend *be = NULL; /* a backend with a docs search of its own (a GPU), for AND queries */
    if (opt->mode == GENIE_DOCS_AND)
        GENIE_TRY_GOTO(rc, engine_backend_pick_cap(opt->backend, ENGINE_CAP(pDocs), &be), fail);
    if (be && k <= be->pDocs->nMaxK) {
        r->stats.backend = be->id;
        GENIE_TRY_GOTO(rc,
                       docs_search_gpu(d, be->pDocs, queries, lengths, n_queries, opt, aAllow, k, r->aaHit, r->anHit,
                                       &r->stats),
                       fail);
    } else {
        docs_job j = {.d = d, .aAllow = aAllow, .azQuery = queries, .anQuery = lengths, .opt = opt, .r = r};
        if (docs_run_queries(opt->threads, n_queries, k, answer_one, &j, &r->stats) != 0)
            goto oom;
    }
    r->stats.seconds = util_now() - t0;
    free(aAllowOwned);
    *out = r;
    return GENIE_OK;
oom:
    rc = util_error(GENIE_ENOMEM, "out of memory searching %zu docs queries", n_queries);
fail:
    free(aAllowOwned);
    genie_docs_results_free(r);
    return rc;
}

size_t genie_docs_results_queries(const genie_docs_results *r)
{
    return r->nQuery;
}

const genie_docs_hit *genie_docs_results_get(const genie_docs_results *r, size_t query, size_t *n)
{
    if (query >= r->nQuery) {
        *n = 0;
        return NULL;
    }
    *n = r->anHit[query];
    return r->aaHit[query];
}

void genie_docs_results_stats(const genie_docs_results *r, genie_docs_stats *out)
{
    *out = r->stats;
}

void genie_docs_results_free(genie_docs_results *r)
{
    if (!r)
        return;
    for (size_t q = 0; r->aaHit && q < r->nQuery; q++)
        free(r->aaHit[q]);
    free(r->aaHit);
    free(r->anHit);
    free(r);
}
