/*
 * The distances of dense vectors (genie_vector_distance, the reference
 * every other computation of them matches bit for bit), the names of
 * metrics and precisions, and the direct exact search built on them.
 *
 * The direct search is blocked: a thread takes EXACT_QBLOCK queries at a
 * time (an atomic counter shares the blocks out) and walks the base in
 * blocks of EXACT_BBLOCK vectors, so a base block stays in cache while it
 * is compared with every query of the block.  Each query keeps a bounded
 * heap (engine/select.h) of 64-bit keys: the complement of the distance's
 * ordered key (exact_key) in the high word, the complement of the id in
 * the low word, so the heap's "largest keys" are the nearest vectors, ties
 * going to the smaller id, the same total order as the GPU kernel's.
 *
 * Distances are computed directly (sum of squared differences for l2, not
 * the |x|^2 - 2 x.q + |q|^2 expansion the GPU uses), which makes this the
 * accurate side of the GPU comparison.  When OpenBLAS is built in, l2, ip
 * and cosine go through a GEMM instead (exact_blas.c, many times faster)
 * and this direct search serves l1.  Compiled without fused multiply-adds
 * (CMakeLists.txt).
 */
#include "genie/vectors.h"
#include "engine/exact.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "engine/filter.h"
#include "engine/select.h"
#include "util/error.h"
#include "util/threads.h"

#define EXACT_QBLOCK 8
#define EXACT_BBLOCK 512

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

float exact_dot(const float *a, const float *b, uint32_t dim)
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
        return -exact_dot(a, b, dim);
    case GENIE_METRIC_COSINE: {
        /* A zero vector has no direction: cosine 0, distance 1. */
        float na = exact_dot(a, a, dim), nb = exact_dot(b, b, dim);
        if (na == 0 || nb == 0)
            return 1;
        return 1 - exact_dot(a, b, dim) / (sqrtf(na) * sqrtf(nb));
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
