/*
 * gpu_multi: several GPUs in one process (genie_search_options.gpus)
 * against one GPU and against the CPU backend, byte for byte, and the
 * scaling of replicas and shards.
 *
 *   gpu_multi [--objects N] [--functions M] [--values D] [--queries Q] [--k K] [--parts P] [--repeat R]
 *
 * Builds a synthetic index shaped like an LSH index (N objects, one keyword
 * per hash function, M functions of D values each, values Zipf-skewed) in
 * one part and in P parts, and a batch of Q queries (each an object's
 * keywords, a quarter of them changed).  Checks, on every GPU the machine
 * has (G of them): one GPU, replicas over G and shards over G give the
 * CPU's answers (the CPU's on a sample of 256 queries; the full batch
 * against one GPU).  Then times each mode, warm, R times (the median), and
 * prints queries/s and the scaling efficiency (G GPUs over one GPU / G).
 * Prints "N passed, N failed" last; exit status 1 on any failure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "genie/genie.h"

static unsigned gPassed, gFailed;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* A value 0..D-1, skewed towards 0 (about Zipf 1 over the values). */
static uint32_t skewed(uint64_t *s, uint32_t D)
{
    double u = (double)(rnd(s) >> 11) / 9007199254740992.0;
    uint32_t v = (uint32_t)(exp(u * log((double)D + 1)) - 1);
    return v < D ? v : D - 1;
}

static void die(const char *zWhat, genie_status rc)
{
    fprintf(stderr, "gpu_multi: %s: %s (%s)\n", zWhat, genie_strerror(rc), genie_last_error());
    exit(2);
}

static genie_index *build(uint64_t seed, uint32_t n, uint32_t m, uint32_t D, uint64_t partObjects, const char *zPath,
                          uint32_t **paKw)
{
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    bo.part_objects = partObjects;
    genie_builder *b;
    genie_status rc = genie_builder_new(&b, &bo);
    if (rc)
        die("builder", rc);
    uint32_t *aKw = malloc((size_t)n * m * sizeof *aKw);
    uint64_t s = seed;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t f = 0; f < m; f++)
            aKw[(size_t)i * m + f] = f * D + skewed(&s, D);
        genie_object o = {aKw + (size_t)i * m, m, 0, 0, NULL, 0};
        if ((rc = genie_builder_add(b, &o)) != GENIE_OK)
            die("add", rc);
    }
    if ((rc = genie_builder_write(b, zPath)) != GENIE_OK)
        die("write", rc);
    genie_builder_free(b);
    genie_index *idx;
    if ((rc = genie_index_open(zPath, &idx)) != GENIE_OK)
        die("open", rc);
    *paKw = aKw;
    return idx;
}

static genie_queries *make_queries(uint64_t seed, const uint32_t *aKw, uint32_t n, uint32_t m, uint32_t D,
                                   uint32_t nQuery, uint32_t from, uint32_t count)
{
    genie_queries *q;
    genie_status rc = genie_queries_new(&q);
    if (rc)
        die("queries", rc);
    genie_item *aItem = malloc(m * sizeof *aItem);
    uint64_t s = seed;
    for (uint32_t i = 0; i < nQuery; i++) {
        uint32_t o = (uint32_t)(rnd(&s) % n);
        for (uint32_t f = 0; f < m; f++) {
            uint32_t kw = rnd(&s) % 4 == 0 ? f * D + skewed(&s, D) : aKw[(size_t)o * m + f];
            aItem[f] = (genie_item){kw, kw, 1};
        }
        if (i >= from && i < from + count && (rc = genie_queries_add(q, aItem, m, 0)) != GENIE_OK)
            die("add query", rc);
    }
    free(aItem);
    return q;
}

static genie_results *search(const genie_index *idx, const genie_queries *q, genie_backend b, uint32_t k,
                             const int *aGpu, unsigned nGpu, genie_gpu_mode mode, double *pSeconds)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = b;
    opt.k = k;
    opt.gpus = aGpu;
    opt.n_gpus = nGpu;
    opt.gpu_mode = mode;
    genie_results *r;
    genie_search_stats st;
    double t0 = now();
    genie_status rc = genie_search_with_stats(idx, q, &opt, &r, &st);
    if (pSeconds)
        *pSeconds = now() - t0;
    if (rc != GENIE_OK)
        die("search", rc);
    if (nGpu > 1 && st.gpu_mode != mode) {
        printf("FAIL  asked for %s, ran %s\n", genie_gpu_mode_name(mode), genie_gpu_mode_name(st.gpu_mode));
        gFailed++;
    }
    return r;
}

static void compare(const genie_results *a, const genie_results *b, const char *zWhat)
{
    size_t nq = genie_results_queries(a);
    int ok = genie_results_queries(b) == nq;
    for (size_t i = 0; ok && i < nq; i++) {
        size_t na, nb;
        const genie_hit *ha = genie_results_get(a, i, &na), *hb = genie_results_get(b, i, &nb);
        ok = na == nb && (na == 0 || memcmp(ha, hb, na * sizeof *ha) == 0);
        if (!ok)
            printf("FAIL  %s: query %zu differs (%zu against %zu hits)\n", zWhat, i + 1, na, nb);
    }
    if (ok)
        gPassed++;
    else
        gFailed++;
    printf("%s  %s\n", ok ? "ok  " : "FAIL", zWhat);
}

static double median(double *a, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && a[j] < a[j - 1]; j--) {
            double t = a[j];
            a[j] = a[j - 1];
            a[j - 1] = t;
        }
    return a[n / 2];
}

static double timed(const genie_index *idx, const genie_queries *q, uint32_t k, const int *aGpu, unsigned nGpu,
                    genie_gpu_mode mode, int repeat)
{
    double a[64];
    genie_results_free(search(idx, q, GENIE_BACKEND_CUDA, k, aGpu, nGpu, mode, NULL)); /* warm */
    for (int i = 0; i < repeat; i++)
        genie_results_free(search(idx, q, GENIE_BACKEND_CUDA, k, aGpu, nGpu, mode, &a[i]));
    return median(a, repeat);
}

int main(int argc, char **argv)
{
    uint32_t n = 1000000, m = 128, D = 4096, nQuery = 4096, k = 100, nPart = 8;
    int repeat = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        uint32_t v = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--objects")) n = v;
        else if (!strcmp(argv[i], "--functions")) m = v;
        else if (!strcmp(argv[i], "--values")) D = v;
        else if (!strcmp(argv[i], "--queries")) nQuery = v;
        else if (!strcmp(argv[i], "--k")) k = v;
        else if (!strcmp(argv[i], "--parts")) nPart = v;
        else if (!strcmp(argv[i], "--repeat")) repeat = v < 1 ? 1 : v > 63 ? 63 : (int)v;
        else {
            fprintf(stderr, "gpu_multi: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!genie_cuda_available()) {
        printf("gpu_multi: no usable GPU\n0 passed, 0 failed\n");
        return 0;
    }
    int aGpu[16], nGpu = 0;
    char zDir[] = "/tmp/gpu-multi-XXXXXX";
    if (!mkdtemp(zDir))
        return 2;
    char zOne[64], zMany[64];
    snprintf(zOne, sizeof zOne, "%s/one.genie", zDir);
    snprintf(zMany, sizeof zMany, "%s/many.genie", zDir);
    uint32_t *aKw;
    double t0 = now();
    genie_index *one = build(1, n, m, D, 0, zOne, &aKw);
    free(aKw);
    genie_index *many = build(1, n, m, D, (n + nPart - 1) / nPart, zMany, &aKw);
    printf("built %u objects x %u keywords (%u parts) twice in %.1f s\n", n, m, genie_index_parts(many),
           now() - t0);

    /* How many GPUs: the largest G for which GPU G-1 is accepted. */
    genie_queries *qSample = make_queries(7, aKw, n, m, D, nQuery, 0, 256);
    nGpu = 0;
    for (int g = 0; g < 16; g++) {
        genie_search_options opt;
        memset(&opt, 0, sizeof opt);
        opt.backend = GENIE_BACKEND_CUDA;
        opt.k = 1;
        opt.gpus = &g;
        opt.n_gpus = 1;
        genie_results *r;
        if (genie_search(one, qSample, &opt, &r) != GENIE_OK)
            break;
        genie_results_free(r);
        aGpu[nGpu++] = g;
    }
    printf("GPUs: %d (genie_cuda_device_count: %d)\n", nGpu, genie_cuda_device_count());
    for (int g = 0; g < genie_cuda_device_count(); g++) {
        uint64_t used = 0, total = 0;
        genie_status rc = genie_cuda_memory(g, &used, &total);
        printf("GPU %d memory: %s, %.1f of %.1f GiB in use\n", g,
               rc == GENIE_OK && used > 0 && used <= total ? "ok" : "WRONG", used / 1073741824.0, total / 1073741824.0);
    }

    /* Correctness: the CPU on a sample; one GPU on the whole batch. */
    genie_results *cpu = search(one, qSample, GENIE_BACKEND_CPU, k, NULL, 0, GENIE_GPU_AUTO, NULL);
    genie_results *r = search(one, qSample, GENIE_BACKEND_CUDA, k, aGpu, 1, GENIE_GPU_AUTO, NULL);
    compare(cpu, r, "one GPU = cpu (256 queries)");
    genie_results_free(r);
    if (nGpu > 1) {
        r = search(one, qSample, GENIE_BACKEND_CUDA, k, aGpu, nGpu, GENIE_GPU_REPLICAS, NULL);
        compare(cpu, r, "replicas = cpu (256 queries, one part)");
        genie_results_free(r);
        r = search(many, qSample, GENIE_BACKEND_CUDA, k, aGpu, nGpu, GENIE_GPU_SHARDS, NULL);
        compare(cpu, r, "shards = cpu (256 queries)");
        genie_results_free(r);
    }
    genie_results_free(cpu);
    genie_queries *q = make_queries(11, aKw, n, m, D, nQuery, 0, nQuery);
    genie_results *ref = search(one, q, GENIE_BACKEND_CUDA, k, aGpu, 1, GENIE_GPU_AUTO, NULL);
    if (nGpu > 1) {
        r = search(one, q, GENIE_BACKEND_CUDA, k, aGpu, nGpu, GENIE_GPU_REPLICAS, NULL);
        compare(ref, r, "replicas = one GPU (whole batch)");
        genie_results_free(r);
        r = search(many, q, GENIE_BACKEND_CUDA, k, aGpu, nGpu, GENIE_GPU_SHARDS, NULL);
        compare(ref, r, "shards = one GPU (whole batch)");
        genie_results_free(r);
        r = search(many, q, GENIE_BACKEND_CUDA, k, aGpu, nGpu, GENIE_GPU_REPLICAS, NULL);
        compare(ref, r, "replicas of a multi-part index = one GPU");
        genie_results_free(r);
    }
    genie_results_free(ref);

    /* Speed, warm: the median of the repeats. */
    double t1 = timed(one, q, k, aGpu, 1, GENIE_GPU_AUTO, repeat);
    double t1p = timed(many, q, k, aGpu, 1, GENIE_GPU_AUTO, repeat);
    printf("\n| index | mode | GPUs | seconds | queries/s | efficiency |\n| --- | --- | --- | --- | --- | --- |\n");
    printf("| 1 part | one GPU | 1 | %.4f | %.0f | 1.00 |\n", t1, nQuery / t1);
    printf("| %u parts | one GPU | 1 | %.4f | %.0f | 1.00 |\n", genie_index_parts(many), t1p, nQuery / t1p);
    if (nGpu > 1) {
        double tr = timed(one, q, k, aGpu, nGpu, GENIE_GPU_REPLICAS, repeat);
        double ts = timed(many, q, k, aGpu, nGpu, GENIE_GPU_SHARDS, repeat);
        double trp = timed(many, q, k, aGpu, nGpu, GENIE_GPU_REPLICAS, repeat);
        printf("| 1 part | replicas | %d | %.4f | %.0f | %.2f |\n", nGpu, tr, nQuery / tr, t1 / tr / nGpu);
        printf("| %u parts | shards | %d | %.4f | %.0f | %.2f |\n", genie_index_parts(many), nGpu, ts, nQuery / ts,
               t1p / ts / nGpu);
        printf("| %u parts | replicas | %d | %.4f | %.0f | %.2f |\n", genie_index_parts(many), nGpu, trp,
               nQuery / trp, t1p / trp / nGpu);
    }
    printf("\n%u objects, %u keywords each (%u values per function), %u queries, k = %u, median of %d warm runs\n",
           n, m, D, nQuery, k, repeat);
    genie_queries_free(q);
    genie_queries_free(qSample);
    free(aKw);
    genie_index_close(one);
    genie_index_close(many);
    unlink(zOne);
    unlink(zMany);
    rmdir(zDir);
    printf("%u passed, %u failed\n", gPassed, gFailed);
    return gFailed ? 1 : 0;
}
