/*
 * Filters inside the IVF-Flat and IVF-PQ list scans: a filtered search
 * answers exactly what the unfiltered search's full candidate order (every
 * candidate of the probed lists, k = all of them) gives once the objects
 * not allowed are struck out by hand: the first k of it (IVF-Flat, IVF-PQ
 * without refinement, estimates as distances), or, with a refinement
 * depth R, the first R re-ranked by genie_vector_distance, ties by
 * smaller id.  On the CPU and on $GENIE_TEST_BACKEND.
 */
#include <math.h>
#include <stdlib.h>

#include "genie/vectors.h"
#include "test.h"

enum { N = 600, DIM = 16, NLIST = 16, NPROBE = 4, NQ = 24, K = 7, R = 20 };

/* One index (M = 0: IVF-Flat) against the hand-filtered candidate order, refine 0 or R (IVF-PQ). */
static void check_index(const genie_vectors *base, const genie_vectors *q, genie_metric metric, uint32_t M,
                        const genie_filter *f)
{
    genie_ivf_params p = {.metric = metric, .nlist = NLIST, .pq_m = M, .pq_bits = M ? 6 : 0, .refine = 0,
                          .iterations = 6, .seed = 5, .backend = GENIE_BACKEND_CPU, .threads = 2};
    genie_build_options bo;
    genie_build_options_init(&bo);
    CHECK_OK(genie_vectors_build_ivf(base, &p, &bo, test_path("ivf.genie")));
    genie_index *idx;
    CHECK_OK(genie_index_open(test_path("ivf.genie"), &idx));
    uint32_t kAll = 1024; /* IVF_MAX_K: more than the candidates of 4 lists of about 37 */
    genie_neighbor *aAll = malloc((size_t)NQ * kAll * sizeof *aAll), *aGot = malloc((size_t)NQ * R * sizeof *aGot);
    uint32_t anAll[NQ], anGot[NQ];
    test_ivf_search(idx, q, GENIE_BACKEND_CPU, kAll, NPROBE, 0, NULL, aAll, anAll);
    for (int refine = 0; refine <= (M ? 1 : 0); refine++) {
        for (int b = 0; b < 2; b++) {
            test_ivf_search(idx, q, b ? test_backend() : GENIE_BACKEND_CPU, K, NPROBE, refine ? R : 0, f, aGot, anGot);
            for (uint32_t i = 0; i < NQ; i++) {
                CHECK(anAll[i] < kAll);
                genie_neighbor want[1024];
                uint32_t n = 0;
                for (uint32_t j = 0; j < anAll[i]; j++)
                    if (genie_filter_get(f, aAll[(size_t)i * kAll + j].id))
                        want[n++] = aAll[(size_t)i * kAll + j];
                if (refine) {
                    n = n < R ? n : R;
                    for (uint32_t j = 0; j < n; j++)
                        want[j].distance = genie_vector_distance(metric, base->data + (size_t)want[j].id * DIM,
                                                                 q->data + (size_t)i * DIM, DIM);
                    qsort(want, n, sizeof *want, test_neighbor_cmp);
                }
                n = n < K ? n : K;
                CHECK_EQ(anGot[i], n);
                for (uint32_t j = 0; j < n && j < anGot[i]; j++) {
                    CHECK_EQ(aGot[(size_t)i * K + j].id, want[j].id);
                    CHECK(aGot[(size_t)i * K + j].distance == want[j].distance);
                }
            }
        }
    }
    free(aAll);
    free(aGot);
    genie_index_close(idx);
}

TEST(filter_ivf_scans_equal_filtered_candidates)
{
    uint64_t s = 29;
    float *aBase = malloc((size_t)N * DIM * sizeof *aBase), *aQ = malloc((size_t)NQ * DIM * sizeof *aQ);
    test_uniform_floats(&s, aBase, (size_t)N * DIM);
    test_uniform_floats(&s, aQ, (size_t)NQ * DIM);
    genie_vectors base = {N, DIM, aBase}, q = {NQ, DIM, aQ};
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, N));
    for (int pct = 0; pct < 2; pct++) { /* about 50% and about 5% allowed */
        genie_filter_set_all(f, 0);
        for (uint64_t o = 0; o < N; o++)
            if (test_rand(&s) % 100 < (pct ? 5u : 50u))
                CHECK_OK(genie_filter_set(f, o, 1));
        check_index(&base, &q, GENIE_METRIC_L2, 0, f);
        check_index(&base, &q, GENIE_METRIC_COSINE, 0, f);
        check_index(&base, &q, GENIE_METRIC_L2, 4, f);
        check_index(&base, &q, GENIE_METRIC_IP, 4, f);
    }
    genie_filter_free(f);
    free(aBase);
    free(aQ);
}
