/*
 * Docs queries on the GPU (engine/docs_gpu.h), and the CPU post-processing
 * of the queries the GPU hands back (Wang et al., "Efficient GPU-based
 * Query Processing with Pruned List Caching in Search Engines", sections
 * 3.1.4 and 3.4).
 *
 * The queries' terms are prepared here on the CPU threads (the same terms,
 * order and weights as the CPU search: docs_query_terms), the cache is
 * sized from the options (S_c = cache_fraction * gpu_memory, S_b the rest)
 * and filled by the plan's steps that fit (computed once per plan and
 * cache size, then kept in the handle's slot), and the GPU answers what it
 * can, batch by batch.  Each batch's queries are finished on the CPU
 * threads (one team for the call, which prepared the queries too) while
 * the device runs the next batch: a GPU answer is copied as
 * it is (the kernel sorts it best first); a query it hands back (a
 * document of its shortest list lay past the cached prefix of one of its
 * lists, or its lists did not fit a batch) is continued from the full
 * lists, from the position where the GPU stopped, with the GPU's top-k as
 * the starting heap.  Both halves compute the same scores
 * (engine/docs_score.h), so the answers are those of exhaustive
 * evaluation.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "genie/docs.h"
#include "index/index.h"
#include "transform/docs_eval.h"
#include "util/clock.h"
#include "util/error.h"

/* The handle's GPU state; the fields below the lock change under it. */
struct docs_gpu_slot {
    pthread_mutex_t lock;
    void *pResident;
    void (*xFree)(void *pResident); /* the xFree of the backend whose state pResident is */
    /* The cache applied last: plan serial (0: none) and S_c, and what they gave. */
    int hasPrefix;
    uint64_t planSerial, cacheBytes, used, planId, nextPlanId;
    uint64_t *aPrefix; /* NULL: every list whole */
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
    if (s->pResident)
        s->xFree(s->pResident);
    free(s->aPrefix);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

#define DEFAULT_GPU_MEMORY (1ull << 30)
/* Batches of a call, so that finishing one overlaps the device's next;
 * but not below DOCS_GPU_BATCH_MIN queries (a batch must fill the GPU). */
#define DOCS_GPU_BATCHES 4
#define DOCS_GPU_BATCH_MIN 1024

/* One call: the queries, their terms, and the batch being finished. */
typedef struct gpu_call {
    const genie_docs *d;
    const char *const *azQuery;
    const size_t *anQuery;
    const genie_docs_options *opt;
    const uint64_t *aAllow; /* the documents that may be answered (engine/filter.h), or NULL */
    uint32_t k;
    engine_docs_query *aQuery;
    engine_docs_term *aTerm;
    genie_docs_hit **aaHit;
    uint32_t *anHit;
    docs_team *team; /* the CPU threads, for the whole call */
    const uint64_t *aPrefix; /* the cache (NULL: every list whole) */
    const uint32_t *aIdx;
    const engine_docs_outcome *aOutcome;
    const genie_docs_hit *aHit;
} gpu_call;

static uint64_t list_len(const genie_docs *d, uint32_t list)
{
    return d->aListOffset[list + 1] - d->aListOffset[list];
}

/*
 * Query @p q's terms in the engine's form, at aTerm[aQuery[q].first ..],
 * which has room for one term per two bytes of the query (words are
 * separated), with what the cache means for them (engine_docs_query: m,
 * next0; so that the engine's serial batch building reads no postings)
 * (docs_answer_fn).
 */
static int prepare_one(void *ctx, docs_worker *w, size_t q)
{
    gpu_call *c = ctx;
    int missing;
    long u = docs_query_terms(c->d, w, c->azQuery[q], c->anQuery[q], &missing);
    if (u < 0)
        return -1;
    if (missing)
        u = 0; /* AND: a word in no document, no answer */
    engine_docs_query *Q = &c->aQuery[q];
    Q->n = (uint32_t)u;
    Q->m = UINT32_MAX;
    Q->next0 = 0;
    for (long i = 0; i < u; i++) {
        size_t first, end;
        index_keyword_range(c->d->idx, w->aTerm[i].keyword, w->aTerm[i].keyword, &first, &end);
        uint64_t start = w->aTerm[i].start, len = w->aTerm[i].end - start;
        uint64_t cached = c->aPrefix && c->aPrefix[first] < len ? c->aPrefix[first] : len;
        c->aTerm[Q->first + i] = (engine_docs_term){(uint32_t)first, w->aTerm[i].weight, len, cached};
        if (cached > 0 && cached < len) { /* pruned: membership known up to its last cached document */
            uint32_t last = c->d->aPosting[start + cached - 1];
            Q->m = last < Q->m ? last : Q->m;
            if (i == 0)
                Q->next0 = c->d->aPosting[start + cached];
        }
    }
    return 0;
}

/* The queries' terms, on the CPU threads (under the slot's lock: c->aPrefix is the slot's). */
static genie_status prepare(gpu_call *c, size_t n)
{
    uint64_t nTerm = 0;
    for (size_t q = 0; q < n; q++) {
        c->aQuery[q].first = (uint32_t)nTerm;
        c->aQuery[q].n = 0;
        nTerm += (c->anQuery[q] + 1) / 2;
        if (nTerm > UINT32_MAX)
            return util_error(GENIE_ERANGE, "docs GPU: too many query words in one call");
    }
    c->aTerm = malloc((nTerm ? nTerm : 1) * sizeof *c->aTerm);
    if (!c->aTerm)
        return util_error(GENIE_ENOMEM, "out of memory preparing the docs queries");
    if (docs_team_run(c->team, n, prepare_one, c) != 0)
        return util_error(GENIE_ENOMEM, "out of memory preparing the docs queries");
    return GENIE_OK;
}

/*
 * The cache under S_c = @p cacheBytes: each list's cached prefix (NULL:
 * every list whole) and an id for the engine, kept in the slot (under its
 * lock) while the plan and S_c stay the same.
 */
static genie_status cache_prefixes(const genie_docs *d, const genie_docs_options *opt, uint64_t cacheBytes)
{
    struct docs_gpu_slot *s = d->pGpu;
    uint64_t serial = opt->plan ? docs_plan_serial(opt->plan) : 0;
    if (s->hasPrefix && s->planSerial == serial && s->cacheBytes == cacheBytes)
        return GENIE_OK;
    s->hasPrefix = 0;
    free(s->aPrefix);
    s->aPrefix = NULL;
    if (!opt->plan && 8 * d->nPostings <= cacheBytes) {
        s->used = 8 * d->nPostings;
        s->planId = UINT64_MAX; /* every list whole */
    } else {
        s->aPrefix = calloc(d->nKeywords + 1, sizeof *s->aPrefix);
        if (!s->aPrefix)
            return util_error(GENIE_ENOMEM, "out of memory sizing the GPU list cache");
        s->used = 0;
        s->planId = UINT64_MAX - 1; /* nothing cached */
        if (opt->plan) {
            if (genie_docs_plan_lists(opt->plan) != d->nKeywords)
                return util_error(GENIE_EINVAL, "docs: the cache plan is for another index");
            GENIE_TRY(genie_docs_plan_prefixes(opt->plan, cacheBytes, s->aPrefix, &s->used));
            s->planId = s->nextPlanId++;
        }
    }
    s->planSerial = serial;
    s->cacheBytes = cacheBytes;
    s->hasPrefix = 1;
    return GENIE_OK;
}

/* Entry @p i of the batch: the GPU's answer, or the GPU's continued on the CPU (docs_answer_fn). */
static int finish_one(void *ctx, docs_worker *w, size_t i)
{
    gpu_call *c = ctx;
    size_t q = c->aIdx[i];
    const engine_docs_outcome *o = &c->aOutcome[i];
    const genie_docs_hit *aGpu = c->aHit ? c->aHit + i * c->k : NULL;
    if (o->finished) {
        genie_docs_hit *a = malloc((o->nHit ? o->nHit : 1) * sizeof *a);
        if (!a)
            return -1;
        memcpy(a, aGpu, o->nHit * sizeof *a); /* best first, as docs_topk_sorted gives */
        /* The counts docs_eval_and keeps (docs_count_reads) for the CPU's answers. */
        const engine_docs_query *Q = &c->aQuery[q];
        w->stats.postings_read += o->read;
        for (uint32_t j = 0; j < Q->n; j++)
            w->stats.postings_total += list_len(c->d, c->aTerm[Q->first + j].list);
        if (Q->n)
            w->stats.stopped_early += o->read < list_len(c->d, c->aTerm[Q->first].list);
        c->aaHit[q] = a;
        c->anHit[q] = o->nHit;
        return 0;
    }
    w->heap.n = 0;
    w->aAllow = c->aAllow;
    for (uint32_t j = 0; j < o->nHit; j++)
        docs_topk_push(&w->heap, &aGpu[j]);
    int missing;
    long u = docs_query_terms(c->d, w, c->azQuery[q], c->anQuery[q], &missing);
    if (u < 0)
        return -1;
    if (u > 0 && !missing)
        docs_eval_and(c->d, w, (size_t)u, c->opt->exhaustive, o->resume);
    w->stats.post_processed++;
    genie_docs_hit *a = docs_topk_sorted(&w->heap);
    if (!a)
        return -1;
    c->aaHit[q] = a;
    c->anHit[q] = w->heap.n;
    return 0;
}

/* A batch's queries, finished on the CPU threads (engine_docs_done_fn). */
static genie_status batch_done(void *ctx, const uint32_t *aIdx, const engine_docs_outcome *aOutcome,
                               const genie_docs_hit *aHit, uint32_t n)
{
    gpu_call *c = ctx;
    c->aIdx = aIdx;
    c->aOutcome = aOutcome;
    c->aHit = aHit;
    if (docs_team_run(c->team, n, finish_one, c) != 0)
        return util_error(GENIE_ENOMEM, "out of memory post-processing %u docs queries", n);
    return GENIE_OK;
}

genie_status docs_search_gpu(const genie_docs *d, const engine_docs_ops *ops, const char *const *queries,
                             const size_t *lengths, size_t n, const genie_docs_options *opt, const uint64_t *aAllow,
                             uint32_t k, genie_docs_hit **aaHit, uint32_t *anHit, genie_docs_stats *st)
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
    gpu_call c = {.d = d, .azQuery = queries, .anQuery = lengths, .opt = opt, .aAllow = aAllow, .k = k,
                  .aaHit = aaHit, .anHit = anHit};
    genie_status rc = GENIE_OK;
    double t0 = util_now();
    c.aQuery = malloc((n ? n : 1) * sizeof *c.aQuery);
    c.team = docs_team_new(docs_team_size(opt->threads, n), k);
    if (!c.aQuery || !c.team) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu docs GPU queries", n);
        goto done;
    }
    engine_docs_request req;
    memset(&req, 0, sizeof req);
    pthread_mutex_lock(&d->pGpu->lock);
    rc = cache_prefixes(d, opt, cacheBytes);
    double t1 = util_now(), t2 = t1;
    if (rc == GENIE_OK) {
        c.aPrefix = d->pGpu->aPrefix;
        rc = prepare(&c, n);
        t2 = util_now();
    }
    if (rc == GENIE_OK) {
        st->cache_bytes = d->pGpu->used;
        req.pData = &data;
        req.aPrefix = d->pGpu->aPrefix;
        req.planId = d->pGpu->planId;
        req.bufferBytes = mem - cacheBytes;
        req.k = k;
        req.exhaustive = opt->exhaustive;
        req.aAllow = aAllow;
        req.aQuery = c.aQuery;
        req.nQuery = (uint32_t)n;
        req.aTerm = c.aTerm;
        uint64_t per = (n + DOCS_GPU_BATCHES - 1) / DOCS_GPU_BATCHES;
        req.batchQueries = (uint32_t)(per > DOCS_GPU_BATCH_MIN ? per : DOCS_GPU_BATCH_MIN);
        req.xDone = batch_done;
        req.pDoneCtx = &c;
        struct docs_gpu_slot *s = d->pGpu;
        if (s->pResident && s->xFree != ops->xFree) { /* another backend's state */
            s->xFree(s->pResident);
            s->pResident = NULL;
        }
        s->xFree = ops->xFree;
        rc = ops->xSearch(&s->pResident, &req);
    }
    pthread_mutex_unlock(&d->pGpu->lock);
    st->gpu_seconds = util_now() - t2;
    st->prepare_seconds = t2 - t1;
    st->setup_seconds = (t1 - t0) + req.times.setup;
    st->batch_seconds = req.times.batch;
    st->h2d_seconds = req.times.h2d;
    st->kernel_seconds = req.times.kernel;
    st->wait_seconds = req.times.wait;
    st->post_seconds = req.times.done;
    st->batches = req.nBatch;
    st->bytes_moved = req.bytesMoved;
done:
    docs_team_free(c.team, st);
    st->gpu_queries = n - st->post_processed;
    free(c.aQuery);
    free(c.aTerm);
    return rc;
}
