/*
 * LSH families for dense vectors (seeds/003 IV-A), the keywords of many
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
    if (p.m > 65536)
        return util_error(GENIE_EINVAL, "m = %u hash functions; at most 65536", p.m);
    if (dim == 0)
        return util_error(GENIE_EINVAL, "vectors of dimension 0");
    if (!isfinite(p.width) || p.width < 0 || !isfinite(p.sigma) || p.sigma < 0)
        return util_error(GENIE_EINVAL, "width and sigma must be finite and positive (or 0 for the default)");
    uint64_t nDraw = 0;
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
            aBucket[i] = x < 0 ? 0 : x >= h->D - 1 ? h->D - 1 : (uint32_t)x;
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
                    aCellIdx[j] = c < INT32_MIN ? INT32_MIN : c > INT32_MAX ? INT32_MAX : (int32_t)c;
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
    if (h->p.metric == GENIE_METRIC_L1 && h->p.sigma == 0)
        h->p.sigma = l1_default_sigma(base);
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
    return GENIE_OK;
}

/* ------------------------------------------------------------- the bytes */

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

genie_status vlsh_encode(const vlsh *h, uint64_t nBase, unsigned char **pOut, size_t *pN)
{
    uint32_t m = h->p.m;
    size_t n = VLSH_HEADER + (h->p.metric == GENIE_METRIC_L2 ? (size_t)8 * m : 0);
    unsigned char *a = calloc(1, n);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory");
    memcpy(a, "GVEC", 4);
    put32(a + 4, VLSH_VERSION);
    put32(a + 8, (uint32_t)h->p.metric);
    put32(a + 12, m);
    put32(a + 16, h->D);
    put32(a + 20, h->p.bits);
    put32(a + 24, h->dim);
    memcpy(a + 32, &h->p.seed, 8);
    memcpy(a + 40, &nBase, 8);
    memcpy(a + 48, &h->p.width, 4);
    memcpy(a + 52, &h->p.sigma, 4);
    if (h->p.metric == GENIE_METRIC_L2)
        for (uint32_t i = 0; i < m; i++) {
            memcpy(a + VLSH_HEADER + 8 * (size_t)i, &h->aLo[i], 4);
            memcpy(a + VLSH_HEADER + 8 * (size_t)i + 4, &h->aW[i], 4);
        }
    *pOut = a;
    *pN = n;
    return GENIE_OK;
}

genie_status vlsh_decode(const unsigned char *a, uint64_t n, vlsh *h, genie_vectors *base)
{
    memset(h, 0, sizeof *h);
    if (!a || n < VLSH_HEADER || memcmp(a, "GVEC", 4) != 0)
        return util_error(GENIE_EFORMAT, "not a vectors index (no vector parameters)");
    if (get32(a + 4) != VLSH_VERSION)
        return util_error(GENIE_EFORMAT, "vector parameters version %u; this library reads %u", get32(a + 4),
                          VLSH_VERSION);
    genie_lsh_params p = {0};
    p.metric = (genie_metric)get32(a + 8);
    p.m = get32(a + 12);
    p.buckets = get32(a + 16);
    p.bits = get32(a + 20);
    uint32_t dim = get32(a + 24);
    uint64_t nBase;
    memcpy(&p.seed, a + 32, 8);
    memcpy(&nBase, a + 40, 8);
    memcpy(&p.width, a + 48, 4);
    memcpy(&p.sigma, a + 52, 4);
    if (p.m == 0 || (p.metric == GENIE_METRIC_L1 && !(p.sigma > 0)))
        return util_error(GENIE_ECORRUPT, "vector parameters: m = %u, sigma = %g", p.m, (double)p.sigma);
    GENIE_TRY(vlsh_init(h, &p, dim));
    size_t off = VLSH_HEADER + (p.metric == GENIE_METRIC_L2 ? (size_t)8 * p.m : 0);
    if (nBase == 0 || off > n || (n - off) / 4 / dim < nBase || off + nBase * dim * 4 != n) {
        vlsh_free(h);
        return util_error(GENIE_ECORRUPT, "vector parameters: %llu bytes do not hold %llu vectors of %u",
                          (unsigned long long)n, (unsigned long long)nBase, dim);
    }
    for (uint32_t i = 0; p.metric == GENIE_METRIC_L2 && i < p.m; i++) {
        memcpy(&h->aLo[i], a + VLSH_HEADER + 8 * (size_t)i, 4);
        memcpy(&h->aW[i], a + VLSH_HEADER + 8 * (size_t)i + 4, 4);
        if (!isfinite(h->aLo[i]) || !(h->aW[i] > 0) || !isfinite(h->aW[i])) {
            vlsh_free(h);
            return util_error(GENIE_ECORRUPT, "vector parameters: function %u has range %g, width %g", i,
                              (double)h->aLo[i], (double)h->aW[i]);
        }
    }
    base->n = nBase;
    base->dim = dim;
    base->data = (float *)(uintptr_t)(a + off);
    return GENIE_OK;
}
