/*
 * The vectors front-end: building an LSH index of dense vectors and the
 * search pipeline of Zhou et al. (GENIE) IV.
 *
 * Building: every base vector is hashed by the m functions of
 * vectors_lsh.c; function i's bucket b becomes keyword i * D + b
 * (vlsh_keywords), so each function is one attribute and an object has
 * exactly m keywords.  The FRONTEND section keeps the parameters and the
 * base vectors themselves (float32), so the index alone answers queries,
 * re-ranks and runs exact searches.  The base costs 4 * n * dim bytes
 * there.
 *
 * Searching: a query vector becomes m items, function i's covering
 * [i * D + b - r, i * D + b + r] (r = radius, l2 only, clipped to the
 * function's buckets), so MC(query, object) counts the functions under
 * which they collide (Eqn. 7's c).  genie_search() on any backend gives the
 * top-K objects by that count; their true distances to the query re-rank
 * them, nearest first, ties by smaller id, and the first k are returned.
 * The match-count step is exact on every backend, so CPU and GPU return
 * the same candidates and the same final neighbours.
 *
 * Its recall estimate (recall.h, recall_sample.h) perturbs nothing but
 * leaves each sampled vector out of its own answers and candidates
 * (leave-one-out): a query drawn like the data and not in the index, at
 * the distances the data points have from each other.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "engine/backend.h"
#include "engine/engine.h"
#include "engine/exact.h"
#include "engine/filter.h"
#include "engine/select.h"
#include "index/builder.h"
#include "index/index.h"
#include "index/live.h"
#include "transform/recall_sample.h"
#include "transform/vectors.h"
#include "transform/vectors_ivf.h"
#include "transform/vectors_lsh.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/finite.h"
#include "util/options.h"
#include "util/threads.h"

/* ------------------------------------------------------------- building */

genie_status genie_vectors_build(const genie_vectors *base, const genie_lsh_params *params,
                                 const genie_build_options *opt, const char *path)
{
    util_error_clear();
    if (base->n == 0)
        return util_error(GENIE_EINVAL, "no base vectors to index");
    if (base->n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "%llu vectors; an index holds at most 2^32 - 1",
                          (unsigned long long)base->n);
    GENIE_TRY(util_check_finite(base->data, base->n, base->dim, 0, "base"));
    vlsh h;
    GENIE_TRY(vlsh_init(&h, params, base->dim));
    genie_builder *b = NULL;
    uint32_t *aKw = NULL;
    unsigned char *aParam = NULL, *aBlob = NULL;
    size_t nParam = 0;
    genie_status rc;
    GENIE_TRY_GOTO(rc, vlsh_fit(&h, base, 0), done);
    GENIE_TRY_GOTO(rc, vlsh_keywords(&h, base->data, base->n, 0, &aKw), done);
    GENIE_TRY_GOTO(rc, genie_builder_new(&b, opt), done);
    uint32_t m = h.p.m;
    for (uint64_t i = 0; i < base->n; i++) {
        genie_object o = {aKw + i * m, m, 0, 0, NULL, 0};
        GENIE_TRY_GOTO(rc, genie_builder_add(b, &o), done);
    }
    GENIE_TRY_GOTO(rc, vlsh_encode(&h, base->n, &aParam, &nParam), done);
    size_t nVec = (size_t)base->n * base->dim * sizeof(float);
    if (!(aBlob = malloc(nParam + nVec))) {
        rc = util_error(GENIE_ENOMEM, "out of memory storing %llu vectors", (unsigned long long)base->n);
        goto done;
    }
    memcpy(aBlob, aParam, nParam);
    memcpy(aBlob + nParam, base->data, nVec);
    GENIE_TRY_GOTO(rc, builder_set_frontend(b, GENIE_TYPE_VECTORS, aBlob, nParam + nVec), done);
    free(aBlob);
    aBlob = NULL;
    rc = genie_builder_write(b, path);
done:
    vlsh_free(&h);
    genie_builder_free(b);
    free(aKw);
    free(aParam);
    free(aBlob);
    return rc;
}

/* ---------------------------------------------------------- the index */

genie_status vec_open(const genie_index *idx, vlsh *h, genie_vectors *base)
{
    if (idx->info.type != GENIE_TYPE_VECTORS)
        return util_error(GENIE_EINVAL, "not a vectors index (type %s)", genie_index_type_name(idx->info.type));
    if (idx->info.n_objects == 0)
        return util_error(GENIE_ECORRUPT, "vectors index without vectors");
    if (vivf_is_ivf(idx))
        return util_error(GENIE_EINVAL, "an inverted-file (IVF) vectors index has no LSH functions");
    return vlsh_decode(idx->aFrontend, idx->nFrontend, idx->info.n_objects, idx->info.max_object_length, h, base);
}

genie_status genie_vectors_index_params(const genie_index *idx, genie_lsh_params *out)
{
    util_error_clear();
    vlsh h;
    genie_vectors base;
    GENIE_TRY(vec_open(idx, &h, &base));
    *out = h.p;
    vlsh_free(&h);
    return GENIE_OK;
}

genie_status genie_vectors_index_base(const genie_index *idx, genie_vectors *out)
{
    util_error_clear();
    if (vivf_is_ivf(idx)) {
        vivf *st;
        GENIE_TRY(vivf_get(idx, &st));
        *out = (genie_vectors){st->ix.n, st->ix.dim, (float *)(uintptr_t)st->ix.aVec};
        return GENIE_OK;
    }
    vlsh h;
    GENIE_TRY(vec_open(idx, &h, out));
    vlsh_free(&h);
    return GENIE_OK;
}

/* ------------------------------------------------------------ searching */

typedef struct rerank_job {
    const genie_results *res;
    const genie_vectors *base, *q;
    const float *aAdded; /* a live index's added vectors, ids base->n ... (live_vectors); NULL when none */
    genie_metric metric;
    uint32_t k, K;
    genie_neighbor *out;
    uint32_t *aN;
    atomic_size_t next;
    atomic_int failed;
} rerank_job;

static void rerank_worker(void *ctx, unsigned t)
{
    (void)t;
    rerank_job *job = ctx;
    uint64_t *aKey = malloc((size_t)job->k * sizeof *aKey);
    genie_hit *aHit = malloc((size_t)job->k * sizeof *aHit);
    if (!aKey || !aHit) {
        atomic_store(&job->failed, 1);
        goto done;
    }
    for (;;) {
        size_t i = atomic_fetch_add(&job->next, 1);
        if (i >= job->q->n)
            break;
        size_t nCand;
        const genie_hit *aCand = genie_results_get(job->res, i, &nCand);
        select_heap heap;
        select_reset(&heap, aKey, job->k);
        const float *pq = job->q->data + i * job->q->dim;
        for (size_t c = 0; c < nCand; c++) {
            uint32_t id = aCand[c].object;
            const float *v = id < job->base->n ? job->base->data + (size_t)id * job->base->dim
                                               : job->aAdded + (size_t)(id - job->base->n) * job->base->dim;
            float d = genie_vector_distance(job->metric, v, pq, job->base->dim);
            select_push(&heap, select_key(UINT32_MAX - exact_key(d), id));
        }
        size_t n = select_finish(&heap, aHit);
        for (size_t j = 0; j < n; j++) {
            job->out[i * job->k + j].id = aHit[j].object;
            job->out[i * job->k + j].distance = exact_key_value(UINT32_MAX - aHit[j].count);
        }
        job->aN[i] = (uint32_t)n;
    }
done:
    free(aKey);
    free(aHit);
}

/*
 * The queries' keywords: on the search's GPU when its backend @p be hashes
 * (pLsh: the l2 and cosine families, the CPU's keywords bit for bit), else
 * on the CPU; @p be NULL: the CPU.
 */
static genie_status query_keywords(const engine_backend *be, const vlsh *h, const genie_vectors *queries,
                                   const genie_search_options *opt, uint32_t **pOut)
{
    if (!be || !be->pLsh || h->p.metric == GENIE_METRIC_L1 || queries->n == 0)
        return vlsh_keywords(h, queries->data, queries->n, opt->threads, pOut);
    uint32_t *aKw = malloc((size_t)queries->n * h->p.m * sizeof *aKw);
    if (!aKw)
        return util_error(GENIE_ENOMEM, "out of memory hashing %llu vectors", (unsigned long long)queries->n);
    engine_lsh_batch b = {.metric = h->p.metric, .dim = h->dim, .m = h->p.m, .D = h->D, .bits = h->p.bits,
                          .aProj = h->aProj, .aLo = h->aLo, .aW = h->aW, .aShift = h->aShift,
                          .aVec = queries->data, .n = queries->n, .aKw = aKw};
    int device = opt->gpus && opt->n_gpus ? opt->gpus[0] : 0;
    genie_status rc = be->pLsh->xKeywords(device, &b);
    if (rc != GENIE_OK) {
        free(aKw);
        return rc;
    }
    *pOut = aKw;
    return GENIE_OK;
}

/* Queries whose items a thread writes at a time, and queries added to the batch at a time. */
#define ITEMS_GRAB 256u
#define ITEMS_CHUNK 65536u

typedef struct items_job {
    const vlsh *h;
    const uint32_t *aKw; /* the chunk's keywords, m per query */
    uint32_t radius;
    size_t n;            /* queries in the chunk */
    genie_item *aItem;   /* m per query */
    atomic_size_t next;
} items_job;

/* Each query's items: per function, the buckets within the radius of its keyword's. */
static void items_worker(void *ctx, unsigned t)
{
    (void)t;
    items_job *j = ctx;
    uint32_t m = j->h->p.m, D = j->h->D, r = j->radius;
    for (;;) {
        size_t i0 = atomic_fetch_add(&j->next, ITEMS_GRAB);
        if (i0 >= j->n)
            return;
        size_t i1 = j->n - i0 < ITEMS_GRAB ? j->n : i0 + ITEMS_GRAB;
        for (size_t i = i0; i < i1; i++) {
            genie_item *aItem = j->aItem + i * m;
            for (uint32_t f = 0; f < m; f++) {
                uint32_t b = j->aKw[i * m + f] - f * D;
                uint32_t lo = b > r ? b - r : 0, hi = D - 1 - b > r ? b + r : D - 1;
                aItem[f] = (genie_item){f * D + lo, f * D + hi, 1};
            }
        }
    }
}

/*
 * The queries of the keywords @p aKw (m per vector, @p n vectors) with
 * @p radius into @p q: items written on up to @p nThread threads, a chunk
 * of ITEMS_CHUNK queries at a time, each chunk added in one call.
 */
static genie_status keyword_queries(const vlsh *h, const uint32_t *aKw, size_t n, uint32_t radius, unsigned nThread,
                                    genie_queries *q)
{
    uint32_t m = h->p.m;
    size_t nChunk = n < ITEMS_CHUNK ? n : ITEMS_CHUNK;
    genie_item *aItem = malloc((nChunk ? nChunk : 1) * m * sizeof *aItem);
    uint64_t *aOff = malloc((nChunk + 1) * sizeof *aOff);
    genie_status rc = GENIE_OK;
    if (!aItem || !aOff) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the items of %zu queries", nChunk);
        goto done;
    }
    for (size_t i = 0; i <= nChunk; i++)
        aOff[i] = (uint64_t)i * m;
    for (size_t c0 = 0; c0 < n; c0 += nChunk) {
        size_t nc = n - c0 < nChunk ? n - c0 : nChunk;
        items_job j = {.h = h, .aKw = aKw + c0 * m, .radius = radius, .n = nc, .aItem = aItem};
        atomic_init(&j.next, 0);
        size_t nGrab = (nc + ITEMS_GRAB - 1) / ITEMS_GRAB;
        unsigned nt = nThread ? nThread : util_ncores();
        util_parallel_run(nt < nGrab ? nt : (unsigned)nGrab, items_worker, &j);
        GENIE_TRY_GOTO(rc, genie_queries_add_many(q, aItem, aOff, nc, 1), done);
    }
done:
    free(aItem);
    free(aOff);
    return rc;
}

/*
 * The top-@p K objects by match count for each query (the items above with
 * @p radius) among the objects of parts [@p first_part, + @p n_parts)
 * (genie_search_parts), on @p opt's backend; its k is replaced by K.
 * @param[out] pRes  free with genie_results_free();
 * @param[out] pSt   the engine's stats;  @param[out] pHashSeconds  hashing.
 */
static genie_status vec_candidates(const genie_index *idx, uint32_t first_part, uint32_t n_parts, const vlsh *h,
                                   const genie_vectors *queries, uint32_t radius, const genie_search_options *opt,
                                   uint32_t K, genie_results **pRes, genie_search_stats *pSt, double *pHashSeconds)
{
    *pRes = NULL;
    uint32_t *aKw = NULL;
    genie_queries *q = NULL;
    genie_status rc;
    /* Picked first: loading the GPU module (a CUDA context) is not hashing; the search needs it anyway. */
    const engine_backend *be = NULL;
    if (engine_backend_pick(opt->backend, &be) != GENIE_OK) {
        be = NULL; /* the search below reports why */
        util_error_clear();
    }
    double t0 = util_now();
    GENIE_TRY_GOTO(rc, query_keywords(be, h, queries, opt, &aKw), done);
    GENIE_TRY_GOTO(rc, genie_queries_new(&q), done);
    GENIE_TRY_GOTO(rc, keyword_queries(h, aKw, queries->n, radius, opt->threads, q), done);
    genie_search_options o = *opt;
    o.k = K;
    *pHashSeconds = util_now() - t0;
    rc = genie_search_parts(idx, first_part, n_parts, q, &o, pRes, pSt);
done:
    genie_queries_free(q);
    free(aKw);
    return rc;
}

/*
 * The objects of parts [first, first + n) of @p idx: one range of ids,
 * since parts cut the objects by id.  @return GENIE_OK or GENIE_EINVAL.
 */
static genie_status part_range(const genie_index *idx, uint32_t first, uint32_t n, uint64_t *pFirst,
                               uint64_t *pN)
{
    uint32_t nPart = genie_index_parts(idx);
    if (n == 0 || first >= nPart || n > nPart - first)
        return util_error(GENIE_EINVAL, "%u parts from part %u: the index has %u parts, numbered from 0 (n_parts >= 1)",
                          n, first, nPart);
    genie_part_info a, b;
    GENIE_TRY(genie_index_part_info(idx, first, &a));
    GENIE_TRY(genie_index_part_info(idx, first + n - 1, &b));
    *pFirst = a.first_object;
    *pN = b.first_object + b.n_objects - a.first_object;
    return GENIE_OK;
}

/*
 * The vectors a live index's log added (index/live.h): the tail of its
 * delta's FRONTEND, @p dim floats each, ids idx->info.n_objects on; NULL
 * when none.  (The delta's FRONTEND is the base's parameters followed by
 * the added objects' vectors.)
 */
static const float *live_vectors(const genie_index *idx, uint32_t dim, uint64_t *pn)
{
    const index_live *l = idx->pLive;
    *pn = l ? l->nAdded : 0;
    if (!*pn)
        return NULL;
    const genie_index *d = l->pDelta;
    return (const float *)(const void *)(d->aFrontend + d->nFrontend - *pn * dim * sizeof(float));
}

/* Merge the per-query answers @p b (ids + @p idBase, nB[i] each) into @p a (nA[i]), keeping k, by (distance, id). */
static genie_status merge_neighbors(genie_neighbor *a, uint32_t *nA, const genie_neighbor *b, const uint32_t *nB,
                                    uint64_t nQuery, uint32_t k, uint32_t idBase)
{
    genie_neighbor *t = malloc((size_t)k * sizeof *t);
    if (!t)
        return util_error(GENIE_ENOMEM, "out of memory merging neighbours");
    for (uint64_t q = 0; q < nQuery; q++) {
        const genie_neighbor *x = a + q * k, *y = b + q * k;
        uint32_t i = 0, j = 0, n = 0;
        while (n < k && (i < nA[q] || j < nB[q])) {
            /* A tie goes to a's: its ids are all smaller. */
            if (j >= nB[q] || (i < nA[q] && exact_key(x[i].distance) <= exact_key(y[j].distance))) {
                t[n++] = x[i++];
            } else {
                t[n] = y[j++];
                t[n++].id += idBase;
            }
        }
        memcpy(a + q * k, t, n * sizeof *t);
        nA[q] = n;
    }
    free(t);
    return GENIE_OK;
}

/*
 * Exact search of the objects [first, first + n) alone: the base vectors
 * of that range (a view), ids shifted back to the index's.  The whole
 * index keeps its base resident on the GPU between searches (the index's
 * device state); a range is uploaded for each search.
 */
static genie_status exact_range(const genie_index *idx, const genie_vectors *base, uint64_t first, uint64_t n,
                                const genie_vectors *queries, genie_metric metric, uint32_t k,
                                const genie_vsearch_options *opt, genie_neighbor *out, uint32_t *aN,
                                genie_backend *pUsed)
{
    int whole = first == 0 && n == base->n;
    genie_vectors range = {n, base->dim, base->data + (size_t)first * base->dim};
    /* Exact search runs on one GPU: the first of a list. */
    int device = opt->search.gpus && opt->search.n_gpus ? opt->search.gpus[0] : 0;
    const uint64_t *aAllow, *aRange;
    uint64_t *aOwned, *aRangeOwned = NULL;
    GENIE_TRY(filter_effective(idx, opt->search.filter, &aAllow, &aOwned));
    genie_status rc = filter_slice(aAllow, first, n, &aRange, &aRangeOwned);
    if (rc == GENIE_OK)
        rc = exact_search_allowed(whole ? idx : NULL, &range, aRange, queries, metric, opt->precision, k,
                                  opt->search.backend, device, opt->search.threads, out, pUsed, NULL);
    uint64_t nAllowed = filter_count_range(aRange, 0, n);
    free(aOwned);
    free(aRangeOwned);
    GENIE_TRY(rc);
    uint32_t kEff = k < nAllowed ? k : (uint32_t)nAllowed;
    for (uint64_t i = 0; i < queries->n; i++) {
        aN[i] = kEff;
        for (uint32_t j = 0; j < kEff && !whole; j++)
            out[i * k + j].id += (uint32_t)first;
    }
    return GENIE_OK;
}

/*
 * Exact search of objects [first, first + n) of @p idx's file, and of the
 * vectors its log added when @p withAdded (merged: their ids follow the
 * file's).  On a GPU the added vectors stay resident in the device slot
 * of the delta (an index of its own, index/live.h), so a search uploads
 * neither the file's vectors nor the delta's again.
 */
static genie_status exact_live(const genie_index *idx, const genie_vectors *base, uint64_t first, uint64_t n,
                               int withAdded, const genie_vectors *queries, genie_metric metric, uint32_t k,
                               const genie_vsearch_options *opt, genie_neighbor *out, uint32_t *aN,
                               genie_backend *pUsed)
{
    uint64_t nAdded;
    const float *aAdded = live_vectors(idx, base->dim, &nAdded);
    if (n)
        GENIE_TRY(exact_range(idx, base, first, n, queries, metric, k, opt, out, aN, pUsed));
    else
        memset(aN, 0, queries->n * sizeof *aN);
    if (!withAdded || !nAdded)
        return GENIE_OK;
    genie_vectors added = {nAdded, base->dim, (float *)(uintptr_t)aAdded}; /* a view: read only */
    genie_neighbor *aB = malloc((size_t)(queries->n ? queries->n : 1) * k * sizeof *aB);
    uint32_t *nB = malloc((size_t)(queries->n ? queries->n : 1) * sizeof *nB);
    const uint64_t *aAllow, *aSlice;
    uint64_t *aOwned = NULL, *aSliceOwned = NULL;
    genie_status rc = aB && nB ? GENIE_OK : util_error(GENIE_ENOMEM, "out of memory for %llu queries",
                                                       (unsigned long long)queries->n);
    if (rc == GENIE_OK)
        rc = filter_effective(idx, opt->search.filter, &aAllow, &aOwned);
    if (rc == GENIE_OK)
        rc = filter_slice(aAllow, base->n, nAdded, &aSlice, &aSliceOwned);
    int device = opt->search.gpus && opt->search.n_gpus ? opt->search.gpus[0] : 0;
    if (rc == GENIE_OK)
        rc = exact_search_allowed(idx->pLive->pDelta, &added, aSlice, queries, metric, opt->precision, k,
                                  opt->search.backend, device, opt->search.threads, aB, pUsed, NULL);
    uint64_t nAllowed = filter_count_range(aSlice, 0, nAdded);
    for (uint64_t i = 0; rc == GENIE_OK && i < queries->n; i++)
        nB[i] = k < nAllowed ? k : (uint32_t)nAllowed;
    if (rc == GENIE_OK)
        rc = merge_neighbors(out, aN, aB, nB, queries->n, k, (uint32_t)base->n);
    free(aOwned);
    free(aSliceOwned);
    free(aB);
    free(nB);
    return rc;
}

/*
 * An inverted-file index: its own search of parts [firstPart, firstPart +
 * nParts) (vectors_ivf.c), or the exact search of their stored vectors,
 * objects [first, first + nObj).
 */
static genie_status ivf_search_or_exact(const genie_index *idx, uint32_t firstPart, uint32_t nParts, uint64_t first,
                                        uint64_t nObj, const genie_vectors *queries, const genie_vsearch_options *opt,
                                        genie_neighbor *out, uint32_t *aN, genie_search_stats *pStats, double tStart)
{
    genie_search_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.recall_estimate = -1;
    stats.recall_edit_rate = -1;
    vivf *st;
    genie_status rc = vivf_get(idx, &st);
    if (rc == GENIE_OK && queries->n && queries->dim != st->ix.dim)
        rc = util_error(GENIE_EINVAL, "queries have %u dimensions, the index's vectors %u", queries->dim, st->ix.dim);
    if (rc == GENIE_OK && opt->exact && (opt->nprobe || opt->candidates || opt->recall > 0 || opt->radius))
        rc = util_error(GENIE_EINVAL, "exact search takes no nprobe, candidates, radius or recall target");
    if (rc == GENIE_OK && opt->exact) {
        genie_vectors base = {st->ix.n, st->ix.dim, (float *)(uintptr_t)st->ix.aVec};
        rc = exact_live(idx, &base, first, nObj, firstPart + nParts == idx->nPart, queries, st->ix.metric, opt->k, opt,
                        out, aN, &stats.backend);
        stats.verified = queries->n * nObj;
        stats.rerank_seconds = util_now() - tStart;
    } else if (rc == GENIE_OK) {
        double t0 = util_now();
        rc = vivf_search(idx, st, firstPart, nParts, queries, opt, out, aN, &stats);
        stats.match_seconds = util_now() - t0;
    }
    stats.total_seconds = util_now() - tStart;
    if (pStats)
        *pStats = stats;
    return rc;
}

genie_status genie_vectors_search(const genie_index *idx, const genie_vectors *queries,
                                  const genie_vsearch_options *opt, genie_neighbor *out, uint32_t *aN,
                                  genie_search_stats *pStats)
{
    return genie_vectors_search_parts(idx, 0, genie_index_parts(idx), queries, opt, out, aN, pStats);
}

void genie_vsearch_options_init(genie_vsearch_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
    genie_search_options_init(&opt->search);
    opt->k = 10;
}

genie_status genie_vectors_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                        const genie_vectors *queries, const genie_vsearch_options *opt,
                                        genie_neighbor *out, uint32_t *aN, genie_search_stats *pStats)
{
    util_error_clear();
    GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_vsearch_options, nprobe));
    GENIE_TRY(UTIL_OPTIONS_CHECK(&opt->search, genie_search_options, filter));
    double tStart = util_now();
    genie_search_stats stats;
    memset(&stats, 0, sizeof stats);
    uint64_t first = 0, nObj = 0;
    GENIE_TRY(part_range(idx, first_part, n_parts, &first, &nObj));
    GENIE_TRY(util_check_finite(queries->data, queries->n, queries->dim, opt->search.threads, "query"));
    if (vivf_is_ivf(idx))
        return ivf_search_or_exact(idx, first_part, n_parts, first, nObj, queries, opt, out, aN, pStats, tStart);
    if (opt->nprobe)
        return util_error(GENIE_EINVAL, "nprobe %u: an LSH index has no lists (build with --ivf)", opt->nprobe);
    vlsh h;
    genie_vectors base;
    GENIE_TRY(vec_open(idx, &h, &base));
    genie_results *res = NULL;
    genie_status rc = GENIE_OK;
    uint32_t k = opt->k, K = opt->candidates ? opt->candidates : (opt->k > UINT32_MAX / 10 ? UINT32_MAX : opt->k * 10);
    if (queries->n && queries->dim != base.dim) {
        rc = util_error(GENIE_EINVAL, "queries have %u dimensions, the index's vectors %u", queries->dim, base.dim);
        goto done;
    }
    if (k == 0 || K < k) {
        rc = util_error(GENIE_EINVAL, "k = %u, K = %u candidates: need 1 <= k <= K", k, K);
        goto done;
    }
    if (opt->radius && h.p.metric != GENIE_METRIC_L2) {
        rc = util_error(GENIE_EINVAL, "radius %u: neighbouring buckets exist for l2 only (this index is %s)",
                        opt->radius, genie_metric_name(h.p.metric));
        goto done;
    }
    uint32_t radius = opt->radius;
    int exact = opt->exact;
    stats.recall_estimate = -1;
    stats.recall_edit_rate = -1;
    GENIE_TRY_GOTO(rc,
                   recall_check_target(opt->recall, k, opt->exact,
                                       opt->candidates ? "the candidate count" : opt->radius ? "the radius" : NULL),
                   done);
    double target = opt->recall;
    if (target == 0 && !opt->exact && !opt->candidates && !opt->radius && k <= RECALL_KMAX) {
        /* The index's default target, when its estimate is at hand (never computed here: a plain search
         * must not take the estimate's seconds); else K = 10 k, with no target (docs/VECTORS.md). */
        const recall_estimate *e;
        GENIE_TRY_GOTO(rc, recall_at_hand(idx, opt->search.threads, &e), done);
        if (e)
            target = h.p.recall;
    }
    if (target > 0) {
        recall_plan plan;
        GENIE_TRY_GOTO(rc, recall_plan_for(idx, k, target, -1, opt->search.threads, vec_recall_sample, &plan), done);
        exact = plan.exact;
        K = plan.K;
        radius = plan.radius;
        stats.recall_estimate = plan.recall;
        stats.recall_target = target;
    }
    int withAdded = first_part + n_parts == genie_index_parts(idx);
    if (exact) {
        rc = exact_live(idx, &base, first, nObj, withAdded, queries, h.p.metric, k, opt, out, aN, &stats.backend);
        stats.rerank_seconds = util_now() - tStart;
        stats.verified = queries->n * nObj; /* every distance, filtered out or not (the GEMM computes them all) */
        goto done;
    }
    stats.candidates = K;
    stats.radius = radius;
    if (queries->n == 0)
        goto done;
    double tHash;
    genie_search_stats st;
    GENIE_TRY_GOTO(rc, vec_candidates(idx, first_part, n_parts, &h, queries, radius, &opt->search, K, &res, &st, &tHash),
                   done);
    engine_stats_add(&stats, &st);
    double t2 = util_now();
    {
        uint64_t nAdded;
        rerank_job job = {.res = res, .base = &base, .aAdded = live_vectors(idx, base.dim, &nAdded), .q = queries,
                          .metric = h.p.metric, .k = k, .K = K, .out = out, .aN = aN};
        atomic_init(&job.next, 0);
        atomic_init(&job.failed, 0);
        util_parallel_run(opt->search.threads ? opt->search.threads : util_ncores(), rerank_worker, &job);
        if (atomic_load(&job.failed))
            rc = util_error(GENIE_ENOMEM, "out of memory re-ranking");
    }
    stats.prepare_seconds = tHash;
    stats.rerank_seconds = util_now() - t2;
    stats.verified = engine_results_hits(res);
done:
    stats.total_seconds = util_now() - tStart;
    if (pStats)
        *pStats = stats;
    vlsh_free(&h);
    genie_results_free(res);
    return rc;
}

/* ------------------------------------------------------------- Eqn. 9 */

/* The window of counts c with |c/m - s| <= eps, clamped to [0, m]. */
static void eps_window(uint32_t m, double s, double eps, double *pLo, double *pHi)
{
    double lo = ceil((s - eps) * m - 1e-9), hi = floor((s + eps) * m + 1e-9);
    *pLo = lo < 0 ? 0 : lo;
    *pHi = hi > m ? m : hi;
}

/* Pr[c] for c ~ Binomial(m, s), 0 outside [0, m]. */
static double binomial_pmf(uint32_t m, double s, double c)
{
    if (c < 0 || c > m)
        return 0;
    return exp(lgamma(m + 1.0) - lgamma(c + 1) - lgamma(m - c + 1) + c * log(s) + (m - c) * log1p(-s));
}

/* Pr[|c/m - s| <= eps] for c ~ Binomial(m, s), summed in log space. */
static double within_eps(uint32_t m, double s, double eps)
{
    double lo, hi, p = 0;
    eps_window(m, s, eps, &lo, &hi);
    for (double c = lo; c <= hi; c++)
        p += binomial_pmf(m, s, c);
    return p;
}

/* The most hash functions genie_lsh_hash_count() answers: an index of more
 * would hold n * m postings, far beyond any useful size. */
#define LSH_MAX_FUNCTIONS 100000u

/*
 * The smallest m <= LSH_MAX_FUNCTIONS with within_eps(m, s, eps) >= target,
 * or 0 when there is none.  Summing the window afresh for every m costs
 * O(eps m) each, O(eps m^2) in all (seconds at eps = 0.01); instead the
 * window's sum moves from m to m + 1 by Pascal's rule, pmf_{m+1}(c) =
 * (1 - s) pmf_m(c) + s pmf_m(c - 1), touching only the window's ends, and
 * is summed afresh every 1,024 steps and whenever it lies near the target,
 * so every decision is within_eps's own.
 */
static uint32_t smallest_m(double s, double eps, double target)
{
    double lo, hi;
    eps_window(1, s, eps, &lo, &hi);
    double w = within_eps(1, s, eps); /* the sum over [lo, hi] of pmf_m */
    for (uint32_t m = 1; m <= LSH_MAX_FUNCTIONS; m++) {
        if (fabs(w - target) < 1e-9 || m % 1024 == 0)
            w = within_eps(m, s, eps);
        if (w >= target)
            return m;
        double lo2, hi2;
        eps_window(m + 1, s, eps, &lo2, &hi2);
        double a = w; /* the sum of pmf_m over [lo2, hi2] */
        for (double c = lo; c < lo2; c++)
            a -= binomial_pmf(m, s, c);
        for (double c = hi + 1; c <= hi2; c++)
            a += binomial_pmf(m, s, c);
        double b = a - binomial_pmf(m, s, hi2) + binomial_pmf(m, s, lo2 - 1); /* over [lo2 - 1, hi2 - 1] */
        w = (1 - s) * a + s * b;
        lo = lo2;
        hi = hi2;
    }
    return 0;
}

genie_status genie_lsh_hash_count(double epsilon, double delta, uint32_t *pM, double *pWorst)
{
    util_error_clear();
    if (!(epsilon > 0 && epsilon < 1) || !(delta > 0 && delta < 1))
        return util_error(GENIE_EINVAL, "epsilon = %g, delta = %g: both must lie in (0, 1)", epsilon, delta);
    uint32_t best = 0;
    double worst = 0.5;
    for (int i = 1; i <= 99; i++) {
        double s = i / 100.0;
        uint32_t m = smallest_m(s, epsilon, 1 - delta);
        if (m == 0)
            return util_error(GENIE_ERANGE,
                              "epsilon = %g, delta = %g need more than %u hash functions (at similarity %.2f): "
                              "choose a larger epsilon or delta",
                              epsilon, delta, LSH_MAX_FUNCTIONS, s);
        if (m > best) {
            best = m;
            worst = s;
        }
    }
    *pM = best;
    if (pWorst)
        *pWorst = worst;
    return GENIE_OK;
}

/* ------------------------------------------------------- recall estimate */

/* Float distances as ordered integers (non-negative floats order as their bits; others are clamped). */
static uint32_t distance_key(float d)
{
    uint32_t v;
    if (!(d > 0))
        return 0;
    memcpy(&v, &d, 4);
    return v;
}

/*
 * The rows of the estimate (recall_rows_fn), leave-one-out: the
 * pseudo-query is the sampled base vector itself, left out of its exact
 * answers and of its candidates (the later candidates move up one place);
 * l2 has one curve per radius 0..RECALL_RADIUS_MAX.
 */
static genie_status vec_recall_rows(const genie_index *idx, unsigned threads, recall_work *w)
{
    recall_estimate *e = w->e;
    vlsh h;
    genie_vectors base, pq = {0, 0, NULL};
    GENIE_TRY(vec_open(idx, &h, &base));
    uint32_t S = e->nSample, dim = base.dim;
    genie_neighbor *aNN = NULL;
    genie_results *res = NULL;
    genie_status rc = GENIE_OK;
    e->nCurve = h.p.metric == GENIE_METRIC_L2 ? RECALL_RADIUS_MAX + 1 : 1;
    /* The others: at most n - 1 candidates and answers (none when n = 1: every row is empty). */
    uint64_t nOther = base.n - 1;
    e->nCandMax = nOther < RECALL_KMAX_CANDIDATES ? (uint32_t)(nOther ? nOther : 1) : RECALL_KMAX_CANDIDATES;
    uint32_t kT = base.n < e->kMax + 1 ? (uint32_t)base.n : e->kMax + 1; /* the answers, self included */
    pq.data = malloc((size_t)S * dim * sizeof *pq.data);
    aNN = malloc((size_t)S * kT * sizeof *aNN);
    if (!pq.data || !aNN) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %u pseudo-queries of %u dimensions", S, dim);
        goto done;
    }
    pq.n = S;
    pq.dim = dim;
    for (uint32_t i = 0; i < S; i++)
        memcpy(pq.data + (size_t)i * dim, base.data + (size_t)w->aId[i] * dim, (size_t)dim * sizeof *pq.data);
    GENIE_TRY_GOTO(rc, genie_exact_search(&base, &pq, h.p.metric, kT, GENIE_BACKEND_CPU, threads, aNN, NULL), done);
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = threads;
    uint32_t K = nOther ? e->nCandMax + 1 : 1;
    for (uint32_t c = 0; c < e->nCurve; c++) {
        genie_search_stats st;
        double tHash;
        GENIE_TRY_GOTO(rc, vec_candidates(idx, 0, genie_index_parts(idx), &h, &pq, c, &opt, K, &res, &st, &tHash), done);
        for (uint32_t q = 0; q < S; q++) {
            const float *v = pq.data + (size_t)q * dim;
            /* True distances of the others, recomputed as the re-rank computes them, then sorted. */
            uint32_t nT = 0;
            for (uint32_t i = 0; i < kT && nT < e->kMax && nOther; i++) {
                uint32_t id = aNN[(size_t)q * kT + i].id;
                if (id == w->aId[q])
                    continue;
                float d = genie_vector_distance(h.p.metric, base.data + (size_t)id * dim, v, dim);
                w->aT[nT++] = (recall_key){0, id, distance_key(d), 0};
            }
            for (uint32_t i = 1; i < nT; i++) /* insertion sort: the list is nearly sorted already */
                for (uint32_t j = i; j > 0 && w->aT[j - 1].score0 > w->aT[j].score0; j--) {
                    recall_key t = w->aT[j];
                    w->aT[j] = w->aT[j - 1];
                    w->aT[j - 1] = t;
                }
            size_t nH, nC = 0;
            const genie_hit *aH = genie_results_get(res, q, &nH);
            for (size_t i = 0; i < nH && nC < e->nCandMax && nOther; i++) {
                if (aH[i].object == w->aId[q])
                    continue;
                float d = genie_vector_distance(h.p.metric, base.data + (size_t)aH[i].object * dim, v, dim);
                w->aC[nC++] = (recall_key){aH[i].count, aH[i].object, distance_key(d), 0};
            }
            recall_sort_candidates(w->aC, nC);
            GENIE_TRY_GOTO(rc, recall_add_row(w, nC, nT, 0, recall_distance_better), done);
        }
        genie_results_free(res);
        res = NULL;
    }
done:
    genie_results_free(res);
    vlsh_free(&h);
    free(pq.data);
    free(aNN);
    return rc;
}

genie_status vec_recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e)
{
    return recall_sample(idx, threads, vec_recall_rows, e);
}

genie_status vec_recall_prepare(const genie_index *idx, unsigned threads, int mustWrite)
{
    if (!vivf_is_ivf(idx)) {
        const recall_estimate *e;
        return recall_get(idx, threads, vec_recall_sample, mustWrite, &e);
    }
    if (mustWrite)
        return util_error(GENIE_EINVAL, "an inverted-file index has no recall side file: its estimate is made in "
                                        "memory when a search needs it (genie_recall_prepare)");
    return vivf_recall_prepare(idx, threads);
}
