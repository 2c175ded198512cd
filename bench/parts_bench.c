/*
 * parts_bench: Zhou et al. (GENIE) Tables II and III redone, multiple loadings.
 *
 *   parts_bench [--vectors BASE --queries QUERIES [--metric M] [--hashes H]]
 *               [--objects N] [--dims M] [--buckets D] [--max-parts P]
 *               [--backend B] [--gpu-memory BYTES] [--threads T] [--rss]
 *               [--dir DIR]
 *
 * Data: one block of n objects of m keywords each, replicated 1, 2, 4 and
 * 8 times (up to P) with distinct ids; each index is built with
 * part_objects = n, so the data grows as 1, 2, 4, 8 parts of a fixed size.
 * The block's keywords are made once and kept in memory.
 *
 *   Real data (--vectors): the LSH signatures of the vectors of BASE (any
 *   format genie_vectors_read() reads), made exactly as the vectors
 *   front-end makes them: vlsh_init (seed 1, --metric l2 (default), l1 or
 *   cosine, m = --hashes or the front-end's default 237), vlsh_fit on BASE,
 *   vlsh_keywords.  The indexes are plain keyword indexes (no vectors
 *   stored).  Queries: the first 1,024 vectors of QUERIES (all of them if
 *   fewer) hashed the same way, one item of weight 1 per function and
 *   minimum count 1: what genie_vectors_search() asks genie_search() for
 *   its match counts (radius 0).
 *
 *   Synthetic (the default): an LSH-shaped block (Zhou et al. (GENIE) IV) of
 *   n = --objects objects; object o has m = --dims keywords, one per hash
 *   function j, keyword j * D + v with v drawn from a Zipf(1.0) law over
 *   D = --buckets values.  A query is a random object's signature with 30%
 *   of its keywords redrawn (m items of weight 1); 1,024 queries.
 *
 * k = 100.  Each size runs in one mode on the CPU backend ("cpu") and in
 * three on a CUDA backend, each on a freshly opened index (no device copy
 * left over from another mode):
 *
 *   resident    budget 64 GiB: every part stays on the device after the
 *               warm-up, so the timed runs move no postings;
 *   serial      budget --gpu-memory BYTES, serial_upload = 1: the parts
 *               stream through the device, each uploaded when its turn
 *               comes (no overlap);
 *   overlapped  the same budget, serial_upload = 0: the next part is
 *               uploaded while the current one is matched.
 *
 * In each mode the batch runs once to warm up (page faults, first
 * uploads), then 3 times; the medians are printed.  The columns come from
 * genie_search_with_stats: total; match (part_seconds: the backend's calls
 * on the parts); upload (upload_seconds: staging and copying the parts,
 * wherever it ran); wait (wait_seconds: the part of the upload the search
 * waited for, the exposed transfer); merge (the host merge of the per-part
 * top-k lists); (wait + merge) as a share of the total; and the streamed
 * and overlapped flags the stats report.  The index MiB of the 1-part row
 * is the size of one part.
 *
 * The largest data, when it has more than 2 parts, is also built as one
 * part and timed resident (or on the CPU): the single-load baseline.  Checks, exit 1 on any difference (each
 * printed with the first query that differs): for every size, the serial
 * and overlapped answers equal the resident ones; the 2-part answers, and
 * those of the largest size, equal the answers of the same data built as
 * one part.  --rss: peak resident memory of a CPU search (a child process:
 * open, search, exit; ru_maxrss from wait4) on the largest index in parts
 * and on the same data in one part.  --phases: after each CUDA row, the
 * CUDA backend's phase times of one more run, summed over the parts
 * (genie_search_stats.phases: host planning and staging, unit upload,
 * counting, selection, download, collecting), to see which phase an
 * overlapped upload slows down.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/genie.h"
#include "genie/vectors.h"
#include "transform/vectors_lsh.h"
#include "util/clock.h"

#define BENCH_K 100
#define BENCH_QUERIES 1024
#define BENCH_RUNS 3
#define BENCH_RESIDENT_BUDGET ((uint64_t)64 << 30)

typedef struct bench_args {
    const char *zVectors, *zQueries; /* real data; NULL: synthetic */
    genie_metric metric;
    uint32_t nHashes;                /* 0: the front-end's default */
    uint64_t nObjects;
    uint32_t nDims, nBuckets, maxParts;
    genie_backend backend;
    uint64_t gpuMemory;
    unsigned threads;
    int rss, phases;
    const char *zDir;
} bench_args;

/* The block replicated into every index, and the queries. */
typedef struct bench_data {
    uint64_t n;         /* objects in the block: one part */
    uint32_t m;         /* keywords per object, items per query */
    uint32_t *aKw;      /* n x m */
    uint32_t nQuery;
    uint32_t minCount;  /* every query's */
    uint32_t *aQueryKw; /* nQuery x m, one item [kw, kw] of weight 1 each */
} bench_data;

typedef struct bench_mode {
    const char *zName;
    uint64_t budget; /* genie_search_options.gpu_memory */
    int serial;      /* genie_search_options.serial_upload */
} bench_mode;

static void die(const char *zWhat, genie_status rc)
{
    fprintf(stderr, "parts_bench: %s: %s (%s)\n", zWhat, genie_strerror(rc), genie_last_error());
    exit(1);
}

static const char *base_name(const char *zPath)
{
    const char *z = strrchr(zPath, '/');
    return z ? z + 1 : zPath;
}

/* ------------------------------------------------------------ the data */

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Zipf(1) over 0..D-1 by the inverse of the continuous CDF. */
static uint32_t zipf(uint64_t *s, uint32_t D)
{
    double u = (double)(rnd(s) >> 11) / 9007199254740992.0;
    double x = pow((double)D + 1, u) - 1;
    uint32_t v = (uint32_t)x;
    return v < D ? v : D - 1;
}

/* The synthetic block; queries from its first objects (at most 4,096), 30% of the keywords redrawn. */
static void make_synthetic(const bench_args *a, bench_data *d)
{
    d->n = a->nObjects;
    d->m = a->nDims;
    d->minCount = 0;
    d->nQuery = BENCH_QUERIES;
    d->aKw = malloc(d->n * d->m * sizeof *d->aKw);
    d->aQueryKw = malloc((size_t)d->nQuery * d->m * sizeof *d->aQueryKw);
    if (!d->aKw || !d->aQueryKw)
        die("synthetic data", GENIE_ENOMEM);
    uint64_t t = 0x9e3779b97f4a7c15ull, s = 12345;
    for (uint64_t o = 0; o < d->n; o++)
        for (uint32_t j = 0; j < d->m; j++)
            d->aKw[o * d->m + j] = j * a->nBuckets + zipf(&t, a->nBuckets);
    uint64_t nSig = d->n < 4096 ? d->n : 4096;
    for (uint32_t i = 0; i < d->nQuery; i++) {
        const uint32_t *aSig = d->aKw + (rnd(&s) % nSig) * d->m;
        for (uint32_t j = 0; j < d->m; j++)
            d->aQueryKw[(size_t)i * d->m + j] =
                rnd(&s) % 10 < 3 ? j * a->nBuckets + zipf(&s, a->nBuckets) : aSig[j];
    }
    printf("parts_bench: synthetic LSH-shaped block, n = %llu objects x m = %u keywords per part (D = %u, "
           "Zipf 1.0), %u queries",
           (unsigned long long)d->n, d->m, a->nBuckets, d->nQuery);
}

/* The LSH signatures of BASE and of QUERIES' first vectors, as the vectors front-end makes them. */
static void make_real(const bench_args *a, bench_data *d)
{
    double t0 = util_now();
    genie_vectors base, queries;
    genie_status rc;
    if ((rc = genie_vectors_read(a->zVectors, &base)) != GENIE_OK)
        die(a->zVectors, rc);
    if ((rc = genie_vectors_read(a->zQueries, &queries)) != GENIE_OK)
        die(a->zQueries, rc);
    if (queries.n == 0 || queries.dim != base.dim) {
        fprintf(stderr, "parts_bench: %s: %llu vectors of %u dimensions; %s has %u\n", a->zQueries,
                (unsigned long long)queries.n, queries.dim, a->zVectors, base.dim);
        exit(1);
    }
    double t1 = util_now();
    genie_lsh_params p = {.metric = a->metric, .m = a->nHashes, .seed = 1};
    vlsh h;
    if ((rc = vlsh_init(&h, &p, base.dim)) != GENIE_OK)
        die("LSH functions", rc);
    if ((rc = vlsh_fit(&h, &base, a->threads)) != GENIE_OK)
        die("LSH fit", rc);
    d->n = base.n;
    d->m = h.p.m;
    d->minCount = 1;
    d->nQuery = queries.n < BENCH_QUERIES ? (uint32_t)queries.n : BENCH_QUERIES;
    if ((rc = vlsh_keywords(&h, base.data, base.n, a->threads, &d->aKw)) != GENIE_OK ||
        (rc = vlsh_keywords(&h, queries.data, d->nQuery, a->threads, &d->aQueryKw)) != GENIE_OK)
        die("hashing", rc);
    printf("parts_bench: %s (%llu x %u, %s LSH, m = %u functions of D = %u buckets): n = %llu objects x "
           "m = %u keywords per part; queries: the first %u of %s; read in %.1f s, hashed in %.1f s",
           base_name(a->zVectors), (unsigned long long)base.n, base.dim, genie_metric_name(h.p.metric), h.p.m, h.D,
           (unsigned long long)d->n, d->m, d->nQuery, base_name(a->zQueries), t1 - t0, util_now() - t1);
    vlsh_free(&h);
    genie_vectors_free(&base);
    genie_vectors_free(&queries);
}

static genie_queries *make_queries(const bench_data *d)
{
    genie_queries *q;
    genie_status rc = genie_queries_new(&q);
    if (rc != GENIE_OK)
        die("queries", rc);
    genie_item *aItem = malloc(d->m * sizeof *aItem);
    for (uint32_t i = 0; i < d->nQuery; i++) {
        for (uint32_t j = 0; j < d->m; j++) {
            uint32_t kw = d->aQueryKw[(size_t)i * d->m + j];
            aItem[j] = (genie_item){kw, kw, 1};
        }
        if ((rc = genie_queries_add(q, aItem, d->m, d->minCount)) != GENIE_OK)
            die("queries", rc);
    }
    free(aItem);
    return q;
}

/* The queries for a --rss child: nQuery, m, minCount, then the keywords, uint32 each. */
static void write_queries(const bench_data *d, const char *path)
{
    FILE *f = fopen(path, "wb");
    uint32_t aHead[3] = {d->nQuery, d->m, d->minCount};
    size_t n = (size_t)d->nQuery * d->m;
    if (!f || fwrite(aHead, sizeof aHead, 1, f) != 1 || fwrite(d->aQueryKw, sizeof *d->aQueryKw, n, f) != n ||
        fclose(f) != 0) {
        fprintf(stderr, "parts_bench: cannot write %s\n", path);
        exit(1);
    }
}

static void read_queries(bench_data *d, const char *path)
{
    FILE *f = fopen(path, "rb");
    uint32_t aHead[3];
    if (!f || fread(aHead, sizeof aHead, 1, f) != 1) {
        fprintf(stderr, "parts_bench: cannot read %s\n", path);
        exit(1);
    }
    d->nQuery = aHead[0];
    d->m = aHead[1];
    d->minCount = aHead[2];
    size_t n = (size_t)d->nQuery * d->m;
    d->aQueryKw = malloc((n ? n : 1) * sizeof *d->aQueryKw);
    if (!d->aQueryKw || fread(d->aQueryKw, sizeof *d->aQueryKw, n, f) != n) {
        fprintf(stderr, "parts_bench: %s is short\n", path);
        exit(1);
    }
    fclose(f);
}

/* @p nReplicas copies of the block, parts of @p partObjects (0: the default, one part here). */
static void build(const bench_data *d, uint32_t nReplicas, uint64_t partObjects, const char *path)
{
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.part_objects = partObjects;
    genie_builder *b;
    genie_status rc = genie_builder_new(&b, &opt);
    if (rc != GENIE_OK)
        die("builder", rc);
    for (uint32_t r = 0; r < nReplicas; r++)
        for (uint64_t o = 0; o < d->n; o++) {
            genie_object obj = {d->aKw + o * d->m, d->m, 0, 0, NULL, 0};
            if ((rc = genie_builder_add(b, &obj)) != GENIE_OK)
                die("add", rc);
        }
    if ((rc = genie_builder_write(b, path)) != GENIE_OK)
        die("write", rc);
    genie_builder_free(b);
}

/* ------------------------------------------------------------- searching */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *a)
{
    qsort(a, BENCH_RUNS, sizeof *a, cmp_double);
    return a[BENCH_RUNS / 2];
}

typedef struct run_result {
    double total, match, upload, wait, merge; /* medians */
    int streamed, overlapped;                 /* of the last run */
    genie_results *res;                       /* the last run's answers */
} run_result;

static genie_results *search(genie_index *idx, genie_queries *q, const bench_args *a, const bench_mode *mode,
                             int timePhases, genie_search_stats *st)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = a->backend;
    opt.k = BENCH_K;
    opt.threads = a->threads;
    opt.gpu_memory = mode->budget;
    opt.serial_upload = mode->serial;
    opt.time_phases = timePhases;
    genie_results *r;
    genie_status rc = genie_search_with_stats(idx, q, &opt, &r, st);
    if (rc != GENIE_OK)
        die("search", rc);
    return r;
}

/* Open @p path afresh, warm up, time BENCH_RUNS runs. */
static run_result timed(const char *path, genie_queries *q, const bench_args *a, const bench_mode *mode)
{
    genie_index *idx;
    genie_status rc = genie_index_open(path, &idx);
    if (rc != GENIE_OK)
        die("open", rc);
    genie_search_stats st;
    genie_results_free(search(idx, q, a, mode, 0, &st));
    double aT[BENCH_RUNS], aM[BENCH_RUNS], aU[BENCH_RUNS], aW[BENCH_RUNS], aG[BENCH_RUNS];
    run_result rr = {0};
    for (int i = 0; i < BENCH_RUNS; i++) {
        genie_results_free(rr.res);
        rr.res = search(idx, q, a, mode, 0, &st);
        aT[i] = st.total_seconds;
        aM[i] = st.part_seconds;
        aU[i] = st.upload_seconds;
        aW[i] = st.wait_seconds;
        aG[i] = st.merge_seconds;
        rr.streamed = st.streamed;
        rr.overlapped = st.overlapped;
    }
    if (a->phases && mode->budget) {
        genie_results_free(search(idx, q, a, mode, 1, &st));
        const genie_gpu_phases t = st.phases;
        printf("|  |  |  | %s phases, ms: plan %.1f, stage %.1f, upload %.1f, count %.1f, select %.1f, download %.1f, "
               "collect %.1f; backend %.1f |  |  |  |  |  |  |  |  |\n",
               mode->zName, t.plan_ms, t.stage_ms, t.upload_ms, t.count_ms, t.select_ms, t.download_ms,
               t.collect_ms, t.total_ms);
    }
    genie_index_close(idx);
    rr.total = median(aT);
    rr.match = median(aM);
    rr.upload = median(aU);
    rr.wait = median(aW);
    rr.merge = median(aG);
    return rr;
}

static void print_row(uint32_t nParts, uint64_t nObjects, double mib, const char *zMode, const run_result *rr)
{
    printf("| %u | %llu | %.0f | %s | %.3f | %.3f | %.3f | %.3f | %.4f | %.1f | %s | %s |\n", nParts,
           (unsigned long long)nObjects, mib, zMode, rr->total, rr->match, rr->upload, rr->wait, rr->merge,
           100.0 * (rr->wait + rr->merge) / rr->total, rr->streamed ? "yes" : "no", rr->overlapped ? "yes" : "no");
}

/* The first query whose answers differ, or -1. */
static long first_difference(const genie_results *x, const genie_results *y)
{
    if (genie_results_queries(x) != genie_results_queries(y))
        return 0;
    for (size_t i = 0; i < genie_results_queries(x); i++) {
        size_t nx, ny;
        const genie_hit *hx = genie_results_get(x, i, &nx), *hy = genie_results_get(y, i, &ny);
        if (nx != ny || (nx && memcmp(hx, hy, nx * sizeof *hx) != 0))
            return (long)i;
    }
    return -1;
}

/* Print the comparison of @p zWhat with @p zRef; @return 1 when they differ. */
static int check(const genie_results *x, const genie_results *ref, const char *zWhat, const char *zRef)
{
    long i = first_difference(x, ref);
    if (i < 0)
        printf("|  |  |  | %s vs %s: identical |  |  |  |  |  |  |  |  |\n", zWhat, zRef);
    else
        printf("|  |  |  | %s vs %s: DIFFERENT from query %ld on |  |  |  |  |  |  |  |  |\n", zWhat, zRef, i);
    return i >= 0;
}

/* ------------------------------------------------------------ the --rss child */

static void queries_path(const bench_args *a, char *zOut, size_t n)
{
    snprintf(zOut, n, "%s/parts-bench-queries.u32", a->zDir);
}

/* Child mode: open, search once on the CPU, exit. */
static int child_search(const bench_args *a, const char *path)
{
    bench_data d;
    char zQueries[4096];
    queries_path(a, zQueries, sizeof zQueries);
    read_queries(&d, zQueries);
    genie_index *idx;
    genie_status rc = genie_index_open(path, &idx);
    if (rc != GENIE_OK)
        die("open", rc);
    genie_queries *q = make_queries(&d);
    bench_mode cpu = {"cpu", 0, 0};
    genie_search_stats st;
    genie_results_free(search(idx, q, a, &cpu, 0, &st));
    genie_queries_free(q);
    genie_index_close(idx);
    free(d.aQueryKw);
    return 0;
}

/* Peak RSS in MiB of a child searching @p path with the queries of queries_path(). */
static double peak_rss(const bench_args *a, char **argv, const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        char zThreads[32];
        snprintf(zThreads, sizeof zThreads, "%u", a->threads);
        execl("/proc/self/exe", argv[0], "--dir", a->zDir, "--threads", zThreads, "--backend", "cpu",
              "--child-search", path, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "parts_bench: child search of %s failed\n", path);
        exit(1);
    }
    return ru.ru_maxrss / 1024.0;
}

/* ------------------------------------------------------------------ main */

static int parse_args(int argc, char **argv, bench_args *a, const char **pzChild)
{
    memset(a, 0, sizeof *a);
    a->metric = GENIE_METRIC_L2;
    a->nObjects = 250000;
    a->nDims = 24;
    a->nBuckets = 2048;
    a->maxParts = 8;
    a->backend = GENIE_BACKEND_CPU;
    a->gpuMemory = 64ull << 20;
    a->zDir = "/tmp";
    for (int i = 1; i < argc; i++) {
        const char *z = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(z, "--rss") == 0 || strcmp(z, "--phases") == 0) {
            *(z[2] == 'r' ? &a->rss : &a->phases) = 1;
            continue;
        }
        if (!v)
            return 0;
        i++;
        if (strcmp(z, "--vectors") == 0)
            a->zVectors = v;
        else if (strcmp(z, "--queries") == 0)
            a->zQueries = v;
        else if (strcmp(z, "--hashes") == 0)
            a->nHashes = (uint32_t)strtoul(v, NULL, 10);
        else if (strcmp(z, "--objects") == 0)
            a->nObjects = strtoull(v, NULL, 10);
        else if (strcmp(z, "--dims") == 0)
            a->nDims = (uint32_t)strtoul(v, NULL, 10);
        else if (strcmp(z, "--buckets") == 0)
            a->nBuckets = (uint32_t)strtoul(v, NULL, 10);
        else if (strcmp(z, "--max-parts") == 0)
            a->maxParts = (uint32_t)strtoul(v, NULL, 10);
        else if (strcmp(z, "--gpu-memory") == 0)
            a->gpuMemory = strtoull(v, NULL, 10);
        else if (strcmp(z, "--threads") == 0)
            a->threads = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(z, "--dir") == 0)
            a->zDir = v;
        else if (strcmp(z, "--child-search") == 0)
            *pzChild = v;
        else if (strcmp(z, "--metric") == 0) {
            if (genie_metric_parse(v, &a->metric) != GENIE_OK)
                return 0;
        } else if (strcmp(z, "--backend") == 0) {
            if (genie_backend_parse(v, &a->backend) != GENIE_OK)
                return 0;
        } else
            return 0;
    }
    return !a->zVectors == !a->zQueries && a->nObjects > 0 && a->nDims > 0 && a->nBuckets > 0 &&
           a->maxParts > 0 && (uint64_t)a->nDims * a->nBuckets <= UINT32_MAX;
}

int main(int argc, char **argv)
{
    bench_args a;
    const char *zChild = NULL;
    if (!parse_args(argc, argv, &a, &zChild)) {
        fprintf(stderr,
                "usage: parts_bench [--vectors BASE --queries QUERIES [--metric l2|l1|cosine] [--hashes M]]\n"
                "                   [--objects N] [--dims M] [--buckets D] [--max-parts P] [--backend B]\n"
                "                   [--gpu-memory BYTES] [--threads T] [--rss] [--phases] [--dir DIR]\n");
        return 2;
    }
    if (zChild)
        return child_search(&a, zChild);
    setvbuf(stdout, NULL, _IOLBF, 0); /* rows reach a log even if a time limit stops the run */
    int cuda = a.backend == GENIE_BACKEND_CUDA || a.backend == GENIE_BACKEND_CUDA_SPQ;
    bench_data d;
    if (a.zVectors)
        make_real(&a, &d);
    else
        make_synthetic(&a, &d);
    printf("; k = %d, backend %s\n", BENCH_K, genie_backend_name(a.backend));
    const bench_mode aCuda[3] = {{"resident", BENCH_RESIDENT_BUDGET, 0},
                                 {"serial", a.gpuMemory, 1},
                                 {"overlapped", a.gpuMemory, 0}};
    const bench_mode aCpu[1] = {{"cpu", 0, 0}};
    const bench_mode *aMode = cuda ? aCuda : aCpu;
    int nMode = cuda ? 3 : 1;
    if (cuda)
        printf("GPU budget of the serial and overlapped modes (--gpu-memory): %llu bytes (%.0f MiB)\n",
               (unsigned long long)a.gpuMemory, a.gpuMemory / 1048576.0);
    genie_queries *q = make_queries(&d);
    char zPath[4096], zOne[4096], zWhat[64];
    int nDiff = 0;
    double tBuild = 0;
    printf("\n| parts | objects | index MiB | mode | total s | match s | upload s | wait s | merge s | "
           "(wait+merge) %% | streamed | overlapped |\n");
    printf("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
    for (uint32_t p = 1; p <= a.maxParts && p <= 8; p *= 2) {
        int largest = p * 2 > a.maxParts || p == 8;
        snprintf(zPath, sizeof zPath, "%s/parts-bench-%u.genie", a.zDir, p);
        double t0 = util_now();
        build(&d, p, d.n, zPath);
        tBuild += util_now() - t0;
        genie_index *idx;
        genie_status rc = genie_index_open(zPath, &idx);
        if (rc != GENIE_OK)
            die("open", rc);
        genie_index_info info;
        genie_index_get_info(idx, &info);
        uint32_t nParts = genie_index_parts(idx);
        genie_index_close(idx);
        double mib = info.file_size / 1048576.0;
        run_result aRun[3];
        for (int m = 0; m < nMode; m++) {
            aRun[m] = timed(zPath, q, &a, &aMode[m]);
            print_row(nParts, info.n_objects, mib, aMode[m].zName, &aRun[m]);
        }
        for (int m = 1; m < nMode; m++)
            nDiff += check(aRun[m].res, aRun[0].res, aMode[m].zName, aMode[0].zName);
        if (p == 2 || (largest && p > 2)) {
            /* The same data as one part: the single-load answers (and, for the largest, its time). */
            snprintf(zOne, sizeof zOne, "%s/parts-bench-one-%u.genie", a.zDir, p);
            t0 = util_now();
            build(&d, p, 0, zOne);
            tBuild += util_now() - t0;
            run_result one = timed(zOne, q, &a, &aMode[0]);
            if (largest) {
                snprintf(zWhat, sizeof zWhat, "one part (%s)", aMode[0].zName);
                print_row(1, info.n_objects, mib, zWhat, &one);
            }
            snprintf(zWhat, sizeof zWhat, "%u parts", nParts);
            nDiff += check(aRun[0].res, one.res, zWhat, "one part");
            genie_results_free(one.res);
            if (largest && a.rss) {
                char zQueries[4096];
                queries_path(&a, zQueries, sizeof zQueries);
                write_queries(&d, zQueries);
                double rssParts = peak_rss(&a, argv, zPath), rssOne = peak_rss(&a, argv, zOne);
                printf("\npeak RSS of a CPU search (open + %u queries), %.0f MiB of index: %u parts %.0f MiB, "
                       "one part %.0f MiB\n",
                       d.nQuery, mib, nParts, rssParts, rssOne);
                unlink(zQueries);
            }
            unlink(zOne);
        }
        for (int m = 0; m < nMode; m++)
            genie_results_free(aRun[m].res);
        unlink(zPath);
        if (largest)
            break;
    }
    printf("\nbuilding the indexes took %.1f s\n", tBuild);
    genie_queries_free(q);
    free(d.aKw);
    free(d.aQueryKw);
    if (nDiff)
        fprintf(stderr, "parts_bench: %d comparisons DIFFERENT\n", nDiff);
    return nDiff ? 1 : 0;
}
