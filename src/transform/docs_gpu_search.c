/*
 * Docs queries on the GPU (engine/docs_gpu.h), and the CPU post-processing
 * of the queries the GPU hands back (Wang et al., "Efficient GPU-based
 * Query Processing with Pruned List Caching in Search Engines", sections
 * 3.1.4 and 3.4).
 *
 * The queries' terms are prepared here (the same terms, order and weights
 * as the CPU search: docs_query_terms), the cache is sized from the
 * options (S_c = cache_fraction * gpu_memory, S_b the rest) and filled by
 * the plan's steps that fit, and the GPU answers what it can.  A query it
 * hands back (a document of its shortest list lay past the cached prefix
 * of one of its lists, or its lists did not fit a batch) is finished on the
 * CPU from the full lists: from the position where the GPU stopped, with
 * the GPU's top-k as the starting heap.  Both halves compute the same
 * scores (engine/docs_score.h), so the answers are those of exhaustive
 * evaluation.  The post-processing runs on the CPU threads after the GPU
 * is done with the call's batches, not on a thread beside it (the paper's
 * overlap of the two is not built).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/docs_gpu.h"
#include "genie/docs.h"
#include "index/index.h"
#include "transform/docs_eval.h"
#include "util/clock.h"
#include "util/crc32c.h"
#include "util/error.h"

struct docs_gpu_slot {
    pthread_mutex_t lock;
    void *pResident;
};

struct docs_gpu_slot *docs_gpu_slot_new(void)
{
    struct docs_gpu_slot *s = calloc(1, sizeof *s);
    if (s && pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        s = NULL;
    }
    return s;
}

void docs_gpu_slot_free(struct docs_gpu_slot *s)
{
    if (!s)
        return;
    engine_docs_gpu_free(s->pResident);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

#define DEFAULT_GPU_MEMORY (1ull << 30)

/* The queries' terms, in the engine's form. */
static genie_status prepare(const genie_docs *d, const char *const *queries, const size_t *lengths, size_t n,
                            engine_docs_query *aQuery, engine_docs_term **paTerm)
{
    docs_worker w;
    memset(&w, 0, sizeof w);
    engine_docs_term *aTerm = NULL;
    size_t nTerm = 0, cap = 0;
    genie_status rc = GENIE_OK;
    for (size_t q = 0; q < n && rc == GENIE_OK; q++) {
        int missing;
        long u = docs_query_terms(d, &w, queries[q], lengths[q], &missing);
        if (u < 0) {
            rc = util_error(GENIE_ENOMEM, "out of memory preparing the docs queries");
            break;
        }
        if (missing)
            u = 0; /* AND: a word in no document, no answer */
        if (nTerm + (size_t)u > cap) {
            cap = 2 * (nTerm + (size_t)u) + 1024;
            engine_docs_term *a = realloc(aTerm, cap * sizeof *a);
            if (!a) {
                rc = util_error(GENIE_ENOMEM, "out of memory preparing the docs queries");
                break;
            }
            aTerm = a;
        }
        aQuery[q].first = (uint32_t)nTerm;
        aQuery[q].n = (uint32_t)u;
        for (long i = 0; i < u; i++) {
            size_t first, end;
            index_keyword_range(d->idx, w.aTerm[i].keyword, w.aTerm[i].keyword, &first, &end);
            aTerm[nTerm++] = (engine_docs_term){(uint32_t)first, w.aTerm[i].weight};
        }
        if (nTerm > UINT32_MAX)
            rc = util_error(GENIE_ERANGE, "docs GPU: too many query terms in one call");
    }
    free(w.aTerm);
    free(w.aPos);
    free(w.aRead);
    if (rc != GENIE_OK) {
        free(aTerm);
        return rc;
    }
    *paTerm = aTerm;
    return GENIE_OK;
}

/* The cache: each list's cached prefix under S_c (NULL: every list whole). */
static genie_status cache_prefixes(const genie_docs *d, const genie_docs_options *opt, uint64_t cacheBytes,
                                   uint64_t **paPrefix, uint64_t *pUsed)
{
    *paPrefix = NULL;
    if (!opt->plan && 8 * d->nPostings <= cacheBytes) {
        *pUsed = 8 * d->nPostings;
        return GENIE_OK;
    }
    uint64_t *a = calloc(d->nKeywords + 1, sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory sizing the GPU list cache");
    *pUsed = 0;
    if (opt->plan) {
        if (genie_docs_plan_lists(opt->plan) != d->nKeywords) {
            free(a);
            return util_error(GENIE_EINVAL, "docs: the cache plan is for another index");
        }
        genie_status rc = genie_docs_plan_prefixes(opt->plan, cacheBytes, a, pUsed);
        if (rc != GENIE_OK) {
            free(a);
            return rc;
        }
    }
    *paPrefix = a;
    return GENIE_OK;
}

typedef struct post_job {
    const genie_docs *d;
    const char *const *azQuery;
    const size_t *anQuery;
    const genie_docs_options *opt;
    uint32_t k;
    const engine_docs_request *req;
    genie_docs_hit **aaHit;
    uint32_t *anHit;
} post_job;

/* Query @p q's answer: the GPU's, or the GPU's continued on the CPU (docs_answer_fn). */
static int finish_one(void *ctx, docs_worker *w, size_t q)
{
    post_job *j = ctx;
    const engine_docs_outcome *o = &j->req->aOutcome[q];
    const genie_docs_hit *aGpu = j->req->aHit + q * j->k;
    w->heap.n = 0;
    for (uint32_t i = 0; i < o->nHit; i++)
        docs_topk_push(&w->heap, &aGpu[i]);
    if (o->finished) {
        w->stats.postings_read += o->read;
    } else {
        int missing;
        long u = docs_query_terms(j->d, w, j->azQuery[q], j->anQuery[q], &missing);
        if (u < 0)
            return -1;
        if (u > 0 && !missing)
            docs_eval_and(j->d, w, (size_t)u, j->opt->exhaustive, o->resume);
        w->stats.post_processed++;
    }
    genie_docs_hit *a = docs_topk_sorted(&w->heap);
    if (!a)
        return -1;
    j->aaHit[q] = a;
    j->anHit[q] = w->heap.n;
    return 0;
}

genie_status docs_search_gpu(const genie_docs *d, const char *const *queries, const size_t *lengths, size_t n,
                             const genie_docs_options *opt, uint32_t k, genie_docs_hit **aaHit, uint32_t *anHit,
                             genie_docs_stats *st)
{
    uint64_t mem = opt->gpu_memory ? opt->gpu_memory : DEFAULT_GPU_MEMORY;
    double frac = opt->cache_fraction > 0 ? opt->cache_fraction : 0.5;
    if (!(frac > 0 && frac < 1))
        return util_error(GENIE_EINVAL, "docs: cache fraction %g is not in (0, 1)", frac);
    if (n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "docs GPU: more than 2^32-1 queries in one call");
    uint64_t cacheBytes = (uint64_t)(frac * (double)mem);
    engine_docs_data data = {d->nDocs,      d->nPostings,    d->nKeywords, d->aListOffset, d->aPosting,
                             d->aTf,        d->aRecord,      d->aLength,   d->aPagerank,   d->aGs,
                             d->alpha,      d->k1,           d->b,         d->maxPagerank, d->avgLength};
    engine_docs_request req;
    memset(&req, 0, sizeof req);
    engine_docs_query *aQuery = malloc((n ? n : 1) * sizeof *aQuery);
    engine_docs_term *aTerm = NULL;
    uint64_t *aPrefix = NULL;
    genie_status rc = GENIE_OK;
    req.aHit = malloc((n ? n : 1) * (size_t)k * sizeof *req.aHit);
    req.aOutcome = calloc(n ? n : 1, sizeof *req.aOutcome);
    if (!aQuery || !req.aHit || !req.aOutcome) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu docs GPU queries", n);
        goto done;
    }
    GENIE_TRY_GOTO(rc, prepare(d, queries, lengths, n, aQuery, &aTerm), done);
    GENIE_TRY_GOTO(rc, cache_prefixes(d, opt, cacheBytes, &aPrefix, &st->cache_bytes), done);
    req.pData = &data;
    req.aPrefix = aPrefix;
    req.planId = aPrefix ? ((uint64_t)util_crc32c(0, aPrefix, d->nKeywords * sizeof *aPrefix) << 32) ^ st->cache_bytes
                         : UINT64_MAX;
    req.bufferBytes = mem - cacheBytes;
    req.k = k;
    req.exhaustive = opt->exhaustive;
    req.aQuery = aQuery;
    req.nQuery = (uint32_t)n;
    req.aTerm = aTerm;
    double t0 = util_now();
    pthread_mutex_lock(&d->pGpu->lock);
    rc = engine_docs_gpu_search(&d->pGpu->pResident, &req);
    pthread_mutex_unlock(&d->pGpu->lock);
    if (rc != GENIE_OK)
        goto done;
    double t1 = util_now();
    st->gpu_seconds = t1 - t0;
    st->batches = req.nBatch;
    st->bytes_moved = req.bytesMoved;
    post_job j = {.d = d, .azQuery = queries, .anQuery = lengths, .opt = opt, .k = k, .req = &req,
                  .aaHit = aaHit, .anHit = anHit};
    /* postings_total comes from the queries' lists below, for GPU and CPU answers alike */
    genie_docs_stats counts;
    memset(&counts, 0, sizeof counts);
    int failed = docs_run_queries(opt->threads, n, k, finish_one, &j, &counts);
    st->post_seconds = util_now() - t1;
    st->postings_read += counts.postings_read;
    st->post_processed += counts.post_processed;
    st->stopped_early += counts.stopped_early;
    st->docs_scored += counts.docs_scored;
    st->gpu_queries = n - st->post_processed;
    /* Totals over the queries' lists; a GPU answer stopped early when it
     * read less than its shortest list. */
    for (size_t q = 0; q < n; q++) {
        for (uint32_t i = 0; i < aQuery[q].n; i++) {
            uint32_t l = aTerm[aQuery[q].first + i].list;
            st->postings_total += d->aListOffset[l + 1] - d->aListOffset[l];
        }
        if (req.aOutcome[q].finished && aQuery[q].n) {
            uint32_t l0 = aTerm[aQuery[q].first].list;
            st->stopped_early += req.aOutcome[q].read < d->aListOffset[l0 + 1] - d->aListOffset[l0];
        }
    }
    if (failed)
        rc = util_error(GENIE_ENOMEM, "out of memory post-processing %zu docs queries", n);
done:
    free(aQuery);
    free(aTerm);
    free(aPrefix);
    free(req.aHit);
    free(req.aOutcome);
    return rc;
}
