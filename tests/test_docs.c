/*
 * The docs index (ranked retrieval, include/genie/docs.h): scores against
 * a hand-computed case and against a slow path written here from the
 * formulas of docs/DOCS.md (its own PageRank, its own BM25, AND/OR by
 * scanning every document); early termination against exhaustive
 * evaluation, bit for bit, over thousands of random queries on random
 * collections of many shapes; damaged docs sections rejected.
 */
#include <math.h>

#include "genie/docs.h"
#include "genie/text.h"
#include "engine/docs_score.h"
#include "index/index.h"
#include "test.h"
#include "transform/docs_eval.h"
#include "util/crc32c.h"

/* ------------------------------------------------------------ helpers */

static genie_docs_builder *new_builder(void)
{
    genie_docs_builder *db;
    CHECK_OK(genie_docs_builder_new(&db, NULL, NULL, NULL, 0, 1));
    return db;
}

static void add_all(genie_docs_builder *db, const char *const *az, size_t n)
{
    for (size_t i = 0; i < n; i++)
        CHECK_OK(genie_docs_builder_add(db, az[i], strlen(az[i])));
}

typedef struct opened {
    genie_index *idx;
    genie_docs *d;
} opened;

static opened write_open(genie_docs_builder *db, const char *name)
{
    opened o;
    CHECK_OK(genie_docs_builder_write(db, test_path(name)));
    genie_docs_builder_free(db);
    CHECK_OK(genie_index_open(test_path(name), &o.idx));
    CHECK_OK(genie_docs_open(o.idx, &o.d));
    return o;
}

static void close_opened(opened *o)
{
    genie_docs_close(o->d);
    genie_index_close(o->idx);
}

static genie_docs_results *search(const genie_docs *d, const char *const *az, size_t n, uint32_t k,
                                  genie_docs_mode mode, int exhaustive, unsigned threads)
{
    size_t *an = malloc((n ? n : 1) * sizeof *an);
    for (size_t i = 0; i < n; i++)
        an[i] = strlen(az[i]);
    genie_docs_options opt = {.k = k, .mode = mode, .exhaustive = exhaustive, .threads = threads};
    /* The early-terminated searches run on $GENIE_TEST_BACKEND; exhaustive ones are the CPU oracle. */
    opt.backend = exhaustive ? GENIE_BACKEND_CPU : test_backend();
    genie_docs_results *r;
    CHECK_OK(genie_docs_search(d, az, an, n, &opt, &r));
    free(an);
    return r;
}

static int near(double a, double b, double eps)
{
    return fabs(a - b) <= eps;
}

#define CHECK_NEAR(a, b, eps)                                                                              \
    do {                                                                                                   \
        double na_ = (a), nb_ = (b);                                                                       \
        if (!near(na_, nb_, eps))                                                                          \
            test_fail_at(__FILE__, __LINE__, "%s ~ %s: %.17g != %.17g", #a, #b, na_, nb_);                 \
    } while (0)

/* -------------------------------------------------------- hand-computed */

/*
 * Three documents "a a b", "a c", "b c c c": lengths 3, 2, 4, average 3;
 * no links, so every normalised PageRank is 1.  With k1 = 1.2, b = 0.75:
 * K_0 = 1.2, K_1 = 1.2 * (0.25 + 0.75 * 2/3) = 0.9; IR = f / (f + K).
 *   "a":   doc 0: 0.3 + 0.7 * 2/3.2 = 0.7375; doc 1: 0.3 + 0.7 / 1.9
 *   "a b": doc 0 alone; a and b are both in 2 documents, weights 1/2:
 *          0.3 + 0.7 * (0.5 * 2/3.2 + 0.5 * 1/2.2)
 */
TEST(docs_hand_computed_bm25)
{
    genie_docs_builder *db = new_builder();
    const char *az[] = {"a a b", "A, c!", "b c c c"};
    add_all(db, az, 3);
    opened o = write_open(db, "hand.genie");
    const char *aq[] = {"a", "a b", "b a a", "a d", "", "c"};
    genie_docs_results *r = search(o.d, aq, 6, 10, GENIE_DOCS_AND, 0, 1);
    size_t n;
    const genie_docs_hit *h = genie_docs_results_get(r, 0, &n);
    CHECK_EQ(n, 2);
    CHECK_EQ(h[0].record, 0);
    CHECK_EQ(h[1].record, 1);
    CHECK_NEAR(h[0].score, 0.7375, 1e-15);
    CHECK_NEAR(h[1].score, 0.3 + 0.7 / 1.9, 1e-15);
    CHECK_NEAR(h[1].bm25, 1 / 1.9, 1e-15);
    CHECK_NEAR(h[1].pagerank, 1.0, 0);
    h = genie_docs_results_get(r, 1, &n);
    CHECK_EQ(n, 1);
    CHECK_EQ(h[0].record, 0);
    CHECK_NEAR(h[0].score, 0.3 + 0.7 * (0.5 * 2 / 3.2 + 0.5 / 2.2), 1e-15);
    const genie_docs_hit *h2 = genie_docs_results_get(r, 2, &n);
    CHECK_EQ(n, 1);
    CHECK(h2[0].score == h[0].score); /* repeats and order do not matter */
    genie_docs_results_get(r, 3, &n);
    CHECK_EQ(n, 0); /* "d" is in no document */
    genie_docs_results_get(r, 4, &n);
    CHECK_EQ(n, 0);
    /* c: in documents 1 and 2, tf 1 (K 0.9) and tf 3 (K = 1.2 * (0.25 + 1) = 1.5). */
    h = genie_docs_results_get(r, 5, &n);
    CHECK_EQ(n, 2);
    CHECK_EQ(h[0].record, 2);
    CHECK_NEAR(h[0].score, 0.3 + 0.7 * 3 / 4.5, 1e-15);
    genie_docs_results_free(r);
    /* OR: "a d" is "a"; "b c": doc 2 has both.  ln(1 + (3 - 2 + .5)/(2 + .5))
     * is the weight of every word here, so the weights are 1/2 each. */
    const char *aq2[] = {"a d", "b c"};
    r = search(o.d, aq2, 2, 10, GENIE_DOCS_OR, 0, 1);
    h = genie_docs_results_get(r, 0, &n);
    CHECK_EQ(n, 2);
    CHECK_NEAR(h[0].score, 0.7375, 1e-15);
    h = genie_docs_results_get(r, 1, &n);
    CHECK_EQ(n, 3);
    CHECK_EQ(h[0].record, 2);
    CHECK_NEAR(h[0].score, 0.3 + 0.7 * (0.5 / 2.5 + 0.5 * 3 / 4.5), 1e-15);
    genie_docs_results_free(r);
    close_opened(&o);
}

/*
 * PageRank of 0->1, 0->2, 1->2, 2->0 (plus a repeat and a self-link, which
 * count for nothing), damping c = 0.85, no dangling node:
 *   r0 = (1-c)/3 + c r2,  r1 = (1-c)/3 + c r0 / 2,  r2 = (1-c)/3 + c (r0 / 2 + r1)
 * solved by substitution: r0 = e + c r2, r1 = e + c r0 / 2 with e = (1-c)/3,
 * r2 = e + c r0 / 2 + c e + c^2 r0 / 2 = e (1 + c) + r0 c (1 + c) / 2, so
 * r0 = e + c e (1 + c) + r0 c^2 (1 + c) / 2.
 */
TEST(docs_pagerank_hand_computed)
{
    genie_docs_builder *db = new_builder();
    const char *az[] = {"x", "x", "x"};
    add_all(db, az, 3);
    CHECK_OK(genie_docs_builder_add_link(db, 0, 1));
    CHECK_OK(genie_docs_builder_add_link(db, 0, 2));
    CHECK_OK(genie_docs_builder_add_link(db, 1, 2));
    CHECK_OK(genie_docs_builder_add_link(db, 2, 0));
    CHECK_OK(genie_docs_builder_add_link(db, 2, 0));
    CHECK_OK(genie_docs_builder_add_link(db, 1, 1));
    opened o = write_open(db, "pr.genie");
    double c = 0.85, e = (1 - c) / 3;
    double r[3];
    r[0] = (e + c * e * (1 + c)) / (1 - c * c * (1 + c) / 2);
    r[1] = e + c * r[0] / 2;
    r[2] = e + c * (r[0] / 2 + r[1]);
    CHECK_NEAR(r[0] + r[1] + r[2], 1.0, 1e-12);
    genie_docs_info info;
    genie_docs_get_info(o.d, &info);
    CHECK_EQ(info.n_links, 4);
    CHECK_EQ(info.score_source, 1);
    CHECK(info.iterations > 1 && info.iterations < 1000);
    for (uint32_t doc = 0; doc < 3; doc++) {
        uint32_t rec;
        double pr;
        CHECK_OK(genie_docs_document(o.d, doc, &rec, NULL, &pr, NULL));
        CHECK_NEAR(pr, r[rec], 1e-8);
    }
    /* All three hold "x" once with the same length: GS order is PageRank order. */
    uint32_t rec0, rec2;
    CHECK_OK(genie_docs_document(o.d, 0, &rec0, NULL, NULL, NULL));
    CHECK_OK(genie_docs_document(o.d, 2, &rec2, NULL, NULL, NULL));
    CHECK(r[rec0] >= r[rec2]);
    CHECK_RC(genie_docs_document(o.d, 3, NULL, NULL, NULL, NULL), GENIE_EINVAL);
    close_opened(&o);
}

/* ------------------------------------------------- random collections */

typedef struct coll {
    uint32_t n, nWords;
    uint32_t **aaTok; /* word ids of each document, with repeats */
    uint32_t *anTok;
    uint32_t *aFrom, *aTo;
    size_t nLink;
    int useScores;
    double *aScore;
} coll;

/* A collection of one of several shapes, chosen by @p shape. */
static void make_coll(coll *c, int shape, uint64_t *rng)
{
    memset(c, 0, sizeof *c);
    static const uint32_t anDoc[] = {1, 2, 7, 60, 400, 2500};
    static const uint32_t anWord[] = {1, 3, 12, 80, 600};
    c->n = anDoc[test_rand(rng) % 6];
    c->nWords = anWord[test_rand(rng) % 5];
    uint32_t maxLen = 1 + (uint32_t)(test_rand(rng) % 12);
    int allSame = shape == 0, everywhere = shape == 1, skew = shape >= 2;
    c->aaTok = calloc(c->n, sizeof *c->aaTok);
    c->anTok = calloc(c->n, sizeof *c->anTok);
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t len = allSame ? 3 : (uint32_t)(test_rand(rng) % (maxLen + 1));
        c->aaTok[i] = malloc((len + 1) * sizeof **c->aaTok);
        for (uint32_t j = 0; j < len; j++) {
            double u = (double)(test_rand(rng) % 1000000) / 1e6;
            uint32_t w = skew ? (uint32_t)(c->nWords * u * u * u) : (uint32_t)(test_rand(rng) % c->nWords);
            c->aaTok[i][j] = allSame ? j % c->nWords : w;
        }
        if (everywhere)
            c->aaTok[i][len++] = 0;
        c->anTok[i] = len;
    }
    if (!allSame && shape != 3) {
        c->nLink = (size_t)(test_rand(rng) % (3 * (uint64_t)c->n + 1));
        c->aFrom = malloc((c->nLink + 1) * sizeof *c->aFrom);
        c->aTo = malloc((c->nLink + 1) * sizeof *c->aTo);
        for (size_t i = 0; i < c->nLink; i++) {
            /* Power-law-ish targets: low record numbers get most links. */
            double u = (double)(test_rand(rng) % 1000000) / 1e6;
            c->aFrom[i] = (uint32_t)(test_rand(rng) % c->n);
            c->aTo[i] = (uint32_t)(c->n * u * u);
        }
    }
    if (shape == 3) {
        c->useScores = 1;
        c->aScore = malloc(c->n * sizeof *c->aScore);
        for (uint32_t i = 0; i < c->n; i++)
            c->aScore[i] = (double)(test_rand(rng) % 4); /* many ties, some zeros */
    }
}

static void free_coll(coll *c)
{
    for (uint32_t i = 0; i < c->n; i++)
        free(c->aaTok[i]);
    free(c->aaTok);
    free(c->anTok);
    free(c->aFrom);
    free(c->aTo);
    free(c->aScore);
}

static char *doc_text(const coll *c, uint32_t i)
{
    char *z = malloc(16 * (size_t)c->anTok[i] + 1);
    size_t n = 0;
    for (uint32_t j = 0; j < c->anTok[i]; j++)
        n += (size_t)sprintf(z + n, "%sw%u", j ? " " : "", c->aaTok[i][j]);
    z[n] = '\0';
    return z;
}

static opened build_coll(const coll *c, const char *name)
{
    genie_docs_builder *db = new_builder();
    for (uint32_t i = 0; i < c->n; i++) {
        char *z = doc_text(c, i);
        CHECK_OK(genie_docs_builder_add(db, z, strlen(z)));
        free(z);
    }
    for (size_t i = 0; i < c->nLink; i++)
        CHECK_OK(genie_docs_builder_add_link(db, c->aFrom[i], c->aTo[i]));
    if (c->useScores)
        CHECK_OK(genie_docs_builder_set_scores(db, c->aScore, c->n));
    return write_open(db, name);
}

/* The slow path: PageRank by dense power iteration to 1e-13. */
static double *slow_pagerank(const coll *c)
{
    uint32_t n = c->n;
    double *r = malloc(n * sizeof *r);
    if (c->useScores) {
        memcpy(r, c->aScore, n * sizeof *r);
        return r;
    }
    unsigned char *adj = calloc((size_t)n * n, 1);
    uint32_t *out = calloc(n, sizeof *out);
    for (size_t i = 0; i < c->nLink; i++) {
        uint32_t a = c->aFrom[i], b = c->aTo[i];
        if (a != b && !adj[(size_t)a * n + b]) {
            adj[(size_t)a * n + b] = 1;
            out[a]++;
        }
    }
    double *nx = malloc(n * sizeof *nx);
    for (uint32_t v = 0; v < n; v++)
        r[v] = 1.0 / n;
    for (int it = 0; it < 5000; it++) {
        double dang = 0, change = 0;
        for (uint32_t v = 0; v < n; v++)
            dang += out[v] ? 0 : r[v];
        for (uint32_t v = 0; v < n; v++) {
            double s = 0;
            for (uint32_t u = 0; u < n; u++)
                if (adj[(size_t)u * n + v])
                    s += r[u] / out[u];
            nx[v] = 0.15 / n + 0.85 * (dang / n + s);
        }
        for (uint32_t v = 0; v < n; v++) {
            change += fabs(nx[v] - r[v]);
            r[v] = nx[v];
        }
        if (change < 1e-13)
            break;
    }
    free(adj);
    free(out);
    free(nx);
    return r;
}

/* The slow path's score of record @p i for the distinct words aQ[0..u); -1 = no match. */
static double slow_score(const coll *c, const double *aPrNorm, const uint32_t *aDf, double avg, uint32_t i,
                         const uint32_t *aQ, size_t u, int orMode)
{
    double wsum = 0, bm = 0;
    int all = 1, any = 0;
    for (size_t t = 0; t < u; t++) {
        uint32_t df = aDf[aQ[t]];
        double w = log(1 + (c->n - df + 0.5) / (df + 0.5));
        wsum += w;
        uint32_t tf = 0;
        for (uint32_t j = 0; j < c->anTok[i]; j++)
            tf += c->aaTok[i][j] == aQ[t];
        if (!tf) {
            all = 0;
            continue;
        }
        any = 1;
        double ir = 2.2 * tf / (1.2 * (1 + 0.75 * (c->anTok[i] / avg - 1)) + tf) / 2.2;
        bm += w * ir;
    }
    if (orMode ? !any : !all)
        return -1;
    return 0.3 * aPrNorm[i] + 0.7 * bm / wsum;
}

/*
 * Check one answer list against the slow path: every hit matches and has
 * the slow score (within 1e-7: PageRank iterations differ), the order is
 * score descending then record ascending, and no document left out scores
 * more than the last hit.
 */
static void check_against_slow(const coll *c, const double *aPrNorm, const uint32_t *aDf, double avg,
                               const uint32_t *aQ, size_t u, int missing, int orMode, uint32_t k,
                               const genie_docs_hit *h, size_t n)
{
    double *s = malloc(c->n * sizeof *s);
    size_t nMatch = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        s[i] = (u == 0 || (missing && !orMode)) ? -1 : slow_score(c, aPrNorm, aDf, avg, i, aQ, u, orMode);
        nMatch += s[i] >= 0;
    }
    CHECK_EQ(n, nMatch < k ? nMatch : k);
    unsigned char *in = calloc(c->n, 1);
    for (size_t r = 0; r < n; r++) {
        CHECK(s[h[r].record] >= 0);
        CHECK_NEAR(h[r].score, s[h[r].record], 1e-7);
        in[h[r].record] = 1;
        if (r > 0)
            CHECK(h[r - 1].score > h[r].score || (h[r - 1].score == h[r].score && h[r - 1].record < h[r].record));
    }
    for (uint32_t i = 0; n && i < c->n; i++)
        if (!in[i] && s[i] >= 0)
            CHECK(s[i] <= h[n - 1].score + 1e-7);
    free(in);
    free(s);
}

static void check_same(const genie_docs_results *a, const genie_docs_results *b)
{
    CHECK_EQ(genie_docs_results_queries(a), genie_docs_results_queries(b));
    for (size_t q = 0; q < genie_docs_results_queries(a); q++) {
        size_t na, nb;
        const genie_docs_hit *ha = genie_docs_results_get(a, q, &na);
        const genie_docs_hit *hb = genie_docs_results_get(b, q, &nb);
        if (na != nb)
            test_fail_at(__FILE__, __LINE__, "query %zu: %zu hits != %zu", q, na, nb);
        for (size_t i = 0; i < na; i++)
            if (ha[i].doc != hb[i].doc || ha[i].record != hb[i].record || ha[i].score != hb[i].score ||
                ha[i].bm25 != hb[i].bm25)
                test_fail_at(__FILE__, __LINE__, "query %zu rank %zu: doc %u (%.17g) != doc %u (%.17g)", q, i,
                             ha[i].doc, ha[i].score, hb[i].doc, hb[i].score);
    }
}

/* Random queries of 1-4 words, some repeated, some absent ("w" + a number past the vocabulary). */
static char **make_queries(const coll *c, size_t nQ, uint64_t *rng)
{
    char **az = malloc(nQ * sizeof *az);
    for (size_t q = 0; q < nQ; q++) {
        size_t u = 1 + (size_t)(test_rand(rng) % 4);
        az[q] = malloc(16 * u + 1);
        size_t n = 0;
        for (size_t t = 0; t < u; t++) {
            uint64_t x = test_rand(rng) % 100;
            uint32_t w;
            if (x < 5)
                w = c->nWords + (uint32_t)(test_rand(rng) % 3); /* absent */
            else if (x < 60)
                w = (uint32_t)(test_rand(rng) % (c->nWords < 8 ? c->nWords : 8)); /* frequent */
            else
                w = (uint32_t)(test_rand(rng) % c->nWords);
            n += (size_t)sprintf(az[q] + n, "%sw%u", t ? " " : "", w);
        }
        az[q][n] = '\0';
    }
    return az;
}

/* Parse "w12 w3" back into distinct word ids; *pMissing when one is past the vocabulary or in no document. */
static size_t parse_query(const char *z, const uint32_t *aDf, uint32_t nWords, uint32_t *aQ, int *pMissing)
{
    size_t u = 0;
    *pMissing = 0;
    while (*z) {
        while (*z == ' ')
            z++;
        if (*z != 'w')
            break;
        uint32_t w = (uint32_t)strtoul(z + 1, (char **)&z, 10);
        if (w >= nWords || aDf[w] == 0) {
            *pMissing = 1;
            continue;
        }
        size_t i = 0;
        while (i < u && aQ[i] != w)
            i++;
        if (i == u)
            aQ[u++] = w;
    }
    return u;
}

static void run_random(uint64_t seed, int nColl, size_t nQ, int withSlow, uint64_t *pRead, uint64_t *pReadAll)
{
    uint64_t rng = seed;
    for (int ci = 0; ci < nColl; ci++) {
        coll c;
        make_coll(&c, ci % 5, &rng);
        opened o = build_coll(&c, "r.genie");
        char **azQ = make_queries(&c, nQ, &rng);
        static const uint32_t aK[] = {1, 2, 5, 10, 100};
        uint32_t k = aK[test_rand(&rng) % 5];
        for (int mode = 0; mode < 2; mode++) {
            genie_docs_results *ex = search(o.d, (const char *const *)azQ, nQ, k, mode, 1, 1);
            genie_docs_results *et = search(o.d, (const char *const *)azQ, nQ, k, mode, 0, 1);
            genie_docs_results *et4 = search(o.d, (const char *const *)azQ, nQ, k, mode, 0, 4);
            check_same(ex, et);
            check_same(ex, et4);
            genie_docs_stats sEx, sEt;
            genie_docs_results_stats(ex, &sEx);
            genie_docs_results_stats(et, &sEt);
            CHECK(sEt.postings_read <= sEx.postings_read);
            CHECK_EQ(sEt.postings_total, sEx.postings_total);
            CHECK_EQ(sEx.stopped_early, 0);
            *pRead += sEt.postings_read;
            *pReadAll += sEx.postings_read;
            if (withSlow && c.n <= 400) {
                double *pr = slow_pagerank(&c);
                double maxPr = 0, total = 0;
                uint32_t *aDf = calloc(c.nWords + 3, sizeof *aDf);
                for (uint32_t i = 0; i < c.n; i++) {
                    maxPr = pr[i] > maxPr ? pr[i] : maxPr;
                    total += c.anTok[i];
                    for (uint32_t j = 0; j < c.anTok[i]; j++) {
                        uint32_t w = c.aaTok[i][j], seen = 0;
                        for (uint32_t jj = 0; jj < j; jj++)
                            seen |= c.aaTok[i][jj] == w;
                        aDf[w] += !seen;
                    }
                }
                for (uint32_t i = 0; i < c.n; i++)
                    pr[i] = maxPr > 0 ? pr[i] / maxPr : 0;
                double avg = total ? total / c.n : 1;
                for (size_t q = 0; q < nQ; q++) {
                    uint32_t aQ[8];
                    int missing;
                    size_t u = parse_query(azQ[q], aDf, c.nWords, aQ, &missing);
                    size_t n;
                    const genie_docs_hit *h = genie_docs_results_get(et, q, &n);
                    check_against_slow(&c, pr, aDf, avg, aQ, u, missing, mode, k, h, n);
                }
                free(aDf);
                free(pr);
            }
            genie_docs_results_free(ex);
            genie_docs_results_free(et);
            genie_docs_results_free(et4);
        }
        for (size_t q = 0; q < nQ; q++)
            free(azQ[q]);
        free(azQ);
        close_opened(&o);
        free_coll(&c);
    }
}

TEST(docs_random_against_slow_path)
{
    uint64_t read = 0, all = 0;
    run_random(0x5eed1234, 25, 120, 1, &read, &all);
}

TEST(docs_early_termination_equals_exhaustive)
{
    uint64_t read = 0, all = 0;
    run_random(0xfeedbeef, 40, 400, 0, &read, &all);
    /* Skewed collections with k <= 100 must let some searches stop early. */
    CHECK(read < all);
}

/* One long list of equal documents: every score ties, order by record. */
TEST(docs_all_ties_and_single_terms)
{
    genie_docs_builder *db = new_builder();
    for (int i = 0; i < 3000; i++)
        CHECK_OK(genie_docs_builder_add(db, "same words here", 15));
    opened o = write_open(db, "ties.genie");
    const char *aq[] = {"words", "here same", "nothing"};
    for (int ex = 0; ex < 2; ex++) {
        genie_docs_results *r = search(o.d, aq, 3, 7, GENIE_DOCS_AND, ex, 2);
        for (size_t q = 0; q < 2; q++) {
            size_t n;
            const genie_docs_hit *h = genie_docs_results_get(r, q, &n);
            CHECK_EQ(n, 7);
            for (size_t i = 0; i < n; i++)
                CHECK_EQ(h[i].record, i);
        }
        size_t n;
        genie_docs_results_get(r, 2, &n);
        CHECK_EQ(n, 0);
        genie_docs_stats st;
        genie_docs_results_stats(r, &st);
        /* Ties never stop a search early: the next document might win on its record number. */
        CHECK_EQ(st.stopped_early, 0);
        genie_docs_results_free(r);
    }
    close_opened(&o);
}

/* ------------------------------------------------------------ bad input */

TEST(docs_bad_input)
{
    genie_docs_builder *db;
    genie_docs_params p;
    genie_docs_params_default(&p);
    p.alpha = 1.5;
    CHECK_RC(genie_docs_builder_new(&db, NULL, &p, NULL, 0, 0), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "alpha") != NULL);
    genie_docs_params_default(&p);
    p.damping = 1;
    CHECK_RC(genie_docs_builder_new(&db, NULL, &p, NULL, 0, 0), GENIE_EINVAL);
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    bo.part_objects = 2;
    CHECK_RC(genie_docs_builder_new(&db, &bo, NULL, NULL, 0, 0), GENIE_EINVAL);

    db = new_builder();
    CHECK_RC(genie_docs_builder_write(db, test_path("none.genie")), GENIE_EINVAL);
    CHECK_OK(genie_docs_builder_add(db, "a b", 3));
    CHECK_OK(genie_docs_builder_add_link(db, 0, 5));
    CHECK_RC(genie_docs_builder_write(db, test_path("x.genie")), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "link 0") != NULL);
    double bad = -1, good[2] = {1, 2};
    CHECK_RC(genie_docs_builder_set_scores(db, &bad, 1), GENIE_EINVAL);
    genie_docs_builder_free(db);

    db = new_builder();
    CHECK_OK(genie_docs_builder_add(db, "a b", 3));
    CHECK_OK(genie_docs_builder_set_scores(db, good, 2));
    CHECK_RC(genie_docs_builder_write(db, test_path("x.genie")), GENIE_EINVAL);
    CHECK_RC(genie_docs_builder_add_link(db, 0, 0), GENIE_EINVAL);
    genie_docs_builder_free(db);

    test_write_file(test_path("links.txt"), "0 1\n\n1 x\n", 9);
    db = new_builder();
    CHECK_OK(genie_docs_builder_add(db, "a b", 3));
    CHECK_RC(genie_docs_builder_read_links(db, test_path("links.txt")), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "links.txt:3") != NULL);
    test_write_file(test_path("scores.txt"), "0.5\nnan\n", 8);
    genie_docs_builder_free(db);
    db = new_builder();
    CHECK_RC(genie_docs_builder_read_scores(db, test_path("scores.txt")), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "scores.txt:2") != NULL);
    CHECK_OK(genie_docs_builder_add(db, "a b", 3));
    opened o = write_open(db, "ok.genie");
    genie_docs_options opt = {.k = 0, .mode = GENIE_DOCS_AND, .threads = 1};
    genie_docs_results *r;
    const char *q = "a";
    size_t nq = 1;
    CHECK_RC(genie_docs_search(o.d, &q, &nq, 1, &opt, &r), GENIE_EINVAL);
    opt.k = 1000001;
    CHECK_RC(genie_docs_search(o.d, &q, &nq, 1, &opt, &r), GENIE_EINVAL);
    close_opened(&o);

    /* A text index is not a docs index. */
    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, NULL, NULL, 0, 0));
    CHECK_OK(genie_text_builder_add(tb, "a b", 3));
    CHECK_OK(genie_text_builder_write(tb, test_path("t.genie")));
    genie_text_builder_free(tb);
    genie_index *idx;
    genie_docs *d;
    CHECK_OK(genie_index_open(test_path("t.genie"), &idx));
    CHECK_RC(genie_docs_open(idx, &d), GENIE_EINVAL);
    genie_index_close(idx);
}

/* --------------------------------------------------------- damaged files */

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Where the FRONTEND section lies, and its table entry (format.h). */
static void find_frontend(const unsigned char *p, uint64_t *pOff, uint64_t *pSize, size_t *pEntry)
{
    uint32_t nSec = rd32(p + 80);
    for (uint32_t i = 0; i < nSec; i++) {
        const unsigned char *e = p + 96 + 32 * (size_t)i;
        if (rd32(e) == 12) {
            *pOff = rd64(e + 8);
            *pSize = rd64(e + 16);
            *pEntry = 96 + 32 * (size_t)i;
            return;
        }
    }
    test_fail_at(__FILE__, __LINE__, "no FRONTEND section");
}

/* Recompute the FRONTEND and header checksums so only the docs checks can object. */
static void fix_checksums(unsigned char *p, uint64_t off, uint64_t size, size_t entry)
{
    uint32_t crc = util_crc32c(0, p + off, (size_t)size);
    memcpy(p + entry + 24, &crc, 4);
    uint32_t headerSize = rd32(p + 12), zero = 0;
    memcpy(p + 84, &zero, 4);
    crc = util_crc32c(0, p, headerSize);
    memcpy(p + 84, &crc, 4);
}

TEST(docs_corrupt_sections_rejected)
{
    genie_docs_builder *db = new_builder();
    const char *az[] = {"alpha beta beta", "beta gamma", "gamma gamma delta alpha", "", "delta"};
    add_all(db, az, 5);
    CHECK_OK(genie_docs_builder_add_link(db, 0, 2));
    CHECK_OK(genie_docs_builder_add_link(db, 4, 2));
    CHECK_OK(genie_docs_builder_write(db, test_path("c.genie")));
    genie_docs_builder_free(db);
    size_t n;
    unsigned char *p = test_read_file(test_path("c.genie"), &n);
    uint64_t off, size;
    size_t entry;
    find_frontend(p, &off, &size, &entry);
    const char *path = test_path("bad.genie");
    /* Every byte of the section flipped, checksums made right: rejected,
     * except the two informational fields (links and iterations, bytes
     * 64..75), which may hold anything. */
    unsigned nAccepted = 0;
    for (uint64_t i = 0; i < size; i++) {
        unsigned char *q = malloc(n);
        memcpy(q, p, n);
        q[off + i] ^= 0x41;
        fix_checksums(q, off, size, entry);
        test_write_file(path, q, n);
        free(q);
        genie_index *idx;
        CHECK_OK(genie_index_open(path, &idx));
        genie_docs *d;
        genie_status rc = genie_docs_open(idx, &d);
        if (i >= 64 && i < 76) {
            CHECK_OK(rc);
            genie_docs_close(d);
            nAccepted++;
        } else if (rc != GENIE_ECORRUPT) {
            test_fail_at(__FILE__, __LINE__, "FRONTEND byte %llu flipped: %s", (unsigned long long)i,
                         genie_strerror(rc));
        } else {
            CHECK(strstr(genie_last_error(), "docs index") != NULL);
        }
        genie_index_close(idx);
    }
    CHECK_EQ(nAccepted, 12);
    free(p);
}

/* ------------------------------------------------------ GPU list cache */

/* Every list's cached prefix under @p bytes: a prefix, within the budget. */
static void check_prefixes(const genie_docs *d, const genie_docs_plan *p, uint64_t bytes, uint64_t nLists)
{
    uint64_t *a = malloc((nLists + 1) * sizeof *a), used;
    CHECK_OK(genie_docs_plan_prefixes(p, bytes, a, &used));
    uint64_t sum = 0;
    for (uint64_t l = 0; l < nLists; l++)
        sum += 8 * a[l];
    CHECK_EQ(sum, used);
    CHECK(used <= bytes);
    (void)d;
    free(a);
}

/*
 * Cache plans (VFB, Qtf, QtfDf; several lambda) from a training log, and
 * searches under several cache sizes and buffers (small ones force pruned
 * lists, post-processing and many batches): every answer equals the
 * exhaustive CPU one.  On the CPU backend the plans are built, written,
 * read back and applied, and the search is the CPU's.
 */
TEST(docs_cache_modes_equal_exhaustive)
{
    uint64_t rng = 0xcace;
    for (int ci = 0; ci < 6; ci++) {
        coll c;
        make_coll(&c, 2 + ci % 3, &rng);
        opened o = build_coll(&c, "c.genie");
        size_t nQ = 300;
        char **azTrain = make_queries(&c, nQ, &rng);
        char **azTest = make_queries(&c, nQ, &rng);
        size_t *anTrain = malloc(nQ * sizeof *anTrain);
        for (size_t q = 0; q < nQ; q++)
            anTrain[q] = strlen(azTrain[q]);
        genie_docs_info info;
        genie_docs_get_info(o.d, &info);
        uint64_t nLists = info.n_words;
        for (int policy = 0; policy < 3; policy++) {
            double lambda = policy == 0 ? (ci % 2 ? 0.75 : 1.0) : 1.0;
            genie_docs_plan *p;
            CHECK_OK(genie_docs_plan_build(o.d, (const char *const *)azTrain, anTrain, nQ, 10,
                                           (genie_docs_policy)policy, lambda, &p));
            CHECK_OK(genie_docs_plan_write(p, test_path("p.plan")));
            genie_docs_plan_free(p);
            CHECK_OK(genie_docs_plan_read(o.d, test_path("p.plan"), &p));
            CHECK_EQ(genie_docs_plan_lists(p), nLists);
            static const uint64_t aMem[] = {4096, 65536, 1u << 22};
            static const double aFrac[] = {0.1, 0.3, 0.9};
            for (int mi = 0; mi < 3; mi++) {
                for (int fi = 0; fi < 3; fi++) {
                    check_prefixes(o.d, p, (uint64_t)(aFrac[fi] * (double)aMem[mi]), nLists);
                    uint32_t k = (uint32_t)(1 + test_rand(&rng) % 20);
                    genie_docs_results *ex =
                        search(o.d, (const char *const *)azTest, nQ, k, GENIE_DOCS_AND, 1, 1);
                    size_t *an = malloc(nQ * sizeof *an);
                    for (size_t q = 0; q < nQ; q++)
                        an[q] = strlen(azTest[q]);
                    genie_docs_options opt = {.k = k, .mode = GENIE_DOCS_AND, .threads = 2};
                    opt.backend = test_backend();
                    opt.gpu_memory = aMem[mi];
                    opt.cache_fraction = aFrac[fi];
                    opt.plan = p;
                    genie_docs_results *r;
                    CHECK_OK(genie_docs_search(o.d, (const char *const *)azTest, an, nQ, &opt, &r));
                    check_same(ex, r);
                    genie_docs_stats st;
                    genie_docs_results_stats(r, &st);
                    CHECK(st.backend == (test_backend() == GENIE_BACKEND_CUDA ? GENIE_BACKEND_CUDA
                                                                               : GENIE_BACKEND_CPU));
                    genie_docs_results_free(r);
                    genie_docs_results_free(ex);
                    free(an);
                }
            }
            genie_docs_plan_free(p);
        }
        for (size_t q = 0; q < nQ; q++) {
            free(azTrain[q]);
            free(azTest[q]);
        }
        free(azTrain);
        free(azTest);
        free(anTrain);
        close_opened(&o);
        free_coll(&c);
    }
}

/* ------------------------------------------- the GPU search's host side */

/*
 * A stand-in for the CUDA engine (a backend registered with a pDocs
 * capability of its own, engine/backend.h) that keeps its contract on the CPU, so that the host side of the GPU search (queries
 * prepared on the threads, the cache plan kept between calls, batches
 * finished by the CPU threads, GPU answers copied or continued, the
 * counts) is tested where there is no GPU.  Batches of at most
 * FAKE_BATCH queries; query q, by q % 4: 0 answered whole (finished), 1
 * handed back at half its shortest list with the top-k of the first half,
 * 2 handed back at 0 without hits, 3 "does not fit a batch" (aHit NULL).
 */
#define FAKE_BATCH 5

typedef struct fake_seen {
    uint64_t planId, nLists, nBatch, nPruned;
    const uint64_t *aPrefix;
    uint32_t batchQueries;
} fake_seen;

static fake_seen gFake;

/* The top-k, best first, of the documents at positions [0, end) of query q's shortest list. */
static uint32_t fake_topk(const engine_docs_request *req, uint32_t q, uint64_t end, genie_docs_hit *aOut)
{
    const engine_docs_data *D = req->pData;
    const engine_docs_query *Q = &req->aQuery[q];
    const engine_docs_term *T = req->aTerm + Q->first;
    genie_docs_hit *a = malloc((end ? end : 1) * sizeof *a);
    uint64_t n = 0, s0 = D->aListOffset[T[0].list];
    for (uint64_t p = 0; p < end; p++) {
        uint32_t doc = D->aPosting[s0 + p];
        double kd = docs_length_norm(D->k1, D->b, D->aLength[doc], D->avgLength);
        double bm = T[0].weight * docs_ir(D->aTf[s0 + p], kd);
        uint32_t i = 1;
        for (; i < Q->n; i++) {
            uint64_t lo = D->aListOffset[T[i].list], hi = D->aListOffset[T[i].list + 1], e = hi;
            while (lo < hi) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (D->aPosting[mid] < doc)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == e || D->aPosting[lo] != doc)
                break;
            bm += T[i].weight * docs_ir(D->aTf[lo], kd);
        }
        if (i < Q->n)
            continue;
        double pr = docs_pr_norm(D->aPagerank[doc], D->maxPagerank);
        a[n++] = (genie_docs_hit){doc, D->aRecord[doc], docs_score(D->alpha, pr, bm), bm, pr};
    }
    qsort(a, n, sizeof *a, docs_cmp_best_first);
    if (n > req->k)
        n = req->k;
    memcpy(aOut, a, n * sizeof *a);
    free(a);
    return (uint32_t)n;
}

/* What the caller says the cache means for the query, checked against aPrefix. */
static void fake_check_cache(const engine_docs_request *req, const engine_docs_query *Q)
{
    const engine_docs_data *D = req->pData;
    uint32_t m = UINT32_MAX, next0 = 0;
    for (uint32_t i = 0; i < Q->n; i++) {
        const engine_docs_term *T = &req->aTerm[Q->first + i];
        uint64_t start = D->aListOffset[T->list], len = D->aListOffset[T->list + 1] - start;
        uint64_t cached = req->aPrefix && req->aPrefix[T->list] < len ? req->aPrefix[T->list] : len;
        CHECK_EQ(T->len, len);
        CHECK_EQ(T->cached, cached);
        CHECK(i == 0 || req->aTerm[Q->first + i - 1].len <= len); /* shortest first */
        if (cached && cached < len) {
            if (D->aPosting[start + cached - 1] < m)
                m = D->aPosting[start + cached - 1];
            if (i == 0)
                next0 = D->aPosting[start + cached];
        }
    }
    CHECK_EQ(Q->m, m);
    CHECK_EQ(Q->next0, next0);
    gFake.nPruned += m != UINT32_MAX;
}

static genie_status fake_engine(void **ppResident, engine_docs_request *req)
{
    (void)ppResident;
    uint32_t nb = req->batchQueries < FAKE_BATCH ? req->batchQueries : FAKE_BATCH, k = req->k;
    CHECK(nb >= 1);
    gFake.planId = req->planId;
    gFake.aPrefix = req->aPrefix;
    gFake.batchQueries = req->batchQueries;
    gFake.nLists = req->pData->nLists;
    uint32_t *aIdx = malloc(nb * sizeof *aIdx), *aSkip = malloc((req->nQuery + 1) * sizeof *aSkip);
    engine_docs_outcome *aOut = calloc(nb, sizeof *aOut), *aZero = calloc(req->nQuery + 1, sizeof *aZero);
    genie_docs_hit *aHit = malloc((size_t)nb * k * sizeof *aHit);
    genie_status rc = GENIE_OK;
    uint32_t nSkip = 0, q = 0;
    while (rc == GENIE_OK && q < req->nQuery) {
        uint32_t n = 0;
        for (; q < req->nQuery && n < nb; q++) {
            if (q % 4 == 3) {
                aSkip[nSkip++] = q;
                continue;
            }
            const engine_docs_query *Q = &req->aQuery[q];
            fake_check_cache(req, Q);
            uint64_t len0 = 0;
            if (Q->n) {
                uint32_t l0 = req->aTerm[Q->first].list;
                len0 = req->pData->aListOffset[l0 + 1] - req->pData->aListOffset[l0];
            }
            uint64_t end = q % 4 == 0 ? len0 : q % 4 == 1 ? len0 / 2 : 0;
            uint32_t nHit = Q->n ? fake_topk(req, q, end, aHit + (size_t)n * k) : 0;
            aOut[n] = (engine_docs_outcome){nHit, q % 4 == 0, end, end};
            aIdx[n++] = q;
        }
        if (n) {
            req->nBatch++;
            rc = req->xDone(req->pDoneCtx, aIdx, aOut, aHit, n);
        }
    }
    if (rc == GENIE_OK && nSkip)
        rc = req->xDone(req->pDoneCtx, aSkip, aZero, NULL, nSkip);
    gFake.nBatch = req->nBatch;
    free(aIdx);
    free(aSkip);
    free(aOut);
    free(aZero);
    free(aHit);
    return rc;
}

static void fake_free(void *pResident)
{
    CHECK(pResident == NULL); /* the fake keeps nothing */
}

static genie_status fake_check(void)
{
    return GENIE_OK;
}

static const engine_docs_ops fakeDocsOps = {.xSearch = fake_engine, .xFree = fake_free, .nMaxK = 1024};

static const engine_backend fakeDocs = {
    .iVersion = ENGINE_BACKEND_VERSION, .zName = "test-docs", .xCheck = fake_check, .xSearch = engine_cpu_search,
    .pDocs = &fakeDocsOps,
};

/*
 * The GPU search's host side with the stand-in engine: every answer equals
 * the exhaustive CPU one, whichever way the "GPU" handed it back, on 1 and
 * 3 threads; the counts add up; the cache's prefixes are the plan's and
 * are computed again only when the plan or S_c changes.
 */
TEST(docs_gpu_host_side_equals_exhaustive)
{
    uint64_t rng = 0x9b0;
    genie_backend id;
    CHECK_OK(engine_backend_register(&fakeDocs, &id));
    gFake.nPruned = 0;
    for (int ci = 0; ci < 5; ci++) {
        coll c;
        make_coll(&c, 1 + ci % 4, &rng);
        opened o = build_coll(&c, "g.genie");
        size_t nQ = 50 + 400 * (size_t)(ci % 2);
        char **az = make_queries(&c, nQ, &rng);
        size_t *an = malloc(nQ * sizeof *an);
        for (size_t q = 0; q < nQ; q++)
            an[q] = strlen(az[q]);
        genie_docs_info info;
        genie_docs_get_info(o.d, &info);
        genie_docs_plan *p;
        CHECK_OK(genie_docs_plan_build(o.d, (const char *const *)az, an, nQ, 10, GENIE_DOCS_VFB, 1, &p));
        uint64_t lastPlanId = 0;
        for (int run = 0; run < 4; run++) {
            uint32_t k = run == 3 ? 1024 : (uint32_t)(1 + test_rand(&rng) % 20); /* 1024: the GPU's largest */
            genie_docs_results *ex = search(o.d, (const char *const *)az, nQ, k, GENIE_DOCS_AND, 1, 1);
            genie_docs_options opt = {.k = k, .mode = GENIE_DOCS_AND, .threads = run % 2 ? 3 : 1};
            opt.backend = id;
            /* Runs 0 and 1: the same plan and S_c, a tiny cache; 2 and 3: an eighth of the index. */
            opt.gpu_memory = 16 * info.n_postings + (1u << 20);
            opt.cache_fraction = run < 2 ? 0.001 : (double)info.n_postings / (double)opt.gpu_memory;
            opt.plan = p;
            genie_docs_results *r;
            CHECK_OK(genie_docs_search(o.d, (const char *const *)az, an, nQ, &opt, &r));
            check_same(ex, r);
            genie_docs_stats st, sEx;
            genie_docs_results_stats(r, &st);
            genie_docs_results_stats(ex, &sEx);
            CHECK(st.backend == id);
            CHECK_EQ(st.post_processed, nQ - (nQ + 3) / 4); /* all but q % 4 == 0 */
            CHECK_EQ(st.gpu_queries, nQ - st.post_processed);
            CHECK_EQ(st.postings_total, sEx.postings_total);
            CHECK(st.postings_read <= st.postings_total);
            CHECK_EQ(st.batches, gFake.nBatch);
            CHECK(gFake.batchQueries >= 1024);
            /* The engine saw the plan's prefixes under S_c, kept while neither changes. */
            uint64_t *aPre = calloc(gFake.nLists + 1, sizeof *aPre), used;
            uint64_t cacheBytes = (uint64_t)(opt.cache_fraction * (double)opt.gpu_memory);
            CHECK_OK(genie_docs_plan_prefixes(p, cacheBytes, aPre, &used));
            CHECK(gFake.aPrefix != NULL);
            CHECK(memcmp(aPre, gFake.aPrefix, gFake.nLists * sizeof *aPre) == 0);
            CHECK_EQ(st.cache_bytes, used);
            if (run == 1 || run == 3)
                CHECK_EQ(gFake.planId, lastPlanId);
            if (run == 2)
                CHECK(gFake.planId != lastPlanId);
            lastPlanId = gFake.planId;
            free(aPre);
            genie_docs_results_free(r);
            genie_docs_results_free(ex);
        }
        genie_docs_plan_free(p);
        for (size_t q = 0; q < nQ; q++)
            free(az[q]);
        free(az);
        free(an);
        close_opened(&o);
        free_coll(&c);
    }
    CHECK(gFake.nPruned > 0); /* some queries met a pruned list */
}

TEST(docs_cache_plan_files_rejected)
{
    genie_docs_builder *db = new_builder();
    const char *az[] = {"a b c", "a b", "c d a", "d"};
    add_all(db, az, 4);
    opened o = write_open(db, "pl.genie");
    const char *aq[] = {"a", "a b", "d c"};
    size_t an[] = {1, 3, 3};
    genie_docs_plan *p;
    CHECK_RC(genie_docs_plan_build(o.d, aq, an, 3, 10, GENIE_DOCS_VFB, 0, &p), GENIE_EINVAL);
    CHECK_RC(genie_docs_plan_build(o.d, aq, an, 3, 10, (genie_docs_policy)7, 1, &p), GENIE_EINVAL);
    CHECK_OK(genie_docs_plan_build(o.d, aq, an, 3, 10, GENIE_DOCS_VFB, 1, &p));
    CHECK_OK(genie_docs_plan_write(p, test_path("ok.plan")));
    genie_docs_plan_free(p);
    size_t n;
    unsigned char *a = test_read_file(test_path("ok.plan"), &n);
    /* Every truncation and every flipped byte is refused. */
    for (size_t len = 0; len < n; len++) {
        test_write_file(test_path("bad.plan"), a, len);
        CHECK(genie_docs_plan_read(o.d, test_path("bad.plan"), &p) != GENIE_OK);
    }
    for (size_t i = 0; i < n; i++) {
        a[i] ^= 0x24;
        test_write_file(test_path("bad.plan"), a, n);
        CHECK(genie_docs_plan_read(o.d, test_path("bad.plan"), &p) != GENIE_OK);
        a[i] ^= 0x24;
    }
    free(a);
    /* A plan for another index. */
    genie_docs_builder *db2 = new_builder();
    add_all(db2, az, 3);
    opened o2 = write_open(db2, "other.genie");
    CHECK_RC(genie_docs_plan_read(o2.d, test_path("ok.plan"), &p), GENIE_EINVAL);
    close_opened(&o2);
    close_opened(&o);
}
