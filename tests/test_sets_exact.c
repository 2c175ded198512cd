/*
 * The exact set similarity search (engine/sim.h through the sets
 * front-end) against an independent brute force: its own parsing (strings
 * split and sorted here), its own intersection, its own fractions per
 * measure, compared by 128-bit cross products; every answer (id, shared,
 * union, similarity bits) and every tie must match.  On random
 * collections with skewed elements (long lists), duplicated sets (ties),
 * sizes across the size classes, and on real text (the lines of the
 * fortune files as sets of words; $GENIE_TEST_FORTUNES names another
 * folder of them); top-k for several k, thresholds with
 * and without a k; one part and several.  Runs on $GENIE_TEST_BACKEND
 * (the GPU machine runs it with cuda: the GPU's answers against the
 * oracle).
 */
#include <math.h>

#include "genie/sets.h"
#include "engine/backend.h"
#include "index/builder.h"
#include "test.h"
#include "transform/sets.h"

/* ------------------------------------------------------------ the oracle */

typedef struct oset {
    char **az; /* distinct elements, sorted by strcmp */
    uint32_t n;
} oset;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Split at space, tab, CR, VT and FF; sort; drop repeats. */
static void oset_parse(const char *z, oset *s)
{
    size_t len = strlen(z), cap = 8;
    s->az = malloc(cap * sizeof *s->az);
    s->n = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && strchr(" \t\r\v\f", z[i]))
            i++;
        size_t b = i;
        while (i < len && !strchr(" \t\r\v\f", z[i]))
            i++;
        if (i == b)
            continue;
        if (s->n == cap)
            s->az = realloc(s->az, (cap *= 2) * sizeof *s->az);
        s->az[s->n] = malloc(i - b + 1);
        memcpy(s->az[s->n], z + b, i - b);
        s->az[s->n++][i - b] = '\0';
    }
    qsort(s->az, s->n, sizeof *s->az, cmp_str);
    uint32_t d = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        if (d && strcmp(s->az[d - 1], s->az[i]) == 0)
            free(s->az[i]);
        else
            s->az[d++] = s->az[i];
    }
    s->n = d;
}

static void oset_free(oset *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        free(s->az[i]);
    free(s->az);
}

static uint32_t oset_shared(const oset *a, const oset *b)
{
    uint32_t i = 0, j = 0, c = 0;
    while (i < a->n && j < b->n) {
        int r = strcmp(a->az[i], b->az[j]);
        c += r == 0;
        i += r <= 0;
        j += r >= 0;
    }
    return c;
}

/* The measure's fraction, written from its definition (genie/sets.h). */
static void ofrac(int measure, uint64_t c, uint64_t q, uint64_t s, uint64_t *num, uint64_t *den)
{
    switch (measure) {
    case GENIE_SET_JACCARD: *num = c, *den = q + s - c; break;
    case GENIE_SET_COSINE: *num = c * c, *den = q * s; break;
    case GENIE_SET_DICE: *num = 2 * c, *den = q + s; break;
    case GENIE_SET_OVERLAP: *num = c, *den = q < s ? q : s; break;
    default: *num = c, *den = q; break;
    }
}

static double ovalue(int measure, uint64_t num, uint64_t den)
{
    double v = (double)num / (double)den;
    return measure == GENIE_SET_COSINE ? sqrt(v) : v;
}

typedef struct oans {
    uint32_t object, shared, q, s;
    uint64_t num, den;
} oans;

static int oans_cmp(const void *pa, const void *pb)
{
    const oans *a = pa, *b = pb;
    unsigned __int128 l = (unsigned __int128)a->num * b->den, r = (unsigned __int128)b->num * a->den;
    if (l != r)
        return l > r ? -1 : 1;
    return (a->object > b->object) - (a->object < b->object);
}

/* A collection and its queries, parsed by the oracle, with every shared count. */
typedef struct ocase {
    oset *aObj, *aQ;
    uint32_t nObj, nQ;
    const char **azQ;
    size_t *anQ;
    uint32_t *aShared; /* nQ x nObj */
} ocase;

static void ocase_init(ocase *c, char **azObj, uint32_t nObj, char **azQ, uint32_t nQ)
{
    c->nObj = nObj;
    c->nQ = nQ;
    c->aObj = malloc(nObj * sizeof *c->aObj);
    c->aQ = malloc(nQ * sizeof *c->aQ);
    c->azQ = malloc(nQ * sizeof *c->azQ);
    c->anQ = malloc(nQ * sizeof *c->anQ);
    c->aShared = malloc((size_t)nQ * nObj * sizeof *c->aShared);
    for (uint32_t o = 0; o < nObj; o++)
        oset_parse(azObj[o], &c->aObj[o]);
    for (uint32_t q = 0; q < nQ; q++) {
        oset_parse(azQ[q], &c->aQ[q]);
        c->azQ[q] = azQ[q];
        c->anQ[q] = strlen(azQ[q]);
        for (uint32_t o = 0; o < nObj; o++)
            c->aShared[(size_t)q * nObj + o] = oset_shared(&c->aQ[q], &c->aObj[o]);
    }
}

static void ocase_free(ocase *c)
{
    for (uint32_t o = 0; o < c->nObj; o++)
        oset_free(&c->aObj[o]);
    for (uint32_t q = 0; q < c->nQ; q++)
        oset_free(&c->aQ[q]);
    free(c->aObj);
    free(c->aQ);
    free(c->azQ);
    free(c->anQ);
    free(c->aShared);
}

/* The oracle's answers of query q: every set sharing an element (reaching minSim), best first, at most k (0: all). */
static uint32_t oracle(const ocase *c, uint32_t qi, int measure, uint32_t k, double minSim, oans *out)
{
    uint32_t n = 0, q = c->aQ[qi].n;
    for (uint32_t o = 0; o < c->nObj; o++) {
        uint32_t sh = c->aShared[(size_t)qi * c->nObj + o];
        if (sh == 0)
            continue;
        oans a = {o, sh, q, c->aObj[o].n, 0, 0};
        ofrac(measure, sh, q, a.s, &a.num, &a.den);
        if (minSim > 0 && ovalue(measure, a.num, a.den) < minSim)
            continue;
        out[n++] = a;
    }
    qsort(out, n, sizeof *out, oans_cmp);
    return k && n > k ? k : n;
}

/* Every answer of one search against the oracle. */
static void check_search(const genie_index *idx, const ocase *c, int measure, uint32_t k, double minSim)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    genie_set_options so = {.k = k, .exact = 1, .measure = (genie_set_measure)measure, .min_similarity = minSim};
    genie_set_results *r;
    CHECK_OK(genie_set_search(idx, c->azQ, c->anQ, c->nQ, &so, &opt, &r));
    genie_set_plan plan;
    genie_set_results_plan(r, &plan);
    CHECK_EQ(plan.method, GENIE_SET_EXACT_LISTS);
    oans *aWant = malloc(c->nObj * sizeof *aWant);
    for (uint32_t q = 0; q < c->nQ; q++) {
        size_t n;
        const genie_set_hit *h = genie_set_results_get(r, q, &n);
        uint32_t nWant = oracle(c, q, measure, k, minSim, aWant);
        if (n != nWant)
            test_fail_at(__FILE__, __LINE__, "%s k %u min %g query %u: %zu answers, the oracle has %u",
                         genie_set_measure_name((genie_set_measure)measure), k, minSim, q, n, nWant);
        for (uint32_t i = 0; i < nWant; i++) {
            const oans *w = &aWant[i];
            if (h[i].object != w->object || h[i].shared != w->shared || h[i].union_size != w->q + w->s - w->shared ||
                h[i].count != 0 || h[i].similarity != ovalue(measure, w->num, w->den))
                test_fail_at(__FILE__, __LINE__,
                             "%s k %u min %g query %u rank %u: got %u (shared %u, %.17g), want %u (shared %u, %.17g)",
                             genie_set_measure_name((genie_set_measure)measure), k, minSim, q, i, h[i].object,
                             h[i].shared, h[i].similarity, w->object, w->shared, ovalue(measure, w->num, w->den));
        }
    }
    free(aWant);
    genie_set_results_free(r);
}

/* Every measure; top-k for several k, thresholds with every answer and with a cap. */
static void check_all(const genie_index *idx, const ocase *c)
{
    static const uint32_t aK[] = {1, 10, 200};
    static const double aMin[] = {0.15, 0.5, 1.0};
    for (int m = GENIE_SET_JACCARD; m <= GENIE_SET_CONTAINMENT; m++) {
        for (size_t i = 0; i < sizeof aK / sizeof *aK; i++)
            check_search(idx, c, m, aK[i], 0);
        for (size_t i = 0; i < sizeof aMin / sizeof *aMin; i++) {
            check_search(idx, c, m, 0, aMin[i]);
            check_search(idx, c, m, 3, aMin[i]);
        }
    }
}

static genie_index *build(char **az, uint32_t n, uint64_t partObjects, const char *zName)
{
    genie_build_options bo = {.part_objects = partObjects};
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, &bo, NULL));
    for (uint32_t i = 0; i < n; i++)
        CHECK_OK(genie_set_builder_add(sb, az[i], strlen(az[i])));
    CHECK_OK(genie_set_builder_write(sb, test_path(zName)));
    genie_set_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(zName), &idx));
    return idx;
}

/* A set of @p n elements drawn with skew from @p universe (e3 or u^2 * universe), written as a line. */
static char *random_line(uint64_t *rng, uint32_t n, uint32_t universe)
{
    char *z = malloc((size_t)n * 12 + 1);
    size_t len = 0;
    for (uint32_t i = 0; i < n; i++) {
        double u = (double)(test_rand(rng) % 1000000) / 1e6;
        len += (size_t)sprintf(z + len, "%se%u", i ? (test_rand(rng) % 3 ? " " : "\t ") : "",
                               (uint32_t)(u * u * universe));
    }
    z[len] = '\0';
    return z;
}

static void free_lines(char **az, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(az[i]);
    free(az);
}

TEST(sets_exact_random_against_oracle)
{
    enum { NOBJ = 2500, NQ = 48 };
    uint64_t rng = 2026;
    char **azObj = malloc(NOBJ * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ);
    for (uint32_t o = 0; o < NOBJ; o++) {
        if (o % 50 == 7) { /* a duplicate of an earlier set: ties */
            azObj[o] = strdup(azObj[test_rand(&rng) % o]);
            continue;
        }
        /* Sizes 0..60, and one in 25 up to 400 (past the classes of one size each). */
        uint32_t n = (uint32_t)(o % 25 == 3 ? 40 + test_rand(&rng) % 360 : test_rand(&rng) % 61);
        azObj[o] = random_line(&rng, n, 600);
    }
    for (uint32_t q = 0; q < NQ; q++) {
        if (q % 4 == 0) { /* an indexed set, its elements doubled and one unknown element added */
            const char *z = azObj[test_rand(&rng) % NOBJ];
            azQ[q] = malloc(2 * strlen(z) + 16);
            sprintf(azQ[q], "%s %s zz%u", z, z, q);
        } else if (q == 1) {
            azQ[q] = strdup(""); /* the empty query */
        } else if (q == 2) {
            azQ[q] = strdup("unknown1 unknown2"); /* no element known */
        } else {
            azQ[q] = random_line(&rng, q % 4 == 3 ? 150 + q : 1 + (uint32_t)(test_rand(&rng) % 50), 600);
        }
    }
    ocase c;
    ocase_init(&c, azObj, NOBJ, azQ, NQ);
    genie_index *one = build(azObj, NOBJ, 0, "one.genie"), *many = build(azObj, NOBJ, 700, "many.genie");
    CHECK_EQ(genie_index_parts(many), 4);
    check_all(one, &c);
    check_all(many, &c);
    genie_index_close(one);
    genie_index_close(many);
    ocase_free(&c);
    free_lines(azObj, NOBJ);
    free_lines(azQ, NQ);
}

/* The lines of the fortune files as sets of words: real text, Zipf-like words. */
TEST(sets_exact_fortunes_against_oracle)
{
    static const char *const azFile[] = {"fortunes", "literature", "riddles", "people", "science", "wisdom"};
    enum { NMAX = 4000, NQ = 40 };
    char **azObj = malloc(NMAX * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ);
    uint32_t nObj = 0, nQ = 0;
    char zLine[4096];
    /* The fortune package's files, or a copy of them (the GPU machine has none: scripts/gpu-exactsets). */
    const char *zDir = getenv("GENIE_TEST_FORTUNES") ? getenv("GENIE_TEST_FORTUNES") : "/usr/share/games/fortunes";
    for (size_t f = 0; f < sizeof azFile / sizeof *azFile && nObj < NMAX; f++) {
        char zPath[1024];
        snprintf(zPath, sizeof zPath, "%s/%s", zDir, azFile[f]);
        FILE *fp = fopen(zPath, "r");
        if (!fp)
            continue;
        while (nObj < NMAX && fgets(zLine, sizeof zLine, fp)) {
            zLine[strcspn(zLine, "\n")] = '\0';
            if (strcmp(zLine, "%") == 0)
                continue;
            /* every 97th line is held out as a query */
            if (nObj % 97 == 5 && nQ < NQ)
                azQ[nQ++] = strdup(zLine);
            else
                azObj[nObj++] = strdup(zLine);
        }
        fclose(fp);
    }
    if (nObj < 1000) /* scripts/setup installs the fortunes package */
        test_fail_at(__FILE__, __LINE__, "only %u lines in %s (apt-get install fortunes, or set GENIE_TEST_FORTUNES)",
                     nObj, zDir);
    ocase c;
    ocase_init(&c, azObj, nObj, azQ, nQ);
    genie_index *idx = build(azObj, nObj, 0, "fortunes.genie");
    check_all(idx, &c);
    genie_index_close(idx);
    ocase_free(&c);
    free_lines(azObj, nObj);
    free_lines(azQ, nQ);
}

/* 300 copies of one set among others: ties at every rank go by smaller id. */
/* A hit and the size of its set, for merging answers searched apart. */
typedef struct part_hit {
    genie_set_hit h;
    uint32_t s;
} part_hit;

static int gMeasure;
static uint32_t gQ;

static int part_hit_cmp(const void *pa, const void *pb)
{
    const part_hit *a = pa, *b = pb;
    int c = genie_set_similarity_cmp((genie_set_measure)gMeasure, gQ, a->h.shared, a->s, b->h.shared, b->s);
    if (c)
        return -c;
    return (a->h.object > b->h.object) - (a->h.object < b->h.object);
}

/*
 * genie_set_search_parts over disjoint ranges of parts, merged by
 * genie_set_similarity_cmp() and the smaller id keeping k (what genie-mpi's
 * broker does), equals genie_set_search over the whole index, for every
 * measure, top-k and thresholds; the set sizes come from the query size the
 * results report; genie_set_similarity() gives each hit's similarity bits.
 */
TEST(sets_exact_parts_merge_to_the_whole)
{
    enum { NOBJ = 1200, NQ = 24 };
    uint64_t rng = 77;
    char **azObj = malloc(NOBJ * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ);
    for (uint32_t o = 0; o < NOBJ; o++)
        azObj[o] = o % 40 == 9 ? strdup(azObj[o - 9]) : random_line(&rng, (uint32_t)(1 + test_rand(&rng) % 50), 400);
    for (uint32_t q = 0; q < NQ; q++)
        azQ[q] = q == 5 ? strdup("") : random_line(&rng, (uint32_t)(1 + test_rand(&rng) % 40), 400);
    ocase c;
    ocase_init(&c, azObj, NOBJ, azQ, NQ);
    genie_index *idx = build(azObj, NOBJ, 250, "pm.genie");
    CHECK_EQ(genie_index_parts(idx), 5);
    static const uint32_t aRange[][2] = {{0, 1}, {1, 3}, {4, 1}};
    static const struct { uint32_t k; double minSim; } aCase[] = {{1, 0}, {7, 0}, {0, 0.3}, {4, 0.3}};
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    part_hit *aAll = malloc(3 * NOBJ * sizeof *aAll);
    for (int m = GENIE_SET_JACCARD; m <= GENIE_SET_CONTAINMENT; m++) {
        for (size_t ci = 0; ci < sizeof aCase / sizeof *aCase; ci++) {
            genie_set_options so = {.k = aCase[ci].k, .exact = 1, .measure = (genie_set_measure)m,
                                    .min_similarity = aCase[ci].minSim};
            genie_set_results *whole, *aPart[3];
            CHECK_OK(genie_set_search(idx, c.azQ, c.anQ, NQ, &so, &opt, &whole));
            for (int r = 0; r < 3; r++)
                CHECK_OK(genie_set_search_parts(idx, aRange[r][0], aRange[r][1], c.azQ, c.anQ, NQ, &so, &opt,
                                                &aPart[r]));
            for (uint32_t q = 0; q < NQ; q++) {
                gMeasure = m;
                gQ = c.aQ[q].n;
                CHECK_EQ(genie_set_results_query_size(whole, q), gQ);
                size_t nAll = 0;
                for (int r = 0; r < 3; r++) {
                    size_t n;
                    const genie_set_hit *h = genie_set_results_get(aPart[r], q, &n);
                    CHECK_EQ(genie_set_results_query_size(aPart[r], q), gQ);
                    for (size_t i = 0; i < n; i++) {
                        uint32_t s = h[i].union_size - gQ + h[i].shared;
                        CHECK_EQ(s, c.aObj[h[i].object].n);
                        CHECK(h[i].similarity == genie_set_similarity((genie_set_measure)m, h[i].shared, gQ, s));
                        aAll[nAll++] = (part_hit){h[i], s};
                    }
                }
                qsort(aAll, nAll, sizeof *aAll, part_hit_cmp);
                size_t nWant, nMerged = aCase[ci].k && nAll > aCase[ci].k ? aCase[ci].k : nAll;
                const genie_set_hit *w = genie_set_results_get(whole, q, &nWant);
                CHECK_EQ(nMerged, nWant);
                for (size_t i = 0; i < nWant; i++)
                    CHECK(memcmp(&aAll[i].h, &w[i], sizeof w[i]) == 0);
            }
            genie_set_results_free(whole);
            for (int r = 0; r < 3; r++)
                genie_set_results_free(aPart[r]);
        }
    }
    genie_set_options so = {.k = 3, .exact = 1};
    genie_set_results *r;
    CHECK_RC(genie_set_search_parts(idx, 4, 2, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
    CHECK_RC(genie_set_search_parts(idx, 0, 0, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
    free(aAll);
    genie_index_close(idx);
    ocase_free(&c);
    free_lines(azObj, NOBJ);
    free_lines(azQ, NQ);
}

/*
 * A backend's exact set search (the pSim capability) seen from the
 * front-end, without a GPU: a fake that answers with the CPU engine but
 * hands every third query back undone (as the GPU does when a threshold's
 * answers outgrow its pool) and counts its resident copies.
 */
static int nUpload, nResidentFree, nSimCall;

static genie_status fake_sim(void **ppResident, const sim_request *req, sim_results *out, uint8_t *aUndone)
{
    nSimCall++;
    if (*ppResident && *(const void **)*ppResident != req->pData->aPosting) {
        free(*ppResident); /* another view's copy: replaced, as the GPU's is */
        *ppResident = NULL;
        nResidentFree++;
    }
    if (!*ppResident) {
        *ppResident = malloc(sizeof(void *));
        *(const void **)*ppResident = req->pData->aPosting;
        nUpload++;
    }
    sim_results all;
    genie_status rc = sim_cpu_search(req, &all);
    if (rc != GENIE_OK)
        return rc;
    out->aEnd = malloc(req->nQuery * sizeof *out->aEnd);
    out->aHit = malloc((size_t)(all.aEnd[req->nQuery - 1] + 1) * sizeof *out->aHit);
    uint64_t n = 0;
    for (uint32_t i = 0; i < req->nQuery; i++) {
        uint64_t b = i ? all.aEnd[i - 1] : 0;
        aUndone[i] = i % 3 == 1 || req->aQuery[i].nElem > SIM_GPU_MAX_ELEMS; /* as the GPU's engine does */
        for (uint64_t j = b; j < all.aEnd[i] && !aUndone[i]; j++)
            out->aHit[n++] = all.aHit[j];
        out->aEnd[i] = n;
    }
    out->work = all.work;
    sim_results_free(&all);
    return GENIE_OK;
}

static void fake_sim_free(void *p)
{
    free(p);
    nResidentFree++;
}

static genie_status fake_check(void)
{
    return GENIE_OK;
}

/* Parts hooks that say every part fits (the exact search asks xFits alone). */
static int fits_always(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory)
{
    (void)idx, (void)pFirst, (void)pEnd, (void)device, (void)gpuMemory;
    return 1;
}

static genie_status no_begin(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory,
                             int serialUpload, engine_stream **ppS, int *pOverlap, uint64_t *pLeft)
{
    (void)idx, (void)pFirst, (void)pEnd, (void)device, (void)gpuMemory, (void)serialUpload, (void)ppS;
    (void)pOverlap, (void)pLeft;
    return GENIE_EINVAL; /* no match-count search runs on this backend */
}

static const engine_parts_ops fitsAlways = {.xFits = fits_always, .xBegin = no_begin};
static const engine_sim_ops fakeSimOps = {.xSearch = fake_sim, .xFree = fake_sim_free, .nMaxK = 10};
static const engine_backend fakeSim = {
    .iVersion = ENGINE_BACKEND_VERSION, .zName = "test-sim", .xCheck = fake_check, .xSearch = engine_cpu_search,
    .pSim = &fakeSimOps,
};
static const engine_backend fakeSimFits = {
    .iVersion = ENGINE_BACKEND_VERSION, .zName = "test-sim-fits", .xCheck = fake_check,
    .xSearch = engine_cpu_search, .pParts = &fitsAlways, .pSim = &fakeSimOps,
};

/*
 * One exact search through backend @p id on @p threads CPU threads (0: all): its answers equal the oracle's;
 * where it ran.
 */
static genie_backend search_with(const genie_index *idx, const ocase *c, genie_backend id, uint32_t k, unsigned threads)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = id;
    opt.threads = threads;
    genie_set_options so = {.k = k, .exact = 1};
    genie_set_results *r;
    CHECK_OK(genie_set_search(idx, c->azQ, c->anQ, c->nQ, &so, &opt, &r));
    oans *aWant = malloc(c->nObj * sizeof *aWant);
    for (uint32_t q = 0; q < c->nQ; q++) {
        size_t n;
        const genie_set_hit *h = genie_set_results_get(r, q, &n);
        uint32_t nWant = oracle(c, q, GENIE_SET_JACCARD, k, 0, aWant);
        CHECK_EQ(n, nWant);
        for (uint32_t i = 0; i < nWant; i++)
            CHECK(h[i].object == aWant[i].object && h[i].shared == aWant[i].shared);
    }
    free(aWant);
    genie_search_stats st;
    genie_set_results_stats(r, &st);
    genie_set_results_free(r);
    return st.backend;
}

static genie_backend search_through(const genie_index *idx, const ocase *c, genie_backend id, uint32_t k)
{
    return search_with(idx, c, id, k, 0);
}

/*
 * Queries of more known elements than the GPU's engine takes
 * (SIM_GPU_MAX_ELEMS), which it hands back: the front-end answers them on
 * the CPU beside the backend's run (a thread), the others the backend
 * hands back after it; every answer in its query's place.
 */
TEST(sets_exact_big_queries_beside_the_backend)
{
    genie_backend id;
    CHECK_OK(engine_backend_register(&fakeSim, &id));
    enum { NOBJ = 500, NQ = 12 };
    uint64_t rng = 41;
    char **azObj = malloc(NOBJ * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ);
    for (uint32_t o = 0; o < NOBJ; o++) /* the first 100 sets hold elements 0 .. 1999 between them */
        azObj[o] = o < 100 ? malloc(8 * 20 + 1) : random_line(&rng, (uint32_t)(1 + test_rand(&rng) % 60), 2000);
    for (uint32_t o = 0; o < 100; o++) {
        size_t len = 0;
        for (uint32_t e = 0; e < 20; e++)
            len += (size_t)sprintf(azObj[o] + len, "%se%u", e ? " " : "", o * 20 + e);
    }
    for (uint32_t q = 0; q < NQ; q++) /* every fourth query of 600 distinct known elements and more */
        azQ[q] = q % 4 == 2 ? malloc(12 * 700 + 1) : random_line(&rng, (uint32_t)(1 + test_rand(&rng) % 50), 2000);
    for (uint32_t q = 2; q < NQ; q += 4) {
        size_t len = 0;
        for (uint32_t e = 0; e < 600 + 30 * q; e++)
            len += (size_t)sprintf(azQ[q] + len, "%se%u", e ? " " : "", (e * 7 + q) % 2000);
    }
    ocase c;
    ocase_init(&c, azObj, NOBJ, azQ, NQ);
    genie_index *idx = build(azObj, NOBJ, 0, "big.genie");
    nSimCall = 0;
    CHECK_EQ(search_through(idx, &c, id, 10), id);
    CHECK_EQ(search_through(idx, &c, id, 1), id);
    CHECK_EQ(nSimCall, 2);
    genie_index_close(idx);
    ocase_free(&c);
    free_lines(azObj, NOBJ);
    free_lines(azQ, NQ);
}

/*
 * The capability's contract as the front-end keeps it: a query handed back
 * undone is answered on the CPU in its place; a k past the backend's
 * largest runs on the CPU; a one-part index keeps its copy in its device
 * slot across searches (freed at close); the views of a multi-part index
 * keep theirs too when the backend's parts hooks say they fit together,
 * else (here: no parts hooks) each frees its copy after its search, so
 * that one at a time is held.
 */
TEST(sets_exact_through_a_backend_capability)
{
    genie_backend id;
    CHECK_OK(engine_backend_register(&fakeSim, &id));
    enum { NOBJ = 900, NQ = 20 };
    uint64_t rng = 30;
    char **azObj = malloc(NOBJ * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ);
    for (uint32_t o = 0; o < NOBJ; o++)
        azObj[o] = random_line(&rng, (uint32_t)(1 + test_rand(&rng) % 40), 300);
    for (uint32_t q = 0; q < NQ; q++)
        azQ[q] = random_line(&rng, (uint32_t)(1 + test_rand(&rng) % 30), 300);
    ocase c;
    ocase_init(&c, azObj, NOBJ, azQ, NQ);
    genie_index *one = build(azObj, NOBJ, 0, "cap1.genie"), *many = build(azObj, NOBJ, 300, "cap3.genie");
    CHECK_EQ(genie_index_parts(many), 3);

    CHECK_EQ(search_through(one, &c, id, 10), id);
    CHECK_EQ(search_through(one, &c, id, 5), id);
    CHECK_EQ(nUpload, 1); /* kept in the slot */
    CHECK_EQ(nResidentFree, 0);
    CHECK_EQ(nSimCall, 2);
    CHECK_EQ(search_through(one, &c, id, 11), GENIE_BACKEND_CPU); /* k past nMaxK */
    CHECK_EQ(nSimCall, 2);
    genie_index_close(one);
    CHECK_EQ(nResidentFree, 1); /* at close */

    nUpload = nResidentFree = nSimCall = 0;
    CHECK_EQ(search_through(many, &c, id, 10), id);
    CHECK_EQ(search_through(many, &c, id, 3), id);
    CHECK_EQ(nSimCall, 6);
    CHECK_EQ(nUpload, 6);       /* each view uploaded for each search ... */
    CHECK_EQ(nResidentFree, 6); /* ... and freed after it */
    CHECK_EQ(nResidentFree, 6);

    genie_backend idFits;
    CHECK_OK(engine_backend_register(&fakeSimFits, &idFits));
    nUpload = nResidentFree = nSimCall = 0;
    CHECK_EQ(search_through(many, &c, idFits, 10), idFits);
    CHECK_EQ(search_through(many, &c, idFits, 4), idFits);
    CHECK_EQ(nSimCall, 6);
    CHECK_EQ(nUpload, 3); /* every view's copy kept */
    CHECK_EQ(nResidentFree, 0);
    genie_index_close(many);
    CHECK_EQ(nResidentFree, 3);
    ocase_free(&c);
    free_lines(azObj, NOBJ);
    free_lines(azQ, NQ);
}

/*
 * A batch of 2,048 queries or more for a backend is prepared in two slices
 * (the second while the backend answers the first): one call per view and
 * slice, every answer in its query's place, on one part and on three.
 * A batch of small queries (a mean under 24 elements in its first
 * quarter: here at most 2) is joined into one call.
 */
TEST(sets_exact_sliced_batch_through_a_backend)
{
    genie_backend id, idFits;
    CHECK_OK(engine_backend_register(&fakeSim, &id));
    CHECK_OK(engine_backend_register(&fakeSimFits, &idFits));
    enum { NOBJ = 300, NQ = 2600 };
    uint64_t rng = 77;
    char **azObj = malloc(NOBJ * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ), **azSmall = malloc(NQ * sizeof *azQ);
    for (uint32_t o = 0; o < NOBJ; o++)
        azObj[o] = random_line(&rng, (uint32_t)(1 + test_rand(&rng) % 30), 400);
    for (uint32_t q = 0; q < NQ; q++) {
        azQ[q] = random_line(&rng, (uint32_t)(140 + test_rand(&rng) % 20), 400);
        azSmall[q] = random_line(&rng, (uint32_t)(test_rand(&rng) % 3), 400);
    }
    ocase c, cs;
    ocase_init(&c, azObj, NOBJ, azQ, NQ);
    ocase_init(&cs, azObj, NOBJ, azSmall, NQ);
    genie_index *one = build(azObj, NOBJ, 0, "slice1.genie"), *many = build(azObj, NOBJ, 100, "slice3.genie");
    nSimCall = 0;
    CHECK_EQ(search_with(one, &c, id, 10, 1), id);
    CHECK_EQ(nSimCall, 2);
    nSimCall = 0;
    CHECK_EQ(search_with(many, &c, idFits, 10, 1), idFits);
    CHECK_EQ(nSimCall, 6);
    nSimCall = 0;
    CHECK_EQ(search_with(one, &cs, id, 10, 0), id);
    CHECK_EQ(nSimCall, 1);
    nSimCall = 0;
    CHECK_EQ(search_through(one, &c, id, 11), GENIE_BACKEND_CPU); /* k past nMaxK: on the CPU */
    CHECK_EQ(nSimCall, 0);
    genie_index_close(one);
    genie_index_close(many);
    ocase_free(&c);
    ocase_free(&cs);
    free_lines(azObj, NOBJ);
    free_lines(azQ, NQ);
    free_lines(azSmall, NQ);
}

TEST(sets_exact_ties_by_smaller_id)
{
    enum { N = 1000 };
    char **az = malloc(N * sizeof *az);
    uint64_t rng = 5;
    for (uint32_t o = 0; o < N; o++)
        az[o] = o % 3 == 1 ? strdup("a b c d") : random_line(&rng, 1 + o % 7, 30);
    genie_index *idx = build(az, N, 0, "ties.genie");
    const char *q = "a b c d";
    size_t nq = strlen(q);
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    genie_set_options so = {.k = 50, .exact = 1};
    genie_set_results *r;
    CHECK_OK(genie_set_search(idx, &q, &nq, 1, &so, &opt, &r));
    size_t n;
    const genie_set_hit *h = genie_set_results_get(r, 0, &n);
    CHECK_EQ(n, 50);
    for (uint32_t i = 0; i < 50; i++) {
        CHECK_EQ(h[i].object, 3 * i + 1);
        CHECK(h[i].similarity == 1.0);
    }
    genie_set_results_free(r);
    genie_index_close(idx);
    free_lines(az, N);
}

/* The choice by cost: whichever method, its plan says so; exact answers are the oracle's. */
TEST(sets_exact_choice_and_plan)
{
    enum { NOBJ = 3000, NQ = 100 };
    uint64_t rng = 77;
    char **azObj = malloc(NOBJ * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ);
    for (uint32_t o = 0; o < NOBJ; o++)
        azObj[o] = random_line(&rng, 2 + (uint32_t)(test_rand(&rng) % 6), 5000);
    for (uint32_t q = 0; q < NQ; q++)
        azQ[q] = strdup(azObj[test_rand(&rng) % NOBJ]);
    genie_index *idx = build(azObj, NOBJ, 0, "choice.genie");
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    ocase c;
    ocase_init(&c, azObj, NOBJ, azQ, NQ);
    /* Small sets of rare elements: the exact search reads a few short lists and must win. */
    genie_set_options so = {.k = 10};
    genie_set_results *r;
    CHECK_OK(genie_set_search(idx, c.azQ, c.anQ, NQ, &so, &opt, &r));
    genie_set_plan plan;
    genie_set_results_plan(r, &plan);
    CHECK_EQ(plan.method, GENIE_SET_EXACT_LISTS);
    CHECK(plan.exact_cost >= 0 && plan.minhash_cost > plan.exact_cost);
    CHECK(plan.reason && strstr(plan.reason, "cost less than MinHash") != NULL);
    oans *aWant = malloc(NOBJ * sizeof *aWant);
    for (uint32_t q = 0; q < NQ; q++) {
        size_t n;
        const genie_set_hit *h = genie_set_results_get(r, q, &n);
        uint32_t nWant = oracle(&c, q, GENIE_SET_JACCARD, 10, 0, aWant);
        CHECK_EQ(n, nWant);
        for (uint32_t i = 0; i < nWant; i++)
            CHECK_EQ(h[i].object, aWant[i].object);
    }
    genie_set_results_free(r);
    /* -K asks for MinHash. */
    so.candidates = 20;
    CHECK_OK(genie_set_search(idx, c.azQ, c.anQ, NQ, &so, &opt, &r));
    genie_set_results_plan(r, &plan);
    CHECK_EQ(plan.method, GENIE_SET_MINHASH);
    CHECK_EQ(plan.candidates, 20);
    genie_set_results_free(r);
    free(aWant);
    genie_index_close(idx);
    ocase_free(&c);
    free_lines(azObj, NOBJ);
    free_lines(azQ, NQ);
}

/* A version-1 index (MinHash, no element lists), as older genies wrote it. */
static genie_index *build_v1(char **az, uint32_t n, const char *zName)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    const uint32_t m = 16, D = (uint32_t)(((uint64_t)1 << 32) / m);
    unsigned char aParam[20] = {1, 0, 0, 0, m, 0, 0, 0, 3, 0, 0, 0};
    memcpy(aParam + 12, &D, 4);
    CHECK_OK(builder_set_frontend(b, GENIE_TYPE_SETS, aParam, sizeof aParam));
    set_slice *aS = NULL;
    size_t cap = 0, nS;
    uint32_t aKw[16];
    for (uint32_t i = 0; i < n; i++) {
        CHECK_OK(set_parse(az[i], strlen(az[i]), 0, &aS, &cap, &nS));
        set_keywords(aS, nS, m, 3, D, aKw);
        genie_object o = {aKw, nS ? m : 0, 0, 0, az[i], strlen(az[i])};
        CHECK_OK(genie_builder_add(b, &o));
    }
    free(aS);
    CHECK_OK(genie_builder_write(b, test_path(zName)));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(zName), &idx));
    return idx;
}

TEST(sets_exact_version1_and_bad_options)
{
    enum { NOBJ = 300, NQ = 12 };
    uint64_t rng = 9;
    char **azObj = malloc(NOBJ * sizeof *azObj), **azQ = malloc(NQ * sizeof *azQ);
    for (uint32_t o = 0; o < NOBJ; o++)
        azObj[o] = random_line(&rng, (uint32_t)(test_rand(&rng) % 12), 80);
    for (uint32_t q = 0; q < NQ; q++)
        azQ[q] = random_line(&rng, 1 + q, 80);
    ocase c;
    ocase_init(&c, azObj, NOBJ, azQ, NQ);
    genie_index *v1 = build_v1(azObj, NOBJ, "v1.genie"), *v2 = build(azObj, NOBJ, 0, "v2.genie");
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    genie_set_results *r;
    /* Version 1: --exact scans every set, the default is MinHash; the same exact answers as version 2. */
    genie_set_options so = {.k = 7, .exact = 1};
    CHECK_OK(genie_set_search(v1, c.azQ, c.anQ, NQ, &so, &opt, &r));
    genie_set_plan plan;
    genie_set_results_plan(r, &plan);
    CHECK_EQ(plan.method, GENIE_SET_EXACT_SCAN);
    oans *aWant = malloc(NOBJ * sizeof *aWant);
    for (uint32_t q = 0; q < NQ; q++) {
        size_t n;
        const genie_set_hit *h = genie_set_results_get(r, q, &n);
        uint32_t nWant = oracle(&c, q, GENIE_SET_JACCARD, 7, 0, aWant);
        CHECK_EQ(n, nWant);
        for (uint32_t i = 0; i < nWant; i++)
            CHECK(h[i].object == aWant[i].object && h[i].similarity == ovalue(0, aWant[i].num, aWant[i].den));
    }
    genie_set_results_free(r);
    so = (genie_set_options){.k = 7};
    CHECK_OK(genie_set_search(v1, c.azQ, c.anQ, NQ, &so, &opt, &r));
    genie_set_results_plan(r, &plan);
    CHECK_EQ(plan.method, GENIE_SET_MINHASH);
    genie_set_results_free(r);
    so = (genie_set_options){.k = 0, .min_similarity = 0.5};
    CHECK_RC(genie_set_search(v1, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "element lists") != NULL);
    CHECK_RC(genie_set_search(v2, c.azQ, c.anQ, NQ, &so, NULL, &r), GENIE_EINVAL); /* no search options */
    CHECK(strstr(genie_last_error(), "no genie_search_options given") != NULL);
    CHECK_RC(genie_set_search(v2, c.azQ, c.anQ, NQ, NULL, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "no genie_set_options given") != NULL);
    so = (genie_set_options){.k = 3, .measure = GENIE_SET_DICE};
    CHECK_RC(genie_set_search(v1, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
    /* Bad options, on the index with lists. */
    const double aBad[] = {-0.5, 1.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof aBad / sizeof *aBad; i++) {
        so = (genie_set_options){.k = 0, .min_similarity = aBad[i]};
        CHECK_RC(genie_set_search(v2, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
        CHECK(strstr(genie_last_error(), "(0, 1]") != NULL);
    }
    so = (genie_set_options){.k = 0};
    CHECK_RC(genie_set_search(v2, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "k must be") != NULL);
    so = (genie_set_options){.k = 3, .measure = (genie_set_measure)9};
    CHECK_RC(genie_set_search(v2, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "measure") != NULL);
    so = (genie_set_options){.k = 3, .recall = 0.9, .min_similarity = 0.4};
    CHECK_RC(genie_set_search(v2, c.azQ, c.anQ, NQ, &so, &opt, &r), GENIE_EINVAL);
    genie_set_measure me;
    CHECK_RC(genie_set_measure_parse("tanimoto", &me), GENIE_EINVAL);
    CHECK_OK(genie_set_measure_parse("containment", &me));
    CHECK_EQ(me, GENIE_SET_CONTAINMENT);
    free(aWant);
    genie_index_close(v1);
    genie_index_close(v2);
    ocase_free(&c);
    free_lines(azObj, NOBJ);
    free_lines(azQ, NQ);
}

/* An empty query first in its chunk (no elements, no buffer yet): no answers, and the next query's are right. */
TEST(sets_exact_empty_query_first)
{
    char *azObj[] = {"e1 e2", "e2 e3", "e1"};
    genie_index *idx = build(azObj, 3, 0, "empty-first.genie");
    const char *azQ[] = {"", "e1 e2"};
    size_t anQ[] = {0, 5};
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    genie_set_options so = {.k = 3, .exact = 1};
    genie_set_results *r;
    CHECK_OK(genie_set_search(idx, azQ, anQ, 2, &so, &opt, &r));
    size_t n;
    genie_set_results_get(r, 0, &n);
    CHECK_EQ(n, 0);
    const genie_set_hit *h = genie_set_results_get(r, 1, &n);
    CHECK(n == 3 && h[0].object == 0 && h[0].shared == 2 && h[1].shared == 1);
    genie_set_results_free(r);
    genie_index_close(idx);
}
