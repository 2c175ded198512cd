/*
 * Filters (genie_filter, engine/filter.h) against their oracle: a search
 * of an index filtered to some objects answers exactly as the same search
 * of an index built from those objects alone, with the ids mapped back
 * (object j of the small index is the j-th allowed object of the full
 * one, so the order of ids, and with it every tie, is preserved).
 *
 * This file: the match-count engine (keywords over one part and several
 * parts whose boundaries fall inside 64-bit words of the bitmap, on
 * $GENIE_TEST_BACKEND and cpu-idx; and over 40,000 objects, the CPU's
 * blocked path with both counter widths, two GPU tiles), text, tables and
 * ranked documents.
 * Tables and documents compare with the full index's complete ranking
 * filtered by hand: a table's bins and a collection's statistics come
 * from all of its rows, so an index of the allowed rows alone would rank
 * by other numbers; a filter chooses what is returned, never how it
 * scores.  test_filter_types.c has sets, sequences, vectors and metric.
 */
#include "genie/docs.h"
#include "genie/table.h"
#include "genie/text.h"
#include "test.h"
#include "test_filter.h"

#define KW_OBJECTS 3000
#define KW_QUERIES 48

uint64_t *filter_test_random(genie_filter *f, uint64_t n, unsigned percent, uint64_t *pSeed, uint64_t *pnAllowed)
{
    uint64_t *aMap = malloc((n ? n : 1) * sizeof *aMap), m = 0;
    CHECK(aMap);
    genie_filter_set_all(f, 0);
    for (uint64_t o = 0; o < n; o++)
        if (test_rand(pSeed) % 100 < percent) {
            CHECK_OK(genie_filter_set(f, o, 1));
            aMap[m++] = o;
        }
    CHECK_EQ(genie_filter_count(f), m);
    *pnAllowed = m;
    return aMap;
}

/* Query qi of @p full (filtered) against @p sub (the allowed objects alone, object j = aMap[j]). */
static void same_hits(const genie_results *full, const genie_results *sub, const uint64_t *aMap, size_t qi,
                      const char *zWhat)
{
    size_t nA, nB;
    const genie_hit *a = genie_results_get(full, qi, &nA);
    const genie_hit *b = genie_results_get(sub, qi, &nB);
    if (nA != nB)
        test_fail_at(__FILE__, __LINE__, "%s, query %zu: %zu hits filtered, %zu over the allowed objects", zWhat, qi,
                     nA, nB);
    for (size_t i = 0; i < nA; i++)
        if (a[i].object != aMap[b[i].object] || a[i].count != b[i].count)
            test_fail_at(__FILE__, __LINE__, "%s, query %zu, rank %zu: (%u, %u) filtered, (%llu, %u) expected", zWhat,
                         qi, i, a[i].object, a[i].count, (unsigned long long)aMap[b[i].object], b[i].count);
}

/* Skewed random keyword sets: a few keywords are in most objects (long lists, bitmaps on the CPU). */
static test_objects kw_objects(uint64_t *s)
{
    test_objects o = {calloc(KW_OBJECTS, sizeof(uint32_t *)), calloc(KW_OBJECTS, sizeof(size_t)), KW_OBJECTS};
    for (size_t i = 0; i < KW_OBJECTS; i++) {
        size_t n = 1 + test_rand(s) % 24;
        o.aKw[i] = malloc(n * sizeof(uint32_t));
        o.aN[i] = n;
        for (size_t j = 0; j < n; j++) {
            uint64_t r = test_rand(s);
            o.aKw[i][j] = (uint32_t)(r % 4 == 0 ? r % 8 : r % 600);
        }
    }
    return o;
}

static genie_queries *kw_queries(uint64_t *s)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (size_t i = 0; i < KW_QUERIES; i++) {
        genie_item a[40];
        size_t n = i % 3 == 0 ? 30 + test_rand(s) % 10 : 1 + test_rand(s) % 6;
        for (size_t j = 0; j < n; j++) {
            uint32_t lo = (uint32_t)(test_rand(s) % 600), w = 1 + (uint32_t)(test_rand(s) % 3);
            a[j] = (genie_item){lo, lo + (uint32_t)(test_rand(s) % (i % 4 == 1 ? 80 : 3)), w};
        }
        CHECK_OK(genie_queries_add(q, a, n, i % 7 == 3 ? 3 : 0));
    }
    return q;
}

/* Objects of @p all whose ids aMap lists, in that order. */
static test_objects kw_subset(const test_objects *all, const uint64_t *aMap, uint64_t n)
{
    test_objects o = {calloc(n ? n : 1, sizeof(uint32_t *)), calloc(n ? n : 1, sizeof(size_t)), n};
    for (uint64_t j = 0; j < n; j++) {
        o.aN[j] = all->aN[aMap[j]];
        o.aKw[j] = malloc((o.aN[j] ? o.aN[j] : 1) * sizeof(uint32_t));
        memcpy(o.aKw[j], all->aKw[aMap[j]], o.aN[j] * sizeof(uint32_t));
    }
    return o;
}

static genie_results *filtered(const genie_index *idx, const genie_queries *q, genie_backend b, uint32_t k,
                               const genie_filter *f)
{
    genie_search_options o = {.backend = b, .k = k, .threads = 2, .filter = f};
    genie_results *r = NULL;
    CHECK_OK(genie_search(idx, q, &o, &r));
    return r;
}

TEST(filter_keywords_equal_index_of_allowed)
{
    uint64_t s = 29;
    test_objects all = kw_objects(&s);
    genie_queries *q = kw_queries(&s);
    genie_build_options parts = {.part_objects = 700}; /* part boundaries inside bitmap words */
    genie_index *one = test_build(&all, 0, test_path("one.genie"));
    genie_index *several = test_build_with(&all, &parts, test_path("parts.genie"));
    CHECK(genie_index_parts(several) > 3);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, KW_OBJECTS));
    static const unsigned aPercent[] = {0, 1, 30, 97, 100};
    for (size_t t = 0; t < sizeof aPercent / sizeof aPercent[0]; t++) {
        uint64_t nAllowed;
        uint64_t *aMap = filter_test_random(f, KW_OBJECTS, aPercent[t], &s, &nAllowed);
        test_objects sub = kw_subset(&all, aMap, nAllowed);
        genie_index *small = nAllowed ? test_build(&sub, 0, test_path("small.genie")) : NULL;
        static const uint32_t aK[] = {1, 10, 5000};
        for (size_t ik = 0; ik < 3; ik++) {
            genie_results *want = small ? test_search(small, q, GENIE_BACKEND_CPU, aK[ik]) : NULL;
            const genie_index *aIdx[] = {one, several};
            /* On a GPU also its baselines: their counting kernels read the bitmap too. */
            genie_backend aB[] = {test_backend(), GENIE_BACKEND_CPU_IDX, GENIE_BACKEND_CUDA_SPQ,
                                  GENIE_BACKEND_CUDA_CPQ_PAPER};
            int nB = test_backend() == GENIE_BACKEND_CUDA ? 4 : 2;
            for (int i = 0; i < 2; i++)
                for (int b = 0; b < nB; b++) {
                    genie_results *got = filtered(aIdx[i], q, aB[b], aK[ik], f);
                    char zWhat[96];
                    snprintf(zWhat, sizeof zWhat, "%u%% allowed, k %u, %s, %s", aPercent[t], aK[ik],
                             i ? "parts" : "one part", genie_backend_name(aB[b]));
                    for (size_t qi = 0; qi < KW_QUERIES; qi++) {
                        if (want) {
                            same_hits(got, want, aMap, qi, zWhat);
                        } else {
                            size_t n;
                            genie_results_get(got, qi, &n);
                            CHECK_EQ(n, 0);
                        }
                    }
                    genie_results_free(got);
                }
            genie_results_free(want);
        }
        genie_index_close(small);
        test_objects_free(&sub);
        free(aMap);
    }
    /* A filter of another size is refused, naming both sizes. */
    genie_filter *g;
    CHECK_OK(genie_filter_new(&g, KW_OBJECTS - 1));
    genie_search_options o = {.k = 3, .filter = g};
    genie_results *r = NULL;
    CHECK_RC(genie_search(one, q, &o, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "2999") && strstr(genie_last_error(), "3000"));
    CHECK_RC(genie_filter_set(g, KW_OBJECTS - 1, 1), GENIE_EINVAL);
    genie_filter_free(g);
    genie_filter_free(f);
    genie_queries_free(q);
    genie_index_close(one);
    genie_index_close(several);
    test_objects_free(&all);
}

/*
 * The counting paths a filter reads, over more objects: the CPU's blocked
 * path with 8-bit and with 16-bit counters (a count bound over 255) over
 * several blocks, whose chunks at 1% allowed mostly hold no allowed
 * object, its touched path (one-keyword queries) and cpu-idx's full scan;
 * on a GPU, two tiles, the second part-filled (the tile kernel's mask).
 */
#define KW_BIG_OBJECTS 40000
#define KW_BIG_QUERIES 24

TEST(filter_keywords_blocks_and_tiles)
{
    uint64_t s = 31;
    test_objects all = {calloc(KW_BIG_OBJECTS, sizeof(uint32_t *)), calloc(KW_BIG_OBJECTS, sizeof(size_t)),
                        KW_BIG_OBJECTS};
    for (size_t i = 0; i < KW_BIG_OBJECTS; i++) {
        all.aN[i] = 8;
        all.aKw[i] = malloc(8 * sizeof(uint32_t));
        for (size_t j = 0; j < 8; j++)
            all.aKw[i][j] = (uint32_t)(test_rand(&s) % 200);
    }
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (size_t i = 0; i < KW_BIG_QUERIES; i++) {
        genie_item a[8];
        size_t n = i % 3 == 0 ? 1 : i % 3 == 1 ? 6 : 8;
        for (size_t j = 0; j < n; j++) {
            uint32_t kw = (uint32_t)(test_rand(&s) % 200);
            a[j] = (genie_item){kw, kw, i % 3 == 2 ? 200 : 1 + (uint32_t)(test_rand(&s) % 3)};
        }
        CHECK_OK(genie_queries_add(q, a, n, 0));
    }
    genie_index *idx = test_build(&all, 0, test_path("big.genie"));
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, KW_BIG_OBJECTS));
    static const unsigned aPercent[] = {1, 50, 97};
    for (size_t t = 0; t < sizeof aPercent / sizeof aPercent[0]; t++) {
        uint64_t nAllowed;
        uint64_t *aMap = filter_test_random(f, KW_BIG_OBJECTS, aPercent[t], &s, &nAllowed);
        test_objects sub = kw_subset(&all, aMap, nAllowed);
        genie_index *small = test_build(&sub, 0, test_path("big_small.genie"));
        static const uint32_t aK[] = {10, 100};
        for (size_t ik = 0; ik < 2; ik++) {
            genie_results *want = test_search(small, q, GENIE_BACKEND_CPU, aK[ik]);
            genie_backend aB[] = {test_backend(), GENIE_BACKEND_CPU, GENIE_BACKEND_CPU_IDX};
            for (int b = 0; b < 3; b++) {
                genie_results *got = filtered(idx, q, aB[b], aK[ik], f);
                char zWhat[96];
                snprintf(zWhat, sizeof zWhat, "%u%% allowed, k %u, %s", aPercent[t], aK[ik],
                         genie_backend_name(aB[b]));
                for (size_t qi = 0; qi < KW_BIG_QUERIES; qi++)
                    same_hits(got, want, aMap, qi, zWhat);
                genie_results_free(got);
            }
            genie_results_free(want);
        }
        genie_index_close(small);
        test_objects_free(&sub);
        free(aMap);
    }
    genie_filter_free(f);
    genie_queries_free(q);
    genie_index_close(idx);
    test_objects_free(&all);
}

TEST(filter_labels_and_bitmap_calls)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t kw = 7;
    for (uint64_t i = 0; i < 130; i++) {
        genie_object o = {&kw, 1, 1, 1000 + i % 100, NULL, 0}; /* labels 1000..1029 twice: duplicates allowed */
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(genie_builder_write(b, test_path("labels.genie")));
    genie_builder_free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("labels.genie"), &idx));
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, 130));
    uint64_t aLabel[] = {1005, 999, 1029, 1005};
    size_t nFound = 0;
    CHECK_OK(genie_filter_allow_labels(f, idx, aLabel, 4, &nFound));
    CHECK_EQ(nFound, 3);
    CHECK_EQ(genie_filter_count(f), 4); /* objects 5, 105 (label 1005, asked twice), 29 and 129 (1029) */
    CHECK(genie_filter_get(f, 5) && genie_filter_get(f, 105) && genie_filter_get(f, 29) && genie_filter_get(f, 129));
    CHECK(!genie_filter_get(f, 6) && !genie_filter_get(f, 130));
    genie_filter_set_all(f, 1);
    CHECK_EQ(genie_filter_count(f), 130);
    CHECK_EQ(genie_filter_objects(f), 130);
    genie_filter_free(f);
    genie_filter_free(NULL);
    /* An index without labels says so. */
    test_objects o = {NULL, NULL, 0};
    uint32_t *aKw = &kw;
    size_t n1 = 1;
    o.aKw = &aKw;
    o.aN = &n1;
    o.n = 1;
    genie_index *plain = test_build(&o, 0, test_path("plain.genie"));
    CHECK_OK(genie_filter_new(&f, 1));
    CHECK_RC(genie_filter_allow_labels(f, plain, aLabel, 1, NULL), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "no labels"));
    CHECK_RC(genie_filter_new(&f, (uint64_t)1 << 33), GENIE_ERANGE);
    genie_filter_free(f);
    genie_index_close(plain);
    genie_index_close(idx);
}

/* Text: the vocabulary of the small index differs, the counts do not. */
TEST(filter_text_equal_index_of_allowed)
{
    static const char *const azWord[] = {"ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay",
                                         "kiwi", "lark", "mole", "newt", "owl", "pig"};
    uint64_t s = 7, nDoc = 700;
    char **azDoc = malloc(nDoc * sizeof *azDoc);
    for (uint64_t i = 0; i < nDoc; i++) {
        azDoc[i] = malloc(128);
        azDoc[i][0] = 0;
        for (int w = 0, n = 1 + (int)(test_rand(&s) % 8); w < n; w++) {
            strcat(azDoc[i], azWord[test_rand(&s) % 16]);
            strcat(azDoc[i], " ");
        }
    }
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, nDoc));
    uint64_t nAllowed;
    uint64_t *aMap = filter_test_random(f, nDoc, 40, &s, &nAllowed);
    const char *azPath[] = {test_path("all.genie"), test_path("sub.genie")};
    for (int t = 0; t < 2; t++) {
        genie_text_builder *tb;
        CHECK_OK(genie_text_builder_new(&tb, NULL, NULL, 0, 0));
        for (uint64_t i = 0; i < (t ? nAllowed : nDoc); i++) {
            const char *z = azDoc[t ? aMap[i] : i];
            CHECK_OK(genie_text_builder_add(tb, z, strlen(z)));
        }
        CHECK_OK(genie_text_builder_write(tb, azPath[t]));
        genie_text_builder_free(tb);
    }
    genie_index *all, *sub;
    CHECK_OK(genie_index_open(azPath[0], &all));
    CHECK_OK(genie_index_open(azPath[1], &sub));
    genie_queries *qa, *qs;
    CHECK_OK(genie_queries_new(&qa));
    CHECK_OK(genie_queries_new(&qs));
    for (int i = 0; i < 30; i++) {
        CHECK_OK(genie_queries_add_text(qa, all, azDoc[i], strlen(azDoc[i]), 0));
        CHECK_OK(genie_queries_add_text(qs, sub, azDoc[i], strlen(azDoc[i]), 0));
    }
    genie_results *got = filtered(all, qa, test_backend(), 8, f);
    genie_results *want = test_search(sub, qs, GENIE_BACKEND_CPU, 8);
    for (size_t qi = 0; qi < 30; qi++)
        same_hits(got, want, aMap, qi, "text");
    genie_results_free(got);
    genie_results_free(want);
    genie_queries_free(qa);
    genie_queries_free(qs);
    genie_index_close(all);
    genie_index_close(sub);
    genie_filter_free(f);
    free(aMap);
    for (uint64_t i = 0; i < nDoc; i++)
        free(azDoc[i]);
    free(azDoc);
}

/* Tables: the filtered top k is the full ranking's first k allowed rows. */
TEST(filter_table_equal_filtered_full_ranking)
{
    uint64_t s = 11, nRow = 400;
    FILE *fp = fopen(test_path("t.csv"), "w");
    fprintf(fp, "x,y,color\n");
    static const char *const azColor[] = {"red", "green", "blue", "grey"};
    for (uint64_t i = 0; i < nRow; i++)
        fprintf(fp, "%u,%u,%s\n", (unsigned)(test_rand(&s) % 100), (unsigned)(test_rand(&s) % 50),
                azColor[test_rand(&s) % 4]);
    fclose(fp);
    genie_table_options to = {.bins = 16};
    CHECK_OK(genie_table_build(test_path("t.csv"), &to, NULL, test_path("t.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("t.genie"), &idx));
    genie_table *t;
    CHECK_OK(genie_table_open(idx, &t));
    CHECK_OK(genie_table_set_radius(t, NULL, 2));
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    const char *azCol[] = {"x", "y", "color"};
    for (int i = 0; i < 20; i++) {
        char zx[16], zy[16];
        snprintf(zx, sizeof zx, "%u", (unsigned)(test_rand(&s) % 100));
        snprintf(zy, sizeof zy, "%u", (unsigned)(test_rand(&s) % 50));
        const char *azVal[] = {zx, zy, azColor[i % 4]};
        CHECK_OK(genie_table_add_query(t, q, azCol, azVal, 3, 0));
    }
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, nRow));
    uint64_t nAllowed;
    uint64_t *aMap = filter_test_random(f, nRow, 25, &s, &nAllowed);
    genie_results *got = filtered(idx, q, test_backend(), 7, f);
    genie_results *every = test_search(idx, q, GENIE_BACKEND_CPU, (uint32_t)nRow);
    for (size_t qi = 0; qi < 20; qi++) {
        size_t nGot, nAll, m = 0;
        const genie_hit *a = genie_results_get(got, qi, &nGot);
        const genie_hit *e = genie_results_get(every, qi, &nAll);
        for (size_t i = 0; i < nAll && m < 7; i++)
            if (genie_filter_get(f, e[i].object)) {
                CHECK(m < nGot);
                CHECK_EQ(a[m].object, e[i].object);
                CHECK_EQ(a[m].count, e[i].count);
                m++;
            }
        CHECK_EQ(nGot, m);
    }
    genie_results_free(got);
    genie_results_free(every);
    genie_queries_free(q);
    genie_table_free(t);
    genie_index_close(idx);
    genie_filter_free(f);
    free(aMap);
}

/* Documents: filtered = the exhaustive full ranking's first k allowed, scores bit for bit. */
TEST(filter_docs_equal_filtered_full_ranking)
{
    static const char *const azWord[] = {"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"};
    uint64_t s = 5, nDoc = 600;
    genie_docs_builder *db;
    CHECK_OK(genie_docs_builder_new(&db, NULL, NULL, NULL, 0, 0));
    for (uint64_t i = 0; i < nDoc; i++) {
        char z[256] = "";
        for (int w = 0, n = 1 + (int)(test_rand(&s) % 12); w < n; w++) {
            strcat(z, azWord[test_rand(&s) % (w % 2 ? 3 : 8)]);
            strcat(z, " ");
        }
        CHECK_OK(genie_docs_builder_add(db, z, strlen(z)));
        if (i > 0)
            CHECK_OK(genie_docs_builder_add_link(db, i, test_rand(&s) % i));
    }
    CHECK_OK(genie_docs_builder_write(db, test_path("d.genie")));
    genie_docs_builder_free(db);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("d.genie"), &idx));
    genie_docs *d;
    CHECK_OK(genie_docs_open(idx, &d));
    const char *azQ[] = {"alpha", "beta gamma", "alpha beta", "zeta eta theta", "gamma", "delta alpha"};
    size_t anQ[6];
    for (int i = 0; i < 6; i++)
        anQ[i] = strlen(azQ[i]);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, nDoc));
    uint64_t nAllowed;
    uint64_t *aMap = filter_test_random(f, nDoc, 20, &s, &nAllowed);
    for (int mode = 0; mode < 2; mode++) {
        genie_docs_options all = {.k = (uint32_t)nDoc, .mode = (genie_docs_mode)mode, .exhaustive = 1, .threads = 2};
        genie_docs_results *every;
        CHECK_OK(genie_docs_search(d, azQ, anQ, 6, &all, &every));
        for (int exhaustive = 0; exhaustive < 2; exhaustive++) {
            genie_docs_options o = {.k = 5, .mode = (genie_docs_mode)mode, .exhaustive = exhaustive, .threads = 2,
                                    .backend = test_backend(), .filter = f};
            genie_docs_results *got;
            CHECK_OK(genie_docs_search(d, azQ, anQ, 6, &o, &got));
            for (size_t qi = 0; qi < 6; qi++) {
                size_t nGot, nAll, m = 0;
                const genie_docs_hit *a = genie_docs_results_get(got, qi, &nGot);
                const genie_docs_hit *e = genie_docs_results_get(every, qi, &nAll);
                for (size_t i = 0; i < nAll && m < 5; i++)
                    if (genie_filter_get(f, e[i].doc)) {
                        CHECK(m < nGot);
                        CHECK_EQ(a[m].doc, e[i].doc);
                        CHECK(memcmp(&a[m].score, &e[i].score, sizeof a[m].score) == 0);
                        m++;
                    }
                CHECK_EQ(nGot, m);
            }
            genie_docs_results_free(got);
        }
        genie_docs_results_free(every);
    }
    genie_filter_free(f);
    free(aMap);
    genie_docs_close(d);
    genie_index_close(idx);
}
