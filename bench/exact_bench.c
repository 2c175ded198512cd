/*
 * exact_bench: the CPU exact k-NN search through OpenBLAS's GEMM
 * (genie_exact_search on cpu) against the direct loop it replaces
 * (exact_cpu_direct), on the same vectors, queries and cores.
 *
 *   exact_bench [--queries N] [--k K] [--runs R] [--threads T] [--metric l2|ip|cosine]
 *
 * The base and queries are Fashion-MNIST (data/vectors/ from
 * scripts/fetch-fashion-mnist: 60,000 x 784 and the first N of its 10,000
 * test images) when present, else synthetic vectors of that shape (pixel
 * values 0..255).  Times are the median of --runs runs after one warm-up
 * (the direct loop: one run, no warm-up; it is slow).  The answers are
 * compared query by query: ids differing at a rank where the two
 * distances are not equal, and the largest relative difference of the
 * distances, are printed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/exact.h"
#include "genie/vectors.h"

#define MAX_RUNS 15

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *zWhat)
{
    fprintf(stderr, "exact_bench: %s: %s\n", zWhat, genie_last_error());
    exit(1);
}

static void synthetic(genie_vectors *v, uint64_t n, uint32_t dim, uint64_t seed)
{
    v->n = n;
    v->dim = dim;
    v->data = malloc(n * dim * sizeof *v->data);
    if (!v->data)
        die("out of memory");
    uint64_t s = seed;
    for (uint64_t i = 0; i < n * dim; i++) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        v->data[i] = (float)((s * 2685821657736338717ull) >> 56);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    uint64_t nQuery = 1000;
    uint32_t k = 10;
    int nRun = 3;
    unsigned nThread = 0;
    genie_metric metric = GENIE_METRIC_L2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            nQuery = (uint64_t)atoll(argv[++i]);
        else if (!strcmp(argv[i], "--k") && i + 1 < argc)
            k = (uint32_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            nRun = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nThread = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--metric") && i + 1 < argc) {
            if (genie_metric_parse(argv[++i], &metric) != GENIE_OK)
                die("--metric");
        } else {
            fprintf(stderr, "usage: exact_bench [--queries N] [--k K] [--runs R] [--threads T] [--metric M]\n");
            return 2;
        }
    }
    if (nRun < 1 || nRun > MAX_RUNS || nQuery < 1 || k < 1) {
        fprintf(stderr, "exact_bench: --runs 1..%d, --queries and --k at least 1\n", MAX_RUNS);
        return 2;
    }
    genie_vectors base, q;
    const char *zWhat = "Fashion-MNIST";
    if (access("data/vectors/train-images-idx3-ubyte.gz", R_OK) == 0) {
        if (genie_vectors_read("data/vectors/train-images-idx3-ubyte.gz", &base) != GENIE_OK ||
            genie_vectors_read("data/vectors/t10k-images-idx3-ubyte.gz", &q) != GENIE_OK)
            die("reading data/vectors");
        if (q.n > nQuery)
            q.n = nQuery;
    } else {
        zWhat = "synthetic 60,000 x 784";
        synthetic(&base, 60000, 784, 1);
        synthetic(&q, nQuery, 784, 2);
    }
    genie_neighbor *aBlas = malloc(q.n * k * sizeof *aBlas), *aDirect = malloc(q.n * k * sizeof *aDirect);
    if (!aBlas || !aDirect)
        die("out of memory");
    double a[MAX_RUNS];
    if (genie_exact_search(&base, &q, metric, k, GENIE_BACKEND_CPU, nThread, aBlas, NULL) != GENIE_OK)
        die("exact search");
    for (int r = 0; r < nRun; r++) {
        double t0 = now();
        if (genie_exact_search(&base, &q, metric, k, GENIE_BACKEND_CPU, nThread, aBlas, NULL) != GENIE_OK)
            die("exact search");
        a[r] = now() - t0;
    }
    qsort(a, (size_t)nRun, sizeof *a, cmp_double);
    double tBlas = a[nRun / 2], t0 = now();
    if (exact_cpu_direct(&base, &q, metric, k, nThread, aDirect) != GENIE_OK)
        die("direct search");
    double tDirect = now() - t0;
    uint64_t nDiff = 0;
    double maxRel = 0;
    uint32_t kEff = base.n < k ? (uint32_t)base.n : k;
    for (uint64_t i = 0; i < q.n; i++)
        for (uint32_t r = 0; r < kEff; r++) {
            const genie_neighbor *x = &aBlas[i * k + r], *y = &aDirect[i * k + r];
            double rel = fabs((double)x->distance - y->distance) / fmax(1, fabs(y->distance));
            maxRel = fmax(maxRel, rel);
            nDiff += x->id != y->id && x->distance != y->distance;
        }
    printf("exact_bench: %s, %llu queries, k = %u, %s, %u threads (0 = all cores)\n", zWhat, (unsigned long long)q.n,
           k, genie_metric_name(metric), nThread);
    printf("| method | seconds | queries/s | x direct |\n|---|---|---|---|\n");
    printf("| direct loop (before) | %.3f | %.0f | 1.0 |\n", tDirect, q.n / tDirect);
    printf("| OpenBLAS GEMM + heap | %.3f | %.0f | %.1f |\n", tBlas, q.n / tBlas, tDirect / tBlas);
    printf("answers: %llu ranks with another id at another distance; largest relative distance difference %.2g\n",
           (unsigned long long)nDiff, maxRel);
    free(aBlas);
    free(aDirect);
    genie_vectors_free(&base);
    genie_vectors_free(&q);
    return 0;
}
