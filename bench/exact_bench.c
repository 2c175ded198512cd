/*
 * exact_bench: genie's exact k-NN search against its baselines.
 *
 *   exact_bench [--queries N] [--k K] [--runs R] [--threads T] [--metric l2|ip|cosine]
 *   exact_bench --gpu [--clustered] [--queries N] [--k K[,K...]] [--precision P[,P...]] [--runs R]
 *               [--check N] [--write DIR] [--dir DIR]
 *
 * CPU (the default): the search through OpenBLAS's GEMM (genie_exact_search
 * on cpu) against the direct loop it replaces (exact_cpu_direct), on the
 * same vectors, queries and cores.  Times are the median of --runs runs
 * after one warm-up (the direct loop: one run, no warm-up; it is slow).
 * The answers are compared query by query: ids differing at a rank where
 * the two distances are not equal, and the largest relative difference of
 * the distances, are printed.
 *
 * GPU (--gpu): the search on the cuda backend (exact_gpu.cu)
 * through a vectors index opened once, so the base stays on the GPU between
 * searches as in genie eval and genie serve (the index: LSH with one
 * function, written to --dir, default /tmp, and removed).  For each k
 * (default 10,100) and precision (default fp32,tf32), one line: the median
 * of --runs searches of all the queries (one genie_vectors_search call,
 * the queries' upload included) after a warm-up, in seconds and queries/s;
 * whether the answers equal fp32's on every query
 * (ids and distance bits); and fp32's first --check queries (default 500)
 * against the CPU's direct loop, byte for byte.  Exit status 1 on any
 * difference.  --write DIR also writes base.fvecs and queries.fvecs there,
 * for the PyTorch baseline (the shared anchors' torch_knn) on the same data.
 *
 * Data: Fashion-MNIST (data/vectors/ from scripts/fetch-fashion-mnist:
 * 60,000 x 784 and the first N of its 10,000 test images) when present,
 * else synthetic vectors of that shape (pixel values 0..255); with
 * --clustered, ivf_bench's set (bench/clustered.h): 1,000,000 x 128 around
 * 1,000 centres, seed 28, the N (default 10,000) vectors drawn after the
 * base the queries.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clustered.h"
#include "engine/exact.h"
#include "genie/vectors.h"

#define MAX_RUNS 15
#define MAX_LIST 8

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

/* Parse "a,b,c" into @p a (at most @p nMax); 0 on a bad list. */
static int parse_list(const char *z, uint32_t *a, int nMax, int *pN)
{
    *pN = 0;
    while (*z && *pN < nMax) {
        char *e;
        unsigned long v = strtoul(z, &e, 10);
        if (e == z || v == 0)
            return 0;
        a[(*pN)++] = (uint32_t)v;
        z = *e == ',' ? e + 1 : e;
    }
    return *pN > 0 && !*z;
}

typedef struct gpu_args {
    uint32_t aK[MAX_LIST];
    int nK;
    genie_precision aPrec[MAX_LIST];
    int nPrec;
    int nRun;
    uint64_t nCheck;
    const char *zWrite, *zDir, *zData;
} gpu_args;

/* Two answer arrays of @p nq queries equal in ids and distance bits (k per query, first kEff of each). */
static int same_answers(const genie_neighbor *a, uint32_t ka, const genie_neighbor *b, uint32_t kb, uint64_t nq,
                        uint32_t kEff)
{
    for (uint64_t i = 0; i < nq; i++)
        for (uint32_t r = 0; r < kEff; r++) {
            const genie_neighbor *x = &a[i * ka + r], *y = &b[i * kb + r];
            if (x->id != y->id || memcmp(&x->distance, &y->distance, sizeof x->distance) != 0)
                return 0;
        }
    return 1;
}

/* The GPU mode (see the top): returns the exit status. */
static int gpu_main(const genie_vectors *base, const genie_vectors *q, genie_metric metric, const gpu_args *g)
{
    if (g->zWrite) {
        char zB[4096], zQ[4096];
        snprintf(zB, sizeof zB, "%s/base.fvecs", g->zWrite);
        snprintf(zQ, sizeof zQ, "%s/queries.fvecs", g->zWrite);
        if (genie_vectors_write_fvecs(base, zB) != GENIE_OK || genie_vectors_write_fvecs(q, zQ) != GENIE_OK)
            die("--write");
    }
    char zIndex[4096];
    snprintf(zIndex, sizeof zIndex, "%s/exact_bench-%d.genie", g->zDir, (int)getpid());
    genie_lsh_params lp = {.metric = metric, .m = 1, .seed = 1};
    genie_build_options bo;
    genie_build_options_init(&bo);
    genie_index *idx = NULL;
    if (genie_vectors_build(base, &lp, &bo, zIndex) != GENIE_OK)
        die("building the index");
    if (genie_index_open(zIndex, &idx) != GENIE_OK)
        die("opening the index");
    uint32_t kMax = 0;
    for (int i = 0; i < g->nK; i++)
        kMax = g->aK[i] > kMax ? g->aK[i] : kMax;
    uint64_t nCheck = g->nCheck < q->n ? g->nCheck : q->n;
    genie_vectors head = {nCheck, q->dim, q->data};
    genie_neighbor *aDirect = malloc((nCheck ? nCheck : 1) * kMax * sizeof *aDirect);
    genie_neighbor *aRef = malloc(q->n * kMax * sizeof *aRef), *aOut = malloc(q->n * kMax * sizeof *aOut);
    uint32_t *aN = malloc(q->n * sizeof *aN);
    if (!aDirect || !aRef || !aOut || !aN)
        die("out of memory");
    double t0 = now();
    if (nCheck && exact_cpu_direct(base, &head, metric, kMax, 0, aDirect) != GENIE_OK)
        die("direct search");
    printf("exact_gpu data=%s n=%llu dim=%u queries=%llu metric=%s direct_loop_check=%llu queries (%.1f s)\n",
           g->zData, (unsigned long long)base->n, base->dim, (unsigned long long)q->n, genie_metric_name(metric),
           (unsigned long long)nCheck, now() - t0);
    int failed = 0;
    for (int ik = 0; ik < g->nK; ik++) {
        uint32_t k = g->aK[ik], kEff = base->n < k ? (uint32_t)base->n : k;
        int haveRef = 0;
        for (int ip = 0; ip < g->nPrec; ip++) {
            genie_vsearch_options o;
            genie_vsearch_options_init(&o);
            o.search.backend = GENIE_BACKEND_CUDA;
            o.k = k;
            o.exact = 1;
            o.precision = g->aPrec[ip];
            genie_neighbor *out = g->aPrec[ip] == GENIE_PRECISION_FP32 ? aRef : aOut;
            double a[MAX_RUNS];
            for (int r = -1; r < g->nRun; r++) {
                double t = now();
                if (genie_vectors_search(idx, q, &o, out, aN, NULL) != GENIE_OK)
                    die("GPU exact search");
                if (r >= 0)
                    a[r] = now() - t;
            }
            qsort(a, (size_t)g->nRun, sizeof *a, cmp_double);
            double secs = a[g->nRun / 2];
            const char *zSame = "-", *zCheck = "-";
            char zBuf[64];
            if (g->aPrec[ip] == GENIE_PRECISION_FP32) {
                haveRef = 1;
                if (nCheck) {
                    int ok = same_answers(aRef, k, aDirect, kMax, nCheck, kEff);
                    snprintf(zBuf, sizeof zBuf, "%s(%llu)", ok ? "yes" : "NO", (unsigned long long)nCheck);
                    zCheck = zBuf;
                    failed |= !ok;
                }
            } else if (haveRef) {
                int ok = same_answers(aOut, k, aRef, k, q->n, kEff);
                zSame = ok ? "yes" : "NO";
                failed |= !ok;
            }
            printf("exact_gpu data=%s k=%u precision=%s seconds=%.4f qps=%.0f same_as_fp32=%s direct_loop=%s\n",
                   g->zData, k, genie_precision_name(g->aPrec[ip]), secs, (double)q->n / secs, zSame, zCheck);
            fflush(stdout);
        }
    }
    genie_index_close(idx);
    remove(zIndex);
    free(aDirect);
    free(aRef);
    free(aOut);
    free(aN);
    printf("exact_gpu result %s\n", failed ? "FAILED (answers differ)" : "ok");
    return failed;
}

int main(int argc, char **argv)
{
    uint64_t nQuery = 0;
    uint32_t k = 10;
    int nRun = 3, gpu = 0, clustered = 0;
    unsigned nThread = 0;
    genie_metric metric = GENIE_METRIC_L2;
    gpu_args g = {.aK = {10, 100}, .nK = 2, .aPrec = {GENIE_PRECISION_FP32, GENIE_PRECISION_TF32}, .nPrec = 2,
                  .nCheck = 500, .zDir = "/tmp"};
    for (int i = 1; i < argc; i++) {
        const char *z = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        if (!strcmp(z, "--gpu"))
            gpu = 1;
        else if (!strcmp(z, "--clustered"))
            clustered = 1;
        else if (!v)
            ok = 0;
        else if (!strcmp(z, "--queries"))
            nQuery = (uint64_t)atoll(v), i++;
        else if (!strcmp(z, "--k"))
            ok = parse_list(v, g.aK, MAX_LIST, &g.nK), k = g.aK[0], i++;
        else if (!strcmp(z, "--runs"))
            nRun = atoi(v), i++;
        else if (!strcmp(z, "--threads"))
            nThread = (unsigned)atoi(v), i++;
        else if (!strcmp(z, "--metric"))
            ok = genie_metric_parse(v, &metric) == GENIE_OK, i++;
        else if (!strcmp(z, "--check"))
            g.nCheck = (uint64_t)atoll(v), i++;
        else if (!strcmp(z, "--write"))
            g.zWrite = v, i++;
        else if (!strcmp(z, "--dir"))
            g.zDir = v, i++;
        else if (!strcmp(z, "--precision")) {
            char zList[256];
            snprintf(zList, sizeof zList, "%s", v);
            g.nPrec = 0;
            for (char *t = strtok(zList, ","); t && ok && g.nPrec < MAX_LIST; t = strtok(NULL, ","))
                ok = genie_precision_parse(t, &g.aPrec[g.nPrec++]) == GENIE_OK;
            i++;
        } else
            ok = 0;
        if (!ok) {
            fprintf(stderr, "exact_bench: bad option %s (see the comment at the top of bench/exact_bench.c)\n", z);
            return 2;
        }
    }
    if (nQuery == 0)
        nQuery = gpu ? 10000 : 1000;
    if (nRun < 1 || nRun > MAX_RUNS || k < 1 || (!gpu && clustered)) {
        fprintf(stderr, "exact_bench: --runs 1..%d, --k at least 1, --clustered with --gpu\n", MAX_RUNS);
        return 2;
    }
    genie_vectors base, q;
    const char *zWhat = "Fashion-MNIST", *zTag = "fashion-mnist";
    if (clustered) {
        zWhat = zTag = "clustered-1M";
        float *a = clustered_generate(1000000 + nQuery, 128, 1000, 28, 0);
        if (!a)
            die("out of memory");
        base = (genie_vectors){1000000, 128, a};
        q = (genie_vectors){nQuery, 128, malloc(nQuery * 128 * sizeof(float))};
        if (!q.data)
            die("out of memory");
        memcpy(q.data, a + base.n * 128, nQuery * 128 * sizeof(float));
    } else if (access("data/vectors/train-images-idx3-ubyte.gz", R_OK) == 0) {
        if (genie_vectors_read("data/vectors/train-images-idx3-ubyte.gz", &base) != GENIE_OK ||
            genie_vectors_read("data/vectors/t10k-images-idx3-ubyte.gz", &q) != GENIE_OK)
            die("reading data/vectors");
        if (q.n > nQuery)
            q.n = nQuery;
    } else {
        zWhat = "synthetic 60,000 x 784";
        zTag = "synthetic";
        synthetic(&base, 60000, 784, 1);
        synthetic(&q, nQuery, 784, 2);
    }
    if (gpu) {
        g.nRun = nRun;
        g.zData = zTag;
        int rc = gpu_main(&base, &q, metric, &g);
        genie_vectors_free(&base);
        genie_vectors_free(&q);
        return rc;
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
