/*
 * genie_search(): validation, count bounds, chunking and backend dispatch.
 *
 * Chunks bound the host memory of one call: a chunk's output buffer holds
 * n * k hits, and the chunk size is chosen so that it stays under
 * CHUNK_OUTPUT_BYTES.  The per-query count bound (sum over items of weight
 * times the fewer of "lists in the range" and "longest object") lets the
 * GPU size its counters, and rejects queries whose count could overflow 32
 * bits before any work is done.
 *
 * The backend comes from the table (backend.h).  An index of several
 * parts goes to engine_search_parts (parts.c), which
 * runs the same chunks on each part's view and merges the answers; a
 * one-part index takes the direct path here, as fast as before parts.
 * genie_search_parts() is the same search over a range of the parts, as a
 * process of a distributed search does on its shard (tools/mpi).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "engine/parts.h"
#include "index/index.h"
#include "index/live.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/options.h"
#include "util/threads.h"

#define CHUNK_OUTPUT_BYTES (256u << 20)
#define CHUNK_MAX_QUERIES 16384u

static genie_status append_chunk(genie_results *r, const genie_hit *aHit, const uint32_t *aN, size_t n,
                                 uint32_t k, uint64_t *pCap)
{
    uint64_t have = r->nQuery ? r->aEnd[r->nQuery - 1] : 0, add = 0;
    for (size_t i = 0; i < n; i++)
        add += aN[i];
    if (have + add > *pCap) {
        uint64_t c = *pCap ? *pCap : 1024;
        while (c < have + add)
            c *= 2;
        genie_hit *p = realloc(r->aHit, (size_t)c * sizeof *p);
        if (!p)
            return util_error(GENIE_ENOMEM, "out of memory for search results");
        r->aHit = p;
        *pCap = c;
    }
    for (size_t i = 0; i < n; i++) {
        if (aN[i])
            memcpy(r->aHit + have, aHit + (size_t)i * k, aN[i] * sizeof *aHit);
        have += aN[i];
        r->aEnd[r->nQuery++] = have;
    }
    return GENIE_OK;
}

/*
 * Count bounds (engine_count_bounds) on several threads, BOUNDS_GRAB
 * queries at a time: a lookup per wide item, 0.3 ms or more for 10,000
 * queries on one thread, the serial share of a search on 16 cores.
 */
#define BOUNDS_GRAB 2048u

typedef struct bounds_job {
    const genie_index *aIdx[2]; /* an index and the delta counted with it (or NULL) */
    const genie_queries *q;
    uint32_t *aBound[2];        /* each index's bounds, q->nQuery */
    atomic_size_t next;
    atomic_int failed;          /* a count could overflow: the caller asks again for the message */
} bounds_job;

static void bounds_worker(void *ctx, unsigned t)
{
    (void)t;
    bounds_job *j = ctx;
    for (;;) {
        size_t b = atomic_fetch_add(&j->next, BOUNDS_GRAB);
        if (b >= j->q->nQuery)
            return;
        size_t n = j->q->nQuery - b < BOUNDS_GRAB ? j->q->nQuery - b : BOUNDS_GRAB;
        for (int x = 0; x < 2 && j->aIdx[x]; x++)
            if (engine_count_bounds(j->aIdx[x], j->q, b, n, j->aBound[x] + b) != GENIE_OK)
                atomic_store(&j->failed, 1);
    }
}

/* The count bounds of every query of @p q in @p idx, and in @p delta (NULL: none) into aDeltaBound. */
static genie_status count_bounds(const genie_index *idx, const genie_index *delta, const genie_queries *q,
                                 unsigned threads, uint32_t *aBound, uint32_t *aDeltaBound)
{
    bounds_job j = {.aIdx = {idx, delta}, .q = q, .aBound = {aBound, aDeltaBound}};
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    unsigned nThread = threads ? threads : util_ncores();
    size_t nGrab = (q->nQuery + BOUNDS_GRAB - 1) / BOUNDS_GRAB;
    util_parallel_run(nThread < nGrab ? nThread : (unsigned)nGrab, bounds_worker, &j);
    if (!atomic_load(&j.failed))
        return GENIE_OK;
    /* Errors are per thread: the first failing query's, on this one. */
    GENIE_TRY(engine_count_bounds(idx, q, 0, q->nQuery, aBound));
    return delta ? engine_count_bounds(delta, q, 0, q->nQuery, aDeltaBound) : GENIE_OK;
}

/* A live index's delta counted in its base's pass (engine_request.pDelta). */
typedef struct live_delta {
    const genie_index *idx;
    const uint64_t *aAllow; /* its objects' bits (engine/filter.h), NULL = all */
    uint32_t idBase;        /* its object 0's id: the base's object count */
} live_delta;

/*
 * A one-part index (and @p pDelta, NULL or its delta counted in the same
 * requests): each chunk straight from the backend into the results.
 */
static genie_status search_whole(const genie_index *idx, const genie_queries *q, const genie_search_options *opt,
                                 const uint64_t *aAllow, engine_signal *pPlanned, const live_delta *pDelta,
                                 const engine_backend *be, const engine_devices *devs, uint32_t k, size_t chunk,
                                 genie_results *r, genie_search_stats *stats)
{
    int none = filter_count_range(aAllow, 0, idx->info.n_objects) == 0 &&
               (!pDelta || filter_count_range(pDelta->aAllow, 0, pDelta->idx->info.n_objects) == 0);
    genie_status rc = GENIE_OK;
    size_t nChunkAlloc = chunk < q->nQuery ? chunk : (q->nQuery ? q->nQuery : 1);
    size_t nBound = q->nQuery ? q->nQuery : 1;
    uint32_t *aBound = malloc((pDelta ? 2 : 1) * nBound * sizeof *aBound); /* the delta's after the base's */
    genie_hit *aHit = malloc(nChunkAlloc * k * sizeof *aHit);
    uint32_t *aN = malloc(nChunkAlloc * sizeof *aN);
    if (!aBound || !aHit || !aN) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries with k = %u", q->nQuery, k);
        goto done;
    }
    GENIE_TRY_GOTO(rc, count_bounds(idx, pDelta ? pDelta->idx : NULL, q, opt->threads, aBound, aBound + nBound),
                   done);
    uint64_t cap = 1;
    for (size_t first = 0; first < q->nQuery; first += chunk) {
        size_t n = q->nQuery - first < chunk ? q->nQuery - first : chunk;
        if (engine_cancelled(opt->cancel)) {
            rc = engine_cancelled_error();
            goto done;
        }
        engine_request req = {.idx = idx, .q = q, .first = first, .n = n, .k = k, .aCountBound = aBound + first,
                              .threads = opt->threads, .gpuMemory = opt->gpu_memory,
                              .loadBalance = opt->load_balance, .pPhases = opt->time_phases ? &stats->phases : NULL,
                              .cancel = opt->cancel, .aAllow = aAllow, .pPlanned = pPlanned,
                              .pDelta = pDelta ? pDelta->idx : NULL, .aDeltaAllow = pDelta ? pDelta->aAllow : NULL,
                              .aDeltaBound = pDelta ? aBound + nBound + first : NULL,
                              .idDelta = pDelta ? pDelta->idBase : 0};
        double t0 = util_now();
        if (none)
            memset(aN, 0, n * sizeof *aN);
        else
            GENIE_TRY_GOTO(rc, engine_devices_search(be, devs, &req, aHit, aN), done);
        stats->part_seconds += util_now() - t0;
        GENIE_TRY_GOTO(rc, append_chunk(r, aHit, aN, n, k, &cap), done);
        if (opt->progress)
            opt->progress(opt->progress_ctx, first + n, q->nQuery);
    }
done:
    free(aBound);
    free(aHit);
    free(aN);
    return rc;
}

genie_status genie_search(const genie_index *idx, const genie_queries *q, const genie_search_options *opt,
                          genie_results **out)
{
    return genie_search_with_stats(idx, q, opt, out, NULL);
}

void genie_search_options_init(genie_search_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
    opt->k = 10;
}

/*
 * Parts [iFirst, iEnd) of @p idx (all of a one-part index), global object
 * ids, answering only the objects @p aAllow allows (engine/filter.h; NULL:
 * all); a live index's delta is read here only as @p pDelta (NULL, or its
 * delta counted in a one-part index's requests, engine_request.pDelta).
 * @p pPlanned: NULL, or every request's (engine_request.pPlanned).
 */
static genie_status search_plain(const genie_index *idx, uint32_t iFirst, uint32_t iEnd, const genie_queries *q,
                                 const genie_search_options *opt, const uint64_t *aAllow, engine_signal *pPlanned,
                                 const live_delta *pDelta, genie_results **out, genie_search_stats *pStats)
{
    *out = NULL;
    genie_search_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.n_parts = iEnd - iFirst + (pDelta ? 1 : 0); /* a delta is one part */
    double t0 = util_now();
    if (opt->k == 0)
        return util_error(GENIE_EINVAL, "k must be at least 1");
    const engine_backend *be = NULL;
    GENIE_TRY(engine_backend_pick(opt->backend, &be));
    engine_devices devs;
    GENIE_TRY(engine_devices_resolve(be, idx, opt, &devs));
    stats.backend = be->id;
    stats.n_gpus = devs.n;
    stats.gpu_mode = devs.n > 1 ? devs.mode : GENIE_GPU_AUTO;
    uint64_t nObj = 0;
    for (uint32_t p = iFirst; p < iEnd; p++)
        nObj += idx->aPart[p].info.n_objects;
    nObj += pDelta ? pDelta->idx->info.n_objects : 0;
    uint32_t k = nObj == 0 ? 1 : (opt->k < nObj ? opt->k : (uint32_t)nObj);
    size_t chunk = CHUNK_OUTPUT_BYTES / ((size_t)k * sizeof(genie_hit));
    if (chunk > CHUNK_MAX_QUERIES)
        chunk = CHUNK_MAX_QUERIES;
    if (chunk == 0)
        chunk = 1;

    genie_status rc = GENIE_OK;
    genie_results *r = calloc(1, sizeof *r);
    if (r) {
        r->aEnd = malloc((q->nQuery ? q->nQuery : 1) * sizeof *r->aEnd);
        r->aHit = malloc(sizeof *r->aHit); /* never NULL, even with no hits */
    }
    if (!r || !r->aEnd || !r->aHit) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries with k = %u", q->nQuery, k);
        goto fail;
    }
    if (idx->nPart > 1)
        GENIE_TRY_GOTO(rc, engine_search_parts(idx, iFirst, iEnd, q, opt, aAllow, pPlanned, be, &devs, k, chunk, r,
                                                           &stats),
                       fail);
    else
        GENIE_TRY_GOTO(rc, search_whole(idx, q, opt, aAllow, pPlanned, pDelta, be, &devs, k, chunk, r, &stats), fail);
    stats.total_seconds = util_now() - t0;
    if (pStats)
        *pStats = stats;
    *out = r;
    return GENIE_OK;
fail:
    genie_results_free(r);
    return rc;
}

/*
 * A live index's two passes (index/live.h): the base's parts and the
 * delta.  On the host each costs about as much as the other per query
 * (a keyword lookup per item in each index, the GPU's work units: 10,000
 * keyword queries of a 110,000-object index plan in about 1.2 ms on 16
 * cores, docs/BENCHMARKS.md), while the delta's device work is the
 * smaller.  So the delta's pass waits for the base's requests to be
 * planned (engine_request.pPlanned), then runs on a thread of its own:
 * its host work overlaps the base's device work (rather than the two
 * plannings fighting for the cores), and its kernels run beside the
 * base's.  When the base's planning takes at most half the cores (2,000
 * vector queries plan on four threads), the backend lets the delta start
 * at once, its planning beside the base's.  A backend without a device
 * never sets pPlanned: the delta then runs after the base, one pass after
 * the other (the cpu backend counts the delta in the base's pass
 * instead: live_one_pass).  The base runs on
 * the calling thread (it reports progress).  The passes share nothing but
 * the queries: each index has its own device copy, workspace and stream.
 * A thread that cannot be started leaves both passes to the calling
 * thread, one after the other.
 */
typedef struct live_pass {
    const genie_index *idx;
    uint32_t iFirst, iEnd;
    const uint64_t *aAllow;
    genie_search_options opt;
    genie_results *r;
    genie_search_stats stats;
    genie_status rc;
    char zError[512]; /* its failure's message (errors are per thread) */
} live_pass;

typedef struct live_passes {
    const genie_queries *q;
    live_pass aPass[2];  /* the base's, the delta's */
    engine_signal planned; /* the base's requests are planned, or the base's pass is over */
    atomic_int deltaTaken;
} live_passes;

static void live_pass_run(live_passes *p, live_pass *s, engine_signal *pPlanned)
{
    s->rc = search_plain(s->idx, s->iFirst, s->iEnd, p->q, &s->opt, s->aAllow, pPlanned, NULL, &s->r, &s->stats);
    if (s->rc != GENIE_OK)
        snprintf(s->zError, sizeof s->zError, "%s", genie_last_error());
}

static void live_pass_worker(void *ctx, unsigned t)
{
    live_passes *p = ctx;
    if (t == 0) {
        live_pass_run(p, &p->aPass[0], &p->planned);
        engine_signal_set(&p->planned);
    }
    if (!atomic_exchange(&p->deltaTaken, 1)) {
        engine_signal_wait(&p->planned);
        live_pass_run(p, &p->aPass[1], NULL);
    }
}

/*
 * Whether the live search of @p idx (parts [iFirst, iEnd), its delta @p l)
 * takes one pass over both indexes: on the cpu backend (whose requests
 * take a delta, engine_request.pDelta) when base and delta are one part
 * each.  There a second pass would cost as much again in what every
 * query pays whatever the index's size (its heap, its selection, a round
 * of threads), for a tenth of the postings (docs/BENCHMARKS.md).
 */
static int live_one_pass(const genie_index *idx, uint32_t iFirst, uint32_t iEnd, const index_live *l,
                         const genie_search_options *opt)
{
    const engine_backend *be = NULL;
    if (idx->nPart != 1 || iFirst != 0 || iEnd != 1 || l->pDelta->nPart != 1 ||
        engine_backend_pick(opt->backend, &be) != GENIE_OK) {
        util_error_clear(); /* the two passes' search reports it */
        return 0;
    }
    return be->xSearch == engine_cpu_search;
}

/*
 * Parts [iFirst, iEnd) of @p idx with its filter and, on a live index
 * (index/live.h), its deleted objects masked; when the range ends with
 * the last part, the delta too: in the base's pass (live_one_pass), or
 * searched alongside (live_pass_worker, its ids after the base's) and
 * merged exactly (live_search.c).
 */
static genie_status search_range(const genie_index *idx, uint32_t iFirst, uint32_t iEnd, const genie_queries *q,
                                 const genie_search_options *opt, genie_results **out, genie_search_stats *pStats)
{
    *out = NULL;
    GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_search_options, filter));
    double t0 = util_now();
    const uint64_t *aAllow = NULL, *aDelta = NULL;
    uint64_t *aOwned = NULL, *aDeltaOwned = NULL;
    GENIE_TRY(filter_effective(idx, opt->filter, &aAllow, &aOwned));
    const index_live *l = idx->pLive;
    genie_search_stats stats;
    genie_status rc;
    if (l && l->nAdded && iEnd == idx->nPart) {
        rc = filter_slice(aAllow, l->nBase, l->nAdded, &aDelta, &aDeltaOwned);
        if (rc == GENIE_OK && live_one_pass(idx, iFirst, iEnd, l, opt)) {
            live_delta d = {.idx = l->pDelta, .aAllow = aDelta, .idBase = (uint32_t)l->nBase};
            rc = search_plain(idx, iFirst, iEnd, q, opt, aAllow, NULL, &d, out, &stats);
        } else if (rc == GENIE_OK) {
            live_passes p = {.q = q,
                             .aPass = {{.idx = idx, .iFirst = iFirst, .iEnd = iEnd, .aAllow = aAllow, .opt = *opt},
                                       {.idx = l->pDelta, .iFirst = 0, .iEnd = l->pDelta->nPart, .aAllow = aDelta,
                                        .opt = *opt}}};
            p.aPass[1].opt.progress = NULL; /* the base's pass reports, from the calling thread */
            pthread_mutex_init(&p.planned.lock, NULL);
            pthread_cond_init(&p.planned.cond, NULL);
            atomic_init(&p.deltaTaken, 0);
            util_parallel_run(2, live_pass_worker, &p);
            pthread_cond_destroy(&p.planned.cond);
            pthread_mutex_destroy(&p.planned.lock);
            live_pass *pFail = p.aPass[0].rc != GENIE_OK ? &p.aPass[0] : &p.aPass[1];
            double tMerge = util_now();
            rc = pFail->rc == GENIE_OK ? engine_results_merge(p.aPass[0].r, p.aPass[1].r, (uint32_t)l->nBase, opt->k,
                                                                  opt->threads, out)
                                       : util_error(pFail->rc, "%s", pFail->zError);
            stats = p.aPass[0].stats;
            engine_stats_sum(&stats, &p.aPass[1].stats);
            stats.merge_seconds += util_now() - tMerge;
            genie_results_free(p.aPass[0].r);
            genie_results_free(p.aPass[1].r);
        }
    } else {
        rc = search_plain(idx, iFirst, iEnd, q, opt, aAllow, NULL, NULL, out, &stats);
    }
    free(aOwned);
    free(aDeltaOwned);
    if (rc == GENIE_OK && pStats) {
        *pStats = stats;
        pStats->total_seconds = util_now() - t0;
    }
    return rc;
}

genie_status genie_search_with_stats(const genie_index *idx, const genie_queries *q,
                                     const genie_search_options *opt, genie_results **out,
                                     genie_search_stats *pStats)
{
    util_error_clear();
    return search_range(idx, 0, idx->nPart, q, opt, out, pStats);
}

genie_status genie_search_parts(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                const genie_queries *q, const genie_search_options *opt, genie_results **out,
                                genie_search_stats *stats)
{
    util_error_clear();
    *out = NULL;
    if (n_parts == 0 || first_part >= idx->nPart || n_parts > idx->nPart - first_part)
        return util_error(GENIE_EINVAL, "%u parts from part %u: the index has %u parts, numbered from 0 (n_parts >= 1)",
                          n_parts, first_part, idx->nPart);
    return search_range(idx, first_part, first_part + n_parts, q, opt, out, stats);
}
