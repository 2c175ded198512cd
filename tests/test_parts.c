/*
 * Index parts (multiple loadings, Zhou et al. (GENIE) III-D): an index cut into many
 * parts must answer byte for byte as the same index in one part, and both
 * as a naive count over the object sets; ties across a part boundary keep
 * the smaller id first; damaged multi-part files fail cleanly, naming the
 * part.  The backend under test is $GENIE_TEST_BACKEND (cpu by default),
 * so on a GPU machine the same cases stream parts through the device.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "genie/text.h"
#include "test.h"

/* Build @p objs into @p path with the given part sizes and open it. */
static genie_index *build_parts(const test_objects *objs, uint32_t L, uint64_t partObjects, uint64_t partBytes,
                                const char *path)
{
    genie_build_options opt = {.sublist_length = L, .part_objects = partObjects, .part_bytes = partBytes};
    return test_build_with(objs, &opt, path);
}

static void random_objects(uint64_t *s, size_t n, size_t maxLen, uint32_t universe, int skewed, test_objects *o)
{
    o->n = n;
    o->aKw = malloc(n * sizeof *o->aKw);
    o->aN = malloc(n * sizeof *o->aN);
    for (size_t i = 0; i < n; i++) {
        o->aN[i] = test_rand(s) % (maxLen + 1);
        o->aKw[i] = malloc((o->aN[i] + 1) * sizeof(uint32_t));
        for (size_t j = 0; j < o->aN[i]; j++) {
            double u = (double)(test_rand(s) >> 11) / 9007199254740992.0;
            o->aKw[i][j] = (uint32_t)((skewed ? u * u * u : u) * universe);
        }
    }
}

/* Random queries, kept as items too for the oracle. */
typedef struct query_set {
    genie_queries *q;
    genie_item aItem[64][8];
    size_t aN[64];
    uint32_t aMin[64];
    size_t n;
} query_set;

static void random_queries(uint64_t *s, size_t nq, uint32_t universe, query_set *qs)
{
    CHECK(nq <= 64);
    CHECK_OK(genie_queries_new(&qs->q));
    qs->n = nq;
    for (size_t i = 0; i < nq; i++) {
        size_t n = test_rand(s) % 8;
        for (size_t j = 0; j < n; j++) {
            uint32_t lo = (uint32_t)(test_rand(s) % universe);
            uint32_t w = (test_rand(s) & 1) ? 0 : (uint32_t)(test_rand(s) % (universe / 8 + 1));
            qs->aItem[i][j] = (genie_item){lo, lo + w, 1 + (uint32_t)(test_rand(s) % 4)};
        }
        qs->aN[i] = n;
        qs->aMin[i] = (test_rand(s) % 5 == 0) ? 2 : 0;
        CHECK_OK(genie_queries_add(qs->q, qs->aItem[i], n, qs->aMin[i]));
    }
}

/* Naive MC of every object for query @p qi, sorted: the oracle's top-k. */
static size_t naive_topk(const test_objects *objs, const genie_item *aItem, size_t nItem, uint32_t minCount,
                         uint32_t k, genie_hit *aOut)
{
    size_t n = 0;
    genie_hit *aAll = malloc((objs->n + 1) * sizeof *aAll);
    for (size_t o = 0; o < objs->n; o++) {
        uint64_t mc = 0;
        for (size_t i = 0; i < objs->aN[o]; i++) {
            int seen = 0;
            for (size_t j = 0; j < i; j++)
                seen |= objs->aKw[o][j] == objs->aKw[o][i];
            for (size_t t = 0; t < nItem && !seen; t++)
                if (objs->aKw[o][i] >= aItem[t].lo && objs->aKw[o][i] <= aItem[t].hi)
                    mc += aItem[t].weight;
        }
        if (mc >= (minCount ? minCount : 1))
            aAll[n++] = (genie_hit){(uint32_t)o, (uint32_t)mc};
    }
    /* Selection sort of the first k: count desc, id asc (ids already ascending). */
    size_t nOut = n < k ? n : k;
    for (size_t i = 0; i < nOut; i++) {
        size_t best = i;
        for (size_t j = i + 1; j < n; j++)
            if (aAll[j].count > aAll[best].count)
                best = j;
        genie_hit t = aAll[best];
        memmove(aAll + i + 1, aAll + i, (best - i) * sizeof *aAll);
        aAll[i] = t;
        aOut[i] = aAll[i];
    }
    free(aAll);
    return nOut;
}

/* One random case: one-part vs several part sizes vs the naive oracle. */
static void parts_case(uint64_t seed, size_t nObj, size_t maxLen, uint32_t universe, int skewed)
{
    uint64_t s = seed;
    test_objects objs;
    random_objects(&s, nObj, maxLen, universe, skewed, &objs);
    uint32_t L = 1 + (uint32_t)(test_rand(&s) % 8);
    genie_index *one = build_parts(&objs, L, 0, 0, test_path("one.genie"));
    CHECK_EQ(genie_index_parts(one), 1);
    const uint64_t aPartObjects[] = {1, 2, 7, nObj / 3 + 1};
    query_set qs;
    random_queries(&s, 40, universe, &qs);
    genie_queries *q = qs.q;
    genie_backend b = test_backend();
    static const uint32_t aK[] = {1, 3, 10, 100000};
    for (size_t ik = 0; ik < sizeof aK / sizeof *aK; ik++) {
        genie_results *r1 = test_search(one, q, b, aK[ik]);
        /* The one-part answer against the oracle. */
        genie_hit *aWant = malloc((objs.n + 1) * sizeof *aWant);
        for (size_t i = 0; i < qs.n; i++) {
            size_t nGot, nWant = naive_topk(&objs, qs.aItem[i], qs.aN[i], qs.aMin[i], aK[ik], aWant);
            const genie_hit *aGot = genie_results_get(r1, i, &nGot);
            CHECK_EQ(nGot, nWant);
            for (size_t h = 0; h < nWant; h++)
                if (aGot[h].object != aWant[h].object || aGot[h].count != aWant[h].count)
                    test_fail_at(__FILE__, __LINE__, "query %zu rank %zu: got %u:%u, oracle %u:%u", i, h + 1,
                                 aGot[h].object, aGot[h].count, aWant[h].object, aWant[h].count);
        }
        free(aWant);
        for (size_t ip = 0; ip < sizeof aPartObjects / sizeof *aPartObjects + 1; ip++) {
            genie_index *many;
            if (ip < sizeof aPartObjects / sizeof *aPartObjects)
                many = build_parts(&objs, L, aPartObjects[ip], 0, test_path("many.genie"));
            else
                many = build_parts(&objs, L, 0, 4 * maxLen + 4, test_path("many.genie"));
            if (ip < sizeof aPartObjects / sizeof *aPartObjects)
                CHECK_EQ(genie_index_parts(many), (nObj + aPartObjects[ip] - 1) / aPartObjects[ip]);
            else
                CHECK(genie_index_parts(many) > 1);
            genie_results *r2 = test_search(many, q, b, aK[ik]);
            test_same_results(r1, r2, genie_backend_name(b));
            genie_results_free(r2);
            genie_index_close(many);
        }
        genie_results_free(r1);
    }
    genie_queries_free(q);
    genie_index_close(one);
    test_objects_free(&objs);
}

TEST(parts_random_identical)
{
    for (uint64_t seed = 1; seed <= 6; seed++)
        parts_case(seed * 7919, 30 + seed * 40, 10, 200, 0);
}

TEST(parts_random_skewed_identical)
{
    for (uint64_t seed = 1; seed <= 4; seed++)
        parts_case(seed * 104729, 100 + seed * 100, 24, 400, 1);
}

/* Every object has the same keywords: one run of tied counts over all parts. */
TEST(parts_tie_run_across_boundaries)
{
    uint32_t aKw[] = {5, 9, 12};
    test_objects objs = {malloc(20 * sizeof(uint32_t *)), malloc(20 * sizeof(size_t)), 20};
    for (size_t i = 0; i < objs.n; i++) {
        objs.aN[i] = i == 13 ? 1 : 3; /* object 13 counts less for the query below */
        objs.aKw[i] = malloc(3 * sizeof(uint32_t));
        memcpy(objs.aKw[i], aKw, sizeof aKw);
    }
    genie_index *one = build_parts(&objs, 2, 0, 0, test_path("one.genie"));
    genie_index *many = build_parts(&objs, 2, 3, 0, test_path("many.genie"));
    CHECK_EQ(genie_index_parts(many), 7);
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item it = {0, 100, 1};
    CHECK_OK(genie_queries_add(q, &it, 1, 0));
    static const uint32_t aK[] = {1, 2, 3, 4, 5, 13, 19, 20, 25};
    for (size_t ik = 0; ik < sizeof aK / sizeof *aK; ik++) {
        genie_results *r1 = test_search(one, q, test_backend(), aK[ik]);
        genie_results *r2 = test_search(many, q, test_backend(), aK[ik]);
        test_same_results(r1, r2, "tie run");
        size_t n;
        const genie_hit *h = genie_results_get(r2, 0, &n);
        CHECK_EQ(n, aK[ik] < 20 ? aK[ik] : 20);
        /* Ties: ids ascending, skipping 13, which comes last with count 1. */
        uint32_t want = 0;
        for (size_t i = 0; i < n; i++) {
            if (want == 13)
                want++;
            if (i == 19) {
                CHECK_EQ(h[i].object, 13);
                CHECK_EQ(h[i].count, 1);
            } else {
                CHECK_EQ(h[i].object, want);
                CHECK_EQ(h[i].count, 3);
                want++;
            }
        }
        genie_results_free(r1);
        genie_results_free(r2);
    }
    genie_queries_free(q);
    genie_index_close(one);
    genie_index_close(many);
    test_objects_free(&objs);
}

/* The parts a build makes, as genie_index_part_info() reports them. */
TEST(parts_layout_and_options)
{
    uint64_t s = 42;
    test_objects objs;
    random_objects(&s, 300, 12, 100, 0, &objs);
    genie_index *idx = build_parts(&objs, 4, 0, 64, test_path("b.genie"));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    uint64_t next = 0, nPostings = 0, nSublists = 0, maxKw = 0, sumKw = 0;
    for (uint32_t p = 0; p < genie_index_parts(idx); p++) {
        genie_part_info pi;
        CHECK_OK(genie_index_part_info(idx, p, &pi));
        CHECK_EQ(pi.first_object, next);
        CHECK(pi.n_objects >= 1);
        /* At most 64 bytes of postings, unless one object alone is larger. */
        CHECK(pi.n_postings * 4 <= 64 || pi.n_objects == 1);
        CHECK(pi.offset + pi.bytes <= info.file_size);
        next += pi.n_objects;
        nPostings += pi.n_postings;
        nSublists += pi.n_sublists;
        sumKw += pi.n_keywords;
        if (pi.n_keywords > maxKw)
            maxKw = pi.n_keywords;
    }
    CHECK_EQ(next, 300);
    CHECK_EQ(nPostings, info.n_postings);
    CHECK_EQ(nSublists, info.n_sublists);
    CHECK(info.n_keywords >= maxKw && info.n_keywords <= sumKw);
    genie_part_info pi;
    CHECK_RC(genie_index_part_info(idx, genie_index_parts(idx), &pi), GENIE_EINVAL);
    genie_index_close(idx);
    /* Both sizes at once is an error; a part size above the object count is one part. */
    genie_build_options both = {.part_objects = 10, .part_bytes = 1000};
    genie_builder *b;
    CHECK_RC(genie_builder_new(&b, &both), GENIE_EINVAL);
    idx = build_parts(&objs, 4, 1000, 0, test_path("c.genie"));
    CHECK_EQ(genie_index_parts(idx), 1);
    genie_index_close(idx);
    test_objects_free(&objs);
    /* An empty index is one part with no objects. */
    test_objects none = {NULL, NULL, 0};
    idx = build_parts(&none, 4, 1, 0, test_path("e.genie"));
    CHECK_EQ(genie_index_parts(idx), 1);
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item it = {0, 10, 1};
    CHECK_OK(genie_queries_add(q, &it, 1, 0));
    genie_results *r = test_search(idx, q, test_backend(), 5);
    size_t n;
    genie_results_get(r, 0, &n);
    CHECK_EQ(n, 0);
    genie_results_free(r);
    genie_queries_free(q);
    genie_index_close(idx);
}

/* Text: the fortune sample and generated documents, text queries, stored records. */
TEST(parts_text_identical)
{
    static const char *const azWord[] = {"cat", "dog", "mat", "sun", "moon", "tea", "fox", "owl", "sea",
                                         "sky", "old", "new", "red", "big", "wise", "fool"};
    FILE *f = fopen(test_path("docs.txt"), "w");
    CHECK(f != NULL);
    uint64_t s = 3;
    for (int d = 0; d < 400; d++) {
        int n = 1 + (int)(test_rand(&s) % 9);
        for (int w = 0; w < n; w++)
            fprintf(f, "%s%s", w ? " " : "", azWord[test_rand(&s) % 16]);
        fputs("\n%\n", f);
    }
    fclose(f);
    const char *in[] = {GENIE_TEST_SOURCE_DIR "/golden/data/cookies.txt", test_path("docs.txt")};
    genie_input_options io = {.type = GENIE_TYPE_TEXT, .delimiter = "%", .store_records = 1};
    genie_build_options one = {0}, many = {.part_objects = 13};
    CHECK_OK(genie_build_files(in, 2, &io, &one, test_path("one.genie")));
    CHECK_OK(genie_build_files(in, 2, &io, &many, test_path("many.genie")));
    genie_index *a, *b;
    CHECK_OK(genie_index_open(test_path("one.genie"), &a));
    CHECK_OK(genie_index_open(test_path("many.genie"), &b));
    CHECK_EQ(genie_index_parts(b), (403 + 12) / 13);
    genie_index_info ia, ib;
    genie_index_get_info(a, &ia);
    genie_index_get_info(b, &ib);
    CHECK_EQ(ia.n_objects, ib.n_objects);
    CHECK_EQ(ia.n_keywords, ib.n_keywords);
    CHECK_EQ(ia.n_postings, ib.n_postings);
    genie_queries *qa, *qb;
    CHECK_OK(genie_queries_new(&qa));
    CHECK_OK(genie_queries_new(&qb));
    for (int d = 0; d < 60; d++) {
        char z[128];
        snprintf(z, sizeof z, "%s %s the %s", azWord[test_rand(&s) % 16], azWord[test_rand(&s) % 16],
                 azWord[test_rand(&s) % 16]);
        CHECK_OK(genie_queries_add_text(qa, a, z, strlen(z), 0));
        CHECK_OK(genie_queries_add_text(qb, b, z, strlen(z), 0));
    }
    for (uint32_t k = 1; k <= 64; k *= 4) {
        genie_results *ra = test_search(a, qa, test_backend(), k), *rb = test_search(b, qb, test_backend(), k);
        test_same_results(ra, rb, "text");
        /* Records are whole-index data: the same for the same global id. */
        size_t n;
        const genie_hit *h = genie_results_get(rb, 0, &n);
        for (size_t i = 0; i < n; i++) {
            const char *za, *zb;
            size_t la, lb;
            CHECK_OK(genie_index_record(a, h[i].object, &za, &la));
            CHECK_OK(genie_index_record(b, h[i].object, &zb, &lb));
            CHECK(la == lb && memcmp(za, zb, la) == 0);
        }
        genie_results_free(ra);
        genie_results_free(rb);
    }
    genie_queries_free(qa);
    genie_queries_free(qb);
    genie_index_close(a);
    genie_index_close(b);
}

/* A small three-part index with labels: every part and global section present. */
static unsigned char *small_parts_index(size_t *pn)
{
    genie_build_options opt = {.sublist_length = 2, .part_objects = 2};
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, &opt));
    uint32_t aKw[5][3] = {{1, 2, 3}, {2, 3, 4}, {3, 7, 9}, {1, 9, 10}, {4, 5, 6}};
    for (size_t i = 0; i < 5; i++) {
        genie_object o = {aKw[i], 3, 1, 100 + i, "r", 1};
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(genie_builder_write(b, test_path("small.genie")));
    genie_builder_free(b);
    return test_read_file(test_path("small.genie"), pn);
}

TEST(parts_corrupt_truncate_and_flip)
{
    size_t n;
    unsigned char *p = small_parts_index(&n);
    const char *path = test_path("bad.genie");
    genie_index *idx = NULL;
    test_write_file(path, p, n);
    CHECK_OK(genie_index_open(path, &idx));
    CHECK_EQ(genie_index_parts(idx), 3);
    genie_part_info pi;
    CHECK_OK(genie_index_part_info(idx, 1, &pi));
    genie_index_close(idx);
    for (size_t len = 0; len < n; len++) {
        test_write_file(path, p, len);
        genie_status rc = genie_index_open(path, &idx);
        if (rc == GENIE_OK)
            test_fail_at(__FILE__, __LINE__, "file cut at %zu loaded", len);
        CHECK(rc == GENIE_ECORRUPT || rc == GENIE_EFORMAT);
        CHECK(strstr(genie_last_error(), path) != NULL);
    }
    int namedPart = 0;
    for (size_t i = 0; i < n; i++) {
        p[i] ^= 0x5a;
        test_write_file(path, p, n);
        genie_status rc = genie_index_open(path, &idx);
        if (rc == GENIE_OK)
            test_fail_at(__FILE__, __LINE__, "byte %zu flipped: loaded", i);
        CHECK(rc == GENIE_ECORRUPT || rc == GENIE_EFORMAT);
        CHECK(strstr(genie_last_error(), path) != NULL);
        /* A byte inside part 1's sections is reported as part 1's. */
        if (i >= pi.offset && i < pi.offset + pi.bytes && strstr(genie_last_error(), "part 1, section "))
            namedPart++;
        p[i] ^= 0x5a;
    }
    CHECK(namedPart > 0);
    free(p);
}

typedef struct search_thread {
    genie_index *idx;
    genie_queries *q;
    genie_backend backend;
    genie_results *r;
    genie_status rc;
} search_thread;

static void *search_main(void *p)
{
    search_thread *t = p;
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = t->backend;
    opt.k = 7;
    opt.threads = 1;
    t->rc = genie_search(t->idx, t->q, &opt, &t->r);
    return NULL;
}

/* Searches from several threads at once on one multi-part index agree; stats report the parts. */
TEST(parts_threads_and_stats)
{
    uint64_t s = 77;
    test_objects objs;
    random_objects(&s, 400, 10, 150, 1, &objs);
    genie_index *one = build_parts(&objs, 3, 0, 0, test_path("one.genie"));
    genie_index *many = build_parts(&objs, 3, 37, 0, test_path("many.genie"));
    query_set qs;
    random_queries(&s, 64, 150, &qs);
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    opt.k = 7;
    genie_results *rOne, *rMany;
    genie_search_stats st;
    CHECK_OK(genie_search_with_stats(one, qs.q, &opt, &rOne, &st));
    CHECK_EQ(st.n_parts, 1);
    CHECK_OK(genie_search_with_stats(many, qs.q, &opt, &rMany, &st));
    CHECK_EQ(st.n_parts, 11);
    CHECK(st.total_seconds >= st.part_seconds + st.merge_seconds);
    test_same_results(rOne, rMany, "stats");
    search_thread aT[4];
    pthread_t aId[4];
    for (int i = 0; i < 4; i++) {
        aT[i] = (search_thread){many, qs.q, test_backend(), NULL, GENIE_OK};
        CHECK(pthread_create(&aId[i], NULL, search_main, &aT[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(aId[i], NULL);
        CHECK_OK(aT[i].rc);
        test_same_results(rOne, aT[i].r, "concurrent");
        genie_results_free(aT[i].r);
    }
    genie_results_free(rOne);
    genie_results_free(rMany);
    genie_queries_free(qs.q);
    genie_index_close(one);
    genie_index_close(many);
    test_objects_free(&objs);
}
