/*
 * ivf_bench: inverted-file search (IVF-Flat, IVF-PQ) against genie's exact
 * search and GENIE-LSH on one data set, in one process (docs/BENCHMARKS.md, "Inverted files").
 *
 *   ivf_bench [--base F --queries F | --n N --dim D --centres C --nq Q --seed S]
 *             [--metric l2|ip|cosine] [--k K] [--nlist L] [--pq M[,M...]|none]
 *             [--nprobe P,P...] [--depth R,R...] [--check Q] [--lsh K,K...]
 *             [--kmeans C] [--kmeans-only] [--backend B] [--threads T] [--dir DIR]
 *             [--no-flat] [--direct-truth] [--precision fp32|tf32]
 *
 * Data: the files (any format genie_vectors_read reads), or generated:
 * N vectors around C centres (centre ~ N(0, 3^2 I), vector = centre +
 * N(0, I), every draw from splitmix64 seeded by S, Box-Muller normals),
 * then Q queries drawn the same way after them (on all cores: each
 * vector's draws start where the one sequence puts them, so the set is
 * the same whatever the threads).
 *
 * Each search runs once to warm up (the device copy, the CPU layout),
 * then three times; the median is reported, in queries per second, the
 * whole batch in one call of genie_vectors_search on an open index.  The
 * truth is the exact search's (its answers are the direct loop's on every
 * backend and precision); recall@k counts the true k ids found.  Rows:
 *
 *   exact      the exact search on the backend, fp32 and tf32: an index's
 *              (IVF-Flat's), or with --direct-truth genie_exact_search() of
 *              the arrays themselves, one timed call each (the base
 *              uploaded in it), and no IVF-Flat index built (--no-flat
 *              implied): the 10,000,000 x 96 row, whose IVF-Flat file
 *              would be 3.8 GB more to write
 *   ivf-flat   per nprobe
 *   ivf-pq     per M, nprobe and refinement depth (0: none)
 *   lsh        per K (--lsh; m = 237, radius 0)
 *   recall     --recall 0.95 on each IVF index: the chosen nprobe (and
 *              depth), the estimate, the recall measured, qps
 *
 * with the GPU memory the index holds, per vector (cudaMemGetInfo, all
 * processes, before and after a search of one query, whose workspace is
 * small: the device copy of the index; IVF-PQ's rows without refinement
 * exclude the vectors the first refined search uploads, its refined rows
 * include them) and, for every IVF row, whether the backend's answers for
 * the first --check queries equal the CPU's, byte for byte (exit status 1
 * if not).  --kmeans C: 20 k-means iterations of the base to C centroids
 * on the backend, the GEMM in fp32 and (on a GPU) in TF32, each twice:
 * the total of the first (upload, cuBLAS handle, initial centroids
 * included), the mean of its iterations 2..20 (the steady state, timed
 * between the progress calls), the last iteration's mean objective (the
 * squared distance to the centroid before the update) and whether the
 * second run gave the same centroids, bit for bit (exit status 1 if not).
 * --kmeans-only: that alone, no index.  The build's own trainings are
 * timed in the build; --precision runs their GEMM in fp32 (default) or
 * TF32 (genie_ivf_params.precision).  --pq none: no IVF-PQ index.  Each build line gives its seconds, the file's size and the
 * process's peak resident memory so far.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "clustered.h"
#include "genie/vectors.h"
#include "engine/kmeans.h"
#include "util/clock.h"

#define MAX_LIST 16

typedef struct bench {
    genie_vectors base, q;
    genie_metric metric;
    uint32_t k, nlist, nCheck, threads;
    genie_backend backend;
    genie_precision buildPrecision;
    uint32_t aPq[MAX_LIST], nPq, aProbe[MAX_LIST], nProbe, aDepth[MAX_LIST], nDepth, aLsh[MAX_LIST], nLsh;
    uint32_t kmeansK;
    int noFlat, directTruth, kmeansOnly;
    const char *zDir;
    uint32_t *aTruth; /* q.n x k */
    double exactQps;
    int failed;
} bench;

static int parse_list(const char *z, uint32_t *a, uint32_t *pN)
{
    *pN = 0;
    while (*z && *pN < MAX_LIST) {
        char *e;
        unsigned long v = strtoul(z, &e, 10);
        if (e == z)
            return 0;
        a[(*pN)++] = (uint32_t)v;
        z = *e == ',' ? e + 1 : e;
    }
    return *pN > 0;
}

/* The generated set: n + nq vectors (bench/clustered.h), the last nq the queries. */
static void generate(bench *b, uint64_t n, uint32_t dim, uint32_t nCentre, uint64_t nq, uint64_t seed)
{
    float *a = clustered_generate(n + nq, dim, nCentre, seed, b->threads);
    if (!a) {
        fprintf(stderr, "ivf_bench: out of memory\n");
        exit(1);
    }
    b->base = (genie_vectors){n, dim, a};
    b->q = (genie_vectors){nq, dim, malloc((size_t)nq * dim * sizeof(float))};
    memcpy(b->q.data, a + n * dim, (size_t)nq * dim * sizeof(float));
}

static double used_bytes(void)
{
    uint64_t used = 0, total = 0;
    if (genie_cuda_memory(0, &used, &total) != GENIE_OK)
        return -1;
    return (double)used;
}

/* One search of the whole batch; *pSecs the median of three after a warm-up. */
static genie_status timed_search(const genie_index *idx, const genie_vectors *q, const genie_vsearch_options *o,
                                 genie_neighbor *out, uint32_t *aN, double *pSecs, genie_search_stats *st)
{
    double t[3];
    for (int r = -1; r < 3; r++) {
        double t0 = util_now();
        genie_status rc = genie_vectors_search(idx, q, o, out, aN, st);
        if (rc != GENIE_OK)
            return rc;
        if (r >= 0)
            t[r] = util_now() - t0;
    }
    double lo = fmin(t[0], fmin(t[1], t[2])), hi = fmax(t[0], fmax(t[1], t[2]));
    *pSecs = t[0] + t[1] + t[2] - lo - hi;
    return GENIE_OK;
}

static double recall_of(const bench *b, const genie_neighbor *out, const uint32_t *aN)
{
    uint64_t hit = 0;
    for (uint64_t i = 0; i < b->q.n; i++)
        for (uint32_t a = 0; a < aN[i]; a++)
            for (uint32_t t = 0; t < b->k; t++)
                hit += out[i * b->k + a].id == b->aTruth[i * b->k + t];
    return (double)hit / ((double)b->q.n * b->k);
}

/* The backend's answers of the first nCheck queries against the CPU's: "yes" or the first difference. */
static const char *check_cpu(bench *b, const genie_index *idx, const genie_vsearch_options *o,
                             const genie_neighbor *out, const uint32_t *aN, char *zWhy, size_t nWhy)
{
    if (!b->nCheck || b->backend == GENIE_BACKEND_CPU)
        return "-";
    genie_vectors q = {b->q.n < b->nCheck ? b->q.n : b->nCheck, b->q.dim, b->q.data};
    genie_neighbor *aCpu = malloc(q.n * b->k * sizeof *aCpu);
    uint32_t *nCpu = malloc(q.n * sizeof *nCpu);
    genie_vsearch_options c = *o;
    c.search.backend = GENIE_BACKEND_CPU;
    genie_status rc = genie_vectors_search(idx, &q, &c, aCpu, nCpu, NULL);
    snprintf(zWhy, nWhy, "yes(%llu)", (unsigned long long)q.n);
    if (rc != GENIE_OK)
        snprintf(zWhy, nWhy, "cpu-failed:%s", genie_last_error());
    for (uint64_t i = 0; rc == GENIE_OK && i < q.n; i++) {
        int same = aN[i] == nCpu[i];
        for (uint32_t j = 0; same && j < aN[i]; j++)
            same = out[i * b->k + j].id == aCpu[i * b->k + j].id &&
                   memcmp(&out[i * b->k + j].distance, &aCpu[i * b->k + j].distance, 4) == 0;
        if (!same) {
            snprintf(zWhy, nWhy, "NO(query %llu)", (unsigned long long)i);
            b->failed = 1;
            break;
        }
    }
    free(aCpu);
    free(nCpu);
    return zWhy;
}

static void row(const char *zKind, const char *zParam, double recall, double secs, uint64_t nq, double bytesPerVec,
                const char *zCheck, double exactQps)
{
    double qps = secs > 0 ? (double)nq / secs : 0;
    printf("%-9s %-30s recall@k %.4f  qps %10.0f  x_exact %6.2f  gpu_bytes_per_vector %7.1f  gpu=cpu %s\n", zKind,
           zParam, recall, qps, exactQps > 0 ? qps / exactQps : 0, bytesPerVec, zCheck);
    fflush(stdout);
}

static genie_index *open_index(const char *path)
{
    genie_index *idx = NULL;
    if (genie_index_open(path, &idx) != GENIE_OK) {
        fprintf(stderr, "ivf_bench: %s: %s\n", path, genie_last_error());
        exit(1);
    }
    return idx;
}

/* An exact search's row: its answers the truth when @p isTruth (fp32), its speed the baseline's if faster. */
static void exact_row(bench *b, int isTruth, const char *zParam, const genie_neighbor *out, const uint32_t *aN,
                      double secs, double bytesPerVec)
{
    if (isTruth)
        for (uint64_t i = 0; i < b->q.n * b->k; i++)
            b->aTruth[i] = out[i].id;
    double qps = (double)b->q.n / secs;
    if (qps > b->exactQps)
        b->exactQps = qps;
    row("exact", zParam, recall_of(b, out, aN), secs, b->q.n, bytesPerVec, "-", 0);
}

/* The exact search: the truth, and the baseline's speed. */
static void run_exact(bench *b, const char *zIndex)
{
    genie_index *idx = open_index(zIndex);
    genie_neighbor *out = malloc(b->q.n * b->k * sizeof *out);
    uint32_t *aN = malloc(b->q.n * sizeof *aN);
    b->aTruth = malloc(b->q.n * b->k * sizeof *b->aTruth);
    const genie_precision aP[2] = {GENIE_PRECISION_FP32, GENIE_PRECISION_TF32};
    for (int p = 0; p < 2; p++) {
        genie_vsearch_options o;
        genie_vsearch_options_init(&o);
        o.search.backend = b->backend;
        o.search.threads = b->threads;
        o.k = b->k;
        o.exact = 1;
        o.precision = aP[p];
        double secs;
        genie_search_stats st;
        if (timed_search(idx, &b->q, &o, out, aN, &secs, &st) != GENIE_OK) {
            fprintf(stderr, "ivf_bench: exact search: %s\n", genie_last_error());
            exit(1);
        }
        exact_row(b, p == 0, genie_precision_name(aP[p]), out, aN, secs, 4.0 * b->base.dim);
    }
    free(out);
    free(aN);
    genie_index_close(idx);
}

/* --direct-truth: genie_exact_search() of the arrays, fp32 (the truth) then tf32, one timed call each. */
static void run_exact_direct(bench *b)
{
    genie_neighbor *out = malloc(b->q.n * b->k * sizeof *out);
    uint32_t *aN = malloc(b->q.n * sizeof *aN);
    b->aTruth = malloc(b->q.n * b->k * sizeof *b->aTruth);
    const genie_precision aP[2] = {GENIE_PRECISION_FP32, GENIE_PRECISION_TF32};
    for (int p = 0; p < 2; p++) {
        genie_search_stats st;
        double t0 = util_now();
        if (genie_exact_search_precision(&b->base, &b->q, b->metric, b->k, b->backend, b->threads, aP[p], out,
                                         &st) != GENIE_OK) {
            fprintf(stderr, "ivf_bench: exact search: %s\n", genie_last_error());
            exit(1);
        }
        double secs = util_now() - t0;
        for (uint64_t i = 0; i < b->q.n; i++)
            aN[i] = b->k < b->base.n ? b->k : (uint32_t)b->base.n;
        char zParam[64];
        snprintf(zParam, sizeof zParam, "%s direct on %s", genie_precision_name(aP[p]), genie_backend_name(st.backend));
        exact_row(b, p == 0, zParam, out, aN, secs, -1);
    }
    free(out);
    free(aN);
}

static void build_ivf(bench *b, uint32_t M, int refine, const char *path)
{
    genie_ivf_params p = {.metric = b->metric, .nlist = b->nlist, .pq_m = M, .refine = refine, .seed = 1,
                          .backend = b->backend, .threads = b->threads, .precision = b->buildPrecision};
    genie_build_options opt;
    genie_build_options_init(&opt);
    double t0 = util_now();
    if (genie_vectors_build_ivf(&b->base, &p, &opt, path) != GENIE_OK) {
        fprintf(stderr, "ivf_bench: build: %s\n", genie_last_error());
        exit(1);
    }
    double secs = util_now() - t0;
    struct stat sb;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("build     %-30s %.2f s (k-means %s), file %.1f MB, peak resident %.1f MB\n", path, secs,
           genie_precision_name(b->buildPrecision),
           stat(path, &sb) == 0 ? (double)sb.st_size / 1e6 : -1.0, (double)ru.ru_maxrss / 1e3);
}

/* Every nprobe (and depth) of one IVF index, then its --recall 0.95 choice. */
static void run_ivf(bench *b, const char *path, uint32_t M)
{
    genie_index *idx = open_index(path);
    genie_ivf_info iv;
    genie_vectors_index_ivf(idx, &iv);
    genie_neighbor *out = malloc(b->q.n * b->k * sizeof *out);
    uint32_t *aN = malloc(b->q.n * sizeof *aN);
    char zParam[96], zWhy[96];
    double used0 = used_bytes(), bytesPerVec = -1;
    uint32_t aDepth[MAX_LIST + 1] = {0}, nDepth = M ? b->nDepth + 1 : 1;
    genie_vectors q1 = {1, b->q.dim, b->q.data};
    memcpy(aDepth + 1, b->aDepth, b->nDepth * sizeof *aDepth);
    for (uint32_t d = 0; d < nDepth; d++)
        for (uint32_t i = 0; i < b->nProbe; i++) {
            if (b->aProbe[i] > iv.nlist)
                continue;
            genie_vsearch_options o;
            genie_vsearch_options_init(&o);
            o.search.backend = b->backend;
            o.search.threads = b->threads;
            o.k = b->k;
            o.nprobe = b->aProbe[i];
            o.candidates = aDepth[d]; /* 0: IVF-PQ's estimates, no refinement */
            genie_search_stats st;
            double secs;
            if (i == 0 && (d == 0 || d == 1)) { /* the device copy: one query's search, before the batch's workspace */
                genie_vectors_search(idx, &q1, &o, out, aN, NULL);
                bytesPerVec = used0 >= 0 ? (used_bytes() - used0) / (double)b->base.n : -1;
            }
            if (timed_search(idx, &b->q, &o, out, aN, &secs, &st) != GENIE_OK) {
                fprintf(stderr, "ivf_bench: %s nprobe %u: %s\n", path, o.nprobe, genie_last_error());
                b->failed = 1;
                continue;
            }
            snprintf(zParam, sizeof zParam, "nlist=%u pq=%u nprobe=%u depth=%u", iv.nlist, M, o.nprobe,
                     st.candidates);
            row(M ? "ivf-pq" : "ivf-flat", zParam, recall_of(b, out, aN), secs, b->q.n, bytesPerVec,
                check_cpu(b, idx, &o, out, aN, zWhy, sizeof zWhy), b->exactQps);
        }
    /* --recall 0.95: the index's own choice. */
    genie_vsearch_options o;
    genie_vsearch_options_init(&o);
    o.search.backend = b->backend;
    o.search.threads = b->threads;
    o.k = b->k;
    o.recall = 0.95;
    genie_search_stats st;
    double secs;
    if (timed_search(idx, &b->q, &o, out, aN, &secs, &st) == GENIE_OK) {
        snprintf(zParam, sizeof zParam, "target=0.95 nprobe=%u depth=%u est=%.3f", st.nprobe, st.candidates,
                 st.recall_estimate);
        row("recall", zParam, recall_of(b, out, aN), secs, b->q.n, -1, "-", b->exactQps);
    } else {
        fprintf(stderr, "ivf_bench: --recall 0.95: %s\n", genie_last_error());
        b->failed = 1;
    }
    free(out);
    free(aN);
    genie_index_close(idx);
}

static void run_lsh(bench *b, const char *path)
{
    genie_lsh_params p = {.metric = b->metric, .seed = 1};
    genie_build_options opt;
    genie_build_options_init(&opt);
    double t0 = util_now();
    if (genie_vectors_build(&b->base, &p, &opt, path) != GENIE_OK) {
        fprintf(stderr, "ivf_bench: LSH build: %s\n", genie_last_error());
        return;
    }
    printf("build     %-30s %.2f s\n", path, util_now() - t0);
    genie_index *idx = open_index(path);
    genie_neighbor *out = malloc(b->q.n * b->k * sizeof *out);
    uint32_t *aN = malloc(b->q.n * sizeof *aN);
    for (uint32_t i = 0; i < b->nLsh; i++) {
        genie_vsearch_options o;
        genie_vsearch_options_init(&o);
        o.search.backend = b->backend;
        o.search.threads = b->threads;
        o.k = b->k;
        o.candidates = b->aLsh[i];
        genie_search_stats st;
        double secs;
        char zParam[64];
        if (timed_search(idx, &b->q, &o, out, aN, &secs, &st) != GENIE_OK) {
            fprintf(stderr, "ivf_bench: LSH K %u: %s\n", o.candidates, genie_last_error());
            continue;
        }
        snprintf(zParam, sizeof zParam, "m=237 K=%u", o.candidates);
        row("lsh", zParam, recall_of(b, out, aN), secs, b->q.n, -1, "-", b->exactQps);
    }
    free(out);
    free(aN);
    genie_index_close(idx);
}

/* The time of each k-means iteration's end, and the last objective. */
typedef struct kmeans_clock {
    double aT[21], objective;
} kmeans_clock;

static void kmeans_tick(void *ctx, const char *zStage, uint32_t it, uint32_t nIt, double objective)
{
    (void)zStage;
    (void)nIt;
    kmeans_clock *c = ctx;
    c->aT[it] = util_now();
    c->objective = objective;
}

/* 20 iterations in @p precision, twice: the first timed, the second for its bytes. */
static void run_kmeans_at(bench *b, genie_precision precision, float *aC, float *aC2)
{
    kmeans_clock clk = {{0}, 0};
    kmeans_params p = {.k = b->kmeansK, .iterations = 20, .seed = 1, .mode = KMEANS_L2, .backend = b->backend,
                       .threads = b->threads, .precision = precision, .progress = kmeans_tick, .progressCtx = &clk};
    genie_backend used;
    double t0 = util_now();
    genie_status rc = kmeans_train(b->base.data, b->base.n, b->base.dim, &p, aC, &used);
    double secs = util_now() - t0;
    if (rc == GENIE_OK) {
        p.progress = NULL;
        rc = kmeans_train(b->base.data, b->base.n, b->base.dim, &p, aC2, NULL);
    }
    if (rc != GENIE_OK) {
        fprintf(stderr, "ivf_bench: k-means: %s\n", genie_last_error());
        b->failed = 1;
        return;
    }
    int same = memcmp(aC, aC2, (size_t)b->kmeansK * b->base.dim * sizeof *aC) == 0;
    b->failed |= !same;
    printf("kmeans    n=%llu dim=%u k=%u iterations=20 on %s, %s: %.3f s in all (upload, handle and initial "
           "centroids included); iterations 2..20: %.1f ms each; objective %.6g; again: %s\n",
           (unsigned long long)b->base.n, b->base.dim, b->kmeansK, genie_backend_name(used),
           genie_precision_name(precision), secs, 1000 * (clk.aT[20] - clk.aT[1]) / 19, clk.objective,
           same ? "the same centroids" : "OTHER CENTROIDS");
}

static void run_kmeans(bench *b)
{
    float *aC = malloc((size_t)b->kmeansK * b->base.dim * sizeof *aC);
    float *aC2 = malloc((size_t)b->kmeansK * b->base.dim * sizeof *aC2);
    if (!aC || !aC2) {
        fprintf(stderr, "ivf_bench: out of memory\n");
        exit(1);
    }
    run_kmeans_at(b, GENIE_PRECISION_FP32, aC, aC2);
    if (b->backend != GENIE_BACKEND_CPU)
        run_kmeans_at(b, GENIE_PRECISION_TF32, aC, aC2);
    free(aC);
    free(aC2);
}

int main(int argc, char **argv)
{
    bench b = {.metric = GENIE_METRIC_L2, .k = 10, .nCheck = 1000, .backend = GENIE_BACKEND_AUTO, .zDir = "."};
    const char *zBase = NULL, *zQueries = NULL;
    uint64_t n = 1000000, nq = 10000, seed = 28;
    uint32_t dim = 128, nCentre = 1000;
    parse_list("1,2,4,8,16,32,64", b.aProbe, &b.nProbe);
    parse_list("100", b.aDepth, &b.nDepth);
    parse_list("16", b.aPq, &b.nPq);
    for (int i = 1; i < argc; i++) {
        const char *z = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        int ok = 1;
        if (!strcmp(z, "--base")) zBase = v, i++;
        else if (!strcmp(z, "--queries")) zQueries = v, i++;
        else if (!strcmp(z, "--metric")) ok = genie_metric_parse(v, &b.metric) == GENIE_OK, i++;
        else if (!strcmp(z, "--n")) n = strtoull(v, NULL, 10), i++;
        else if (!strcmp(z, "--dim")) dim = (uint32_t)atoi(v), i++;
        else if (!strcmp(z, "--centres")) nCentre = (uint32_t)atoi(v), i++;
        else if (!strcmp(z, "--nq")) nq = strtoull(v, NULL, 10), i++;
        else if (!strcmp(z, "--seed")) seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(z, "--k")) b.k = (uint32_t)atoi(v), i++;
        else if (!strcmp(z, "--nlist")) b.nlist = (uint32_t)atoi(v), i++;
        else if (!strcmp(z, "--pq")) ok = !strcmp(v, "none") ? (b.nPq = 0, 1) : parse_list(v, b.aPq, &b.nPq), i++;
        else if (!strcmp(z, "--precision")) ok = genie_precision_parse(v, &b.buildPrecision) == GENIE_OK, i++;
        else if (!strcmp(z, "--nprobe")) ok = parse_list(v, b.aProbe, &b.nProbe), i++;
        else if (!strcmp(z, "--depth")) ok = parse_list(v, b.aDepth, &b.nDepth), i++;
        else if (!strcmp(z, "--check")) b.nCheck = (uint32_t)atoi(v), i++;
        else if (!strcmp(z, "--lsh")) ok = parse_list(v, b.aLsh, &b.nLsh), i++;
        else if (!strcmp(z, "--kmeans")) b.kmeansK = (uint32_t)atoi(v), i++;
        else if (!strcmp(z, "--backend")) ok = genie_backend_parse(v, &b.backend) == GENIE_OK, i++;
        else if (!strcmp(z, "--threads")) b.threads = (uint32_t)atoi(v), i++;
        else if (!strcmp(z, "--dir")) b.zDir = v, i++;
        else if (!strcmp(z, "--no-flat")) b.noFlat = 1;
        else if (!strcmp(z, "--kmeans-only")) b.kmeansOnly = 1;
        else if (!strcmp(z, "--direct-truth")) b.directTruth = b.noFlat = 1;
        else ok = 0;
        if (!ok) {
            fprintf(stderr, "ivf_bench: bad option %s (see the comment at the top of bench/ivf_bench.c)\n", z);
            return 2;
        }
    }
    if (zBase && zQueries) {
        if (genie_vectors_read(zBase, &b.base) != GENIE_OK || genie_vectors_read(zQueries, &b.q) != GENIE_OK) {
            fprintf(stderr, "ivf_bench: %s\n", genie_last_error());
            return 1;
        }
    } else {
        generate(&b, n, dim, nCentre, nq, seed);
    }
    printf("data      %s: %llu x %u, %llu queries, %s, k %u, backend %s\n", zBase ? zBase : "clustered",
           (unsigned long long)b.base.n, b.base.dim, (unsigned long long)b.q.n, genie_metric_name(b.metric), b.k,
           genie_backend_name(b.backend));
    char zPath[4096];
    snprintf(zPath, sizeof zPath, "%s/ivf-flat.genie", b.zDir);
    if (b.kmeansOnly) {
        run_kmeans(&b);
        printf("result    %s\n", b.failed ? "FAILED (see above)" : "ok");
        genie_vectors_free(&b.base);
        genie_vectors_free(&b.q);
        return b.failed;
    }
    if (b.directTruth) {
        run_exact_direct(&b);
    } else {
        build_ivf(&b, 0, 0, zPath);
        run_exact(&b, zPath);
    }
    if (!b.noFlat)
        run_ivf(&b, zPath, 0);
    for (uint32_t i = 0; i < b.nPq; i++) {
        snprintf(zPath, sizeof zPath, "%s/ivf-pq%u.genie", b.zDir, b.aPq[i]);
        build_ivf(&b, b.aPq[i], 0, zPath); /* no default refinement: depth 0 rows search the codes alone */
        run_ivf(&b, zPath, b.aPq[i]);
        remove(zPath);
    }
    snprintf(zPath, sizeof zPath, "%s/ivf-flat.genie", b.zDir);
    remove(zPath);
    if (b.nLsh) {
        snprintf(zPath, sizeof zPath, "%s/lsh.genie", b.zDir);
        run_lsh(&b, zPath);
        remove(zPath);
    }
    if (b.kmeansK)
        run_kmeans(&b);
    printf("result    %s\n", b.failed ? "FAILED (see above)" : "ok");
    genie_vectors_free(&b.base);
    genie_vectors_free(&b.q);
    free(b.aTruth);
    return b.failed;
}
