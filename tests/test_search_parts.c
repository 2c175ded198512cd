/*
 * genie_search_parts(): a search over a range of an index's parts, the
 * shard of one process of a distributed search (tools/mpi).  Every range
 * must answer as a naive count over the objects of that range alone, with
 * global ids; the answers of disjoint ranges that cover the index, merged
 * by count descending then smaller id, must equal genie_search() over the
 * whole index.  genie_queries_get() must give back what was added.
 */
#include "test.h"

typedef struct sp_queries {
    genie_queries *q;
    genie_item aItem[48][6];
    size_t aN[48];
    uint32_t aMin[48];
    size_t n;
} sp_queries;

static void sp_objects(uint64_t *s, size_t n, uint32_t universe, test_objects *o)
{
    o->n = n;
    o->aKw = malloc(n * sizeof *o->aKw);
    o->aN = malloc(n * sizeof *o->aN);
    for (size_t i = 0; i < n; i++) {
        o->aN[i] = test_rand(s) % 9;
        o->aKw[i] = malloc((o->aN[i] + 1) * sizeof(uint32_t));
        for (size_t j = 0; j < o->aN[i]; j++)
            o->aKw[i][j] = (uint32_t)(test_rand(s) % universe);
    }
}

static void sp_make_queries(uint64_t *s, size_t nq, uint32_t universe, sp_queries *qs)
{
    CHECK(nq <= 48);
    CHECK_OK(genie_queries_new(&qs->q));
    qs->n = nq;
    for (size_t i = 0; i < nq; i++) {
        size_t n = test_rand(s) % 6;
        for (size_t j = 0; j < n; j++) {
            uint32_t lo = (uint32_t)(test_rand(s) % universe), w = (uint32_t)(test_rand(s) % 4);
            qs->aItem[i][j] = (genie_item){lo, lo + w, 1 + (uint32_t)(test_rand(s) % 3)};
        }
        qs->aN[i] = n;
        qs->aMin[i] = (test_rand(s) % 4 == 0) ? 2 : 0;
        CHECK_OK(genie_queries_add(qs->q, qs->aItem[i], n, qs->aMin[i]));
    }
}

/* Naive MC of object @p o (each distinct keyword counted once per item). */
static uint32_t sp_count(const test_objects *objs, size_t o, const genie_item *aItem, size_t nItem)
{
    uint32_t mc = 0;
    for (size_t i = 0; i < objs->aN[o]; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= objs->aKw[o][j] == objs->aKw[o][i];
        for (size_t t = 0; t < nItem && !seen; t++)
            if (objs->aKw[o][i] >= aItem[t].lo && objs->aKw[o][i] <= aItem[t].hi)
                mc += aItem[t].weight;
    }
    return mc;
}

/* Better hit first: count descending, then smaller id. */
static int sp_better(const genie_hit *a, const genie_hit *b)
{
    return a->count > b->count || (a->count == b->count && a->object < b->object);
}

/* The naive top-k of objects [o0, o1) for query @p qi into aOut; returns how many. */
static size_t sp_naive(const test_objects *objs, uint64_t o0, uint64_t o1, const sp_queries *qs, size_t qi,
                       uint32_t k, genie_hit *aOut)
{
    size_t n = 0;
    uint32_t min = qs->aMin[qi] ? qs->aMin[qi] : 1;
    for (uint64_t o = o0; o < o1; o++) {
        genie_hit h = {(uint32_t)o, sp_count(objs, (size_t)o, qs->aItem[qi], qs->aN[qi])};
        if (h.count < min)
            continue;
        /* insertion into the sorted top-k */
        size_t at = n < k ? n : k;
        while (at > 0 && sp_better(&h, &aOut[at - 1]))
            at--;
        if (at >= k)
            continue;
        size_t last = n < k ? n : k - 1;
        memmove(aOut + at + 1, aOut + at, (last - at) * sizeof *aOut);
        aOut[at] = h;
        if (n < k)
            n++;
    }
    return n;
}

static void sp_free_queries(sp_queries *qs)
{
    genie_queries_free(qs->q);
}

TEST(search_parts_ranges_match_naive)
{
    uint64_t s = 0x5eed5a11;
    test_objects objs;
    sp_objects(&s, 260, 90, &objs);
    genie_build_options opt = {.part_objects = 29}; /* 9 parts, the last of 28 objects */
    genie_index *idx = test_build_with(&objs, &opt, test_path("p.genie"));
    uint32_t nPart = genie_index_parts(idx);
    CHECK_EQ(nPart, 9);
    sp_queries qs;
    sp_make_queries(&s, 40, 90, &qs);
    genie_search_options so = {.backend = test_backend(), .k = 7, .threads = 2};
    genie_hit aWant[64];
    for (uint32_t a = 0; a < nPart; a++) {
        for (uint32_t n = 1; a + n <= nPart; n++) {
            genie_part_info first, last;
            CHECK_OK(genie_index_part_info(idx, a, &first));
            CHECK_OK(genie_index_part_info(idx, a + n - 1, &last));
            genie_results *r;
            genie_search_stats st;
            CHECK_OK(genie_search_parts(idx, a, n, qs.q, &so, &r, &st));
            CHECK_EQ(st.n_parts, n);
            CHECK_EQ(genie_results_queries(r), qs.n);
            for (size_t qi = 0; qi < qs.n; qi++) {
                size_t nGot, nWant = sp_naive(&objs, first.first_object, last.first_object + last.n_objects, &qs,
                                              qi, so.k, aWant);
                const genie_hit *aGot = genie_results_get(r, qi, &nGot);
                CHECK_EQ(nGot, nWant);
                for (size_t i = 0; i < nGot; i++) {
                    CHECK_EQ(aGot[i].object, aWant[i].object);
                    CHECK_EQ(aGot[i].count, aWant[i].count);
                }
            }
            genie_results_free(r);
        }
    }
    sp_free_queries(&qs);
    genie_index_close(idx);
    test_objects_free(&objs);
}

/* Merge the answers of query @p qi of several ranges, keeping k. */
static size_t sp_merge(genie_results *const *aR, size_t nR, size_t qi, uint32_t k, genie_hit *aOut)
{
    size_t n = 0;
    for (size_t r = 0; r < nR; r++) {
        size_t m;
        const genie_hit *a = genie_results_get(aR[r], qi, &m);
        for (size_t i = 0; i < m; i++) {
            size_t at = n < k ? n : k;
            while (at > 0 && sp_better(&a[i], &aOut[at - 1]))
                at--;
            if (at >= k)
                continue;
            size_t last = n < k ? n : k - 1;
            memmove(aOut + at + 1, aOut + at, (last - at) * sizeof *aOut);
            aOut[at] = a[i];
            if (n < k)
                n++;
        }
    }
    return n;
}

TEST(search_parts_disjoint_ranges_merge_to_whole)
{
    uint64_t s = 0xd15c0;
    test_objects objs;
    sp_objects(&s, 300, 40, &objs); /* a small universe: many ties across ranges */
    genie_build_options opt = {.part_objects = 23};
    genie_index *idx = test_build_with(&objs, &opt, test_path("p.genie"));
    uint32_t nPart = genie_index_parts(idx);
    sp_queries qs;
    sp_make_queries(&s, 48, 40, &qs);
    genie_search_options so = {.backend = test_backend(), .k = 11, .threads = 2};
    genie_results *pWhole;
    CHECK_OK(genie_search(idx, qs.q, &so, &pWhole));
    /* Cuts of unequal size: {1}, {2..5}, {6..last}, and the first part alone */
    uint32_t aCut[] = {0, 1, 5, nPart};
    genie_results *aR[3];
    for (int i = 0; i < 3; i++)
        CHECK_OK(genie_search_parts(idx, aCut[i], aCut[i + 1] - aCut[i], qs.q, &so, &aR[i], NULL));
    genie_hit aMerged[64];
    for (size_t qi = 0; qi < qs.n; qi++) {
        size_t nWhole, nMerged = sp_merge(aR, 3, qi, so.k, aMerged);
        const genie_hit *aWhole = genie_results_get(pWhole, qi, &nWhole);
        CHECK_EQ(nMerged, nWhole);
        for (size_t i = 0; i < nWhole; i++) {
            CHECK_EQ(aMerged[i].object, aWhole[i].object);
            CHECK_EQ(aMerged[i].count, aWhole[i].count);
        }
    }
    for (int i = 0; i < 3; i++)
        genie_results_free(aR[i]);
    genie_results_free(pWhole);
    sp_free_queries(&qs);
    genie_index_close(idx);
    test_objects_free(&objs);
}

TEST(search_parts_errors_and_queries_get)
{
    uint64_t s = 0xe11;
    test_objects objs;
    sp_objects(&s, 50, 30, &objs);
    genie_index *one = test_build(&objs, 0, test_path("one.genie"));
    genie_build_options opt = {.part_objects = 20};
    genie_index *three = test_build_with(&objs, &opt, test_path("three.genie"));
    CHECK_EQ(genie_index_parts(three), 3);
    sp_queries qs;
    sp_make_queries(&s, 20, 30, &qs);
    genie_search_options so = {.backend = test_backend(), .k = 5, .threads = 1};
    genie_results *r = (genie_results *)&so; /* must be reset to NULL on failure */
    CHECK_RC(genie_search_parts(three, 0, 0, qs.q, &so, &r, NULL), GENIE_EINVAL);
    CHECK(r == NULL);
    CHECK(strstr(genie_last_error(), "3 parts") != NULL);
    CHECK_RC(genie_search_parts(three, 2, 2, qs.q, &so, &r, NULL), GENIE_EINVAL);
    CHECK_RC(genie_search_parts(three, 3, 1, qs.q, &so, &r, NULL), GENIE_EINVAL);
    CHECK_RC(genie_search_parts(three, UINT32_MAX, 2, qs.q, &so, &r, NULL), GENIE_EINVAL);
    CHECK_RC(genie_search_parts(one, 1, 1, qs.q, &so, &r, NULL), GENIE_EINVAL);
    /* The one range of a one-part index is the whole search. */
    genie_results *pWhole, *pRange;
    CHECK_OK(genie_search(one, qs.q, &so, &pWhole));
    CHECK_OK(genie_search_parts(one, 0, 1, qs.q, &so, &pRange, NULL));
    test_same_results(pWhole, pRange, "one-part range");
    genie_results_free(pWhole);
    genie_results_free(pRange);
    /* Queries read back as added. */
    for (size_t qi = 0; qi < qs.n; qi++) {
        const genie_item *aItem;
        size_t nItem;
        uint32_t min;
        CHECK_OK(genie_queries_get(qs.q, qi, &aItem, &nItem, &min));
        CHECK_EQ(nItem, qs.aN[qi]);
        CHECK_EQ(min, qs.aMin[qi]);
        for (size_t i = 0; i < nItem; i++) {
            CHECK_EQ(aItem[i].lo, qs.aItem[qi][i].lo);
            CHECK_EQ(aItem[i].hi, qs.aItem[qi][i].hi);
            CHECK_EQ(aItem[i].weight, qs.aItem[qi][i].weight);
        }
    }
    const genie_item *aItem;
    size_t nItem;
    uint32_t min;
    CHECK_RC(genie_queries_get(qs.q, qs.n, &aItem, &nItem, &min), GENIE_EINVAL);
    sp_free_queries(&qs);
    genie_index_close(one);
    genie_index_close(three);
    test_objects_free(&objs);
}
