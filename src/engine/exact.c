/*
 * Exact k-nearest-neighbour search: argument checks and the choice of the
 * search that runs: a backend's own (the pExact capability, backend.h),
 * else on the CPU a GEMM (exact_blas.c) for the metrics with a product
 * form when OpenBLAS is built in, else the direct loop (distance.c), which
 * serves l1 always.
 */
#include "genie/vectors.h"
#include "engine/exact.h"

#include <stdlib.h>

#include "engine/backend.h"
#include "engine/exact_blas.h"
#include "engine/filter.h"
#include "index/index.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/finite.h"

#define EXACT_QBLOCK 8
#define EXACT_BBLOCK 512
#define EXACT_MAX_K GENIE_VECTORS_MAX_K

/* The CPU search: a GEMM for the metrics with a product form when OpenBLAS is built in. */
static genie_status exact_cpu(const genie_vectors *base, const uint64_t *aAllow, const genie_vectors *q,
                              genie_metric metric, uint32_t k, unsigned threads, genie_neighbor *out)
{
#ifdef GENIE_HAVE_BLAS
    if (metric != GENIE_METRIC_L1 && exact_blas_available())
        return exact_blas_search(base, aAllow, q, metric, k, threads, out);
#endif
    return exact_cpu_direct_allowed(base, aAllow, q, metric, k, threads, out);
}

/* The backend's own exact search, through @p idx's resident base when there is an index. */
static genie_status exact_backend(const engine_backend *be, int device, const genie_index *idx,
                                  const genie_vectors *base, const uint64_t *aAllow, const genie_vectors *q,
                                  genie_metric metric, genie_precision precision, uint32_t k, genie_neighbor *out,
                                  engine_exact_counts *pCounts)
{
    if (!idx)
        return be->pExact->xSearch(device, NULL, base->data, base->n, q->data, q->n, base->dim, metric, precision,
                                   aAllow, k, out, pCounts);
    static const char owner; /* the slot of the resident base (index.h) */
    index_device *d = &idx->aDev[device];
    index_slot *s = index_device_slot(d, &owner, be->pExact->xFree);
    if (!s)
        return GENIE_ENOMEM;
    genie_status rc = be->pExact->xSearch(device, &s->p, base->data, base->n, q->data, q->n, base->dim, metric,
                                          precision, aAllow, k, out, pCounts);
    pthread_mutex_unlock(&d->lock);
    return rc;
}

genie_status genie_exact_search(const genie_vectors *base, const genie_vectors *queries, genie_metric metric,
                                uint32_t k, genie_backend backend, unsigned threads, genie_neighbor *out,
                                genie_search_stats *stats)
{
    return genie_exact_search_precision(base, queries, metric, k, backend, threads, GENIE_PRECISION_FP32, out,
                                        stats);
}

genie_status genie_exact_search_precision(const genie_vectors *base, const genie_vectors *queries,
                                          genie_metric metric, uint32_t k, genie_backend backend, unsigned threads,
                                          genie_precision precision, genie_neighbor *out, genie_search_stats *stats)
{
    double t0 = util_now();
    genie_backend used = GENIE_BACKEND_AUTO;
    engine_exact_counts counts = {0, 0};
    util_error_clear();
    GENIE_TRY(util_check_finite(base->data, base->n, base->dim, threads, "base"));
    GENIE_TRY(util_check_finite(queries->data, queries->n, queries->dim, threads, "query"));
    genie_status rc =
        exact_search_in_index(NULL, base, queries, metric, precision, k, backend, 0, threads, out, &used, &counts);
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->backend = used;
        stats->total_seconds = stats->rerank_seconds = util_now() - t0;
        stats->verified = counts.distances;
        stats->fallback = counts.direct;
    }
    return rc;
}

genie_status exact_search_in_index(const genie_index *idx, const genie_vectors *base, const genie_vectors *queries,
                                   genie_metric metric, genie_precision precision, uint32_t k, genie_backend backend,
                                   int device, unsigned threads, genie_neighbor *out, genie_backend *used,
                                   engine_exact_counts *pCounts)
{
    return exact_search_allowed(idx, base, NULL, queries, metric, precision, k, backend, device, threads, out, used,
                                pCounts);
}

genie_status exact_search_allowed(const genie_index *idx, const genie_vectors *base, const uint64_t *aAllow,
                                  const genie_vectors *queries, genie_metric metric, genie_precision precision,
                                  uint32_t k, genie_backend backend, int device, unsigned threads,
                                  genie_neighbor *out, genie_backend *used, engine_exact_counts *pCounts)
{
    engine_exact_counts ignored;
    if (!pCounts)
        pCounts = &ignored;
    util_error_clear();
    if (!genie_metric_name(metric))
        return util_error(GENIE_EINVAL, "unknown metric %d", (int)metric);
    if (!genie_precision_name(precision))
        return util_error(GENIE_EINVAL, "unknown precision %d", (int)precision);
    if (metric == GENIE_METRIC_L1 && precision != GENIE_PRECISION_FP32)
        return util_error(GENIE_EINVAL,
                          "exact search: precision %s needs a GEMM, and l1 has none (sum |x - q|): use fp32",
                          genie_precision_name(precision));
    if (base->n == 0 || base->dim == 0)
        return util_error(GENIE_EINVAL, "exact search: the base has no vectors");
    if (queries->n && queries->dim != base->dim)
        return util_error(GENIE_EINVAL, "exact search: queries have %u dimensions, the base %u", queries->dim,
                          base->dim);
    if (base->n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "exact search: %llu base vectors, at most 2^32 - 1",
                          (unsigned long long)base->n);
    const engine_backend *be; /* NULL: no exact search of its own, the CPU's */
    GENIE_TRY(engine_backend_pick_cap(backend, ENGINE_CAP(pExact), &be));
    int nDevice = be && be->xDevices ? be->xDevices() : 1;
    if (device < 0 || device >= nDevice)
        return util_error(GENIE_EINVAL, "exact search: GPU %d does not exist (%d found)", device, nDevice);
    uint32_t kMax = be ? be->pExact->nMaxK : EXACT_MAX_K;
    if (k == 0 || k > kMax)
        return util_error(GENIE_EINVAL, "exact search: k = %u outside 1..%u (%s)", k, kMax, be ? be->zName : "cpu");
    if (used)
        *used = be ? be->id : GENIE_BACKEND_CPU;
    uint64_t nAllowed = filter_count_range(aAllow, 0, base->n);
    if (queries->n == 0 || nAllowed == 0)
        return GENIE_OK;
    if (nAllowed == base->n)
        aAllow = NULL;
    uint32_t kEff = nAllowed < k ? (uint32_t)nAllowed : k;
    if (be) {
        if (kEff == k)
            return exact_backend(be, device, idx, base, aAllow, queries, metric, precision, k, out, pCounts);
        /* Fewer vectors than k: search for all, then spread to stride k. */
        genie_neighbor *tmp = malloc(queries->n * kEff * sizeof *tmp);
        if (!tmp)
            return util_error(GENIE_ENOMEM, "out of memory in the exact search");
        genie_status rc = exact_backend(be, device, idx, base, aAllow, queries, metric, precision, kEff, tmp, pCounts);
        for (uint64_t i = 0; rc == GENIE_OK && i < queries->n; i++)
            memcpy(out + i * k, tmp + i * kEff, kEff * sizeof *tmp);
        free(tmp);
        return rc;
    }
    pCounts->distances += queries->n * nAllowed;
    return exact_cpu(base, aAllow, queries, metric, k, threads, out);
}
