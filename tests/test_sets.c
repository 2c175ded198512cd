/*
 * Sets front-end: parsing rules (separators, empty elements, repeats),
 * exact mode against a brute-force Jaccard oracle, MinHash + re-rank
 * answers carrying exact similarities in order.  Runs on
 * $GENIE_TEST_BACKEND.
 */
#include "genie/sequences.h"
#include "genie/sets.h"
#include "test.h"
#include "transform/sets.h"

TEST(sets_parse_rules)
{
    set_slice *a = NULL;
    size_t cap = 0, n;
    CHECK_OK(set_parse("  b a\t\tb  c\r", 12, 0, &a, &cap, &n));
    CHECK_EQ(n, 3);
    CHECK(a[0].n == 1 && a[0].z[0] == 'a');
    CHECK(a[2].n == 1 && a[2].z[0] == 'c');
    CHECK_OK(set_parse("x,,y, z,", 8, ',', &a, &cap, &n));
    CHECK_EQ(n, 3); /* "x", "y", " z": empty elements ignored, spaces kept */
    CHECK_OK(set_parse("", 0, 0, &a, &cap, &n));
    CHECK_EQ(n, 0);
    /* thousands of repeats are one element */
    size_t len = 5000 * 4;
    char *z = malloc(len);
    for (size_t i = 0; i < 5000; i++)
        memcpy(z + 4 * i, i % 2 ? "dup " : "pud ", 4);
    CHECK_OK(set_parse(z, len, 0, &a, &cap, &n));
    CHECK_EQ(n, 2);
    uint32_t aKw1[16], aKw2[16];
    set_keywords(a, n, 16, 7, (uint32_t)(((uint64_t)1 << 32) / 16), aKw1);
    CHECK_OK(set_parse("pud dup", 7, 0, &a, &cap, &n));
    set_keywords(a, n, 16, 7, (uint32_t)(((uint64_t)1 << 32) / 16), aKw2);
    for (int i = 0; i < 16; i++) {
        CHECK_EQ(aKw1[i], aKw2[i]); /* same set, same signature */
        CHECK(aKw1[i] / (uint32_t)(((uint64_t)1 << 32) / 16) == (uint32_t)i); /* attribute i */
    }
    free(z);
    free(a);
}

/* The oracle: distinct elements by naive comparison, then counting. */
static size_t naive_distinct(char **az, size_t n, char **out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < m && strcmp(out[j], az[i]) != 0)
            j++;
        if (j == m)
            out[m++] = az[i];
    }
    return m;
}

typedef struct tset {
    char *zLine;
    char *az[40];
    size_t n;   /* elements as written */
    char *aDistinct[40];
    size_t nDistinct;
} tset;

static void random_set(uint64_t *rng, tset *s, unsigned universe)
{
    s->n = (size_t)(test_rand(rng) % 12);
    s->zLine = malloc(40 * 16);
    size_t len = 0;
    for (size_t i = 0; i < s->n; i++) {
        unsigned e = (unsigned)(test_rand(rng) % universe);
        s->az[i] = malloc(16);
        snprintf(s->az[i], 16, "e%u", e);
        len += (size_t)sprintf(s->zLine + len, "%s%s", i ? (test_rand(rng) % 2 ? " " : "\t ") : "", s->az[i]);
    }
    s->zLine[len] = '\0';
    s->nDistinct = naive_distinct(s->az, s->n, s->aDistinct);
}

static void tset_free(tset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->az[i]);
    free(s->zLine);
}

static void naive_jaccard(const tset *a, const tset *b, uint32_t *pShared, uint32_t *pUnion)
{
    uint32_t c = 0;
    for (size_t i = 0; i < a->nDistinct; i++)
        for (size_t j = 0; j < b->nDistinct; j++)
            c += strcmp(a->aDistinct[i], b->aDistinct[j]) == 0;
    *pShared = c;
    *pUnion = (uint32_t)(a->nDistinct + b->nDistinct - c);
}

TEST(sets_exact_and_minhash_against_oracle)
{
    uint64_t rng = 4242;
    enum { NOBJ = 400, NQ = 60 };
    tset *aObj = calloc(NOBJ, sizeof *aObj), *aQ = calloc(NQ, sizeof *aQ);
    genie_set_params p = {32, 9, 0};
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, NULL, &p));
    for (size_t i = 0; i < NOBJ; i++) {
        random_set(&rng, &aObj[i], 30);
        CHECK_OK(genie_set_builder_add(sb, aObj[i].zLine, strlen(aObj[i].zLine)));
    }
    CHECK_OK(genie_set_builder_write(sb, test_path("s.genie")));
    genie_set_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("s.genie"), &idx));
    const char *azQ[NQ];
    size_t anQ[NQ];
    for (size_t q = 0; q < NQ; q++) {
        if (q % 3 == 0) { /* a copy of an indexed set: MinHash must find it */
            size_t src = test_rand(&rng) % NOBJ;
            random_set(&rng, &aQ[q], 30);
            tset_free(&aQ[q]);
            aQ[q].zLine = strdup(aObj[src].zLine);
            aQ[q].n = 0;
            aQ[q].nDistinct = aObj[src].nDistinct;
            memcpy(aQ[q].aDistinct, aObj[src].aDistinct, sizeof aQ[q].aDistinct);
        } else {
            random_set(&rng, &aQ[q], 30);
        }
        azQ[q] = aQ[q].zLine;
        anQ[q] = strlen(aQ[q].zLine);
    }
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    const uint32_t k = 5;
    for (int exact = 1; exact >= 0; exact--) {
        genie_set_options so = {.k = k, .candidates = 20, .exact = exact};
        genie_set_results *r;
        CHECK_OK(genie_set_search(idx, azQ, anQ, NQ, &so, &opt, &r));
        for (size_t q = 0; q < NQ; q++) {
            size_t n;
            const genie_set_hit *aHit = genie_set_results_get(r, q, &n);
            /* oracle top-k by (J desc, id asc), J > 0 */
            uint32_t aS[NOBJ], aU[NOBJ], aId[k], nWant = 0;
            for (uint32_t o = 0; o < NOBJ; o++) {
                naive_jaccard(&aQ[q], &aObj[o], &aS[o], &aU[o]);
                if (aS[o] == 0)
                    continue;
                uint32_t i = nWant < k ? nWant++ : k;
                if (i == k) {
                    uint32_t w = aId[k - 1];
                    if ((uint64_t)aS[o] * aU[w] <= (uint64_t)aS[w] * aU[o])
                        continue;
                    i = k - 1;
                }
                while (i > 0 && (uint64_t)aS[o] * aU[aId[i - 1]] > (uint64_t)aS[aId[i - 1]] * aU[o]) {
                    aId[i] = aId[i - 1];
                    i--;
                }
                aId[i] = o;
            }
            for (size_t i = 0; i < n; i++) { /* exact similarities, in order */
                CHECK_EQ(aHit[i].shared, aS[aHit[i].object]);
                CHECK_EQ(aHit[i].union_size, aU[aHit[i].object]);
                if (i > 0) {
                    uint64_t l = (uint64_t)aHit[i - 1].shared * aHit[i].union_size;
                    uint64_t rr = (uint64_t)aHit[i].shared * aHit[i - 1].union_size;
                    CHECK(l > rr || (l == rr && aHit[i - 1].object < aHit[i].object));
                }
            }
            if (exact) {
                CHECK_EQ(n, nWant);
                for (size_t i = 0; i < n; i++)
                    CHECK_EQ(aHit[i].object, aId[i]);
            } else if (q % 3 == 0 && aQ[q].nDistinct > 0) {
                CHECK(n >= 1);
                CHECK_EQ(aHit[0].shared, aHit[0].union_size); /* Jaccard 1 found */
            }
            if (aQ[q].nDistinct == 0)
                CHECK_EQ(n, 0); /* an empty query matches nothing */
        }
        genie_set_results_free(r);
    }
    genie_index_close(idx);
    for (size_t i = 0; i < NOBJ; i++)
        tset_free(&aObj[i]);
    for (size_t q = 0; q < NQ; q++)
        tset_free(&aQ[q]);
    free(aObj);
    free(aQ);
}

TEST(sets_bad_input)
{
    genie_set_builder *sb;
    genie_set_params p = {5000, 0, 0};
    CHECK_RC(genie_set_builder_new(&sb, NULL, &p), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "5000"));
    p = (genie_set_params){8, 0, '\n'};
    CHECK_RC(genie_set_builder_new(&sb, NULL, &p), GENIE_EINVAL);
    CHECK_OK(genie_set_builder_new(&sb, NULL, NULL));
    CHECK_OK(genie_set_builder_add(sb, "", 0)); /* an empty set */
    CHECK_OK(genie_set_builder_add(sb, "a b", 3));
    CHECK_OK(genie_set_builder_write(sb, test_path("b.genie")));
    genie_set_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("b.genie"), &idx));
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = test_backend();
    const char *q = "a";
    size_t nq = 1;
    genie_set_options so = {.k = 0};
    genie_set_results *r;
    CHECK_RC(genie_set_search(idx, &q, &nq, 1, &so, &opt, &r), GENIE_EINVAL);
    so.k = 3;
    CHECK_OK(genie_set_search(idx, &q, &nq, 1, &so, &opt, &r));
    size_t n;
    const genie_set_hit *h = genie_set_results_get(r, 0, &n);
    CHECK_EQ(n, 1); /* the empty set is never returned */
    CHECK_EQ(h[0].object, 1);
    genie_set_results_free(r);
    /* a sequences index is refused */
    genie_seq_builder *qb;
    CHECK_OK(genie_seq_builder_new(&qb, NULL, 3));
    CHECK_OK(genie_seq_builder_add(qb, "abcd", 4));
    CHECK_OK(genie_seq_builder_write(qb, test_path("q.genie")));
    genie_seq_builder_free(qb);
    genie_index_close(idx);
    CHECK_OK(genie_index_open(test_path("q.genie"), &idx));
    CHECK_RC(genie_set_search(idx, &q, &nq, 1, &so, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "not a sets index"));
    genie_index_close(idx);
}
