/*
 * The array calls (genie_builder_add_many, genie_queries_add_many,
 * genie_results_copy) against their one-at-a-time counterparts: the same
 * index bytes, the same answers, the rows padded with -1, and bad input
 * named by object, query and item.
 */
#include "test.h"

#define N_OBJ 300
#define MAX_KW 12

/* Random CSR objects over keywords 0..49. */
static void random_objects(uint64_t *seed, uint64_t *aOff, uint32_t *aKw)
{
    aOff[0] = 0;
    for (size_t i = 0; i < N_OBJ; i++) {
        size_t n = (size_t)(test_rand(seed) % (MAX_KW + 1));
        for (size_t j = 0; j < n; j++)
            aKw[aOff[i] + j] = (uint32_t)(test_rand(seed) % 50);
        aOff[i + 1] = aOff[i] + n;
    }
}

TEST(arrays_builder_add_many_same_index)
{
    uint64_t seed = 7, aOff[N_OBJ + 1], aLabel[N_OBJ];
    static uint32_t aKw[N_OBJ * MAX_KW];
    random_objects(&seed, aOff, aKw);
    for (size_t i = 0; i < N_OBJ; i++)
        aLabel[i] = 1000000007ull * i;

    genie_builder *one, *many;
    CHECK_OK(genie_builder_new(&one, NULL));
    for (size_t i = 0; i < N_OBJ; i++) {
        genie_object o = {aKw + aOff[i], (size_t)(aOff[i + 1] - aOff[i]), 1, aLabel[i], NULL, 0};
        CHECK_OK(genie_builder_add(one, &o));
    }
    CHECK_OK(genie_builder_new(&many, NULL));
    /* Two calls, the second with offsets not starting at 0. */
    CHECK_OK(genie_builder_add_many(many, aKw, aOff, 100, aLabel));
    CHECK_OK(genie_builder_add_many(many, aKw, aOff + 100, N_OBJ - 100, aLabel + 100));
    CHECK_EQ(genie_builder_count(many), N_OBJ);
    CHECK_OK(genie_builder_write(one, test_path("one.genie")));
    CHECK_OK(genie_builder_write(many, test_path("many.genie")));
    size_t nA, nB;
    unsigned char *a = test_read_file(test_path("one.genie"), &nA);
    unsigned char *b = test_read_file(test_path("many.genie"), &nB);
    CHECK_EQ(nA, nB);
    CHECK(memcmp(a, b, nA) == 0);
    free(a);
    free(b);
    genie_builder_free(one);
    genie_builder_free(many);
}

TEST(arrays_queries_and_results_copy)
{
    uint64_t seed = 11, aOff[N_OBJ + 1];
    static uint32_t aKw[N_OBJ * MAX_KW];
    random_objects(&seed, aOff, aKw);
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    CHECK_OK(genie_builder_add_many(b, aKw, aOff, N_OBJ, NULL));
    CHECK_OK(genie_builder_write(b, test_path("x.genie")));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("x.genie"), &idx));

    /* 40 queries of 0..5 random items; query 0 is empty. */
    enum { NQ = 40, K = 7 };
    genie_item aItem[NQ * 5];
    uint64_t aQOff[NQ + 1] = {0};
    genie_queries *qOne, *qMany;
    CHECK_OK(genie_queries_new(&qOne));
    CHECK_OK(genie_queries_new(&qMany));
    for (size_t i = 0; i < NQ; i++) {
        size_t n = i ? (size_t)(test_rand(&seed) % 6) : 0;
        for (size_t j = 0; j < n; j++) {
            uint32_t lo = (uint32_t)(test_rand(&seed) % 50);
            aItem[aQOff[i] + j] = (genie_item){lo, lo + (uint32_t)(test_rand(&seed) % 3),
                                               1 + (uint32_t)(test_rand(&seed) % 4)};
        }
        aQOff[i + 1] = aQOff[i] + n;
        CHECK_OK(genie_queries_add(qOne, aItem + aQOff[i], n, 2));
    }
    CHECK_OK(genie_queries_add_many(qMany, aItem, aQOff, NQ, 2));
    CHECK_EQ(genie_queries_count(qMany), NQ);
    genie_results *rOne = test_search(idx, qOne, GENIE_BACKEND_CPU, K);
    genie_results *rMany = test_search(idx, qMany, test_backend(), K);
    test_same_results(rOne, rMany, "add_many");

    int64_t aId[NQ * K];
    int32_t aCount[NQ * K];
    CHECK_OK(genie_results_copy(rMany, K, aId, aCount));
    for (size_t i = 0; i < NQ; i++) {
        size_t n;
        const genie_hit *h = genie_results_get(rOne, i, &n);
        for (size_t r = 0; r < K; r++) {
            CHECK_EQ(aId[i * K + r], r < n ? (int64_t)h[r].object : -1);
            CHECK_EQ(aCount[i * K + r], r < n ? (int32_t)h[r].count : -1);
        }
    }
    CHECK_EQ(aId[0], -1); /* the empty query */
    /* counts may be left out; a narrower row keeps the best hits. */
    int64_t aId3[NQ * 3];
    CHECK_OK(genie_results_copy(rMany, 3, aId3, NULL));
    for (size_t i = 0; i < NQ; i++)
        for (size_t r = 0; r < 3; r++)
            CHECK_EQ(aId3[i * 3 + r], aId[i * K + r]);
    CHECK_RC(genie_results_copy(rMany, 0, aId3, NULL), GENIE_EINVAL);

    genie_results_free(rOne);
    genie_results_free(rMany);
    genie_queries_free(qOne);
    genie_queries_free(qMany);
    genie_index_close(idx);
}

TEST(arrays_bad_input_named)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item aItem[] = {{1, 2, 1}, {3, 3, 1}, {5, 4, 1}};
    uint64_t aOff[] = {0, 2, 3};
    CHECK_RC(genie_queries_add_many(q, aItem, aOff, 2, 0), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "query 2, item 1") != NULL);
    CHECK_EQ(genie_queries_count(q), 0); /* nothing added */
    aItem[2] = (genie_item){4, 5, 256};
    CHECK_RC(genie_queries_add_many(q, aItem, aOff, 2, 0), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "weight 256") != NULL);
    uint64_t aBack[] = {0, 2, 1};
    CHECK_RC(genie_queries_add_many(q, aItem, aBack, 2, 0), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "query 2: offsets decrease") != NULL);
    CHECK_EQ(genie_queries_count(q), 0);
    genie_queries_free(q);

    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t aKw[] = {1, 2, 3};
    uint64_t aObjOff[] = {0, 2, 1};
    CHECK_RC(genie_builder_add_many(b, aKw, aObjOff, 2, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "object 1: offsets decrease") != NULL);
    CHECK_EQ(genie_builder_count(b), 1); /* the objects before the faulty one */
    uint64_t aLabel[] = {5};
    uint64_t aOne[] = {2, 3};
    CHECK_RC(genie_builder_add_many(b, aKw, aOne, 1, aLabel), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "labels must be given for all objects or none") != NULL);
    genie_builder_free(b);
}
