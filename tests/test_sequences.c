/*
 * Sequences front-end: the bounded edit distance against a plain dynamic
 * programme, ordered n-grams (Example V.1), and search answers against a
 * brute-force oracle: exact mode always, certified answers always,
 * uncertified ones counted.  Runs on $GENIE_TEST_BACKEND.
 */
#include "genie/sequences.h"
#include "test.h"
#include "transform/sequences.h"

/* The textbook O(nm) edit distance: the oracle. */
static uint32_t plain_distance(const char *a, size_t na, const char *b, size_t nb)
{
    uint32_t *row = malloc((nb + 1) * sizeof *row);
    for (size_t j = 0; j <= nb; j++)
        row[j] = (uint32_t)j;
    for (size_t i = 1; i <= na; i++) {
        uint32_t diag = row[0];
        row[0] = (uint32_t)i;
        for (size_t j = 1; j <= nb; j++) {
            uint32_t up = row[j];
            uint32_t v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
        }
    }
    uint32_t d = row[nb];
    free(row);
    return d;
}

static size_t random_string(uint64_t *rng, char *z, size_t maxLen, unsigned alphabet)
{
    size_t n = (size_t)(test_rand(rng) % (maxLen + 1));
    for (size_t i = 0; i < n; i++)
        z[i] = (char)('a' + test_rand(rng) % alphabet);
    return n;
}

TEST(seq_edit_distance_random)
{
    uint64_t rng = 12345;
    char a[200], b[200];
    seq_pattern *p = malloc(sizeof *p);
    for (int t = 0; t < 20000; t++) {
        size_t maxLen = t % 3 == 0 ? 150 : 70; /* both Myers (<= 64) and banded */
        unsigned alphabet = 2 + (unsigned)(t % 4) * 8;
        size_t na = random_string(&rng, a, maxLen, alphabet);
        size_t nb = random_string(&rng, b, maxLen, alphabet);
        if (t % 5 == 0) { /* near copies: small distances */
            nb = na;
            memcpy(b, a, na);
            for (int e = 0; e < 3 && nb; e++)
                b[test_rand(&rng) % nb] = 'z';
        }
        uint32_t want = plain_distance(a, na, b, nb);
        uint32_t max = t % 2 ? UINT32_MAX : (uint32_t)(test_rand(&rng) % 20);
        uint32_t got;
        seq_pattern_init(p, a, na);
        CHECK_OK(seq_pattern_distance(p, b, nb, max, &got));
        seq_pattern_free(p);
        if (want <= max) {
            if (got != want)
                test_fail_at(__FILE__, __LINE__, "ed('%.*s', '%.*s') = %u, got %u (max %u)", (int)na, a, (int)nb, b,
                             want, got, max);
        } else {
            CHECK(got > max);
        }
    }
    free(p);
}

TEST(seq_ordered_ngrams)
{
    uint32_t *aKw = NULL, *aKw2 = NULL;
    size_t cap = 0, cap2 = 0, n, n2;
    /* Example V.1: aabaab -> (aab,0) (aba,0) (baa,0) (aab,1) */
    CHECK_OK(seq_keywords("aabaab", 6, 3, &aKw, &cap, &n));
    CHECK_EQ(n, 4);
    CHECK(aKw[0] != aKw[3]); /* second aab is a different keyword */
    CHECK(aKw[0] != aKw[1] && aKw[1] != aKw[2] && aKw[0] != aKw[2]);
    CHECK_OK(seq_keywords("xaab", 4, 3, &aKw2, &cap2, &n2));
    CHECK_EQ(n2, 2);
    CHECK_EQ(aKw2[1], aKw[0]); /* (aab,0) is the same keyword in any string */
    CHECK_OK(seq_keywords("ab", 2, 3, &aKw2, &cap2, &n2));
    CHECK_EQ(n2, 0); /* shorter than n: no n-grams */
    CHECK_OK(seq_keywords("", 0, 3, &aKw2, &cap2, &n2));
    CHECK_EQ(n2, 0);
    CHECK_OK(seq_keywords("\xff\xfe\x00\xff\xfe\x00", 6, 3, &aKw2, &cap2, &n2));
    CHECK_EQ(n2, 4);
    CHECK_EQ(aKw2[0] != aKw2[3], 1);
    free(aKw);
    free(aKw2);
}

typedef struct dict {
    char **az;
    size_t *an;
    size_t n;
} dict;

static genie_index *build_dict(const dict *d, uint32_t gram, const char *name)
{
    genie_seq_builder *sb;
    CHECK_OK(genie_seq_builder_new(&sb, NULL, gram));
    for (size_t i = 0; i < d->n; i++)
        CHECK_OK(genie_seq_builder_add(sb, d->az[i], d->an[i]));
    CHECK_EQ(genie_seq_builder_count(sb), d->n);
    CHECK_OK(genie_seq_builder_write(sb, test_path(name)));
    genie_seq_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(name), &idx));
    return idx;
}

/* Brute-force top-k by (distance, id) of one query: the oracle. */
static size_t oracle_topk(const dict *d, const char *q, size_t nq, uint32_t k, uint32_t *aObj, uint32_t *aDist)
{
    size_t n = 0;
    for (size_t o = 0; o < d->n; o++) {
        uint32_t dist = plain_distance(q, nq, d->az[o], d->an[o]);
        size_t i = n < k ? n++ : k;
        if (i == k) {
            if (dist >= aDist[k - 1])
                continue;
            i = k - 1;
        }
        while (i > 0 && aDist[i - 1] > dist) {
            aDist[i] = aDist[i - 1];
            aObj[i] = aObj[i - 1];
            i--;
        }
        aDist[i] = dist;
        aObj[i] = (uint32_t)o;
    }
    return n;
}

/* Random dictionaries over small alphabets (many near neighbours, ties
 * and duplicates), mutated queries; certified answers and the exact mode
 * must equal the oracle. */
static void check_against_oracle(uint64_t seed, unsigned alphabet, uint32_t gram, uint32_t k, uint32_t K,
                                 uint32_t limit, size_t *pCertified, size_t *pQueries)
{
    uint64_t rng = seed;
    dict d;
    d.n = 150 + test_rand(&rng) % 150;
    d.az = malloc(d.n * sizeof *d.az);
    d.an = malloc(d.n * sizeof *d.an);
    for (size_t i = 0; i < d.n; i++) {
        d.az[i] = malloc(80);
        if (i > 0 && test_rand(&rng) % 10 == 0) { /* duplicate */
            d.an[i] = d.an[i - 1];
            memcpy(d.az[i], d.az[i - 1], d.an[i]);
        } else {
            d.an[i] = random_string(&rng, d.az[i], i % 17 == 0 ? 75 : 14, alphabet);
        }
    }
    genie_index *idx = build_dict(&d, gram, "seq.genie");
    enum { NQ = 60 };
    char *azQ[NQ];
    size_t anQ[NQ];
    for (size_t i = 0; i < NQ; i++) {
        azQ[i] = malloc(100);
        size_t src = test_rand(&rng) % d.n;
        anQ[i] = d.an[src];
        memcpy(azQ[i], d.az[src], anQ[i]);
        int edits = (int)(test_rand(&rng) % 4);
        for (int e = 0; e < edits; e++) {
            size_t pos = anQ[i] ? test_rand(&rng) % anQ[i] : 0;
            int kind = (int)(test_rand(&rng) % 3);
            if (kind == 0 && anQ[i]) {
                azQ[i][pos] = (char)('a' + test_rand(&rng) % alphabet);
            } else if (kind == 1 && anQ[i] < 99) {
                memmove(azQ[i] + pos + 1, azQ[i] + pos, anQ[i] - pos);
                azQ[i][pos] = (char)('a' + test_rand(&rng) % alphabet);
                anQ[i]++;
            } else if (anQ[i]) {
                memmove(azQ[i] + pos, azQ[i] + pos + 1, anQ[i] - pos - 1);
                anQ[i]--;
            }
        }
    }
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    uint32_t *aObj = malloc(k * sizeof *aObj), *aDist = malloc(k * sizeof *aDist);
    for (int exact = 0; exact <= 1; exact++) {
        genie_seq_options so = {.k = k, .candidates = K, .max_candidates = limit, .exact = exact, .certify_only = 1};
        genie_seq_results *r;
        CHECK_OK(genie_seq_search(idx, (const char *const *)azQ, anQ, NQ, &so, &opt, &r));
        CHECK_EQ(genie_seq_results_queries(r), NQ);
        for (size_t q = 0; q < NQ; q++) {
            size_t n;
            int cert;
            const genie_seq_hit *aHit = genie_seq_results_get(r, q, &n, &cert, NULL);
            size_t nWant = oracle_topk(&d, azQ[q], anQ[q], k, aObj, aDist);
            for (size_t i = 0; i < n; i++) /* every reported distance is exact */
                CHECK_EQ(aHit[i].distance, plain_distance(azQ[q], anQ[q], d.az[aHit[i].object], d.an[aHit[i].object]));
            if (exact)
                CHECK(cert);
            if (!cert)
                continue;
            CHECK_EQ(n, nWant);
            for (size_t i = 0; i < n; i++) {
                if (aHit[i].object != aObj[i] || aHit[i].distance != aDist[i])
                    test_fail_at(__FILE__, __LINE__, "seed %" PRIu64 " query %zu '%.*s' rank %zu: got %u (d %u), want %u (d %u)%s",
                                 seed, q, (int)anQ[q], azQ[q], i, aHit[i].object, aHit[i].distance, aObj[i], aDist[i],
                                 exact ? " [exact]" : " [certified]");
            }
            if (!exact)
                (*pCertified)++;
        }
        genie_seq_results_free(r);
    }
    *pQueries += NQ;
    free(aObj);
    free(aDist);
    for (size_t i = 0; i < NQ; i++)
        free(azQ[i]);
    for (size_t i = 0; i < d.n; i++)
        free(d.az[i]);
    free(d.az);
    free(d.an);
    genie_index_close(idx);
}

TEST(seq_certified_equals_brute_force)
{
    size_t nCert = 0, nQ = 0;
    for (uint64_t s = 1; s <= 12; s++) {
        check_against_oracle(s * 7919, 2 + (unsigned)(s % 3) * 3, 1 + (uint32_t)(s % 4), 1 + (uint32_t)(s % 5),
                             s % 2 ? 4 : 8, s % 3 ? 256 : 0, &nCert, &nQ);
    }
    fprintf(stderr, "    %zu of %zu queries certified\n", nCert, nQ);
    CHECK(nCert > 0); /* the certificate is exercised, not vacuous */
}

TEST(seq_certify_rounds_raise_k)
{
    /* Many equal-count candidates: one round with K = 1 cannot certify,
     * doubling up to the object count must. */
    dict d;
    const char *az[] = {"abcd", "abce", "abcf", "abcg", "abch", "abci", "abcj", "abcd"};
    d.n = 8;
    d.az = (char **)az;
    size_t an[8];
    for (int i = 0; i < 8; i++)
        an[i] = 4;
    d.an = an;
    genie_index *idx = build_dict(&d, 2, "r.genie");
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    const char *q = "abzz";
    size_t nq = 4;
    /* rounds alone */
    genie_seq_options one = {.k = 3, .candidates = 1};
    genie_seq_options many = {.k = 3, .candidates = 1, .max_candidates = 64, .certify_only = 1};
    genie_seq_results *r;
    int cert;
    uint32_t usedK;
    size_t n;
    CHECK_OK(genie_seq_search(idx, &q, &nq, 1, &one, &opt, &r));
    genie_seq_results_get(r, 0, &n, &cert, &usedK);
    CHECK_EQ(usedK, 3); /* K is raised to k */
    CHECK(!cert);
    genie_seq_results_free(r);
    CHECK_OK(genie_seq_search(idx, &q, &nq, 1, &many, &opt, &r));
    const genie_seq_hit *aHit = genie_seq_results_get(r, 0, &n, &cert, &usedK);
    CHECK(cert);
    CHECK_EQ(n, 3);
    CHECK_EQ(aHit[0].object, 0); /* d 2, ties by smaller id */
    CHECK_EQ(aHit[1].object, 1);
    CHECK_EQ(aHit[2].distance, 2);
    genie_search_stats st;
    genie_seq_results_stats(r, &st);
    CHECK(st.rounds >= 2);
    genie_seq_results_free(r);
    genie_index_close(idx);
}

TEST(seq_edge_cases_and_bad_input)
{
    genie_seq_builder *sb;
    CHECK_RC(genie_seq_builder_new(&sb, NULL, 65), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "65"));
    dict d;
    const char *az[] = {"", "ab", "abc", "abc", "\xc3\x28\xff", "abcdef"};
    size_t an[] = {0, 2, 3, 3, 3, 6};
    d.n = 6;
    d.az = (char **)az;
    d.an = an;
    genie_index *idx = build_dict(&d, 0, "e.genie"); /* 0 = default 3 */
    uint32_t gram;
    CHECK_OK(genie_seq_gram_length(idx, &gram));
    CHECK_EQ(gram, 3);
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    const char *azQ[] = {"", "ab", "abd", "\xc3\x28\xff"};
    size_t anQ[] = {0, 2, 3, 3};
    genie_seq_options so = {.k = 2, .candidates = 8};
    genie_seq_results *r;
    CHECK_OK(genie_seq_search(idx, azQ, anQ, 4, &so, &opt, &r));
    size_t n;
    int cert;
    genie_seq_results_get(r, 0, &n, &cert, NULL);
    CHECK_EQ(n, 0); /* no n-grams, no candidates */
    CHECK(!cert);
    const genie_seq_hit *aHit = genie_seq_results_get(r, 3, &n, &cert, NULL);
    CHECK(n >= 1);
    CHECK_EQ(aHit[0].object, 4); /* invalid UTF-8 is just bytes */
    CHECK_EQ(aHit[0].distance, 0);
    genie_seq_results_free(r);
    so.exact = 1;
    CHECK_OK(genie_seq_search(idx, azQ, anQ, 4, &so, &opt, &r));
    aHit = genie_seq_results_get(r, 0, &n, &cert, NULL);
    CHECK_EQ(n, 2);
    CHECK(cert);
    CHECK_EQ(aHit[0].object, 0); /* the empty string */
    CHECK_EQ(aHit[1].object, 1); /* "ab", distance 2, ties with "abc" by id */
    CHECK_EQ(aHit[1].distance, 2);
    genie_seq_results_free(r);
    /* --certify with a limit beyond the string count certifies every query */
    so = (genie_seq_options){.k = 2, .candidates = 2, .max_candidates = 1024};
    CHECK_OK(genie_seq_search(idx, azQ, anQ, 4, &so, &opt, &r));
    for (size_t q = 0; q < 4; q++) {
        genie_seq_results_get(r, q, &n, &cert, NULL);
        CHECK(cert);
        CHECK_EQ(n, 2);
    }
    aHit = genie_seq_results_get(r, 1, &n, &cert, NULL);
    CHECK_EQ(aHit[0].object, 1); /* "ab" itself, shorter than n */
    CHECK_EQ(aHit[0].distance, 0);
    genie_seq_results_free(r);
    so.k = 0;
    CHECK_RC(genie_seq_search(idx, azQ, anQ, 1, &so, &opt, &r), GENIE_EINVAL);
    so = (genie_seq_options){.k = 1, .candidates = 16, .max_candidates = 8};
    CHECK_RC(genie_seq_search(idx, azQ, anQ, 1, &so, &opt, &r), GENIE_EINVAL);
    genie_index_close(idx);

    /* a keywords index is refused */
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    uint32_t kw = 1;
    genie_object o = {&kw, 1, 0, 0, NULL, 0};
    CHECK_OK(genie_builder_add(b, &o));
    CHECK_OK(genie_builder_write(b, test_path("k.genie")));
    genie_builder_free(b);
    CHECK_OK(genie_index_open(test_path("k.genie"), &idx));
    so.k = 1;
    so.max_candidates = 0;
    CHECK_RC(genie_seq_search(idx, azQ, anQ, 1, &so, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "not a sequences index"));
    genie_index_close(idx);
}
