/*
 * Randomised comparison of every backend under test with a naive match
 * count computed straight from the object sets: a separate, obviously
 * correct code path (no index, no heap: count every object, sort all).
 */
#include "test.h"

typedef struct shape {
    size_t maxObjects, maxObjectLen, maxQueries, maxItems;
    uint32_t universe;  /* keywords are drawn from 0..universe-1 ... */
    uint32_t spread;    /* ... times this factor, to make them sparse */
    int skewed;         /* draw keywords from a Zipf-like distribution */
} shape;

static uint32_t draw_keyword(uint64_t *s, const shape *sh)
{
    uint32_t v;
    if (sh->skewed) {
        /* Squaring a uniform value favours small keywords strongly. */
        double u = (double)(test_rand(s) >> 11) / 9007199254740992.0;
        v = (uint32_t)(u * u * u * sh->universe);
    } else {
        v = (uint32_t)(test_rand(s) % sh->universe);
    }
    return v * sh->spread;
}

/* Naive MC of one object for one query. */
static uint32_t naive_mc(const uint32_t *aKw, size_t n, const genie_item *items, size_t nItems)
{
    uint64_t mc = 0;
    for (size_t i = 0; i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= aKw[j] == aKw[i];
        if (seen)
            continue;
        for (size_t t = 0; t < nItems; t++)
            if (aKw[i] >= items[t].lo && aKw[i] <= items[t].hi)
                mc += items[t].weight;
    }
    return (uint32_t)mc;
}

static int cmp_hit(const void *a, const void *b)
{
    const genie_hit *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->object > y->object) - (x->object < y->object);
}

static void check_query(const test_objects *objs, const genie_item *items, size_t nItems, uint32_t minCount,
                        uint32_t k, const genie_hit *aGot, size_t nGot, const char *zBackend, int caseNo)
{
    genie_hit *aAll = malloc((objs->n + 1) * sizeof *aAll);
    size_t nAll = 0;
    uint32_t threshold = minCount ? minCount : 1;
    for (size_t o = 0; o < objs->n; o++) {
        uint32_t mc = naive_mc(objs->aKw[o], objs->aN[o], items, nItems);
        if (mc >= threshold)
            aAll[nAll++] = (genie_hit){(uint32_t)o, mc};
    }
    qsort(aAll, nAll, sizeof *aAll, cmp_hit);
    size_t nWant = nAll < k ? nAll : k;
    if (nGot != nWant)
        test_fail_at(__FILE__, __LINE__, "case %d backend %s: %zu hits, oracle %zu", caseNo, zBackend, nGot, nWant);
    for (size_t i = 0; i < nWant; i++)
        if (aGot[i].object != aAll[i].object || aGot[i].count != aAll[i].count)
            test_fail_at(__FILE__, __LINE__, "case %d backend %s rank %zu: got %u:%u, oracle %u:%u", caseNo, zBackend,
                         i + 1, aGot[i].object, aGot[i].count, aAll[i].object, aAll[i].count);
    free(aAll);
}

static void random_objects(uint64_t *s, const shape *sh, test_objects *o)
{
    o->n = 1 + test_rand(s) % sh->maxObjects;
    o->aKw = malloc(o->n * sizeof *o->aKw);
    o->aN = malloc(o->n * sizeof *o->aN);
    for (size_t i = 0; i < o->n; i++) {
        o->aN[i] = test_rand(s) % (sh->maxObjectLen + 1);
        o->aKw[i] = malloc((o->aN[i] + 1) * sizeof(uint32_t));
        for (size_t j = 0; j < o->aN[i]; j++)
            o->aKw[i][j] = draw_keyword(s, sh);
    }
}

static void random_item(uint64_t *s, const shape *sh, genie_item *it)
{
    uint32_t a = draw_keyword(s, sh);
    uint64_t r = test_rand(s);
    uint32_t width = (r & 3) == 0 ? 0 : (uint32_t)(test_rand(s) % (sh->universe * sh->spread / 4 + 1));
    it->lo = a;
    it->hi = (uint64_t)a + width > UINT32_MAX ? UINT32_MAX : a + width;
    if ((r & 0x30) == 0x30) { /* sometimes a range touching the ends */
        it->lo = 0;
        if (r & 0x40)
            it->hi = UINT32_MAX;
    }
    it->weight = (r & 0x100) ? 1 : 1 + (uint32_t)(test_rand(s) % 255);
}

static void run_cases(uint64_t seed, int nCases, const shape *sh)
{
    static const uint32_t aK[] = {1, 2, 3, 5, 10, 50, 1000};
    genie_backend aB[] = {GENIE_BACKEND_CPU, GENIE_BACKEND_CPU_IDX, test_backend()};
    uint64_t s = seed;
    for (int c = 0; c < nCases; c++) {
        test_objects objs;
        random_objects(&s, sh, &objs);
        uint32_t L = 1 + (uint32_t)(test_rand(&s) % 16);
        genie_index *idx = test_build(&objs, L, test_path("oracle.genie"));
        for (int batch = 0; batch < 3; batch++) {
            genie_queries *q;
            CHECK_OK(genie_queries_new(&q));
            size_t nq = 1 + test_rand(&s) % sh->maxQueries;
            genie_item *aItems = malloc(nq * 64 * sizeof *aItems);
            size_t *aNi = malloc(nq * sizeof *aNi);
            uint32_t *aMin = malloc(nq * sizeof *aMin);
            for (size_t i = 0; i < nq; i++) {
                genie_item *items = aItems + i * 64;
                aNi[i] = test_rand(&s) % (sh->maxItems + 1);
                for (size_t t = 0; t < aNi[i]; t++)
                    random_item(&s, sh, &items[t]);
                aMin[i] = (test_rand(&s) % 4 == 0) ? (uint32_t)(test_rand(&s) % 4) : 0;
                CHECK_OK(genie_queries_add(q, items, aNi[i], aMin[i]));
            }
            uint32_t k = aK[test_rand(&s) % (sizeof aK / sizeof *aK)];
            for (size_t b = 0; b < sizeof aB / sizeof *aB; b++) {
                genie_results *r = test_search(idx, q, aB[b], k);
                for (size_t i = 0; i < nq; i++) {
                    size_t nGot;
                    const genie_hit *aGot = genie_results_get(r, i, &nGot);
                    check_query(&objs, aItems + i * 64, aNi[i], aMin[i], k, aGot, nGot, genie_backend_name(aB[b]), c);
                }
                genie_results_free(r);
            }
            free(aItems);
            free(aNi);
            free(aMin);
            genie_queries_free(q);
        }
        genie_index_close(idx);
        test_objects_free(&objs);
    }
}

TEST(oracle_random_small)
{
    shape sh = {300, 20, 40, 6, 200, 1, 0};
    run_cases(0x9e3779b97f4a7c15ull, 500, &sh);
    shape sparse = {200, 12, 30, 5, 100, 40000000u, 0};
    run_cases(0x1234567ull, 300, &sparse);
}

TEST(oracle_random_skewed)
{
    shape sh = {3000, 40, 60, 8, 500, 1, 1};
    run_cases(0xabcdefull, 120, &sh);
    shape ties = {2000, 3, 50, 3, 8, 1, 0}; /* tiny universe: many exact ties */
    run_cases(0x777ull, 120, &ties);
}

TEST(oracle_threads_deterministic)
{
    uint64_t s = 42;
    shape sh = {5000, 30, 1, 6, 300, 1, 1};
    test_objects objs;
    random_objects(&s, &sh, &objs);
    genie_index *idx = test_build(&objs, 64, test_path("threads.genie"));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (int i = 0; i < 2000; i++) {
        genie_item items[8];
        size_t ni = 1 + test_rand(&s) % 8;
        for (size_t t = 0; t < ni; t++)
            random_item(&s, &sh, &items[t]);
        CHECK_OK(genie_queries_add(q, items, ni, 0));
    }
    genie_results *aR[3];
    unsigned aThreads[3] = {1, 2, 7};
    for (int t = 0; t < 3; t++) {
        genie_search_options opt;
        memset(&opt, 0, sizeof opt);
        opt.backend = GENIE_BACKEND_CPU;
        opt.k = 17;
        opt.threads = aThreads[t];
        CHECK_OK(genie_search(idx, q, &opt, &aR[t]));
    }
    for (size_t i = 0; i < genie_queries_count(q); i++) {
        size_t n0, n;
        const genie_hit *h0 = genie_results_get(aR[0], i, &n0);
        for (int t = 1; t < 3; t++) {
            const genie_hit *h = genie_results_get(aR[t], i, &n);
            CHECK_EQ(n, n0);
            CHECK(memcmp(h, h0, n * sizeof *h) == 0);
        }
    }
    for (int t = 0; t < 3; t++)
        genie_results_free(aR[t]);
    genie_queries_free(q);
    genie_index_close(idx);
    test_objects_free(&objs);
}
