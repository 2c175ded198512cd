/*
 * The CPU's inverted-file search (engine/ivf.h), the reference every
 * backend's answers equal.
 *
 * Queries are shared out among threads one at a time; a thread finds its
 * query's probes, scans the probed lists and keeps a bounded heap
 * (engine/select.h) of 64-bit keys (the distance's ordered key, then the
 * id), so the nearest come first and ties go to the smaller id.
 *
 * Distances are genie_vector_distance's, operation for operation,
 * computed for IVF_LANES vectors at once: a derived layout (built on the
 * first search, kept in the caller's ivf_cpu_cache) holds the centroids
 * and (IVF-Flat) each list's vectors in blocks of IVF_LANES,
 * dimension-major inside a block, so one lane of a vector register walks
 * one vector's dimensions in order (lane_sums, four blocks at a time to
 * hide the adds' latency).  Each lane's sum is the direct loop's sum, bit
 * for bit (this file is compiled without contraction of multiply-adds),
 * and the kernels are compiled for AVX2 too, picked at run time where the
 * processor has it.  The probes are the nprobe smallest (distance, list)
 * of the centroids' direct distances: the exact search's answer (exact.h),
 * which the GPU computes with its own exact search.
 *
 * IVF-PQ: per probe the lookup tables of engine/ivf.h (codeword j of
 * sub-quantizer m in lane j: the codebooks transposed in the layout),
 * then M look-ups and additions per candidate in sub-quantizer order.
 */
#include "engine/ivf.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/exact.h"
#include "engine/filter.h"
#include "engine/select.h"
#include "util/error.h"
#include "util/threads.h"

#define IVF_LANES 8u

/* The kernels also for AVX2, chosen when the library loads (an ifunc); not under the sanitizers. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define IVF_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) && !defined(IVF_NO_CLONES)
#define IVF_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define IVF_CLONES
#endif

typedef float lanes __attribute__((vector_size(IVF_LANES * sizeof(float))));

/* The derived layout (one engine_ivf's, for as long as it lives). */
typedef struct ivf_cpu {
    float *aCent;         /* the centroids in blocks of IVF_LANES, dim x IVF_LANES each */
    float *aCentNorm;     /* cosine: each centroid's |c|^2 (the direct loop's), by list */
    float *aBlock;        /* IVF-Flat: each list's vectors in blocks, as the centroids */
    uint64_t *aBlockStart;/* IVF-Flat: nlist + 1, in blocks */
    float *aNorm;         /* IVF-Flat, cosine: |x|^2 (the direct loop's) per block lane */
    float *aCodebookT;    /* IVF-PQ: M x dsub x 2^bits, codeword j in column j */
} ivf_cpu;

static void layout_free(ivf_cpu *c)
{
    if (!c)
        return;
    free(c->aCent);
    free(c->aCentNorm);
    free(c->aBlock);
    free(c->aBlockStart);
    free(c->aNorm);
    free(c->aCodebookT);
    free(c);
}

/* Vector @p x, the i-th, into lane i % IVF_LANES of block i / IVF_LANES of @p aBlock. */
static void put_lane(float *aBlock, uint32_t dim, uint64_t i, const float *x)
{
    float *blk = aBlock + (i / IVF_LANES) * dim * IVF_LANES;
    for (uint32_t d = 0; d < dim; d++)
        blk[(size_t)d * IVF_LANES + i % IVF_LANES] = x[d];
}

typedef struct layout_job {
    const engine_ivf *ix;
    ivf_cpu *c;
    atomic_uint_fast64_t next;
} layout_job;

static void layout_lists(void *pv, unsigned t)
{
    (void)t;
    layout_job *j = pv;
    const engine_ivf *ix = j->ix;
    uint32_t dim = ix->dim;
    for (;;) {
        uint64_t l = atomic_fetch_add(&j->next, 1);
        if (l >= ix->nlist)
            break;
        uint64_t p0 = ix->aListStart[l], p1 = ix->aListStart[l + 1];
        float *blk = j->c->aBlock + j->c->aBlockStart[l] * dim * IVF_LANES;
        float *nrm = j->c->aNorm ? j->c->aNorm + j->c->aBlockStart[l] * IVF_LANES : NULL;
        for (uint64_t p = p0; p < p1; p++) {
            const float *x = ix->aVec + (uint64_t)ix->aId[p] * dim;
            put_lane(blk, dim, p - p0, x);
            if (nrm)
                nrm[p - p0] = exact_dot(x, x, dim);
        }
    }
}

static genie_status layout_make(const engine_ivf *ix, unsigned threads, ivf_cpu **pOut)
{
    ivf_cpu *c = calloc(1, sizeof *c);
    if (!c)
        return util_error(GENIE_ENOMEM, "out of memory for the IVF layout");
    size_t nCentBlock = (ix->nlist + IVF_LANES - 1) / IVF_LANES;
    /* Zeros in the lanes past the end: computed, never offered. */
    if (!(c->aCent = calloc(nCentBlock * ix->dim * IVF_LANES, sizeof *c->aCent)) ||
        !(c->aCentNorm = calloc(ix->nlist, sizeof *c->aCentNorm)))
        goto oom;
    for (uint32_t l = 0; l < ix->nlist; l++) {
        const float *x = ix->aCentroid + (size_t)l * ix->dim;
        put_lane(c->aCent, ix->dim, l, x);
        c->aCentNorm[l] = exact_dot(x, x, ix->dim);
    }
    if (ix->pqM) {
        uint32_t ksub = 1u << ix->pqBits, dsub = ix->dim / ix->pqM;
        c->aCodebookT = malloc((size_t)ix->pqM * dsub * ksub * sizeof *c->aCodebookT);
        if (!c->aCodebookT)
            goto oom;
        for (uint32_t m = 0; m < ix->pqM; m++)
            for (uint32_t j = 0; j < ksub; j++)
                for (uint32_t t = 0; t < dsub; t++)
                    c->aCodebookT[((size_t)m * dsub + t) * ksub + j] =
                        ix->aCodebook[((size_t)m * ksub + j) * dsub + t];
        *pOut = c;
        return GENIE_OK;
    }
    if (!(c->aBlockStart = malloc(((size_t)ix->nlist + 1) * sizeof *c->aBlockStart)))
        goto oom;
    c->aBlockStart[0] = 0;
    for (uint32_t l = 0; l < ix->nlist; l++) {
        uint64_t len = ix->aListStart[l + 1] - ix->aListStart[l];
        c->aBlockStart[l + 1] = c->aBlockStart[l] + (len + IVF_LANES - 1) / IVF_LANES;
    }
    size_t nBlock = (size_t)c->aBlockStart[ix->nlist];
    /* Zeros in the lanes past a list's end: computed, never offered. */
    c->aBlock = calloc(nBlock ? nBlock * ix->dim * IVF_LANES : 1, sizeof *c->aBlock);
    if (!c->aBlock)
        goto oom;
    if (ix->metric == GENIE_METRIC_COSINE && !(c->aNorm = calloc(nBlock ? nBlock * IVF_LANES : 1, sizeof(float))))
        goto oom;
    layout_job j = {.ix = ix, .c = c};
    atomic_init(&j.next, 0);
    util_parallel_run(threads ? threads : util_ncores(), layout_lists, &j);
    *pOut = c;
    return GENIE_OK;
oom:
    layout_free(c);
    return util_error(GENIE_ENOMEM, "out of memory for the IVF search's layout of %llu vectors",
                      (unsigned long long)ix->n);
}

/* ------------------------------------------------------------ the lanes */

/* IVF_LANES floats at any float-aligned address (a lanes value read through an unaligned view). */
typedef float lanes_unaligned __attribute__((vector_size(IVF_LANES * sizeof(float)), aligned(4), may_alias));
#define lanes_load(p) (*(const lanes_unaligned *)(const void *)(p))

/*
 * The lane sums of @p nBlock consecutive blocks (dim x IVF_LANES each):
 * l2 sum_t (x_t - q_t)^2, else sum_t x_t q_t, each over t in order, the
 * operations of genie_vector_distance's loops lane by lane; four blocks at
 * a time, whose sums are independent chains.
 */
IVF_CLONES static void lane_sums(const float *blk, uint64_t nBlock, const float *q, uint32_t dim, int l2, float *out)
{
    size_t step = (size_t)dim * IVF_LANES;
    uint64_t b = 0;
    for (; b + 4 <= nBlock; b += 4) {
        const float *p = blk + b * step;
        lanes a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (uint32_t t = 0; t < dim; t++) {
            const float *pt = p + (size_t)t * IVF_LANES;
            lanes x0 = lanes_load(pt), x1 = lanes_load(pt + step), x2 = lanes_load(pt + 2 * step);
            lanes x3 = lanes_load(pt + 3 * step);
            if (l2) {
                x0 -= q[t];
                x1 -= q[t];
                x2 -= q[t];
                x3 -= q[t];
                a0 += x0 * x0;
                a1 += x1 * x1;
                a2 += x2 * x2;
                a3 += x3 * x3;
            } else {
                a0 += x0 * q[t];
                a1 += x1 * q[t];
                a2 += x2 * q[t];
                a3 += x3 * q[t];
            }
        }
        memcpy(out + b * IVF_LANES, &a0, sizeof a0);
        memcpy(out + (b + 1) * IVF_LANES, &a1, sizeof a1);
        memcpy(out + (b + 2) * IVF_LANES, &a2, sizeof a2);
        memcpy(out + (b + 3) * IVF_LANES, &a3, sizeof a3);
    }
    for (; b < nBlock; b++) {
        const float *p = blk + b * step;
        lanes a = {0};
        for (uint32_t t = 0; t < dim; t++) {
            lanes x = lanes_load(p + (size_t)t * IVF_LANES);
            if (l2) {
                x -= q[t];
                a += x * x;
            } else {
                a += x * q[t];
            }
        }
        memcpy(out + b * IVF_LANES, &a, sizeof a);
    }
}

/* genie_vector_distance's last step from a lane's sum. */
static float flat_distance(genie_metric metric, float s, float nx, float nq)
{
    if (metric == GENIE_METRIC_L2)
        return sqrtf(s);
    if (metric == GENIE_METRIC_IP)
        return -s;
    if (nx == 0 || nq == 0)
        return 1;
    return 1 - s / (sqrtf(nx) * sqrtf(nq));
}

/* Offer a candidate to the heap; the check before the call skips most. */
static inline void offer(select_heap *h, float d, uint32_t id)
{
    uint64_t key = select_key(UINT32_MAX - exact_key(d), id);
    if (h->n < h->k || key > h->aKey[0])
        select_push(h, key);
}

/* IVF-PQ's lookup tables for query @p q in list @p l (engine/ivf.h), M x 2^bits floats. */
IVF_CLONES static void pq_tables(const engine_ivf *ix, const ivf_cpu *c, const float *q, const float *qn, uint32_t l,
                                 float *r, float *T)
{
    uint32_t ksub = 1u << ix->pqBits, dsub = ix->dim / ix->pqM;
    int l2 = ix->metric == GENIE_METRIC_L2;
    const float *cen = ix->aCentroid + (size_t)l * ix->dim;
    for (uint32_t d = 0; d < ix->dim; d++)
        r[d] = l2 ? q[d] - cen[d] : qn[d];
    for (uint32_t m = 0; m < ix->pqM; m++) {
        float *t = T + (size_t)m * ksub;
        memset(t, 0, ksub * sizeof *t);
        for (uint32_t s = 0; s < dsub; s++) {
            const float *cb = c->aCodebookT + ((size_t)m * dsub + s) * ksub;
            float v = r[m * dsub + s];
            if (l2) {
                for (uint32_t j = 0; j < ksub; j++) {
                    float d = v - cb[j];
                    t[j] += d * d;
                }
            } else {
                for (uint32_t j = 0; j < ksub; j++)
                    t[j] += v * cb[j];
            }
        }
        for (uint32_t j = 0; !l2 && j < ksub; j++)
            t[j] = -t[j];
    }
}

/* ------------------------------------------------------------ the search */

typedef struct search_job {
    const engine_ivf *ix;
    const ivf_cpu *c;
    const engine_ivf_query *q;
    genie_neighbor *out;
    uint32_t *aN;
    atomic_uint_fast64_t next;
    atomic_int failed;    /* out of memory */
    atomic_int cancelled; /* q->cancel was seen set */
} search_job;

static void heap_out(select_heap *h, genie_hit *aHit, genie_neighbor *out, uint32_t *pN, int sqrtDistance)
{
    size_t n = select_finish(h, aHit);
    for (size_t i = 0; i < n; i++) {
        float d = exact_key_value(UINT32_MAX - aHit[i].count);
        out[i].id = aHit[i].object;
        out[i].distance = sqrtDistance ? sqrtf(d) : d;
    }
    *pN = (uint32_t)n;
}

/*
 * The nprobe nearest lists of query @p pq: every centroid's direct
 * distance (lane_sums over the centroid blocks into @p aSum), the smallest
 * (distance, list) kept in @p aProbe, ascending.
 */
static void find_probes(const search_job *j, const float *pq, float nq, float *aSum, uint64_t *aKey, genie_hit *aHit,
                        genie_neighbor *aProbe)
{
    const engine_ivf *ix = j->ix;
    lane_sums(j->c->aCent, (ix->nlist + IVF_LANES - 1) / IVF_LANES, pq, ix->dim, ix->metric == GENIE_METRIC_L2, aSum);
    select_heap h;
    select_reset(&h, aKey, j->q->nprobe);
    for (uint32_t l = 0; l < ix->nlist; l++)
        offer(&h, flat_distance(ix->metric, aSum[l], j->c->aCentNorm[l], nq), l);
    size_t n = select_finish(&h, aHit);
    for (size_t i = 0; i < n; i++)
        aProbe[i] = (genie_neighbor){aHit[i].object, exact_key_value(UINT32_MAX - aHit[i].count)};
}

/* IVF-Flat: the candidates of the probed lists by their direct distances into @p h. */
static void search_flat(const search_job *j, const float *pq, float nq, const genie_neighbor *aProbe, float *aSum,
                        select_heap *h)
{
    const engine_ivf *ix = j->ix;
    const ivf_cpu *c = j->c;
    for (uint32_t p = 0; p < j->q->nprobe; p++) {
        uint32_t l = aProbe[p].id;
        uint64_t p0 = ix->aListStart[l], len = ix->aListStart[l + 1] - p0, b0 = c->aBlockStart[l];
        lane_sums(c->aBlock + b0 * ix->dim * IVF_LANES, c->aBlockStart[l + 1] - b0, pq, ix->dim,
                  ix->metric == GENIE_METRIC_L2, aSum);
        for (uint64_t i = 0; i < len; i++) {
            if (!filter_allows(j->q->aAllow, ix->aId[p0 + i])) /* deleted or filtered out: never a candidate */
                continue;
            float nx = c->aNorm ? c->aNorm[b0 * IVF_LANES + i] : 0;
            offer(h, flat_distance(ix->metric, aSum[i], nx, nq), ix->aId[p0 + i]);
        }
    }
}

/* IVF-PQ: the R best estimates into @p h (R = its capacity). */
static void search_pq(const search_job *j, const float *pq, const genie_neighbor *aProbe, float *r, float *qn,
                      float *T, select_heap *h)
{
    const engine_ivf *ix = j->ix;
    uint32_t M = ix->pqM, ksub = 1u << ix->pqBits;
    float nq = ix->metric == GENIE_METRIC_COSINE ? exact_dot(pq, pq, ix->dim) : 1;
    for (uint32_t d = 0; d < ix->dim; d++) /* ip: the query itself; cosine: normalised */
        qn[d] = ix->metric == GENIE_METRIC_IP ? pq[d] : nq == 0 ? 0.0f : pq[d] / sqrtf(nq);
    for (uint32_t p = 0; p < j->q->nprobe; p++) {
        uint32_t l = aProbe[p].id;
        pq_tables(ix, j->c, pq, qn, l, r, T);
        float base = ix->metric == GENIE_METRIC_L2 ? 0.0f : aProbe[p].distance;
        for (uint64_t pos = ix->aListStart[l]; pos < ix->aListStart[l + 1]; pos++) {
            if (!filter_allows(j->q->aAllow, ix->aId[pos])) /* deleted or filtered out: never a candidate */
                continue;
            const uint8_t *code = ix->aCode + pos * M;
            float s = base;
            for (uint32_t m = 0; m < M; m++)
                s += T[(size_t)m * ksub + code[m]];
            offer(h, s, ix->aId[pos]);
        }
    }
}

static void search_worker(void *pv, unsigned t)
{
    (void)t;
    search_job *j = pv;
    const engine_ivf *ix = j->ix;
    const engine_ivf_query *q = j->q;
    uint32_t k = q->k, R = q->nRefine ? q->nRefine : k, dim = ix->dim;
    uint32_t ksub = ix->pqM ? 1u << ix->pqBits : 0, nHeap = R > q->nprobe ? R : q->nprobe;
    /* The lane sums of the longest list or of all centroids, padded to whole blocks. */
    uint64_t nSum = (uint64_t)(ix->nlist + IVF_LANES - 1) / IVF_LANES * IVF_LANES;
    for (uint32_t l = 0; !ix->pqM && l < ix->nlist; l++)
        if ((j->c->aBlockStart[l + 1] - j->c->aBlockStart[l]) * IVF_LANES > nSum)
            nSum = (j->c->aBlockStart[l + 1] - j->c->aBlockStart[l]) * IVF_LANES;
    uint64_t *aKey = malloc((size_t)(nHeap + k) * sizeof *aKey);
    genie_hit *aHit = malloc((size_t)nHeap * sizeof *aHit);
    genie_neighbor *aProbe = malloc((size_t)q->nprobe * sizeof *aProbe);
    float *aSum = malloc((size_t)nSum * sizeof *aSum);
    float *aWork = malloc(((size_t)2 * dim + (size_t)ix->pqM * ksub + 1) * sizeof *aWork);
    if (!aKey || !aHit || !aProbe || !aSum || !aWork) {
        atomic_store(&j->failed, 1);
        goto done;
    }
    for (;;) {
        uint64_t i = atomic_fetch_add(&j->next, 1);
        if (i >= q->n || atomic_load(&j->failed) || atomic_load(&j->cancelled))
            break;
        if (engine_cancelled(q->cancel)) {
            atomic_store(&j->cancelled, 1);
            break;
        }
        const float *pq = q->aQuery + i * dim;
        genie_neighbor *o = j->out + i * k;
        float nq = ix->metric == GENIE_METRIC_COSINE ? exact_dot(pq, pq, dim) : 0;
        find_probes(j, pq, nq, aSum, aKey, aHit, aProbe);
        select_heap h;
        select_reset(&h, aKey, ix->pqM ? R : k);
        if (!ix->pqM) {
            search_flat(j, pq, nq, aProbe, aSum, &h);
            heap_out(&h, aHit, o, &j->aN[i], 0);
            continue;
        }
        search_pq(j, pq, aProbe, aWork, aWork + dim, aWork + 2 * (size_t)dim, &h);
        if (!q->nRefine) {
            heap_out(&h, aHit, o, &j->aN[i], ix->metric == GENIE_METRIC_L2 && !q->squared);
            continue;
        }
        /* The refinement: the R candidates by their direct distances. */
        size_t nCand = select_finish(&h, aHit);
        select_heap hk;
        select_reset(&hk, aKey + nHeap, k);
        for (size_t c = 0; c < nCand; c++) {
            uint32_t id = aHit[c].object;
            offer(&hk, genie_vector_distance(ix->metric, ix->aVec + (uint64_t)id * dim, pq, dim), id);
        }
        heap_out(&hk, aHit, o, &j->aN[i], 0);
    }
done:
    free(aKey);
    free(aHit);
    free(aProbe);
    free(aSum);
    free(aWork);
}

genie_status ivf_probes(const engine_ivf *ix, const float *aQuery, uint64_t n, uint32_t nprobe, unsigned threads,
                        genie_neighbor *out)
{
    genie_vectors cen = {ix->nlist, ix->dim, (float *)(uintptr_t)ix->aCentroid};
    genie_vectors qv = {n, ix->dim, (float *)(uintptr_t)aQuery};
    return exact_search_in_index(NULL, &cen, &qv, ix->metric, GENIE_PRECISION_FP32, nprobe, GENIE_BACKEND_CPU, 0,
                                 threads, out, NULL, NULL);
}

void ivf_cpu_cache_free(ivf_cpu_cache *c)
{
    layout_free(c->pLayout);
    c->pLayout = NULL;
}

/* The layout of @p ix in @p pCache, made under its lock when missing. */
static genie_status layout_get(const engine_ivf *ix, ivf_cpu_cache *pCache, unsigned threads, ivf_cpu **pOut)
{
    if (!pCache)
        return layout_make(ix, threads, pOut);
    pthread_mutex_lock(&pCache->lock);
    genie_status rc = GENIE_OK;
    ivf_cpu *c = pCache->pLayout;
    if (!c)
        rc = layout_make(ix, threads, &c);
    if (rc == GENIE_OK)
        pCache->pLayout = c;
    pthread_mutex_unlock(&pCache->lock);
    *pOut = c;
    return rc;
}

genie_status ivf_cpu_search(const engine_ivf *ix, ivf_cpu_cache *pCache, const engine_ivf_query *q,
                            genie_neighbor *out, uint32_t *aN)
{
    ivf_cpu *c = NULL;
    GENIE_TRY(layout_get(ix, pCache, q->threads, &c));
    unsigned nThread = q->threads ? q->threads : util_ncores();
    search_job j = {.ix = ix, .c = c, .q = q, .out = out, .aN = aN};
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    atomic_init(&j.cancelled, 0);
    util_parallel_run(nThread < q->n ? nThread : (unsigned)q->n, search_worker, &j);
    if (!pCache)
        layout_free(c);
    if (atomic_load(&j.failed))
        return util_error(GENIE_ENOMEM, "out of memory in the IVF search (k = %u)", q->k);
    if (atomic_load(&j.cancelled))
        return engine_cancelled_error();
    return GENIE_OK;
}
