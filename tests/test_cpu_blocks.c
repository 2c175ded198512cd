/*
 * The cpu backend's blocked counting (src/engine/cpu/cpu_block.c) against
 * an independent brute force on indexes of many blocks: every object's
 * count from a per-query weight table over the keyword universe (no
 * index, no lists), all hits sorted by count descending then id.
 *
 * The shapes reach each path of the engine: 8-bit counters (weight 1,
 * few items), 16-bit counters (heavy weights: bounds above 255), the
 * 32-bit touched-list path (bounds above 65,535, and sparse queries whose
 * postings are too few for a pass over every block); skewed keywords make
 * lists of very different lengths and a tiny universe makes long runs of
 * ties across block boundaries; k runs from 1 to every object.
 */
#include "test.h"

typedef struct blocks_shape {
    size_t nObjects;   /* objects: several 8,192- and 16,384-object blocks */
    size_t maxLen;     /* keywords per object: 0..maxLen */
    uint32_t universe; /* keywords 0..universe-1 */
    int skewed;        /* favour small keywords (long lists) */
} blocks_shape;

static uint32_t blocks_keyword(uint64_t *s, const blocks_shape *sh)
{
    if (!sh->skewed)
        return (uint32_t)(test_rand(s) % sh->universe);
    double u = (double)(test_rand(s) >> 11) / 9007199254740992.0;
    return (uint32_t)(u * u * u * sh->universe);
}

static int blocks_cmp_hit(const void *a, const void *b)
{
    const genie_hit *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->object > y->object) - (x->object < y->object);
}

/* Brute force: each distinct keyword of an object adds the weights of the items holding it. */
static size_t blocks_brute(const test_objects *objs, const uint64_t *aWeight, uint32_t minCount, genie_hit *aAll)
{
    size_t nAll = 0;
    uint32_t threshold = minCount ? minCount : 1;
    for (size_t o = 0; o < objs->n; o++) {
        uint64_t mc = 0;
        for (size_t i = 0; i < objs->aN[o]; i++) {
            int seen = 0;
            for (size_t j = 0; j < i; j++)
                seen |= objs->aKw[o][j] == objs->aKw[o][i];
            if (!seen)
                mc += aWeight[objs->aKw[o][i]];
        }
        if (mc >= threshold)
            aAll[nAll++] = (genie_hit){(uint32_t)o, (uint32_t)mc};
    }
    qsort(aAll, nAll, sizeof *aAll, blocks_cmp_hit);
    return nAll;
}

/* Kinds of query, one per path of the engine; Q_HUGE's bound is over 400 * 200 > 65,535. */
#define BLOCKS_MAX_ITEMS 400
enum { Q_LIGHT, Q_HEAVY, Q_HUGE, Q_SPARSE, Q_KINDS };

static size_t blocks_query(uint64_t *s, const blocks_shape *sh, int kind, genie_item *aItem)
{
    size_t n = kind == Q_HUGE ? BLOCKS_MAX_ITEMS : kind == Q_SPARSE ? 1 : 1 + test_rand(s) % 8;
    for (size_t t = 0; t < n; t++) {
        uint32_t a = kind == Q_SPARSE ? sh->universe - 1 - (uint32_t)(test_rand(s) % 3) : blocks_keyword(s, sh);
        uint32_t width = test_rand(s) % 4 == 0 ? (uint32_t)(test_rand(s) % 4) : 0;
        aItem[t].lo = a;
        aItem[t].hi = a + width;
        if (kind == Q_LIGHT || kind == Q_SPARSE)
            aItem[t].weight = 1;
        else
            aItem[t].weight = kind == Q_HUGE ? 200 + (uint32_t)(test_rand(s) % 56) : 100 + (uint32_t)(test_rand(s) % 156);
    }
    return n;
}

static void blocks_run(uint64_t seed, const blocks_shape *sh, int nQuery)
{
    static const uint32_t aK[] = {1, 10, 100, 1000, 20000};
    uint64_t s = seed;
    test_objects objs;
    objs.n = sh->nObjects;
    objs.aKw = malloc(objs.n * sizeof *objs.aKw);
    objs.aN = malloc(objs.n * sizeof *objs.aN);
    for (size_t o = 0; o < objs.n; o++) {
        objs.aN[o] = test_rand(&s) % (sh->maxLen + 1);
        objs.aKw[o] = malloc((objs.aN[o] + 1) * sizeof(uint32_t));
        for (size_t j = 0; j < objs.aN[o]; j++)
            objs.aKw[o][j] = blocks_keyword(&s, sh);
    }
    genie_index *idx = test_build(&objs, 1 + (uint32_t)(test_rand(&s) % 4096), test_path("blocks.genie"));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item *aItems = malloc((size_t)nQuery * BLOCKS_MAX_ITEMS * sizeof *aItems);
    size_t *aNi = malloc(nQuery * sizeof *aNi);
    uint32_t *aMin = malloc(nQuery * sizeof *aMin);
    for (int i = 0; i < nQuery; i++) {
        aNi[i] = blocks_query(&s, sh, i % Q_KINDS, aItems + (size_t)i * BLOCKS_MAX_ITEMS);
        aMin[i] = test_rand(&s) % 5 == 0 ? (uint32_t)(test_rand(&s) % 3) : 0;
        CHECK_OK(genie_queries_add(q, aItems + (size_t)i * BLOCKS_MAX_ITEMS, aNi[i], aMin[i]));
    }
    uint64_t *aWeight = calloc(sh->universe + 8, sizeof *aWeight);
    genie_hit *aAll = malloc(objs.n * sizeof *aAll);
    for (size_t ki = 0; ki < sizeof aK / sizeof *aK; ki++) {
        uint32_t k = aK[ki];
        genie_results *r = test_search(idx, q, GENIE_BACKEND_CPU, k);
        for (int i = 0; i < nQuery; i++) {
            const genie_item *it = aItems + (size_t)i * BLOCKS_MAX_ITEMS;
            memset(aWeight, 0, (sh->universe + 8) * sizeof *aWeight);
            for (size_t t = 0; t < aNi[i]; t++)
                for (uint64_t kw = it[t].lo; kw <= it[t].hi && kw < sh->universe + 8; kw++)
                    aWeight[kw] += it[t].weight;
            size_t nAll = blocks_brute(&objs, aWeight, aMin[i], aAll), nWant = nAll < k ? nAll : k, nGot;
            const genie_hit *aGot = genie_results_get(r, (size_t)i, &nGot);
            if (nGot != nWant)
                test_fail_at(__FILE__, __LINE__, "seed %llu query %d (kind %d) k %u: %zu hits, brute force %zu",
                             (unsigned long long)seed, i, i % Q_KINDS, k, nGot, nWant);
            for (size_t h = 0; h < nWant; h++)
                if (aGot[h].object != aAll[h].object || aGot[h].count != aAll[h].count)
                    test_fail_at(__FILE__, __LINE__,
                                 "seed %llu query %d (kind %d) k %u rank %zu: got %u:%u, brute force %u:%u",
                                 (unsigned long long)seed, i, i % Q_KINDS, k, h + 1, aGot[h].object, aGot[h].count,
                                 aAll[h].object, aAll[h].count);
        }
        genie_results_free(r);
    }
    free(aWeight);
    free(aAll);
    free(aItems);
    free(aNi);
    free(aMin);
    genie_queries_free(q);
    genie_index_close(idx);
    test_objects_free(&objs);
}

TEST(cpu_blocks_skewed_against_brute_force)
{
    blocks_shape sh = {100003, 12, 400, 1};
    blocks_run(0x5eedull, &sh, 24);
}

TEST(cpu_blocks_ties_and_large_k)
{
    blocks_shape ties = {70001, 3, 6, 0}; /* six keywords: counts 0..3 (x weight), ties everywhere */
    blocks_run(0x7157ull, &ties, 16);
    blocks_shape uniform = {49153, 8, 64, 0};
    blocks_run(0xb10cull, &uniform, 16);
}
