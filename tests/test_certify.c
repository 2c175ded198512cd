/*
 * Sequences under --certify (docs/SEQUENCES.md): every answer is the exact
 * top-k of a brute force written here (a plain dynamic programme and a
 * full sort by (distance, id)), on random collections with 10-40% edits,
 * strings of 1-5 bytes, empty queries, duplicates and k > n; the queries
 * the fallback scanned are counted in the stats and flagged per query.
 * The cheap mode (certify_only) is checked too: certified answers exact,
 * no fallback.  Each case runs on $GENIE_TEST_BACKEND and on a test
 * backend whose batched edit distances (engine/edit.h) are computed here
 * and leave long queries undone, as the GPU module does with queries
 * beyond its limit: the path of transform/edit_batch.c without a GPU.
 */
#include "genie/metric.h"
#include "genie/sequences.h"
#include "engine/backend.h"
#include "engine/edit.h"
#include "test.h"

/* The textbook edit distance (unit costs), the oracle. */
static uint32_t dp_distance(const char *a, size_t na, const char *b, size_t nb)
{
    uint32_t *prev = malloc((nb + 1) * sizeof *prev), *cur = malloc((nb + 1) * sizeof *cur);
    for (size_t j = 0; j <= nb; j++)
        prev[j] = (uint32_t)j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = (uint32_t)i;
        for (size_t j = 1; j <= nb; j++) {
            uint32_t v = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            cur[j] = v;
        }
        uint32_t *t = prev;
        prev = cur;
        cur = t;
    }
    uint32_t d = prev[nb];
    free(prev);
    free(cur);
    return d;
}

/* ------------------------------------------------- a test edit backend */

#define FAKE_MAX_QUERY 12u /* longer queries are left undone, as the GPU leaves its longest */

static genie_status fake_edit(void **ppResident, const struct engine_edit_batch *b)
{
    (void)ppResident;
    for (uint32_t r = 0; r < b->nRun; r++) {
        const engine_edit_run *run = &b->aRun[r];
        const engine_strings *q = &b->queries;
        const char *zq = q->aByte + q->aStart[run->query];
        size_t nq = (size_t)(q->aStart[run->query + 1] - q->aStart[run->query]);
        for (uint32_t p = 0; p < run->n; p++) {
            uint32_t o = b->aObject ? b->aObject[run->first + p] : run->object0 + p;
            uint32_t d = ENGINE_EDIT_UNDONE;
            if (nq <= FAKE_MAX_QUERY) {
                d = dp_distance(zq, nq, b->base.aByte + b->base.aStart[o],
                                (size_t)(b->base.aStart[o + 1] - b->base.aStart[o]));
                if (d > b->aMax[run->query])
                    d = b->aMax[run->query] + 1;
            }
            b->out[run->first + p] = d;
        }
    }
    return GENIE_OK;
}

static void fake_edit_free(void *p)
{
    (void)p;
}

static genie_status fake_check(void)
{
    return GENIE_OK;
}

static const engine_edit_ops fakeEditOps = {.xDistances = fake_edit, .xFree = fake_edit_free};

static const engine_backend fakeEdit = {
    .iVersion = ENGINE_BACKEND_VERSION, .zName = "test-edit", .xCheck = fake_check, .xSearch = engine_cpu_search,
    .pEdit = &fakeEditOps,
};

/* Registered once per process. */
static genie_backend fake_backend(void)
{
    static genie_backend id;
    if (!id)
        CHECK_OK(engine_backend_register(&fakeEdit, &id));
    return id;
}

/* ------------------------------------------------------------ data */

typedef struct coll {
    size_t n;
    char **az;
    size_t *an;
} coll;

static size_t rand_string(uint64_t *rng, char *z, size_t lo, size_t hi, unsigned alphabet)
{
    size_t n = lo + (size_t)(test_rand(rng) % (hi - lo + 1));
    for (size_t i = 0; i < n; i++)
        z[i] = (char)('a' + test_rand(rng) % alphabet);
    return n;
}

/* A copy of @p src with about @p pct percent of its length in random edits. */
static size_t perturb(uint64_t *rng, const char *src, size_t n, unsigned pct, unsigned alphabet, char *z)
{
    memcpy(z, src, n);
    size_t edits = (n * pct + 50) / 100;
    if (edits == 0 && test_rand(rng) % 2)
        edits = 1;
    for (size_t e = 0; e < edits; e++) {
        size_t pos = n ? test_rand(rng) % n : 0;
        int kind = (int)(test_rand(rng) % 3);
        if (kind == 0 && n) {
            z[pos] = (char)('a' + test_rand(rng) % alphabet);
        } else if (kind == 1) {
            memmove(z + pos + 1, z + pos, n - pos);
            z[pos] = (char)('a' + test_rand(rng) % alphabet);
            n++;
        } else if (n) {
            memmove(z + pos, z + pos + 1, n - pos - 1);
            n--;
        }
    }
    return n;
}

static void coll_free(coll *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->az[i]);
    free(c->az);
    free(c->an);
}

/* The brute force: every string's distance, sorted by (distance, id), the first k. */
typedef struct bf_hit {
    uint32_t object, distance;
} bf_hit;

static int cmp_bf(const void *a, const void *b)
{
    const bf_hit *x = a, *y = b;
    if (x->distance != y->distance)
        return x->distance < y->distance ? -1 : 1;
    return (x->object > y->object) - (x->object < y->object);
}

static size_t brute_force(const coll *c, const char *q, size_t nq, uint32_t k, bf_hit *aAll)
{
    for (size_t o = 0; o < c->n; o++)
        aAll[o] = (bf_hit){(uint32_t)o, dp_distance(q, nq, c->az[o], c->an[o])};
    qsort(aAll, c->n, sizeof *aAll, cmp_bf);
    return c->n < k ? c->n : k;
}

/* ------------------------------------------------------------ the check */

typedef struct tally {
    uint64_t queries, fallback, certifiedOnly;
} tally;

static void check_case(uint64_t seed, genie_backend backend, int certifyOnly, tally *t)
{
    uint64_t rng = seed;
    unsigned alphabet = 2 + (unsigned)(test_rand(&rng) % 25);
    uint32_t gram = 2 + (uint32_t)(test_rand(&rng) % 2);
    coll c;
    c.n = 40 + test_rand(&rng) % 260;
    c.az = malloc(c.n * sizeof *c.az);
    c.an = malloc(c.n * sizeof *c.an);
    for (size_t i = 0; i < c.n; i++) {
        c.az[i] = malloc(64);
        unsigned kind = (unsigned)(test_rand(&rng) % 10);
        if (i > 0 && kind == 0) { /* a duplicate */
            size_t j = test_rand(&rng) % i;
            c.an[i] = c.an[j];
            memcpy(c.az[i], c.az[j], c.an[i]);
        } else if (kind <= 3) {
            c.an[i] = rand_string(&rng, c.az[i], 1, 5, alphabet); /* 1-5 bytes */
        } else {
            c.an[i] = rand_string(&rng, c.az[i], 6, 30, alphabet);
        }
    }
    genie_seq_builder *sb;
    CHECK_OK(genie_seq_builder_new(&sb, NULL, gram));
    for (size_t i = 0; i < c.n; i++)
        CHECK_OK(genie_seq_builder_add(sb, c.az[i], c.an[i]));
    CHECK_OK(genie_seq_builder_write(sb, test_path("certify.genie")));
    genie_seq_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("certify.genie"), &idx));

    enum { NQ = 50 };
    char *azQ[NQ];
    size_t anQ[NQ];
    for (size_t i = 0; i < NQ; i++) {
        azQ[i] = malloc(128);
        if (i == 0) {
            anQ[i] = 0; /* the empty query */
        } else if (i % 7 == 0) {
            anQ[i] = rand_string(&rng, azQ[i], 1, 5, alphabet);
        } else {
            size_t src = test_rand(&rng) % c.n;
            unsigned pct = 10 + (unsigned)(test_rand(&rng) % 31); /* 10-40% edits */
            anQ[i] = perturb(&rng, c.az[src], c.an[src], pct, alphabet, azQ[i]);
        }
    }
    static const uint32_t aK[] = {1, 3, 10};
    uint32_t k = test_rand(&rng) % 5 == 0 ? (uint32_t)c.n + 5 : aK[test_rand(&rng) % 3]; /* sometimes k > n */
    uint32_t K = 1 + (uint32_t)(test_rand(&rng) % 8);
    if (K < k)
        K = k;
    genie_seq_options so = {.k = k, .candidates = K, .max_candidates = K * (1u << (test_rand(&rng) % 4)),
                            .certify_only = certifyOnly};
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = backend;
    genie_seq_results *r;
    CHECK_OK(genie_seq_search(idx, (const char *const *)azQ, anQ, NQ, &so, &opt, &r));
    genie_search_stats st;
    genie_seq_results_stats(r, &st);
    bf_hit *aAll = malloc(c.n * sizeof *aAll);
    uint64_t nScanned = 0;
    for (size_t q = 0; q < NQ; q++) {
        size_t n;
        int cert;
        const genie_seq_hit *aHit = genie_seq_results_get(r, q, &n, &cert, NULL);
        int scanned = genie_seq_results_scanned(r, q);
        nScanned += scanned != 0;
        if (certifyOnly) {
            CHECK(!scanned);
            if (!cert)
                continue;
            t->certifiedOnly++;
        } else {
            CHECK(cert);
        }
        size_t nWant = brute_force(&c, azQ[q], anQ[q], k, aAll);
        if (n != nWant)
            test_fail_at(__FILE__, __LINE__, "seed %" PRIu64 " query %zu '%.*s': %zu hits, want %zu", seed, q,
                         (int)anQ[q], azQ[q], n, nWant);
        for (size_t i = 0; i < n && i < nWant; i++)
            if (aHit[i].object != aAll[i].object || aHit[i].distance != aAll[i].distance)
                test_fail_at(__FILE__, __LINE__,
                             "seed %" PRIu64 " query %zu '%.*s' rank %zu: got %u (d %u), want %u (d %u)%s", seed, q,
                             (int)anQ[q], azQ[q], i, aHit[i].object, aHit[i].distance, aAll[i].object,
                             aAll[i].distance, scanned ? " [fallback]" : " [certificate]");
    }
    CHECK_EQ(st.fallback, nScanned);
    const engine_backend *be;
    CHECK_OK(engine_backend_pick(backend, &be));
    if (nScanned)
        CHECK_EQ(st.scan_backend, be->pEdit ? be->id : GENIE_BACKEND_CPU);
    t->queries += NQ;
    t->fallback += nScanned;
    genie_seq_results_free(r);

    /* The exact mode on the same backend: the brute force too. */
    so.exact = 1;
    CHECK_OK(genie_seq_search(idx, (const char *const *)azQ, anQ, NQ, &so, &opt, &r));
    for (size_t q = 0; q < NQ; q += 3) {
        size_t n;
        int cert;
        const genie_seq_hit *aHit = genie_seq_results_get(r, q, &n, &cert, NULL);
        CHECK(cert && genie_seq_results_scanned(r, q));
        size_t nWant = brute_force(&c, azQ[q], anQ[q], k, aAll);
        CHECK_EQ(n, nWant);
        for (size_t i = 0; i < n; i++) {
            CHECK_EQ(aHit[i].object, aAll[i].object);
            CHECK_EQ(aHit[i].distance, aAll[i].distance);
        }
    }
    genie_seq_results_free(r);
    free(aAll);
    for (size_t i = 0; i < NQ; i++)
        free(azQ[i]);
    coll_free(&c);
    genie_index_close(idx);
}

TEST(seq_certify_equals_brute_force)
{
    tally t = {0, 0, 0};
    for (uint64_t s = 1; s <= 16; s++)
        check_case(s * 104729, test_backend(), 0, &t);
    fprintf(stderr, "    %" PRIu64 " of %" PRIu64 " queries answered by the fallback scan\n", t.fallback, t.queries);
    CHECK(t.fallback > 0); /* the fallback is exercised, not vacuous */
    CHECK(t.fallback < t.queries); /* and so is the certificate */
}

TEST(seq_certify_batched_edit_backend)
{
    tally t = {0, 0, 0};
    for (uint64_t s = 1; s <= 10; s++)
        check_case(s * 7907 + 3, fake_backend(), 0, &t);
    fprintf(stderr, "    %" PRIu64 " of %" PRIu64 " queries answered by the batched scan\n", t.fallback, t.queries);
    CHECK(t.fallback > 0);
}

TEST(seq_certify_only_keeps_the_cheap_mode)
{
    tally t = {0, 0, 0};
    for (uint64_t s = 1; s <= 8; s++)
        check_case(s * 15485863, test_backend(), 1, &t);
    fprintf(stderr, "    %" PRIu64 " of %" PRIu64 " queries certified without a fallback\n", t.certifiedOnly,
            t.queries);
    CHECK(t.certifiedOnly > 0);
    CHECK(t.certifiedOnly < t.queries); /* some stay uncertified: the mode is the cheap one */
}

/* The metric type's edit search through a backend's batched edit
 * distances (the GPU path's host side): k-NN and range equal the brute force. */
TEST(metric_edit_batched_edit_backend)
{
    uint64_t rng = 4242;
    enum { N = 400, NQ = 40 };
    coll c;
    c.n = N;
    c.az = malloc(N * sizeof *c.az);
    c.an = malloc(N * sizeof *c.an);
    for (size_t i = 0; i < N; i++) {
        c.az[i] = malloc(64);
        if (i > 0 && i % 11 == 0) {
            c.an[i] = c.an[i - 1];
            memcpy(c.az[i], c.az[i - 1], c.an[i]);
        } else {
            c.an[i] = rand_string(&rng, c.az[i], 0, i % 3 ? 8 : 30, 4);
        }
    }
    genie_lc_params p;
    memset(&p, 0, sizeof p);
    p.metric = GENIE_LC_EDIT;
    p.cluster_size = 16;
    CHECK_OK(genie_lc_build_strings((const char *const *)c.az, c.an, N, &p, NULL, test_path("lc_edit.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("lc_edit.genie"), &idx));
    char *azQ[NQ];
    size_t anQ[NQ];
    for (size_t i = 0; i < NQ; i++) {
        azQ[i] = malloc(128);
        size_t src = test_rand(&rng) % N;
        anQ[i] = i % 5 == 0 ? rand_string(&rng, azQ[i], 13, 40, 4) /* longer than the fake handles */
                            : perturb(&rng, c.az[src], c.an[src], 25, 4, azQ[i]);
    }
    bf_hit *aAll = malloc(N * sizeof *aAll);
    for (int range = 0; range <= 1; range++) {
        genie_lc_options o;
        memset(&o, 0, sizeof o);
        o.backend = fake_backend();
        o.k = range ? 0 : 7;
        o.radius = 2;
        genie_lc_results *r;
        CHECK_OK(genie_lc_search_strings(idx, (const char *const *)azQ, anQ, NQ, &o, &r));
        genie_search_stats st;
        genie_lc_results_stats(r, &st);
        CHECK_EQ(st.backend, fake_backend());
        for (size_t q = 0; q < NQ; q++) {
            size_t n, nWant = brute_force(&c, azQ[q], anQ[q], N, aAll);
            if (range)
                for (nWant = 0; nWant < N && aAll[nWant].distance <= 2; nWant++)
                    ;
            else
                nWant = 7;
            const genie_lc_hit *a = genie_lc_results_get(r, q, &n);
            CHECK_EQ(n, nWant);
            for (size_t i = 0; i < n && i < nWant; i++) {
                CHECK_EQ(a[i].object, aAll[i].object);
                CHECK(a[i].distance == (double)aAll[i].distance);
            }
        }
        genie_lc_results_free(r);
    }
    free(aAll);
    for (size_t i = 0; i < NQ; i++)
        free(azQ[i]);
    coll_free(&c);
    genie_index_close(idx);
}

/* genie_seq_search_parts (a shard of genie-mpi): --certify's fallback and
 * the exact mode scan the range's strings alone, on the CPU and through a
 * backend's batched edit distances; answers equal a brute force over them. */
TEST(seq_certify_parts_range)
{
    uint64_t rng = 777;
    enum { N = 300, NQ = 30 };
    coll c;
    c.n = N;
    c.az = malloc(N * sizeof *c.az);
    c.an = malloc(N * sizeof *c.an);
    for (size_t i = 0; i < N; i++) {
        c.az[i] = malloc(64);
        c.an[i] = rand_string(&rng, c.az[i], 1, 12, 5);
    }
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    bo.part_objects = 70; /* parts of 70 strings: 0-69, 70-139, ... */
    genie_seq_builder *sb;
    CHECK_OK(genie_seq_builder_new(&sb, &bo, 2));
    for (size_t i = 0; i < N; i++)
        CHECK_OK(genie_seq_builder_add(sb, c.az[i], c.an[i]));
    CHECK_OK(genie_seq_builder_write(sb, test_path("certify_parts.genie")));
    genie_seq_builder_free(sb);
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("certify_parts.genie"), &idx));
    CHECK(genie_index_parts(idx) >= 4);
    genie_part_info p1, p2;
    CHECK_OK(genie_index_part_info(idx, 1, &p1));
    CHECK_OK(genie_index_part_info(idx, 2, &p2));
    coll range = {(size_t)(p1.n_objects + p2.n_objects), c.az + p1.first_object, c.an + p1.first_object};
    char *azQ[NQ];
    size_t anQ[NQ];
    for (size_t i = 0; i < NQ; i++) {
        azQ[i] = malloc(64);
        size_t src = test_rand(&rng) % N;
        anQ[i] = i == 0 ? 0 : perturb(&rng, c.az[src], c.an[src], 30, 5, azQ[i]);
    }
    bf_hit *aAll = malloc(N * sizeof *aAll);
    const genie_backend aBe[] = {test_backend(), fake_backend()};
    for (int ib = 0; ib < 2; ib++)
        for (int exact = 0; exact <= 1; exact++) {
            genie_seq_options so = {.k = 4, .candidates = 2, .max_candidates = 4, .exact = exact};
            genie_search_options opt;
            memset(&opt, 0, sizeof opt);
            opt.backend = aBe[ib];
            genie_seq_results *r;
            CHECK_OK(genie_seq_search_parts(idx, 1, 2, (const char *const *)azQ, anQ, NQ, &so, &opt, &r));
            for (size_t q = 0; q < NQ; q++) {
                size_t n;
                int cert;
                const genie_seq_hit *aHit = genie_seq_results_get(r, q, &n, &cert, NULL);
                CHECK(cert);
                size_t nWant = brute_force(&range, azQ[q], anQ[q], 4, aAll);
                CHECK_EQ(n, nWant);
                for (size_t i = 0; i < n && i < nWant; i++) {
                    CHECK_EQ(aHit[i].object, aAll[i].object + p1.first_object);
                    CHECK_EQ(aHit[i].distance, aAll[i].distance);
                }
            }
            genie_seq_results_free(r);
        }
    free(aAll);
    for (size_t i = 0; i < NQ; i++)
        free(azQ[i]);
    coll_free(&c);
    genie_index_close(idx);
}
