/*
 * genie_search(): validation, count bounds, chunking and backend dispatch.
 *
 * Chunks bound the host memory of one call: a chunk's output buffer holds
 * n * k hits, and the chunk size is chosen so that it stays under
 * CHUNK_OUTPUT_BYTES.  The per-query count bound (sum over items of weight
 * times the fewer of "lists in the range" and "longest object") lets the
 * GPU size its counters, and rejects queries whose count could overflow 32
 * bits before any work is done.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "index/index.h"
#include "util/error.h"

#define CHUNK_OUTPUT_BYTES (256u << 20)
#define CHUNK_MAX_QUERIES 16384u

static const char *const azBackend[] = {"auto", "cpu", "cpu-idx", "cuda", "cuda-spq"};

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
    return util_error(GENIE_EINVAL, "unknown backend '%s' (auto, cpu, cpu-idx, cuda, cuda-spq)", name);
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

static genie_status count_bounds(const genie_index *idx, const genie_queries *q, uint32_t *aBound)
{
    uint64_t maxLen = idx->info.max_object_length;
    for (size_t i = 0; i < q->nQuery; i++) {
        size_t nItem;
        const genie_item *aItem = engine_query_items(q, i, &nItem);
        uint64_t bound = 0;
        for (size_t j = 0; j < nItem; j++) {
            size_t first, end;
            index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
            uint64_t lists = end - first;
            bound += (uint64_t)aItem[j].weight * (lists < maxLen ? lists : maxLen);
            if (bound > UINT32_MAX)
                return util_error(GENIE_ERANGE,
                                  "query %zu: its match count could exceed 2^32-1 (too many or too wide items)",
                                  i + 1);
        }
        aBound[i] = (uint32_t)bound;
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
    default: return util_error(GENIE_EINVAL, "unknown backend %d", (int)opt->backend);
    }
    if ((b == GENIE_BACKEND_CUDA || b == GENIE_BACKEND_CUDA_SPQ) && !genie_cuda_built())
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

genie_status genie_search(const genie_index *idx, const genie_queries *q, genie_search_options *opt,
                          genie_results **out)
{
    util_error_clear();
    *out = NULL;
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
    uint32_t *aBound = malloc((q->nQuery ? q->nQuery : 1) * sizeof *aBound);
    size_t nChunkAlloc = chunk < q->nQuery ? chunk : (q->nQuery ? q->nQuery : 1);
    genie_hit *aHit = malloc(nChunkAlloc * k * sizeof *aHit);
    uint32_t *aN = malloc(nChunkAlloc * sizeof *aN);
    if (r) {
        r->aEnd = malloc((q->nQuery ? q->nQuery : 1) * sizeof *r->aEnd);
        r->aHit = malloc(sizeof *r->aHit); /* never NULL, even with no hits */
    }
    if (!r || !r->aEnd || !r->aHit || !aBound || !aHit || !aN) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu queries with k = %u", q->nQuery, k);
        goto fail;
    }
    GENIE_TRY_GOTO(rc, count_bounds(idx, q, aBound), fail);
    uint64_t cap = 1;
    for (size_t first = 0; first < q->nQuery; first += chunk) {
        size_t n = q->nQuery - first < chunk ? q->nQuery - first : chunk;
        engine_request req = {idx, q, first, n, k, aBound + first, opt};
        if (nObj == 0)
            memset(aN, 0, n * sizeof *aN);
        else
            GENIE_TRY_GOTO(rc, fn(&req, aHit, aN), fail);
        GENIE_TRY_GOTO(rc, append_chunk(r, aHit, aN, n, k, &cap), fail);
        if (opt->progress)
            opt->progress(opt->progress_ctx, first + n, q->nQuery);
    }
    free(aBound);
    free(aHit);
    free(aN);
    *out = r;
    return GENIE_OK;
fail:
    free(aBound);
    free(aHit);
    free(aN);
    genie_results_free(r);
    return rc;
}
