/*
 * genie-mpi metric (the distributed List of Clusters, tools/mpi/metric_*):
 * with `mpirun -np 4` (a broker and three processors), -np 3 and -np 2
 * (one processor), under the partitions LG and LL, range search, k-NN and
 * bounded k-NN must print what `genie search --brute-force` prints for the
 * whole index, byte for byte (ids, distances, ties by smaller id, k larger
 * than a processor's share), for l2 and cosine vectors and for strings
 * under edit distance; small quanta and one query in flight stress the
 * resumed walks.  Bad options and a non-metric index fail cleanly.
 *
 * The tests skip (and pass) with a message when genie-mpi was not built
 * (no MPI at configure time) or mpirun is missing.  mpirun runs with
 * --allow-run-as-root, --oversubscribe and
 * OMPI_MCA_btl_vader_single_copy_mechanism=none, as in test_mpi.c.
 */
#include "genie/metric.h"
#include "mpi_harness.h"
#include "test.h"


/* `genie search --brute-force ARGS` and `genie-mpi metric MPIARGS ARGS` on np ranks print the same bytes. */
static void lcm_same(int np, const char *zMpiArgs, const char *zArgs)
{
    char zOne[1024], zMpi[1024], zErr[1024], z[4096];
    snprintf(zOne, sizeof zOne, "%s", test_path("lcm-one.out"));
    snprintf(zMpi, sizeof zMpi, "%s", test_path("lcm-mpi.out"));
    snprintf(zErr, sizeof zErr, "%s", test_path("lcm-err.txt"));
    snprintf(z, sizeof z, "'%s' search -q --brute-force %s", GENIE_BIN_PATH, zArgs);
    if (mpi_sh(z, zOne, zErr) != 0)
        test_fail_at(__FILE__, __LINE__, "%s failed:\n%.2000s", z, mpi_read_text(zErr));
    snprintf(z, sizeof z, "-q %s %s", zMpiArgs, zArgs);
    int rc = mpi_run(np, NULL, "metric", z, zMpi, zErr);
    if (rc != 0)
        test_fail_at(__FILE__, __LINE__, "genie-mpi -np %d metric %s: exit %d:\n%.2000s", np, z, rc, mpi_read_text(zErr));
    char *a = mpi_read_text(zOne), *b = mpi_read_text(zMpi);
    if (strcmp(a, b) != 0)
        test_fail_at(__FILE__, __LINE__, "genie-mpi -np %d metric %s differs from genie search --brute-force:\n%.600s\n"
                     "---\n%.600s", np, z, a, b);
    free(a);
    free(b);
}

/* Clustered vectors with duplicates; @p nq queries (half of them data points) to an .fvecs file. */
static void lcm_vectors(genie_lc_metric metric, const char *zIndex, const char *zQueries)
{
    enum { N = 900, NQ = 80, DIM = 5 };
    uint64_t s = 0x51ce + (uint64_t)metric;
    float *a = malloc(N * DIM * sizeof *a);
    for (size_t i = 0; i < N; i++) {
        float c = (float)(test_rand(&s) % 8) * 3.0f;
        for (int j = 0; j < DIM; j++)
            a[i * DIM + j] = c + (float)(test_rand(&s) % 64) / 32.0f;
        if (i > 0 && test_rand(&s) % 9 == 0)
            memcpy(a + i * DIM, a + (test_rand(&s) % i) * DIM, DIM * sizeof *a);
    }
    genie_vectors v = {N, DIM, a};
    genie_lc_params p = {0};
    p.metric = metric;
    p.cluster_size = 12;
    CHECK_OK(genie_lc_build_vectors(&v, &p, NULL, zIndex));
    FILE *f = fopen(zQueries, "wb");
    CHECK(f != NULL);
    for (size_t q = 0; q < NQ; q++) {
        int32_t d = DIM;
        float x[DIM];
        for (int j = 0; j < DIM; j++)
            x[j] = q % 2 ? a[(q * 7) * DIM + j] : (float)(test_rand(&s) % 800) / 32.0f;
        fwrite(&d, sizeof d, 1, f);
        fwrite(x, sizeof x, 1, f);
    }
    fclose(f);
    free(a);
}

/* Short strings over four letters (many ties), and query lines. */
static void lcm_strings(const char *zIndex, const char *zQueries)
{
    enum { N = 900, NQ = 80 };
    uint64_t s = 0xed17;
    char **az = malloc(N * sizeof *az);
    size_t *an = malloc(N * sizeof *an);
    for (size_t i = 0; i < N; i++) {
        az[i] = malloc(16);
        an[i] = 1 + test_rand(&s) % 9;
        for (size_t j = 0; j < an[i]; j++)
            az[i][j] = "acgt"[test_rand(&s) % 4];
        az[i][an[i]] = 0;
    }
    genie_lc_params p = {0};
    p.metric = GENIE_LC_EDIT;
    p.cluster_size = 10;
    CHECK_OK(genie_lc_build_strings((const char *const *)az, an, N, &p, NULL, zIndex));
    FILE *f = fopen(zQueries, "w");
    CHECK(f != NULL);
    for (size_t q = 0; q < NQ; q++)
        fprintf(f, "%s\n", q % 2 ? az[q * 5] : (q % 4 ? "acgtacg" : "tt"));
    fclose(f);
    for (size_t i = 0; i < N; i++)
        free(az[i]);
    free(az);
    free(an);
}

/*
 * Range, k-NN (k above a processor's share) and bounded k-NN; LG and LL;
 * 2, 3 and 4 ranks; quanta of 1 and 3 distances, one query in flight.
 * Five runs: each mpirun costs seconds under ASan.
 */
static void lcm_check(const char *zIndex, const char *zQueries, const char *zR1, const char *zR2)
{
    char z[2048];
    snprintf(z, sizeof z, "--radius %s '%s' '%s'", zR1, zIndex, zQueries);
    lcm_same(4, "-p lg", z);
    lcm_same(3, "-p ll --quantum 3 --local-cluster-size 4", z);
    snprintf(z, sizeof z, "-k 1000 '%s' '%s'", zIndex, zQueries);
    lcm_same(4, "-p ll", z);
    snprintf(z, sizeof z, "-k 9 --radius %s '%s' '%s'", zR2, zIndex, zQueries);
    lcm_same(4, "-p lg --quantum 1", z);
    snprintf(z, sizeof z, "-k 6 '%s' '%s'", zIndex, zQueries);
    lcm_same(2, "-p lg --quantum 1 --active 1", z);
}

TEST(metric_mpi_l2_equals_one_process)
{
    if (!mpi_ready())
        return;
    char zIndex[1024], zQueries[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("lcm-l2.genie"));
    snprintf(zQueries, sizeof zQueries, "%s", test_path("lcm-l2.fvecs"));
    lcm_vectors(GENIE_LC_L2, zIndex, zQueries);
    lcm_check(zIndex, zQueries, "2.5", "1.5");
}

TEST(metric_mpi_edit_equals_one_process)
{
    if (!mpi_ready())
        return;
    char zIndex[1024], zQueries[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("lcm-edit.genie"));
    snprintf(zQueries, sizeof zQueries, "%s", test_path("lcm-edit.txt"));
    lcm_strings(zIndex, zQueries);
    lcm_check(zIndex, zQueries, "2", "1");
    char z[4096];
    snprintf(z, sizeof z, "-k 3 --show --json '%s' '%s'", zIndex, zQueries);
    char zOne[1024], zMpi[1024], zErr[1024];
    snprintf(zOne, sizeof zOne, "%s", test_path("lcm-one.out"));
    snprintf(zMpi, sizeof zMpi, "%s", test_path("lcm-mpi.out"));
    snprintf(zErr, sizeof zErr, "%s", test_path("lcm-err.txt"));
    /* --show prints the stored strings; JSON differs only in "distances" (all processors') */
    char zCmd[8192];
    snprintf(zCmd, sizeof zCmd, "'%s' search -q -k 3 --show '%s' '%s'", GENIE_BIN_PATH, zIndex, zQueries);
    CHECK_EQ(mpi_sh(zCmd, zOne, zErr), 0);
    snprintf(z, sizeof z, "-q -k 3 --show '%s' '%s'", zIndex, zQueries);
    CHECK_EQ(mpi_run(4, NULL, "metric", z, zMpi, zErr), 0);
    char *a = mpi_read_text(zOne), *b = mpi_read_text(zMpi);
    CHECK(strcmp(a, b) == 0);
    free(a);
    free(b);
}

TEST(metric_mpi_cosine_equals_one_process)
{
    if (!mpi_ready())
        return;
    char zIndex[1024], zQueries[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("lcm-cos.genie"));
    snprintf(zQueries, sizeof zQueries, "%s", test_path("lcm-cos.fvecs"));
    lcm_vectors(GENIE_LC_COSINE, zIndex, zQueries);
    lcm_check(zIndex, zQueries, "0.01", "0.005");
}

TEST(metric_mpi_errors)
{
    if (!mpi_ready())
        return;
    char zOut[1024], zErr[1024], z[4096];
    snprintf(zOut, sizeof zOut, "%s", test_path("lcm-bad.out"));
    snprintf(zErr, sizeof zErr, "%s", test_path("lcm-bad.err"));
    /* usage: no radius or k; an unknown partition */
    CHECK_EQ(mpi_run(2, NULL, "metric", "/nonexistent.genie", zOut, zErr), 2);
    char *e = mpi_read_text(zErr);
    CHECK(strstr(e, "give --radius R") != NULL);
    free(e);
    CHECK_EQ(mpi_run(2, NULL, "metric", "-k 3 -p gg /nonexistent.genie", zOut, zErr), 2);
    e = mpi_read_text(zErr);
    CHECK(strstr(e, "--partition must be ll or lg") != NULL);
    free(e);
    /* not a metric index: every rank fails, rank 0 says why */
    test_objects objs;
    uint64_t s = 3;
    objs.n = 20;
    objs.aKw = malloc(objs.n * sizeof *objs.aKw);
    objs.aN = malloc(objs.n * sizeof *objs.aN);
    for (size_t i = 0; i < objs.n; i++) {
        objs.aN[i] = 1;
        objs.aKw[i] = malloc(sizeof(uint32_t));
        objs.aKw[i][0] = (uint32_t)(test_rand(&s) % 5);
    }
    genie_index_close(test_build_with(&objs, NULL, test_path("lcm-kw.genie")));
    test_objects_free(&objs);
    snprintf(z, sizeof z, "-k 3 '%s' /dev/null", test_path("lcm-kw.genie"));
    CHECK_EQ(mpi_run(3, NULL, "metric", z, zOut, zErr), 1);
    e = mpi_read_text(zErr);
    CHECK(strstr(e, "not a metric index") != NULL);
    free(e);
    /* vector queries of the wrong dimension */
    char zIndex[1024], zQueries[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("lcm-l2b.genie"));
    snprintf(zQueries, sizeof zQueries, "%s", test_path("lcm-l2b.fvecs"));
    lcm_vectors(GENIE_LC_L2, zIndex, zQueries);
    FILE *f = fopen(zQueries, "wb");
    int32_t d = 3;
    float x[3] = {1, 2, 3};
    fwrite(&d, sizeof d, 1, f);
    fwrite(x, sizeof x, 1, f);
    fclose(f);
    snprintf(z, sizeof z, "-k 3 '%s' '%s'", zIndex, zQueries);
    CHECK_EQ(mpi_run(3, NULL, "metric", z, zOut, zErr), 1);
    e = mpi_read_text(zErr);
    CHECK(strstr(e, "3 dimensions, the index 5") != NULL);
    free(e);
}
