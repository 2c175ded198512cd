/*
 * cpu_bench: genie's CPU backends against a plain CPU-Idx written as a
 * strong baseline, on the same generated workloads and the same cores.
 *
 *   cpu_bench [--objects N] [--queries N] [--runs N] [--threads N] [--only 0|1] [--cpu-idx]
 *
 * --only 0 runs the uniform workload alone, --only 1 the skewed one.
 *
 * Workloads model LSH signatures as bench/genie_bench.c does (Zhou et al. (GENIE)
 * IV): object o has m = 32 keywords, one per hash function j, keyword
 * j * D + v with v drawn from a Zipf(s) law over D = 64 values (s = 0 is
 * uniform, s = 1 skewed: list lengths then differ by orders of magnitude).
 * A query is a random object's signature with 30% of its keywords redrawn
 * (m items of weight 1), k = 100.
 *
 * The plain CPU-Idx (Zhou et al. (GENIE) VI-A2 written the simple way, OpenMP over
 * queries) keeps its own inverted lists, built here from the signatures,
 * and per query: an 8-bit count array over all objects (16-bit when a
 * count could exceed 255), one scan of the query's lists, one pass over
 * the array keeping the top k (count descending, id ascending) in a heap
 * while clearing it.  Its answers are checked against genie's cpu backend,
 * hit for hit, on every query; the program fails when they differ.
 *
 * Times: the median of --runs runs after one warm-up, in this process, the
 * methods interleaved run by run, as wall seconds and as CPU seconds of all
 * threads (the steadier figure when other programs share the cores).  Queries/s and postings/s are by wall
 * time; postings are those of the lists the queries scan.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <math.h>

#include "genie/genie.h"

#define BENCH_K 100
#define MAX_RUNS 15

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of this process, all threads: steadier than wall time on a shared machine. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Zipf(skew) over 0..D-1 by the inverse of the continuous CDF (as genie_bench). */
static uint32_t zipf(uint64_t *s, uint32_t D, double skew)
{
    double u = (double)(rnd(s) >> 11) / 9007199254740992.0;
    if (skew == 0)
        return (uint32_t)(u * D);
    double v = skew == 1.0 ? exp(u * log(D + 1.0)) - 1 : pow(u * (pow(D + 1.0, 1 - skew) - 1) + 1, 1 / (1 - skew)) - 1;
    uint32_t r = (uint32_t)v;
    return r < D ? r : D - 1;
}

static void die(const char *zWhat)
{
    fprintf(stderr, "cpu_bench: %s: %s\n", zWhat, genie_last_error());
    exit(1);
}

typedef struct workload {
    char zName[64];
    uint32_t n, m, nQuery;
    genie_index *idx;
    genie_queries *q;
    uint32_t *aQueryKw;   /* m keywords per query */
    uint64_t *aListStart; /* the baseline's lists: m * D + 1 offsets */
    uint32_t *aList;      /* object ids, increasing within a list */
    uint64_t nPosting;    /* postings all queries scan */
} workload;

static void make_workload(workload *w, uint32_t n, uint32_t m, uint32_t D, double skew, uint32_t nQuery, uint64_t seed)
{
    snprintf(w->zName, sizeof w->zName, "n=%u m=%u D=%u zipf=%.1f", n, m, D, skew);
    w->n = n;
    w->m = m;
    w->nQuery = nQuery;
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    size_t nKw = (size_t)m * D;
    uint32_t *aSig = malloc((size_t)n * m * sizeof *aSig);
    w->aListStart = calloc(nKw + 1, sizeof *w->aListStart);
    w->aList = malloc((size_t)n * m * sizeof *w->aList);
    w->aQueryKw = malloc((size_t)nQuery * m * sizeof *w->aQueryKw);
    genie_item *aItem = malloc(m * sizeof *aItem);
    if (!aSig || !w->aListStart || !w->aList || !w->aQueryKw || !aItem)
        die("out of memory");
    genie_builder *b;
    if (genie_builder_new(&b, NULL) != GENIE_OK)
        die("builder");
    for (uint32_t o = 0; o < n; o++) {
        uint32_t *k = aSig + (size_t)o * m;
        for (uint32_t j = 0; j < m; j++) {
            k[j] = j * D + zipf(&s, D, skew);
            w->aListStart[k[j] + 1]++;
        }
        genie_object obj = {k, m, 0, 0, NULL, 0};
        if (genie_builder_add(b, &obj) != GENIE_OK)
            die("builder add");
    }
    char zPath[64];
    snprintf(zPath, sizeof zPath, "/tmp/cpu_bench_%d.genie", (int)getpid());
    if (genie_builder_write(b, zPath) != GENIE_OK || genie_index_open(zPath, &w->idx) != GENIE_OK)
        die("index");
    unlink(zPath);
    genie_builder_free(b);
    /* The baseline's own lists: objects in id order, so each list is increasing. */
    for (size_t j = 0; j < nKw; j++)
        w->aListStart[j + 1] += w->aListStart[j];
    uint64_t *aFill = malloc(nKw * sizeof *aFill);
    if (!aFill)
        die("out of memory");
    memcpy(aFill, w->aListStart, nKw * sizeof *aFill);
    for (uint32_t o = 0; o < n; o++)
        for (uint32_t j = 0; j < m; j++)
            w->aList[aFill[aSig[(size_t)o * m + j]]++] = o;
    free(aFill);
    if (genie_queries_new(&w->q) != GENIE_OK)
        die("queries");
    w->nPosting = 0;
    for (uint32_t i = 0; i < nQuery; i++) {
        const uint32_t *src = aSig + (size_t)(rnd(&s) % n) * m;
        uint32_t *aKw = w->aQueryKw + (size_t)i * m;
        for (uint32_t j = 0; j < m; j++) {
            aKw[j] = rnd(&s) % 10 < 3 ? j * D + zipf(&s, D, skew) : src[j];
            aItem[j].lo = aItem[j].hi = aKw[j];
            aItem[j].weight = 1;
            w->nPosting += w->aListStart[aKw[j] + 1] - w->aListStart[aKw[j]];
        }
        if (genie_queries_add(w->q, aItem, m, 0) != GENIE_OK)
            die("queries add");
    }
    free(aItem);
    free(aSig);
}

/* ---- The plain CPU-Idx: count array per query, one scan, one selection pass. ---- */

static inline uint64_t key_of(uint32_t count, uint32_t object)
{
    return ((uint64_t)count << 32) | (UINT32_MAX - object);
}

static void heap_push(uint64_t *h, uint32_t *pN, uint32_t k, uint64_t key)
{
    uint32_t i;
    if (*pN < k) {
        i = (*pN)++;
        while (i > 0 && h[(i - 1) / 2] > key) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i] = key;
        return;
    }
    if (key <= h[0])
        return;
    i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= k)
            break;
        if (c + 1 < k && h[c + 1] < h[c])
            c++;
        if (h[c] >= key)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = key;
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

#define PLAIN_QUERY(T)                                                                                               \
    for (uint32_t j = 0; j < w->m; j++) {                                                                            \
        uint32_t kw = w->aQueryKw[(size_t)qi * w->m + j];                                                            \
        const uint32_t *p = w->aList + w->aListStart[kw], *e = w->aList + w->aListStart[kw + 1];                     \
        for (; p < e; p++)                                                                                           \
            c##T[*p]++;                                                                                              \
    }                                                                                                                \
    for (uint32_t o = 0; o < w->n; o++) {                                                                            \
        uint32_t c = c##T[o];                                                                                        \
        if (c > minCount) {                                                                                          \
            heap_push(aHeap, &nHeap, BENCH_K, key_of(c, o));                                                         \
            if (nHeap == BENCH_K)                                                                                    \
                minCount = (uint32_t)(aHeap[0] >> 32);                                                                \
        }                                                                                                            \
        c##T[o] = 0;                                                                                                 \
    }

/*
 * Answers of the plain CPU-Idx into aKey (k keys per query, best first) and
 * aN.  Once the heap holds k, only a count above its smallest can enter: an
 * equal count comes from a larger id, which loses the tie.
 */
static void plain_cpu_idx(const workload *w, int nThread, uint64_t *aKey, uint32_t *aN)
{
    int wide = w->m > 255;
#pragma omp parallel num_threads(nThread)
    {
        uint8_t *c8 = wide ? NULL : calloc(w->n, 1);
        uint16_t *c16 = wide ? calloc(w->n, 2) : NULL;
        uint64_t aHeap[BENCH_K];
#pragma omp for schedule(dynamic, 8)
        for (uint32_t qi = 0; qi < w->nQuery; qi++) {
            uint32_t nHeap = 0, minCount = 0;
            if (wide) {
                PLAIN_QUERY(16)
            } else {
                PLAIN_QUERY(8)
            }
            qsort(aHeap, nHeap, sizeof *aHeap, cmp_desc);
            memcpy(aKey + (size_t)qi * BENCH_K, aHeap, nHeap * sizeof *aHeap);
            aN[qi] = nHeap;
        }
        free(c8);
        free(c16);
    }
}

/* ---- Timing and the comparison. ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *a, int n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_double);
    return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

static genie_results *search(const workload *w, genie_backend be, unsigned nThread)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = be;
    opt.k = BENCH_K;
    opt.threads = nThread;
    genie_results *r;
    if (genie_search(w->idx, w->q, &opt, &r) != GENIE_OK)
        die(genie_backend_name(be));
    return r;
}

/* Wall seconds of one search; *pCpu its CPU seconds. */
static double time_genie(const workload *w, genie_backend be, unsigned nThread, double *pCpu)
{
    double t0 = now(), c0 = cpu_now();
    genie_results *res = search(w, be, nThread);
    double t = now() - t0;
    *pCpu = cpu_now() - c0;
    genie_results_free(res);
    return t;
}

/* Exit non-zero unless genie's cpu answers equal the plain CPU-Idx's on every query. */
static void check_same(const workload *w, const uint64_t *aKey, const uint32_t *aN, unsigned nThread)
{
    genie_results *r = search(w, GENIE_BACKEND_CPU, nThread);
    for (uint32_t qi = 0; qi < w->nQuery; qi++) {
        size_t n;
        const genie_hit *h = genie_results_get(r, qi, &n);
        int same = n == aN[qi];
        for (size_t i = 0; same && i < n; i++)
            same = key_of(h[i].count, h[i].object) == aKey[(size_t)qi * BENCH_K + i];
        if (!same) {
            fprintf(stderr, "cpu_bench: %s: query %u: genie cpu and the plain CPU-Idx differ\n", w->zName, qi);
            exit(1);
        }
    }
    genie_results_free(r);
}

static void run_workload(const workload *w, int nThread, int nRun, int withCpuIdx)
{
    uint64_t *aKey = malloc((size_t)w->nQuery * BENCH_K * sizeof *aKey);
    uint32_t *aN = malloc(w->nQuery * sizeof *aN);
    if (!aKey || !aN)
        die("out of memory");
    /*
     * Interleaved: run r times the plain CPU-Idx, then genie cpu (then
     * cpu-idx), so that load from other programs falls on all of them alike.
     */
    double a[MAX_RUNS], c[MAX_RUNS], aG[MAX_RUNS], cG[MAX_RUNS], aI[MAX_RUNS], cI[MAX_RUNS];
    plain_cpu_idx(w, nThread, aKey, aN); /* warm-up */
    check_same(w, aKey, aN, (unsigned)nThread);
    if (withCpuIdx)
        genie_results_free(search(w, GENIE_BACKEND_CPU_IDX, (unsigned)nThread));
    for (int r = 0; r < nRun; r++) {
        double t0 = now(), c0 = cpu_now();
        plain_cpu_idx(w, nThread, aKey, aN);
        a[r] = now() - t0;
        c[r] = cpu_now() - c0;
        aG[r] = time_genie(w, GENIE_BACKEND_CPU, (unsigned)nThread, &cG[r]);
        if (withCpuIdx)
            aI[r] = time_genie(w, GENIE_BACKEND_CPU_IDX, (unsigned)nThread, &cI[r]);
    }
    double aRatio[MAX_RUNS];
    for (int r = 0; r < nRun; r++)
        aRatio[r] = a[r] / aG[r];
    double xRun = median(aRatio, nRun);
    double tPlain = median(a, nRun), cPlain = median(c, nRun);
    double tCpu = median(aG, nRun), cCpu = median(cG, nRun);
    double gp = (double)w->nPosting / 1e9;
    printf("| %s | plain CPU-Idx (OpenMP) | %.3f | %.3f | %.0f | %.2f | 1.00 | 1.00 | 1.00 |\n", w->zName, tPlain, cPlain,
           w->nQuery / tPlain, gp / tPlain);
    printf("| %s | genie cpu | %.3f | %.3f | %.0f | %.2f | %.2f | %.2f | %.2f |\n", w->zName, tCpu, cCpu,
           w->nQuery / tCpu, gp / tCpu, tPlain / tCpu, cPlain / cCpu, xRun);
    if (withCpuIdx) {
        double cIdx = median(cI, nRun), tIdx = median(aI, nRun);
        printf("| %s | genie cpu-idx | %.3f | %.3f | %.0f | %.2f | %.2f | %.2f | - |\n", w->zName, tIdx, cIdx,
               w->nQuery / tIdx, gp / tIdx, tPlain / tIdx, cPlain / cIdx);
    }
    fflush(stdout);
    free(aKey);
    free(aN);
}

int main(int argc, char **argv)
{
    uint32_t n = 1000000, nQuery = 4096;
    int nRun = 3, nThread = (int)sysconf(_SC_NPROCESSORS_ONLN), withCpuIdx = 0, only = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--objects") && i + 1 < argc)
            n = (uint32_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            nQuery = (uint32_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            nRun = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nThread = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cpu-idx"))
            withCpuIdx = 1;
        else {
            fprintf(stderr, "usage: cpu_bench [--objects N] [--queries N] [--runs N] [--threads N] [--only 0|1] [--cpu-idx]\n");
            return 2;
        }
    }
    if (nRun < 1 || nRun > MAX_RUNS || nThread < 1 || n < 1 || nQuery < 1) {
        fprintf(stderr, "cpu_bench: --runs 1..%d, --threads, --objects and --queries at least 1\n", MAX_RUNS);
        return 2;
    }
    printf("cpu_bench: %d threads, k = %d, %u queries, median of %d runs; answers of genie cpu checked against "
           "the plain CPU-Idx on every query\n\n",
           nThread, BENCH_K, nQuery, nRun);
    printf("| workload | method | wall s | CPU s | queries/s | G postings/s | x plain (wall) | x plain (CPU) "
           "| x plain (median of run pairs) |\n|---|---|---|---|---|---|---|---|---|\n");
    static const double aSkew[] = {0.0, 1.0};
    for (int s = 0; s < 2; s++) {
        if (only >= 0 && only != s)
            continue;
        workload w;
        make_workload(&w, n, 32, 64, aSkew[s], nQuery, 1 + (uint64_t)s);
        run_workload(&w, nThread, nRun, withCpuIdx);
        genie_queries_free(w.q);
        genie_index_close(w.idx);
        free(w.aQueryKw);
        free(w.aListStart);
        free(w.aList);
    }
    return 0;
}
