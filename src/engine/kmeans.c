/*
 * k-means (kmeans.h): the CPU's assignment step and the training driver
 * shared by the CPU and the GPU.
 *
 * The CPU step takes the points a tile at a time: OpenBLAS computes the
 * tile's products with every centroid (a GEMM), then threads pick each
 * point's centroid; once all points are assigned, a counting sort groups
 * them by centroid and threads add each centroid's points in fixed point
 * (kmeans.h), so nothing depends on the thread count.  Without OpenBLAS
 * the products are direct loops (slow, same rule).
 */
#include "engine/kmeans.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/exact.h"
#include "engine/exact_blas.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/threads.h"

/* Products held per tile: 16 Mi floats (64 MiB). */
#define KMEANS_TILE_FLOATS (1u << 24)
#define KMEANS_SPLIT_EPS (1.0 / 1024)

/* ------------------------------------------------------------ CPU step */

typedef struct step_ctx {
    kmeans_step_job *job;
    const float *aNorm;   /* k: |c|^2 (l2) */
    float *aTile;         /* rows x k products, or NULL (direct) */
    uint64_t row0, nRow;  /* the tile */
    uint32_t *aAssign;    /* n */
    double *aObj;         /* per thread */
    uint64_t *aOrder;     /* n: points grouped by centroid */
    uint64_t *aStart;     /* k + 1 */
    atomic_uint_fast64_t next;
} step_ctx;

static void assign_rows(void *pv, unsigned t)
{
    step_ctx *c = pv;
    kmeans_step_job *j = c->job;
    uint32_t k = j->k, dim = j->dim;
    double obj = 0;
    for (;;) {
        uint64_t r = atomic_fetch_add(&c->next, 1);
        if (r >= c->nRow)
            break;
        const float *x = j->aX + (c->row0 + r) * dim;
        const float *row = c->aTile ? c->aTile + r * k : NULL;
        uint32_t best = 0;
        float bestScore = INFINITY;
        for (uint32_t i = 0; i < k; i++) {
            float p = row ? row[i] : exact_dot(x, j->aC + (uint64_t)i * dim, dim);
            float score = j->mode == KMEANS_L2 ? c->aNorm[i] - 2.0f * p : -p;
            if (score < bestScore) {
                bestScore = score;
                best = i;
            }
        }
        c->aAssign[c->row0 + r] = best;
        obj += j->mode == KMEANS_L2 ? (double)exact_dot(x, x, dim) + bestScore : bestScore;
    }
    c->aObj[t] += obj;
}

static void sum_centroids(void *pv, unsigned t)
{
    (void)t;
    step_ctx *c = pv;
    kmeans_step_job *j = c->job;
    uint32_t dim = j->dim;
    for (;;) {
        uint64_t i = atomic_fetch_add(&c->next, 1);
        if (i >= j->k)
            break;
        int64_t *s = j->aSum + i * dim;
        double f = ldexp(1.0, j->scale); /* a power of two: x * f is exact */
        memset(s, 0, dim * sizeof *s);
        for (uint64_t p = c->aStart[i]; p < c->aStart[i + 1]; p++) {
            const float *x = j->aX + c->aOrder[p] * dim;
            for (uint32_t d = 0; d < dim; d++)
                s[d] += llrint(x[d] * f);
        }
    }
}

genie_status kmeans_step_cpu(kmeans_step_job *j)
{
    unsigned nThread = j->threads ? j->threads : util_ncores();
    uint64_t nRow = KMEANS_TILE_FLOATS / j->k;
    if (nRow < 1)
        nRow = 1;
    if (nRow > j->n)
        nRow = j->n;
    step_ctx c = {.job = j};
    genie_status rc = GENIE_OK;
    float *aNorm = malloc(j->k * sizeof *aNorm);
    double *aObj = calloc(nThread, sizeof *aObj);
    uint32_t *aAssign = j->aAssign ? j->aAssign : malloc((j->n ? j->n : 1) * sizeof *aAssign);
    int blas = 0;
#ifdef GENIE_HAVE_BLAS
    blas = exact_blas_available();
#endif
    float *aTile = blas ? malloc(nRow * j->k * sizeof *aTile) : NULL;
    if (!aNorm || !aObj || !aAssign || (blas && !aTile)) {
        rc = util_error(GENIE_ENOMEM, "out of memory in k-means (%u centroids)", j->k);
        goto done;
    }
    for (uint32_t i = 0; i < j->k; i++)
        aNorm[i] = exact_dot(j->aC + (uint64_t)i * j->dim, j->aC + (uint64_t)i * j->dim, j->dim);
    c.aNorm = aNorm;
    c.aAssign = aAssign;
    c.aObj = aObj;
    c.aTile = aTile;
    for (uint64_t r0 = 0; r0 < j->n; r0 += nRow) {
        c.row0 = r0;
        c.nRow = j->n - r0 < nRow ? j->n - r0 : nRow;
#ifdef GENIE_HAVE_BLAS
        if (blas)
            exact_blas_gemm_nt(c.nRow, j->k, j->dim, j->aX + r0 * j->dim, j->aC, aTile);
#endif
        atomic_init(&c.next, 0);
        util_parallel_run(nThread, assign_rows, &c);
    }
    j->objective = 0;
    for (unsigned t = 0; t < nThread; t++)
        j->objective += aObj[t];
    if (j->aCount || j->aSum) {
        uint64_t *aStart = calloc((size_t)j->k + 1, sizeof *aStart);
        uint64_t *aOrder = j->aSum ? malloc((j->n ? j->n : 1) * sizeof *aOrder) : NULL;
        if (!aStart || (j->aSum && !aOrder)) {
            free(aStart);
            free(aOrder);
            rc = util_error(GENIE_ENOMEM, "out of memory in k-means (%llu points)", (unsigned long long)j->n);
            goto done;
        }
        for (uint64_t i = 0; i < j->n; i++)
            aStart[aAssign[i] + 1]++;
        for (uint32_t i = 0; i < j->k; i++) {
            if (j->aCount)
                j->aCount[i] = (uint32_t)aStart[i + 1];
            aStart[i + 1] += aStart[i];
        }
        if (j->aSum) {
            uint64_t *aPos = malloc((size_t)j->k * sizeof *aPos);
            if (!aPos) {
                free(aStart);
                free(aOrder);
                rc = util_error(GENIE_ENOMEM, "out of memory in k-means (%u centroids)", j->k);
                goto done;
            }
            memcpy(aPos, aStart, (size_t)j->k * sizeof *aPos);
            for (uint64_t i = 0; i < j->n; i++)
                aOrder[aPos[aAssign[i]]++] = i;
            free(aPos);
            c.aOrder = aOrder;
            c.aStart = aStart;
            atomic_init(&c.next, 0);
            util_parallel_run(nThread, sum_centroids, &c);
        }
        free(aStart);
        free(aOrder);
    }
done:
    free(aNorm);
    free(aObj);
    free(aTile);
    if (aAssign != j->aAssign)
        free(aAssign);
    return rc;
}

/* ---------------------------------------------------------- the driver */

genie_status kmeans_sample(uint64_t n, uint64_t m, uint64_t seed, uint64_t *aOut)
{
    /* A partial Fisher-Yates shuffle of 0..n-1 whose touched slots live in a map: memory by m, not n. */
    util_u32map moved; /* slot -> value, for slots < 2^32 (n < 2^32 here) */
    GENIE_TRY(util_u32map_init(&moved, (size_t)(2 * m + 16)));
    uint64_t s = seed ^ 0x6b6d65616e73ull; /* "kmeans" */
    for (uint64_t i = 0; i < m; i++) {
        uint64_t j = i + util_splitmix64(&s) % (n - i);
        /* Stored values are one more than the slot's value (an absent slot holds itself). */
        const uint64_t *pj = util_u32map_find(&moved, (uint32_t)j), *pi = util_u32map_find(&moved, (uint32_t)i);
        uint64_t vj = pj ? *pj - 1 : j, vi = pi ? *pi - 1 : i;
        uint64_t *qj = util_u32map_upsert(&moved, (uint32_t)j);
        if (qj)
            *qj = vi + 1;
        uint64_t *qi = qj ? util_u32map_upsert(&moved, (uint32_t)i) : NULL;
        if (!qi) {
            util_u32map_free(&moved);
            return util_error(GENIE_ENOMEM, "out of memory drawing %llu samples", (unsigned long long)m);
        }
        *qi = vj + 1;
        aOut[i] = vj;
    }
    util_u32map_free(&moved);
    return GENIE_OK;
}

int kmeans_scale(uint64_t n, double maxAbs)
{
    int bits = 1;
    while (bits < 63 && ((uint64_t)1 << bits) <= n)
        bits++;
    if (!(maxAbs > 0))
        return 0;
    int e;
    frexp(maxAbs, &e); /* maxAbs < 2^e */
    return 62 - bits - e;
}

/* The step on the chosen side: the backend's GPU step when it has one, else the CPU's. */
typedef struct km_runner {
    const engine_ivf_ops *pOps;
    int device;
    void *pState;
} km_runner;

static genie_status run_step(km_runner *r, kmeans_step_job *j)
{
    if (r->pOps)
        return r->pOps->xKmeansStep(r->device, &r->pState, j);
    return kmeans_step_cpu(j);
}

static genie_status runner_open(km_runner *r, genie_backend backend, int device, genie_backend *pUsed)
{
    memset(r, 0, sizeof *r);
    const engine_backend *be;
    GENIE_TRY(engine_backend_pick_cap(backend, ENGINE_CAP(pIvf), &be));
    if (be) {
        int nDevice = be->xDevices ? be->xDevices() : 1;
        if (device < 0 || device >= nDevice)
            return util_error(GENIE_EINVAL, "k-means: GPU %d does not exist (%d found)", device, nDevice);
        r->pOps = be->pIvf;
        r->device = device;
    }
    if (pUsed)
        *pUsed = be ? be->id : GENIE_BACKEND_CPU;
    return GENIE_OK;
}

static void runner_close(km_runner *r)
{
    if (r->pOps && r->pState)
        r->pOps->xKmeansFree(r->pState);
    r->pState = NULL;
}

/* The centroids from the sums; each empty one split off a populous one (Faiss's rule). */
static void update_centroids(const kmeans_params *p, uint32_t dim, const int64_t *aSum, const uint32_t *aCount,
                             uint64_t n, int scale, uint64_t *pRng, float *aC)
{
    uint32_t k = p->k;
    double unit = ldexp(1.0, -scale); /* a power of two: multiplying by it is exact */
    for (uint32_t i = 0; i < k; i++) {
        if (!aCount[i])
            continue;
        float *c = aC + (uint64_t)i * dim;
        for (uint32_t d = 0; d < dim; d++)
            c[d] = (float)((double)aSum[(uint64_t)i * dim + d] / aCount[i] * unit);
    }
    uint32_t *aSize = malloc(k * sizeof *aSize);
    if (aSize) {
        memcpy(aSize, aCount, k * sizeof *aSize);
        for (uint32_t i = 0; i < k; i++) {
            if (aSize[i])
                continue;
            /* Draw a point; split its cluster when it has more than one. */
            uint32_t from = i;
            for (int tries = 0; tries < 1000 && from == i; tries++) {
                uint64_t r = util_splitmix64(pRng) % n, cum = 0;
                for (uint32_t m = 0; m < k; m++) {
                    cum += aSize[m];
                    if (r < cum) {
                        if (aSize[m] > 1)
                            from = m;
                        break;
                    }
                }
            }
            if (from == i)
                continue;
            float *a = aC + (uint64_t)i * dim, *b = aC + (uint64_t)from * dim;
            for (uint32_t d = 0; d < dim; d++) {
                double eps = d % 2 ? -KMEANS_SPLIT_EPS : KMEANS_SPLIT_EPS;
                a[d] = (float)(b[d] * (1 + eps));
                b[d] = (float)(b[d] * (1 - eps));
            }
            aSize[i] = aSize[from] / 2;
            aSize[from] -= aSize[i];
        }
        free(aSize);
    }
    for (uint32_t i = 0; p->spherical && i < k; i++) {
        float *c = aC + (uint64_t)i * dim;
        double s = 0;
        for (uint32_t d = 0; d < dim; d++)
            s += (double)c[d] * c[d];
        for (uint32_t d = 0; s > 0 && d < dim; d++)
            c[d] = (float)(c[d] / sqrt(s));
    }
}

genie_status kmeans_train(const float *aX, uint64_t n, uint32_t dim, const kmeans_params *p, float *aC,
                          genie_backend *pUsed)
{
    if (p->k == 0 || p->k > n)
        return util_error(GENIE_EINVAL, "k-means: %u centroids from %llu points (need 1..%llu)", p->k,
                          (unsigned long long)n, (unsigned long long)n);
    km_runner r;
    GENIE_TRY(runner_open(&r, p->backend, p->device, pUsed));
    genie_status rc = GENIE_OK;
    uint64_t *aPick = malloc(p->k * sizeof *aPick);
    int64_t *aSum = malloc((size_t)p->k * dim * sizeof *aSum);
    uint32_t *aCount = malloc(p->k * sizeof *aCount);
    if (!aPick || !aSum || !aCount) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %u centroids of %u dimensions", p->k, dim);
        goto done;
    }
    GENIE_TRY_GOTO(rc, kmeans_sample(n, p->k, p->seed, aPick), done);
    for (uint32_t i = 0; i < p->k; i++)
        memcpy(aC + (uint64_t)i * dim, aX + aPick[i] * dim, dim * sizeof *aC);
    double maxAbs = 0;
    for (uint64_t i = 0; i < n * dim; i++)
        maxAbs = fmax(maxAbs, fabs(aX[i]));
    int scale = kmeans_scale(n, maxAbs);
    uint64_t rng = p->seed ^ 0x73706c6974ull; /* "split" */
    for (uint32_t it = 0; it < p->iterations; it++) {
        kmeans_step_job j = {.aX = aX, .n = n, .dim = dim, .aC = aC, .k = p->k, .mode = p->mode, .scale = scale,
                             .threads = p->threads, .precision = p->precision, .aSum = aSum, .aCount = aCount};
        GENIE_TRY_GOTO(rc, run_step(&r, &j), done);
        update_centroids(p, dim, aSum, aCount, n, scale, &rng, aC);
        if (p->progress)
            p->progress(p->progressCtx, p->zStage, it + 1, p->iterations, j.objective / (double)n);
    }
done:
    runner_close(&r);
    free(aPick);
    free(aSum);
    free(aCount);
    return rc;
}

genie_status kmeans_assign(const float *aX, uint64_t n, uint32_t dim, const float *aC, uint32_t k, int mode,
                           genie_backend backend, int device, unsigned threads, genie_precision precision,
                           uint32_t *aAssign)
{
    km_runner r;
    GENIE_TRY(runner_open(&r, backend, device, NULL));
    kmeans_step_job j = {.aX = aX, .n = n, .dim = dim, .aC = aC, .k = k, .mode = mode, .threads = threads,
                         .precision = precision, .aAssign = aAssign};
    genie_status rc = run_step(&r, &j);
    runner_close(&r);
    return rc;
}
