/*
 * genie_bench: queries/s and postings/s of the c-PQ in the tile layout
 * (cuda, the default), the c-PQ in the paper's layout (cuda-cpq-paper),
 * GEN-SPQ (cuda-spq) and the CPU backend on the same indexes and batches.
 *
 *   genie_bench [--quick] [--fortunes DIR] [--tiles-only] [--tile-variants LIST] [--only TEXT]
 *
 * Generated workloads model LSH signatures (Zhou et al. (GENIE) IV): object o has m
 * keywords, one per hash function j, keyword j * D + v with v drawn from a
 * Zipf(s) law over D values, so list lengths are Zipf-skewed.  A query is
 * a random object's signature with 30% of its keywords redrawn (m items of
 * weight 1), k = 100, 1,024 queries per batch.  --fortunes adds the fortune
 * documents as a text index queried with 1,024 of its documents.
 *
 * Times are end to end (genie_search: planning, transfers, kernels,
 * results), the median of 3 runs after one warm-up run.  The CPU backend
 * runs on all cores over the first 256 queries of the batch (it is slow);
 * its queries/s is scaled accordingly.  The bandwidth bound is 4 bytes per
 * posting at the device-to-device copy bandwidth measured at start
 * (bytes read plus written over time): the bytes of a 32-bit posting.
 * The tile layout reads 16-bit tile-local ids by default, 2 bytes a
 * posting, so its ratio to this bound may pass 1.  Memory per query is
 * the GPU scratch each method allocates for one query (formulas of
 * src/engine/cuda).
 * Prints a Markdown table last.
 *
 * For the counting kernel's own work: --tile-variants LIST runs the tile
 * layout once per variant of LIST (comma-separated: 16 = 16-bit tile-local
 * postings, the default; 32 = the 32-bit ids; 16agg, 32agg = the same with
 * warp-aggregated increments; tile_testing_set_variant in
 * engine/cuda/cuda_testing.h), each with a row of its own in both tables;
 * the phase table also gives the counting kernel's own G postings/s and
 * its ratio to the bound.  --tiles-only leaves out the other methods, the
 * CPU and the load-balance study; --only TEXT runs the workloads whose
 * name contains TEXT (e.g. "m=128", "fortunes").
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "engine/cuda/cuda_testing.h"
#include "genie/genie.h"
#include "genie/text.h"
#include "util/clock.h"

#define BENCH_K 100
#define BENCH_QUERIES 1024
#define CPU_QUERIES 256

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Zipf(skew) over 0..D-1 by the inverse of the continuous CDF. */
static uint32_t zipf(uint64_t *s, uint32_t D, double skew)
{
    double u = (double)(rnd(s) >> 11) / 9007199254740992.0;
    double x = fabs(skew - 1.0) < 1e-9 ? pow((double)D + 1, u) - 1
                                       : pow(u * (pow((double)D + 1, 1 - skew) - 1) + 1, 1 / (1 - skew)) - 1;
    uint32_t v = (uint32_t)x;
    return v < D ? v : D - 1;
}

/* Device-to-device copy bandwidth in bytes/s (read + written). */
static double copy_bandwidth(void)
{
    size_t n = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0, e1;
    if (cudaMalloc(&a, n) != cudaSuccess || cudaMalloc(&b, n) != cudaSuccess)
        return 0;
    cudaMemset(a, 1, n);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e0, 0);
    for (int i = 0; i < 10; i++)
        cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice);
    cudaEventRecord(e1, 0);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    cudaFree(a);
    cudaFree(b);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ms > 0 ? 2.0 * 10 * (double)n / (ms * 1e-3) : 0;
}

typedef struct workload {
    char zName[96];
    genie_index *idx;
    genie_queries *q;    /* the batch */
    genie_queries *qCpu; /* its first CPU_QUERIES queries */
    uint32_t bound;      /* count bound of a query (all weights 1) */
    uint64_t nPosting;   /* postings the batch scans */
    uint64_t *aQueryPosting; /* postings query i scans */
    uint32_t m;          /* items per query (lsh) */
    genie_item *aItem;   /* items of the batch (lsh), m per query */
} workload;

static double g_bandwidth;

/* The tile layout's kernel variants to run (tile_testing_set_variant). */
typedef struct tile_variant {
    const char *zKey, *zName;
    int wide, aggregate;
} tile_variant;
static const tile_variant g_aVariant[] = {{"16", "16-bit", 0, 0},
                                          {"32", "32-bit", 1, 0},
                                          {"16agg", "16-bit, warp aggregation", 0, 1},
                                          {"32agg", "32-bit, warp aggregation", 1, 1}};
#define N_VARIANT (sizeof g_aVariant / sizeof *g_aVariant)
static int g_aRun[N_VARIANT] = {1};
static int g_tilesOnly;
static char g_zTable[64 * 1024];
static char g_zPhase[32 * 1024];

static void die(const char *zWhat)
{
    fprintf(stderr, "genie_bench: %s: %s\n", zWhat, genie_last_error());
    exit(1);
}

/* Postings a query scans: the lengths of its keywords' lists. */
static uint64_t query_postings(const uint32_t *aKw, size_t nKw, const uint64_t *aListLen)
{
    uint64_t n = 0;
    for (size_t i = 0; i < nKw; i++)
        n += aListLen[aKw[i]];
    return n;
}

/* The name of an lsh workload, into z (returned). */
static const char *lsh_name(char *z, size_t nz, uint32_t n, uint32_t m, uint32_t D, double skew)
{
    if (n < 1000000)
        snprintf(z, nz, "lsh n=%uK m=%u D=%u zipf=%.1f", n / 1000, m, D, skew);
    else
        snprintf(z, nz, "lsh n=%uM m=%u D=%u zipf=%.1f", n / 1000000, m, D, skew);
    return z;
}

/* --tile-variants LIST into g_aRun; 0 when LIST names an unknown variant. */
static int parse_variants(const char *zList)
{
    int aRun[N_VARIANT] = {0};
    char z[128];
    snprintf(z, sizeof z, "%s", zList);
    for (char *tok = strtok(z, ","); tok; tok = strtok(NULL, ",")) {
        size_t v = 0;
        while (v < N_VARIANT && strcmp(tok, g_aVariant[v].zKey))
            v++;
        if (v == N_VARIANT)
            return 0;
        aRun[v] = 1;
    }
    memcpy(g_aRun, aRun, sizeof aRun);
    return 1;
}

static void lsh_workload(workload *w, uint32_t n, uint32_t m, uint32_t D, double skew, uint64_t seed)
{
    lsh_name(w->zName, sizeof w->zName, n, m, D, skew);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    uint32_t *aSig = malloc((size_t)n * m * sizeof *aSig);
    uint64_t *aListLen = calloc((size_t)m * D, sizeof *aListLen);
    if (!aSig || !aListLen)
        die("out of memory");
    genie_builder *b;
    if (genie_builder_new(&b, NULL) != GENIE_OK)
        die("builder");
    for (uint32_t o = 0; o < n; o++) {
        uint32_t *k = aSig + (size_t)o * m;
        for (uint32_t j = 0; j < m; j++) {
            k[j] = j * D + zipf(&s, D, skew);
            aListLen[k[j]]++;
        }
        genie_object obj = {k, m, 0, 0, NULL, 0};
        if (genie_builder_add(b, &obj) != GENIE_OK)
            die("builder add");
    }
    char zPath[] = "/tmp/genie_bench.genie";
    if (genie_builder_write(b, zPath) != GENIE_OK || genie_index_open(zPath, &w->idx) != GENIE_OK)
        die("index");
    unlink(zPath);
    genie_builder_free(b);
    genie_queries_new(&w->q);
    genie_queries_new(&w->qCpu);
    w->m = m;
    w->aItem = malloc((size_t)BENCH_QUERIES * m * sizeof *w->aItem);
    w->aQueryPosting = malloc(BENCH_QUERIES * sizeof *w->aQueryPosting);
    uint32_t *aKw = malloc(m * sizeof *aKw);
    if (!w->aItem || !w->aQueryPosting || !aKw)
        die("out of memory");
    w->nPosting = 0;
    for (uint32_t i = 0; i < BENCH_QUERIES; i++) {
        const uint32_t *src = aSig + (size_t)(rnd(&s) % n) * m;
        genie_item *aItem = w->aItem + (size_t)i * m;
        for (uint32_t j = 0; j < m; j++) {
            aKw[j] = rnd(&s) % 10 < 3 ? j * D + zipf(&s, D, skew) : src[j];
            aItem[j].lo = aItem[j].hi = aKw[j];
            aItem[j].weight = 1;
        }
        w->aQueryPosting[i] = query_postings(aKw, m, aListLen);
        w->nPosting += w->aQueryPosting[i];
        genie_queries_add(w->q, aItem, m, 0);
        if (i < CPU_QUERIES)
            genie_queries_add(w->qCpu, aItem, m, 0);
    }
    w->bound = m;
    free(aKw);
    free(aSig);
    free(aListLen);
}

static int fortunes_workload(workload *w, const char *zDir)
{
    const char *azIn[256];
    static char azPath[256][512];
    size_t nIn = 0;
    DIR *dir = opendir(zDir);
    struct dirent *e;
    while (dir && (e = readdir(dir)) && nIn < 256) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || (len > 4 && (!strcmp(e->d_name + len - 4, ".dat") || !strcmp(e->d_name + len - 3, ".u8"))))
            continue;
        snprintf(azPath[nIn], sizeof azPath[nIn], "%s/%s", zDir, e->d_name);
        azIn[nIn] = azPath[nIn];
        nIn++;
    }
    if (dir)
        closedir(dir);
    if (!nIn)
        return 0;
    genie_input_options in;
    memset(&in, 0, sizeof in);
    in.type = GENIE_TYPE_TEXT;
    in.delimiter = "%";
    in.store_records = 1;
    char zPath[] = "/tmp/genie_bench_fortunes.genie";
    if (genie_build_files(azIn, nIn, &in, NULL, zPath) != GENIE_OK || genie_index_open(zPath, &w->idx) != GENIE_OK)
        die("fortunes index");
    unlink(zPath);
    genie_index_info info;
    genie_index_get_info(w->idx, &info);
    snprintf(w->zName, sizeof w->zName, "fortunes (%lluK docs)", (unsigned long long)info.n_objects / 1000);
    genie_queries_new(&w->q);
    genie_queries_new(&w->qCpu);
    uint64_t step = info.n_objects / BENCH_QUERIES ? info.n_objects / BENCH_QUERIES : 1;
    for (uint32_t i = 0; i < BENCH_QUERIES; i++) {
        const char *z;
        size_t len;
        genie_index_record(w->idx, (uint32_t)((i * step) % info.n_objects), &z, &len);
        genie_queries_add_text(w->q, w->idx, z, len, 0);
        if (i < CPU_QUERIES)
            genie_queries_add_text(w->qCpu, w->idx, z, len, 0);
    }
    /* Postings scanned, through the CPU backend: with all weights 1, a query's postings are the sum
     * of the counts of all objects it matches. */
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    opt.k = (uint32_t)info.n_objects;
    genie_results *r;
    if (genie_search(w->idx, w->q, &opt, &r) != GENIE_OK)
        die("fortunes postings");
    w->nPosting = 0;
    for (size_t i = 0; i < genie_results_queries(r); i++) {
        size_t n;
        const genie_hit *h = genie_results_get(r, i, &n);
        for (size_t j = 0; j < n; j++)
            w->nPosting += h[j].count;
    }
    genie_results_free(r);
    w->bound = info.max_object_length; /* the engine's bound for a text query, at most */
    return 1;
}

/* The warm-up search of the last time_search(), seconds: the first of an index uploads it. */
static double g_firstSearch;

/* Median seconds of 3 timed runs after a warm-up. */
static double time_search(const workload *w, const genie_queries *q, genie_backend be, int lb)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = be;
    opt.k = BENCH_K;
    opt.load_balance = lb;
    double t[3];
    for (int i = -1; i < 3; i++) {
        genie_results *r;
        double t0 = util_now();
        if (genie_search(w->idx, q, &opt, &r) != GENIE_OK)
            die(genie_backend_name(be));
        double dt = util_now() - t0;
        genie_results_free(r);
        if (i >= 0)
            t[i] = dt;
        else
            g_firstSearch = dt;
    }
    double a = t[0], b = t[1], c = t[2];
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* Tile layout: per tile a candidate count and min(k, 32768) candidates, plus k hits. */
static uint64_t tile_bytes_per_query(uint64_t n)
{
    uint64_t nTile = n / 32768 + (n % 32768 != 0), c = BENCH_K < 32768 ? BENCH_K : 32768;
    return nTile * (4 + c * 8) + BENCH_K * 8;
}

static uint64_t cpq_bytes_per_query(uint64_t n, uint32_t bound)
{
    uint32_t bits = 1;
    while (bits < 32 && ((1ull << bits) - 1) < bound)
        bits *= 2;
    uint64_t slots = 1;
    while (slots < 4ull * BENCH_K + 2048)
        slots <<= 1;
    return (n * bits + 7) / 8 + ((uint64_t)bound + 2) * 4 + slots * 8 + BENCH_K * 8;
}

static void row(const workload *w, const char *zMethod, double sec, uint64_t nQuery, uint64_t nPosting,
                uint64_t memPerQuery)
{
    double qps = nQuery / sec, pps = nPosting / sec;
    char z[512];
    snprintf(z, sizeof z, "| %s | %s | %.0f | %.2f | %.3f | %.2f |\n", w->zName, zMethod, qps, pps / 1e9,
             g_bandwidth > 0 ? pps * 4 / g_bandwidth : 0, memPerQuery / 1048576.0);
    strncat(g_zTable, z, sizeof g_zTable - strlen(g_zTable) - 1);
    printf("%s", z);
    fflush(stdout);
}

/* One untimed search with phase timing on: where the time of @p be goes. */
static void phase_row(const workload *w, const genie_queries *q, genie_backend be, const char *zMethod)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = be;
    opt.k = BENCH_K;
    opt.time_phases = 1;
    genie_results *r;
    genie_search_stats st;
    double t0 = util_now();
    if (genie_search_with_stats(w->idx, q, &opt, &r, &st) != GENIE_OK)
        die(genie_backend_name(be));
    double wall = (util_now() - t0) * 1e3;
    genie_results_free(r);
    const genie_gpu_phases p = st.phases;
    char z[640];
    double countPps = p.count_ms > 0 ? w->nPosting / (p.count_ms * 1e-3) : 0;
    snprintf(z, sizeof z,
             "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.3f | %.3f | %.3f | %.3f | %llu |\n",
             w->zName, zMethod, wall, wall - p.total_ms, p.plan_ms, p.stage_ms, p.upload_ms, p.count_ms,
             countPps / 1e9, g_bandwidth > 0 ? countPps * 4 / g_bandwidth : 0, p.select_ms, p.download_ms,
             p.collect_ms, (unsigned long long)p.batches);
    strncat(g_zPhase, z, sizeof g_zPhase - strlen(g_zPhase) - 1);
    printf("# phases %s", z);
    fflush(stdout);
}

static void run_workload(workload *w, int withLb)
{
    genie_index_info info;
    genie_index_get_info(w->idx, &info);
    printf("# %s: %llu objects, %llu postings, longest list %llu, batch scans %llu postings\n", w->zName,
           (unsigned long long)info.n_objects, (unsigned long long)info.n_postings,
           (unsigned long long)info.longest_list, (unsigned long long)w->nPosting);
    uint64_t nq = genie_queries_count(w->q), nqCpu = genie_queries_count(w->qCpu);
    uint64_t nPostCpu = w->nPosting * nqCpu / nq; /* approximate: the CPU runs a prefix */
    double t;
    int nVariant = 0;
    for (size_t v = 0; v < N_VARIANT; v++)
        nVariant += g_aRun[v];
    for (size_t v = 0; v < N_VARIANT; v++) {
        if (!g_aRun[v])
            continue;
        char zName[96];
        if (nVariant == 1 && v == 0)
            snprintf(zName, sizeof zName, "c-PQ tiles (cuda)");
        else
            snprintf(zName, sizeof zName, "c-PQ tiles (%s)", g_aVariant[v].zName);
        tile_testing_set_variant(g_aVariant[v].wide, g_aVariant[v].aggregate);
        t = time_search(w, w->q, GENIE_BACKEND_CUDA, 0);
        printf("# %s, %s: first search %.1f ms (uploads what it reads when nothing before read it), median %.1f ms\n",
               w->zName, zName, g_firstSearch * 1e3, t * 1e3);
        row(w, zName, t, nq, w->nPosting, tile_bytes_per_query(info.n_objects));
        phase_row(w, w->q, GENIE_BACKEND_CUDA, zName);
    }
    tile_testing_set_variant(0, 0);
    if (g_tilesOnly)
        return;
    t = time_search(w, w->q, GENIE_BACKEND_CUDA_CPQ_PAPER, 0);
    row(w, "c-PQ paper layout (cuda-cpq-paper)", t, nq, w->nPosting, cpq_bytes_per_query(info.n_objects, w->bound));
    if (withLb) {
        t = time_search(w, w->q, GENIE_BACKEND_CUDA_CPQ_PAPER, 1);
        row(w, "c-PQ paper layout --load-balance", t, nq, w->nPosting, cpq_bytes_per_query(info.n_objects, w->bound));
    }
    t = time_search(w, w->q, GENIE_BACKEND_CUDA_SPQ, 0);
    row(w, "GEN-SPQ (cuda-spq)", t, nq, w->nPosting, info.n_objects * 4 + BENCH_K * 8);
    t = time_search(w, w->qCpu, GENIE_BACKEND_CPU, 0);
    row(w, "cpu (all cores)", t, nqCpu, nPostCpu, 0);
}

/* Load balance on a skewed index with small batches (Zhou et al. (GENIE) Fig. 12). */
static void load_balance_study(workload *w)
{
    genie_queries *q;
    genie_queries_new(&q);
    for (size_t nq = 1; nq <= 1024; nq *= 4) {
        genie_queries_clear(q);
        uint64_t nPosting = 0;
        for (size_t i = 0; i < nq; i++) {
            genie_queries_add(q, w->aItem + i * w->m, w->m, 0);
            nPosting += w->aQueryPosting[i];
        }
        genie_index_info info;
        genie_index_get_info(w->idx, &info);
        for (int lb = 0; lb <= 1; lb++) {
            char zName[96];
            double t = time_search(w, q, GENIE_BACKEND_CUDA_CPQ_PAPER, lb);
            snprintf(zName, sizeof zName, "c-PQ paper layout, %zu queries, load balance %s", nq, lb ? "on" : "off");
            row(w, zName, t, nq, nPosting, cpq_bytes_per_query(info.n_objects, w->bound));
        }
        char zName[96];
        snprintf(zName, sizeof zName, "c-PQ tiles, %zu queries", nq);
        row(w, zName, time_search(w, q, GENIE_BACKEND_CUDA, 0), nq, nPosting, tile_bytes_per_query(info.n_objects));
    }
    genie_queries_free(q);
}

static void workload_free(workload *w)
{
    genie_queries_free(w->q);
    genie_queries_free(w->qCpu);
    genie_index_close(w->idx);
    free(w->aItem);
    free(w->aQueryPosting);
    memset(w, 0, sizeof *w);
}

int main(int argc, char **argv)
{
    int quick = 0;
    const char *zFortunes = NULL, *zOnly = "";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--fortunes") && i + 1 < argc)
            zFortunes = argv[++i];
        else if (!strcmp(argv[i], "--tiles-only"))
            g_tilesOnly = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            zOnly = argv[++i];
        else if (!strcmp(argv[i], "--tile-variants") && i + 1 < argc && parse_variants(argv[i + 1]))
            i++;
        else {
            fprintf(stderr, "usage: genie_bench [--quick] [--fortunes DIR] [--tiles-only] [--tile-variants "
                            "16,32,16agg,32agg] [--only TEXT]\n");
            return 2;
        }
    }
    if (!genie_cuda_available()) {
        fprintf(stderr, "genie_bench: no usable CUDA device\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    g_bandwidth = copy_bandwidth();
    printf("# device %s, %d SMs; copy bandwidth %.0f GB/s (read + write); bound %.0f G postings/s; %ld host cores\n",
           prop.name, prop.multiProcessorCount, g_bandwidth / 1e9, g_bandwidth / 4 / 1e9, sysconf(_SC_NPROCESSORS_ONLN));
    printf("# k = %d, %d queries per batch (cpu: first %d), median of 3 after a warm-up\n", BENCH_K, BENCH_QUERIES,
           CPU_QUERIES);
    static const struct {
        uint32_t n, m, D;
        double skew;
    } aShape[] = {{1000000, 32, 4096, 1.0}, {1000000, 128, 4096, 1.0}, {10000000, 8, 4096, 1.0},
                  {1000000, 256, 4096, 1.0}, {4000000, 32, 4096, 1.0}};
    size_t nShape = quick ? 1 : sizeof aShape / sizeof *aShape;
    for (size_t i = 0; i < nShape; i++) {
        workload w;
        memset(&w, 0, sizeof w);
        uint32_t n = quick ? aShape[i].n / 10 : aShape[i].n;
        if (!strstr(lsh_name(w.zName, sizeof w.zName, n, aShape[i].m, aShape[i].D, aShape[i].skew), zOnly))
            continue;
        lsh_workload(&w, n, aShape[i].m, aShape[i].D, aShape[i].skew, i + 1);
        run_workload(&w, i == 0);
        workload_free(&w);
    }
    {
        workload w;
        memset(&w, 0, sizeof w);
        uint32_t n = quick ? 100000 : 1000000;
        if (strstr(lsh_name(w.zName, sizeof w.zName, n, 32, 4096, 1.5), zOnly)) {
            lsh_workload(&w, n, 32, 4096, 1.5, 99);
            run_workload(&w, 0);
            if (!g_tilesOnly)
                load_balance_study(&w);
            workload_free(&w);
        }
    }
    if (zFortunes && strstr("fortunes", zOnly)) {
        workload w;
        memset(&w, 0, sizeof w);
        if (fortunes_workload(&w, zFortunes))
            run_workload(&w, 1);
        workload_free(&w);
    }
    printf("\n| workload | method | queries/s | G postings/s | of bandwidth bound | GPU MiB per query |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n%s", g_zTable);
    printf("\nWhere the time goes (ms, one search of the batch; outside = genie_search minus the CUDA backend: "
           "count bounds, result assembly):\n\n");
    printf("| workload | method | genie_search | outside | plan | stage | upload | count kernel | count kernel G "
           "postings/s | count kernel of bound | merge kernel | download | collect | batches |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n%s", g_zPhase);
    return 0;
}
