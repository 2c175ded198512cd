/*
 * Exact set similarity over a live index with a filter: the file's sets,
 * sets added through the writer (carried with their element lists), some
 * of both deleted, and a filter allowing a random part of the rest.  The
 * oracle is an index built from the sets that are both kept and allowed
 * (same parameters): every search (the exact search under each measure,
 * with k and with a threshold; MinHash; an index without element lists
 * scanned) answers the same sets, ids mapped, with the same counts.
 */
#include <unistd.h>

#include "genie/sets.h"
#include "test.h"
#include "test_live.h"

static const genie_set_params gParams = {32, 11, 0};

static char *random_set(uint64_t *s, unsigned nElement)
{
    char *z = malloc(160);
    z[0] = 0;
    for (unsigned e = 0, m = 1 + (unsigned)(test_rand(s) % 10); e < m; e++) {
        char w[16];
        snprintf(w, sizeof w, "e%u ", (unsigned)(test_rand(s) % nElement));
        strcat(z, w);
    }
    return z;
}

static void build(char **az, const uint64_t *aWhich, size_t n, const char *zPath)
{
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, NULL, &gParams));
    for (size_t i = 0; i < n; i++) {
        const char *z = az[aWhich ? aWhich[i] : i];
        CHECK_OK(genie_set_builder_add(sb, z, strlen(z)));
    }
    CHECK_OK(genie_set_builder_write(sb, zPath));
    genie_set_builder_free(sb);
}

/* The searches of @p got (filter @p f) and of @p want (no filter) agree, ids mapped through @p aMap. */
static void compare(const genie_index *got, const genie_filter *f, const genie_index *want, const uint64_t *aMap,
                    char **azQ, size_t nQ)
{
    size_t *an = malloc(nQ * sizeof *an);
    for (size_t i = 0; i < nQ; i++)
        an[i] = strlen(azQ[i]);
    /* MinHash; exact under each measure (k 6); exact with a threshold, every answer (k 0). */
    for (int run = 0; run < 2 + 5 + 2; run++) {
        genie_set_options so;
        genie_set_options_init(&so);
        so.k = 6;
        if (run == 0) {
            so.candidates = 20;
        } else if (run == 1) {
            so.exact = 1;
        } else if (run < 7) {
            so.exact = 1;
            so.measure = (genie_set_measure)(run - 2);
        } else {
            so.k = 0;
            so.min_similarity = run == 7 ? 0.3 : 0.55;
            so.measure = run == 7 ? GENIE_SET_JACCARD : GENIE_SET_COSINE;
        }
        genie_search_options o = {.backend = test_backend(), .threads = 2, .filter = f};
        genie_set_results *a, *b;
        CHECK_OK(genie_set_search(got, (const char *const *)azQ, an, nQ, &so, &o, &a));
        o.backend = GENIE_BACKEND_CPU;
        o.filter = NULL;
        CHECK_OK(genie_set_search(want, (const char *const *)azQ, an, nQ, &so, &o, &b));
        for (size_t q = 0; q < nQ; q++) {
            size_t nA, nB;
            const genie_set_hit *x = genie_set_results_get(a, q, &nA), *y = genie_set_results_get(b, q, &nB);
            CHECK_EQ(nA, nB);
            for (size_t i = 0; i < nA && i < nB; i++) {
                CHECK_EQ(x[i].object, aMap[y[i].object]);
                CHECK_EQ(x[i].shared, y[i].shared);
                CHECK_EQ(x[i].union_size, y[i].union_size);
                CHECK_EQ(x[i].count, y[i].count);
                CHECK(x[i].similarity == y[i].similarity);
            }
        }
        genie_set_results_free(a);
        genie_set_results_free(b);
    }
    free(an);
}

TEST(live_sets_exact_filtered_equal_rebuilt_index)
{
    enum { BASE = 300, ADD = 120, QUERIES = 30 };
    uint64_t s = 17;
    char **az = malloc((BASE + ADD) * sizeof *az), *azQ[QUERIES];
    for (size_t i = 0; i < BASE; i++)
        az[i] = random_set(&s, 40);
    for (size_t i = 0; i < ADD; i++)
        az[BASE + i] = random_set(&s, 60); /* elements e40 .. e59 are new to the file's vocabulary */
    for (size_t i = 0; i < QUERIES; i++)
        azQ[i] = i % 3 ? strdup(az[(i * 37) % (BASE + ADD)]) : random_set(&s, 70);
    char zIndex[1024], zOracle[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("live.genie"));
    snprintf(zOracle, sizeof zOracle, "%s", test_path("oracle.genie"));
    unlink(test_path("live.genie.wal"));
    build(az, NULL, BASE, zIndex);
    live_model m;
    live_model_init(&m);
    for (size_t i = 0; i < BASE; i++)
        live_model_add(&m, i);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    genie_index *snap; /* refreshed after every write: it reads on from where it was */
    CHECK_OK(genie_index_open(zIndex, &snap));
    for (int half = 0; half < 2; half++) { /* two records, the second's new elements after the first's */
        size_t an[ADD / 2];
        uint64_t aLabel[ADD / 2];
        for (size_t i = 0; i < ADD / 2; i++)
            an[i] = strlen(az[BASE + half * (ADD / 2) + i]);
        CHECK_OK(genie_writer_add_records(w, (const char *const *)az + BASE + half * (ADD / 2), an, ADD / 2, NULL,
                                          aLabel));
        for (size_t i = 0; i < ADD / 2; i++)
            live_model_add(&m, aLabel[i]);
        test_live_refresh(&snap);
    }
    uint64_t aDel[16];
    for (int i = 0; i < 16; i++) {
        aDel[i] = m.aLabel[(i * 53) % (BASE + ADD)];
        live_model_delete(&m, aDel[i]);
    }
    CHECK_OK(genie_writer_delete(w, aDel, 16, NULL));
    genie_writer_close(w);
    test_live_refresh(&snap);
    genie_index *got, *want;
    CHECK_OK(genie_index_open(zIndex, &got));
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, BASE + ADD));
    for (int pass = 0; pass < 2; pass++) { /* every object allowed, then about half */
        size_t nKept, nBoth = 0;
        uint64_t *aKept = live_model_kept(&m, &nKept);
        for (size_t i = 0; i < nKept; i++) {
            if (pass == 0 || test_rand(&s) % 2)
                aKept[nBoth++] = aKept[i];
        }
        genie_filter_set_all(f, pass == 0);
        for (size_t i = 0; pass && i < nBoth; i++)
            CHECK_OK(genie_filter_set(f, aKept[i], 1));
        build(az, aKept, nBoth, zOracle);
        CHECK_OK(genie_index_open(zOracle, &want));
        compare(got, pass ? f : NULL, want, aKept, azQ, QUERIES);
        compare(snap, pass ? f : NULL, want, aKept, azQ, QUERIES);
        genie_index_close(want);
        free(aKept);
    }
    genie_filter_free(f);
    genie_index_close(got);
    genie_index_close(snap);
    for (size_t i = 0; i < BASE + ADD; i++)
        free(az[i]);
    for (size_t i = 0; i < QUERIES; i++)
        free(azQ[i]);
    free(az);
    live_model_free(&m);
}
