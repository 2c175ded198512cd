/*
 * An IVF search of more queries than one batch of the GPU's pipeline
 * (engine/cuda/vectors/ivf_gpu.cu: a call's queries in batches of at
 * least 1,024, each staged, probed, planned and scanned on the device
 * while the next is uploaded): on $GENIE_TEST_BACKEND it answers as the
 * CPU does, byte for byte, at nprobe 1 and 7 (the probes' warp selection,
 * exact_warp.cu, each lane keeping its 2 smallest bounds), 70 (4), 140
 * (8; IVF-Flat alone), and all 300 lists (the block selection), with and
 * without a filter, IVF-Flat and IVF-PQ with and without refinement, l2,
 * ip and cosine; and the CPU's IVF-Flat with every list probed answers as
 * a brute force written here (genie_vector_distance of every allowed
 * vector, sorted by (distance, id)).  Two queries are outside the exact
 * search's error bound (components of 1e15, and of 1e-17 whose squared
 * norm is below cosine's 2^-100), so their probes come from the direct
 * distances of every centroid, and one query is 0.
 *
 * On the GPU the 2,200 queries go in batches of 1,024, 1,024 and 152.
 * They take the query-major scan at nprobe 1 (3 queries a list on
 * average) and the list-major scan (engine/cuda/vectors/ivf_listmajor.cu:
 * fp16 tiles, then the candidates of engine/exact_bound.h re-ranked by
 * their direct distances) from nprobe 7 on for IVF-Flat (16 queries a
 * list or more, ivf_lm_worth; the last batch at nprobe 7 stays
 * query-major), the outside queries there left to the query-major scan.  Base vectors
 * 100 .. 139 are copies of vector 99 and query 4 is it too: 41 ties at
 * the smallest distance, which both scans must break by the smaller id.
 */
#include <stdlib.h>

#include "genie/vectors.h"
#include "test.h"

enum { N = 1200, DIM = 12, NLIST = 300, NQ = 2200, K = 10 };

static void check_same_n(const genie_neighbor *a, const uint32_t *aN, const genie_neighbor *b, const uint32_t *bN,
                         uint32_t nq, const char *zWhat)
{
    for (uint32_t i = 0; i < nq; i++) {
        if (aN[i] != bN[i])
            test_fail_at(__FILE__, __LINE__, "%s: query %u: %u answers, expected %u", zWhat, i, aN[i], bN[i]);
        for (uint32_t j = 0; j < aN[i]; j++) {
            const genie_neighbor *x = &a[(size_t)i * K + j], *y = &b[(size_t)i * K + j];
            if (x->id != y->id || memcmp(&x->distance, &y->distance, sizeof(float)) != 0)
                test_fail_at(__FILE__, __LINE__, "%s: query %u, rank %u: %u at %.9g, expected %u at %.9g", zWhat, i, j,
                             x->id, (double)x->distance, y->id, (double)y->distance);
        }
    }
}

static void check_same(const genie_neighbor *a, const uint32_t *aN, const genie_neighbor *b, const uint32_t *bN,
                       const char *zWhat)
{
    check_same_n(a, aN, b, bN, NQ, zWhat);
}

/* The k nearest allowed base vectors of every query by genie_vector_distance, ties by smaller id. */
static void brute_force(const genie_vectors *base, const genie_vectors *q, genie_metric metric, const genie_filter *f,
                        genie_neighbor *out, uint32_t *aN)
{
    genie_neighbor *a = malloc(N * sizeof *a);
    CHECK(a);
    for (uint32_t i = 0; i < NQ; i++) {
        uint32_t n = 0;
        for (uint32_t o = 0; o < N; o++)
            if (!f || genie_filter_get(f, o))
                a[n++] = (genie_neighbor){o, genie_vector_distance(metric, base->data + (size_t)o * DIM,
                                                                   q->data + (size_t)i * DIM, DIM)};
        qsort(a, n, sizeof *a, test_neighbor_cmp);
        aN[i] = n < K ? n : K;
        memcpy(out + (size_t)i * K, a, aN[i] * sizeof *a);
    }
    free(a);
}

static void check_index(const genie_vectors *base, const genie_vectors *q, genie_metric metric, uint32_t M,
                        const genie_filter *f)
{
    genie_ivf_params p = {.metric = metric, .nlist = NLIST, .pq_m = M, .pq_bits = M ? 6 : 0, .iterations = 5,
                          .seed = 3, .backend = GENIE_BACKEND_CPU, .threads = 2};
    genie_build_options bo;
    genie_build_options_init(&bo);
    CHECK_OK(genie_vectors_build_ivf(base, &p, &bo, test_path("batches.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("batches.genie"), &idx));
    genie_neighbor *aCpu = malloc((size_t)NQ * K * sizeof *aCpu), *aGot = malloc((size_t)NQ * K * sizeof *aGot);
    uint32_t *nCpu = malloc(NQ * sizeof *nCpu), *nGot = malloc(NQ * sizeof *nGot);
    CHECK(aCpu && aGot && nCpu && nGot);
    const uint32_t aProbe[5] = {1, 7, 70, 140, NLIST};
    char zWhat[96];
    for (int filtered = 0; filtered < 2; filtered++)
        for (int pi = 0; pi < 5; pi++)
            for (int refine = 0; refine <= (M ? 1 : 0); refine++) {
                if (M && aProbe[pi] == 140)
                    continue; /* the warp's widest selection on IVF-Flat alone: the suite's time */
                const genie_filter *g = filtered ? f : NULL;
                snprintf(zWhat, sizeof zWhat, "%s M %u nprobe %u refine %d%s", genie_metric_name(metric), M,
                         aProbe[pi], refine ? 30 : 0, filtered ? ", filtered" : "");
                test_ivf_search(idx, q, GENIE_BACKEND_CPU, K, aProbe[pi], refine ? 30 : 0, g, aCpu, nCpu);
                test_ivf_search(idx, q, test_backend(), K, aProbe[pi], refine ? 30 : 0, g, aGot, nGot);
                check_same(aGot, nGot, aCpu, nCpu, zWhat);
                if (!M && aProbe[pi] == NLIST) { /* every list probed: the brute force's answers */
                    brute_force(base, q, metric, g, aGot, nGot);
                    check_same(aCpu, nCpu, aGot, nGot, zWhat);
                }
            }
    free(aCpu);
    free(aGot);
    free(nCpu);
    free(nGot);
    genie_index_close(idx);
}

TEST(ivf_batches_equal_cpu_and_brute_force)
{
    uint64_t s = 41;
    float *aBase = malloc((size_t)N * DIM * sizeof *aBase), *aQ = malloc((size_t)NQ * DIM * sizeof *aQ);
    CHECK(aBase && aQ);
    test_uniform_floats(&s, aBase, (size_t)N * DIM);
    test_uniform_floats(&s, aQ, (size_t)NQ * DIM);
    for (uint32_t d = 0; d < DIM; d++) {
        aQ[d] = 0;                      /* query 0: zero */
        aQ[DIM + d] = 1e15f;            /* query 1: |q|^2 above 2^100 */
        aQ[2 * DIM + d] = 1e-17f;       /* query 2: |q|^2 below 2^-100 (cosine's range) */
        aQ[3 * DIM + d] = aBase[5 * DIM + d]; /* query 3: base vector 5 */
        for (uint32_t o = 100; o < 140; o++)
            aBase[o * DIM + d] = aBase[99 * DIM + d]; /* 41 equal vectors */
        aQ[4 * DIM + d] = aBase[99 * DIM + d];        /* query 4: their ties */
    }
    genie_vectors base = {N, DIM, aBase}, q = {NQ, DIM, aQ};
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, N));
    for (uint64_t o = 0; o < N; o++)
        CHECK_OK(genie_filter_set(f, o, test_rand(&s) % 2));
    const genie_metric aMetric[3] = {GENIE_METRIC_L2, GENIE_METRIC_IP, GENIE_METRIC_COSINE};
    for (int m = 0; m < 3; m++) {
        check_index(&base, &q, aMetric[m], 0, f);
        check_index(&base, &q, aMetric[m], 4, f);
    }
    genie_filter_free(f);
    free(aBase);
    free(aQ);
}

/*
 * The list-major scan's other staging paths: 150 dimensions (two chunks
 * of the GEMM's, the second of 22) whose rows are not 8-byte aligned, so
 * every operand is staged value by value; 2,100 queries at nprobe 7 of 40
 * lists (about 180 a list) and all 40, l2 and cosine, byte for byte the
 * CPU's.
 */
TEST(ivf_batches_wide_unaligned_rows)
{
    enum { WN = 600, WDIM = 150, WLIST = 40, WQ = 2100 };
    uint64_t s = 43;
    float *aBase = malloc((size_t)WN * WDIM * sizeof *aBase), *aQ = malloc((size_t)WQ * WDIM * sizeof *aQ);
    genie_neighbor *aCpu = malloc((size_t)WQ * K * sizeof *aCpu), *aGot = malloc((size_t)WQ * K * sizeof *aGot);
    uint32_t *nCpu = malloc(WQ * sizeof *nCpu), *nGot = malloc(WQ * sizeof *nGot);
    CHECK(aBase && aQ && aCpu && aGot && nCpu && nGot);
    test_uniform_floats(&s, aBase, (size_t)WN * WDIM);
    test_uniform_floats(&s, aQ, (size_t)WQ * WDIM);
    genie_vectors base = {WN, WDIM, aBase}, q = {WQ, WDIM, aQ};
    const genie_metric aMetric[2] = {GENIE_METRIC_L2, GENIE_METRIC_COSINE};
    const uint32_t aProbe[2] = {7, WLIST};
    char zWhat[96];
    for (int m = 0; m < 2; m++) {
        genie_ivf_params p = {.metric = aMetric[m], .nlist = WLIST, .iterations = 5, .seed = 5,
                              .backend = GENIE_BACKEND_CPU, .threads = 2};
        genie_build_options bo;
        genie_build_options_init(&bo);
        CHECK_OK(genie_vectors_build_ivf(&base, &p, &bo, test_path("wide.genie")));
        genie_index *idx;
        CHECK_OK(genie_index_open(test_path("wide.genie"), &idx));
        for (int pi = 0; pi < 2; pi++) {
            snprintf(zWhat, sizeof zWhat, "%s dim %u nprobe %u", genie_metric_name(aMetric[m]), WDIM, aProbe[pi]);
            test_ivf_search(idx, &q, GENIE_BACKEND_CPU, K, aProbe[pi], 0, NULL, aCpu, nCpu);
            test_ivf_search(idx, &q, test_backend(), K, aProbe[pi], 0, NULL, aGot, nGot);
            check_same_n(aGot, nGot, aCpu, nCpu, WQ, zWhat);
        }
        genie_index_close(idx);
    }
    free(aBase);
    free(aQ);
    free(aCpu);
    free(aGot);
    free(nCpu);
    free(nGot);
}
