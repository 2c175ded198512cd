/*
 * Exact k-nearest-neighbour search: argument checks, the distance
 * functions, and the CPU search.
 *
 * The CPU search is blocked: a thread takes EXACT_QBLOCK queries at a time
 * (an atomic counter shares the blocks out) and walks the base in blocks
 * of EXACT_BBLOCK vectors, so a base block stays in cache while it is
 * compared with every query of the block.  Each query keeps a bounded heap
 * (engine/select.h) of 64-bit keys: the complement of the distance's
 * ordered key (exact_key) in the high word, the complement of the id in
 * the low word, so the heap's "largest keys" are the nearest vectors, ties
 * going to the smaller id, the same total order as the GPU kernel's.
 *
 * Distances are computed directly (sum of squared differences for l2, not
 * the |x|^2 - 2 x.q + |q|^2 expansion the GPU uses), which makes this the
 * accurate side of the GPU comparison.  When OpenBLAS is built in, l2, ip
 * and cosine go through a GEMM instead (exact_blas.c, many times faster)
 * and this direct search serves l1.
 */
#include "genie/vectors.h"
#include "engine/exact.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "engine/backend.h"
#include "engine/exact_blas.h"
#include "engine/filter.h"
#include "engine/select.h"
#include "index/index.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/finite.h"
#include "util/threads.h"

#define EXACT_QBLOCK 8
#define EXACT_BBLOCK 512
#define EXACT_MAX_K 65536u

const char *genie_metric_name(genie_metric metric)
{
    switch (metric) {
    case GENIE_METRIC_L2: return "l2";
    case GENIE_METRIC_IP: return "ip";
    case GENIE_METRIC_COSINE: return "cosine";
    case GENIE_METRIC_L1: return "l1";
    }
    return NULL;
}

const char *genie_precision_name(genie_precision precision)
{
    switch (precision) {
    case GENIE_PRECISION_FP32: return "fp32";
    case GENIE_PRECISION_TF32: return "tf32";
    case GENIE_PRECISION_FP16: return "fp16";
    }
    return NULL;
}

genie_status genie_precision_parse(const char *name, genie_precision *out)
{
    for (int p = 0; p <= GENIE_PRECISION_FP16; p++)
        if (strcmp(name, genie_precision_name((genie_precision)p)) == 0) {
            *out = (genie_precision)p;
            return GENIE_OK;
        }
    return util_error(GENIE_EINVAL, "unknown precision '%s' (fp32, tf32, fp16)", name);
}

genie_status genie_metric_parse(const char *name, genie_metric *out)
{
    for (int m = 0; m <= GENIE_METRIC_L1; m++)
        if (strcmp(name, genie_metric_name((genie_metric)m)) == 0) {
            *out = (genie_metric)m;
            return GENIE_OK;
        }
    return util_error(GENIE_EINVAL, "unknown metric '%s' (l2, ip, cosine, l1)", name);
}

static float dot(const float *a, const float *b, uint32_t dim)
{
    float s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s += a[i] * b[i];
    return s;
}

float genie_vector_distance(genie_metric metric, const float *a, const float *b, uint32_t dim)
{
    float s = 0;
    switch (metric) {
    case GENIE_METRIC_L2:
        for (uint32_t i = 0; i < dim; i++)
            s += (a[i] - b[i]) * (a[i] - b[i]);
        return sqrtf(s);
    case GENIE_METRIC_L1:
        for (uint32_t i = 0; i < dim; i++)
            s += fabsf(a[i] - b[i]);
        return s;
    case GENIE_METRIC_IP:
        return -dot(a, b, dim);
    case GENIE_METRIC_COSINE: {
        /* A zero vector has no direction: cosine 0, distance 1. */
        float na = dot(a, a, dim), nb = dot(b, b, dim);
        if (na == 0 || nb == 0)
            return 1;
        return 1 - dot(a, b, dim) / (sqrtf(na) * sqrtf(nb));
    }
    }
    return NAN;
}

typedef struct exact_job {
    const genie_vectors *base, *q;
    const uint64_t *aAllow; /* the base vectors that may be answered (engine/filter.h), or NULL */
    genie_metric metric;
    uint32_t k;
    genie_neighbor *out;
    atomic_size_t next;
    atomic_int failed;
} exact_job;

static void exact_worker(void *ctx, unsigned t)
{
    (void)t;
    exact_job *job = ctx;
    uint32_t dim = job->base->dim, k = job->k;
    uint64_t *aKey = malloc((size_t)EXACT_QBLOCK * k * sizeof *aKey);
    genie_hit *aHit = malloc((size_t)k * sizeof *aHit);
    if (!aKey || !aHit) {
        atomic_store(&job->failed, 1);
        goto done;
    }
    select_heap aHeap[EXACT_QBLOCK];
    for (;;) {
        size_t q0 = atomic_fetch_add(&job->next, EXACT_QBLOCK);
        if (q0 >= job->q->n || atomic_load(&job->failed))
            break;
        size_t nq = job->q->n - q0 < EXACT_QBLOCK ? job->q->n - q0 : EXACT_QBLOCK;
        for (size_t j = 0; j < nq; j++)
            select_reset(&aHeap[j], aKey + j * k, k);
        for (uint64_t b0 = 0; b0 < job->base->n; b0 += EXACT_BBLOCK) {
            uint64_t b1 = b0 + EXACT_BBLOCK < job->base->n ? b0 + EXACT_BBLOCK : job->base->n;
            for (size_t j = 0; j < nq; j++) {
                const float *pq = job->q->data + (q0 + j) * dim;
                for (uint64_t b = b0; b < b1; b++) {
                    if (!filter_allows(job->aAllow, b))
                        continue;
                    float d = genie_vector_distance(job->metric, job->base->data + b * dim, pq, dim);
                    select_push(&aHeap[j], select_key(UINT32_MAX - exact_key(d), (uint32_t)b));
                }
            }
        }
        for (size_t j = 0; j < nq; j++) {
            size_t n = select_finish(&aHeap[j], aHit);
            genie_neighbor *o = job->out + (q0 + j) * k;
            for (size_t i = 0; i < n; i++) {
                o[i].id = aHit[i].object;
                o[i].distance = exact_key_value(UINT32_MAX - aHit[i].count);
            }
        }
    }
done:
    free(aKey);
    free(aHit);
}

genie_status exact_cpu_direct(const genie_vectors *base, const genie_vectors *q, genie_metric metric, uint32_t k,
                              unsigned threads, genie_neighbor *out)
{
    return exact_cpu_direct_allowed(base, NULL, q, metric, k, threads, out);
}

genie_status exact_cpu_direct_allowed(const genie_vectors *base, const uint64_t *aAllow, const genie_vectors *q,
                                      genie_metric metric, uint32_t k, unsigned threads, genie_neighbor *out)
{
    exact_job job = {.base = base, .q = q, .aAllow = aAllow, .metric = metric, .k = k, .out = out};
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    unsigned nThread = threads ? threads : util_ncores();
    size_t nBlock = (q->n + EXACT_QBLOCK - 1) / EXACT_QBLOCK;
    if (nThread > nBlock)
        nThread = (unsigned)nBlock;
    util_parallel_run(nThread, exact_worker, &job);
    if (atomic_load(&job.failed))
        return util_error(GENIE_ENOMEM, "out of memory in the exact search (k = %u)", k);
    return GENIE_OK;
}

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
                                  genie_metric metric, genie_precision precision, uint32_t k, genie_neighbor *out)
{
    if (!idx)
        return be->xExact(device, NULL, base->data, base->n, q->data, q->n, base->dim, metric, precision, aAllow, k,
                          out);
    index_device *d = &idx->aDev[device];
    pthread_mutex_lock(&d->lock);
    if (d->pExact && d->xExactFree != be->xExactFree) {
        d->xExactFree(d->pExact); /* another backend's resident base */
        d->pExact = NULL;
    }
    d->xExactFree = be->xExactFree;
    genie_status rc = be->xExact(device, &d->pExact, base->data, base->n, q->data, q->n, base->dim, metric, precision,
                                 aAllow, k, out);
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
    util_error_clear();
    GENIE_TRY(util_check_finite(base->data, base->n, base->dim, threads, "base"));
    GENIE_TRY(util_check_finite(queries->data, queries->n, queries->dim, threads, "query"));
    genie_status rc =
        exact_search_in_index(NULL, base, queries, metric, precision, k, backend, 0, threads, out, &used);
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->backend = used;
        stats->total_seconds = stats->rerank_seconds = util_now() - t0;
        stats->verified = (uint64_t)queries->n * base->n;
    }
    return rc;
}

genie_status exact_search_in_index(const genie_index *idx, const genie_vectors *base, const genie_vectors *queries,
                                   genie_metric metric, genie_precision precision, uint32_t k, genie_backend backend,
                                   int device, unsigned threads, genie_neighbor *out, genie_backend *used)
{
    return exact_search_allowed(idx, base, NULL, queries, metric, precision, k, backend, device, threads, out, used);
}

genie_status exact_search_allowed(const genie_index *idx, const genie_vectors *base, const uint64_t *aAllow,
                                  const genie_vectors *queries, genie_metric metric, genie_precision precision,
                                  uint32_t k, genie_backend backend, int device, unsigned threads,
                                  genie_neighbor *out, genie_backend *used)
{
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
    const engine_backend *be;
    GENIE_TRY(engine_backend_pick(backend, &be));
    if (!be->xExact)
        be = engine_backend_find(GENIE_BACKEND_CPU); /* no exact search of its own: the CPU's */
    int nDevice = be->xDevices ? be->xDevices() : 1;
    if (device < 0 || device >= nDevice)
        return util_error(GENIE_EINVAL, "exact search: GPU %d does not exist (%d found)", device, nDevice);
    uint32_t kMax = be->xExact ? be->nExactMaxK : EXACT_MAX_K;
    if (k == 0 || k > kMax)
        return util_error(GENIE_EINVAL, "exact search: k = %u outside 1..%u (%s)", k, kMax, be->zName);
    if (used)
        *used = be->id;
    uint64_t nAllowed = filter_count_range(aAllow, 0, base->n);
    if (queries->n == 0 || nAllowed == 0)
        return GENIE_OK;
    if (nAllowed == base->n)
        aAllow = NULL;
    uint32_t kEff = nAllowed < k ? (uint32_t)nAllowed : k;
    if (be->xExact) {
        if (kEff == k)
            return exact_backend(be, device, idx, base, aAllow, queries, metric, precision, k, out);
        /* Fewer vectors than k: search for all, then spread to stride k. */
        genie_neighbor *tmp = malloc(queries->n * kEff * sizeof *tmp);
        if (!tmp)
            return util_error(GENIE_ENOMEM, "out of memory in the exact search");
        genie_status rc = exact_backend(be, device, idx, base, aAllow, queries, metric, precision, kEff, tmp);
        for (uint64_t i = 0; rc == GENIE_OK && i < queries->n; i++)
            memcpy(out + i * k, tmp + i * kEff, kEff * sizeof *tmp);
        free(tmp);
        return rc;
    }
    return exact_cpu(base, aAllow, queries, metric, k, threads, out);
}
