/*
 * Inverted-file vectors indexes (IVF-Flat, IVF-PQ) and k-means: every
 * answer against an independent oracle written here from the rule of
 * engine/ivf.h (the probes from all centroid distances, the candidates'
 * distances by genie_vector_distance or by the ADC formula, sorted by
 * (distance, id)), with all lists probed against the exact search, the
 * chosen backend ($GENIE_TEST_BACKEND) against the CPU byte for byte, the
 * recall targets against measured recall, and the refusals of bad input;
 * an index cut into parts answers as the one without them, and a range
 * of its parts as the oracle over the range's objects.
 * Compiled without contraction of multiply-adds (tests/CMakeLists.txt),
 * as the library's reference arithmetic is.
 */
#include <math.h>

#include "genie/vectors.h"
#include "engine/kmeans.h"
#include "index/index.h"
#include "test.h"
#include "transform/vectors_ivf.h"

/* n vectors around nCentre Gaussian centres (sd 1, centres spread by @p spread), seeded. */
/* (Two calls with different seeds draw different centres: split one call's vectors for base and queries.) */
static float *clustered(uint64_t seed, uint32_t nCentre, uint32_t n, uint32_t dim, float spread)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    float *aC = malloc((size_t)nCentre * dim * sizeof *aC), *a = malloc((size_t)n * dim * sizeof *a);
    CHECK(aC && a);
    for (uint32_t i = 0; i < nCentre * dim; i++)
        aC[i] = spread * (float)((double)(test_rand(&s) >> 11) / 9007199254740992.0 - 0.5);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)(test_rand(&s) % nCentre);
        for (uint32_t d = 0; d < dim; d++) {
            double u = ((double)(test_rand(&s) >> 11) + 0.5) / 9007199254740992.0;
            double v = ((double)(test_rand(&s) >> 11) + 0.5) / 9007199254740992.0;
            a[(size_t)i * dim + d] = aC[(size_t)c * dim + d] + (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
        }
    }
    free(aC);
    return a;
}

static genie_index *build_ivf(const genie_vectors *base, genie_metric metric, uint32_t nlist, uint32_t M,
                              uint32_t bits, int refine, const char *zName)
{
    genie_ivf_params p = {.metric = metric, .nlist = nlist, .pq_m = M, .pq_bits = bits, .refine = refine,
                          .iterations = 8, .seed = 7, .backend = GENIE_BACKEND_CPU, .threads = 2};
    genie_build_options opt;
    genie_build_options_init(&opt);
    const char *path = test_path(zName);
    CHECK_OK(genie_vectors_build_ivf(base, &p, &opt, path));
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx));
    return idx;
}

static void search(const genie_index *idx, const genie_vectors *q, genie_backend backend, uint32_t k, uint32_t nprobe,
                   uint32_t refine, genie_neighbor *out, uint32_t *aN)
{
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.search.backend = backend;
    o.search.threads = 2;
    o.k = k;
    o.nprobe = nprobe;
    o.candidates = refine;
    genie_search_stats st;
    CHECK_OK(genie_vectors_search(idx, q, &o, out, aN, &st));
    CHECK_EQ(st.nprobe, nprobe);
}

/* (distance, id) in the total order of engine/ivf.h. */
typedef struct pair {
    float d;
    uint32_t id;
} pair;

static int cmp_pair(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static float dot_seq(const float *a, const float *b, uint32_t n)
{
    float s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The oracle's probes: every centroid's direct distance, sorted. */
static void oracle_probes(const engine_ivf *ix, const float *q, uint32_t nprobe, pair *aProbe)
{
    pair *a = malloc(ix->nlist * sizeof *a);
    CHECK(a);
    for (uint32_t l = 0; l < ix->nlist; l++)
        a[l] = (pair){genie_vector_distance(ix->metric, ix->aCentroid + (size_t)l * ix->dim, q, ix->dim), l};
    qsort(a, ix->nlist, sizeof *a, cmp_pair);
    memcpy(aProbe, a, nprobe * sizeof *a);
    free(a);
}

/* The ADC estimate of the candidate at position @p pos in list @p l, spelled out as engine/ivf.h states it. */
static float oracle_adc(const engine_ivf *ix, const float *q, uint32_t l, float coarse, uint64_t pos)
{
    uint32_t M = ix->pqM, ksub = 1u << ix->pqBits, ds = ix->dim / M;
    float nq = dot_seq(q, q, ix->dim);
    float s = ix->metric == GENIE_METRIC_L2 ? 0.0f : coarse;
    for (uint32_t m = 0; m < M; m++) {
        const float *cw = ix->aCodebook + ((size_t)m * ksub + ix->aCode[pos * M + m]) * ds;
        float t = 0;
        for (uint32_t j = 0; j < ds; j++) {
            uint32_t d = m * ds + j;
            if (ix->metric == GENIE_METRIC_L2) {
                float r = q[d] - ix->aCentroid[(size_t)l * ix->dim + d], e = r - cw[j];
                t += e * e;
            } else {
                float v = ix->metric == GENIE_METRIC_IP ? q[d] : nq == 0 ? 0.0f : q[d] / sqrtf(nq);
                t += v * cw[j];
            }
        }
        s += ix->metric == GENIE_METRIC_L2 ? t : -t;
    }
    return s;
}

/* The oracle's answer of one query: *pN neighbours into out. */
static void oracle(const engine_ivf *ix, const float *q, uint32_t k, uint32_t nprobe, uint32_t refine,
                   genie_neighbor *out, uint32_t *pN)
{
    pair *aProbe = malloc(nprobe * sizeof *aProbe), *aCand = malloc(ix->n * sizeof *aCand);
    CHECK(aProbe && aCand);
    oracle_probes(ix, q, nprobe, aProbe);
    uint64_t nCand = 0;
    for (uint32_t p = 0; p < nprobe; p++) {
        uint32_t l = aProbe[p].id;
        for (uint64_t pos = ix->aListStart[l]; pos < ix->aListStart[l + 1]; pos++) {
            uint32_t id = ix->aId[pos];
            float d = ix->pqM ? oracle_adc(ix, q, l, aProbe[p].d, pos)
                              : genie_vector_distance(ix->metric, ix->aVec + (size_t)id * ix->dim, q, ix->dim);
            aCand[nCand++] = (pair){d, id};
        }
    }
    qsort(aCand, nCand, sizeof *aCand, cmp_pair);
    if (ix->pqM && refine) {
        nCand = nCand < refine ? nCand : refine;
        for (uint64_t i = 0; i < nCand; i++)
            aCand[i].d = genie_vector_distance(ix->metric, ix->aVec + (size_t)aCand[i].id * ix->dim, q, ix->dim);
        qsort(aCand, nCand, sizeof *aCand, cmp_pair);
    } else if (ix->pqM && ix->metric == GENIE_METRIC_L2) {
        for (uint64_t i = 0; i < nCand; i++)
            aCand[i].d = sqrtf(aCand[i].d);
    }
    *pN = (uint32_t)(nCand < k ? nCand : k);
    for (uint32_t i = 0; i < *pN; i++)
        out[i] = (genie_neighbor){aCand[i].id, aCand[i].d};
    free(aProbe);
    free(aCand);
}

static void check_same(const genie_neighbor *a, const uint32_t *aN, const genie_neighbor *b, const uint32_t *bN,
                       uint64_t nq, uint32_t k, const char *zWhat)
{
    for (uint64_t i = 0; i < nq; i++) {
        if (aN[i] != bN[i])
            test_fail_at(__FILE__, __LINE__, "%s: query %llu: %u answers, expected %u", zWhat, (unsigned long long)i,
                         aN[i], bN[i]);
        for (uint32_t j = 0; j < aN[i]; j++) {
            const genie_neighbor *x = &a[i * k + j], *y = &b[i * k + j];
            if (x->id != y->id || memcmp(&x->distance, &y->distance, sizeof(float)) != 0)
                test_fail_at(__FILE__, __LINE__, "%s: query %llu, rank %u: %u at %.9g, expected %u at %.9g", zWhat,
                             (unsigned long long)i, j, x->id, (double)x->distance, y->id, (double)y->distance);
        }
    }
}

/* The index's answers on the chosen backend and the CPU against the oracle, for several settings. */
static void check_against_oracle(const genie_index *idx, const genie_vectors *q, const uint32_t *aK, int nK,
                                 const uint32_t *aProbe, int nProbe, const uint32_t *aRefine, int nRefine)
{
    vivf *st;
    CHECK_OK(vivf_get(idx, &st));
    const engine_ivf *ix = &st->apView[0]->ix; /* the whole index's lists */
    uint32_t kMax = 0;
    for (int i = 0; i < nK; i++)
        kMax = aK[i] > kMax ? aK[i] : kMax;
    genie_neighbor *aGot = malloc(q->n * kMax * sizeof *aGot), *aCpu = malloc(q->n * kMax * sizeof *aCpu);
    genie_neighbor *aWant = malloc(q->n * kMax * sizeof *aWant);
    uint32_t *nGot = malloc(q->n * sizeof *nGot), *nCpu = malloc(q->n * sizeof *nCpu), *nWant = malloc(q->n * 4);
    CHECK(aGot && aCpu && aWant && nGot && nCpu && nWant);
    char zWhat[128];
    for (int a = 0; a < nK; a++)
        for (int b = 0; b < nProbe; b++)
            for (int c = 0; c < nRefine; c++) {
                uint32_t k = aK[a], P = aProbe[b], R = aRefine[c] ? aRefine[c] * k : 0;
                if (R > IVF_MAX_REFINE)
                    R = IVF_MAX_REFINE;
                snprintf(zWhat, sizeof zWhat, "%s %s k %u nprobe %u refine %u", genie_metric_name(ix->metric),
                         ix->pqM ? "ivf-pq" : "ivf-flat", k, P, R);
                search(idx, q, GENIE_BACKEND_CPU, k, P, R, aCpu, nCpu);
                for (uint64_t i = 0; i < q->n; i++)
                    oracle(ix, q->data + i * q->dim, k, P, R, aWant + i * k, &nWant[i]);
                check_same(aCpu, nCpu, aWant, nWant, q->n, k, zWhat);
                if (test_backend() != GENIE_BACKEND_CPU) {
                    search(idx, q, test_backend(), k, P, R, aGot, nGot);
                    check_same(aGot, nGot, aCpu, nCpu, q->n, k, zWhat);
                }
            }
    free(aGot);
    free(aCpu);
    free(aWant);
    free(nGot);
    free(nCpu);
    free(nWant);
}

/* Files @p zA and @p zB (test paths) hold the same bytes. */
static void check_same_file(const char *zA, const char *zB)
{
    size_t na, nb;
    unsigned char *a = test_read_file(test_path(zA), &na), *b = test_read_file(test_path(zB), &nb);
    if (!(na == nb && memcmp(a, b, na) == 0))
        test_fail_at(__FILE__, __LINE__, "%s and %s differ", zA, zB);
    free(a);
    free(b);
}

/*
 * @p p built twice on the chosen backend (a GPU's k-means): the same file,
 * whose answers to the first @p nq base vectors (k 10, nprobe 1 and
 * @p nprobe2, depth 0 and 3 k) on that backend equal the CPU's and the oracle's.
 */
static void check_gpu_build(const genie_vectors *base, genie_ivf_params p, uint32_t nq, uint32_t nprobe2)
{
    genie_build_options opt;
    genie_build_options_init(&opt);
    p.backend = test_backend();
    CHECK_OK(genie_vectors_build_ivf(base, &p, &opt, test_path("g1.genie")));
    CHECK_OK(genie_vectors_build_ivf(base, &p, &opt, test_path("g2.genie")));
    check_same_file("g1.genie", "g2.genie");
    genie_index *gi;
    CHECK_OK(genie_index_open(test_path("g1.genie"), &gi));
    const uint32_t aK[1] = {10}, aP[2] = {1, nprobe2}, aR[2] = {0, 3};
    genie_vectors q = {nq, base->dim, base->data};
    check_against_oracle(gi, &q, aK, 1, aP, 2, aR, 2);
    genie_index_close(gi);
}

static const genie_metric aMetric[3] = {GENIE_METRIC_L2, GENIE_METRIC_IP, GENIE_METRIC_COSINE};

TEST(ivf_flat_equals_oracle)
{
    float *aBase = clustered(1, 12, 1500, 24, 10), *aQ = clustered(2, 12, 60, 24, 10);
    genie_vectors base = {1500, 24, aBase}, q = {60, 24, aQ};
    /* A zero query (cosine: distance 1 to everything) and a base vector itself. */
    memset(aQ, 0, 24 * sizeof *aQ);
    memcpy(aQ + 24, aBase + 24 * 17, 24 * sizeof *aQ);
    /* k up to IVF_MAX_K: the GPU's largest selection (1,024 of the 1,500 with every list probed). */
    const uint32_t aK[4] = {1, 10, 300, 1024}, aP[4] = {1, 2, 5, 24}, aR[1] = {0};
    for (int m = 0; m < 3; m++) {
        genie_index *idx = build_ivf(&base, aMetric[m], 24, 0, 0, 0, "flat.genie");
        check_against_oracle(idx, &q, aK, 4, aP, 4, aR, 1);
        genie_index_close(idx);
    }
    free(aBase);
    free(aQ);
}

TEST(ivf_flat_all_lists_equal_exact_search)
{
    float *aBase = clustered(3, 8, 2000, 20, 6), *aQ = clustered(4, 8, 80, 20, 6);
    genie_vectors base = {2000, 20, aBase}, q = {80, 20, aQ};
    genie_neighbor *aIvf = malloc(80 * 100 * sizeof *aIvf), *aEx = malloc(80 * 100 * sizeof *aEx);
    uint32_t aN[80], aNex[80];
    for (int m = 0; m < 3; m++) {
        genie_index *idx = build_ivf(&base, aMetric[m], 16, 0, 0, 0, "flat.genie");
        search(idx, &q, test_backend(), 100, 16, 0, aIvf, aN);
        CHECK_OK(genie_exact_search(&base, &q, aMetric[m], 100, GENIE_BACKEND_CPU, 2, aEx, NULL));
        for (int i = 0; i < 80; i++)
            aNex[i] = 100;
        check_same(aIvf, aN, aEx, aNex, 80, 100, genie_metric_name(aMetric[m]));
        genie_index_close(idx);
    }
    free(aIvf);
    free(aEx);
    free(aBase);
    free(aQ);
}

TEST(ivf_pq_equals_oracle)
{
    float *aBase = clustered(5, 10, 1200, 16, 8), *aQ = clustered(6, 10, 40, 16, 8);
    genie_vectors base = {1200, 16, aBase}, q = {40, 16, aQ};
    memset(aQ, 0, 16 * sizeof *aQ);
    const uint32_t aK[2] = {1, 10}, aP[3] = {1, 3, 12}, aR[3] = {0, 1, 4};
    const uint32_t aM[2] = {4, 8}, aBits[2] = {8, 5};
    for (int m = 0; m < 3; m++)
        for (int v = 0; v < 2; v++) {
            genie_index *idx = build_ivf(&base, aMetric[m], 12, aM[v], aBits[v], 0, "pq.genie");
            check_against_oracle(idx, &q, aK, 2, aP, 3, aR, 3);
            if (m == 0 && v == 0) { /* the largest k and depth: 1,024 answers of a depth of 2,048 (IVF_MAX_REFINE) */
                const uint32_t aBigK[1] = {1024}, aAll[1] = {12}, aBigR[2] = {0, 2};
                check_against_oracle(idx, &q, aBigK, 1, aAll, 1, aBigR, 2);
            }
            genie_index_close(idx);
        }
    free(aBase);
    free(aQ);
}

TEST(ivf_build_deterministic_and_versioned)
{
    float *aBase = clustered(7, 6, 900, 8, 5);
    genie_vectors base = {900, 8, aBase};
    genie_ivf_params p = {.metric = GENIE_METRIC_L2, .nlist = 10, .pq_m = 4, .refine = 1, .seed = 3,
                          .backend = GENIE_BACKEND_CPU};
    genie_build_options opt;
    genie_build_options_init(&opt);
    CHECK_OK(genie_vectors_build_ivf(&base, &p, &opt, test_path("a.genie")));
    CHECK_OK(genie_vectors_build_ivf(&base, &p, &opt, test_path("b.genie")));
    p.seed = 4;
    CHECK_OK(genie_vectors_build_ivf(&base, &p, &opt, test_path("c.genie")));
    size_t na, nb, nc;
    unsigned char *a = test_read_file(test_path("a.genie"), &na), *b = test_read_file(test_path("b.genie"), &nb);
    unsigned char *c = test_read_file(test_path("c.genie"), &nc);
    CHECK(na == nb && memcmp(a, b, na) == 0);
    CHECK(na != nc || memcmp(a, c, na) != 0);
    if (test_backend() != GENIE_BACKEND_CPU) { /* the GPU's k-means: deterministic too (its own centroids) */
        p.seed = 3;
        p.refine = 0; /* depth 0 below: the codes alone */
        check_gpu_build(&base, p, 40, 4);
    }
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("a.genie"), &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.format_version, 4);
    genie_ivf_info iv;
    CHECK_OK(genie_vectors_index_ivf(idx, &iv));
    CHECK_EQ(iv.nlist, 10);
    CHECK_EQ(iv.pq_m, 4);
    CHECK_EQ(iv.pq_bits, 8);
    CHECK(iv.refine && iv.default_refine >= 10 && iv.default_nprobe >= 1 && iv.default_nprobe <= 10);
    CHECK_EQ(iv.train_size, 900); /* max(64 x 10, 256 x 256) capped at n */
    genie_lsh_params lp;
    CHECK_RC(genie_vectors_index_params(idx, &lp), GENIE_EINVAL);
    genie_vectors v;
    CHECK_OK(genie_vectors_index_base(idx, &v));
    CHECK(v.n == 900 && v.dim == 8 && memcmp(v.data, aBase, sizeof(float) * 900 * 8) == 0);
    genie_index_close(idx);
    /* An LSH index stays format version 3, as earlier builds wrote it. */
    genie_lsh_params lsh = {.metric = GENIE_METRIC_L2, .m = 8, .seed = 1};
    CHECK_OK(genie_vectors_build(&base, &lsh, &opt, test_path("lsh.genie")));
    CHECK_OK(genie_index_open(test_path("lsh.genie"), &idx));
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.format_version, 3);
    CHECK_RC(genie_vectors_index_ivf(idx, &iv), GENIE_EINVAL);
    genie_index_close(idx);
    free(a);
    free(b);
    free(c);
    free(aBase);
}

static void expect_build_error(const genie_vectors *base, genie_ivf_params p, const genie_build_options *opt,
                               const char *zNeedle)
{
    p.backend = GENIE_BACKEND_CPU;
    CHECK_RC(genie_vectors_build_ivf(base, &p, opt, test_path("bad.genie")), GENIE_EINVAL);
    if (!strstr(genie_last_error(), zNeedle))
        test_fail_at(__FILE__, __LINE__, "'%s' does not say '%s'", genie_last_error(), zNeedle);
}

static void expect_search_error(const genie_index *idx, const genie_vectors *q, uint32_t k, uint32_t nprobe,
                                uint32_t cand, double recall, const char *zNeedle)
{
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.search.backend = GENIE_BACKEND_CPU;
    o.k = k;
    o.nprobe = nprobe;
    o.candidates = cand;
    o.recall = recall;
    genie_neighbor out[4 * 1025];
    uint32_t aN[4];
    CHECK_RC(genie_vectors_search(idx, q, &o, out, aN, NULL), GENIE_EINVAL);
    if (!strstr(genie_last_error(), zNeedle))
        test_fail_at(__FILE__, __LINE__, "'%s' does not say '%s'", genie_last_error(), zNeedle);
}

TEST(ivf_bad_arguments)
{
    float *aBase = clustered(8, 4, 300, 12, 5);
    genie_vectors base = {300, 12, aBase};
    genie_build_options opt;
    genie_build_options_init(&opt);
    genie_ivf_params p = {.metric = GENIE_METRIC_L2, .nlist = 8};
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 301}, &opt, "nlist = 301");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 8, .pq_m = 5}, &opt,
                       "do not divide the dimension 12");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 8, .train_size = 7}, &opt,
                       "too small for 8 lists");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 8, .pq_m = 4, .train_size = 100},
                       &opt, "too small for 256 codewords");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L1, .nlist = 8}, &opt, "l2, ip or cosine");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 8, .refine = 1}, &opt,
                       "applies to IVF-PQ");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 8, .pq_m = 4, .pq_bits = 9},
                       &opt, "1..8");
    aBase[5 * 12 + 3] = NAN;
    expect_build_error(&base, p, &opt, "nan");
    aBase[5 * 12 + 3] = 0;
    genie_index *idx = build_ivf(&base, GENIE_METRIC_L2, 8, 0, 0, 0, "ok.genie");
    genie_vectors q = {2, 12, aBase};
    expect_search_error(idx, &q, 10, 9, 0, 0, "nprobe = 9, outside 1..8");
    expect_search_error(idx, &q, 1025, 2, 0, 0, "k = 1025");
    expect_search_error(idx, &q, 10, 2, 40, 0, "IVF-Flat's distances are exact");
    expect_search_error(idx, &q, 10, 2, 0, 1.5, "outside (0, 1]");
    expect_search_error(idx, &q, 10, 2, 0, 0.9, "chooses nprobe itself");
    expect_search_error(idx, &q, 101, 0, 0, 0.9, "k <= 100");
    genie_vectors q3 = {2, 3, aBase};
    expect_search_error(idx, &q3, 10, 2, 0, 0, "queries have 3 dimensions");
    aBase[1] = INFINITY;
    expect_search_error(idx, &q, 10, 2, 0, 0, "inf");
    aBase[1] = 0;
    /* A caller's cancel flag (genie serve's timeout) stops the search; unset, it changes nothing. */
    int cancel = 1;
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.search.backend = test_backend();
    o.search.cancel = &cancel;
    o.k = 3;
    genie_neighbor aOut[2 * 3];
    uint32_t aN[2];
    CHECK_RC(genie_vectors_search(idx, &q, &o, aOut, aN, NULL), GENIE_ECANCELED);
    cancel = 0;
    CHECK_OK(genie_vectors_search(idx, &q, &o, aOut, aN, NULL));
    genie_index_close(idx);
    idx = build_ivf(&base, GENIE_METRIC_L2, 8, 4, 4, 0, "pq.genie");
    expect_search_error(idx, &q, 10, 2, 5, 0, "outside k = 10..2048");
    expect_search_error(idx, &q, 10, 2, 3000, 0, "outside k = 10..2048");
    genie_index_close(idx);
    free(aBase);
}

/*
 * The lists of @p whole restricted to objects [first, first + n), ids
 * made relative to first, with their codes: what a range of parts holds,
 * made here from an index without parts.  Freed by free_range.
 */
static engine_ivf range_of(const engine_ivf *whole, uint64_t first, uint64_t n)
{
    engine_ivf r = *whole;
    uint64_t *aStart = malloc((whole->nlist + 1) * sizeof *aStart);
    uint32_t *aId = malloc(n * sizeof *aId);
    uint8_t *aCode = whole->pqM ? malloc(n * whole->pqM) : NULL;
    CHECK(aStart && aId && (!whole->pqM || aCode));
    uint64_t at = 0;
    for (uint32_t l = 0; l < whole->nlist; l++) {
        aStart[l] = at;
        for (uint64_t pos = whole->aListStart[l]; pos < whole->aListStart[l + 1]; pos++) {
            uint32_t id = whole->aId[pos];
            if (id < first || id >= first + n)
                continue;
            aId[at] = (uint32_t)(id - first);
            if (aCode)
                memcpy(aCode + at * whole->pqM, whole->aCode + pos * whole->pqM, whole->pqM);
            at++;
        }
    }
    aStart[whole->nlist] = at;
    CHECK_EQ(at, n);
    r.n = n;
    r.aListStart = aStart;
    r.aId = aId;
    r.aCode = aCode;
    r.aVec = whole->aVec + first * whole->dim;
    return r;
}

static void free_range(engine_ivf *r)
{
    free((void *)r->aListStart);
    free((void *)r->aId);
    free((void *)r->aCode);
}

/* The parts [firstPart, firstPart + nParts) of @p idx searched alone on @p backend, ids the index's. */
static void search_parts(const genie_index *idx, uint32_t firstPart, uint32_t nParts, const genie_vectors *q,
                         genie_backend backend, uint32_t k, uint32_t nprobe, uint32_t refine, genie_neighbor *out,
                         uint32_t *aN)
{
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.search.backend = backend;
    o.search.threads = 2;
    o.k = k;
    o.nprobe = nprobe;
    o.candidates = refine;
    CHECK_OK(genie_vectors_search_parts(idx, firstPart, nParts, q, &o, out, aN, NULL));
}

/*
 * --part-objects on an IVF index: every part holds the lists of its own
 * objects (the centroids and codebooks are the whole index's), the index
 * in parts answers byte for byte as the same build without parts, on the
 * CPU and the chosen backend; a range of parts answers as the oracle over
 * the range's objects alone; merged by (distance, id), the answers of
 * disjoint ranges are the whole index's (IVF-PQ refined: each rank's
 * distance at most the whole index's, the union holding its candidates).
 */
TEST(ivf_parts_hold_their_lists)
{
    enum { N = 1000, DIM = 8, NQ = 40 };
    float *aAll = clustered(9, 20, N + NQ, DIM, 12);
    genie_vectors base = {N, DIM, aAll}, q = {NQ, DIM, aAll + (size_t)N * DIM};
    genie_backend be = test_backend();
    for (int kind = 0; kind < 2; kind++) {
        genie_ivf_params p = {.metric = kind ? GENIE_METRIC_L2 : GENIE_METRIC_COSINE, .nlist = 24,
                              .pq_m = kind ? 4 : 0, .pq_bits = kind ? 5 : 0, .iterations = 6, .seed = 11,
                              .backend = GENIE_BACKEND_CPU, .threads = 2};
        genie_build_options opt, optParts;
        genie_build_options_init(&opt);
        genie_build_options_init(&optParts);
        optParts.part_objects = 300; /* parts of 300, 300, 300, 100 */
        CHECK_OK(genie_vectors_build_ivf(&base, &p, &opt, test_path("one.genie")));
        CHECK_OK(genie_vectors_build_ivf(&base, &p, &optParts, test_path("parts.genie")));
        genie_index *one, *parts;
        CHECK_OK(genie_index_open(test_path("one.genie"), &one));
        CHECK_OK(genie_index_open(test_path("parts.genie"), &parts));
        CHECK_EQ(genie_index_parts(parts), 4);
        genie_ivf_info a, b;
        CHECK_OK(genie_vectors_index_ivf(one, &a));
        CHECK_OK(genie_vectors_index_ivf(parts, &b));
        CHECK(a.longest_list == b.longest_list && a.empty_lists == b.empty_lists &&
              a.default_nprobe == b.default_nprobe && a.default_refine == b.default_refine);
        vivf *st;
        CHECK_OK(vivf_get(one, &st));
        const engine_ivf *whole = &st->apView[0]->ix;
        enum { K = 6 };
        genie_neighbor aOne[NQ * K], aGot[NQ * K], aWant[NQ * K], aPart[4][NQ * K];
        uint32_t nOne[NQ], nGot[NQ], nWant[NQ], nPart[4][NQ];
        static const uint32_t aProbe[3] = {1, 3, 24}, aRefine[2] = {0, 18};
        char zWhat[96];
        for (int ip = 0; ip < 3; ip++)
            for (int ir = 0; ir < 1 + kind; ir++) {
                uint32_t P = aProbe[ip], R = aRefine[ir];
                snprintf(zWhat, sizeof zWhat, "%s nprobe %u refine %u", kind ? "ivf-pq" : "ivf-flat", P, R);
                search(one, &q, be, K, P, R, aOne, nOne);
                search(parts, &q, be, K, P, R, aGot, nGot);
                check_same(aGot, nGot, aOne, nOne, NQ, K, zWhat);
                search(parts, &q, GENIE_BACKEND_CPU, K, P, R, aGot, nGot);
                check_same(aGot, nGot, aOne, nOne, NQ, K, zWhat);
                /* Ranges: part 1 alone, parts 2..3, against the oracle over their objects. */
                static const uint32_t aFirst[2] = {1, 2}, aN[2] = {1, 2};
                for (int r = 0; r < 2; r++) {
                    uint64_t first = aFirst[r] * 300, n = aFirst[r] + aN[r] == 4 ? N - first : aN[r] * 300;
                    engine_ivf rix = range_of(whole, first, n);
                    for (uint32_t i = 0; i < NQ; i++) {
                        oracle(&rix, q.data + (size_t)i * DIM, K, P, R, aWant + i * K, &nWant[i]);
                        for (uint32_t j = 0; j < nWant[i]; j++)
                            aWant[i * K + j].id += (uint32_t)first;
                    }
                    free_range(&rix);
                    search_parts(parts, aFirst[r], aN[r], &q, be, K, P, R, aGot, nGot);
                    check_same(aGot, nGot, aWant, nWant, NQ, K, zWhat);
                }
                /* The four parts alone, merged by (distance, id). */
                for (uint32_t pp = 0; pp < 4; pp++)
                    search_parts(parts, pp, 1, &q, be, K, P, R, aPart[pp], nPart[pp]);
                for (uint32_t i = 0; i < NQ; i++) {
                    uint32_t at[4] = {0, 0, 0, 0}, nMerged = 0;
                    for (; nMerged < K; nMerged++) {
                        int best = -1;
                        for (int pp = 0; pp < 4; pp++) {
                            if (at[pp] == nPart[pp][i])
                                continue;
                            const genie_neighbor *c = &aPart[pp][i * K + at[pp]];
                            const genie_neighbor *bb = best < 0 ? NULL : &aPart[best][i * K + at[best]];
                            if (!bb || c->distance < bb->distance || (c->distance == bb->distance && c->id < bb->id))
                                best = pp;
                        }
                        if (best < 0)
                            break;
                        aWant[i * K + nMerged] = aPart[best][i * K + at[best]++];
                    }
                    nWant[i] = nMerged;
                    if (R) { /* refined: every rank at least as near as one process's */
                        CHECK(nMerged >= nOne[i]);
                        for (uint32_t j = 0; j < nOne[i]; j++)
                            CHECK(aWant[i * K + j].distance <= aOne[i * K + j].distance);
                    }
                }
                if (!R)
                    check_same(aWant, nWant, aOne, nOne, NQ, K, zWhat);
            }
        genie_index_close(one);
        genie_index_close(parts);
    }
    free(aAll);
}

/* Recall on held-out queries of the data's distribution is at least the target less 0.03. */
static void check_recall(genie_index *idx, const genie_vectors *base, const genie_vectors *q, genie_metric metric,
                         double target)
{
    uint32_t k = 10;
    genie_neighbor *aOut = malloc(q->n * k * sizeof *aOut), *aEx = malloc(q->n * k * sizeof *aEx);
    uint32_t *aN = malloc(q->n * sizeof *aN);
    CHECK(aOut && aEx && aN);
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.search.backend = test_backend();
    o.search.threads = 2;
    o.k = k;
    o.recall = target;
    genie_search_stats st;
    CHECK_OK(genie_vectors_search(idx, q, &o, aOut, aN, &st));
    CHECK_OK(genie_exact_search(base, q, metric, k, GENIE_BACKEND_CPU, 2, aEx, NULL));
    uint64_t hit = 0;
    for (uint64_t i = 0; i < q->n; i++)
        for (uint32_t a = 0; a < aN[i]; a++)
            for (uint32_t b = 0; b < k; b++)
                hit += aOut[i * k + a].id == aEx[i * k + b].id;
    double recall = (double)hit / (double)(q->n * k);
    printf("  target %.2f: nprobe %u, depth %u, estimate %.4f, measured %.4f\n", target, st.nprobe, st.candidates,
           st.recall_estimate, recall);
    if (recall < target - 0.03)
        test_fail_at(__FILE__, __LINE__, "recall target %.2f: measured %.4f (nprobe %u, depth %u, estimate %.4f)",
                     target, recall, st.nprobe, st.candidates, st.recall_estimate);
    free(aOut);
    free(aEx);
    free(aN);
}

TEST(ivf_recall_targets_met)
{
    uint32_t n = 12000, dim = 24;
    float *aBase = clustered(9, 40, n + 300, dim, 6), *aQ = aBase + (size_t)n * dim; /* the same distribution */
    genie_vectors base = {n, dim, aBase}, q = {300, dim, aQ};
    const double aTarget[3] = {0.8, 0.9, 0.99};
    for (int v = 0; v < 3; v++) {
        genie_metric metric = v == 2 ? GENIE_METRIC_COSINE : GENIE_METRIC_L2;
        genie_index *idx = build_ivf(&base, metric, 200, v == 0 ? 0 : 8, v == 0 ? 0 : 8, v != 0, "r.genie");
        for (int t = 0; t < 3; t++)
            check_recall(idx, &base, &q, metric, aTarget[t]);
        genie_index_close(idx);
    }
    free(aBase);
}

TEST(kmeans_sample_and_fixed_point)
{
    uint64_t a[500];
    CHECK_OK(kmeans_sample(1000, 500, 11, a));
    unsigned char seen[1000] = {0};
    for (int i = 0; i < 500; i++) {
        CHECK(a[i] < 1000 && !seen[a[i]]);
        seen[a[i]] = 1;
    }
    CHECK_OK(kmeans_sample(5, 5, 1, a)); /* all of them */
    /* The fixed-point sums are the sums, to 2^-scale per term. */
    uint32_t n = 3000, dim = 6, k = 5;
    float *x = clustered(12, 5, n, dim, 30), *c = malloc(k * dim * sizeof *c);
    memcpy(c, x, k * dim * sizeof *c);
    double maxAbs = 0;
    for (uint32_t i = 0; i < n * dim; i++)
        maxAbs = fmax(maxAbs, fabs(x[i]));
    int64_t aSum[5 * 6];
    uint32_t aCount[5], aAssign[3000];
    kmeans_step_job j = {.aX = x, .n = n, .dim = dim, .aC = c, .k = k, .mode = KMEANS_L2,
                         .scale = kmeans_scale(n, maxAbs), .threads = 2, .aSum = aSum, .aCount = aCount,
                         .aAssign = aAssign};
    CHECK_OK(kmeans_step_cpu(&j));
    for (uint32_t i = 0; i < k; i++) {
        double s[6] = {0};
        uint32_t cnt = 0;
        for (uint32_t p = 0; p < n; p++) {
            /* the assignment: the nearest centroid, ties to the smaller */
            uint32_t best = 0;
            double bd = INFINITY;
            for (uint32_t t = 0; t < k; t++) {
                double d = 0;
                for (uint32_t e = 0; e < dim; e++)
                    d += ((double)x[p * dim + e] - c[t * dim + e]) * ((double)x[p * dim + e] - c[t * dim + e]);
                if (d < bd) {
                    bd = d;
                    best = t;
                }
            }
            CHECK_EQ(aAssign[p], best);
            if (best != i)
                continue;
            cnt++;
            for (uint32_t e = 0; e < dim; e++)
                s[e] += x[p * dim + e];
        }
        CHECK_EQ(aCount[i], cnt);
        for (uint32_t e = 0; e < dim; e++)
            CHECK(fabs(ldexp((double)aSum[i * dim + e], -j.scale) - s[e]) <= 1e-9 * (fabs(s[e]) + maxAbs * cnt));
    }
    /* Training twice gives the same centroids; with separated clusters the objective is the noise's. */
    float c1[5 * 6], c2[5 * 6];
    kmeans_params kp = {.k = k, .iterations = 10, .seed = 2, .mode = KMEANS_L2, .backend = GENIE_BACKEND_CPU,
                        .threads = 2};
    CHECK_OK(kmeans_train(x, n, dim, &kp, c1, NULL));
    kp.threads = 1;
    CHECK_OK(kmeans_train(x, n, dim, &kp, c2, NULL));
    CHECK(memcmp(c1, c2, sizeof c1) == 0);
    kp.k = 0;
    CHECK_RC(kmeans_train(x, n, dim, &kp, c1, NULL), GENIE_EINVAL);
    free(x);
    free(c);
}

/*
 * k-means' GEMM in TF32 (genie_ivf_params.precision): the CPU ignores it
 * (the same file as fp32's); on a GPU ($GENIE_TEST_BACKEND) it assigns
 * every point whose margin between its two nearest centroids exceeds
 * TF32's error to the centroid fp32 arithmetic in double picks, trains and
 * builds the same bytes twice, and the index's GPU answers equal the CPU's.
 */
TEST(kmeans_precision_tf32)
{
    uint32_t n = 4000, dim = 16, k = 12;
    float *x = clustered(21, k, n, dim, 40);
    genie_vectors base = {n, dim, x};
    genie_build_options opt;
    genie_build_options_init(&opt);
    genie_ivf_params p = {.metric = GENIE_METRIC_L2, .nlist = k, .pq_m = 4, .iterations = 6, .seed = 5,
                          .backend = GENIE_BACKEND_CPU, .threads = 2};
    CHECK_OK(genie_vectors_build_ivf(&base, &p, &opt, test_path("f32.genie")));
    p.precision = GENIE_PRECISION_TF32;
    CHECK_OK(genie_vectors_build_ivf(&base, &p, &opt, test_path("t32.genie")));
    check_same_file("f32.genie", "t32.genie");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 8,
                                                 .precision = GENIE_PRECISION_FP16}, &opt, "fp16; fp32 or tf32");
    expect_build_error(&base, (genie_ivf_params){.metric = GENIE_METRIC_L2, .nlist = 8, .precision = 9}, &opt,
                       "precision unknown");
    if (test_backend() != GENIE_BACKEND_CPU) {
        /* Centroids: the CPU's k-means; the GPU's TF32 assignment against double arithmetic. */
        float *c = malloc((size_t)k * dim * sizeof *c);
        uint32_t *aGpu = malloc(n * sizeof *aGpu);
        CHECK(c && aGpu);
        kmeans_params cp = {.k = k, .iterations = 6, .seed = 4, .mode = KMEANS_L2, .backend = GENIE_BACKEND_CPU,
                            .threads = 2};
        CHECK_OK(kmeans_train(x, n, dim, &cp, c, NULL));
        CHECK_OK(kmeans_assign(x, n, dim, c, k, KMEANS_L2, test_backend(), 0, 0, GENIE_PRECISION_TF32, aGpu));
        uint32_t nClear = 0;
        for (uint32_t i = 0; i < n; i++) {
            double best = INFINITY, second = INFINITY, xx = 0, cMax = 0;
            uint32_t bestI = 0;
            for (uint32_t t = 0; t < k; t++) {
                double s = 0, cc = 0;
                for (uint32_t d = 0; d < dim; d++) {
                    s += (double)c[t * dim + d] * x[(size_t)i * dim + d];
                    cc += (double)c[t * dim + d] * c[t * dim + d];
                }
                s = cc - 2 * s; /* the kernel's score, |c|^2 - 2 <x, c> */
                cMax = fmax(cMax, cc);
                if (s < best) {
                    second = best;
                    best = s;
                    bestI = t;
                } else if (s < second) {
                    second = s;
                }
            }
            for (uint32_t d = 0; d < dim; d++)
                xx += (double)x[(size_t)i * dim + d] * x[(size_t)i * dim + d];
            /* TF32 rounds both operands by 2^-11: <x, c> is off by at most about 2^-9 |x| |c|. */
            if (second - best > 0x1p-6 * (sqrt(xx * cMax) + cMax)) {
                nClear++;
                CHECK_EQ(aGpu[i], bestI);
            }
        }
        CHECK(nClear > n * 3 / 4); /* separated clusters: most points are clear */
        /* Deterministic: the same centroids twice, and the same index file. */
        float *c1 = malloc((size_t)k * dim * sizeof *c1), *c2 = malloc((size_t)k * dim * sizeof *c2);
        CHECK(c1 && c2);
        kmeans_params kp = {.k = k, .iterations = 6, .seed = 3, .mode = KMEANS_L2, .backend = test_backend(),
                            .precision = GENIE_PRECISION_TF32};
        genie_backend used;
        CHECK_OK(kmeans_train(x, n, dim, &kp, c1, &used));
        CHECK(used != GENIE_BACKEND_CPU);
        CHECK_OK(kmeans_train(x, n, dim, &kp, c2, NULL));
        CHECK(memcmp(c1, c2, (size_t)k * dim * sizeof *c1) == 0);
        check_gpu_build(&base, p, 50, 3);
        free(c);
        free(c1);
        free(c2);
        free(aGpu);
    }
    free(x);
}
