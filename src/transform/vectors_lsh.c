/*
 * LSH families for dense vectors (Zhou et al. (GENIE) IV-A), the keywords of many
 * vectors hashed in parallel, and the FRONTEND bytes that record the
 * families (layout in vectors_lsh.h).
 *
 *   l2 (E2LSH, Eqn. 10): h_i(v) = floor((a_i.v + b_i) / w_i), a_i ~ N(0, I).
 *      The paper "divides the whole hash domain into 67 buckets": without a
 *      width, w_i = (max - min) / (D - 1) of a_i.v over the base and
 *      buckets count from the minimum; with a width w the D buckets are
 *      centred on the middle of that range.  b_i ~ U[0, w_i).  Values
 *      outside the range (queries) land in the first or last bucket.
 *   l1 (random binning, Eqn. 2): a grid of cell size g_i ~ Gamma(2, sigma)
 *      (the density sigma k''(sigma) of the Laplacian kernel
 *      exp(-|p - q|_1 / sigma)) shifted by u_i ~ U[0, g_i)^dim; the cell
 *      coordinates floor((v_j - u_ij) / g_i) are MurmurHash3'd into [0, D)
 *      (re-hashing, IV-A2).  Pr[same cell] = exp(-|p - q|_1 / sigma).
 *      Without sigma: the median distance from 64 sample vectors to their
 *      nearest neighbour among 4096 others, over ln 2, so near neighbours
 *      collide about half the time.
 *   cosine (sign random projections): bits sign bits per function,
 *      D = 2^bits; Pr[same bucket] = (1 - angle / pi)^bits.
 *
 * The random draws use splitmix64 from the seed, in a fixed order, and
 * Box-Muller for normals, so an index and its queries agree exactly.
 */
#include "genie/vectors.h"
#include "transform/vectors_lsh.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "transform/recall.h"
#include "util/codec.h"
#include "util/error.h"
#include "util/hash.h"
#include "util/threads.h"

#define VLSH_DEFAULT_M 237u
#define VLSH_DEFAULT_D_L2 67u
#define VLSH_DEFAULT_D_L1 8192u
#define VLSH_DEFAULT_BITS 8u

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so logarithms stay finite. */
static double uniform01(uint64_t *s)
{
    return ((double)(splitmix64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal01(uint64_t *s)
{
    double u = uniform01(s), v = uniform01(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

void vlsh_free(vlsh *h)
{
    if (!h)
        return;
    free(h->aProj);
    free(h->aShift);
    free(h->aCell);
    free(h->aLo);
    free(h->aW);
    memset(h, 0, sizeof *h);
}

static float *alloc_floats(uint64_t n)
{
    return malloc((size_t)(n ? n : 1) * sizeof(float));
}

uint64_t vlsh_draws(const genie_lsh_params *p, uint32_t dim)
{
    if (p->metric == GENIE_METRIC_COSINE)
        return (uint64_t)p->m * p->bits * dim;
    return (uint64_t)p->m * dim;
}

genie_status vlsh_init(vlsh *h, const genie_lsh_params *pIn, uint32_t dim)
{
    memset(h, 0, sizeof *h);
    genie_lsh_params p = *pIn;
    if (!genie_metric_name(p.metric))
        return util_error(GENIE_EINVAL, "unknown metric %d", (int)p.metric);
    if (p.metric == GENIE_METRIC_IP)
        return util_error(GENIE_EINVAL, "no LSH family for the inner product: use l2, l1 or cosine");
    if (p.m == 0)
        p.m = VLSH_DEFAULT_M;
    if (p.m > VLSH_MAX_M)
        return util_error(GENIE_EINVAL, "m = %u hash functions; at most %u", p.m, VLSH_MAX_M);
    if (dim == 0 || dim > VLSH_MAX_DIM)
        return util_error(GENIE_EINVAL, "vectors of dimension %u; 1..%u", dim, VLSH_MAX_DIM);
    if (!isfinite(p.width) || p.width < 0 || !isfinite(p.sigma) || p.sigma < 0)
        return util_error(GENIE_EINVAL, "width and sigma must be finite and positive (or 0 for the default)");
    GENIE_TRY(recall_default_target(&p.recall, GENIE_VECTORS_DEFAULT_RECALL));
    uint64_t nDraw = 0; /* projections */
    if (p.metric == GENIE_METRIC_COSINE) {
        if (p.bits == 0)
            p.bits = VLSH_DEFAULT_BITS;
        if (p.bits > 16)
            return util_error(GENIE_EINVAL, "bits = %u per function; 1..16", p.bits);
        if (p.buckets && p.buckets != 1u << p.bits)
            return util_error(GENIE_EINVAL, "cosine: buckets is 2^bits = %u, not %u", 1u << p.bits, p.buckets);
        p.buckets = 1u << p.bits;
        p.width = p.sigma = 0;
        nDraw = (uint64_t)p.m * p.bits * dim;
    } else {
        p.bits = 0;
        if (p.buckets == 0)
            p.buckets = p.metric == GENIE_METRIC_L2 ? VLSH_DEFAULT_D_L2 : VLSH_DEFAULT_D_L1;
        if (p.buckets < 2)
            return util_error(GENIE_EINVAL, "buckets = %u per function; at least 2", p.buckets);
        if (p.metric == GENIE_METRIC_L2)
            p.sigma = 0;
        else
            p.width = 0;
        nDraw = p.metric == GENIE_METRIC_L2 ? (uint64_t)p.m * dim : 0;
    }
    if ((uint64_t)p.m * p.buckets > (uint64_t)UINT32_MAX + 1)
        return util_error(GENIE_EINVAL, "m x buckets = %llu keywords; at most 2^32",
                          (unsigned long long)p.m * p.buckets);
    if (vlsh_draws(&p, dim) > VLSH_MAX_DRAWS)
        return util_error(GENIE_EINVAL, "m = %u, bits = %u, dimension %u need %llu random floats; at most %u",
                          p.m, p.bits, dim, (unsigned long long)vlsh_draws(&p, dim), VLSH_MAX_DRAWS);
    h->p = p;
    h->dim = dim;
    h->D = p.buckets;
    uint64_t s = p.seed;
    genie_status rc = GENIE_OK;
    if (nDraw) {
        if (!(h->aProj = alloc_floats(nDraw)))
            goto oom;
        for (uint64_t i = 0; i < nDraw; i++)
            h->aProj[i] = (float)normal01(&s);
    }
    if (p.metric == GENIE_METRIC_L2) {
        h->aShift = alloc_floats(p.m);
        h->aLo = alloc_floats(p.m);
        h->aW = alloc_floats(p.m);
        if (!h->aShift || !h->aLo || !h->aW)
            goto oom;
        for (uint32_t i = 0; i < p.m; i++)
            h->aShift[i] = (float)uniform01(&s);
    } else if (p.metric == GENIE_METRIC_L1) {
        h->aCell = alloc_floats(p.m);
        h->aShift = alloc_floats((uint64_t)p.m * dim);
        if (!h->aCell || !h->aShift)
            goto oom;
        for (uint32_t i = 0; i < p.m; i++) {
            h->aCell[i] = (float)(-log(uniform01(&s)) - log(uniform01(&s))); /* Gamma(2, 1) */
            for (uint32_t j = 0; j < dim; j++)
                h->aShift[(uint64_t)i * dim + j] = (float)uniform01(&s);
        }
    }
    return GENIE_OK;
oom:
    rc = util_error(GENIE_ENOMEM, "out of memory drawing %u hash functions", p.m);
    vlsh_free(h);
    return rc;
}

static float dotf(const float *a, const float *b, uint32_t n)
{
    float s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

void vlsh_hash(const vlsh *h, const float *v, uint32_t *aBucket)
{
    uint32_t dim = h->dim, m = h->p.m;
    if (h->p.metric == GENIE_METRIC_L2) {
        for (uint32_t i = 0; i < m; i++) {
            float w = h->aW[i];
            double x = floor(((double)dotf(h->aProj + (uint64_t)i * dim, v, dim) - h->aLo[i]) / w + h->aShift[i]);
            /* NaN (an infinite projection of a query) goes to bucket 0. */
            aBucket[i] = !(x > 0) ? 0 : x >= h->D - 1 ? h->D - 1 : (uint32_t)x;
        }
    } else if (h->p.metric == GENIE_METRIC_COSINE) {
        const float *a = h->aProj;
        for (uint32_t i = 0; i < m; i++) {
            uint32_t b = 0;
            for (uint32_t t = 0; t < h->p.bits; t++, a += dim)
                b |= (uint32_t)(dotf(a, v, dim) >= 0) << t;
            aBucket[i] = b;
        }
    } else {
        int32_t aCellIdx[256];
        for (uint32_t i = 0; i < m; i++) {
            float g = h->aCell[i] * h->p.sigma;
            const float *u = h->aShift + (uint64_t)i * dim;
            uint32_t hv = (uint32_t)(h->p.seed ^ (h->p.seed >> 32)) ^ (i * 0x9e3779b9u);
            /* Hash the cell coordinates 256 at a time, chaining the seed. */
            for (uint32_t j0 = 0; j0 < dim; j0 += 256) {
                uint32_t n = dim - j0 < 256 ? dim - j0 : 256;
                for (uint32_t j = 0; j < n; j++) {
                    double c = floor(((double)v[j0 + j] - (double)u[j0 + j] * g) / g);
                    /* NaN (an infinite query value) goes to cell INT32_MIN. */
                    aCellIdx[j] = !(c > INT32_MIN) ? INT32_MIN : c > INT32_MAX ? INT32_MAX : (int32_t)c;
                }
                hv = util_murmur3_32(aCellIdx, n * sizeof(int32_t), hv);
            }
            aBucket[i] = hv % h->D;
        }
    }
}

/* -------------------------------------------------------------- keywords */

typedef struct keyword_job {
    const vlsh *h;
    const float *aVec;
    uint64_t n;
    uint32_t *aKw; /* n x m */
    atomic_size_t next;
} keyword_job;

static void keyword_worker(void *ctx, unsigned t)
{
    (void)t;
    keyword_job *job = ctx;
    uint32_t m = job->h->p.m, D = job->h->D;
    for (;;) {
        size_t i0 = atomic_fetch_add(&job->next, 64);
        if (i0 >= job->n)
            break;
        size_t i1 = i0 + 64 < job->n ? i0 + 64 : job->n;
        for (size_t i = i0; i < i1; i++) {
            uint32_t *aKw = job->aKw + i * m;
            vlsh_hash(job->h, job->aVec + i * job->h->dim, aKw);
            for (uint32_t f = 0; f < m; f++)
                aKw[f] += f * D;
        }
    }
}

genie_status vlsh_keywords(const vlsh *h, const float *aVec, uint64_t n, unsigned threads, uint32_t **pOut)
{
    keyword_job job = {.h = h, .aVec = aVec, .n = n, .aKw = malloc((size_t)(n ? n : 1) * h->p.m * sizeof(uint32_t))};
    if (!job.aKw)
        return util_error(GENIE_ENOMEM, "out of memory hashing %llu vectors", (unsigned long long)n);
    atomic_init(&job.next, 0);
    util_parallel_run(threads ? threads : util_ncores(), keyword_worker, &job);
    *pOut = job.aKw;
    return GENIE_OK;
}

/* ---------------------------------------------------------------- fitting */

typedef struct fit_job {
    const vlsh *h;
    const genie_vectors *base;
    float *aMin, *aMax; /* per thread: nThread x m */
    atomic_size_t next;
} fit_job;

static void fit_worker(void *ctx, unsigned t)
{
    fit_job *job = ctx;
    uint32_t m = job->h->p.m, dim = job->h->dim;
    float *lo = job->aMin + (size_t)t * m, *hi = job->aMax + (size_t)t * m;
    for (;;) {
        size_t i0 = atomic_fetch_add(&job->next, 256);
        if (i0 >= job->base->n)
            break;
        size_t i1 = i0 + 256 < job->base->n ? i0 + 256 : job->base->n;
        for (size_t i = i0; i < i1; i++)
            for (uint32_t f = 0; f < m; f++) {
                float x = dotf(job->h->aProj + (size_t)f * dim, job->base->data + i * dim, dim);
                if (x < lo[f])
                    lo[f] = x;
                if (x > hi[f])
                    hi[f] = x;
            }
    }
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The default sigma of l1 (see the top of the file). */
static float l1_default_sigma(const genie_vectors *base)
{
    uint64_t s = 0x5eed;
    float aNear[64];
    uint32_t nNear = 0;
    for (int t = 0; t < 64; t++) {
        uint64_t a = splitmix64(&s) % base->n;
        float best = INFINITY;
        for (int j = 0; j < 4096 && (uint64_t)j < base->n; j++) {
            uint64_t b = base->n <= 4096 ? (uint64_t)j : splitmix64(&s) % base->n;
            if (b == a)
                continue;
            float d = genie_vector_distance(GENIE_METRIC_L1, base->data + a * base->dim, base->data + b * base->dim,
                                            base->dim);
            if (d > 0 && d < best)
                best = d;
        }
        if (isfinite(best))
            aNear[nNear++] = best;
    }
    if (nNear == 0)
        return 1.0f;
    qsort(aNear, nNear, sizeof *aNear, cmp_float);
    return aNear[nNear / 2] / 0.6931472f;
}

genie_status vlsh_fit(vlsh *h, const genie_vectors *base, unsigned threads)
{
    if (h->p.metric == GENIE_METRIC_L1) {
        if (h->p.sigma == 0)
            h->p.sigma = l1_default_sigma(base);
        /* A cell of size 0 or infinity would make every cell coordinate NaN. */
        for (uint32_t i = 0; i < h->p.m; i++) {
            float g = h->aCell[i] * h->p.sigma;
            if (!isfinite(g) || !(g > 0))
                return util_error(GENIE_ERANGE,
                                  "l1: sigma = %g gives function %u a cell of size %g; "
                                  "scale the vectors or give --sigma",
                                  (double)h->p.sigma, i, (double)g);
        }
    }
    if (h->p.metric != GENIE_METRIC_L2)
        return GENIE_OK;
    unsigned nThread = threads ? threads : util_ncores();
    uint32_t m = h->p.m;
    fit_job job = {.h = h, .base = base, .aMin = malloc((size_t)nThread * m * sizeof(float)),
                   .aMax = malloc((size_t)nThread * m * sizeof(float))};
    atomic_init(&job.next, 0);
    if (!job.aMin || !job.aMax) {
        free(job.aMin);
        free(job.aMax);
        return util_error(GENIE_ENOMEM, "out of memory fitting the hash ranges");
    }
    for (size_t i = 0; i < (size_t)nThread * m; i++) {
        job.aMin[i] = INFINITY;
        job.aMax[i] = -INFINITY;
    }
    util_parallel_run(nThread, fit_worker, &job);
    for (uint32_t f = 0; f < m; f++) {
        float lo = INFINITY, hi = -INFINITY;
        for (unsigned t = 0; t < nThread; t++) {
            lo = fminf(lo, job.aMin[(size_t)t * m + f]);
            hi = fmaxf(hi, job.aMax[(size_t)t * m + f]);
        }
        float w = h->p.width;
        if (w == 0)
            w = hi > lo ? (hi - lo) / (float)(h->D - 1) : 1.0f;
        else
            lo = (lo + hi) / 2 - w * (float)h->D / 2;
        h->aLo[f] = lo;
        h->aW[f] = w;
    }
    free(job.aMin);
    free(job.aMax);
    for (uint32_t f = 0; f < m; f++)
        if (!isfinite(h->aLo[f]) || !isfinite(h->aW[f]) || !(h->aW[f] > 0))
            return util_error(GENIE_ERANGE,
                              "l2: function %u's projections of the base give range start %g, bucket width %g "
                              "(not finite and positive): the values are too large for float; scale them down",
                              f, (double)h->aLo[f], (double)h->aW[f]);
    return GENIE_OK;
}

/* ------------------------------------------------------------- the bytes */

genie_status vlsh_encode(const vlsh *h, uint64_t nBase, unsigned char **pOut, size_t *pN)
{
    codec_writer w;
    codec_writer_init(&w);
    codec_put_bytes(&w, "GVEC", 4);
    codec_put_u32(&w, VLSH_VERSION);
    codec_put_u32(&w, (uint32_t)h->p.metric);
    codec_put_u32(&w, h->p.m);
    codec_put_u32(&w, h->D);
    codec_put_u32(&w, h->p.bits);
    codec_put_u32(&w, h->dim);
    codec_put_u32(&w, recall_to_millionths(h->p.recall));
    codec_put_u64(&w, h->p.seed);
    codec_put_u64(&w, nBase);
    codec_put_f32(&w, h->p.width);
    codec_put_f32(&w, h->p.sigma);
    for (uint32_t i = 0; h->p.metric == GENIE_METRIC_L2 && i < h->p.m; i++) {
        codec_put_f32(&w, h->aLo[i]);
        codec_put_f32(&w, h->aW[i]);
    }
    return codec_writer_finish(&w, pOut, pN, "vector parameters");
}

genie_status vlsh_decode(const unsigned char *a, uint64_t n, uint64_t nObject, uint32_t mObject, vlsh *h,
                         genie_vectors *base)
{
    memset(h, 0, sizeof *h);
    codec_reader r;
    codec_reader_init(&r, a, (size_t)n, "vectors parameters (FRONTEND)");
    codec_expect(&r, "GVEC", 4, "magic");
    uint32_t version = codec_get_u32(&r, "version");
    if (r.rc == GENIE_OK && version != VLSH_VERSION)
        return util_error(GENIE_EFORMAT, "vector parameters version %u; this library reads %u", version,
                          VLSH_VERSION);
    genie_lsh_params p = {0};
    p.metric = (genie_metric)codec_get_u32(&r, "metric");
    if (r.rc == GENIE_OK && (!genie_metric_name(p.metric) || p.metric == GENIE_METRIC_IP))
        codec_fail(&r, "metric = %u, not l2, l1 or cosine", (unsigned)p.metric);
    p.m = codec_get_u32_in(&r, "m", 1, VLSH_MAX_M);
    /* Every object has exactly m keywords (one per function). */
    if (r.rc == GENIE_OK && p.m != mObject)
        codec_fail(&r, "m = %u, but the index's objects have %u keywords", p.m, mObject);
    p.buckets = codec_get_u32_in(&r, "buckets", 2, UINT32_MAX);
    p.bits = codec_get_u32_in(&r, "bits", 0, p.metric == GENIE_METRIC_COSINE ? 16 : 0);
    uint32_t dim = codec_get_u32_in(&r, "dim", 1, VLSH_MAX_DIM);
    /* Files written before the field held 0 there: the default. */
    p.recall = recall_from_millionths(codec_get_u32_in(&r, "default recall target", 0, 1000000),
                                      GENIE_VECTORS_DEFAULT_RECALL);
    p.seed = codec_get_u64(&r, "seed");
    uint64_t nBase = codec_get_u64(&r, "n");
    if (r.rc == GENIE_OK && nBase != nObject)
        codec_fail(&r, "n = %llu vectors, but the index has %llu objects", (unsigned long long)nBase,
                   (unsigned long long)nObject);
    p.width = codec_get_f32_finite(&r, "width", 0);
    p.sigma = codec_get_f32_finite(&r, "sigma", 0);
    if (r.rc == GENIE_OK && p.metric == GENIE_METRIC_COSINE && (p.bits == 0 || p.buckets != 1u << p.bits))
        codec_fail(&r, "cosine: bits = %u, buckets = %u (must be 2^bits, bits 1..16)", p.bits, p.buckets);
    if (r.rc == GENIE_OK && (uint64_t)p.m * p.buckets > (uint64_t)UINT32_MAX + 1)
        codec_fail(&r, "m = %u x buckets = %u is more than 2^32 keywords", p.m, p.buckets);
    if (r.rc == GENIE_OK && p.metric == GENIE_METRIC_L1 && !(p.sigma > 0))
        codec_fail(&r, "sigma = %g; an l1 index has sigma > 0", (double)p.sigma);
    /* The ranges, then exactly n x dim floats: dim and n are bounded by
     * the bytes present before anything is drawn or allocated. */
    const unsigned char *aRange = codec_get_bytes(&r, p.metric == GENIE_METRIC_L2 ? (size_t)8 * p.m : 0, "ranges");
    if (r.rc == GENIE_OK && (codec_left(&r) / 4 / dim < nBase || codec_left(&r) != nBase * dim * 4))
        codec_fail(&r, "%zu bytes of vectors; %llu vectors of %u floats need %llu", codec_left(&r),
                   (unsigned long long)nBase, dim, (unsigned long long)nBase * dim * 4);
    if (r.rc == GENIE_OK && vlsh_draws(&p, dim) > VLSH_MAX_DRAWS)
        codec_fail(&r, "m = %u, bits = %u, dim = %u need %llu random draws; at most %u", p.m, p.bits, dim,
                   (unsigned long long)vlsh_draws(&p, dim), VLSH_MAX_DRAWS);
    GENIE_TRY(r.rc);
    const unsigned char *aVec = codec_get_bytes(&r, codec_left(&r), "vectors");
    GENIE_TRY(vlsh_init(h, &p, dim));
    genie_status rc = GENIE_OK;
    codec_reader rr;
    codec_reader_init(&rr, aRange, aRange ? (size_t)8 * p.m : 0, "vectors parameters (FRONTEND)");
    for (uint32_t i = 0; p.metric == GENIE_METRIC_L2 && i < p.m; i++) {
        h->aLo[i] = codec_get_f32(&rr, "range start");
        h->aW[i] = codec_get_f32(&rr, "bucket width");
        if (!isfinite(h->aLo[i]) || !(h->aW[i] > 0) || !isfinite(h->aW[i])) {
            rc = codec_fail(&rr, "function %u has range start %g, bucket width %g (finite, width > 0)", i,
                            (double)h->aLo[i], (double)h->aW[i]);
            goto fail;
        }
    }
    for (uint32_t i = 0; p.metric == GENIE_METRIC_L1 && i < p.m; i++)
        if (!isfinite(h->aCell[i] * p.sigma)) {
            rc = util_error(GENIE_ECORRUPT, "vectors parameters (FRONTEND): sigma = %g overflows function %u's cell",
                            (double)p.sigma, i);
            goto fail;
        }
    base->n = nBase;
    base->dim = dim;
    base->data = (float *)(uintptr_t)aVec;
    return GENIE_OK;
fail:
    vlsh_free(h);
    return rc;
}
