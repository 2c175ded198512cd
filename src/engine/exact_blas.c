/*
 * Exact k-NN through GEMM: products of a block of queries with a block of
 * base vectors come from one matrix product Q * X^T (OpenBLAS sgemm, on its
 * own threads); no distance matrix larger than one tile is ever held.  The
 * answers are the direct loop's (exact_cpu_direct: genie_vector_distance,
 * ties by smaller id), bit for bit, by the argument of engine/exact_bound.h:
 *
 *   a(x, q)  l2: |x|^2 - 2 x.q + |q|^2 (clamped at 0; ranked squared);
 *            ip: -x.q;  cosine: 1 - x.q / (|x| |q|), 1 for a zero vector;
 *   e(x, q)  exact_bound_pair() for fp32 with w = |x| (double, rounded up)
 *            and rho = 0; for cosine w = 1 (0 for a zero vector), which
 *            covers this form: |s - x.q| <= nu |x||q| for any summation
 *            order of the GEMM, the norms' sums and roots, the division
 *            and the subtraction add (n + 7) u, the reference (2n + 7) u,
 *            within exact_bound's (3n + 20) u + nu.
 *
 * Each query keeps a bounded heap (engine/select.h) of the kRetain vectors
 * with the smallest lower bounds a - e, kRetain = 2k + 32 (all when the
 * base is smaller).  At the end, with U the k-th smallest upper bound a + e
 * among them and T = exact_bound_threshold(U): every vector of the exact
 * top k has lower <= T (exact_bound.h), and if the largest lower bound kept
 * exceeds T every such vector was kept.  The kept ones with lower <= T are
 * then ranked by their direct distance.  A query where that check fails
 * (more than kRetain vectors within the bound, e.g. duplicates), or whose
 * squared norm is outside the bound's range (all queries when a base
 * vector's is), is answered by the direct distances to every base vector.
 * A bitmap of allowed vectors (engine/filter.h) keeps the others out of
 * the heaps and of the direct path, so the argument holds over the
 * allowed vectors alone.
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
#include "engine/exact_bound.h"
#include "engine/filter.h"
#include "engine/select.h"
#include "util/error.h"
#include "util/threads.h"

#define BLAS_QBLOCK 1024u              /* queries per tile (fewer when k is large) */
#define BLAS_BBLOCK 4096u              /* base vectors per tile */
#define BLAS_HEAP_BYTES (64ull << 20)  /* heaps of one query block together */

/* Per vector: the norm its approximate distance uses (l2: |x|^2, cosine: |x|), the bound's w, in range. */
typedef struct blas_vec {
    float norm, w;
    int inRange;
} blas_vec;

typedef struct blas_job {
    const genie_vectors *base, *q;
    const uint64_t *aAllow; /* the base vectors that may be answered (engine/filter.h), or NULL */
    uint64_t nAllowed;
    genie_metric metric;
    uint32_t k, kEff, kRetain; /* output stride; answers per query, min(k, base->n); heap size */
    exact_bound bound;
    const float *aBaseNorm; /* base->n: each base vector's blas_vec norm and w, as arrays */
    const float *aBaseW;
    const blas_vec *aQ;     /* of the query block */
    const float *aTile;     /* nq x nb products of the current tile */
    size_t q0, nq;          /* query block */
    uint64_t b0, nb;        /* base block */
    select_heap *aHeap;     /* nq */
    uint32_t *aLowerKey;    /* BLAS_BBLOCK per thread: one row's lower bounds as keys */
    genie_neighbor *out;
    size_t next;            /* shared: next query row of the tile, or query to finish */
    int failed;             /* shared: out of memory while finishing */
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

void exact_blas_gemm_nt(uint64_t m, uint64_t n, uint32_t kdim, const float *A, const float *B, float *C)
{
    pSgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)kdim, 1.0f, A, (int)kdim, B, (int)kdim, 0.0f,
           C, (int)n);
}

static float round_up(double x)
{
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

static blas_vec vec_info(genie_metric metric, const float *a, uint32_t dim)
{
    float s = 0;
    double d = 0;
    for (uint32_t i = 0; i < dim; i++) {
        s += a[i] * a[i];
        d += (double)a[i] * a[i];
    }
    blas_vec v = {metric == GENIE_METRIC_COSINE ? sqrtf(s) : s, 0, 1};
    if (metric == GENIE_METRIC_COSINE) {
        v.w = d > 0 ? 1.0f : 0.0f;
        v.inRange = d == 0 || (d >= EXACT_BOUND_MIN_SQ && d <= EXACT_BOUND_MAX_SQ);
    } else {
        v.w = round_up(sqrt(d) * (1 + 0x1p-30));
        v.inRange = d <= EXACT_BOUND_MAX_SQ;
    }
    return v;
}

/*
 * The ordered keys (exact_key) of the lower bounds a - e of one query's
 * row of the tile (a as the essay above defines it), into @p aKey: a loop
 * per metric without calls, so that the compiler can vectorise it.
 */
static void lower_keys(const blas_job *job, const float *row, const blas_vec *q, float c, uint32_t *aKey)
{
    const exact_bound *b = &job->bound;
    const float *xn = job->aBaseNorm + job->b0, *xw = job->aBaseW + job->b0;
    float qn = q->norm, qw = q->w;
    uint64_t nb = job->nb;
    switch (job->metric) {
    case GENIE_METRIC_L2:
        for (uint64_t j = 0; j < nb; j++) {
            float d = xn[j] - 2 * row[j] + qn;
            aKey[j] = exact_key((d > 0 ? d : 0) - exact_bound_pair(b, c, xw[j], 0, qw, 0));
        }
        break;
    case GENIE_METRIC_IP:
        for (uint64_t j = 0; j < nb; j++)
            aKey[j] = exact_key(-row[j] - exact_bound_pair(b, c, xw[j], 0, qw, 0));
        break;
    default: /* cosine: a zero vector is at 1 from everything; norms are 0 or at least 2^-50 (inRange) */
        for (uint64_t j = 0; j < nb; j++) {
            /* den + 1 for a zero vector (den is 0 or at least 2^-100, so the sum is exact): then the
             * product row[j] is +-0 (every term of the GEMM's sum is), so d is 1 without a branch, and
             * the loop vectorises (a division or a select under a condition would keep it scalar) */
            float den = xn[j] * qn;
            float d = 1 - row[j] / (den + (float)(den == 0));
            aKey[j] = exact_key(d - exact_bound_pair(b, c, xw[j], 0, qw, 0));
        }
        break;
    }
}

/*
 * Offer the lower bounds of the tile's row of each query taken to that
 * query's heap.  The ids grow along the row and from tile to tile, so once
 * the heap is full a vector enters only with a lower bound strictly below
 * the worst kept one (a tie goes to the smaller id, already kept): that
 * test, on the keys, skips select_push for all but a few vectors.
 */
static void blas_select(void *ctx, unsigned t)
{
    blas_job *job = ctx;
    uint32_t *aKey = job->aLowerKey + (size_t)t * BLAS_BBLOCK;
    for (;;) {
        size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i >= job->nq)
            break;
        const blas_vec *q = &job->aQ[i];
        if (!q->inRange)
            continue; /* answered directly */
        select_heap *h = &job->aHeap[i];
        lower_keys(job, job->aTile + i * job->nb, q, exact_bound_query_c(&job->bound, q->w), aKey);
        /* the worst kept lower bound's key; while the heap has room UINT32_MAX, above every key of a
         * number (exact_key of +inf is 0xff800000) */
        uint32_t worst = h->n < h->k ? UINT32_MAX : UINT32_MAX - (uint32_t)(h->aKey[0] >> 32);
        for (uint64_t j = 0; j < job->nb; j++) {
            if (aKey[j] >= worst || !filter_allows(job->aAllow, job->b0 + j))
                continue;
            select_push(h, select_key(UINT32_MAX - aKey[j], (uint32_t)(job->b0 + j)));
            if (h->n == h->k)
                worst = UINT32_MAX - (uint32_t)(h->aKey[0] >> 32);
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t direct_key(const blas_job *job, uint32_t id, const float *pq)
{
    const genie_vectors *base = job->base;
    float d = genie_vector_distance(job->metric, base->data + (uint64_t)id * base->dim, pq, base->dim);
    return (uint64_t)exact_key(d) << 32 | id;
}

/* Query @p i of the block: the certified candidates ranked directly, or every base vector. */
static int finish_query(blas_job *job, size_t i, genie_hit *aHit, uint64_t *aKey)
{
    const genie_vectors *base = job->base;
    const float *pq = job->q->data + (job->q0 + i) * base->dim;
    const blas_vec *q = &job->aQ[i];
    size_t nCand = 0;
    if (q->inRange) {
        size_t n = select_finish(&job->aHeap[i], aHit); /* ascending lower bounds */
        float c = exact_bound_query_c(&job->bound, q->w);
        for (size_t r = 0; r < n; r++) {
            uint32_t id = aHit[r].object;
            float lower = exact_key_value(UINT32_MAX - aHit[r].count);
            float e = exact_bound_pair(&job->bound, c, job->aBaseW[id], 0, q->w, 0);
            aKey[r] = (uint64_t)exact_key(lower + 2 * e) << 32 | id;
        }
        qsort(aKey, n, sizeof *aKey, cmp_u64);
        float T = exact_bound_threshold(job->metric, exact_key_value((uint32_t)(aKey[job->kEff - 1] >> 32)));
        float lowerMax = exact_key_value(UINT32_MAX - aHit[n - 1].count);
        if (isfinite(T) && (n == job->nAllowed || lowerMax > T)) {
            for (size_t r = 0; r < n; r++)
                if (exact_key_value(UINT32_MAX - aHit[r].count) <= T)
                    aKey[nCand++] = direct_key(job, aHit[r].object, pq);
        }
    }
    if (nCand == 0) { /* the direct path */
        uint64_t *aAll = malloc(job->nAllowed * sizeof *aAll), nAll = 0;
        if (!aAll)
            return 0;
        for (uint64_t id = 0; id < base->n; id++)
            if (filter_allows(job->aAllow, id))
                aAll[nAll++] = direct_key(job, (uint32_t)id, pq);
        qsort(aAll, nAll, sizeof *aAll, cmp_u64);
        memcpy(aKey, aAll, job->kEff * sizeof *aKey);
        free(aAll);
        nCand = job->kEff;
    } else {
        qsort(aKey, nCand, sizeof *aKey, cmp_u64);
    }
    genie_neighbor *o = job->out + (job->q0 + i) * job->k;
    for (uint32_t r = 0; r < job->kEff; r++) {
        o[r].id = (uint32_t)aKey[r];
        o[r].distance = exact_key_value((uint32_t)(aKey[r] >> 32));
    }
    return 1;
}

static void blas_finish(void *ctx, unsigned t)
{
    (void)t;
    blas_job *job = ctx;
    genie_hit *aHit = malloc(job->kRetain * sizeof *aHit);
    uint64_t *aKey = malloc(job->kRetain * sizeof *aKey);
    for (;;) {
        size_t i = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (i >= job->nq)
            break;
        if (!aHit || !aKey || !finish_query(job, i, aHit, aKey))
            __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    }
    free(aHit);
    free(aKey);
}

genie_status exact_blas_search(const genie_vectors *base, const uint64_t *aAllow, const genie_vectors *q,
                               genie_metric metric, uint32_t k, unsigned threads, genie_neighbor *out)
{
    uint32_t dim = base->dim;
    uint64_t nAllowed = filter_count_range(aAllow, 0, base->n);
    uint32_t kEff = k < nAllowed ? k : (uint32_t)nAllowed;
    uint64_t kRetain64 = 2 * (uint64_t)kEff + 32;
    uint32_t kRetain = (uint32_t)(kRetain64 < nAllowed ? kRetain64 : nAllowed);
    size_t qBlock = BLAS_QBLOCK;
    while (qBlock > 8 && (uint64_t)qBlock * kRetain * sizeof(uint64_t) > BLAS_HEAP_BYTES)
        qBlock /= 2;
    if (qBlock > q->n)
        qBlock = (size_t)q->n;
    uint64_t bBlock = base->n < BLAS_BBLOCK ? base->n : BLAS_BBLOCK;
    unsigned nThread = threads ? threads : util_ncores();
    genie_status rc = GENIE_OK;
    float *aBaseNorm = malloc(base->n * sizeof *aBaseNorm), *aBaseW = malloc(base->n * sizeof *aBaseW);
    blas_vec *aQ = malloc(qBlock * sizeof *aQ);
    float *aTile = malloc(qBlock * bBlock * sizeof *aTile);
    uint64_t *aKey = malloc(qBlock * kRetain * sizeof *aKey);
    select_heap *aHeap = malloc(qBlock * sizeof *aHeap);
    uint32_t *aLowerKey = malloc((size_t)nThread * BLAS_BBLOCK * sizeof *aLowerKey);
    if (!aBaseNorm || !aBaseW || !aQ || !aTile || !aKey || !aHeap || !aLowerKey) {
        rc = util_error(GENIE_ENOMEM, "out of memory in the exact search (k = %u)", k);
        goto done;
    }
    int baseInRange = 1;
    for (uint64_t j = 0; j < base->n; j++) {
        blas_vec v = vec_info(metric, base->data + j * dim, dim);
        aBaseNorm[j] = v.norm;
        aBaseW[j] = v.w;
        baseInRange &= v.inRange;
    }
    if (!baseInRange) { /* the bound does not hold: the direct loop for every query */
        rc = exact_cpu_direct_allowed(base, aAllow, q, metric, k, threads, out);
        goto done;
    }
    blas_job job = {.base = base, .q = q, .aAllow = aAllow, .nAllowed = nAllowed, .metric = metric, .k = k,
                    .kEff = kEff, .kRetain = kRetain, .bound = exact_bound_make(metric, GENIE_PRECISION_FP32, dim),
                    .aBaseNorm = aBaseNorm, .aBaseW = aBaseW, .aQ = aQ, .aHeap = aHeap, .aLowerKey = aLowerKey,
                    .out = out};
    for (size_t q0 = 0; q0 < q->n; q0 += qBlock) {
        size_t nq = q->n - q0 < qBlock ? (size_t)(q->n - q0) : qBlock;
        const float *pq = q->data + q0 * dim;
        for (size_t i = 0; i < nq; i++) {
            aQ[i] = vec_info(metric, pq + i * dim, dim);
            select_reset(&aHeap[i], aKey + i * kRetain, kRetain);
        }
        job.q0 = q0;
        job.nq = nq;
        for (uint64_t b0 = 0; b0 < base->n; b0 += bBlock) {
            uint64_t nb = base->n - b0 < bBlock ? base->n - b0 : bBlock;
            pSgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)nb, (int)dim, 1.0f, pq, (int)dim,
                   base->data + b0 * dim, (int)dim, 0.0f, aTile, (int)nb);
            job.aTile = aTile;
            job.b0 = b0;
            job.nb = nb;
            job.next = 0;
            util_parallel_run(nThread < nq ? nThread : (unsigned)nq, blas_select, &job);
        }
        job.next = 0;
        util_parallel_run(nThread < nq ? nThread : (unsigned)nq, blas_finish, &job);
        if (job.failed) {
            rc = util_error(GENIE_ENOMEM, "out of memory in the exact search (k = %u)", k);
            goto done;
        }
    }
done:
    free(aBaseNorm);
    free(aBaseW);
    free(aQ);
    free(aTile);
    free(aKey);
    free(aHeap);
    free(aLowerKey);
    return rc;
}
