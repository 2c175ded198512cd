/*
 * Building an inverted-file vectors index (genie_vectors_build_ivf,
 * vectors_ivf.h for the file):
 *
 *   1. the vectors the quantizers see: the base, or for cosine the base
 *      normalised (spherical k-means; the stored vectors stay as given);
 *   2. a sample of train_size of them (seeded), k-means to nlist
 *      centroids (engine/kmeans.h, on the chosen backend), every vector
 *      assigned to its nearest centroid (l2) or largest product (ip,
 *      cosine): its list;
 *   3. IVF-PQ: the residuals x - centroid of the sample, cut into pq_m
 *      slices, one k-means of 2^pq_bits codewords per slice (l2); every
 *      vector's residual slices assigned to their nearest codewords;
 *   4. the default nprobe (and depth) for recall@10 >= the target from the
 *      estimate of vectors_ivf_recall.c;
 *   5. the file: object i with one keyword, its list; the FRONTEND; the
 *      centroids, codebooks and codes (in the order the builder gives
 *      the postings: part by part, by list, ids ascending).
 */
#include "transform/vectors_ivf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/kmeans.h"
#include "index/builder.h"
#include "transform/recall.h"
#include "util/codec.h"
#include "util/error.h"
#include "util/finite.h"

#define VIVF_DEFAULT_ITERATIONS 20u

/* Everything a build holds; freed by build_free. */
typedef struct ivf_build {
    genie_ivf_params p;   /* defaults filled in */
    uint64_t n;
    uint32_t dim, ksub, dsub;
    const float *aWork;   /* the vectors the quantizers see (the base, or aNorm) */
    float *aNorm;         /* cosine: the base normalised */
    float *aCentroid;     /* nlist x dim */
    uint32_t *aList;      /* n: each vector's list */
    uint64_t *aListStart; /* nlist + 1 */
    uint32_t *aId;        /* n: ids by position */
    uint64_t *aPos;       /* n: each id's position */
    uint64_t *aSample;    /* train_size ids */
    float *aCodebook;     /* pq_m x ksub x dsub */
    uint8_t *aCode;       /* n x pq_m, by position */
    uint32_t defaultNprobe, defaultRefine;
} ivf_build;

static void build_free(ivf_build *b)
{
    free(b->aNorm);
    free(b->aCentroid);
    free(b->aList);
    free(b->aListStart);
    free(b->aId);
    free(b->aPos);
    free(b->aSample);
    free(b->aCodebook);
    free(b->aCode);
}

/* The parameters with their defaults, each checked against its range. */
static genie_status check_params(const genie_vectors *base, const genie_ivf_params *in, ivf_build *b)
{
    genie_ivf_params p = *in;
    uint64_t n = base->n;
    if (n == 0)
        return util_error(GENIE_EINVAL, "no base vectors to index");
    if (n > UINT32_MAX)
        return util_error(GENIE_ERANGE, "%llu vectors; an index holds at most 2^32 - 1", (unsigned long long)n);
    if (base->dim == 0 || base->dim > (1u << 24))
        return util_error(GENIE_EINVAL, "vectors of dimension %u; 1..%u", base->dim, 1u << 24);
    if (p.metric != GENIE_METRIC_L2 && p.metric != GENIE_METRIC_IP && p.metric != GENIE_METRIC_COSINE)
        return util_error(GENIE_EINVAL, "IVF: metric %s; l2, ip or cosine",
                          genie_metric_name(p.metric) ? genie_metric_name(p.metric) : "unknown");
    if (p.nlist == 0) {
        double d = floor(4 * sqrt((double)n) + 0.5);
        p.nlist = d < 1 ? 1 : d > VIVF_MAX_NLIST ? VIVF_MAX_NLIST : (uint32_t)d;
        if (p.nlist > n)
            p.nlist = (uint32_t)n;
    }
    if (p.nlist > n)
        return util_error(GENIE_EINVAL, "IVF: nlist = %u lists for %llu vectors; at most one list per vector",
                          p.nlist, (unsigned long long)n);
    if (p.nlist > VIVF_MAX_NLIST)
        return util_error(GENIE_EINVAL, "IVF: nlist = %u; at most %u", p.nlist, VIVF_MAX_NLIST);
    if (p.pq_m) {
        if (p.pq_m > base->dim || base->dim % p.pq_m)
            return util_error(GENIE_EINVAL, "IVF-PQ: M = %u sub-quantizers do not divide the dimension %u", p.pq_m,
                              base->dim);
        if (p.pq_bits == 0)
            p.pq_bits = 8;
        if (p.pq_bits > IVF_MAX_BITS)
            return util_error(GENIE_EINVAL, "IVF-PQ: %u bits per code; 1..%u", p.pq_bits, IVF_MAX_BITS);
    } else if (p.pq_bits || p.refine) {
        return util_error(GENIE_EINVAL, "IVF: %s applies to IVF-PQ (give pq_m)", p.refine ? "refine" : "pq_bits");
    }
    uint32_t ksub = p.pq_m ? 1u << p.pq_bits : 0;
    if (p.train_size == 0) {
        uint64_t t = 64 * (uint64_t)p.nlist;
        if (t < 256 * (uint64_t)ksub)
            t = 256 * (uint64_t)ksub;
        p.train_size = t < n ? t : n;
    }
    if (p.train_size > n)
        return util_error(GENIE_EINVAL, "IVF: a training set of %llu vectors from %llu", (unsigned long long)p.train_size,
                          (unsigned long long)n);
    if (p.train_size < p.nlist || p.train_size < ksub)
        return util_error(GENIE_EINVAL, "IVF: a training set of %llu vectors is too small for %u %s (at least %u)",
                          (unsigned long long)p.train_size, p.train_size < p.nlist ? p.nlist : ksub,
                          p.train_size < p.nlist ? "lists" : "codewords per sub-quantizer",
                          p.train_size < p.nlist ? p.nlist : ksub);
    if (p.iterations == 0)
        p.iterations = VIVF_DEFAULT_ITERATIONS;
    if (p.precision != GENIE_PRECISION_FP32 && p.precision != GENIE_PRECISION_TF32)
        return util_error(GENIE_EINVAL, "IVF: k-means precision %s; fp32 or tf32",
                          genie_precision_name(p.precision) ? genie_precision_name(p.precision) : "unknown");
    GENIE_TRY(recall_default_target(&p.recall, GENIE_VECTORS_DEFAULT_RECALL));
    b->p = p;
    b->n = n;
    b->dim = base->dim;
    b->ksub = ksub;
    b->dsub = p.pq_m ? base->dim / p.pq_m : 0;
    return GENIE_OK;
}

static genie_status oom(const char *zWhat)
{
    return util_error(GENIE_ENOMEM, "out of memory building an IVF index (%s)", zWhat);
}

/*
 * The training sample: train_size ids drawn by the seed, from the ids
 * other than the recall estimate's pseudo-queries when there are enough
 * (vivf_pseudo_queries); the draw is by rank among those ids.
 */
static genie_status training_sample(ivf_build *b)
{
    uint32_t aHeld[RECALL_SAMPLE], nHeld = 0;
    if (b->n >= VIVF_HOLD_OUT_MIN)
        nHeld = vivf_pseudo_queries(b->n, aHeld);
    if (b->n - nHeld < b->p.nlist || b->n - nHeld < b->ksub)
        nHeld = 0; /* too few vectors to spare them */
    uint64_t T = b->p.train_size;
    if (T > b->n - nHeld)
        T = b->p.train_size = b->n - nHeld;
    GENIE_TRY(kmeans_sample(b->n - nHeld, T, b->p.seed, b->aSample));
    /* Rank r among the kept ids: r plus the held ids at or below the result (aHeld ascends). */
    for (uint64_t i = 0; i < T; i++) {
        uint64_t id = b->aSample[i];
        for (uint32_t h = 0; h < nHeld && aHeld[h] <= id; h++)
            id++;
        b->aSample[i] = id;
    }
    return GENIE_OK;
}

/* Steps 1 and 2: the coarse quantizer and the lists. */
void vivf_normalise(const float *x, uint32_t dim, float *out)
{
    double s = 0;
    for (uint32_t d = 0; d < dim; d++)
        s += (double)x[d] * x[d];
    for (uint32_t d = 0; d < dim; d++)
        out[d] = s > 0 ? (float)(x[d] / sqrt(s)) : 0.0f;
}

static genie_status train_coarse(const genie_vectors *base, ivf_build *b)
{
    uint64_t n = b->n, T = b->p.train_size; /* training_sample may lower it */
    uint32_t dim = b->dim, nlist = b->p.nlist;
    b->aWork = base->data;
    if (b->p.metric == GENIE_METRIC_COSINE) {
        if (!(b->aNorm = malloc((size_t)n * dim * sizeof *b->aNorm)))
            return oom("normalised vectors");
        for (uint64_t i = 0; i < n; i++)
            vivf_normalise(base->data + i * dim, dim, b->aNorm + i * dim);
        b->aWork = b->aNorm;
    }
    float *aTrain = malloc((size_t)T * dim * sizeof *aTrain);
    b->aSample = malloc((size_t)T * sizeof *b->aSample);
    b->aCentroid = malloc((size_t)nlist * dim * sizeof *b->aCentroid);
    b->aList = malloc((size_t)n * sizeof *b->aList);
    if (!aTrain || !b->aSample || !b->aCentroid || !b->aList) {
        free(aTrain);
        return oom("the coarse quantizer");
    }
    genie_status rc = training_sample(b);
    T = b->p.train_size;
    for (uint64_t i = 0; rc == GENIE_OK && i < T; i++)
        memcpy(aTrain + i * dim, b->aWork + b->aSample[i] * dim, dim * sizeof *aTrain);
    int mode = b->p.metric == GENIE_METRIC_L2 ? KMEANS_L2 : KMEANS_IP;
    kmeans_params kp = {.k = nlist, .iterations = b->p.iterations, .seed = b->p.seed, .mode = mode,
                        .spherical = b->p.metric == GENIE_METRIC_COSINE, .backend = b->p.backend,
                        .threads = b->p.threads, .precision = b->p.precision, .progress = b->p.progress,
                        .progressCtx = b->p.progress_ctx, .zStage = "coarse"};
    if (rc == GENIE_OK)
        rc = kmeans_train(aTrain, T, dim, &kp, b->aCentroid, NULL);
    free(aTrain);
    GENIE_TRY(rc);
    GENIE_TRY(kmeans_assign(b->aWork, n, dim, b->aCentroid, nlist, mode, b->p.backend, 0, b->p.threads,
                            b->p.precision, b->aList));
    /* The positions: lists in order, ids ascending in each (a counting sort). */
    b->aListStart = calloc((size_t)nlist + 1, sizeof *b->aListStart);
    b->aId = malloc((size_t)n * sizeof *b->aId);
    b->aPos = malloc((size_t)n * sizeof *b->aPos);
    if (!b->aListStart || !b->aId || !b->aPos)
        return oom("the lists");
    for (uint64_t i = 0; i < n; i++)
        b->aListStart[b->aList[i] + 1]++;
    for (uint32_t l = 0; l < nlist; l++)
        b->aListStart[l + 1] += b->aListStart[l];
    uint64_t *aNext = malloc((size_t)nlist * sizeof *aNext);
    if (!aNext)
        return oom("the lists");
    memcpy(aNext, b->aListStart, (size_t)nlist * sizeof *aNext);
    for (uint64_t i = 0; i < n; i++) {
        b->aPos[i] = aNext[b->aList[i]]++;
        b->aId[b->aPos[i]] = (uint32_t)i;
    }
    free(aNext);
    return GENIE_OK;
}

/* Slice @p m of the residuals of the vectors @p aWhich (NULL: all n, by id) into @p aOut. */
static void residual_slice(const ivf_build *b, const uint64_t *aWhich, uint64_t nWhich, uint32_t m, float *aOut)
{
    uint32_t dim = b->dim, ds = b->dsub;
    for (uint64_t i = 0; i < nWhich; i++) {
        uint64_t id = aWhich ? aWhich[i] : i;
        const float *x = b->aWork + id * dim + (size_t)m * ds;
        const float *c = b->aCentroid + (uint64_t)b->aList[id] * dim + (size_t)m * ds;
        for (uint32_t t = 0; t < ds; t++)
            aOut[i * ds + t] = x[t] - c[t];
    }
}

/* Step 3: one codebook per slice, then every vector's code. */
static genie_status train_pq(ivf_build *b)
{
    uint32_t M = b->p.pq_m, ksub = b->ksub, ds = b->dsub;
    uint64_t n = b->n, T = b->p.train_size;
    b->aCodebook = malloc((size_t)M * ksub * ds * sizeof *b->aCodebook);
    b->aCode = malloc((size_t)n * M);
    float *aSlice = malloc((size_t)n * ds * sizeof *aSlice);
    uint32_t *aAssign = malloc((size_t)n * sizeof *aAssign);
    genie_status rc = GENIE_OK;
    if (!b->aCodebook || !b->aCode || !aSlice || !aAssign) {
        rc = oom("the product quantizer");
        goto done;
    }
    char zStage[32];
    for (uint32_t m = 0; m < M; m++) {
        snprintf(zStage, sizeof zStage, "pq %u/%u", m + 1, M);
        kmeans_params kp = {.k = ksub, .iterations = b->p.iterations, .seed = b->p.seed + 1 + m, .mode = KMEANS_L2,
                            .backend = b->p.backend, .threads = b->p.threads, .precision = b->p.precision,
                            .progress = b->p.progress, .progressCtx = b->p.progress_ctx, .zStage = zStage};
        residual_slice(b, b->aSample, T, m, aSlice);
        GENIE_TRY_GOTO(rc, kmeans_train(aSlice, T, ds, &kp, b->aCodebook + (size_t)m * ksub * ds, NULL), done);
        residual_slice(b, NULL, n, m, aSlice);
        GENIE_TRY_GOTO(rc, kmeans_assign(aSlice, n, ds, b->aCodebook + (size_t)m * ksub * ds, ksub, KMEANS_L2,
                                         b->p.backend, 0, b->p.threads, b->p.precision, aAssign),
                       done);
        for (uint64_t i = 0; i < n; i++)
            b->aCode[b->aPos[i] * M + m] = (uint8_t)aAssign[i];
    }
done:
    free(aSlice);
    free(aAssign);
    return rc;
}

static void engine_view(const genie_vectors *base, const ivf_build *b, engine_ivf *ix)
{
    *ix = (engine_ivf){.metric = b->p.metric, .dim = b->dim, .nlist = b->p.nlist, .n = b->n,
                       .aCentroid = b->aCentroid, .aListStart = b->aListStart, .aId = b->aId, .aVec = base->data,
                       .pqM = b->p.pq_m, .pqBits = b->p.pq_m ? b->p.pq_bits : 0, .aCodebook = b->aCodebook,
                       .aCode = b->aCode};
}

/* Step 4: the defaults for recall@10 >= the build's target (nprobe 1 for an index of one vector). */
static genie_status choose_defaults(const genie_vectors *base, ivf_build *b)
{
    b->defaultNprobe = 1;
    b->defaultRefine = 0;
    if (b->n < 2)
        return GENIE_OK;
    engine_ivf ix;
    engine_view(base, b, &ix);
    ivf_cpu_cache cache;
    pthread_mutex_init(&cache.lock, NULL);
    cache.pLayout = NULL;
    vivf_recall *r = NULL;
    double est;
    genie_status rc = vivf_recall_make(&ix, b->p.threads, &r);
    if (rc == GENIE_OK)
        rc = vivf_recall_plan(r, &ix, &cache, VIVF_DEFAULT_K, b->p.recall,
                              b->p.refine ? VIVF_DEPTH_REFINED : VIVF_DEPTH_NONE, b->p.threads,
                              &b->defaultNprobe, &b->defaultRefine, &est);
    vivf_recall_free(r);
    ivf_cpu_cache_free(&cache);
    pthread_mutex_destroy(&cache.lock);
    return rc;
}

static genie_status encode_front(const genie_vectors *base, const ivf_build *b, unsigned char **pOut, size_t *pN)
{
    codec_writer w;
    codec_writer_init(&w);
    codec_put_bytes(&w, "GIVF", 4);
    codec_put_u32(&w, VIVF_VERSION);
    codec_put_u32(&w, (uint32_t)b->p.metric);
    codec_put_u32(&w, b->dim);
    codec_put_u32(&w, b->p.nlist);
    codec_put_u32(&w, b->p.pq_m);
    codec_put_u32(&w, b->p.pq_m ? b->p.pq_bits : 0);
    codec_put_u32(&w, b->p.refine ? 1 : 0);
    codec_put_u64(&w, b->p.seed);
    codec_put_u64(&w, b->n);
    codec_put_u64(&w, b->p.train_size);
    codec_put_u32(&w, b->p.iterations);
    codec_put_u32(&w, b->defaultNprobe);
    codec_put_u32(&w, b->defaultRefine);
    codec_put_u32(&w, recall_to_millionths(b->p.recall));
    static const unsigned char aZero[VIVF_HEADER - 72];
    codec_put_bytes(&w, aZero, sizeof aZero);
    codec_put_bytes(&w, base->data, (size_t)b->n * b->dim * sizeof(float));
    return codec_writer_finish(&w, pOut, pN, "IVF parameters");
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * The codes in the order of the postings of the parts @p aEnd (ends of
 * object ranges), @p nParts of them: within a part by (list, id), part p's
 * postings starting at its first object (one posting per object).
 */
static genie_status codes_by_part(const ivf_build *b, const uint64_t *aEnd, uint32_t nParts, uint8_t **pOut)
{
    uint32_t M = b->p.pq_m;
    uint8_t *aOut = malloc((size_t)b->n * M);
    uint64_t *aKey = malloc((size_t)b->n * sizeof *aKey);
    if (!aOut || !aKey) {
        free(aOut);
        free(aKey);
        return oom("the codes of the parts");
    }
    for (uint32_t p = 0, o0 = 0; p < nParts; o0 = (uint32_t)aEnd[p++]) {
        uint64_t m = aEnd[p] - o0;
        for (uint64_t i = 0; i < m; i++)
            aKey[i] = (uint64_t)b->aList[o0 + i] << 32 | (o0 + i);
        qsort(aKey, (size_t)m, sizeof *aKey, cmp_u64);
        for (uint64_t r = 0; r < m; r++)
            memcpy(aOut + (o0 + r) * M, b->aCode + b->aPos[(uint32_t)aKey[r]] * M, M);
    }
    free(aKey);
    *pOut = aOut;
    return GENIE_OK;
}

/* Step 5. */
static genie_status write_index(const genie_vectors *base, const ivf_build *b, const genie_build_options *opt,
                                const char *path)
{
    genie_builder *bld = NULL;
    unsigned char *aFront = NULL;
    size_t nFront = 0;
    uint64_t *aEnd = NULL; /* the parts' ends (IVF-PQ) */
    uint32_t nParts = 1;
    uint8_t *aCode = NULL; /* the codes in the parts' order (several parts) */
    genie_status rc;
    GENIE_TRY_GOTO(rc, genie_builder_new(&bld, opt), done);
    for (uint64_t i = 0; i < b->n; i++) {
        genie_object o = {&b->aList[i], 1, 0, 0, NULL, 0};
        GENIE_TRY_GOTO(rc, genie_builder_add(bld, &o), done);
    }
    GENIE_TRY_GOTO(rc, encode_front(base, b, &aFront, &nFront), done);
    GENIE_TRY_GOTO(rc, builder_set_frontend(bld, GENIE_TYPE_VECTORS, aFront, nFront), done);
    free(aFront);
    aFront = NULL;
    if (b->p.pq_m) {
        GENIE_TRY_GOTO(rc, builder_part_ends(bld, &aEnd, &nParts), done);
        if (nParts > 1)
            GENIE_TRY_GOTO(rc, codes_by_part(b, aEnd, nParts, &aCode), done);
    }
    const void *aSec[3] = {b->aCentroid, b->aCodebook, aCode ? aCode : b->aCode};
    uint64_t anSec[3] = {(uint64_t)b->p.nlist * b->dim * sizeof(float),
                         (uint64_t)b->p.pq_m * b->ksub * b->dsub * sizeof(float), b->n * b->p.pq_m};
    GENIE_TRY_GOTO(rc, builder_set_vector_sections(bld, aSec, anSec), done);
    rc = genie_builder_write(bld, path);
done:
    genie_builder_free(bld);
    free(aFront);
    free(aEnd);
    free(aCode);
    return rc;
}

genie_status genie_vectors_build_ivf(const genie_vectors *base, const genie_ivf_params *params,
                                     const genie_build_options *opt, const char *path)
{
    util_error_clear();
    ivf_build b;
    memset(&b, 0, sizeof b);
    GENIE_TRY(check_params(base, params, &b));
    GENIE_TRY(util_check_finite(base->data, base->n, base->dim, params->threads, "base"));
    genie_status rc;
    GENIE_TRY_GOTO(rc, train_coarse(base, &b), done);
    if (b.p.pq_m)
        GENIE_TRY_GOTO(rc, train_pq(&b), done);
    GENIE_TRY_GOTO(rc, choose_defaults(base, &b), done);
    rc = write_index(base, &b, opt, path);
done:
    build_free(&b);
    return rc;
}
