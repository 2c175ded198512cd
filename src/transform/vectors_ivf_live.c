/*
 * Live inverted-file vectors indexes (vectors_ivf.h): vectors added
 * through the write-ahead log go to the lists of their nearest centroids
 * under the index's trained quantizers, which are never trained again.
 *
 * The log holds each added vector with one keyword, its list (chosen at
 * write time, vivf_assign_list), so the delta index (index/live.h) has the
 * same shape as a one-part IVF file: one keyword per object, the vectors
 * as the FRONTEND's tail.  What the file keeps besides, the IVF-PQ codes,
 * is derived per snapshot (ivf_delta): every added vector's residual to
 * its list's centroid encoded with the file's codebooks, as the build
 * encodes (the same slices, the CPU's kmeans_assign).
 *
 * A search probes the same nprobe lists in the file and in the delta (the
 * probes depend on the centroids alone) and merges the two answers by the
 * engine's own order, (distance or estimate, id), the delta's ids after
 * the file's: what the compacted index (the same lists and codes in one
 * file) answers at the same nprobe.  IVF-PQ under l2 is merged on the
 * squared estimates (engine_ivf_query.squared) and rooted after; with a
 * refinement depth R, each side gives its R best estimates, the R best of
 * both are re-ranked by genie_vector_distance (as the engine's refinement
 * does, on the CPU and bit for bit on the GPU) and the k best kept.
 */
#include "transform/vectors_ivf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exact.h"
#include "engine/filter.h"
#include "engine/kmeans.h"
#include "index/builder.h"
#include "index/index.h"
#include "index/labels.h"
#include "index/live.h"
#include "util/bitmap.h"
#include "util/error.h"
#include "util/le.h"

/* ------------------------------------------------------------ encoding */

/* The vector the quantizers see (cosine: normalised) into @p w. */
static void work_vector(const vivf *st, const float *v, float *w)
{
    if (st->info.metric == GENIE_METRIC_COSINE)
        vivf_normalise(v, st->info.dim, w);
    else
        memcpy(w, v, st->info.dim * sizeof *w);
}

genie_status vivf_assign_list(const vivf *st, const float *v, uint32_t *pList)
{
    uint32_t dim = st->info.dim;
    float *w = malloc(dim * sizeof *w);
    if (!w)
        return util_error(GENIE_ENOMEM, "out of memory for a vector of %u dimensions", dim);
    work_vector(st, v, w);
    int mode = st->info.metric == GENIE_METRIC_L2 ? KMEANS_L2 : KMEANS_IP;
    genie_status rc = kmeans_assign(w, 1, dim, st->ix.aCentroid, st->info.nlist, mode, GENIE_BACKEND_CPU, 0, 1,
                                     GENIE_PRECISION_FP32, pList);
    free(w);
    return rc;
}

/* ------------------------------------------------------------ the delta */

/* The added vectors as an engine_ivf of their own (ids from 0), kept in the delta's derived slot. */
typedef struct ivf_delta {
    engine_ivf ix;
    uint64_t *aListStart; /* nlist + 1 */
    uint8_t *aCode;       /* IVF-PQ: by position */
    ivf_cpu_cache cache;
} ivf_delta;

static void delta_free(void *p)
{
    ivf_delta *d = p;
    if (!d)
        return;
    ivf_cpu_cache_free(&d->cache);
    pthread_mutex_destroy(&d->cache.lock);
    free(d->aListStart);
    free(d->aCode);
    free(d);
}

/* IVF-PQ: the code of every position, slice by slice (the build's train_pq, with the file's codebooks). */
static genie_status delta_codes(const vivf *st, ivf_delta *d)
{
    uint32_t dim = st->info.dim, M = st->info.pq_m, ds = dim / M, ksub = 1u << st->info.pq_bits;
    uint64_t n = d->ix.n;
    float *aWork = malloc((size_t)(n ? n : 1) * dim * sizeof *aWork);
    float *aSlice = malloc((size_t)(n ? n : 1) * ds * sizeof *aSlice);
    uint32_t *aAssign = malloc((size_t)(n ? n : 1) * sizeof *aAssign);
    uint32_t *aListOf = malloc((size_t)(n ? n : 1) * sizeof *aListOf);
    d->aCode = malloc((size_t)(n ? n : 1) * M);
    genie_status rc = GENIE_OK;
    if (!aWork || !aSlice || !aAssign || !aListOf || !d->aCode)
        rc = util_error(GENIE_ENOMEM, "out of memory encoding %llu added vectors", (unsigned long long)n);
    for (uint32_t l = 0; rc == GENIE_OK && l < st->info.nlist; l++)
        for (uint64_t pos = d->aListStart[l]; pos < d->aListStart[l + 1]; pos++) {
            aListOf[pos] = l;
            work_vector(st, d->ix.aVec + (uint64_t)d->ix.aId[pos] * dim, aWork + pos * dim);
        }
    for (uint32_t m = 0; rc == GENIE_OK && m < M && n; m++) {
        for (uint64_t pos = 0; pos < n; pos++) {
            const float *x = aWork + pos * dim + (size_t)m * ds;
            const float *c = st->ix.aCentroid + (uint64_t)aListOf[pos] * dim + (size_t)m * ds;
            for (uint32_t t = 0; t < ds; t++)
                aSlice[pos * ds + t] = x[t] - c[t];
        }
        rc = kmeans_assign(aSlice, n, ds, st->ix.aCodebook + (size_t)m * ksub * ds, ksub, KMEANS_L2,
                           GENIE_BACKEND_CPU, 0, 0, GENIE_PRECISION_FP32, aAssign);
        for (uint64_t pos = 0; rc == GENIE_OK && pos < n; pos++)
            d->aCode[pos * M + m] = (uint8_t)aAssign[pos];
    }
    free(aWork);
    free(aSlice);
    free(aAssign);
    free(aListOf);
    return rc;
}

/* The delta of @p idx's log, checked (one list each, below nlist) and encoded. */
static genie_status delta_make(const genie_index *idx, const vivf *st, ivf_delta **out)
{
    const index_live *l = idx->pLive;
    const genie_index *dx = l->pDelta;
    uint32_t nlist = st->info.nlist, dim = st->info.dim;
    uint64_t n = l->nAdded, nKw = dx->info.n_keywords;
    if (dx->nPart != 1 || dx->info.n_postings != n || dx->info.max_object_length != 1 ||
        dx->nFrontend < n * dim * sizeof(float) || (nKw && dx->aKeyword[nKw - 1] >= nlist))
        return util_error(GENIE_ECORRUPT, "%s: the log's added vectors are not one list each, below nlist = %u, "
                          "with %u dimensions", idx->zPath, nlist, dim);
    ivf_delta *d = calloc(1, sizeof *d);
    if (!d)
        return util_error(GENIE_ENOMEM, "out of memory");
    pthread_mutex_init(&d->cache.lock, NULL);
    genie_status rc = GENIE_OK;
    if (!(d->aListStart = malloc(((size_t)nlist + 1) * sizeof *d->aListStart)))
        rc = util_error(GENIE_ENOMEM, "out of memory for %u lists", nlist);
    for (uint32_t li = 0, j = 0; rc == GENIE_OK && li <= nlist; li++) {
        d->aListStart[li] = j < nKw ? dx->aListOffset[j] : n; /* keywords strictly increase (format_read.c) */
        if (j < nKw && dx->aKeyword[j] == li)
            j++;
    }
    d->ix = st->ix; /* the file's metric, centroids and codebooks */
    d->ix.n = n;
    d->ix.aListStart = d->aListStart;
    d->ix.aId = dx->aPosting;
    d->ix.aVec = (const float *)(const void *)(dx->aFrontend + dx->nFrontend - n * dim * sizeof(float));
    if (rc == GENIE_OK && st->info.pq_m)
        rc = delta_codes(st, d);
    d->ix.aCode = d->aCode;
    if (rc != GENIE_OK) {
        delta_free(d);
        return rc;
    }
    *out = d;
    return GENIE_OK;
}

/* The delta of @p idx (a live index with added vectors), derived on first use and kept with the delta. */
static genie_status delta_get(const genie_index *idx, const vivf *st, ivf_delta **out)
{
    static const char owner;
    index_derived *dd = idx->pLive->pDelta->pDerived;
    if (!dd)
        return util_error(GENIE_EINVAL, "the added vectors have no derived state");
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&dd->lock);
    index_slot *s = index_slot_claim(dd->aSlot, &owner);
    if (!s) {
        rc = util_error(GENIE_ENOMEM, "every one of the index's %d derived slots is taken", INDEX_SLOTS);
    } else if (!s->p) {
        ivf_delta *d = NULL;
        rc = delta_make(idx, st, &d);
        if (rc == GENIE_OK) {
            s->p = d;
            s->xFree = delta_free;
        }
    }
    *out = s ? s->p : NULL;
    pthread_mutex_unlock(&dd->lock);
    return rc;
}

/* ------------------------------------------------------------ searching */

/* a before b in the engine's order: (distance key, id) */
static int before(const genie_neighbor *a, const genie_neighbor *b)
{
    uint32_t ka = exact_key(a->distance), kb = exact_key(b->distance);
    return ka < kb || (ka == kb && a->id < b->id);
}

static int cmp_neighbor(const void *pa, const void *pb)
{
    const genie_neighbor *a = pa, *b = pb;
    return before(a, b) ? -1 : before(b, a);
}

/* The two sides' answers of query i merged into @p aM (at most @p kk); @return how many. */
static uint32_t merge_two(const genie_neighbor *a, uint32_t nA, uint64_t baseA, const genie_neighbor *b, uint32_t nB,
                          uint64_t baseB, uint32_t kk, genie_neighbor *aM)
{
    uint32_t i = 0, j = 0, n = 0;
    while (n < kk && (i < nA || j < nB)) {
        genie_neighbor x = i < nA ? a[i] : (genie_neighbor){0, 0}, y = j < nB ? b[j] : (genie_neighbor){0, 0};
        x.id += (uint32_t)baseA;
        y.id += (uint32_t)baseB;
        if (j >= nB || (i < nA && before(&x, &y))) {
            aM[n++] = x;
            i++;
        } else {
            aM[n++] = y;
            j++;
        }
    }
    return n;
}

genie_status vivf_live_search(const genie_index *idx, vivf *st, vivf_view *v, const engine_ivf_query *q,
                              const uint64_t *aAllow, genie_backend backend, int device, genie_neighbor *out,
                              uint32_t *aN, genie_backend *pUsed)
{
    const index_live *l = idx->pLive;
    uint32_t k = q->k, R = q->nRefine, kk = R ? R : k, dim = st->info.dim;
    if (kk > IVF_MAX_K)
        return util_error(GENIE_EINVAL, "a refinement depth of %u on an IVF index with added vectors: at most %u "
                          "until it is compacted (genie compact)", kk, IVF_MAX_K);
    if (R && R < k)
        return util_error(GENIE_EINVAL, "IVF search: refinement depth %u below k = %u", R, k);
    ivf_delta *dl;
    GENIE_TRY(delta_get(idx, st, &dl));
    size_t nq = (size_t)(q->n ? q->n : 1);
    genie_neighbor *aB = malloc(nq * kk * sizeof *aB), *aD = malloc(nq * kk * sizeof *aD);
    genie_neighbor *aM = malloc((size_t)kk * sizeof *aM);
    uint32_t *nB = malloc(nq * sizeof *nB), *nD = malloc(nq * sizeof *nD);
    uint64_t *aOwnB = NULL, *aOwnD = NULL;
    genie_status rc = aB && aD && aM && nB && nD ? GENIE_OK : util_error(GENIE_ENOMEM, "out of memory for %zu "
                                                                                       "queries", nq);
    /* Each side's kk best by the engine's order, estimates unrooted: merged below as one index's. */
    engine_ivf_query qb = *q, qd = *q;
    qb.k = qd.k = kk;
    qb.nRefine = qd.nRefine = 0;
    qb.squared = qd.squared = 1;
    if (rc == GENIE_OK)
        rc = filter_slice(aAllow, v->firstObject, v->ix.n, &qb.aAllow, &aOwnB);
    if (rc == GENIE_OK)
        rc = filter_slice(aAllow, l->nBase, l->nAdded, &qd.aAllow, &aOwnD);
    if (rc == GENIE_OK)
        rc = engine_ivf_search(&v->ix, v->pSlots, &v->cache, &qb, backend, device, aB, nB, pUsed);
    if (rc == GENIE_OK)
        rc = engine_ivf_search(&dl->ix, l->pDelta, &dl->cache, &qd, backend, device, aD, nD, NULL);
    int root = st->info.metric == GENIE_METRIC_L2 && st->info.pq_m && !R;
    for (uint64_t i = 0; rc == GENIE_OK && i < q->n; i++) {
        uint32_t n = merge_two(aB + i * kk, nB[i], v->firstObject, aD + i * kk, nD[i], l->nBase, kk, aM);
        for (uint32_t j = 0; R && j < n; j++) { /* the refinement: the R best estimates by their direct distances */
            const float *x = aM[j].id < l->nBase ? st->ix.aVec + (uint64_t)aM[j].id * dim
                                                 : dl->ix.aVec + (uint64_t)(aM[j].id - l->nBase) * dim;
            aM[j].distance = genie_vector_distance(st->info.metric, x, q->aQuery + i * dim, dim);
        }
        if (R)
            qsort(aM, n, sizeof *aM, cmp_neighbor);
        aN[i] = n < k ? n : k;
        for (uint32_t j = 0; j < aN[i]; j++) {
            out[i * k + j] = aM[j];
            if (root)
                out[i * k + j].distance = sqrtf(aM[j].distance);
        }
    }
    free(aB);
    free(aD);
    free(aM);
    free(nB);
    free(nD);
    free(aOwnB);
    free(aOwnD);
    return rc;
}

/* ------------------------------------------------------------ compaction */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * Every object's list and where its code lies (the file's codes by
 * position, the delta's after them, at nBase * M on): the file's from its
 * parts' lists, the delta's from its own.
 */
static void lists_and_codes(const genie_index *idx, const ivf_delta *dl, uint32_t *aList, uint64_t *aCodeAt)
{
    uint64_t nBase = idx->info.n_objects;
    for (uint32_t p = 0; p < idx->nPart; p++) {
        const genie_index *pv = &idx->aPart[p];
        for (uint64_t j = 0; j < pv->info.n_keywords; j++)
            for (uint64_t i = pv->aListOffset[j]; i < pv->aListOffset[j + 1]; i++) {
                uint64_t o = pv->firstObject + pv->aPosting[i];
                aList[o] = pv->aKeyword[j];
                aCodeAt[o] = pv->firstObject + i; /* part p's codes start at its first object */
            }
    }
    for (uint32_t li = 0; dl && li < dl->ix.nlist; li++)
        for (uint64_t pos = dl->aListStart[li]; pos < dl->aListStart[li + 1]; pos++) {
            aList[nBase + dl->ix.aId[pos]] = li;
            aCodeAt[nBase + dl->ix.aId[pos]] = nBase + pos;
        }
}

/* The FRONTEND of the kept vectors: the file's header with n (and train_size, at most n) the kept count. */
static genie_status compact_front(const genie_index *idx, const vivf *st, const ivf_delta *dl, const uint64_t *aAlive,
                                  uint64_t nKept, genie_builder *b)
{
    uint32_t dim = st->info.dim;
    uint64_t nBase = st->info.n, nAll = nBase + (dl ? dl->ix.n : 0), row = (uint64_t)dim * sizeof(float);
    unsigned char *a = malloc(VIVF_HEADER + (size_t)(nKept * row));
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory for %llu vectors", (unsigned long long)nKept);
    memcpy(a, idx->aFrontend, VIVF_HEADER);
    util_put_u64(a + 40, nKept);
    if (st->info.train_size > nKept)
        util_put_u64(a + 48, nKept);
    size_t at = VIVF_HEADER;
    for (uint64_t o = 0; o < nAll; o++) {
        if (aAlive && !util_bitmap_get(aAlive, o))
            continue;
        memcpy(a + at, o < nBase ? st->ix.aVec + o * dim : dl->ix.aVec + (o - nBase) * dim, (size_t)row);
        at += (size_t)row;
    }
    genie_status rc = builder_set_frontend(b, GENIE_TYPE_VECTORS, a, at);
    free(a);
    return rc;
}

/*
 * The vector sections: the centroids and codebooks as they are, the kept
 * codes in the order of the new parts' postings (by part, then list, then
 * id: the build's codes_by_part).
 */
static genie_status compact_sections(const genie_index *idx, const vivf *st, const ivf_delta *dl,
                                     const uint64_t *aKept, uint64_t nKept, const uint32_t *aList,
                                     const uint64_t *aCodeAt, genie_builder *b)
{
    uint32_t M = st->info.pq_m;
    uint64_t nBase = st->info.n, *aEnd = NULL, *aKey = NULL;
    uint32_t nParts = 1;
    uint8_t *aCode = NULL;
    genie_status rc = GENIE_OK;
    if (M) {
        GENIE_TRY(builder_part_ends(b, &aEnd, &nParts));
        aCode = malloc((size_t)(nKept ? nKept : 1) * M);
        aKey = malloc((size_t)(nKept ? nKept : 1) * sizeof *aKey);
        if (!aCode || !aKey)
            rc = util_error(GENIE_ENOMEM, "out of memory for the codes of %llu vectors", (unsigned long long)nKept);
        for (uint32_t p = 0, o0 = 0; rc == GENIE_OK && p < nParts; o0 = (uint32_t)aEnd[p++]) {
            uint64_t m = aEnd[p] - o0;
            for (uint64_t i = 0; i < m; i++)
                aKey[i] = (uint64_t)aList[aKept[o0 + i]] << 32 | (o0 + i);
            qsort(aKey, (size_t)m, sizeof *aKey, cmp_u64);
            for (uint64_t r = 0; r < m; r++) {
                uint64_t at = aCodeAt[aKept[(uint32_t)aKey[r]]];
                memcpy(aCode + (o0 + r) * M, at < nBase ? st->aCode + at * M : dl->aCode + (at - nBase) * M, M);
            }
        }
    }
    const void *aSec[3] = {idx->aVector[0], idx->aVector[1], aCode};
    uint64_t anSec[3] = {idx->nVector[0], idx->nVector[1], M ? nKept * M : 0};
    if (rc == GENIE_OK)
        rc = builder_set_vector_sections(b, aSec, anSec);
    free(aEnd);
    free(aKey);
    free(aCode);
    return rc;
}

genie_status vivf_compact_write(const genie_index *idx, const vivf *st, const char *zOut)
{
    const index_live *l = idx->pLive;
    ivf_delta *dl = NULL;
    if (l && l->nAdded)
        GENIE_TRY(delta_get(idx, st, &dl));
    const uint64_t *aAlive = l ? l->aAlive : NULL;
    uint64_t nAll = live_objects(idx), nKept = 0;
    uint32_t *aList = malloc((size_t)(nAll ? nAll : 1) * sizeof *aList);
    uint64_t *aCodeAt = malloc((size_t)(nAll ? nAll : 1) * sizeof *aCodeAt);
    uint64_t *aKept = malloc((size_t)(nAll ? nAll : 1) * sizeof *aKept);
    genie_builder *b = NULL;
    genie_status rc = GENIE_OK;
    if (!aList || !aCodeAt || !aKept) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %llu objects", (unsigned long long)nAll);
        goto done;
    }
    lists_and_codes(idx, dl, aList, aCodeAt);
    for (uint64_t o = 0; o < nAll; o++)
        if (!aAlive || util_bitmap_get(aAlive, o))
            aKept[nKept++] = o;
    if (nKept < st->info.nlist) {
        rc = util_error(GENIE_EINVAL, "%s: %llu vectors would be left for %u lists: an IVF index needs one vector a "
                        "list at least (rebuild it)", idx->zPath, (unsigned long long)nKept, st->info.nlist);
        goto done;
    }
    genie_build_options bo = {.sublist_length = idx->info.sublist_length};
    if (idx->nPart > 1)
        bo.part_objects = idx->aPart[0].info.n_objects;
    GENIE_TRY_GOTO(rc, genie_builder_new(&b, &bo), done);
    for (uint64_t j = 0; j < nKept; j++) {
        genie_object obj = {&aList[aKept[j]], 1, 1, 0, NULL, 0};
        GENIE_TRY_GOTO(rc, index_object_label(idx, aKept[j], &obj.label), done);
        GENIE_TRY_GOTO(rc, genie_builder_add(b, &obj), done);
    }
    GENIE_TRY_GOTO(rc, compact_front(idx, st, dl, aAlive, nKept, b), done);
    GENIE_TRY_GOTO(rc, compact_sections(idx, st, dl, aKept, nKept, aList, aCodeAt, b), done);
    rc = genie_builder_write(b, zOut);
done:
    genie_builder_free(b);
    free(aList);
    free(aCodeAt);
    free(aKept);
    return rc;
}
