/*
 * The metric front-end (List of Clusters): range and k-NN answers equal an
 * independent brute-force scan for every metric (vectors through the
 * public genie_vector_distance, edit distance and Jaccard by the test's
 * own code), with duplicates in the data, ties at the radius and at the
 * k-th distance, k larger than n, radius 0 and empty results; cluster
 * subsets merge to the whole; corrupt and forged FRONTEND sections are
 * refused before use.  The batched search (metric_batch.c, the GPU's) is
 * checked here with its pair distances computed on the CPU; with
 * GENIE_TEST_BACKEND=cuda the vector searches run on the GPU.
 */
#include <math.h>

#include "genie/metric.h"
#include "index/builder.h"
#include "index/index.h"
#include "test.h"
#include "transform/metric.h"

/* ------------------------------------------------------- brute force */

static double edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    size_t *row = malloc((nb + 1) * sizeof *row);
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
        }
    }
    double d = (double)row[nb];
    free(row);
    return d;
}

/* Sets of one-letter-plus-digit tokens: a bit mask over the universe. */
static uint64_t set_mask(const char *z, size_t n)
{
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (z[i] == 't')
            m |= (uint64_t)1 << (unsigned)atoi(z + i + 1);
    return m;
}

static double jaccard_distance(const char *a, size_t na, const char *b, size_t nb)
{
    uint64_t x = set_mask(a, na), y = set_mask(b, nb);
    int u = __builtin_popcountll(x | y), s = __builtin_popcountll(x & y);
    return u == 0 ? 0.0 : 1.0 - (double)s / (double)u;
}

typedef struct corpus {
    genie_lc_metric metric;
    size_t n, nq;
    uint32_t dim;
    float *aVec, *aQVec;     /* vectors */
    char **azObj, **azQ;     /* strings and sets */
    size_t *anObj, *anQ;
    double *aTruth;          /* nq * n distances */
    genie_lc_hit *aSorted;   /* nq * n: each query's objects by (distance, id) */
} corpus;

static void corpus_truth(corpus *c)
{
    static const genie_metric aVm[] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    c->aTruth = malloc(c->nq * c->n * sizeof *c->aTruth);
    for (size_t q = 0; q < c->nq; q++)
        for (size_t o = 0; o < c->n; o++) {
            double d;
            if (c->metric == GENIE_LC_EDIT)
                d = edit_distance(c->azQ[q], c->anQ[q], c->azObj[o], c->anObj[o]);
            else if (c->metric == GENIE_LC_JACCARD)
                d = jaccard_distance(c->azQ[q], c->anQ[q], c->azObj[o], c->anObj[o]);
            else
                d = genie_vector_distance(aVm[c->metric], c->aQVec + q * c->dim, c->aVec + o * c->dim, c->dim);
            c->aTruth[q * c->n + o] = d;
        }
}

static void corpus_free(corpus *c)
{
    free(c->aVec);
    free(c->aQVec);
    for (size_t i = 0; c->azObj && i < c->n; i++)
        free(c->azObj[i]);
    for (size_t i = 0; c->azQ && i < c->nq; i++)
        free(c->azQ[i]);
    free(c->azObj);
    free(c->azQ);
    free(c->anObj);
    free(c->anQ);
    free(c->aTruth);
    free(c->aSorted);
}

/* Clustered vectors with exact duplicates and a zero vector. */
static void make_vectors(corpus *c, genie_lc_metric metric, size_t n, size_t nq, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->metric = metric;
    c->n = n;
    c->nq = nq;
    c->dim = 6;
    uint64_t st = seed;
    size_t nBlob = 12;
    float *aBlob = malloc(nBlob * c->dim * sizeof *aBlob);
    for (size_t i = 0; i < nBlob * c->dim; i++)
        aBlob[i] = (float)(test_rand(&st) % 2000) / 100.0f - 10.0f;
    c->aVec = malloc(n * c->dim * sizeof *c->aVec);
    for (size_t i = 0; i < n; i++) {
        size_t b = test_rand(&st) % nBlob;
        for (uint32_t j = 0; j < c->dim; j++)
            c->aVec[i * c->dim + j] = aBlob[b * c->dim + j] + (float)((int)(test_rand(&st) % 200) - 100) / 64.0f;
        if (i > 0 && test_rand(&st) % 10 == 0) /* a duplicate of an earlier vector */
            memcpy(c->aVec + i * c->dim, c->aVec + (test_rand(&st) % i) * c->dim, c->dim * sizeof(float));
    }
    memset(c->aVec + (n / 2) * c->dim, 0, c->dim * sizeof(float));
    c->aQVec = malloc(nq * c->dim * sizeof *c->aQVec);
    for (size_t q = 0; q < nq; q++) {
        size_t o = test_rand(&st) % n;
        for (uint32_t j = 0; j < c->dim; j++) {
            float v = c->aVec[o * c->dim + j];
            if (q % 3 == 1)
                v += (float)((int)(test_rand(&st) % 100) - 50) / 128.0f;
            else if (q % 3 == 2)
                v = (float)(test_rand(&st) % 2000) / 100.0f - 10.0f;
            c->aQVec[q * c->dim + j] = v;
        }
    }
    free(aBlob);
    corpus_truth(c);
}

static char *random_string(uint64_t *st, genie_lc_metric metric, size_t *pn)
{
    char *z = malloc(128);
    size_t n = 0;
    if (metric == GENIE_LC_EDIT) {
        size_t len = test_rand(st) % 11;
        for (size_t i = 0; i < len; i++)
            z[n++] = "abcd"[test_rand(st) % 4];
    } else {
        size_t len = test_rand(st) % 7;
        for (size_t i = 0; i < len; i++)
            n += (size_t)sprintf(z + n, "%st%u", i ? (i % 2 ? " \t" : " ") : "", (unsigned)(test_rand(st) % 24));
    }
    z[n] = 0;
    *pn = n;
    return z;
}

/* Strings (edit) or sets (jaccard), duplicates and empty ones included. */
static void make_strings(corpus *c, genie_lc_metric metric, size_t n, size_t nq, uint64_t seed)
{
    memset(c, 0, sizeof *c);
    c->metric = metric;
    c->n = n;
    c->nq = nq;
    uint64_t st = seed;
    c->azObj = malloc(n * sizeof *c->azObj);
    c->anObj = malloc(n * sizeof *c->anObj);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && test_rand(&st) % 8 == 0) {
            size_t o = test_rand(&st) % i;
            c->azObj[i] = strdup(c->azObj[o]);
            c->anObj[i] = c->anObj[o];
        } else {
            c->azObj[i] = random_string(&st, metric, &c->anObj[i]);
        }
    }
    c->azQ = malloc(nq * sizeof *c->azQ);
    c->anQ = malloc(nq * sizeof *c->anQ);
    for (size_t q = 0; q < nq; q++) {
        if (q % 2 == 0) {
            size_t o = test_rand(&st) % n;
            c->azQ[q] = strdup(c->azObj[o]);
            c->anQ[q] = c->anObj[o];
        } else {
            c->azQ[q] = random_string(&st, metric, &c->anQ[q]);
        }
    }
    corpus_truth(c);
}

static genie_index *build_corpus(const corpus *c, const genie_lc_params *p, const char *name)
{
    const char *path = test_path(name);
    if (c->aVec) {
        genie_vectors v = {c->n, c->dim, c->aVec};
        CHECK_OK(genie_lc_build_vectors(&v, p, NULL, path));
    } else {
        CHECK_OK(genie_lc_build_strings((const char *const *)c->azObj, c->anObj, c->n, p, NULL, path));
    }
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx));
    return idx;
}

/* Non-zero: vector and edit searches go through lc_batch_search with CPU pairs. */
static int g_batched;

typedef struct pairs_ctx {
    const lc_space *s;
    const corpus *c;
} pairs_ctx;

static genie_status cpu_pairs(void *ctx, size_t q0, size_t nQuery, const uint32_t *aPair, uint64_t nPair,
                              double *out)
{
    static const genie_metric aVm[] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    const pairs_ctx *x = ctx;
    const lc_space *s = x->s;
    for (uint64_t i = 0; i < nPair; i++) {
        size_t q = q0 + aPair[2 * i];
        uint32_t o = aPair[2 * i + 1];
        CHECK(aPair[2 * i] < nQuery && o < s->n);
        if (s->metric == GENIE_LC_EDIT)
            out[i] = edit_distance(x->c->azQ[q], x->c->anQ[q], x->c->azObj[o], x->c->anObj[o]);
        else
            out[i] = genie_vector_distance(aVm[s->metric], x->c->aQVec + q * s->dim, s->aVec + (size_t)o * s->dim,
                                           s->dim);
    }
    return GENIE_OK;
}

static genie_lc_results *search_batched(const genie_index *idx, const corpus *c, const genie_lc_options *o)
{
    lc_layout L;
    lc_space s;
    CHECK_OK(lc_open_index(idx, &L, &s));
    genie_lc_results *r = calloc(1, sizeof *r);
    r->n = c->nq;
    r->aaHit = calloc(c->nq, sizeof *r->aaHit);
    r->anHit = calloc(c->nq, sizeof *r->anHit);
    r->anDist = calloc(c->nq, sizeof *r->anDist);
    uint32_t first = o->first_cluster, end = o->n_clusters ? first + o->n_clusters : L.info.n_clusters;
    pairs_ctx x = {&s, c};
    CHECK_OK(lc_batch_search(&L, &s, o, NULL, first, end, c->nq, cpu_pairs, &x, r));
    r->stats.backend = GENIE_BACKEND_CPU;
    for (size_t q = 0; q < c->nq; q++)
        r->stats.verified += r->anDist[q];
    lc_space_free(&s);
    return r;
}

static genie_lc_results *search_corpus(const genie_index *idx, const corpus *c, const genie_lc_options *o)
{
    genie_lc_results *r;
    if (g_batched && (c->aVec || c->metric == GENIE_LC_EDIT) && !o->brute_force)
        return search_batched(idx, c, o);
    if (c->aVec) {
        genie_vectors q = {c->nq, c->dim, c->aQVec};
        CHECK_OK(genie_lc_search_vectors(idx, &q, o, &r));
    } else {
        CHECK_OK(genie_lc_search_strings(idx, (const char *const *)c->azQ, c->anQ, c->nq, o, &r));
    }
    CHECK_EQ(genie_lc_results_queries(r), c->nq);
    return r;
}

static int cmp_hit(const void *a, const void *b)
{
    const genie_lc_hit *x = a, *y = b;
    if (x->distance != y->distance)
        return x->distance < y->distance ? -1 : 1;
    return (x->object > y->object) - (x->object < y->object);
}

/* Every query's objects sorted by (distance, id), once per corpus. */
static void corpus_sort(corpus *c)
{
    c->aSorted = malloc(c->nq * c->n * sizeof *c->aSorted);
    for (size_t q = 0; q < c->nq; q++) {
        genie_lc_hit *a = c->aSorted + q * c->n;
        for (size_t i = 0; i < c->n; i++)
            a[i] = (genie_lc_hit){(uint32_t)i, c->aTruth[q * c->n + i]};
        qsort(a, c->n, sizeof *a, cmp_hit);
    }
}

/* The expected answers of query q: within radius (range, or bounded
 * k-NN), the first k (k-NN), by (distance, id). */
static size_t expected(const corpus *c, size_t q, const genie_lc_options *o, const genie_lc_hit **paOut)
{
    const genie_lc_hit *a = c->aSorted + q * c->n;
    size_t n = c->n;
    if (o->k == 0 || o->bounded) {
        n = 0;
        while (n < c->n && a[n].distance <= o->radius)
            n++;
    }
    *paOut = a;
    return o->k && o->k < n ? o->k : n;
}

static void check_answers(const corpus *c, const genie_lc_results *r, const genie_lc_options *o, const char *what)
{
    for (size_t q = 0; q < c->nq; q++) {
        const genie_lc_hit *aExp;
        size_t nExp = expected(c, q, o, &aExp), n;
        const genie_lc_hit *a = genie_lc_results_get(r, q, &n);
        if (n != nExp)
            test_fail_at(__FILE__, __LINE__, "%s k=%u r=%g query %zu: %zu answers, expected %zu", what, o->k,
                         o->radius, q, n, nExp);
        for (size_t i = 0; i < n; i++)
            if (a[i].object != aExp[i].object || a[i].distance != aExp[i].distance)
                test_fail_at(__FILE__, __LINE__, "%s k=%u r=%g query %zu rank %zu: (%u, %.9g), expected (%u, %.9g)",
                             what, o->k, o->radius, q, i, a[i].object, a[i].distance, aExp[i].object,
                             aExp[i].distance);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every search mode against brute force on one index.  Radii: 0 and
 * distances that occur between query 0 (a data object) and the data, so
 * that objects lie exactly at the radius. */
static void check_index(const corpus *c, const genie_index *idx, const char *what)
{
    double *aSorted = malloc(c->n * sizeof *aSorted);
    memcpy(aSorted, c->aTruth, c->n * sizeof *aSorted);
    qsort(aSorted, c->n, sizeof *aSorted, cmp_double);
    double aR[4] = {0, aSorted[c->n / 200], aSorted[c->n / 40], aSorted[c->n / 16]};
    if (c->metric == GENIE_LC_EDIT) {
        aR[1] = 1;
        aR[2] = 2;
        aR[3] = 4;
    }
    free(aSorted);
    uint64_t nLc = 0, nBrute = 0;
    for (int i = 0; i < 4; i++) {
        genie_lc_options o = {0};
        o.radius = aR[i];
        o.backend = c->aVec ? test_backend() : GENIE_BACKEND_CPU;
        genie_lc_results *r = search_corpus(idx, c, &o);
        check_answers(c, r, &o, what);
        genie_search_stats st;
        genie_lc_results_stats(r, &st);
        uint64_t sum = 0;
        for (size_t q = 0; q < c->nq; q++)
            sum += genie_lc_results_distances(r, q);
        CHECK_EQ(st.verified, sum);
        /* the batched path of this test computes its pairs on the CPU
         * whatever the backend asked for, and says so */
        CHECK_EQ(st.backend, g_batched && c->aVec ? GENIE_BACKEND_CPU : o.backend);
        nLc += sum;
        genie_lc_results_free(r);
        if (i != 2)
            continue;
        o.brute_force = 1;
        o.backend = GENIE_BACKEND_CPU;
        r = search_corpus(idx, c, &o);
        check_answers(c, r, &o, what);
        genie_lc_results_stats(r, &st);
        CHECK_EQ(st.verified, (uint64_t)c->n * c->nq);
        nBrute = st.verified;
        genie_lc_results_free(r);
    }
    uint32_t aK[4] = {1, 7, (uint32_t)c->n, (uint32_t)c->n + 5};
    for (int i = 0; i < 4; i++) {
        genie_lc_options o = {0};
        o.k = aK[i];
        o.backend = c->aVec ? test_backend() : GENIE_BACKEND_CPU;
        genie_lc_results *r = search_corpus(idx, c, &o);
        check_answers(c, r, &o, what);
        genie_lc_results_free(r);
        o.bounded = 1;
        o.radius = aR[1 + i % 3];
        o.threads = 1;
        r = search_corpus(idx, c, &o);
        check_answers(c, r, &o, what);
        genie_lc_results_free(r);
    }
    if (getenv("GENIE_TEST_VERBOSE"))
        fprintf(stderr, "%s: distances over 4 radii %llu (brute force %llu per radius)\n", what, (unsigned long long)nLc,
                (unsigned long long)nBrute);
}

/* Disjoint cluster ranges, searched apart and merged, equal the whole. */
static void check_subsets(const corpus *c, const genie_index *idx)
{
    genie_lc_info info;
    CHECK_OK(genie_lc_index_info(idx, &info));
    uint32_t m = info.n_clusters, aCut[4] = {0, m / 3, m / 3 + (m - m / 3) / 2, m};
    genie_lc_options o = {0};
    o.k = 9;
    o.backend = c->aVec ? test_backend() : GENIE_BACKEND_CPU;
    genie_lc_hit *aAll = malloc(3 * (size_t)o.k * c->nq * sizeof *aAll);
    size_t *anAll = calloc(c->nq, sizeof *anAll);
    for (int p = 0; p < 3; p++) {
        if (aCut[p] == aCut[p + 1])
            continue;
        o.first_cluster = aCut[p];
        o.n_clusters = aCut[p + 1] - aCut[p];
        genie_lc_results *r = search_corpus(idx, c, &o);
        for (size_t q = 0; q < c->nq; q++) {
            size_t n;
            const genie_lc_hit *a = genie_lc_results_get(r, q, &n);
            CHECK(n <= o.k);
            memcpy(aAll + q * 3 * o.k + anAll[q], a, n * sizeof *a);
            anAll[q] += n;
        }
        genie_lc_results_free(r);
    }
    o.first_cluster = o.n_clusters = 0;
    genie_lc_results *r = search_corpus(idx, c, &o);
    for (size_t q = 0; q < c->nq; q++) {
        qsort(aAll + q * 3 * o.k, anAll[q], sizeof *aAll, cmp_hit);
        size_t n;
        const genie_lc_hit *a = genie_lc_results_get(r, q, &n);
        CHECK_EQ(n, anAll[q] < o.k ? anAll[q] : o.k);
        for (size_t i = 0; i < n; i++)
            CHECK_EQ(a[i].object, aAll[q * 3 * o.k + i].object);
    }
    genie_lc_results_free(r);
    o.first_cluster = m;
    if (c->aVec) {
        genie_vectors q = {c->nq, c->dim, c->aQVec};
        CHECK_RC(genie_lc_search_vectors(idx, &q, &o, &r), GENIE_EINVAL);
    } else {
        CHECK_RC(genie_lc_search_strings(idx, (const char *const *)c->azQ, c->anQ, c->nq, &o, &r), GENIE_EINVAL);
    }
    free(aAll);
    free(anAll);
}

/* ------------------------------------- walks, plans and shares (4.2) */

/* Run @p k to its end in quanta of @p quantum; @return the steps taken. */
static uint64_t walk_run(genie_lc_walk *k, uint64_t quantum)
{
    int done = 0;
    uint64_t nStep = 0;
    while (!done) {
        uint64_t before = genie_lc_walk_distances(k);
        CHECK_OK(genie_lc_walk_step(k, quantum, &done));
        CHECK(genie_lc_walk_distances(k) - before <= quantum);
        nStep++;
    }
    return nStep;
}

static genie_lc_walk *walk_new(const genie_lc_walker *w, const corpus *c, size_t q, const genie_lc_walk_options *o)
{
    genie_lc_walk *k;
    if (c->aVec)
        CHECK_OK(genie_lc_walk_start(w, o, c->aQVec + q * c->dim, NULL, 0, &k));
    else
        CHECK_OK(genie_lc_walk_start(w, o, NULL, c->azQ[q], c->anQ[q], &k));
    return k;
}

/* Append a walk's hits to a[*pn], object ids mapped to offset + id * stride. */
static void take_hits(const genie_lc_walk *k, uint32_t stride, uint32_t offset, genie_lc_hit *a, size_t *pn)
{
    size_t n;
    const genie_lc_hit *aHit = genie_lc_walk_hits(k, &n);
    for (size_t i = 0; i < n; i++)
        a[(*pn)++] = (genie_lc_hit){offset + aHit[i].object * stride, aHit[i].distance};
}

/* Merged hits (sorted here, cut to k) against brute force. */
static void check_merged(const corpus *c, size_t q, const genie_lc_options *o, genie_lc_hit *a, size_t n,
                         const char *what)
{
    qsort(a, n, sizeof *a, cmp_hit);
    if (o->k && n > o->k)
        n = o->k;
    const genie_lc_hit *aExp;
    size_t nExp = expected(c, q, o, &aExp);
    if (n != nExp)
        test_fail_at(__FILE__, __LINE__, "%s k=%u r=%g query %zu: %zu answers, expected %zu", what, o->k, o->radius, q,
                     n, nExp);
    for (size_t i = 0; i < n; i++)
        if (a[i].object != aExp[i].object || a[i].distance != aExp[i].distance)
            test_fail_at(__FILE__, __LINE__, "%s k=%u r=%g query %zu rank %zu: (%u, %.9g), expected (%u, %.9g)", what,
                         o->k, o->radius, q, i, a[i].object, a[i].distance, aExp[i].object, aExp[i].distance);
}

/*
 * One option set: the whole walk in quanta of 1, 4 and unbounded (the
 * sequential search's answers and distance counts); LG: a centers walk,
 * its plan to members walks over P = 2 and 3 shares; LL: P = 2 local
 * indexes of shares, each walked whole.  All merged equal brute force.
 */
static void check_walk_options(const corpus *c, const genie_index *idx, genie_index *const *aLocal,
                               const genie_lc_options *o, const char *what)
{
    genie_lc_walker *w, *aW[2];
    CHECK_OK(genie_lc_walker_new(idx, &w));
    for (int p = 0; p < 2; p++)
        CHECK_OK(genie_lc_walker_new(aLocal[p], &aW[p]));
    /* The walk is the sequential search: it computes the distances the CPU
     * search does (a GPU's batched search computes more, metric_batch.c). */
    genie_lc_options oCpu = *o;
    oCpu.backend = GENIE_BACKEND_CPU;
    genie_lc_results *r = search_corpus(idx, c, &oCpu);
    genie_lc_hit *a = malloc(2 * (c->n + 1) * sizeof *a);
    genie_lc_walk_options wo = {.k = o->k, .radius = o->radius, .bounded = o->bounded, .part = GENIE_LC_WALK_WHOLE};
    for (size_t q = 0; q < c->nq; q++) {
        static const uint64_t aQuantum[3] = {1, 4, UINT64_MAX};
        for (int i = 0; i < 3; i++) {
            wo.part = GENIE_LC_WALK_WHOLE;
            genie_lc_walk *k = walk_new(w, c, q, &wo);
            uint64_t nStep = walk_run(k, aQuantum[i]);
            CHECK_EQ(genie_lc_walk_distances(k), genie_lc_results_distances(r, q));
            CHECK(aQuantum[i] > 1 || nStep >= genie_lc_walk_distances(k));
            size_t n = 0;
            take_hits(k, 1, 0, a, &n);
            check_merged(c, q, o, a, n, what);
            genie_lc_walk_free(k);
        }
        wo.part = GENIE_LC_WALK_CENTERS;
        genie_lc_walk *kc = walk_new(w, c, q, &wo);
        walk_run(kc, 3);
        genie_lc_plan plan;
        CHECK_OK(genie_lc_walk_plan(kc, &plan));
        for (uint32_t P = 2; P <= 3; P++) {
            size_t n = 0;
            take_hits(kc, 1, 0, a, &n);
            for (uint32_t p = 0; p < P; p++) {
                genie_lc_walk_options wm = wo;
                wm.part = GENIE_LC_WALK_MEMBERS;
                wm.share_stride = P;
                wm.share_offset = p;
                genie_lc_walk *km = walk_new(w, c, q, &wm);
                int done;
                CHECK_RC(genie_lc_walk_step(km, 5, &done), GENIE_EINVAL);
                CHECK_OK(genie_lc_walk_set_plan(km, &plan));
                walk_run(km, 5);
                take_hits(km, 1, 0, a, &n);
                genie_lc_walk_free(km);
            }
            check_merged(c, q, o, a, n, "LG");
        }
        genie_lc_walk_free(kc);
        wo.part = GENIE_LC_WALK_WHOLE;
        size_t n = 0;
        for (uint32_t p = 0; p < 2; p++) {
            genie_lc_walk *k = walk_new(aW[p], c, q, &wo);
            walk_run(k, 7);
            take_hits(k, 2, p, a, &n);
            genie_lc_walk_free(k);
        }
        check_merged(c, q, o, a, n, "LL");
    }
    free(a);
    genie_lc_results_free(r);
    for (int p = 0; p < 2; p++)
        genie_lc_walker_free(aW[p]);
    genie_lc_walker_free(w);
}

static void check_walks(const corpus *c, const genie_index *idx, const genie_lc_params *p)
{
    genie_index *aLocal[2];
    for (uint32_t i = 0; i < 2; i++) {
        char zName[32];
        snprintf(zName, sizeof zName, "share%u.genie", i);
        CHECK_OK(genie_lc_build_share(idx, 2, i, p, NULL, test_path(zName)));
        CHECK_OK(genie_index_open(test_path(zName), &aLocal[i]));
        genie_lc_info info;
        CHECK_OK(genie_lc_index_info(aLocal[i], &info));
        CHECK_EQ(info.n_objects, (c->n + 1 - i) / 2);
    }
    CHECK_RC(genie_lc_build_share(idx, 2, 2, p, NULL, test_path("share2.genie")), GENIE_EINVAL);
    char zWhat[64];
    snprintf(zWhat, sizeof zWhat, "walks %s K=%u", genie_lc_metric_name(c->metric), p->cluster_size);
    double aR[3] = {0, c->aTruth[c->n / 3], c->aTruth[c->n / 5]};
    if (c->metric == GENIE_LC_EDIT) {
        aR[1] = 1;
        aR[2] = 3;
    }
    for (int i = 0; i < 3; i++) {
        genie_lc_options o = {0};
        o.radius = aR[i];
        check_walk_options(c, idx, aLocal, &o, zWhat);
    }
    uint32_t aK[3] = {1, 9, (uint32_t)c->n + 3};
    for (int i = 0; i < 3; i++) {
        genie_lc_options o = {0};
        o.k = aK[i];
        check_walk_options(c, idx, aLocal, &o, zWhat);
        o.bounded = 1;
        o.radius = aR[1 + i % 2];
        check_walk_options(c, idx, aLocal, &o, zWhat);
    }
    for (int i = 0; i < 2; i++)
        genie_index_close(aLocal[i]);
}

TEST(metric_walks_and_shares_equal_brute_force)
{
    for (genie_lc_metric m = GENIE_LC_L2; m <= GENIE_LC_JACCARD; m++) {
        corpus c;
        if (m == GENIE_LC_EDIT || m == GENIE_LC_JACCARD)
            make_strings(&c, m, 500, 120, 40 + m);
        else
            make_vectors(&c, m, 500, 120, 40 + m);
        corpus_sort(&c);
        for (int i = 0; i < 2; i++) {
            genie_lc_params p = {0};
            p.metric = m;
            p.cluster_size = i ? 3 : 8;
            p.centers = i ? GENIE_LC_CENTERS_RANDOM : GENIE_LC_CENTERS_FARTHEST;
            p.center_distances = i ? -1 : 1;
            p.seed = 7 + i;
            genie_index *idx = build_corpus(&c, &p, "walk.genie");
            check_walks(&c, idx, &p);
            genie_index_close(idx);
        }
        corpus_free(&c);
    }
}

static void check_metric(genie_lc_metric metric, size_t n, size_t nq, uint64_t seed)
{
    corpus c;
    if (metric == GENIE_LC_EDIT || metric == GENIE_LC_JACCARD)
        make_strings(&c, metric, n, nq, seed);
    else
        make_vectors(&c, metric, n, nq, seed);
    corpus_sort(&c);
    static const struct {
        uint32_t K;
        genie_lc_centers centers;
        int matrix;
    } aCfg[] = {{8, GENIE_LC_CENTERS_FARTHEST, 1}, {3, GENIE_LC_CENTERS_RANDOM, -1}, {1, GENIE_LC_CENTERS_FARTHEST, 0},
                {100000, GENIE_LC_CENTERS_RANDOM, 1}};
    for (size_t i = 0; i < sizeof aCfg / sizeof aCfg[0]; i++) {
        genie_lc_params p = {0};
        p.metric = metric;
        p.cluster_size = aCfg[i].K;
        p.centers = aCfg[i].centers;
        p.center_distances = aCfg[i].matrix;
        p.seed = seed + i;
        char zName[64], zWhat[96];
        snprintf(zName, sizeof zName, "lc%zu.genie", i);
        snprintf(zWhat, sizeof zWhat, "%s K=%u %s matrix=%d", genie_lc_metric_name(metric), p.cluster_size,
                 genie_lc_centers_name(p.centers), p.center_distances);
        genie_index *idx = build_corpus(&c, &p, zName);
        genie_lc_info info;
        CHECK_OK(genie_lc_index_info(idx, &info));
        CHECK_EQ(info.n_objects, c.n);
        CHECK_EQ(info.metric, metric);
        CHECK_EQ(info.n_clusters, (c.n + aCfg[i].K) / (aCfg[i].K + 1));
        check_index(&c, idx, zWhat);
        if (i == 0)
            check_subsets(&c, idx);
        genie_index_close(idx);
    }
    corpus_free(&c);
}

TEST(metric_l2_equals_brute_force) { check_metric(GENIE_LC_L2, 1200, 600, 11); }
TEST(metric_l1_equals_brute_force) { check_metric(GENIE_LC_L1, 1200, 600, 12); }
TEST(metric_cosine_equals_brute_force) { check_metric(GENIE_LC_COSINE, 1200, 600, 13); }
TEST(metric_edit_equals_brute_force) { check_metric(GENIE_LC_EDIT, 1200, 600, 14); }
TEST(metric_jaccard_equals_brute_force) { check_metric(GENIE_LC_JACCARD, 1200, 600, 15); }

TEST(metric_batched_equals_brute_force)
{
    g_batched = 1;
    check_metric(GENIE_LC_L2, 1200, 600, 31);
    check_metric(GENIE_LC_L1, 1200, 600, 32);
    check_metric(GENIE_LC_COSINE, 1200, 600, 33);
    check_metric(GENIE_LC_EDIT, 1200, 600, 34);
    g_batched = 0;
}

/* ------------------------------------------------ corrupt and forged files */

/* A search over a forged section must fail cleanly or answer; never crash. */
static void search_forged(const genie_index *idx, const unsigned char *aSec, size_t nSec, const corpus *c)
{
    genie_index fake = *idx;
    fake.aFrontend = aSec;
    fake.nFrontend = nSec;
    genie_lc_info info;
    genie_status rc = genie_lc_index_info(&fake, &info);
    CHECK(rc == GENIE_OK || rc == GENIE_ECORRUPT);
    genie_lc_options o = {0};
    o.k = 3;
    genie_vectors q = {4, c->dim, c->aQVec};
    genie_lc_results *r = NULL;
    genie_status rs = genie_lc_search_vectors(&fake, &q, &o, &r);
    CHECK(rs == rc);
    genie_lc_results_free(r);
}

static void put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

TEST(metric_corrupt_and_forged_rejected)
{
    corpus c;
    make_vectors(&c, GENIE_LC_L2, 60, 4, 21);
    genie_lc_params p = {0};
    p.metric = GENIE_LC_L2;
    p.cluster_size = 5;
    p.center_distances = 1;
    genie_index *idx = build_corpus(&c, &p, "lc.genie");
    size_t nSec = (size_t)idx->nFrontend;
    unsigned char *a = malloc(nSec);
    /* Every byte flipped, every length cut: the checks hold or refuse. */
    for (size_t i = 0; i < nSec; i++) {
        memcpy(a, idx->aFrontend, nSec);
        a[i] ^= 0xff;
        search_forged(idx, a, nSec, &c);
        a[i] ^= 0x01 ^ 0xff;
        search_forged(idx, a, nSec, &c);
    }
    for (size_t n = 0; n < nSec; n += 3) {
        memcpy(a, idx->aFrontend, n);
        genie_index fake = *idx;
        fake.aFrontend = a;
        fake.nFrontend = n;
        genie_lc_info info;
        CHECK_RC(genie_lc_index_info(&fake, &info), GENIE_ECORRUPT);
    }
    /* Forged counts that would ask for huge allocations or reads. */
    static const struct {
        size_t off;
        uint32_t v;
    } aForge[] = {{16, 0xffffffffu}, {16, 0}, {12, 0}, {8, 0xffffffffu}, {8, 0}, {32, 0xffffffffu},
                  {4, 7},           {0, 2},  {24, 6}, {64, 60},          {64 + 4, 0xffffffffu}};
    for (size_t i = 0; i < sizeof aForge / sizeof aForge[0]; i++) {
        memcpy(a, idx->aFrontend, nSec);
        put32(a + aForge[i].off, aForge[i].v);
        genie_index fake = *idx;
        fake.aFrontend = a;
        fake.nFrontend = nSec;
        genie_lc_info info;
        genie_status rc = genie_lc_index_info(&fake, &info);
        if (rc != GENIE_ECORRUPT)
            test_fail_at(__FILE__, __LINE__, "forged field at %zu = %u: %s", aForge[i].off, aForge[i].v,
                         genie_strerror(rc));
    }
    /* A file whose checksummed section is forged: open works, use refuses. */
    memcpy(a, idx->aFrontend, nSec);
    put32(a + 16, 0xffffffffu);
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    for (size_t i = 0; i < c.n; i++) {
        genie_object o = {NULL, 0, 0, 0, NULL, 0};
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(builder_set_frontend(b, GENIE_TYPE_METRIC, a, nSec));
    CHECK_OK(genie_builder_write(b, test_path("forged.genie")));
    genie_builder_free(b);
    genie_index *forged;
    CHECK_OK(genie_index_open(test_path("forged.genie"), &forged));
    genie_lc_options o = {0};
    o.k = 1;
    genie_vectors q = {1, c.dim, c.aQVec};
    genie_lc_results *r;
    CHECK_RC(genie_lc_search_vectors(forged, &q, &o, &r), GENIE_ECORRUPT);
    genie_index_close(forged);
    /* Wrong inputs. */
    genie_vectors q3 = {1, 3, c.aQVec};
    CHECK_RC(genie_lc_search_vectors(idx, &q3, &o, &r), GENIE_EINVAL);
    o.k = 0;
    o.radius = -1;
    CHECK_RC(genie_lc_search_vectors(idx, &q, &o, &r), GENIE_EINVAL);
    o.radius = NAN;
    CHECK_RC(genie_lc_search_vectors(idx, &q, &o, &r), GENIE_EINVAL);
    o.radius = 1;
    o.backend = GENIE_BACKEND_CUDA; /* refused as the table says: not built, or no device */
    if (genie_cuda_available()) {
        CHECK_OK(genie_lc_search_vectors(idx, &q, &o, &r));
        genie_lc_results_free(r);
    } else {
        CHECK_RC(genie_lc_search_vectors(idx, &q, &o, &r), genie_cuda_built() ? GENIE_EGPU : GENIE_ENOTSUP);
    }
    const char *z = "abc";
    size_t nz = 3;
    o.backend = GENIE_BACKEND_CPU;
    CHECK_RC(genie_lc_search_strings(idx, &z, &nz, 1, &o, &r), GENIE_EINVAL);
    p.metric = GENIE_LC_EDIT;
    genie_vectors v = {c.n, c.dim, c.aVec};
    CHECK_RC(genie_lc_build_vectors(&v, &p, NULL, test_path("x.genie")), GENIE_EINVAL);
    p.metric = GENIE_LC_L2;
    p.cluster_size = (1u << 20) + 1;
    CHECK_RC(genie_lc_build_vectors(&v, &p, NULL, test_path("x.genie")), GENIE_EINVAL);
    genie_lc_metric mt;
    CHECK_RC(genie_lc_metric_parse("hamming", &mt), GENIE_EINVAL);
    CHECK_OK(genie_lc_metric_parse("jaccard", &mt));
    CHECK_EQ(mt, GENIE_LC_JACCARD);
    /* The genuine section still reads. */
    genie_lc_info info;
    CHECK_OK(genie_lc_index_info(idx, &info));
    genie_index_close(idx);
    free(a);
    corpus_free(&c);
}
