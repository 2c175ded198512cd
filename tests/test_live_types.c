/*
 * Live indexes of the front-ends' types against the same oracle as
 * test_live.c: after adds (genie_writer_add_records, _add_vectors) and
 * deletes, the index answers as an index built from the objects it holds
 * now, with the same parameters, ids mapped; after a compaction, with the
 * same ids.  Text (new words join the vocabulary), sets (MinHash and
 * exact), sequences (a round, --certify with its fallback scan, exact),
 * table (values within the built ranges and categories), vectors (cosine
 * LSH and exact l2).
 */
#include <unistd.h>

#include "genie/metric.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/text.h"
#include "genie/vectors.h"
#include "test.h"
#include "test_live.h"

/* A type under test: build an index of records, and compare the searches of two indexes. */
typedef struct live_type {
    const char *zName;
    /* Build an index of records az[aWhich[i]], i < n, to zPath. */
    void (*xBuild)(char **az, const uint64_t *aWhich, size_t n, const char *zPath);
    /* Fail unless searches of @p got equal those of @p want, ids mapped through aMap (NULL: same ids). */
    void (*xCompare)(const genie_index *got, const genie_index *want, const uint64_t *aMap, char **azQ, size_t nQ);
} live_type;

static const char *const azWord[] = {"ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen",
                                     "ibis", "jay", "kiwi", "lark", "mole", "newt", "owl", "pig"};

/* ----------------------------------------------------------------- text */

static void text_build(char **az, const uint64_t *aWhich, size_t n, const char *zPath)
{
    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, NULL, NULL, 0, 1));
    for (size_t i = 0; i < n; i++) {
        const char *z = az[aWhich ? aWhich[i] : i];
        CHECK_OK(genie_text_builder_add(tb, z, strlen(z)));
    }
    CHECK_OK(genie_text_builder_write(tb, zPath));
    genie_text_builder_free(tb);
}

static void text_compare(const genie_index *got, const genie_index *want, const uint64_t *aMap, char **azQ, size_t nQ)
{
    genie_queries *qa, *qb;
    CHECK_OK(genie_queries_new(&qa));
    CHECK_OK(genie_queries_new(&qb));
    for (size_t i = 0; i < nQ; i++) {
        CHECK_OK(genie_queries_add_text(qa, got, azQ[i], strlen(azQ[i]), 0));
        CHECK_OK(genie_queries_add_text(qb, want, azQ[i], strlen(azQ[i]), 0));
    }
    genie_results *a = test_search(got, qa, test_backend(), 9);
    genie_results *b = test_search(want, qb, GENIE_BACKEND_CPU, 9);
    live_same_results(a, b, aMap, "text");
    /* The stored records follow the objects. */
    for (size_t q = 0; q < nQ; q++) {
        size_t n;
        const genie_hit *h = genie_results_get(a, q, &n);
        for (size_t i = 0; i < n; i++) {
            const char *za, *zb;
            size_t la, lb;
            CHECK_OK(genie_index_record(got, h[i].object, &za, &la));
            CHECK_OK(genie_index_record(want, genie_results_get(b, q, &n)[i].object, &zb, &lb));
            CHECK(la == lb && memcmp(za, zb, la) == 0);
        }
    }
    genie_results_free(a);
    genie_results_free(b);
    genie_queries_free(qa);
    genie_queries_free(qb);
}

static char *random_text(uint64_t *s, int fresh)
{
    char *z = malloc(160);
    z[0] = 0;
    for (int w = 0, n = 1 + (int)(test_rand(s) % 7); w < n; w++) {
        if (fresh && w == 0) { /* a word the base never had */
            char zNew[16];
            snprintf(zNew, sizeof zNew, "new%u ", (unsigned)(test_rand(s) % 20));
            strcat(z, zNew);
        }
        strcat(z, azWord[test_rand(s) % 16]);
        strcat(z, " ");
    }
    return z;
}

/* ----------------------------------------------------------------- sets */

static const genie_set_params gSetParams = {32, 7, 0};

static void sets_build(char **az, const uint64_t *aWhich, size_t n, const char *zPath)
{
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, NULL, &gSetParams));
    for (size_t i = 0; i < n; i++) {
        const char *z = az[aWhich ? aWhich[i] : i];
        CHECK_OK(genie_set_builder_add(sb, z, strlen(z)));
    }
    CHECK_OK(genie_set_builder_write(sb, zPath));
    genie_set_builder_free(sb);
}

static void sets_compare(const genie_index *got, const genie_index *want, const uint64_t *aMap, char **azQ, size_t nQ)
{
    size_t *an = malloc(nQ * sizeof *an);
    for (size_t i = 0; i < nQ; i++)
        an[i] = strlen(azQ[i]);
    for (int exact = 0; exact < 2; exact++) {
        genie_set_options so = {.k = 5, .candidates = 15, .exact = exact};
        genie_search_options o = {.backend = test_backend(), .threads = 2};
        genie_set_results *a, *b;
        CHECK_OK(genie_set_search(got, (const char *const *)azQ, an, nQ, &so, &o, &a));
        o.backend = GENIE_BACKEND_CPU;
        CHECK_OK(genie_set_search(want, (const char *const *)azQ, an, nQ, &so, &o, &b));
        for (size_t q = 0; q < nQ; q++) {
            size_t nA, nB;
            const genie_set_hit *x = genie_set_results_get(a, q, &nA), *y = genie_set_results_get(b, q, &nB);
            CHECK_EQ(nA, nB);
            for (size_t i = 0; i < nA; i++) {
                if (x[i].object != (aMap ? aMap[y[i].object] : y[i].object))
                    test_fail_at(__FILE__, __LINE__,
                                 "sets, %s, query %zu '%s', rank %zu: object %u (shared %u, union %u, count %u) where "
                                 "the rebuilt index has %u (mapped %llu; shared %u, union %u, count %u)",
                                 exact ? "exact" : "MinHash", q, azQ[q], i, x[i].object, x[i].shared,
                                 x[i].union_size, x[i].count, y[i].object,
                                 (unsigned long long)(aMap ? aMap[y[i].object] : y[i].object), y[i].shared,
                                 y[i].union_size, y[i].count);
                CHECK_EQ(x[i].shared, y[i].shared);
                CHECK_EQ(x[i].union_size, y[i].union_size);
                CHECK_EQ(x[i].count, y[i].count);
            }
        }
        genie_set_results_free(a);
        genie_set_results_free(b);
    }
    free(an);
}

static char *random_set(uint64_t *s, int fresh)
{
    char *z = malloc(128);
    z[0] = 0;
    for (int e = 0, m = 1 + (int)(test_rand(s) % 8); e < m; e++) {
        char zE[16];
        snprintf(zE, sizeof zE, "%s%u ", fresh && e == 0 ? "x" : "e", (unsigned)(test_rand(s) % 30));
        strcat(z, zE);
    }
    return z;
}

/* ------------------------------------------------------------ sequences */

static void seq_build(char **az, const uint64_t *aWhich, size_t n, const char *zPath)
{
    genie_seq_builder *sb;
    CHECK_OK(genie_seq_builder_new(&sb, NULL, 3));
    for (size_t i = 0; i < n; i++) {
        const char *z = az[aWhich ? aWhich[i] : i];
        CHECK_OK(genie_seq_builder_add(sb, z, strlen(z)));
    }
    CHECK_OK(genie_seq_builder_write(sb, zPath));
    genie_seq_builder_free(sb);
}

static void seq_compare(const genie_index *got, const genie_index *want, const uint64_t *aMap, char **azQ, size_t nQ)
{
    size_t *an = malloc(nQ * sizeof *an);
    for (size_t i = 0; i < nQ; i++)
        an[i] = strlen(azQ[i]);
    genie_seq_options aMode[] = {{.k = 3, .candidates = 8}, {.k = 3, .candidates = 4, .max_candidates = 4096},
                                 {.k = 3, .exact = 1}};
    for (int m = 0; m < 3; m++) {
        genie_search_options o = {.backend = test_backend(), .threads = 2};
        genie_seq_results *a, *b;
        CHECK_OK(genie_seq_search(got, (const char *const *)azQ, an, nQ, &aMode[m], &o, &a));
        CHECK_OK(genie_seq_search(want, (const char *const *)azQ, an, nQ, &aMode[m], &o, &b));
        for (size_t q = 0; q < nQ; q++) {
            size_t nA, nB;
            int cA, cB;
            const genie_seq_hit *x = genie_seq_results_get(a, q, &nA, &cA, NULL);
            const genie_seq_hit *y = genie_seq_results_get(b, q, &nB, &cB, NULL);
            CHECK_EQ(nA, nB);
            CHECK_EQ(cA, cB);
            for (size_t i = 0; i < nA; i++) {
                CHECK_EQ(x[i].object, aMap ? aMap[y[i].object] : y[i].object);
                CHECK_EQ(x[i].distance, y[i].distance);
                CHECK_EQ(x[i].count, y[i].count);
            }
        }
        genie_seq_results_free(a);
        genie_seq_results_free(b);
    }
    free(an);
}

static char *random_string(uint64_t *s, int fresh)
{
    (void)fresh;
    char *z = malloc(24);
    size_t n = 3 + test_rand(s) % 10;
    for (size_t i = 0; i < n; i++)
        z[i] = (char)('a' + test_rand(s) % 4);
    z[n] = 0;
    return z;
}

/* ---------------------------------------------------------------- table */

static const char *const azColor[] = {"red", "green", "blue", "grey"};

/* Rows "x,color": x in 0..99; the first two rows hold the range's ends (never deleted by the driver). */
static char *random_row(uint64_t *s, int fresh)
{
    (void)fresh;
    char *z = malloc(32);
    snprintf(z, 32, "%u,%s", (unsigned)(1 + test_rand(s) % 98), azColor[test_rand(s) % 4]);
    return z;
}

static void table_build(char **az, const uint64_t *aWhich, size_t n, const char *zPath)
{
    char zCsv[1024];
    snprintf(zCsv, sizeof zCsv, "%s.csv", zPath);
    FILE *f = fopen(zCsv, "w");
    fprintf(f, "x,color\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", az[aWhich ? aWhich[i] : i]);
    fclose(f);
    genie_table_options to = {.bins = 20};
    CHECK_OK(genie_table_build(zCsv, &to, NULL, zPath));
}

static void table_compare(const genie_index *got, const genie_index *want, const uint64_t *aMap, char **azQ,
                          size_t nQ)
{
    const genie_index *aIdx[2] = {got, want};
    genie_queries *aQ[2];
    for (int t = 0; t < 2; t++) {
        genie_table *tab;
        CHECK_OK(genie_table_open(aIdx[t], &tab));
        CHECK_OK(genie_table_set_radius(tab, NULL, 2));
        CHECK_OK(genie_queries_new(&aQ[t]));
        for (size_t i = 0; i < nQ; i++) {
            char zx[16];
            const char *comma = strchr(azQ[i], ',');
            snprintf(zx, sizeof zx, "%.*s", (int)(comma - azQ[i]), azQ[i]);
            const char *azCol[] = {"x", "color"}, *azVal[] = {zx, comma + 1};
            CHECK_OK(genie_table_add_query(tab, aQ[t], azCol, azVal, 2, 0));
        }
        genie_table_free(tab);
    }
    genie_results *a = test_search(got, aQ[0], test_backend(), 6);
    genie_results *b = test_search(want, aQ[1], GENIE_BACKEND_CPU, 6);
    live_same_results(a, b, aMap, "table");
    genie_results_free(a);
    genie_results_free(b);
    genie_queries_free(aQ[0]);
    genie_queries_free(aQ[1]);
}

static void vec_fill(uint64_t *s, float *v, size_t n);

/* ---------------------------------------------------------------- metric */

static const genie_lc_params gLcParams = {GENIE_LC_EDIT, 8, GENIE_LC_CENTERS_FARTHEST, 0, 5, 0, 2};

static void metric_build(char **az, const uint64_t *aWhich, size_t n, const char *zPath)
{
    const char **azIn = malloc(n * sizeof *azIn);
    size_t *an = malloc(n * sizeof *an);
    for (size_t i = 0; i < n; i++) {
        azIn[i] = az[aWhich ? aWhich[i] : i];
        an[i] = strlen(azIn[i]);
    }
    CHECK_OK(genie_lc_build_strings(azIn, an, n, &gLcParams, NULL, zPath));
    free(azIn);
    free(an);
}

static void lc_compare(genie_lc_results *a, genie_lc_results *b, const uint64_t *aMap)
{
    CHECK_EQ(genie_lc_results_queries(a), genie_lc_results_queries(b));
    for (size_t q = 0; q < genie_lc_results_queries(a); q++) {
        size_t nA, nB;
        const genie_lc_hit *x = genie_lc_results_get(a, q, &nA), *y = genie_lc_results_get(b, q, &nB);
        CHECK_EQ(nA, nB);
        for (size_t i = 0; i < nA; i++) {
            CHECK_EQ(x[i].object, aMap ? aMap[y[i].object] : y[i].object);
            CHECK(x[i].distance == y[i].distance);
        }
    }
}

static void metric_compare(const genie_index *got, const genie_index *want, const uint64_t *aMap, char **azQ,
                           size_t nQ)
{
    size_t *an = malloc(nQ * sizeof *an);
    for (size_t i = 0; i < nQ; i++)
        an[i] = strlen(azQ[i]);
    genie_lc_options aOpt[] = {{.k = 4, .backend = test_backend()}, {.k = 0, .radius = 2, .backend = test_backend()},
                               {.k = 4, .radius = 1, .bounded = 1, .backend = GENIE_BACKEND_CPU}};
    for (int m = 0; m < 3; m++) {
        genie_lc_results *a, *b;
        CHECK_OK(genie_lc_search_strings(got, (const char *const *)azQ, an, nQ, &aOpt[m], &a));
        CHECK_OK(genie_lc_search_strings(want, (const char *const *)azQ, an, nQ, &aOpt[m], &b));
        lc_compare(a, b, aMap);
        genie_lc_results_free(a);
        genie_lc_results_free(b);
    }
    free(an);
}

/* -------------------------------------------------------------- driver */

/*
 * A base of 300 objects, then rounds of adds (some of them with words,
 * elements the base never had) and deletes (never the first two objects:
 * the table's range ends), each round checked against the oracle; then a
 * compaction, checked with ids unmapped.
 */
static void live_type_run(const live_type *t, char *(*xRandom)(uint64_t *, int))
{
    enum { BASE = 300, MAX = 700, QUERIES = 30 };
    uint64_t s = 11;
    char **az = calloc(MAX, sizeof *az), **azQ = calloc(QUERIES, sizeof *azQ);
    for (size_t i = 0; i < BASE; i++)
        az[i] = xRandom(&s, 0);
    if (t->xBuild == table_build) {
        snprintf(az[0], 32, "0,red");
        snprintf(az[1], 32, "99,grey");
    }
    for (size_t i = 0; i < QUERIES; i++)
        azQ[i] = xRandom(&s, i % 3 == 0);
    char zIndex[1024], zOracle[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("live.genie"));
    snprintf(zOracle, sizeof zOracle, "%s", test_path("oracle.genie"));
    unlink(test_path("live.genie.wal")); /* the log of the type before names its file */
    t->xBuild(az, NULL, BASE, zIndex);
    live_model m;
    live_model_init(&m);
    for (size_t i = 0; i < BASE; i++)
        live_model_add(&m, i); /* a base without labels: its ids */
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    genie_index *snap; /* refreshed after every write: it reads on from where it was (index/live.h) */
    CHECK_OK(genie_index_open(zIndex, &snap));
    for (int round = 0; round < 3; round++) {
        size_t nAdd = 40 + test_rand(&s) % 60;
        size_t an[100];
        for (size_t i = 0; i < nAdd; i++) {
            az[m.n + i] = xRandom(&s, 1);
            an[i] = strlen(az[m.n + i]);
        }
        uint64_t aLabel[100];
        CHECK_OK(genie_writer_add_records(w, (const char *const *)az + m.n, an, nAdd, NULL, aLabel));
        for (size_t i = 0; i < nAdd; i++)
            live_model_add(&m, aLabel[i]);
        test_live_refresh(&snap);
        uint64_t aDel[8];
        for (int i = 0; i < 8; i++) {
            aDel[i] = m.aLabel[2 + test_rand(&s) % (m.n - 2)];
            live_model_delete(&m, aDel[i]);
        }
        CHECK_OK(genie_writer_delete(w, aDel, 8, NULL));
        test_live_refresh(&snap);
        size_t nKept;
        uint64_t *aMap = live_model_kept(&m, &nKept);
        t->xBuild(az, aMap, nKept, zOracle);
        genie_index *got, *want;
        CHECK_OK(genie_index_open(zIndex, &got));
        CHECK_OK(genie_index_open(zOracle, &want));
        t->xCompare(got, want, aMap, azQ, QUERIES);
        t->xCompare(snap, want, aMap, azQ, QUERIES);
        genie_index_close(got);
        genie_index_close(want);
        free(aMap);
    }
    genie_index_close(snap);
    CHECK_OK(genie_writer_compact(w));
    genie_writer_close(w);
    size_t nKept;
    uint64_t *aMap = live_model_kept(&m, &nKept);
    t->xBuild(az, aMap, nKept, zOracle);
    genie_index *got, *want;
    CHECK_OK(genie_index_open(zIndex, &got));
    CHECK_OK(genie_index_open(zOracle, &want));
    t->xCompare(got, want, NULL, azQ, QUERIES);
    for (size_t j = 0; j < nKept; j++) { /* every object keeps its label */
        uint64_t label;
        CHECK_OK(genie_index_label(got, (uint32_t)j, &label));
        CHECK_EQ(label, m.aLabel[aMap[j]]);
    }
    genie_index_close(got);
    genie_index_close(want);
    free(aMap);
    for (size_t i = 0; i < MAX; i++)
        free(az[i]);
    for (size_t i = 0; i < QUERIES; i++)
        free(azQ[i]);
    free(az);
    free(azQ);
    live_model_free(&m);
}

TEST(live_text_sets_sequences_table_equal_rebuilt_index)
{
    static const live_type aType[] = {{"text", text_build, text_compare},
                                      {"sets", sets_build, sets_compare},
                                      {"sequences", seq_build, seq_compare},
                                      {"table", table_build, table_compare},
                                      {"metric", metric_build, metric_compare}};
    char *(*aRandom[])(uint64_t *, int) = {random_text, random_set, random_string, random_row, random_string};
    for (int t = 0; t < 5; t++)
        live_type_run(&aType[t], aRandom[t]);
}

/* ---------------------------------------------------------------- vectors */

static void vec_fill(uint64_t *s, float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(test_rand(s) % 13) - 6;
}

static void vec_compare(const genie_index *got, const genie_index *want, const uint64_t *aMap, const genie_vectors *q)
{
    uint32_t k = 7;
    genie_neighbor *a = malloc(q->n * k * sizeof *a), *b = malloc(q->n * k * sizeof *b);
    uint32_t *nA = malloc(q->n * sizeof *nA), *nB = malloc(q->n * sizeof *nB);
    for (int exact = 0; exact < 2; exact++) {
        genie_vsearch_options o = {.search = {.backend = test_backend(), .threads = 2}, .k = k, .candidates = 25,
                                   .exact = exact};
        CHECK_OK(genie_vectors_search(got, q, &o, a, nA, NULL));
        o.search.backend = GENIE_BACKEND_CPU;
        CHECK_OK(genie_vectors_search(want, q, &o, b, nB, NULL));
        for (uint64_t i = 0; i < q->n; i++) {
            CHECK_EQ(nA[i], nB[i]);
            for (uint32_t r = 0; r < nA[i]; r++) {
                CHECK_EQ(a[i * k + r].id, aMap ? aMap[b[i * k + r].id] : b[i * k + r].id);
                CHECK(a[i * k + r].distance == b[i * k + r].distance);
            }
        }
    }
    free(a);
    free(b);
    free(nA);
    free(nB);
}

/*
 * A vectors-holding index (an LSH vectors index, or a metric index of
 * vectors) through @p nRound rounds of adds and deletes, compacted after
 * the last: after each, @p xCompare compares it with @p xBuild's index of
 * the vectors it holds (ids mapped, or the same once compacted).
 */
typedef struct vec_rounds {
    uint32_t dim;
    uint64_t nBase, nMax, addMin, addSpan;
    int nRound, nDelete;
    void (*xBuild)(const genie_vectors *v, const char *zPath);
    void (*xCompare)(const genie_index *got, const genie_index *want, const uint64_t *aMap, const genie_vectors *q);
} vec_rounds;

static void vec_rounds_run(const vec_rounds *vr, uint64_t seed, const char *zName, const genie_vectors *q0)
{
    uint64_t s = seed;
    uint32_t dim = vr->dim;
    float *aAll = malloc((size_t)vr->nMax * dim * sizeof *aAll);
    vec_fill(&s, aAll, (size_t)vr->nBase * dim);
    genie_vectors base = {vr->nBase, dim, aAll}, q = *q0;
    char zIndex[1024], zOracle[1024];
    snprintf(zIndex, sizeof zIndex, "%s.genie", test_path(zName));
    snprintf(zOracle, sizeof zOracle, "%s-oracle.genie", test_path(zName));
    vr->xBuild(&base, zIndex);
    live_model m;
    live_model_init(&m);
    for (size_t i = 0; i < vr->nBase; i++)
        live_model_add(&m, i);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    genie_index *snap; /* refreshed after every write (index/live.h) */
    CHECK_OK(genie_index_open(zIndex, &snap));
    for (int round = 0; round < vr->nRound; round++) {
        uint64_t nAdd = vr->addMin + test_rand(&s) % vr->addSpan;
        vec_fill(&s, aAll + m.n * dim, (size_t)nAdd * dim);
        genie_vectors add = {nAdd, dim, aAll + m.n * dim};
        uint64_t aLabel[100];
        CHECK_OK(genie_writer_add_vectors(w, &add, NULL, aLabel));
        for (uint64_t i = 0; i < nAdd; i++)
            live_model_add(&m, aLabel[i]);
        test_live_refresh(&snap);
        uint64_t aDel[8];
        for (int i = 0; i < vr->nDelete; i++) {
            aDel[i] = m.aLabel[test_rand(&s) % m.n];
            live_model_delete(&m, aDel[i]);
        }
        CHECK_OK(genie_writer_delete(w, aDel, (size_t)vr->nDelete, NULL));
        test_live_refresh(&snap);
        for (int compacted = 0; compacted < (round == vr->nRound - 1 ? 2 : 1); compacted++) {
            if (compacted)
                CHECK_OK(genie_writer_compact(w));
            size_t nKept;
            uint64_t *aMap = live_model_kept(&m, &nKept);
            genie_vectors kept = {nKept, dim, malloc(nKept * dim * sizeof(float))};
            for (size_t j = 0; j < nKept; j++)
                memcpy(kept.data + j * dim, aAll + aMap[j] * dim, dim * sizeof(float));
            vr->xBuild(&kept, zOracle);
            genie_index *got, *want;
            CHECK_OK(genie_index_open(zIndex, &got));
            CHECK_OK(genie_index_open(zOracle, &want));
            vr->xCompare(got, want, compacted ? NULL : aMap, &q);
            if (!compacted)
                vr->xCompare(snap, want, aMap, &q);
            genie_index_close(got);
            genie_index_close(want);
            free(kept.data);
            free(aMap);
        }
    }
    /* Another dimension is refused. */
    genie_vectors bad = {1, dim - 1, aAll};
    CHECK_RC(genie_writer_add_vectors(w, &bad, NULL, NULL), GENIE_EINVAL);
    genie_index_close(snap);
    genie_writer_close(w);
    live_model_free(&m);
    free(aAll);
}

static void lc_vectors_build(const genie_vectors *v, const char *zPath)
{
    genie_lc_params p = {GENIE_LC_L2, 10, GENIE_LC_CENTERS_FARTHEST, 0, 3, 0, 2};
    CHECK_OK(genie_lc_build_vectors(v, &p, NULL, zPath));
}

static void lc_vectors_compare(const genie_index *got, const genie_index *want, const uint64_t *aMap,
                               const genie_vectors *q)
{
    genie_lc_options aOpt[] = {{.k = 5, .backend = test_backend()}, {.k = 0, .radius = 4}};
    for (int t = 0; t < 2; t++) {
        genie_lc_results *a, *b;
        CHECK_OK(genie_lc_search_vectors(got, q, &aOpt[t], &a));
        CHECK_OK(genie_lc_search_vectors(want, q, &aOpt[t], &b));
        lc_compare(a, b, aMap);
        genie_lc_results_free(a);
        genie_lc_results_free(b);
    }
}

/* A metric index of vectors: the added vectors are scanned, a compaction clusters them. */
TEST(live_metric_vectors_equal_rebuilt_index)
{
    enum { DIM = 6, NQ = 15 };
    uint64_t s = 99;
    float aQ[NQ * DIM];
    vec_fill(&s, aQ, NQ * DIM);
    genie_vectors q = {NQ, DIM, aQ};
    vec_rounds vr = {DIM, 300, 600, 60, 40, 2, 5, lc_vectors_build, lc_vectors_compare};
    vec_rounds_run(&vr, 9, "m", &q);
}

static void lsh_build(const genie_vectors *v, const char *zPath)
{
    genie_lsh_params p = {.metric = GENIE_METRIC_COSINE, .m = 40, .bits = 4, .seed = 3};
    CHECK_OK(genie_vectors_build(v, &p, NULL, zPath));
}

TEST(live_vectors_equal_rebuilt_index)
{
    enum { DIM = 10, NQ = 20 };
    uint64_t s = 77;
    float aQ[NQ * DIM];
    vec_fill(&s, aQ, NQ * DIM);
    genie_vectors q = {NQ, DIM, aQ};
    vec_rounds vr = {DIM, 400, 800, 50, 50, 3, 6, lsh_build, vec_compare};
    vec_rounds_run(&vr, 5, "v", &q);
}
