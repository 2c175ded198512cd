/*
 * Recall targets (transform/recall.c): on random collections of sets,
 * strings and vectors, a search with a recall target R achieves, measured
 * against a brute force written here, a recall@k of at least R - 0.05 on
 * queries drawn the way the estimate models them (docs/RECALL.md): sets
 * of the collection with elements replaced, with a different seed from
 * the estimate's sample; strings of the collection with 10%, 20%, 30% and
 * 40% random edits, one batch each, whose edit rate the search measures
 * itself (the new letters uniform over the alphabet, where the model
 * draws them from the collection); vectors drawn from the same
 * distribution as the base and not in it.
 *
 * The tolerance.  The estimate is a mean over 200 pseudo-queries (strings:
 * per edit rate, two rates interpolated) and the test's measure a mean
 * over 200 others (strings: 600, since four batches of twelve checks give
 * the noise more chances): each per-query recall lies in [0, 1], so a mean
 * of 200 has a standard error of at most sqrt(0.25 / 200) = 0.035 and the
 * difference of two at most 0.05 (~1 standard error of the worst case;
 * per-query recalls are far from that worst case, and near R = 0.99 they
 * are nearly all 1).  The runs are deterministic, so a pass is a pass
 * every time; 0.05 is what a user can expect from 200 samples.
 *
 * Recall is counted with ties, as genie eval does: a found answer is
 * correct when its score is at least as good as the k-th true answer's.
 */
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/vectors.h"
#include "test.h"
#include "util/crc32c.h"

#define RECALL_TOLERANCE 0.05
#define NQ 200
#define NQ_SEQ 600

static const double aTarget[] = {0.8, 0.9, 0.99};

static double next_unit(uint64_t *s)
{
    return (double)(test_rand(s) >> 11) * 0x1.0p-53;
}

static genie_search_options cpu_options(void)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.threads = 2;
    return opt;
}

/* ----------------------------------------------------------------- sets */

/* A set as sorted distinct element ids (the test's own representation). */
typedef struct iset {
    uint32_t a[64];
    size_t n;
} iset;

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

static void iset_norm(iset *s)
{
    qsort(s->a, s->n, sizeof *s->a, cmp_u32);
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        if (m == 0 || s->a[m - 1] != s->a[i])
            s->a[m++] = s->a[i];
    s->n = m;
}

static size_t iset_line(const iset *s, char *z)
{
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        m += (size_t)sprintf(z + m, "%se%u", i ? " " : "", s->a[i]);
    return m;
}

typedef struct frac {
    size_t s, u;
} frac;

static int cmp_frac_desc(const void *x, const void *y)
{
    const frac *a = x, *b = y;
    uint64_t l = (uint64_t)a->s * b->u, r = (uint64_t)b->s * a->u;
    return (l < r) - (l > r);
}

/* |A n B| of two sorted distinct lists, by merging. */
static size_t iset_shared(const iset *a, const iset *b)
{
    size_t c = 0, i = 0, j = 0;
    while (i < a->n && j < b->n) {
        if (a->a[i] == b->a[j])
            c++, i++, j++;
        else if (a->a[i] < b->a[j])
            i++;
        else
            j++;
    }
    return c;
}

TEST(recall_sets_meets_target)
{
    enum { N = 3000 };
    uint64_t rng = 11;
    iset *aObj = calloc(N, sizeof *aObj);
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, &bo, NULL));
    char z[1024];
    for (size_t o = 0; o < N; o++) {
        /* Skewed element ids (a few frequent ones), 4..30 elements. */
        aObj[o].n = 4 + test_rand(&rng) % 27;
        for (size_t i = 0; i < aObj[o].n; i++) {
            double u = next_unit(&rng);
            aObj[o].a[i] = (uint32_t)(u * u * 2000);
        }
        iset_norm(&aObj[o]);
        CHECK_OK(genie_set_builder_add(sb, z, iset_line(&aObj[o], z)));
    }
    const char *zPath = test_path("sets.genie");
    CHECK_OK(genie_set_builder_write(sb, zPath));
    genie_set_builder_free(sb);
    /* Queries: objects with each element replaced by a new one with probability 0.2. */
    iset *aQ = calloc(NQ, sizeof *aQ);
    char **az = calloc(NQ, sizeof *az);
    size_t *an = calloc(NQ, sizeof *an);
    uint64_t rq = 977;
    for (size_t q = 0; q < NQ; q++) {
        aQ[q] = aObj[test_rand(&rq) % N];
        for (size_t i = 0; i < aQ[q].n; i++)
            if (next_unit(&rq) < 0.2)
                aQ[q].a[i] = 1000000 + (uint32_t)(test_rand(&rq) % 1000000);
        iset_norm(&aQ[q]);
        az[q] = malloc(1024);
        an[q] = iset_line(&aQ[q], az[q]);
    }
    genie_index *idx;
    CHECK_OK(genie_index_open(zPath, &idx));
    genie_search_options opt = cpu_options();
    const uint32_t k = 10;
    frac *aFrac = malloc(N * sizeof *aFrac);
    for (size_t t = 0; t < sizeof aTarget / sizeof *aTarget; t++) {
        genie_set_options so = {.k = k, .recall = aTarget[t]};
        genie_set_results *r;
        CHECK_OK(genie_set_search(idx, (const char *const *)az, an, NQ, &so, &opt, &r));
        genie_search_stats st;
        genie_set_results_stats(r, &st);
        CHECK(st.recall_estimate >= aTarget[t]);
        double sum = 0;
        size_t nUsed = 0;
        for (size_t q = 0; q < NQ; q++) {
            /* Brute force: the k-th best Jaccard as a fraction shared / union. */
            size_t aS[N], aU[N], nPos = 0;
            for (size_t o = 0; o < N; o++) {
                aS[o] = iset_shared(&aQ[q], &aObj[o]);
                aU[o] = aQ[q].n + aObj[o].n - aS[o];
                nPos += aS[o] > 0;
            }
            size_t want = nPos < k ? nPos : k;
            if (want == 0)
                continue;
            /* kth: the want-th largest fraction shared / union. */
            size_t nF = 0;
            for (size_t o = 0; o < N; o++)
                if (aS[o])
                    aFrac[nF++] = (frac){aS[o], aU[o]};
            qsort(aFrac, nF, sizeof *aFrac, cmp_frac_desc);
            size_t kthS = aFrac[want - 1].s, kthU = aFrac[want - 1].u;
            size_t nHit, good = 0;
            const genie_set_hit *h = genie_set_results_get(r, q, &nHit);
            for (size_t i = 0; i < nHit; i++) {
                size_t s = aS[h[i].object], u = aU[h[i].object];
                CHECK_EQ(s, h[i].shared);
                good += (uint64_t)s * kthU >= (uint64_t)kthS * u;
            }
            sum += (double)(good < want ? good : want) / (double)want;
            nUsed++;
        }
        double achieved = sum / (double)nUsed;
        if (achieved < aTarget[t] - RECALL_TOLERANCE)
            test_fail_at(__FILE__, __LINE__, "sets: target %.2f, K = %u, achieved %.4f", aTarget[t], st.candidates,
                         achieved);
        genie_set_results_free(r);
    }
    genie_index_close(idx);
    free(aFrac);
    for (size_t q = 0; q < NQ; q++)
        free(az[q]);
    free(az);
    free(an);
    free(aQ);
    free(aObj);
}

/* ------------------------------------------------------------ sequences */

static uint32_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
    uint32_t row[64], prev;
    for (size_t j = 0; j <= nb; j++)
        row[j] = (uint32_t)j;
    for (size_t i = 1; i <= na; i++) {
        prev = row[0];
        row[0] = (uint32_t)i;
        for (size_t j = 1; j <= nb; j++) {
            uint32_t cur = row[j];
            uint32_t best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[nb];
}

/* @p o's string with max(1, round(pct% of its length)) random edits over the alphabet a..f; its length. */
static size_t edited_word(const char *z, size_t m, unsigned pct, uint64_t *rq, char *q)
{
    memcpy(q, z, m);
    size_t nEdit = (size_t)floor(pct / 100.0 * (double)m + 0.5);
    for (size_t e = 0; e < (nEdit ? nEdit : 1); e++) {
        unsigned op = (unsigned)(test_rand(rq) % 3);
        char ch = (char)('a' + test_rand(rq) % 6);
        if (op == 0) {
            q[test_rand(rq) % m] = ch;
        } else if (op == 1) {
            size_t at = test_rand(rq) % (m + 1);
            memmove(q + at + 1, q + at, m - at);
            q[at] = ch;
            m++;
        } else if (m > 1) {
            size_t at = test_rand(rq) % m;
            memmove(q + at, q + at + 1, m - at - 1);
            m--;
        }
    }
    return m;
}

/*
 * Strings with 10%, 20%, 30% and 40% edits, one batch each: the estimate
 * models each rate and the search estimates the batch's rate from the
 * queries themselves (docs/RECALL.md), so every batch meets every target.
 */
TEST(recall_sequences_meets_target)
{
    enum { N = 4000 };
    uint64_t rng = 5;
    char (*aObj)[16] = calloc(N, sizeof *aObj);
    size_t *anObj = calloc(N, sizeof *anObj);
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_seq_builder *sb;
    CHECK_OK(genie_seq_builder_new(&sb, &bo, 3));
    for (size_t o = 0; o < N; o++) {
        /* Words of 3..12 letters from a small alphabet: many near neighbours. */
        anObj[o] = 3 + test_rand(&rng) % 10;
        for (size_t i = 0; i < anObj[o]; i++)
            aObj[o][i] = (char)('a' + test_rand(&rng) % 6);
        CHECK_OK(genie_seq_builder_add(sb, aObj[o], anObj[o]));
    }
    const char *zPath = test_path("words.genie");
    CHECK_OK(genie_seq_builder_write(sb, zPath));
    genie_seq_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(zPath, &idx));
    genie_search_options opt = cpu_options();
    const uint32_t k = 5;
    char (*aQ)[32] = calloc(NQ_SEQ, sizeof *aQ);
    size_t *an = calloc(NQ_SEQ, sizeof *an);
    const char **az = calloc(NQ_SEQ, sizeof *az);
    uint32_t *aD = malloc((size_t)NQ_SEQ * N * sizeof *aD), aKth[NQ_SEQ];
    for (unsigned pct = 10; pct <= 40; pct += 10) {
        uint64_t rq = 1234 + pct;
        for (size_t q = 0; q < NQ_SEQ; q++) {
            size_t o = test_rand(&rq) % N;
            an[q] = edited_word(aObj[o], anObj[o], pct, &rq, aQ[q]);
            az[q] = aQ[q];
            /* Brute force: every distance, and the k-th smallest. */
            uint32_t hist[64] = {0};
            for (size_t i = 0; i < N; i++) {
                uint32_t d = edit_distance(az[q], an[q], aObj[i], anObj[i]);
                aD[q * N + i] = d;
                hist[d < 63 ? d : 63]++;
            }
            uint32_t kth = 0, seen = 0;
            while (seen + hist[kth] < k)
                seen += hist[kth++];
            aKth[q] = kth;
        }
        for (size_t t = 0; t < sizeof aTarget / sizeof *aTarget; t++) {
            genie_seq_options so = {.k = k, .recall = aTarget[t]};
            genie_seq_results *r;
            CHECK_OK(genie_seq_search(idx, az, an, NQ_SEQ, &so, &opt, &r));
            genie_search_stats st;
            genie_seq_results_stats(r, &st);
            CHECK(st.recall_estimate >= aTarget[t]);
            CHECK(st.recall_edit_rate >= 0.1 && st.recall_edit_rate <= 0.5);
            double sum = 0;
            for (size_t q = 0; q < NQ_SEQ; q++) {
                size_t nHit, good = 0;
                const genie_seq_hit *h = genie_seq_results_get(r, q, &nHit, NULL, NULL);
                for (size_t i = 0; i < nHit; i++) {
                    CHECK_EQ(h[i].distance, aD[q * N + h[i].object]);
                    good += h[i].distance <= aKth[q];
                }
                sum += (double)(good < k ? good : k) / k;
            }
            double achieved = sum / NQ_SEQ;
            if (achieved < aTarget[t] - RECALL_TOLERANCE)
                test_fail_at(__FILE__, __LINE__,
                             "sequences, %u%% edits: target %.2f, K = %u (edit rate %.3f assumed), achieved %.4f", pct,
                             aTarget[t], st.candidates, st.recall_edit_rate, achieved);
            if (getenv("GENIE_TEST_VERBOSE"))
                fprintf(stderr, "  sequences %u%% edits: target %.2f: K %u, rate %.3f, estimate %.4f, achieved %.4f\n",
                        pct, aTarget[t], st.candidates, st.recall_edit_rate, st.recall_estimate, achieved);
            genie_seq_results_free(r);
        }
    }
    genie_index_close(idx);
    free(aD);
    free(aQ);
    free(an);
    free(az);
    free(aObj);
    free(anObj);
}

/* -------------------------------------------------------------- vectors */

static double l2(const float *a, const float *b, uint32_t dim)
{
    double s = 0;
    for (uint32_t j = 0; j < dim; j++)
        s += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
    return sqrt(s);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double gaussian(uint64_t *s)
{
    double u1 = next_unit(s), u2 = next_unit(s);
    return sqrt(-2 * log(1 - u1)) * cos(6.283185307179586 * u2);
}

/* recall@k of answers @p aOut against the brute force (ties at the k-th distance count as found). */
static double vectors_recall(const genie_vectors *base, const genie_vectors *qv, uint32_t k, const genie_neighbor *aOut,
                             const uint32_t *aN)
{
    double *aD = malloc(base->n * sizeof *aD), *aSorted = malloc(base->n * sizeof *aSorted);
    uint32_t dim = base->dim;
    double sum = 0;
    for (size_t q = 0; q < qv->n; q++) {
        for (size_t i = 0; i < base->n; i++)
            aD[i] = l2(qv->data + q * dim, base->data + i * dim, dim);
        memcpy(aSorted, aD, base->n * sizeof *aD);
        qsort(aSorted, base->n, sizeof *aSorted, cmp_double);
        double kth = aSorted[k - 1];
        size_t good = 0;
        for (uint32_t i = 0; i < aN[q]; i++)
            good += aD[aOut[q * k + i].id] <= kth * (1 + 1e-6);
        sum += (double)(good < k ? good : k) / k;
    }
    free(aD);
    free(aSorted);
    return sum / qv->n;
}

/* A search with no K, radius or target: K = 10 k before the index has an estimate, the default target's after. */
static void check_default_target(genie_index *idx, const genie_vectors *base, const genie_vectors *qv, uint32_t k,
                                 int hasEstimate)
{
    genie_vsearch_options so, sr;
    genie_vsearch_options_init(&so);
    so.search = cpu_options();
    so.k = k;
    sr = so;
    sr.recall = GENIE_VECTORS_DEFAULT_RECALL;
    genie_neighbor *aOut = malloc((size_t)qv->n * k * sizeof *aOut), *aRef = malloc((size_t)qv->n * k * sizeof *aRef);
    uint32_t *aN = malloc(qv->n * sizeof *aN), *aNRef = malloc(qv->n * sizeof *aNRef);
    genie_search_stats st, stRef;
    CHECK_OK(genie_vectors_search(idx, qv, &so, aOut, aN, &st));
    if (!hasEstimate) {
        CHECK(st.recall_target == 0);
        CHECK_EQ(st.candidates, 10 * k);
        CHECK(st.recall_estimate < 0);
    } else {
        CHECK(st.recall_target == GENIE_VECTORS_DEFAULT_RECALL);
        CHECK_OK(genie_vectors_search(idx, qv, &sr, aRef, aNRef, &stRef));
        CHECK_EQ(st.candidates, stRef.candidates);
        CHECK_EQ(st.radius, stRef.radius);
        CHECK(memcmp(aN, aNRef, qv->n * sizeof *aN) == 0);
        CHECK(memcmp(aOut, aRef, (size_t)qv->n * k * sizeof *aOut) == 0);
        double achieved = vectors_recall(base, qv, k, aOut, aN);
        if (achieved < GENIE_VECTORS_DEFAULT_RECALL - RECALL_TOLERANCE)
            test_fail_at(__FILE__, __LINE__, "vectors, no options: K = %u, r = %u, achieved %.4f", st.candidates,
                         st.radius, achieved);
    }
    free(aOut);
    free(aRef);
    free(aN);
    free(aNRef);
}

TEST(recall_vectors_meets_target)
{
    enum { N = 3000, DIM = 16, CLUSTERS = 30 };
    uint64_t rng = 3;
    genie_vectors base = {N, DIM, malloc((size_t)N * DIM * sizeof(float))};
    float centre[CLUSTERS][DIM];
    for (int c = 0; c < CLUSTERS; c++)
        for (int j = 0; j < DIM; j++)
            centre[c][j] = (float)(10 * gaussian(&rng));
    for (size_t i = 0; i < N; i++) {
        size_t c = test_rand(&rng) % CLUSTERS;
        for (int j = 0; j < DIM; j++)
            base.data[i * DIM + j] = centre[c][j] + (float)gaussian(&rng);
    }
    genie_lsh_params p;
    memset(&p, 0, sizeof p);
    p.metric = GENIE_METRIC_L2;
    p.m = 64;
    p.seed = 9;
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    const char *zPath = test_path("v.genie");
    CHECK_OK(genie_vectors_build(&base, &p, &bo, zPath));
    /* Queries: new points drawn like the base (held out), as the estimate's leave-one-out models them. */
    genie_vectors qv = {NQ, DIM, malloc((size_t)NQ * DIM * sizeof(float))};
    uint64_t rq = 31;
    for (size_t q = 0; q < NQ; q++) {
        size_t c = test_rand(&rq) % CLUSTERS;
        for (int j = 0; j < DIM; j++)
            qv.data[q * DIM + j] = centre[c][j] + (float)gaussian(&rq);
    }
    genie_index *idx;
    CHECK_OK(genie_index_open(zPath, &idx));
    const uint32_t k = 10;
    check_default_target(idx, &base, &qv, k, 0); /* genie_vectors_build writes no side file */
    genie_neighbor *aOut = malloc((size_t)NQ * k * sizeof *aOut);
    uint32_t aN[NQ];
    for (size_t t = 0; t < sizeof aTarget / sizeof *aTarget; t++) {
        genie_vsearch_options so;
        memset(&so, 0, sizeof so);
        so.search = cpu_options();
        so.k = k;
        so.recall = aTarget[t];
        genie_search_stats st;
        CHECK_OK(genie_vectors_search(idx, &qv, &so, aOut, aN, &st));
        CHECK(st.recall_estimate >= aTarget[t]);
        CHECK(st.recall_target == aTarget[t]);
        double achieved = vectors_recall(&base, &qv, k, aOut, aN);
        if (achieved < aTarget[t] - RECALL_TOLERANCE)
            test_fail_at(__FILE__, __LINE__, "vectors: target %.2f, K = %u, r = %u, achieved %.4f", aTarget[t],
                         st.candidates, st.radius, achieved);
    }
    genie_index_close(idx);
    /* The targets' searches left the side file: a new open searches for the default target. */
    CHECK_OK(genie_index_open(zPath, &idx));
    check_default_target(idx, &base, &qv, k, 1);
    genie_index_close(idx);
    free(aOut);
    free(qv.data);
    free(base.data);
}

/* A build's default target is stored in the index and met by searches given none. */
TEST(recall_vectors_build_target)
{
    enum { N = 1500, DIM = 8 };
    uint64_t rng = 5;
    genie_vectors base = {N, DIM, malloc((size_t)N * DIM * sizeof(float))};
    for (size_t i = 0; i < (size_t)N * DIM; i++)
        base.data[i] = (float)gaussian(&rng);
    genie_vectors qv = {NQ, DIM, base.data}; /* the first vectors, as queries */
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_lsh_params p = {.metric = GENIE_METRIC_L2, .m = 32, .seed = 4, .recall = 1.5};
    const char *zPath = test_path("vt.genie");
    CHECK_RC(genie_vectors_build(&base, &p, &bo, zPath), GENIE_EINVAL);
    p.recall = 0.8;
    CHECK_OK(genie_vectors_build(&base, &p, &bo, zPath));
    genie_index *idx;
    CHECK_OK(genie_index_open(zPath, &idx));
    genie_lsh_params got;
    CHECK_OK(genie_vectors_index_params(idx, &got));
    CHECK(got.recall == 0.8);
    CHECK_OK(genie_recall_prepare(idx, 0));
    genie_vsearch_options so, sr;
    genie_vsearch_options_init(&so);
    so.search = cpu_options();
    sr = so;
    sr.recall = 0.8;
    genie_neighbor *aOut = malloc(NQ * 10 * sizeof *aOut), *aRef = malloc(NQ * 10 * sizeof *aRef);
    uint32_t aN[NQ], aNRef[NQ];
    genie_search_stats st, stRef;
    CHECK_OK(genie_vectors_search(idx, &qv, &so, aOut, aN, &st));
    CHECK_OK(genie_vectors_search(idx, &qv, &sr, aRef, aNRef, &stRef));
    CHECK(st.recall_target == 0.8);
    CHECK_EQ(st.candidates, stRef.candidates);
    CHECK(memcmp(aOut, aRef, NQ * 10 * sizeof *aOut) == 0);
    genie_index_close(idx);
    /* A write in the log: the file's estimate no longer describes what a search reads, so K = 10 k (no error). */
    genie_writer *w;
    CHECK_OK(genie_writer_open(zPath, &w));
    genie_vectors one = {1, DIM, base.data};
    CHECK_OK(genie_writer_add_vectors(w, &one, NULL, NULL));
    genie_writer_close(w);
    CHECK_OK(genie_index_open(zPath, &idx));
    CHECK_OK(genie_vectors_search(idx, &qv, &so, aOut, aN, &st));
    CHECK(st.recall_target == 0);
    CHECK_EQ(st.candidates, 100);
    genie_index_close(idx);
    char zWal[4096];
    snprintf(zWal, sizeof zWal, "%s.wal", zPath);
    CHECK(remove(zWal) == 0); /* the builds below replace the file: its log would name the old one */

    /* An inverted file: the default nprobe chosen for the build's target, which the index keeps. */
    genie_ivf_params ip = {.metric = GENIE_METRIC_L2, .nlist = 30, .seed = 2, .backend = GENIE_BACKEND_CPU,
                           .recall = 0.99};
    CHECK_OK(genie_vectors_build_ivf(&base, &ip, &bo, zPath));
    CHECK_OK(genie_index_open(zPath, &idx));
    genie_ivf_info iv;
    CHECK_OK(genie_vectors_index_ivf(idx, &iv));
    CHECK(iv.default_recall == 0.99);
    CHECK_OK(genie_vectors_search(idx, &qv, &so, aOut, aN, &st));
    CHECK(st.recall_target == 0.99);
    CHECK_EQ(st.nprobe, iv.default_nprobe);
    genie_index_close(idx);
    ip.recall = 0.5;
    CHECK_OK(genie_vectors_build_ivf(&base, &ip, &bo, zPath));
    CHECK_OK(genie_index_open(zPath, &idx));
    genie_ivf_info iv5;
    CHECK_OK(genie_vectors_index_ivf(idx, &iv5));
    CHECK(iv5.default_recall == 0.5);
    CHECK(iv5.default_nprobe <= iv.default_nprobe);
    genie_index_close(idx);
    ip.recall = -0.1;
    CHECK_RC(genie_vectors_build_ivf(&base, &ip, &bo, zPath), GENIE_EINVAL);
    free(aOut);
    free(aRef);
    free(base.data);
}

/* ----------------------------------------------------- errors, side file */

static genie_index *small_sets_index(const char *zName, uint64_t seed)
{
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, &bo, NULL));
    char z[256];
    for (int o = 0; o < 300; o++) {
        size_t m = 0;
        for (int i = 0; i < 6; i++)
            m += (size_t)sprintf(z + m, "x%u ", (unsigned)(test_rand(&seed) % 100));
        CHECK_OK(genie_set_builder_add(sb, z, m));
    }
    CHECK_OK(genie_set_builder_write(sb, test_path(zName)));
    genie_set_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(zName), &idx));
    return idx;
}

TEST(recall_bad_targets)
{
    genie_index *idx = small_sets_index("s.genie", 1);
    genie_search_options opt = cpu_options();
    const char *az[1] = {"x1 x2 x3"};
    size_t an[1] = {8};
    genie_set_results *r = NULL;
    const double aBad[] = {-0.5, 1.0000001, 2, NAN, -INFINITY, INFINITY};
    for (size_t i = 0; i < sizeof aBad / sizeof *aBad; i++) {
        genie_set_options so = {.k = 10, .recall = aBad[i]};
        CHECK_RC(genie_set_search(idx, az, an, 1, &so, &opt, &r), GENIE_EINVAL);
        CHECK(strstr(genie_last_error(), "(0, 1]") != NULL);
    }
    genie_set_options so = {.k = 10, .exact = 1, .recall = 0.9}; /* exact */
    CHECK_RC(genie_set_search(idx, az, an, 1, &so, &opt, &r), GENIE_EINVAL);
    so = (genie_set_options){.k = 10, .candidates = 50, .recall = 0.9}; /* explicit K */
    CHECK_RC(genie_set_search(idx, az, an, 1, &so, &opt, &r), GENIE_EINVAL);
    so = (genie_set_options){.k = 101, .recall = 0.9};
    CHECK_RC(genie_set_search(idx, az, an, 1, &so, &opt, &r), GENIE_EINVAL);
    so = (genie_set_options){.k = 10, .recall = 1.0}; /* R = 1 is allowed */
    CHECK_OK(genie_set_search(idx, az, an, 1, &so, &opt, &r));
    genie_search_stats st;
    genie_set_results_stats(r, &st);
    CHECK(st.recall_estimate == 1.0);
    genie_set_results_free(r);
    genie_index_close(idx);

    /* sequences: not with --certify's limit */
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_seq_builder *qb;
    CHECK_OK(genie_seq_builder_new(&qb, &bo, 2));
    CHECK_OK(genie_seq_builder_add(qb, "hello", 5));
    CHECK_OK(genie_seq_builder_add(qb, "help", 4));
    CHECK_OK(genie_seq_builder_write(qb, test_path("w.genie")));
    genie_seq_builder_free(qb);
    CHECK_OK(genie_index_open(test_path("w.genie"), &idx));
    genie_seq_results *sr = NULL;
    genie_seq_options qo = {.k = 1, .max_candidates = 64, .recall = 0.9};
    CHECK_RC(genie_seq_search(idx, az, an, 1, &qo, &opt, &sr), GENIE_EINVAL);
    qo = (genie_seq_options){.k = 1, .recall = NAN};
    CHECK_RC(genie_seq_search(idx, az, an, 1, &qo, &opt, &sr), GENIE_EINVAL);
    qo = (genie_seq_options){.k = 1, .recall = 0.5};
    CHECK_OK(genie_seq_search(idx, az, an, 1, &qo, &opt, &sr));
    genie_seq_results_free(sr);
    genie_index_close(idx);

    /* an index type without an estimate */
    double rec;
    test_objects objs = {0};
    uint32_t kw[2] = {1, 2}, *aKw[1] = {kw};
    size_t aN[1] = {2};
    objs.aKw = aKw;
    objs.aN = aN;
    objs.n = 1;
    idx = test_build(&objs, 4096, test_path("k.genie"));
    CHECK_RC(genie_recall_prepare(idx, 1), GENIE_EINVAL);
    CHECK_RC(genie_recall_predict(idx, 10, 100, 0, &rec, NULL), GENIE_EINVAL);
    genie_index_close(idx);
}

/* Reopen @p zName with the side file's bytes replaced; the prediction's status. */
static genie_status predict_with(const char *zName, const unsigned char *a, size_t n, double *pRec)
{
    char zSide[4096];
    snprintf(zSide, sizeof zSide, "%s.recall", test_path(zName));
    test_write_file(zSide, a, n);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path(zName), &idx));
    genie_status rc = genie_recall_predict(idx, 10, 100, 0, pRec, NULL);
    genie_index_close(idx);
    return rc;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Recompute the trailing CRC32C so that only the field checks stand guard. */
static void reseal(unsigned char *a, size_t n)
{
    put_u32(a + n - 4, util_crc32c(0, a, n - 4));
}

/* predict_with() on @p a with the u32 at @p off set to @p v and the checksum made valid again (in @p b). */
static genie_status predict_with_u32(const char *zName, const unsigned char *a, unsigned char *b, size_t n, size_t off,
                                     uint32_t v, double *pRec)
{
    memcpy(b, a, n);
    put_u32(b + off, v);
    reseal(b, n);
    return predict_with(zName, b, n, pRec);
}

/* The side file of index @p zName: its path in @p zSide (4096 bytes), its bytes (malloc'ed). */
static unsigned char *read_side_file(const char *zName, char *zSide, size_t *pn)
{
    snprintf(zSide, 4096, "%s.recall", test_path(zName));
    return test_read_file(zSide, pn);
}

TEST(recall_side_file_rejects_corruption)
{
    genie_index *idx = small_sets_index("s.genie", 2);
    double rec0, rec;
    uint32_t nSample;
    CHECK_OK(genie_recall_predict(idx, 10, 100, 0, &rec0, NULL));
    CHECK(rec0 == -1); /* nothing stored yet */
    CHECK_OK(genie_recall_prepare(idx, 1));
    CHECK_OK(genie_recall_predict(idx, 10, 100, 0, &rec0, &nSample));
    CHECK(rec0 >= 0 && rec0 <= 1);
    CHECK_EQ(nSample, 200);
    genie_index_close(idx);
    char zSide[4096];
    size_t n;
    unsigned char *a = read_side_file("s.genie", zSide, &n);
    unsigned char *b = malloc(n);
    CHECK(n > 64);
    /* Intact: read back, same prediction. */
    CHECK_OK(predict_with("s.genie", a, n, &rec));
    CHECK(rec == rec0);
    /* Every byte of the header and a spread of the rest, flipped. */
    for (size_t i = 0; i < n; i += i < 64 ? 1 : 61) {
        memcpy(b, a, n);
        b[i] ^= 0x40;
        genie_status rc = predict_with("s.genie", b, n, &rec);
        if (rc != GENIE_ECORRUPT && rc != GENIE_EFORMAT)
            test_fail_at(__FILE__, __LINE__, "byte %zu flipped: %s, recall %g", i, genie_strerror(rc), rec);
    }
    /* Truncated anywhere. */
    for (size_t len = 0; len < n; len += len < 64 ? 1 : 97)
        CHECK(predict_with("s.genie", a, len, &rec) != GENIE_OK);
    /* Counts that lie, with a valid checksum: never trusted, never allocated by.  Sets have one curve,
     * so its perturbation is at 56 and the first row at 60 (nTrue, signal, entries). */
    CHECK_RC(predict_with_u32("s.genie", a, b, n, 28, 0x7fffffff, &rec), GENIE_ECORRUPT); /* pseudo-queries */
    CHECK_RC(predict_with_u32("s.genie", a, b, n, 68, 0xfffffff0, &rec), GENIE_ECORRUPT); /* first row's entries */
    CHECK_RC(predict_with_u32("s.genie", a, b, n, 60, 101, &rec), GENIE_ECORRUPT);        /* nTrue over kMax */
    /* a level signal where the file has no signal depth; two curves for sets */
    CHECK_RC(predict_with_u32("s.genie", a, b, n, 64, 7, &rec), GENIE_ECORRUPT);
    CHECK_RC(predict_with_u32("s.genie", a, b, n, 40, 2, &rec), GENIE_ECORRUPT);
    /* A side file of version 1 (before the edit levels): refused, saying how it comes back. */
    CHECK_RC(predict_with_u32("s.genie", a, b, n, 8, 1, &rec), GENIE_EFORMAT);
    CHECK(strstr(genie_last_error(), "version 1; this library reads 2") != NULL);
    /* Another index's estimate. */
    genie_index *other = small_sets_index("t.genie", 3);
    genie_index_close(other);
    CHECK_RC(predict_with("t.genie", a, n, &rec), GENIE_EFORMAT);
    CHECK(strstr(genie_last_error(), "another index") != NULL);
    /* A damaged file is replaced when the estimate is needed: the same estimate again (deterministic). */
    memcpy(b, a, n);
    b[n / 2] ^= 1;
    test_write_file(zSide, b, n);
    CHECK_OK(genie_index_open(test_path("s.genie"), &idx));
    CHECK_OK(genie_recall_prepare(idx, 2));
    CHECK_OK(genie_recall_predict(idx, 10, 100, 0, &rec, NULL));
    CHECK(rec == rec0);
    genie_index_close(idx);
    size_t n2;
    unsigned char *c = test_read_file(zSide, &n2);
    CHECK_EQ(n2, n);
    CHECK(memcmp(a, c, n) == 0);
    free(c);
    free(a);
    free(b);
}

/* Sequences: five edit levels, their rates increasing, and a signal depth; a file that breaks either is refused. */
TEST(recall_side_file_edit_levels)
{
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_seq_builder *sb;
    CHECK_OK(genie_seq_builder_new(&sb, &bo, 2));
    uint64_t rng = 7;
    for (int o = 0; o < 300; o++) {
        char z[8];
        for (int i = 0; i < 6; i++)
            z[i] = (char)('a' + test_rand(&rng) % 5);
        CHECK_OK(genie_seq_builder_add(sb, z, 6));
    }
    CHECK_OK(genie_seq_builder_write(sb, test_path("q.genie")));
    genie_seq_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("q.genie"), &idx));
    CHECK_OK(genie_recall_prepare(idx, 2));
    double r;
    for (uint32_t c = 0; c < 5; c++) {
        CHECK_OK(genie_recall_predict(idx, 1, 32, c, &r, NULL));
        CHECK(r >= 0 && r <= 1);
    }
    CHECK_RC(genie_recall_predict(idx, 1, 32, 5, &r, NULL), GENIE_EINVAL);
    genie_index_close(idx);
    char zSide[4096];
    size_t n;
    unsigned char *a = read_side_file("q.genie", zSide, &n);
    unsigned char *b = malloc(n);
    CHECK(n > 80 && a[40] == 5 && a[44] == 32);
    for (int c = 0; c < 5; c++)
        CHECK_EQ(a[56 + 4 * c] | a[57 + 4 * c] << 8, 100 * (c + 1));
    CHECK_OK(predict_with("q.genie", a, n, &r));
    /* level 1's rate equal to level 0's */
    CHECK_RC(predict_with_u32("q.genie", a, b, n, 60, 100, &r), GENIE_ECORRUPT);
    /* five levels and no signal */
    CHECK_RC(predict_with_u32("q.genie", a, b, n, 44, 0, &r), GENIE_ECORRUPT);
    /* more levels than the library models */
    CHECK_RC(predict_with_u32("q.genie", a, b, n, 40, 6, &r), GENIE_ECORRUPT);
    free(a);
    free(b);
}

/* Run `genie build ARGS...` with files limited to @p maxBytes (writes past it fail with EFBIG); its exit status. */
static int build_with_file_limit(const char *const *azArg, rlim_t maxBytes, char *zErr, size_t nErr)
{
    char zLog[4096];
    snprintf(zLog, sizeof zLog, "%s", test_path("build.err"));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {maxBytes, maxBytes};
        signal(SIGXFSZ, SIG_IGN);
        if (maxBytes && setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(126);
        if (!freopen(zLog, "w", stderr))
            _exit(126);
        const char *azExec[16] = {GENIE_BIN_PATH, "build", "-q"};
        size_t n = 3;
        for (size_t i = 0; azArg[i] && n < 15; i++)
            azExec[n++] = azArg[i];
        azExec[n] = NULL;
        execv(azExec[0], (char *const *)azExec);
        _exit(127);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    size_t nLog = 0;
    unsigned char *a = test_read_file(zLog, &nLog);
    snprintf(zErr, nErr, "%.*s", (int)nLog, (const char *)a);
    free(a);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * genie build and INDEX.recall on a full disk (the case 9): a
 * sequences index of 300 short strings takes ~25 KB and its estimate
 * ~1.5 MB, so with files limited to 256 KB the index is written and its
 * side file is not.  The build fails saying so, and the estimate of the
 * index it replaced is gone rather than left beside the new one.
 */
TEST(recall_build_fails_when_its_side_file_cannot_be_written)
{
    char zIndex[2048], zOld[2048], zNew[2048], zSide[4096], zErr[4096];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("seq.genie")); /* test_path's own buffer is reused */
    snprintf(zOld, sizeof zOld, "%s", test_path("old.txt"));
    snprintf(zNew, sizeof zNew, "%s", test_path("new.txt"));
    snprintf(zSide, sizeof zSide, "%s.recall", zIndex);
    FILE *f = fopen(zOld, "w");
    CHECK(f != NULL);
    for (int i = 0; i < 200; i++)
        fprintf(f, "old%dstring%d\n", i % 31, i % 7);
    CHECK(fclose(f) == 0);
    f = fopen(zNew, "w");
    CHECK(f != NULL);
    for (int i = 0; i < 300; i++)
        fprintf(f, "word%dtail%d\n", i % 97, i % 13);
    CHECK(fclose(f) == 0);
    const char *azOld[] = {"-t", "sequences", "-o", zIndex, zOld, NULL};
    CHECK_EQ(build_with_file_limit(azOld, 0, zErr, sizeof zErr), 0);
    CHECK(access(zSide, F_OK) == 0);
    const char *azNew[] = {"-t", "sequences", "-o", zIndex, zNew, NULL};
    int st = build_with_file_limit(azNew, 256 << 10, zErr, sizeof zErr);
    if (st != 1 || !strstr(zErr, "not its recall estimate") || !strstr(zErr, zSide))
        test_fail_at(__FILE__, __LINE__, "a build whose side file cannot be written: exit %d, '%s'", st, zErr);
    CHECK(access(zSide, F_OK) != 0);
    genie_index *idx;
    CHECK_OK(genie_index_open(zIndex, &idx)); /* the new index itself is whole */
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.n_objects, 300);
    genie_index_close(idx);
    /* without the limit the same build writes both */
    CHECK_EQ(build_with_file_limit(azNew, 0, zErr, sizeof zErr), 0);
    CHECK(access(zSide, F_OK) == 0);
}
