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
 * An index of several parts goes to engine_search_parts (parts.c), which
 * runs the same chunks on each part's view and merges the answers; a
 * one-part index takes the direct path here, as fast as before parts.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "index/index.h"
#include "util/error.h"

#define CHUNK_OUTPUT_BYTES (256u << 20)
#define CHUNK_MAX_QUERIES 16384u

static const char *const azBackend[] = {"auto", "cpu", "cpu-idx", "cuda", "cuda-spq", "cuda-cpq-paper"};

const char *genie_backend_name(genie_backend backend)
{
    return (unsigned)backend < sizeof azBackend / sizeof *azBackend ? azBackend[backend] : NULL;
}

genie_status genie_backend_parse(const char *name, genie_backend *out)
{
    for (unsigned i = 0; i < sizeof azBackend / sizeof *azBackend; i++) {
        if (strcmp(name, azBackend[i]) == 0) {
            *out = (genie_backend)i;
            return GENIE_OK;
        }
    }
    return util_error(GENIE_EINVAL, "unknown backend '%s' (auto, cpu, cpu-idx, cuda, cuda-spq, cuda-cpq-paper)", name);
}

int genie_cuda_built(void)
{
#ifdef GENIE_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int genie_cuda_available(void)
{
    return engine_cuda_usable();
}

double engine_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

genie_status engine_count_bounds(const genie_index *idx, const genie_queries *q, size_t iFirst, size_t n,
                                 uint32_t *aBound)
{
    uint64_t maxLen = idx->info.max_object_length;
    for (size_t i = iFirst; i < iFirst + n; i++) {
        size_t nItem;
        const genie_item *aItem = engine_query_items(q, i, &nItem);
        uint64_t bound = 0;
        for (size_t j = 0; j < nItem; j++) {
            /* One keyword: at most one list, no lookup (a looser bound when it is absent; the
             * binary searches were a large share of a GPU search's time). */
            size_t first = 0, end = 1;
            if (aItem[j].lo != aItem[j].hi)
                index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
            uint64_t lists = end - first;
            bound += (uint64_t)aItem[j].weight * (lists < maxLen ? lists : maxLen);
            if (bound > UINT32_MAX)
                return util_error(GENIE_ERANGE,
                                  "query %zu: its match count could exceed 2^32-1 (too many or too wide items)",
                                  i + 1);
        }
        aBound[i - iFirst] = (uint32_t)bound;
    }
    return GENIE_OK;
}

static genie_status pick_backend(genie_search_options *opt, engine_search_fn *pFn)
{
    genie_backend b = opt->backend;
    if (b == GENIE_BACKEND_AUTO)
        b = engine_cuda_usable() ? GENIE_BACKEND_CUDA : GENIE_BACKEND_CPU;
    switch (b) {
    case GENIE_BACKEND_CPU: *pFn = engine_cpu_search; break;
    case GENIE_BACKEND_CPU_IDX: *pFn = engine_cpu_idx_search; break;
    case GENIE_BACKEND_CUDA: *pFn = engine_cuda_search; break;
    case GENIE_BACKEND_CUDA_SPQ: *pFn = engine_cuda_spq_search; break;
    case GENIE_BACKEND_CUDA_CPQ_PAPER: *pFn = engine_cuda_cpq_paper_search; break;
    default: return util_error(GENIE_EINVAL, "unknown backend %d", (int)opt->backend);
    }
    if ((b == GENIE_BACKEND_CUDA || b == GENIE_BACKEND_CUDA_SPQ || b == GENIE_BACKEND_CUDA_CPQ_PAPER) &&
        !genie_cuda_built())
        return util_error(GENIE_ENOTSUP, "backend %s: this genie was built without CUDA support",
                          genie_backend_name(b));
    opt->used_backend = b;
    return GENIE_OK;
}

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

/* A one-part index: each chunk straight from the backend into the results. */
static genie_status search_whole(const genie_index *idx, const genie_queries *q, const genie_search_options *opt,
                                 engine_search_fn fn, uint32_t k, size_t chunk, genie_results *r,
                                 genie_search_stats *stats)
{
    genie_status rc = GENIE_OK;
    size_t nChunkAlloc = chunk < q->nQuery ? chunk : (q->nQuery ? q->nQuery : 1);
    uint32_t *aBound = malloc((q->nQuery ? q->nQuery : 1) * sizeof *aBound);
    genie_hit *aHit = malloc(nChunkAlloc * k * sizeof *aHit);
    uint32_t *aN = malloc(nChunkAlloc * sizeof *aN);
    if (!aBound || !aHit || !aN) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries with k = %u", q->nQuery, k);
        goto done;
    }
    GENIE_TRY_GOTO(rc, engine_count_bounds(idx, q, 0, q->nQuery, aBound), done);
    uint64_t cap = 1;
    for (size_t first = 0; first < q->nQuery; first += chunk) {
        size_t n = q->nQuery - first < chunk ? q->nQuery - first : chunk;
        engine_request req = {idx, q, first, n, k, aBound + first, opt};
        double t0 = engine_now();
        if (idx->info.n_objects == 0)
            memset(aN, 0, n * sizeof *aN);
        else
            GENIE_TRY_GOTO(rc, fn(&req, aHit, aN), done);
        stats->part_seconds += engine_now() - t0;
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

genie_status genie_search(const genie_index *idx, const genie_queries *q, genie_search_options *opt,
                          genie_results **out)
{
    return genie_search_with_stats(idx, q, opt, out, NULL);
}

genie_status genie_search_with_stats(const genie_index *idx, const genie_queries *q, genie_search_options *opt,
                                     genie_results **out, genie_search_stats *pStats)
{
    util_error_clear();
    *out = NULL;
    genie_search_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.n_parts = idx->nPart;
    double t0 = engine_now();
    if (opt->k == 0)
        return util_error(GENIE_EINVAL, "k must be at least 1");
    engine_search_fn fn = NULL;
    GENIE_TRY(pick_backend(opt, &fn));
    uint64_t nObj = idx->info.n_objects;
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
        GENIE_TRY_GOTO(rc, engine_search_parts(idx, q, opt, fn, k, chunk, r, &stats), fail);
    else
        GENIE_TRY_GOTO(rc, search_whole(idx, q, opt, fn, k, chunk, r, &stats), fail);
    stats.total_seconds = engine_now() - t0;
    if (pStats)
        *pStats = stats;
    *out = r;
    return GENIE_OK;
fail:
    genie_results_free(r);
    return rc;
}
