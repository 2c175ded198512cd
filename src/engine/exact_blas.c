/*
 * Exact k-NN through GEMM: distances of a block of queries to a block of
 * base vectors come from one matrix product Q * X^T (OpenBLAS sgemm, on
 * its own threads), then each query's row of the tile is offered to its
 * bounded heap (engine/select.h) on this library's threads.  No distance
 * matrix larger than one tile is ever held.
 *
 *   l2      |x|^2 - 2 x.q + |q|^2, ranked on the squared value (clamped at
 *           0: rounding can take it below for near-duplicates);
 *   ip      -x.q;
 *   cosine  1 - x.q / (|x| |q|), 1 when either vector is zero.
 *
 * The product sums in another order than the direct loop of exact.c, and
 * the l2 expansion loses digits to cancellation, so a candidate whose
 * distance ties another's to float rounding may be chosen over it.  The
 * distances returned are computed again directly (genie_vector_distance,
 * as the direct search does) for the k chosen, which are then ordered by
 * that distance and id: the same order and values as the direct search,
 * within float tolerance at the boundary of the k-th neighbour.
 *
 * OpenBLAS is opened with dlopen on the first call (GENIE_BLAS_SONAME), not
 * linked: loading it starts its thread pool, which a process that never
 * searches vectors exactly should not pay for (nor its address space, one
 * stack per core).  Without the library the caller falls back to the direct
 * loop (exact_blas_available).
 */
#include "engine/exact_blas.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exact.h"
#include "engine/select.h"
#include "util/error.h"
#include "util/threads.h"

#define BLAS_QBLOCK 1024u              /* queries per tile (fewer when k is large) */
#define BLAS_BBLOCK 4096u              /* base vectors per tile */
#define BLAS_HEAP_BYTES (64ull << 20)  /* heaps of one query block together */

typedef struct blas_job {
    const genie_vectors *base, *q;
    genie_metric metric;
    uint32_t k;
    const float *aBaseNorm; /* l2: |x|^2; cosine: |x| */
    const float *aQNorm;    /* of the query block, same meaning */
    const float *aTile;     /* nq x nb products of the current tile */
    size_t q0, nq;          /* query block */
    uint64_t b0, nb;        /* base block */
    select_heap *aHeap;     /* nq */
    size_t next;            /* shared: next query row of the tile */
} blas_job;

typedef __typeof__(cblas_sgemm) blas_sgemm_fn;

static pthread_once_t blasOnce = PTHREAD_ONCE_INIT;
static blas_sgemm_fn *pSgemm; /* set once by blas_load; NULL when OpenBLAS cannot be opened */

static void blas_load(void)
{
    void *h = dlopen(GENIE_BLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    void *p = dlsym(h, "cblas_sgemm");
    /* POSIX guarantees a function's address converts through void *; memcpy keeps -Wpedantic quiet. */
    if (p)
        memcpy(&pSgemm, &p, sizeof p);
    else
        dlclose(h);
}

int exact_blas_available(void)
{
    pthread_once(&blasOnce, blas_load);
    return pSgemm != NULL;
}

static float sq_norm(const float *a, uint32_t dim)
{
    float s = 0;
    for (uint32_t i = 0; i < dim; i++)
        s += a[i] * a[i];
    return s;
}

static float norm_of(genie_metric metric, const float *a, uint32_t dim)
{
    float s = sq_norm(a, dim);
    return metric == GENIE_METRIC_COSINE ? sqrtf(s) : s;
}

/* Offer the tile's row of each query taken to that query's heap. */
static void blas_select(void *ctx, unsigned t)
{
    (void)t;
    blas_job *job = ctx;
    for (;;) {
        size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i >= job->nq)
            break;
        const float *row = job->aTile + i * job->nb;
        const float *bn = job->aBaseNorm + job->b0;
        float qn = job->aQNorm[i];
        select_heap *h = &job->aHeap[i];
        for (uint64_t j = 0; j < job->nb; j++) {
            float d;
            if (job->metric == GENIE_METRIC_L2) {
                d = bn[j] - 2 * row[j] + qn;
                d = d > 0 ? d : 0;
            } else if (job->metric == GENIE_METRIC_IP) {
                d = -row[j];
            } else {
                d = bn[j] == 0 || qn == 0 ? 1 : 1 - row[j] / (bn[j] * qn);
            }
            select_push(h, select_key(UINT32_MAX - exact_key(d), (uint32_t)(job->b0 + j)));
        }
    }
}

static int cmp_neighbor(const void *a, const void *b)
{
    const genie_neighbor *x = a, *y = b;
    uint32_t kx = exact_key(x->distance), ky = exact_key(y->distance);
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

genie_status exact_blas_search(const genie_vectors *base, const genie_vectors *q, genie_metric metric, uint32_t k,
                               unsigned threads, genie_neighbor *out)
{
    uint32_t dim = base->dim;
    size_t qBlock = BLAS_QBLOCK;
    while (qBlock > 8 && (uint64_t)qBlock * k * sizeof(uint64_t) > BLAS_HEAP_BYTES)
        qBlock /= 2;
    if (qBlock > q->n)
        qBlock = (size_t)q->n;
    uint64_t bBlock = base->n < BLAS_BBLOCK ? base->n : BLAS_BBLOCK;
    unsigned nThread = threads ? threads : util_ncores();
    genie_status rc = GENIE_OK;
    float *aBaseNorm = malloc(base->n * sizeof *aBaseNorm);
    float *aQNorm = malloc(qBlock * sizeof *aQNorm);
    float *aTile = malloc(qBlock * bBlock * sizeof *aTile);
    uint64_t *aKey = malloc(qBlock * k * sizeof *aKey);
    select_heap *aHeap = malloc(qBlock * sizeof *aHeap);
    genie_hit *aHit = malloc(k * sizeof *aHit);
    if (!aBaseNorm || !aQNorm || !aTile || !aKey || !aHeap || !aHit) {
        rc = util_error(GENIE_ENOMEM, "out of memory in the exact search (k = %u)", k);
        goto done;
    }
    if (metric != GENIE_METRIC_IP)
        for (uint64_t j = 0; j < base->n; j++)
            aBaseNorm[j] = norm_of(metric, base->data + j * dim, dim);
    for (size_t q0 = 0; q0 < q->n; q0 += qBlock) {
        size_t nq = q->n - q0 < qBlock ? (size_t)(q->n - q0) : qBlock;
        const float *pq = q->data + q0 * dim;
        for (size_t i = 0; i < nq; i++) {
            aQNorm[i] = metric == GENIE_METRIC_IP ? 0 : norm_of(metric, pq + i * dim, dim);
            select_reset(&aHeap[i], aKey + i * k, k);
        }
        for (uint64_t b0 = 0; b0 < base->n; b0 += bBlock) {
            uint64_t nb = base->n - b0 < bBlock ? base->n - b0 : bBlock;
            pSgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nb, (int)dim, 1.0f, pq, (int)dim,
                        base->data + b0 * dim, (int)dim, 0.0f, aTile, (int)nb);
            blas_job job = {base, q, metric, k, aBaseNorm, aQNorm, aTile, q0, nq, b0, nb, aHeap, 0};
            util_parallel_run(nThread < nq ? nThread : (unsigned)nq, blas_select, &job);
        }
        for (size_t i = 0; i < nq; i++) {
            size_t n = select_finish(&aHeap[i], aHit);
            genie_neighbor *o = out + (q0 + i) * k;
            for (size_t r = 0; r < n; r++) {
                o[r].id = aHit[r].object;
                o[r].distance = genie_vector_distance(metric, base->data + (uint64_t)o[r].id * dim, pq + i * dim, dim);
            }
            qsort(o, n, sizeof *o, cmp_neighbor);
        }
    }
done:
    free(aBaseNorm);
    free(aQNorm);
    free(aTile);
    free(aKey);
    free(aHeap);
    free(aHit);
    return rc;
}
