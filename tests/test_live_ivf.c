/*
 * Live inverted-file indexes: vectors added through the writer go to the
 * lists of their nearest centroids (the trained quantizers kept, IVF-PQ
 * codes made with the file's codebooks), some of the file's and the added
 * ones deleted.  Oracles: the same searches (nprobe, k, refinement depth,
 * with and without a filter) on the index genie compact writes, which
 * appends the added vectors without training again, ids mapped; and for
 * IVF-Flat with every list probed, a brute force over the kept and
 * allowed vectors.  On the CPU and on $GENIE_TEST_BACKEND.
 */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "genie/vectors.h"
#include "test.h"
#include "test_live.h"

enum { BASE = 500, ADD = 120, DIM = 16, NLIST = 12, NQ = 20, K = 7, DEL = 15 };

typedef struct ivf_case {
    genie_metric metric;
    uint32_t M, refine, nprobe, partObjects;
} ivf_case;

/* Query answers of one search, every query's k places. */
typedef struct answers {
    genie_neighbor a[NQ * K];
    uint32_t n[NQ];
} answers;

static void run(const genie_index *idx, const genie_vectors *q, genie_backend be, const ivf_case *c, uint32_t nprobe,
                const genie_filter *f, answers *out)
{
    test_ivf_search(idx, q, be, K, nprobe, c->refine, f, out->a, out->n);
}

static void same(const answers *got, const answers *want, const uint64_t *aMap)
{
    for (uint32_t i = 0; i < NQ; i++) {
        CHECK_EQ(got->n[i], want->n[i]);
        for (uint32_t j = 0; j < got->n[i] && j < want->n[i]; j++) {
            CHECK_EQ(got->a[i * K + j].id, aMap ? aMap[want->a[i * K + j].id] : want->a[i * K + j].id);
            CHECK(got->a[i * K + j].distance == want->a[i * K + j].distance);
        }
    }
}

static void one_case(const ivf_case *c, uint64_t seed)
{
    uint64_t s = seed;
    float *aVec = malloc((size_t)(BASE + ADD) * DIM * sizeof *aVec), aQ[NQ * DIM];
    test_uniform_floats(&s, aVec, (size_t)(BASE + ADD) * DIM);
    test_uniform_floats(&s, aQ, NQ * DIM);
    genie_vectors base = {BASE, DIM, aVec}, q = {NQ, DIM, aQ};
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("live-ivf.genie"));
    unlink(test_path("live-ivf.genie.wal"));
    genie_ivf_params p = {.metric = c->metric, .nlist = NLIST, .pq_m = c->M, .pq_bits = c->M ? 5 : 0,
                          .iterations = 6, .seed = 3, .backend = GENIE_BACKEND_CPU, .threads = 2};
    genie_build_options bo;
    genie_build_options_init(&bo);
    bo.part_objects = c->partObjects;
    CHECK_OK(genie_vectors_build_ivf(&base, &p, &bo, zIndex));
    live_model m;
    live_model_init(&m);
    for (uint64_t i = 0; i < BASE; i++)
        live_model_add(&m, i);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    genie_index *snap; /* refreshed after every write: it reads on from where it was */
    CHECK_OK(genie_index_open(zIndex, &snap));
    for (int half = 0; half < 2; half++) {
        genie_vectors add = {ADD / 2, DIM, aVec + (size_t)(BASE + half * (ADD / 2)) * DIM};
        uint64_t aLabel[ADD / 2];
        CHECK_OK(genie_writer_add_vectors(w, &add, NULL, aLabel));
        for (int i = 0; i < ADD / 2; i++)
            live_model_add(&m, aLabel[i]);
        test_live_refresh(&snap);
    }
    uint64_t aDel[DEL];
    for (int i = 0; i < DEL; i++) {
        aDel[i] = m.aLabel[(i * 41 + 3) % (BASE + ADD)];
        live_model_delete(&m, aDel[i]);
    }
    CHECK_OK(genie_writer_delete(w, aDel, DEL, NULL));
    test_live_refresh(&snap);
    size_t nKept;
    uint64_t *aKept = live_model_kept(&m, &nKept);
    /* A filter over the live ids, and the same objects' filter over the compacted ids. */
    genie_filter *fLive, *fCompact;
    CHECK_OK(genie_filter_new(&fLive, BASE + ADD));
    CHECK_OK(genie_filter_new(&fCompact, nKept));
    for (size_t j = 0; j < nKept; j++)
        if (test_rand(&s) % 2) {
            CHECK_OK(genie_filter_set(fLive, aKept[j], 1));
            CHECK_OK(genie_filter_set(fCompact, j, 1));
        }
    genie_index *live;
    CHECK_OK(genie_index_open(zIndex, &live));
    answers *aGot = malloc(4 * sizeof *aGot), want;
    for (int t = 0; t < 4; t++) /* (filter no/yes) x (CPU, test backend) */
        run(live, &q, t & 1 ? test_backend() : GENIE_BACKEND_CPU, c, c->nprobe, t & 2 ? fLive : NULL, &aGot[t]);
    same(&aGot[1], &aGot[0], NULL); /* the backend's answers are the CPU's */
    same(&aGot[3], &aGot[2], NULL);
    for (int t = 0; t < 4; t++) { /* and the refreshed snapshot's are the index's opened afresh */
        answers a;
        run(snap, &q, t & 1 ? test_backend() : GENIE_BACKEND_CPU, c, c->nprobe, t & 2 ? fLive : NULL, &a);
        same(&a, &aGot[t], NULL);
    }
    genie_index_close(snap);
    if (!c->M) { /* IVF-Flat, every list probed: the brute force over the kept (and allowed) vectors */
        for (int t = 0; t < 2; t++) {
            answers all;
            run(live, &q, test_backend(), c, NLIST, t ? fLive : NULL, &all);
            for (uint32_t i = 0; i < NQ; i++) {
                genie_neighbor aBf[BASE + ADD];
                uint32_t n = 0;
                for (size_t j = 0; j < nKept; j++)
                    if (!t || genie_filter_get(fLive, aKept[j]))
                        aBf[n++] = (genie_neighbor){(uint32_t)aKept[j],
                                                    genie_vector_distance(c->metric, aVec + aKept[j] * DIM,
                                                                          aQ + i * DIM, DIM)};
                qsort(aBf, n, sizeof *aBf, test_neighbor_cmp);
                CHECK_EQ(all.n[i], n < K ? n : K);
                for (uint32_t j = 0; j < all.n[i]; j++) {
                    CHECK_EQ(all.a[i * K + j].id, aBf[j].id);
                    CHECK(all.a[i * K + j].distance == aBf[j].distance);
                }
            }
        }
    }
    genie_index_close(live);
    CHECK_OK(genie_writer_compact(w));
    genie_writer_close(w);
    genie_index *compacted;
    CHECK_OK(genie_index_open(zIndex, &compacted));
    genie_ivf_info info;
    CHECK_OK(genie_vectors_index_ivf(compacted, &info));
    CHECK_EQ(info.n, nKept);
    CHECK_EQ(info.nlist, NLIST);
    for (int t = 0; t < 2; t++) { /* at the same nprobe, base + delta answers as the compacted index */
        run(compacted, &q, GENIE_BACKEND_CPU, c, c->nprobe, t ? fCompact : NULL, &want);
        same(&aGot[2 * t], &want, aKept);
    }
    for (size_t j = 0; j < nKept; j++) { /* labels kept */
        uint64_t label;
        CHECK_OK(genie_index_label(compacted, (uint32_t)j, &label));
        CHECK_EQ(label, m.aLabel[aKept[j]]);
    }
    genie_index_close(compacted);
    genie_filter_free(fLive);
    genie_filter_free(fCompact);
    free(aGot);
    free(aKept);
    free(aVec);
    live_model_free(&m);
}

TEST(live_ivf_equals_compacted_index)
{
    static const ivf_case aCase[] = {
        {GENIE_METRIC_L2, 0, 0, 3, 0},      /* IVF-Flat */
        {GENIE_METRIC_COSINE, 0, 0, 4, 0},  /* IVF-Flat, cosine: lists of the normalised vectors */
        {GENIE_METRIC_L2, 4, 0, 3, 0},      /* IVF-PQ, estimates (merged unrooted) */
        {GENIE_METRIC_IP, 4, 20, 4, 0},     /* IVF-PQ refined: the R best of both re-ranked */
        {GENIE_METRIC_L2, 8, 16, 3, 170},   /* IVF-PQ refined, the file in parts */
        {GENIE_METRIC_L2, 0, 0, 2, 200},    /* IVF-Flat in parts */
    };
    for (size_t i = 0; i < sizeof aCase / sizeof aCase[0]; i++)
        one_case(&aCase[i], 11 + i);
}
