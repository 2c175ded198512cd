/*
 * The exact similarity engine (engine/sim.h) on collections made here
 * (element lists by size class, built directly): the CPU reference against
 * a brute force over the objects' element sets, and the GPU's block
 * algorithm (engine/sim_block.h), run on the host one thread after
 * another, against the CPU: every query, every measure, top-k and
 * thresholds, several block widths, candidate chunks past one merge, a
 * pool too small for the threshold answers and a limit on a query's
 * elements below some queries' (those queries must come back undone, the
 * others complete).
 */
#include <math.h>

#include "engine/sim_block.h"
#include "test.h"

typedef struct coll {
    uint32_t nObject, nElem, nClass;
    uint32_t aClassLo[8];
    uint32_t *aSize;
    uint32_t **aaElem; /* each object's distinct elements, ascending */
    /* the element lists, element-major then class */
    uint32_t *aElemList; /* nElem + 1 */
    uint64_t *aElemMask;
    uint32_t *aElemPostings;
    uint64_t *aListOffset;
    uint32_t *aPosting;
    uint64_t nList;
} coll;

static uint32_t class_of(const coll *c, uint32_t s)
{
    uint32_t b = 0;
    while (b + 1 < c->nClass && c->aClassLo[b + 1] <= s)
        b++;
    return b;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sets of 1..maxSize skewed elements; every 40th a copy of an earlier one. */
static void coll_make(coll *c, uint32_t nObject, uint32_t nElem, uint32_t maxSize, uint64_t seed)
{
    static const uint32_t aLo[8] = {1, 2, 3, 5, 8, 13, 21, 34};
    memset(c, 0, sizeof *c);
    c->nObject = nObject;
    c->nElem = nElem;
    c->nClass = 8;
    memcpy(c->aClassLo, aLo, sizeof aLo);
    c->aSize = malloc(nObject * sizeof *c->aSize);
    c->aaElem = malloc(nObject * sizeof *c->aaElem);
    uint64_t rng = seed;
    for (uint32_t o = 0; o < nObject; o++) {
        uint32_t *a = malloc((maxSize + 1) * sizeof *a), n = 0;
        if (o % 40 == 39) {
            uint32_t src = (uint32_t)(test_rand(&rng) % o);
            n = c->aSize[src];
            memcpy(a, c->aaElem[src], n * sizeof *a);
        } else {
            uint32_t want = 1 + (uint32_t)(test_rand(&rng) % maxSize);
            for (uint32_t i = 0; i < want; i++) {
                double u = (double)(test_rand(&rng) % 1000000) / 1e6;
                a[n++] = (uint32_t)(u * u * u * nElem);
            }
            qsort(a, n, sizeof *a, cmp_u32);
            uint32_t d = 0;
            for (uint32_t i = 0; i < n; i++)
                if (!d || a[d - 1] != a[i])
                    a[d++] = a[i];
            n = d;
        }
        c->aaElem[o] = a;
        c->aSize[o] = n;
    }
    /* Lists: (element, class) in keyword order, objects ascending. */
    uint64_t *aCount = calloc((size_t)nElem * c->nClass, sizeof *aCount), nPost = 0;
    for (uint32_t o = 0; o < nObject; o++)
        for (uint32_t i = 0; i < c->aSize[o]; i++, nPost++)
            aCount[(size_t)c->aaElem[o][i] * c->nClass + class_of(c, c->aSize[o])]++;
    c->aElemList = malloc((nElem + 1) * sizeof *c->aElemList);
    c->aElemMask = calloc(nElem, sizeof *c->aElemMask);
    c->aElemPostings = calloc(nElem, sizeof *c->aElemPostings);
    c->aListOffset = malloc(((size_t)nElem * c->nClass + 1) * sizeof *c->aListOffset);
    c->aPosting = malloc((nPost ? nPost : 1) * sizeof *c->aPosting);
    uint64_t *aAt = calloc((size_t)nElem * c->nClass, sizeof *aAt), nList = 0, off = 0;
    for (uint32_t e = 0; e < nElem; e++) {
        c->aElemList[e] = (uint32_t)nList;
        for (uint32_t b = 0; b < c->nClass; b++) {
            size_t kw = (size_t)e * c->nClass + b;
            if (!aCount[kw])
                continue;
            c->aElemMask[e] |= (uint64_t)1 << b;
            c->aElemPostings[e] += (uint32_t)aCount[kw];
            c->aListOffset[nList++] = off;
            aAt[kw] = off;
            off += aCount[kw];
        }
    }
    c->aElemList[nElem] = (uint32_t)nList;
    c->aListOffset[nList] = off;
    c->nList = nList;
    for (uint32_t o = 0; o < nObject; o++)
        for (uint32_t i = 0; i < c->aSize[o]; i++)
            c->aPosting[aAt[(size_t)c->aaElem[o][i] * c->nClass + class_of(c, c->aSize[o])]++] = o;
    free(aCount);
    free(aAt);
}

static void coll_free(coll *c)
{
    for (uint32_t o = 0; o < c->nObject; o++)
        free(c->aaElem[o]);
    free(c->aaElem);
    free(c->aSize);
    free(c->aElemList);
    free(c->aElemMask);
    free(c->aElemPostings);
    free(c->aListOffset);
    free(c->aPosting);
}

/* Queries: element ids (distinct, known) and sizes with unknown elements on top. */
typedef struct qset {
    uint32_t **aaElem, *anElem, *aSize, n;
} qset;

static void queries_make(const coll *c, qset *qs, uint32_t n, uint64_t seed)
{
    uint64_t rng = seed;
    qs->n = n;
    qs->aaElem = malloc(n * sizeof *qs->aaElem);
    qs->anElem = malloc(n * sizeof *qs->anElem);
    qs->aSize = malloc(n * sizeof *qs->aSize);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t o = (uint32_t)(test_rand(&rng) % c->nObject), nSrc = c->aSize[o];
        const uint32_t *src = c->aaElem[o];
        uint32_t *a = malloc((nSrc + 40) * sizeof *a), m = 0;
        if (i == 5) { /* every element: classes of more than 255 lists (the CPU's 32-bit counters) */
            a = realloc(a, c->nElem * sizeof *a);
            for (m = 0; m < c->nElem; m++)
                a[m] = m;
        } else if (i % 3 == 0) { /* a random set */
            uint32_t want = 1 + (uint32_t)(test_rand(&rng) % 40);
            for (uint32_t j = 0; j < want; j++) {
                double u = (double)(test_rand(&rng) % 1000000) / 1e6;
                a[m++] = (uint32_t)(u * u * c->nElem);
            }
            qsort(a, m, sizeof *a, cmp_u32);
            uint32_t d = 0;
            for (uint32_t j = 0; j < m; j++)
                if (!d || a[d - 1] != a[j])
                    a[d++] = a[j];
            m = d;
        } else { /* an indexed set, thinned */
            for (uint32_t j = 0; j < nSrc; j++)
                if (test_rand(&rng) % 5)
                    a[m++] = src[j];
        }
        qs->aaElem[i] = a;
        qs->anElem[i] = m;
        qs->aSize[i] = m + (uint32_t)(i % 4 == 1 ? 1 + test_rand(&rng) % 5 : 0) + (m == 0);
    }
}

static void queries_free(qset *qs)
{
    for (uint32_t i = 0; i < qs->n; i++)
        free(qs->aaElem[i]);
    free(qs->aaElem);
    free(qs->anElem);
    free(qs->aSize);
}

static uint32_t shared(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
    uint32_t i = 0, j = 0, c = 0;
    while (i < na && j < nb) {
        c += a[i] == b[j];
        uint32_t x = a[i], y = b[j];
        i += x <= y;
        j += y <= x;
    }
    return c;
}

typedef struct bf {
    sim_frac f;
    uint32_t o, c;
} bf;

static int cmp_bf(const void *pa, const void *pb)
{
    const bf *a = pa, *b = pb;
    return sim_before(a->f, a->o, b->f, b->o) ? -1 : sim_before(b->f, b->o, a->f, a->o);
}

/* The brute force: every object's count from the element sets. */
static void check_brute(const coll *c, const qset *qs, uint32_t measure, uint32_t k, double minValue,
                        const sim_results *r)
{
    bf *a = malloc(c->nObject * sizeof *a);
    for (uint32_t i = 0; i < qs->n; i++) {
        uint32_t n = 0;
        for (uint32_t o = 0; o < c->nObject; o++) {
            uint32_t sh = shared(qs->aaElem[i], qs->anElem[i], c->aaElem[o], c->aSize[o]);
            if (!sh)
                continue;
            sim_frac f = sim_score(measure, sh, qs->aSize[i], c->aSize[o]);
            if (minValue > 0 && sim_value(measure, f) < minValue)
                continue;
            a[n++] = (bf){f, o, sh};
        }
        qsort(a, n, sizeof *a, cmp_bf);
        if (k && n > k)
            n = k;
        uint64_t b = i ? r->aEnd[i - 1] : 0;
        if (r->aEnd[i] - b != n)
            test_fail_at(__FILE__, __LINE__, "measure %u k %u min %g query %u: %llu answers, brute force %u", measure,
                         k, minValue, i, (unsigned long long)(r->aEnd[i] - b), n);
        for (uint32_t j = 0; j < n; j++)
            if (r->aHit[b + j].object != a[j].o || r->aHit[b + j].count != a[j].c)
                test_fail_at(__FILE__, __LINE__,
                             "measure %u k %u min %g query %u rank %u: %u (%u), brute force %u (%u)",
                             measure, k, minValue, i, j, r->aHit[b + j].object, r->aHit[b + j].count, a[j].o, a[j].c);
    }
    free(a);
}

/* The block algorithm on the host: @p nT threads a block, a pool of @p nPool answers, @p nElemMax elements a query. */
static void emulate(const sim_request *req, uint32_t nT, uint64_t nPool, uint32_t nElemMax, sim_results *out,
                    uint8_t *aUndone)
{
    const sim_data *d = req->pData;
    sim_block_args a;
    memset(&a, 0, sizeof a);
    uint32_t next = 0;
    uint64_t used = 0, work[3] = {0, 0, 0};
    a.aQuery = req->aQuery;
    a.aElem = req->aElem;
    a.aElemList = d->aElemList;
    a.aElemMask = d->aElemMask;
    a.aListOffset = d->aListOffset;
    a.aPosting = d->aPosting;
    a.aSize = d->aSize;
    a.aAllow = (const uint32_t *)d->aAllow;
    a.nObject = d->nObject;
    a.nQuery = req->nQuery;
    a.measure = req->measure;
    a.k = req->k;
    a.nElemMax = nElemMax;
    a.nClass = d->nClass;
    memcpy(a.aClassLo, d->aClassLo, d->nClass * sizeof *a.aClassLo);
    a.minValue = req->minValue;
    a.aCount = calloc(2 * d->nObject, sizeof *a.aCount);
    a.aTouched = malloc(2 * d->nObject * sizeof *a.aTouched);
    a.aHit = malloc(((size_t)req->nQuery * (req->k ? req->k : 1) + 1) * sizeof *a.aHit);
    a.aN = malloc((req->nQuery + 1) * sizeof *a.aN);
    a.aPool = malloc((nPool + 1) * sizeof *a.aPool);
    a.nPool = nPool;
    a.pPoolUsed = &used;
    a.pNext = &next;
    a.aWork = work;
    sim_block_shared *sh = malloc(sizeof *sh);
    for (uint32_t slot = 0; slot < 2; slot++) /* the first slot takes every query, the second finds none left */
        sim_block_run(&a, sh, slot, nT);
    for (uint64_t o = 0; o < 2 * d->nObject; o++)
        CHECK_EQ(a.aCount[o], 0); /* counters back to zero */
    CHECK_OK(sim_gather_results(req, a.aHit, a.aN, a.aPool, used < nPool ? used : nPool, out, aUndone));
    free(sh);
    free(a.aCount);
    free(a.aTouched);
    free(a.aHit);
    free(a.aN);
    free(a.aPool);
}

static void check_same(const sim_results *x, const sim_results *y, const uint8_t *aUndone, uint32_t nQ,
                       const char *zWhat)
{
    for (uint32_t i = 0; i < nQ; i++) {
        uint64_t bx = i ? x->aEnd[i - 1] : 0, by = i ? y->aEnd[i - 1] : 0;
        if (aUndone && aUndone[i]) {
            CHECK_EQ(y->aEnd[i] - by, 0);
            continue;
        }
        if (x->aEnd[i] - bx != y->aEnd[i] - by)
            test_fail_at(__FILE__, __LINE__, "%s query %u: %llu answers against %llu", zWhat, i,
                         (unsigned long long)(y->aEnd[i] - by), (unsigned long long)(x->aEnd[i] - bx));
        for (uint64_t j = 0; j < x->aEnd[i] - bx; j++)
            if (x->aHit[bx + j].object != y->aHit[by + j].object || x->aHit[bx + j].count != y->aHit[by + j].count)
                test_fail_at(__FILE__, __LINE__, "%s query %u rank %llu: %u against %u", zWhat, i,
                             (unsigned long long)j, y->aHit[by + j].object, x->aHit[bx + j].object);
    }
}

static void run_cases(const coll *c, const qset *qs, int emulateToo)
{
    sim_data data = {c->nObject, c->aSize, c->nList, c->aListOffset, c->aPosting, NULL,
                     c->nClass, c->aClassLo, c->nElem, c->aElemList, c->aElemMask};
    /* The queries: each one's elements fewest postings first, as the front-end hands them. */
    sim_query *aQuery = malloc(qs->n * sizeof *aQuery);
    uint64_t nElem = 0;
    for (uint32_t i = 0; i < qs->n; i++)
        nElem += qs->anElem[i];
    uint32_t *aElem = malloc((nElem + 1) * sizeof *aElem);
    uint64_t *aKey = malloc((c->nElem + 1) * sizeof *aKey);
    uint32_t nLargest = 0;
    nElem = 0;
    for (uint32_t i = 0; i < qs->n; i++) {
        memcpy(aElem + nElem, qs->aaElem[i], qs->anElem[i] * sizeof *aElem);
        CHECK_EQ(sim_plan_elements(aElem + nElem, qs->anElem[i], c->aElemPostings, aKey), qs->anElem[i]);
        for (uint32_t j = 1; j < qs->anElem[i]; j++)
            CHECK(c->aElemPostings[aElem[nElem + j - 1]] <= c->aElemPostings[aElem[nElem + j]]);
        aQuery[i] = (sim_query){qs->aSize[i], qs->anElem[i], nElem};
        nElem += qs->anElem[i];
        if (qs->anElem[i] > nLargest)
            nLargest = qs->anElem[i];
    }
    static const uint32_t aK[] = {1, 7, 100, 0, 0, 5, SIM_GPU_MAX_K};
    static const double aMin[] = {0, 0, 0, 0.3, 0.8, 0.25, 0};
    for (uint32_t m = 0; m < SIM_N_MEASURES; m++) {
        for (size_t t = 0; t < sizeof aK / sizeof *aK; t++) {
            sim_request req = {&data, m, aK[t], aMin[t], aQuery, qs->n, aElem, 2};
            sim_results cpu;
            CHECK_OK(sim_cpu_search(&req, &cpu));
            check_brute(c, qs, m, aK[t], aMin[t], &cpu);
            if (emulateToo) {
                uint8_t *aUndone = malloc(qs->n);
                static const uint32_t aWidth[] = {1, 37, 64, 128};
                for (size_t w = 0; w < sizeof aWidth / sizeof *aWidth; w++) {
                    sim_results gpu;
                    emulate(&req, aWidth[w], 1u << 22, SIM_BLOCK_ELEMS, &gpu, aUndone);
                    for (uint32_t i = 0; i < qs->n; i++)
                        CHECK_EQ(aUndone[i], qs->anElem[i] > SIM_BLOCK_ELEMS);
                    check_same(&cpu, &gpu, aUndone, qs->n, "block");
                    sim_results_free(&gpu);
                }
                if (aK[t] == 0) { /* a pool of 200 answers: those that did not fit come back undone */
                    sim_results gpu;
                    emulate(&req, 32, 200, SIM_BLOCK_ELEMS, &gpu, aUndone);
                    uint32_t nUndone = 0;
                    for (uint32_t i = 0; i < qs->n; i++)
                        nUndone += aUndone[i];
                    CHECK((nUndone > 0) == (cpu.aEnd[qs->n - 1] > 200));
                    check_same(&cpu, &gpu, aUndone, qs->n, "small pool");
                    sim_results_free(&gpu);
                }
                { /* queries of more elements than the block takes come back undone, the others answered */
                    sim_results gpu;
                    uint32_t nMax = nLargest / 2;
                    emulate(&req, 64, 1u << 22, nMax, &gpu, aUndone);
                    for (uint32_t i = 0; i < qs->n; i++)
                        CHECK_EQ(aUndone[i], qs->anElem[i] > nMax);
                    check_same(&cpu, &gpu, aUndone, qs->n, "element limit");
                    sim_results_free(&gpu);
                }
                free(aUndone);
            }
            sim_results_free(&cpu);
        }
    }
    free(aQuery);
    free(aElem);
    free(aKey);
}

TEST(sim_cpu_and_block_against_brute_force)
{
    coll c;
    qset qs;
    coll_make(&c, 3000, 400, 60, 1);
    queries_make(&c, &qs, 40, 2);
    run_cases(&c, &qs, 1);
    queries_free(&qs);
    coll_free(&c);
}

/* Few elements, long lists: classes with thousands of touched objects, several candidate chunks per class. */
TEST(sim_block_long_lists)
{
    coll c;
    qset qs;
    coll_make(&c, 12000, 60, 40, 3);
    queries_make(&c, &qs, 12, 4);
    run_cases(&c, &qs, 1);
    queries_free(&qs);
    coll_free(&c);
}

/* A query's elements for sim_query: repeats dropped, fewest postings first, ties by smaller id. */
TEST(sim_plan_elements_orders_and_drops_repeats)
{
    static const uint32_t aPostings[] = {5, 1, 3, 1, 7};
    uint32_t aElem[] = {0, 3, 1, 0, 2, 1, 3, 3};
    uint64_t aKey[8];
    CHECK_EQ(sim_plan_elements(aElem, 8, aPostings, aKey), 4);
    static const uint32_t aWant[] = {1, 3, 2, 0};
    for (uint32_t i = 0; i < 4; i++)
        CHECK_EQ(aElem[i], aWant[i]);
    CHECK_EQ(sim_plan_elements(aElem, 0, aPostings, aKey), 0);
}
