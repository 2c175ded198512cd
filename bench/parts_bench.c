/*
 * parts_bench: seeds/003 Tables II and III redone, multiple loadings.
 *
 *   parts_bench [--objects N] [--dims M] [--buckets D] [--max-parts P]
 *               [--backend B] [--gpu-memory BYTES] [--threads T] [--rss]
 *               [--dir DIR]
 *
 * Data: an LSH-shaped block of N objects (seeds/003 IV): object o has M
 * keywords, one per hash function j, keyword j * D + v with v drawn from a
 * Zipf(1.0) law over D values.  The block is replicated 1, 2, 4 and 8
 * times (up to P) with distinct ids, and each index is built with
 * --part-objects N, so the data size grows as 1, 2, 4, 8 parts of a fixed
 * size.  A query is a random object's signature with 30% of its keywords
 * redrawn (M items of weight 1); 1,024 queries, k = 100.
 *
 * For each size the batch runs once to warm up (page faults, first
 * uploads), then 3 times; the medians are printed.  Time is split by
 * genie_search_with_stats: "match" is the backend's calls on the parts
 * (on CUDA including the upload of a part not on the device), "merge" the
 * host merge of the per-part top-k lists, "release" dropping a part's
 * pages / freeing its device copy.  On CUDA each size runs twice: with a
 * budget large enough that the parts stay on the device after the warm-up
 * ("resident": no transfer in the timed runs) and with --gpu-memory BYTES,
 * the budget the parts together exceed ("streamed": every part uploaded
 * per batch); transfer = streamed match - resident match.  A small budget
 * also limits the batch working memory of the streamed runs, which can
 * split a batch and inflate that difference; "cold match" (the warm-up's
 * match: first uploads, workspace allocation, page faults) minus the warm
 * resident match is a second, independent estimate of the upload cost.
 *
 * The largest data is also built as one part and timed the same way (the
 * single-load baseline).  --rss: peak resident memory of a CPU search (a
 * child process: open, search, exit; ru_maxrss from wait4) on the largest
 * index in parts and on the same data in one part.  The answers of the 2-part index are
 * always compared with those of the same data in one part (exit 1 if they
 * differ).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/genie.h"

#define BENCH_K 100
#define BENCH_QUERIES 1024
#define BENCH_RUNS 3

typedef struct bench_args {
    uint64_t nObjects;
    uint32_t nDims, nBuckets, maxParts;
    genie_backend backend;
    uint64_t gpuMemory;
    unsigned threads;
    int rss;
    const char *zDir;
} bench_args;

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

static void signature(uint64_t *s, const bench_args *a, uint32_t *aKw)
{
    for (uint32_t j = 0; j < a->nDims; j++)
        aKw[j] = j * a->nBuckets + zipf(s, a->nBuckets);
}

static void die(const char *zWhat, genie_status rc)
{
    fprintf(stderr, "parts_bench: %s: %s (%s)\n", zWhat, genie_strerror(rc), genie_last_error());
    exit(1);
}

/* @p nReplicas copies of the block, parts of @p partObjects (0: the default, one part here). */
static void build(const bench_args *a, uint32_t nReplicas, uint64_t partObjects, const char *path)
{
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.part_objects = partObjects;
    genie_builder *b;
    genie_status rc = genie_builder_new(&b, &opt);
    if (rc != GENIE_OK)
        die("builder", rc);
    uint32_t *aKw = malloc(a->nDims * sizeof *aKw);
    for (uint32_t r = 0; r < nReplicas; r++) {
        uint64_t s = 0x9e3779b97f4a7c15ull; /* the same block every time: replicas */
        for (uint64_t o = 0; o < a->nObjects; o++) {
            signature(&s, a, aKw);
            genie_object obj = {aKw, a->nDims, 0, 0, NULL, 0};
            if ((rc = genie_builder_add(b, &obj)) != GENIE_OK)
                die("add", rc);
        }
    }
    if ((rc = genie_builder_write(b, path)) != GENIE_OK)
        die("write", rc);
    genie_builder_free(b);
    free(aKw);
}

/* Queries: signatures of the block's first objects (at most 4,096), 30% of the keywords redrawn. */
static genie_queries *make_queries(const bench_args *a)
{
    genie_queries *q;
    genie_queries_new(&q);
    uint64_t nSig = a->nObjects < 4096 ? a->nObjects : 4096;
    uint32_t *aSig = malloc(nSig * a->nDims * sizeof *aSig);
    genie_item *aItem = malloc(a->nDims * sizeof *aItem);
    uint64_t t = 0x9e3779b97f4a7c15ull, s = 12345;
    for (uint64_t o = 0; o < nSig; o++)
        signature(&t, a, aSig + o * a->nDims);
    for (int i = 0; i < BENCH_QUERIES; i++) {
        const uint32_t *aKw = aSig + (rnd(&s) % nSig) * a->nDims;
        for (uint32_t j = 0; j < a->nDims; j++) {
            uint32_t kw = rnd(&s) % 10 < 3 ? j * a->nBuckets + zipf(&s, a->nBuckets) : aKw[j];
            aItem[j] = (genie_item){kw, kw, 1};
        }
        genie_queries_add(q, aItem, a->nDims, 0);
    }
    free(aSig);
    free(aItem);
    return q;
}

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
    double total, match, merge, release;
    double coldMatch; /* the warm-up's match: first uploads, page faults */
    int streamed;
} run_result;

static genie_results *search(genie_index *idx, genie_queries *q, const bench_args *a, uint64_t gpuMemory,
                             genie_search_stats *st)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = a->backend;
    opt.k = BENCH_K;
    opt.threads = a->threads;
    opt.gpu_memory = gpuMemory;
    genie_results *r;
    genie_status rc = genie_search_with_stats(idx, q, &opt, &r, st);
    if (rc != GENIE_OK)
        die("search", rc);
    return r;
}

static run_result timed(genie_index *idx, genie_queries *q, const bench_args *a, uint64_t gpuMemory)
{
    genie_search_stats st;
    genie_results_free(search(idx, q, a, gpuMemory, &st)); /* warm-up */
    double aT[BENCH_RUNS], aM[BENCH_RUNS], aG[BENCH_RUNS], aR[BENCH_RUNS];
    run_result rr;
    rr.coldMatch = st.part_seconds;
    for (int i = 0; i < BENCH_RUNS; i++) {
        genie_results_free(search(idx, q, a, gpuMemory, &st));
        aT[i] = st.total_seconds;
        aM[i] = st.part_seconds;
        aG[i] = st.merge_seconds;
        aR[i] = st.release_seconds;
        rr.streamed = st.streamed;
    }
    rr.total = median(aT);
    rr.match = median(aM);
    rr.merge = median(aG);
    rr.release = median(aR);
    return rr;
}

static int same_results(const genie_results *x, const genie_results *y)
{
    if (genie_results_queries(x) != genie_results_queries(y))
        return 0;
    for (size_t i = 0; i < genie_results_queries(x); i++) {
        size_t nx, ny;
        const genie_hit *hx = genie_results_get(x, i, &nx), *hy = genie_results_get(y, i, &ny);
        if (nx != ny || (nx && memcmp(hx, hy, nx * sizeof *hx) != 0))
            return 0;
    }
    return 1;
}

/* Child mode: open, search once on the CPU, exit. */
static int child_search(const bench_args *a, const char *path)
{
    genie_index *idx;
    genie_status rc = genie_index_open(path, &idx);
    if (rc != GENIE_OK)
        die("open", rc);
    genie_queries *q = make_queries(a);
    genie_search_stats st;
    genie_results_free(search(idx, q, a, 0, &st));
    genie_queries_free(q);
    genie_index_close(idx);
    return 0;
}

/* Peak RSS in MiB of a child searching @p path. */
static double peak_rss(const bench_args *a, char **argv, const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        char zObj[32], zDims[32], zBuckets[32], zThreads[32];
        snprintf(zObj, sizeof zObj, "%llu", (unsigned long long)a->nObjects);
        snprintf(zDims, sizeof zDims, "%u", a->nDims);
        snprintf(zBuckets, sizeof zBuckets, "%u", a->nBuckets);
        snprintf(zThreads, sizeof zThreads, "%u", a->threads);
        execl("/proc/self/exe", argv[0], "--objects", zObj, "--dims", zDims, "--buckets", zBuckets, "--threads",
              zThreads, "--backend", "cpu", "--child-search", path, (char *)NULL);
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

static int parse_args(int argc, char **argv, bench_args *a, const char **pzChild)
{
    a->nObjects = 250000;
    a->nDims = 24;
    a->nBuckets = 2048;
    a->maxParts = 8;
    a->backend = GENIE_BACKEND_CPU;
    a->gpuMemory = 64ull << 20;
    a->threads = 0;
    a->rss = 0;
    a->zDir = "/tmp";
    for (int i = 1; i < argc; i++) {
        const char *z = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(z, "--rss") == 0) {
            a->rss = 1;
            continue;
        }
        if (!v)
            return 0;
        i++;
        if (strcmp(z, "--objects") == 0)
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
        else if (strcmp(z, "--backend") == 0) {
            if (genie_backend_parse(v, &a->backend) != GENIE_OK)
                return 0;
        } else
            return 0;
    }
    return a->nObjects > 0 && a->nDims > 0 && a->nBuckets > 0 && a->maxParts > 0 &&
           (uint64_t)a->nDims * a->nBuckets <= UINT32_MAX;
}

int main(int argc, char **argv)
{
    bench_args a;
    const char *zChild = NULL;
    if (!parse_args(argc, argv, &a, &zChild)) {
        fprintf(stderr, "usage: parts_bench [--objects N] [--dims M] [--buckets D] [--max-parts P] [--backend B]\n"
                        "                   [--gpu-memory BYTES] [--threads T] [--rss] [--dir DIR]\n");
        return 2;
    }
    if (zChild)
        return child_search(&a, zChild);
    int cuda = a.backend == GENIE_BACKEND_CUDA || a.backend == GENIE_BACKEND_CUDA_SPQ;
    printf("parts_bench: %llu objects x %u keywords per part (D = %u), %d queries, k = %d, backend %s\n",
           (unsigned long long)a.nObjects, a.nDims, a.nBuckets, BENCH_QUERIES, BENCH_K, genie_backend_name(a.backend));
    if (cuda)
        printf("GPU budget for streaming (--gpu-memory): %llu bytes\n", (unsigned long long)a.gpuMemory);
    genie_queries *q = make_queries(&a);
    char zPath[4096], zOne[4096];
    printf("\n| parts | objects | index MiB | mode | total s | match s | merge s | release s | merge+release %% | "
           "cold match s |\n");
    printf("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    double matchResident[4] = {0};
    for (uint32_t p = 1, iRow = 0; p <= a.maxParts && iRow < 4; p *= 2, iRow++) {
        snprintf(zPath, sizeof zPath, "%s/parts-bench-%u.genie", a.zDir, p);
        build(&a, p, a.nObjects, zPath);
        genie_index *idx;
        genie_status rc = genie_index_open(zPath, &idx);
        if (rc != GENIE_OK)
            die("open", rc);
        genie_index_info info;
        genie_index_get_info(idx, &info);
        double mib = info.file_size / 1048576.0;
        for (int mode = 0; mode < (cuda ? 2 : 1); mode++) {
            uint64_t budget = !cuda ? 0 : mode == 0 ? (uint64_t)64 << 30 : a.gpuMemory;
            run_result rr = timed(idx, q, &a, budget);
            const char *zMode = !cuda ? "cpu" : rr.streamed ? "streamed" : "resident";
            if (cuda && mode == 0)
                matchResident[iRow] = rr.match;
            printf("| %u | %llu | %.0f | %s | %.3f | %.3f | %.4f | %.4f | %.1f | %.3f |\n", genie_index_parts(idx),
                   (unsigned long long)info.n_objects, mib, zMode, rr.total, rr.match, rr.merge, rr.release,
                   100.0 * (rr.merge + rr.release) / rr.total, rr.coldMatch);
            if (cuda && mode == 1 && rr.streamed)
                printf("|  |  |  | transfer (streamed - resident match) |  | %.3f |  |  | %.1f |  |\n",
                       rr.match - matchResident[iRow], 100.0 * (rr.match - matchResident[iRow]) / rr.total);
        }
        if (p == 2) {
            snprintf(zOne, sizeof zOne, "%s/parts-bench-one-2.genie", a.zDir);
            build(&a, 2, 0, zOne);
            genie_index *one;
            if ((rc = genie_index_open(zOne, &one)) != GENIE_OK)
                die("open", rc);
            genie_search_stats st;
            genie_results *r1 = search(one, q, &a, 0, &st), *r2 = search(idx, q, &a, 0, &st);
            int same = same_results(r1, r2);
            printf("|  |  |  | 2 parts vs one part: %s |  |  |  |  |  |  |\n", same ? "identical" : "DIFFERENT");
            genie_results_free(r1);
            genie_results_free(r2);
            genie_index_close(one);
            unlink(zOne);
            if (!same)
                return 1;
        }
        genie_index_close(idx);
        if (p * 2 <= a.maxParts)
            unlink(zPath);
        if (p * 2 > a.maxParts) {
            /* The largest data once more as one part: the single-load baseline. */
            snprintf(zOne, sizeof zOne, "%s/parts-bench-one.genie", a.zDir);
            build(&a, p, 0, zOne);
            genie_index *one;
            if ((rc = genie_index_open(zOne, &one)) != GENIE_OK)
                die("open", rc);
            if (genie_index_parts(one) == 1) {
                run_result rr = timed(one, q, &a, cuda ? (uint64_t)64 << 30 : 0);
                printf("| 1 | %llu | %.0f | one part (%s) | %.3f | %.3f | %.4f | %.4f | %.1f | %.3f |\n",
                       (unsigned long long)info.n_objects, mib, genie_backend_name(a.backend), rr.total, rr.match,
                       rr.merge, rr.release, 100.0 * (rr.merge + rr.release) / rr.total, rr.coldMatch);
            }
            genie_index_close(one);
            if (a.rss) {
                double rssParts = peak_rss(&a, argv, zPath), rssOne = peak_rss(&a, argv, zOne);
                printf("\npeak RSS of a CPU search (open + %d queries), %.0f MiB of index: %u parts %.0f MiB, "
                       "one part %.0f MiB\n",
                       BENCH_QUERIES, mib, p, rssParts, rssOne);
            }
            unlink(zPath);
            unlink(zOne);
        }
    }
    genie_queries_free(q);
    return 0;
}
