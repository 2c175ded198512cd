/*
 * gpu_exact: the exact GPU search in every precision and the GPU's LSH
 * keywords against the CPU, byte for byte.
 *
 *   gpu_exact [--data DIR] [--oracle N]
 *
 * Exact search (src/engine/cuda/exact_gpu.cu): on random bases made of
 * ties (small integers), near-ties (values a few ulps apart), pixel-like
 * vectors with queries equal to base vectors, vectors of mixed scales
 * (2^-20 .. 2^20), thousands of duplicates (more candidates than the
 * selection holds: the direct path) and vectors past the bound's range
 * (|x|^2 > 2^100: every query direct), for l2, ip, cosine (fp32, tf32,
 * fp16) and l1 (fp32), k = 1, 10, 100, 1000: every answer must equal the
 * direct loop's (exact_cpu_direct) in ids and distance bits.  With --data,
 * Fashion-MNIST (train/t10k-images-idx3-ubyte.gz) and GloVe
 * (glove-base-150k.npy.gz, glove-query.npy.gz) when present: every query
 * in tf32 and fp16 against fp32 on the GPU, and the first N (--oracle,
 * default 1000) against the CPU's direct loop, k = 10 and 100.  Each line
 * reports the queries the bound sent to the direct path and the
 * candidates re-ranked per query.
 *
 * LSH keywords (src/engine/cuda/lsh_gpu.cu): the l2 and cosine families of
 * transform/vectors_lsh.c drawn and fitted on a base, the keywords of the
 * queries from the cuda backend's pLsh capability against vlsh_keywords on the CPU,
 * with the seconds of each.
 *
 * Prints one line per check and "N passed, N failed" last; exit status 1
 * on any failure.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "genie/vectors.h"
#include "engine/backend.h"
#include "engine/exact.h"
#include "transform/vectors_lsh.h"
#include "util/clock.h"

static unsigned gPassed, gFailed;

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void result(int ok, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int ok, const char *zFmt, ...)
{
    va_list ap;
    va_start(ap, zFmt);
    printf("%s ", ok ? "ok  " : "FAIL");
    vprintf(zFmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (ok)
        gPassed++;
    else
        gFailed++;
}

/* The first rank where @p a and @p b differ (ids or distance bits), or -1. */
static long long first_difference(const genie_neighbor *a, const genie_neighbor *b, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (a[i].id != b[i].id || exact_key(a[i].distance) != exact_key(b[i].distance))
            return (long long)i;
    return -1;
}

enum { D_UNIFORM, D_INTS, D_NEAR, D_PIXELS, D_SCALES, D_DUPS, D_HUGE, D_TINY, D_COUNT };
static const char *aDataName[] = {"uniform", "small-ints", "near-ties", "pixels",
                                  "scales",  "duplicates", "huge",      "tiny"};

static void make(int kind, uint64_t n, uint32_t dim, uint64_t *s, genie_vectors *v, const genie_vectors *like)
{
    v->n = n;
    v->dim = dim;
    v->data = malloc(n * dim * sizeof(float));
    for (uint64_t i = 0; i < n; i++) {
        float *p = v->data + i * dim;
        double scale = kind == D_SCALES ? ldexp(1, (int)(rnd(s) % 41) - 20) : 1;
        for (uint32_t j = 0; j < dim; j++) {
            double u = (double)(rnd(s) >> 11) * 0x1p-53;
            switch (kind) {
            case D_INTS: p[j] = (float)(rnd(s) % 5); break;
            case D_PIXELS: p[j] = (float)(rnd(s) % 256); break;
            case D_NEAR: p[j] = (float)((0.5 + j * 0.01) * (1 + (double)(rnd(s) % 9) * 0x1p-23)); break;
            case D_DUPS: p[j] = (float)(j % 3); break;
            case D_HUGE: p[j] = (float)((2 * u - 1) * (i % 50 == 7 ? 0x1p60 : 1)); break;
            case D_TINY: p[j] = (float)((2 * u - 1) * (i % 3 == 0 ? 0x1p-60 : 1)); break;
            default: p[j] = (float)((2 * u - 1) * scale); break;
            }
        }
        if (like && (kind == D_PIXELS || kind == D_UNIFORM) && i % 2 == 0)
            memcpy(p, like->data + (rnd(s) % like->n) * dim, dim * sizeof(float));
    }
    if (kind == D_DUPS)
        for (uint64_t i = 0; i < n; i += 97)
            v->data[i * dim] += 1;
}

/* The GPU in @p prec against the CPU's direct loop (@p want, computed by the caller). */
static void compare(const char *zCase, const genie_vectors *base, const genie_vectors *q, genie_metric m,
                    genie_precision prec, uint32_t k, const genie_neighbor *want)
{
    uint32_t kEff = k < base->n ? k : (uint32_t)base->n;
    genie_neighbor *got = malloc(q->n * k * sizeof *got);
    genie_search_stats st;
    memset(&st, 0, sizeof st);
    double t0 = util_now();
    genie_status rc = genie_exact_search_precision(base, q, m, k, GENIE_BACKEND_CUDA, 0, prec, got, &st);
    double secs = util_now() - t0;
    char zErr[512];
    snprintf(zErr, sizeof zErr, "%s", genie_last_error());
    long long d = -1;
    for (uint64_t i = 0; rc == GENIE_OK && d < 0 && i < q->n; i++) {
        d = first_difference(got + i * k, want + i * k, kEff);
        if (d >= 0)
            d += (long long)(i * k);
    }
    /* The distances of the queries the bound narrowed: all but the direct ones' (stats of this call). */
    uint64_t nBound = q->n - st.fallback, nCand = st.verified - st.fallback * base->n;
    double avg = nBound ? (double)nCand / (double)nBound : 0;
    if (rc != GENIE_OK)
        result(0, "%s %s %s k=%u: %s", zCase, genie_metric_name(m), genie_precision_name(prec), k, zErr);
    else if (d >= 0)
        result(0, "%s %s %s k=%u: query %lld rank %lld: GPU %u %.9g, direct %u %.9g", zCase, genie_metric_name(m),
               genie_precision_name(prec), k, d / k, d % k, got[d].id, (double)got[d].distance, want[d].id,
               (double)want[d].distance);
    else
        result(1, "%s %s %s k=%u: %llu queries equal (direct path %llu, candidates %.1f per query, %.3f s)", zCase,
               genie_metric_name(m), genie_precision_name(prec), k, (unsigned long long)q->n,
               (unsigned long long)st.fallback, avg, secs);
    free(got);
}

static void random_cases(void)
{
    static const uint32_t aK[] = {1, 10, 100, 1000};
    uint64_t s = 20261123;
    for (int kind = 0; kind < D_COUNT; kind++) {
        uint32_t dim = kind == D_PIXELS ? 784 : kind == D_INTS ? 6 : kind == D_DUPS ? 8 : 40 + kind;
        uint64_t nBase = kind == D_DUPS ? 5000 : kind == D_PIXELS ? 3000 : 4000, nQ = 64;
        genie_vectors base, q;
        make(kind, nBase, dim, &s, &base, NULL);
        make(kind, nQ, dim, &s, &q, &base);
        for (int m = 0; m <= GENIE_METRIC_L1; m++)
            for (size_t ik = 0; ik < sizeof aK / sizeof *aK; ik++) {
                uint32_t k = aK[ik];
                genie_neighbor *want = malloc(nQ * k * sizeof *want);
                if (exact_cpu_direct(&base, &q, (genie_metric)m, k, 0, want) != GENIE_OK) {
                    result(0, "%s: the CPU's direct search failed: %s", aDataName[kind], genie_last_error());
                    free(want);
                    continue;
                }
                for (int p = 0; p <= GENIE_PRECISION_FP16; p++)
                    if (m != GENIE_METRIC_L1 || p == GENIE_PRECISION_FP32)
                        compare(aDataName[kind], &base, &q, (genie_metric)m, (genie_precision)p, k, want);
                free(want);
            }
        genie_vectors_free(&base);
        genie_vectors_free(&q);
    }
}

/* Real data: every query, tf32 and fp16 against fp32 on the GPU; the first nOracle against the CPU. */
static void data_case(const char *zName, const genie_vectors *base, const genie_vectors *q, genie_metric m,
                      uint64_t nOracle)
{
    static const uint32_t aK[] = {10, 100};
    for (size_t ik = 0; ik < 2; ik++) {
        uint32_t k = aK[ik];
        genie_neighbor *ref = malloc(q->n * k * sizeof *ref), *want = malloc(nOracle * k * sizeof *want);
        genie_vectors head = {nOracle < q->n ? nOracle : q->n, q->dim, q->data};
        if (genie_exact_search(base, q, m, k, GENIE_BACKEND_CUDA, 0, ref, NULL) != GENIE_OK) {
            result(0, "%s %s fp32 k=%u: %s", zName, genie_metric_name(m), k, genie_last_error());
        } else {
            if (exact_cpu_direct(base, &head, m, k, 0, want) == GENIE_OK)
                compare(zName, base, &head, m, GENIE_PRECISION_FP32, k, want);
            for (int p = GENIE_PRECISION_TF32; p <= GENIE_PRECISION_FP16; p++)
                compare(zName, base, q, m, (genie_precision)p, k, ref);
        }
        free(ref);
        free(want);
    }
}

/* The cuda backend's LSH keywords against the CPU's for @p metric's family fitted on @p base. */
static void lsh_case(const char *zName, const genie_vectors *base, const genie_vectors *q, genie_metric metric)
{
    const engine_backend *be;
    genie_lsh_params p = {.metric = metric, .seed = 7};
    vlsh h;
    uint32_t *aCpu = NULL, *aGpu = NULL;
    if (engine_backend_pick(GENIE_BACKEND_CUDA, &be) != GENIE_OK || !be->pLsh) {
        result(0, "%s LSH %s: no GPU hashing (%s)", zName, genie_metric_name(metric), genie_last_error());
        return;
    }
    if (vlsh_init(&h, &p, base->dim) != GENIE_OK || vlsh_fit(&h, base, 0) != GENIE_OK) {
        result(0, "%s LSH %s: %s", zName, genie_metric_name(metric), genie_last_error());
        return;
    }
    double t0 = util_now();
    genie_status rc = vlsh_keywords(&h, q->data, q->n, 0, &aCpu);
    double tCpu = util_now() - t0;
    aGpu = malloc(q->n * h.p.m * sizeof *aGpu);
    engine_lsh_batch b = {.metric = metric, .dim = h.dim, .m = h.p.m, .D = h.D, .bits = h.p.bits, .aProj = h.aProj,
                          .aLo = h.aLo, .aW = h.aW, .aShift = h.aShift, .aVec = q->data, .n = q->n, .aKw = aGpu};
    if (rc == GENIE_OK)
        rc = be->pLsh->xKeywords(0, &b); /* warm-up: the first call loads the kernels */
    t0 = util_now();
    if (rc == GENIE_OK)
        rc = be->pLsh->xKeywords(0, &b);
    double tGpu = util_now() - t0;
    uint64_t nDiff = 0, first = 0;
    for (uint64_t i = 0; rc == GENIE_OK && i < q->n * h.p.m; i++)
        if (aCpu[i] != aGpu[i] && nDiff++ == 0)
            first = i;
    if (rc != GENIE_OK)
        result(0, "%s LSH %s: %s", zName, genie_metric_name(metric), genie_last_error());
    else if (nDiff)
        result(0, "%s LSH %s: %llu of %llu keywords differ, first query %llu function %llu: GPU %u, CPU %u", zName,
               genie_metric_name(metric), (unsigned long long)nDiff, (unsigned long long)(q->n * h.p.m),
               (unsigned long long)(first / h.p.m), (unsigned long long)(first % h.p.m), aGpu[first], aCpu[first]);
    else
        result(1, "%s LSH %s: %llu queries x %u functions equal; hashing CPU %.4f s, GPU %.4f s", zName,
               genie_metric_name(metric), (unsigned long long)q->n, h.p.m, tCpu, tGpu);
    free(aCpu);
    free(aGpu);
    vlsh_free(&h);
}

static int exists(const char *zPath)
{
    struct stat st;
    return stat(zPath, &st) == 0;
}

static void real_data(const char *zDir, uint64_t nOracle)
{
    static const struct {
        const char *zName, *zBase, *zQuery;
    } aSet[] = {{"fashion-mnist", "train-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte.gz"},
                {"glove-150k", "glove-base-150k.npy.gz", "glove-query.npy.gz"}};
    for (size_t i = 0; i < 2; i++) {
        char zB[4096], zQ[4096];
        snprintf(zB, sizeof zB, "%s/%s", zDir, aSet[i].zBase);
        snprintf(zQ, sizeof zQ, "%s/%s", zDir, aSet[i].zQuery);
        if (!exists(zB) || !exists(zQ)) {
            printf("skip %s: %s or %s missing\n", aSet[i].zName, zB, zQ);
            continue;
        }
        genie_vectors base, q;
        if (genie_vectors_read(zB, &base) != GENIE_OK || genie_vectors_read(zQ, &q) != GENIE_OK) {
            result(0, "%s: %s", aSet[i].zName, genie_last_error());
            continue;
        }
        data_case(aSet[i].zName, &base, &q, GENIE_METRIC_L2, nOracle);
        data_case(aSet[i].zName, &base, &q, GENIE_METRIC_COSINE, nOracle);
        data_case(aSet[i].zName, &base, &q, GENIE_METRIC_IP, nOracle);
        lsh_case(aSet[i].zName, &base, &q, GENIE_METRIC_L2);
        lsh_case(aSet[i].zName, &base, &q, GENIE_METRIC_COSINE);
        genie_vectors_free(&base);
        genie_vectors_free(&q);
    }
}

int main(int argc, char **argv)
{
    const char *zDir = NULL;
    uint64_t nOracle = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            zDir = argv[++i];
        else if (strcmp(argv[i], "--oracle") == 0 && i + 1 < argc)
            nOracle = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: gpu_exact [--data DIR] [--oracle N]\n");
            return 2;
        }
    }
    random_cases();
    uint64_t s = 99;
    for (int kind = D_UNIFORM; kind <= D_SCALES; kind += D_SCALES) {
        genie_vectors base, q;
        make(kind, 20000, kind == D_UNIFORM ? 100 : 33, &s, &base, NULL);
        make(kind, 3000, base.dim, &s, &q, &base);
        lsh_case(aDataName[kind], &base, &q, GENIE_METRIC_L2);
        lsh_case(aDataName[kind], &base, &q, GENIE_METRIC_COSINE);
        genie_vectors_free(&base);
        genie_vectors_free(&q);
    }
    if (zDir)
        real_data(zDir, nOracle);
    printf("%u passed, %u failed\n", gPassed, gFailed);
    return gFailed ? 1 : 0;
}
