/*
 * Index parts on the build side: the split a GPU memory budget chooses
 * (genie_build_options.part_gpu_memory, parts of at most a quarter of it), and
 * every typed builder (sets, sequences, tables, vectors) cutting its index
 * into parts whose answers, through the type's own search, are those of
 * the same data built as one part.  Searches run on $GENIE_TEST_BACKEND
 * (cpu by default).
 */
#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/vectors.h"
#include "test.h"

#define N_OBJECTS 300
#define N_QUERIES 40
#define PART_OBJECTS 23
#define N_PARTS ((N_OBJECTS + PART_OBJECTS - 1) / PART_OBJECTS)

/* Random objects of 0..maxLen keywords (repeats allowed) below @p universe. */
static void random_objects(uint64_t *s, size_t n, size_t maxLen, uint32_t universe, test_objects *o)
{
    o->n = n;
    o->aKw = malloc(n * sizeof *o->aKw);
    o->aN = malloc(n * sizeof *o->aN);
    CHECK(o->aKw && o->aN);
    for (size_t i = 0; i < n; i++) {
        o->aN[i] = test_rand(s) % (maxLen + 1);
        o->aKw[i] = malloc((o->aN[i] + 1) * sizeof(uint32_t));
        CHECK(o->aKw[i] != NULL);
        for (size_t j = 0; j < o->aN[i]; j++)
            o->aKw[i][j] = (uint32_t)(test_rand(s) % universe);
    }
}

/* Postings of object @p i: its distinct keywords. */
static uint64_t distinct_keywords(const test_objects *o, size_t i)
{
    uint64_t n = 0;
    for (size_t j = 0; j < o->aN[i]; j++) {
        int seen = 0;
        for (size_t t = 0; t < j && !seen; t++)
            seen = o->aKw[i][t] == o->aKw[i][j];
        n += !seen;
    }
    return n;
}

/* The documented split: consecutive objects while their postings fit @p partBytes, at least one per part. */
static uint32_t expected_parts(const test_objects *o, uint64_t partBytes)
{
    uint32_t nParts = 1;
    uint64_t nInPart = 0, bytes = 0;
    for (size_t i = 0; i < o->n; i++) {
        uint64_t b = 4 * distinct_keywords(o, i);
        if (nInPart > 0 && bytes + b > partBytes) {
            nParts++;
            nInPart = 0;
            bytes = 0;
        }
        nInPart++;
        bytes += b;
    }
    return nParts;
}

static genie_index *build_budget(const test_objects *o, uint64_t gpuMemory, uint64_t partObjects, uint64_t partBytes)
{
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.part_gpu_memory = gpuMemory;
    opt.part_objects = partObjects;
    opt.part_bytes = partBytes;
    return test_build_with(o, &opt, test_path("budget.genie"));
}

/* Every part within @p partBytes of postings unless it holds one object; parts cover all objects. */
static void check_part_sizes(const genie_index *idx, uint64_t partBytes, uint64_t nObjects)
{
    uint64_t next = 0;
    for (uint32_t p = 0; p < genie_index_parts(idx); p++) {
        genie_part_info pi;
        CHECK_OK(genie_index_part_info(idx, p, &pi));
        CHECK_EQ(pi.first_object, next);
        if (pi.n_postings * 4 > partBytes && pi.n_objects != 1)
            test_fail_at(__FILE__, __LINE__, "part %u: %llu objects, %llu bytes of postings > %llu", p,
                         (unsigned long long)pi.n_objects, (unsigned long long)(pi.n_postings * 4),
                         (unsigned long long)partBytes);
        next += pi.n_objects;
    }
    CHECK_EQ(next, nObjects);
}

/* part_gpu_memory alone sets parts of gpu_memory / 4 bytes (at least 4); a part option wins over it. */
TEST(parts_build_gpu_memory_split)
{
    uint64_t s = 2024;
    test_objects objs;
    random_objects(&s, 500, 12, 100, &objs);
    static const uint64_t aBudget[] = {1, 16, 17, 100, 256, 1000, 4096, 1ull << 40};
    for (size_t i = 0; i < sizeof aBudget / sizeof *aBudget; i++) {
        uint64_t partBytes = aBudget[i] / 4 > 4 ? aBudget[i] / 4 : 4;
        genie_index *idx = build_budget(&objs, aBudget[i], 0, 0);
        if (genie_index_parts(idx) != expected_parts(&objs, partBytes))
            test_fail_at(__FILE__, __LINE__, "gpu_memory %llu: %u parts, expected %u",
                         (unsigned long long)aBudget[i], genie_index_parts(idx), expected_parts(&objs, partBytes));
        check_part_sizes(idx, partBytes, objs.n);
        genie_index_close(idx);
    }
    /* The cases above cut many parts and one part, so the rule is exercised both ways. */
    CHECK(expected_parts(&objs, 1000 / 4) > 10);
    CHECK_EQ(expected_parts(&objs, (1ull << 40) / 4), 1);

    /* Without a budget: one part (1 GiB of postings). */
    genie_index *idx = build_budget(&objs, 0, 0, 0);
    CHECK_EQ(genie_index_parts(idx), 1);
    genie_index_close(idx);
    /* An explicit part size wins over the budget. */
    idx = build_budget(&objs, 256, 50, 0);
    CHECK_EQ(genie_index_parts(idx), 10);
    genie_index_close(idx);
    idx = build_budget(&objs, 256, 0, 4096);
    CHECK_EQ(genie_index_parts(idx), expected_parts(&objs, 4096));
    CHECK(expected_parts(&objs, 4096) != expected_parts(&objs, 64));
    check_part_sizes(idx, 4096, objs.n);
    genie_index_close(idx);

    /* The budget's parts answer as one part. */
    genie_index *one = build_budget(&objs, 0, 0, 0);
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.part_gpu_memory = 512;
    genie_index *many = test_build_with(&objs, &opt, test_path("many.genie"));
    CHECK(genie_index_parts(many) > 1);
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (int i = 0; i < N_QUERIES; i++) {
        genie_item aItem[3];
        for (int j = 0; j < 3; j++) {
            uint32_t lo = (uint32_t)(test_rand(&s) % 100);
            aItem[j] = (genie_item){lo, lo + (uint32_t)(test_rand(&s) % 4), 1 + (uint32_t)(test_rand(&s) % 3)};
        }
        CHECK_OK(genie_queries_add(q, aItem, 3, 0));
    }
    genie_results *r1 = test_search(one, q, test_backend(), 9), *r2 = test_search(many, q, test_backend(), 9);
    test_same_results(r1, r2, "gpu_memory split");
    genie_results_free(r1);
    genie_results_free(r2);
    genie_queries_free(q);
    genie_index_close(one);
    genie_index_close(many);
    test_objects_free(&objs);
}

static genie_build_options part_options(uint64_t partObjects)
{
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.part_objects = partObjects;
    return opt;
}

static genie_index *open_checked(const char *path, uint32_t nParts)
{
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx));
    CHECK_EQ(genie_index_parts(idx), nParts);
    return idx;
}

/* A line of 0..maxWords words "w<j>" from @p nVocab, space separated. */
static size_t random_words(uint64_t *s, char *z, size_t cap, int maxWords, uint32_t nVocab)
{
    size_t n = 0;
    int nWord = (int)(test_rand(s) % (uint64_t)(maxWords + 1));
    for (int w = 0; w < nWord; w++)
        n += (size_t)snprintf(z + n, cap - n, "%sw%u", w ? " " : "", (unsigned)(test_rand(s) % nVocab));
    z[n] = '\0';
    return n;
}

/* Sets: MinHash candidates re-ranked by Jaccard, one part vs parts of PART_OBJECTS. */
TEST(parts_build_sets_identical)
{
    uint64_t s = 11;
    genie_set_params p = {32, 5, 0};
    genie_build_options aOpt[2] = {part_options(0), part_options(PART_OBJECTS)};
    const char *azPath[2] = {test_path("one.genie"), test_path("many.genie")};
    char aLine[N_OBJECTS][160];
    size_t anLine[N_OBJECTS];
    for (int i = 0; i < N_OBJECTS; i++)
        anLine[i] = random_words(&s, aLine[i], sizeof aLine[i], 8, 40);
    for (int v = 0; v < 2; v++) {
        genie_set_builder *sb;
        CHECK_OK(genie_set_builder_new(&sb, &aOpt[v], &p));
        for (int i = 0; i < N_OBJECTS; i++)
            CHECK_OK(genie_set_builder_add(sb, aLine[i], anLine[i]));
        CHECK_OK(genie_set_builder_write(sb, azPath[v]));
        genie_set_builder_free(sb);
    }
    genie_index *one = open_checked(azPath[0], 1), *many = open_checked(azPath[1], N_PARTS);
    char aQuery[N_QUERIES][160];
    const char *azQuery[N_QUERIES];
    size_t anQuery[N_QUERIES];
    for (int i = 0; i < N_QUERIES; i++) {
        anQuery[i] = random_words(&s, aQuery[i], sizeof aQuery[i], 6, 40);
        azQuery[i] = aQuery[i];
    }
    genie_set_options so = {.k = 5, .candidates = 20};
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    genie_set_results *r1, *r2;
    CHECK_OK(genie_set_search(one, azQuery, anQuery, N_QUERIES, &so, &opt, &r1));
    CHECK_OK(genie_set_search(many, azQuery, anQuery, N_QUERIES, &so, &opt, &r2));
    size_t nHits = 0;
    for (size_t i = 0; i < N_QUERIES; i++) {
        size_t n1, n2;
        const genie_set_hit *h1 = genie_set_results_get(r1, i, &n1), *h2 = genie_set_results_get(r2, i, &n2);
        CHECK_EQ(n1, n2);
        if (n1 && memcmp(h1, h2, n1 * sizeof *h1) != 0)
            test_fail_at(__FILE__, __LINE__, "sets: query %zu differs between one part and %d parts", i, N_PARTS);
        nHits += n1;
    }
    CHECK(nHits > N_QUERIES);
    genie_set_results_free(r1);
    genie_set_results_free(r2);
    genie_index_close(one);
    genie_index_close(many);
}

/* Sequences: ordered n-gram candidates verified by edit distance, certified rounds included. */
TEST(parts_build_sequences_identical)
{
    uint64_t s = 12;
    genie_build_options aOpt[2] = {part_options(0), part_options(PART_OBJECTS)};
    const char *azPath[2] = {test_path("one.genie"), test_path("many.genie")};
    char aStr[N_OBJECTS][16];
    size_t anStr[N_OBJECTS];
    for (int i = 0; i < N_OBJECTS; i++) {
        anStr[i] = test_rand(&s) % 13;
        for (size_t j = 0; j < anStr[i]; j++)
            aStr[i][j] = "abcd"[test_rand(&s) % 4];
    }
    for (int v = 0; v < 2; v++) {
        genie_seq_builder *sb;
        CHECK_OK(genie_seq_builder_new(&sb, &aOpt[v], 2));
        for (int i = 0; i < N_OBJECTS; i++)
            CHECK_OK(genie_seq_builder_add(sb, aStr[i], anStr[i]));
        CHECK_OK(genie_seq_builder_write(sb, azPath[v]));
        genie_seq_builder_free(sb);
    }
    genie_index *one = open_checked(azPath[0], 1), *many = open_checked(azPath[1], N_PARTS);
    char aQuery[N_QUERIES][16];
    const char *azQuery[N_QUERIES];
    size_t anQuery[N_QUERIES];
    for (int i = 0; i < N_QUERIES; i++) {
        anQuery[i] = 1 + test_rand(&s) % 12;
        for (size_t j = 0; j < anQuery[i]; j++)
            aQuery[i][j] = "abcd"[test_rand(&s) % 4];
        azQuery[i] = aQuery[i];
    }
    /* One round, then rounds raising K with the fallback, then without. */
    static const genie_seq_options aSo[] = {{.k = 3, .candidates = 8},
                                            {.k = 3, .candidates = 8, .max_candidates = 128},
                                            {.k = 3, .candidates = 8, .max_candidates = 128, .certify_only = 1}};
    for (size_t v = 0; v < sizeof aSo / sizeof *aSo; v++) {
        genie_search_options opt;
        memset(&opt, 0, sizeof opt);
        opt.backend = test_backend();
        genie_seq_results *r1, *r2;
        CHECK_OK(genie_seq_search(one, azQuery, anQuery, N_QUERIES, &aSo[v], &opt, &r1));
        CHECK_OK(genie_seq_search(many, azQuery, anQuery, N_QUERIES, &aSo[v], &opt, &r2));
        size_t nHits = 0;
        for (size_t i = 0; i < N_QUERIES; i++) {
            size_t n1, n2;
            int c1, c2;
            uint32_t k1, k2;
            const genie_seq_hit *h1 = genie_seq_results_get(r1, i, &n1, &c1, &k1);
            const genie_seq_hit *h2 = genie_seq_results_get(r2, i, &n2, &c2, &k2);
            CHECK_EQ(n1, n2);
            CHECK_EQ(c1, c2);
            CHECK_EQ(k1, k2);
            if (n1 && memcmp(h1, h2, n1 * sizeof *h1) != 0)
                test_fail_at(__FILE__, __LINE__, "sequences: query %zu differs between one part and %d parts", i,
                             N_PARTS);
            nHits += n1;
        }
        CHECK(nHits > N_QUERIES);
        genie_seq_results_free(r1);
        genie_seq_results_free(r2);
    }
    genie_index_close(one);
    genie_index_close(many);
}

/* Tables: numeric ranges and categories, one part vs parts of PART_OBJECTS. */
TEST(parts_build_table_identical)
{
    static const char *const azColor[] = {"red", "green", "blue", "grey"};
    static const char *const azCol[] = {"x", "y", "color"};
    uint64_t s = 13;
    FILE *f = fopen(test_path("t.csv"), "w");
    CHECK(f != NULL);
    fputs("x,y,color\n", f);
    for (int i = 0; i < N_OBJECTS; i++)
        fprintf(f, "%d,%.3f,%s\n", (int)(test_rand(&s) % 200), (double)(test_rand(&s) % 800) / 8,
                azColor[test_rand(&s) % 4]);
    fclose(f);
    genie_build_options aOpt[2] = {part_options(0), part_options(PART_OBJECTS)};
    const char *azPath[2] = {test_path("one.genie"), test_path("many.genie")};
    genie_table_options topt = {.bins = 32};
    genie_index *aIdx[2];
    genie_queries *aQ[2];
    for (int v = 0; v < 2; v++) {
        CHECK_OK(genie_table_build(test_path("t.csv"), &topt, &aOpt[v], azPath[v]));
        aIdx[v] = open_checked(azPath[v], v ? N_PARTS : 1);
        CHECK_OK(genie_queries_new(&aQ[v]));
    }
    for (int i = 0; i < N_QUERIES; i++) {
        char zX[16], zY[16];
        snprintf(zX, sizeof zX, "%d", (int)(test_rand(&s) % 200));
        snprintf(zY, sizeof zY, "%.3f", (double)(test_rand(&s) % 800) / 8);
        const char *azVal[] = {zX, zY, azColor[test_rand(&s) % 4]};
        size_t first = i % 3; /* queries on all three columns, the last two, the last one */
        for (int v = 0; v < 2; v++) {
            genie_table *t;
            CHECK_OK(genie_table_open(aIdx[v], &t));
            CHECK_OK(genie_table_set_radius(t, NULL, 2));
            CHECK_OK(genie_table_add_query(t, aQ[v], azCol + first, azVal + first, 3 - first, 0));
            genie_table_free(t);
        }
    }
    genie_results *r1 = test_search(aIdx[0], aQ[0], test_backend(), 7);
    genie_results *r2 = test_search(aIdx[1], aQ[1], test_backend(), 7);
    test_same_results(r1, r2, "table");
    size_t nHits = 0;
    for (size_t i = 0; i < N_QUERIES; i++) {
        size_t n;
        genie_results_get(r1, i, &n);
        nHits += n;
    }
    CHECK_EQ(nHits, (size_t)N_QUERIES * 7);
    genie_results_free(r1);
    genie_results_free(r2);
    for (int v = 0; v < 2; v++) {
        genie_queries_free(aQ[v]);
        genie_index_close(aIdx[v]);
    }
}

static void random_vectors(uint64_t *s, uint64_t n, uint32_t dim, genie_vectors *v)
{
    v->n = n;
    v->dim = dim;
    v->data = malloc((size_t)n * dim * sizeof *v->data);
    CHECK(v->data != NULL);
    for (uint64_t i = 0; i < n * dim; i++)
        v->data[i] = (float)(test_rand(s) % 1000) / 100.0f - 5.0f;
}

/* Vectors: LSH candidates re-ranked by distance, l2 and cosine, one part vs parts of PART_OBJECTS. */
TEST(parts_build_vectors_identical)
{
    uint64_t s = 14;
    const uint32_t dim = 8, k = 5;
    genie_vectors base, q;
    random_vectors(&s, N_OBJECTS, dim, &base);
    random_vectors(&s, N_QUERIES, dim, &q);
    static const genie_metric aMetric[] = {GENIE_METRIC_L2, GENIE_METRIC_COSINE};
    genie_build_options aOpt[2] = {part_options(0), part_options(PART_OBJECTS)};
    const char *azPath[2] = {test_path("one.genie"), test_path("many.genie")};
    genie_neighbor *aOut[2];
    uint32_t *aN[2];
    for (int v = 0; v < 2; v++) {
        aOut[v] = calloc((size_t)N_QUERIES * k, sizeof *aOut[v]);
        aN[v] = calloc(N_QUERIES, sizeof *aN[v]);
        CHECK(aOut[v] && aN[v]);
    }
    for (size_t im = 0; im < sizeof aMetric / sizeof *aMetric; im++) {
        genie_lsh_params p = {.metric = aMetric[im], .m = 16, .bits = 4, .seed = 3};
        for (int v = 0; v < 2; v++) {
            CHECK_OK(genie_vectors_build(&base, &p, &aOpt[v], azPath[v]));
            genie_index *idx = open_checked(azPath[v], v ? N_PARTS : 1);
            genie_vsearch_options o;
            memset(&o, 0, sizeof o);
            o.k = k;
            o.candidates = 20;
            o.radius = aMetric[im] == GENIE_METRIC_L2 ? 1 : 0;
            o.search.backend = test_backend();
            CHECK_OK(genie_vectors_search(idx, &q, &o, aOut[v], aN[v], NULL));
            genie_index_close(idx);
        }
        uint64_t nHits = 0;
        for (uint32_t i = 0; i < N_QUERIES; i++) {
            CHECK_EQ(aN[0][i], aN[1][i]);
            if (memcmp(aOut[0] + (size_t)i * k, aOut[1] + (size_t)i * k, aN[0][i] * sizeof *aOut[0]) != 0)
                test_fail_at(__FILE__, __LINE__, "%s: query %u differs between one part and %d parts",
                             genie_metric_name(aMetric[im]), i, N_PARTS);
            nHits += aN[0][i];
        }
        CHECK(nHits > N_QUERIES);
    }
    for (int v = 0; v < 2; v++) {
        free(aOut[v]);
        free(aN[v]);
    }
    genie_vectors_free(&base);
    genie_vectors_free(&q);
}
