/*
 * Filters of the front-ends with searches of their own against the same
 * oracle as test_filter.c: the filtered search of the full index answers
 * exactly as the same search of an index built from the allowed objects
 * alone, with the same front-end parameters, ids mapped back.  Sets
 * (MinHash candidates and the exact scan), sequences (one round,
 * --certify with its fallback scan, the exact scan), vectors (LSH over
 * data-independent hash functions, every exact metric) and metric (the
 * List of Clusters, k-NN and range), on $GENIE_TEST_BACKEND.
 */
#include "genie/metric.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/vectors.h"
#include "test.h"
#include "test_filter.h"

/* A random string over a small alphabet, or a mutation of an earlier one. */
static void random_word(uint64_t *s, char *z, size_t cap, char **azPrev, size_t nPrev)
{
    if (nPrev && test_rand(s) % 2) {
        snprintf(z, cap, "%s", azPrev[test_rand(s) % nPrev]);
        size_t n = strlen(z);
        if (n)
            z[test_rand(s) % n] = (char)('a' + test_rand(s) % 5);
        return;
    }
    size_t n = 3 + test_rand(s) % 9;
    for (size_t i = 0; i < n && i + 1 < cap; i++)
        z[i] = (char)('a' + test_rand(s) % 5);
    z[n < cap ? n : cap - 1] = 0;
}

static char **random_words(uint64_t *s, size_t n)
{
    char **az = malloc(n * sizeof *az);
    for (size_t i = 0; i < n; i++) {
        az[i] = malloc(16);
        random_word(s, az[i], 16, az, i);
    }
    return az;
}

static void free_words(char **az, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(az[i]);
    free(az);
}

TEST(filter_sets_equal_index_of_allowed)
{
    uint64_t s = 3, n = 500;
    char **azSet = malloc(n * sizeof *azSet);
    for (uint64_t i = 0; i < n; i++) {
        azSet[i] = malloc(96);
        azSet[i][0] = 0;
        for (int e = 0, m = 1 + (int)(test_rand(&s) % 9); e < m; e++) {
            char z[8];
            snprintf(z, sizeof z, "e%u ", (unsigned)(test_rand(&s) % 40));
            strcat(azSet[i], z);
        }
    }
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, n));
    uint64_t nAllowed;
    uint64_t *aMap = filter_test_random(f, n, 35, &s, &nAllowed);
    genie_set_params p = {.hashes = 32, .seed = 9};
    const char *azPath[] = {test_path("all.genie"), test_path("sub.genie")};
    for (int t = 0; t < 2; t++) {
        genie_set_builder *sb;
        CHECK_OK(genie_set_builder_new(&sb, NULL, &p));
        for (uint64_t i = 0; i < (t ? nAllowed : n); i++) {
            const char *z = azSet[t ? aMap[i] : i];
            CHECK_OK(genie_set_builder_add(sb, z, strlen(z)));
        }
        CHECK_OK(genie_set_builder_write(sb, azPath[t]));
        genie_set_builder_free(sb);
    }
    genie_index *all, *sub;
    CHECK_OK(genie_index_open(azPath[0], &all));
    CHECK_OK(genie_index_open(azPath[1], &sub));
    size_t anQ[40];
    for (int i = 0; i < 40; i++)
        anQ[i] = strlen(azSet[i * 7]);
    const char *azQ[40];
    for (int i = 0; i < 40; i++)
        azQ[i] = azSet[i * 7];
    for (int exact = 0; exact < 2; exact++) {
        genie_set_options so = {.k = 6, .candidates = 20, .exact = exact};
        genie_search_options of = {.backend = test_backend(), .threads = 2, .filter = f};
        genie_search_options os = {.backend = GENIE_BACKEND_CPU, .threads = 2};
        genie_set_results *got, *want;
        CHECK_OK(genie_set_search(all, azQ, anQ, 40, &so, &of, &got));
        CHECK_OK(genie_set_search(sub, azQ, anQ, 40, &so, &os, &want));
        for (size_t q = 0; q < 40; q++) {
            size_t nA, nB;
            const genie_set_hit *a = genie_set_results_get(got, q, &nA);
            const genie_set_hit *b = genie_set_results_get(want, q, &nB);
            CHECK_EQ(nA, nB);
            for (size_t i = 0; i < nA; i++) {
                CHECK_EQ(a[i].object, aMap[b[i].object]);
                CHECK_EQ(a[i].shared, b[i].shared);
                CHECK_EQ(a[i].union_size, b[i].union_size);
                CHECK_EQ(a[i].count, b[i].count);
            }
        }
        genie_set_results_free(got);
        genie_set_results_free(want);
    }
    genie_index_close(all);
    genie_index_close(sub);
    genie_filter_free(f);
    free(aMap);
    free_words(azSet, n);
}

TEST(filter_sequences_equal_index_of_allowed)
{
    uint64_t s = 17, n = 800;
    char **azStr = random_words(&s, n);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, n));
    uint64_t nAllowed;
    uint64_t *aMap = filter_test_random(f, n, 30, &s, &nAllowed);
    const char *azPath[] = {test_path("all.genie"), test_path("sub.genie")};
    for (int t = 0; t < 2; t++) {
        genie_seq_builder *sb;
        CHECK_OK(genie_seq_builder_new(&sb, NULL, 3));
        for (uint64_t i = 0; i < (t ? nAllowed : n); i++) {
            const char *z = azStr[t ? aMap[i] : i];
            CHECK_OK(genie_seq_builder_add(sb, z, strlen(z)));
        }
        CHECK_OK(genie_seq_builder_write(sb, azPath[t]));
        genie_seq_builder_free(sb);
    }
    genie_index *all, *sub;
    CHECK_OK(genie_index_open(azPath[0], &all));
    CHECK_OK(genie_index_open(azPath[1], &sub));
    char **azQ = random_words(&s, 50);
    size_t anQ[50];
    for (int i = 0; i < 50; i++)
        anQ[i] = strlen(azQ[i]);
    genie_seq_options aMode[] = {{.k = 4, .candidates = 8}, {.k = 4, .candidates = 8, .max_candidates = 4096},
                                 {.k = 4, .exact = 1}};
    for (int m = 0; m < 3; m++) {
        genie_search_options of = {.backend = test_backend(), .threads = 2, .filter = f};
        genie_search_options os = {.backend = test_backend(), .threads = 2};
        genie_seq_results *got, *want;
        CHECK_OK(genie_seq_search(all, (const char *const *)azQ, anQ, 50, &aMode[m], &of, &got));
        CHECK_OK(genie_seq_search(sub, (const char *const *)azQ, anQ, 50, &aMode[m], &os, &want));
        for (size_t q = 0; q < 50; q++) {
            size_t nA, nB;
            int cA, cB;
            const genie_seq_hit *a = genie_seq_results_get(got, q, &nA, &cA, NULL);
            const genie_seq_hit *b = genie_seq_results_get(want, q, &nB, &cB, NULL);
            CHECK_EQ(nA, nB);
            CHECK_EQ(cA, cB);
            for (size_t i = 0; i < nA; i++) {
                CHECK_EQ(a[i].object, aMap[b[i].object]);
                CHECK_EQ(a[i].distance, b[i].distance);
                CHECK_EQ(a[i].count, b[i].count);
            }
        }
        genie_seq_results_free(got);
        genie_seq_results_free(want);
    }
    free_words(azQ, 50);
    genie_index_close(all);
    genie_index_close(sub);
    genie_filter_free(f);
    free(aMap);
    free_words(azStr, n);
}

static genie_vectors random_vectors(uint64_t *s, uint64_t n, uint32_t dim)
{
    genie_vectors v = {n, dim, malloc(n * dim * sizeof(float))};
    float *a = (float *)v.data;
    for (uint64_t i = 0; i < n * dim; i++)
        a[i] = (float)(test_rand(s) % 17) - 8; /* many ties */
    return v;
}

static void same_neighbours(const genie_neighbor *a, const uint32_t *aNA, const genie_neighbor *b,
                            const uint32_t *aNB, const uint64_t *aMap, size_t nq, uint32_t k, const char *zWhat)
{
    for (size_t q = 0; q < nq; q++) {
        if (aNA[q] != aNB[q])
            test_fail_at(__FILE__, __LINE__, "%s, query %zu: %u neighbours filtered, %u expected", zWhat, q, aNA[q],
                         aNB[q]);
        for (uint32_t i = 0; i < aNA[q]; i++) {
            const genie_neighbor *x = &a[q * k + i], *y = &b[q * k + i];
            if (x->id != aMap[y->id] || memcmp(&x->distance, &y->distance, sizeof x->distance) != 0)
                test_fail_at(__FILE__, __LINE__, "%s, query %zu, rank %u: (%u, %g) filtered, (%llu, %g) expected",
                             zWhat, q, i, x->id, (double)x->distance, (unsigned long long)aMap[y->id],
                             (double)y->distance);
        }
    }
}

TEST(filter_vectors_equal_index_of_allowed)
{
    uint64_t s = 23, n = 600, nq = 20;
    uint32_t dim = 12, k = 9;
    genie_vectors base = random_vectors(&s, n, dim), q = random_vectors(&s, nq, dim);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, n));
    uint64_t nAllowed;
    uint64_t *aMap = filter_test_random(f, n, 40, &s, &nAllowed);
    genie_vectors sub = {nAllowed, dim, malloc(nAllowed * dim * sizeof(float))};
    for (uint64_t j = 0; j < nAllowed; j++)
        memcpy((float *)sub.data + j * dim, base.data + aMap[j] * dim, dim * sizeof(float));
    /* Hash functions that depend on the seed alone: cosine, and l1 with its sigma given. */
    genie_lsh_params ap[] = {{.metric = GENIE_METRIC_COSINE, .m = 48, .bits = 4, .seed = 5},
                             {.metric = GENIE_METRIC_L1, .m = 48, .buckets = 64, .sigma = 6, .seed = 5}};
    genie_neighbor *aA = malloc(nq * k * sizeof *aA), *aB = malloc(nq * k * sizeof *aB);
    uint32_t aNA[20], aNB[20];
    for (int t = 0; t < 2; t++) {
        CHECK_OK(genie_vectors_build(&base, &ap[t], NULL, test_path("all.genie")));
        CHECK_OK(genie_vectors_build(&sub, &ap[t], NULL, test_path("sub.genie")));
        genie_index *all, *small;
        CHECK_OK(genie_index_open(test_path("all.genie"), &all));
        CHECK_OK(genie_index_open(test_path("sub.genie"), &small));
        for (int exact = 0; exact < 2; exact++) {
            genie_vsearch_options of = {.search = {.backend = test_backend(), .threads = 2, .filter = f}, .k = k,
                                        .candidates = 30, .exact = exact};
            genie_vsearch_options os = of;
            os.search.filter = NULL;
            CHECK_OK(genie_vectors_search(all, &q, &of, aA, aNA, NULL));
            CHECK_OK(genie_vectors_search(small, &q, &os, aB, aNB, NULL));
            same_neighbours(aA, aNA, aB, aNB, aMap, nq, k, exact ? "exact" : "lsh");
        }
        genie_index_close(all);
        genie_index_close(small);
    }
    free(aA);
    free(aB);
    free(sub.data);
    free(base.data);
    free(q.data);
    genie_filter_free(f);
    free(aMap);
}

/* The exact search of every metric a vectors index holds (l2, l1, cosine), a few filters each. */
TEST(filter_exact_vectors_every_metric)
{
    uint64_t s = 31, n = 1500, nq = 25;
    uint32_t dim = 16, k = 12;
    genie_vectors base = random_vectors(&s, n, dim), q = random_vectors(&s, nq, dim);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, n));
    genie_neighbor *aA = malloc(nq * k * sizeof *aA), *aB = malloc(nq * k * sizeof *aB);
    uint32_t aNA[25], aNB[25];
    static const unsigned aPercent[] = {0, 1, 50, 100};
    static const genie_metric aMetric[] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    for (int m = 0; m < 3; m++) {
        genie_lsh_params p = {.metric = aMetric[m], .m = 8, .seed = 1};
        CHECK_OK(genie_vectors_build(&base, &p, NULL, test_path("all.genie")));
        genie_index *all;
        CHECK_OK(genie_index_open(test_path("all.genie"), &all));
        for (int t = 0; t < 4; t++) {
            uint64_t nAllowed;
            uint64_t *aMap = filter_test_random(f, n, aPercent[t], &s, &nAllowed);
            genie_vsearch_options of = {.search = {.backend = test_backend(), .threads = 2, .filter = f}, .k = k,
                                        .exact = 1};
            CHECK_OK(genie_vectors_search(all, &q, &of, aA, aNA, NULL));
            if (nAllowed) {
                genie_vectors sub = {nAllowed, dim, malloc(nAllowed * dim * sizeof(float))};
                for (uint64_t j = 0; j < nAllowed; j++)
                    memcpy((float *)sub.data + j * dim, base.data + aMap[j] * dim, dim * sizeof(float));
                CHECK_OK(genie_exact_search(&sub, &q, aMetric[m], k, GENIE_BACKEND_CPU, 2, aB, NULL));
                for (size_t i = 0; i < nq; i++)
                    aNB[i] = k < nAllowed ? k : (uint32_t)nAllowed;
                same_neighbours(aA, aNA, aB, aNB, aMap, nq, k, genie_metric_name(aMetric[m]));
                free(sub.data);
            } else {
                for (size_t i = 0; i < nq; i++)
                    CHECK_EQ(aNA[i], 0);
            }
            free(aMap);
        }
        genie_index_close(all);
    }
    free(aA);
    free(aB);
    free(base.data);
    free(q.data);
    genie_filter_free(f);
}

TEST(filter_metric_equal_index_of_allowed)
{
    uint64_t s = 41, n = 700;
    char **azStr = random_words(&s, n);
    size_t *anStr = malloc(n * sizeof *anStr);
    for (uint64_t i = 0; i < n; i++)
        anStr[i] = strlen(azStr[i]);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, n));
    uint64_t nAllowed;
    uint64_t *aMap = filter_test_random(f, n, 30, &s, &nAllowed);
    const char **azSub = malloc(nAllowed * sizeof *azSub);
    size_t *anSub = malloc(nAllowed * sizeof *anSub);
    for (uint64_t j = 0; j < nAllowed; j++) {
        azSub[j] = azStr[aMap[j]];
        anSub[j] = anStr[aMap[j]];
    }
    genie_lc_params p = {.metric = GENIE_LC_EDIT, .cluster_size = 16, .seed = 3};
    CHECK_OK(genie_lc_build_strings((const char *const *)azStr, anStr, n, &p, NULL, test_path("all.genie")));
    CHECK_OK(genie_lc_build_strings(azSub, anSub, nAllowed, &p, NULL, test_path("sub.genie")));
    genie_index *all, *sub;
    CHECK_OK(genie_index_open(test_path("all.genie"), &all));
    CHECK_OK(genie_index_open(test_path("sub.genie"), &sub));
    char **azQ = random_words(&s, 30);
    size_t anQ[30];
    for (int i = 0; i < 30; i++)
        anQ[i] = strlen(azQ[i]);
    genie_lc_options aOpt[] = {{.k = 5, .backend = test_backend()}, {.k = 0, .radius = 2, .backend = test_backend()},
                               {.k = 5, .brute_force = 1}};
    for (int m = 0; m < 3; m++) {
        genie_lc_options of = aOpt[m], os = aOpt[m];
        of.filter = f;
        genie_lc_results *got, *want;
        CHECK_OK(genie_lc_search_strings(all, (const char *const *)azQ, anQ, 30, &of, &got));
        CHECK_OK(genie_lc_search_strings(sub, (const char *const *)azQ, anQ, 30, &os, &want));
        for (size_t q = 0; q < 30; q++) {
            size_t nA, nB;
            const genie_lc_hit *a = genie_lc_results_get(got, q, &nA);
            const genie_lc_hit *b = genie_lc_results_get(want, q, &nB);
            CHECK_EQ(nA, nB);
            for (size_t i = 0; i < nA; i++) {
                CHECK_EQ(a[i].object, aMap[b[i].object]);
                CHECK(a[i].distance == b[i].distance);
            }
        }
        genie_lc_results_free(got);
        genie_lc_results_free(want);
    }
    free_words(azQ, 30);
    genie_index_close(all);
    genie_index_close(sub);
    free(azSub);
    free(anSub);
    free(anStr);
    free_words(azStr, n);
    genie_filter_free(f);
    free(aMap);
}
