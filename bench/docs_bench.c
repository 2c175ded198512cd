/*
 * docs_bench: throughput of the CPU engine of the docs index type and the
 * share of postings that early termination reads, against exhaustive
 * evaluation, for several k (Wang et al., "Efficient GPU-based Query
 * Processing with Pruned List Caching in Search Engines", section 4.4
 * compares k = 10, 100, 1000).  Every early-terminated answer is checked
 * against the exhaustive one; a difference fails the run.
 *
 * Usage: docs_bench INDEX QUERIES [-k K]... [-j THREADS] [--repeat R] [--or]
 *        docs_bench INDEX QUERIES --cuda [-k K]... [-j THREADS] [--repeat R]
 *                   [--gpu-memory BYTES] [--cache-fraction F]...
 *                   [--buffer BYTES --cache-share P...]
 *                   [--train TRAIN [[--lambda L] --policy vfb|qtf|qtfdf]...]
 * Prints one markdown table row per (k, threads) or, with --cuda, per
 * (k, policy, cache size): the CPU engine on all threads against the GPU
 * engine (Wang et al. 4.2-4.4, Figures 6-8), plus per k one GPU run in
 * exhaustive mode, each GPU row with where its time went (stage by stage:
 * genie_docs_stats), then the postings the CPU engine read with and
 * without early termination.  Timed is the search call alone on the open index,
 * the best of --repeat calls, for the CPU engine (on -j threads: all
 * cores by default) as for the GPU.  Every answer is checked against
 * exhaustive CPU evaluation; the last line says whether all were equal
 * (exit status 1 when not).  A --policy vfb takes the --lambda given
 * before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "genie/docs.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *read_all(const char *path, size_t *pn)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *a = malloc(cap);
    size_t got;
    while (a && (got = fread(a + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *b = realloc(a, cap *= 2);
            if (!b) {
                free(a);
                a = NULL;
            }
            a = b;
        }
    }
    fclose(f);
    *pn = n;
    return a;
}

static int same(const genie_docs_results *a, const genie_docs_results *b)
{
    for (size_t q = 0; q < genie_docs_results_queries(a); q++) {
        size_t na, nb;
        const genie_docs_hit *ha = genie_docs_results_get(a, q, &na);
        const genie_docs_hit *hb = genie_docs_results_get(b, q, &nb);
        if (na != nb)
            return 0;
        for (size_t i = 0; i < na; i++)
            if (ha[i].doc != hb[i].doc || ha[i].score != hb[i].score)
                return 0;
    }
    return 1;
}

/* The best of @p repeat searches (timed: the call alone, on the open
 * index); its results, whose stats go with the rate. */
static genie_docs_results *run(const genie_docs *d, const char **az, const size_t *an, size_t n,
                               const genie_docs_options *opt, int repeat, double *pQps)
{
    genie_docs_results *best = NULL;
    double bestQps = 0;
    for (int i = 0; i < repeat; i++) {
        genie_docs_results *r;
        double t0 = now();
        if (genie_docs_search(d, az, an, n, opt, &r) != GENIE_OK) {
            fprintf(stderr, "docs_bench: %s\n", genie_last_error());
            exit(1);
        }
        double qps = (double)n / (now() - t0);
        if (!best || qps > bestQps) {
            genie_docs_results_free(best);
            best = r;
            bestQps = qps;
        } else {
            genie_docs_results_free(r);
        }
    }
    *pQps = bestQps;
    return best;
}

/* The lines of a file as (pointer, length) pairs into *pzAll. */
static size_t split_lines(const char *path, char **pzAll, const char ***paz, size_t **pan)
{
    size_t nBytes;
    char *zAll = read_all(path, &nBytes);
    if (!zAll) {
        fprintf(stderr, "docs_bench: cannot read %s\n", path);
        exit(1);
    }
    size_t n = 0;
    for (size_t i = 0; i < nBytes; i++)
        n += zAll[i] == '\n';
    const char **az = malloc((n + 1) * sizeof *az);
    size_t *an = malloc((n + 1) * sizeof *an);
    n = 0;
    for (size_t i = 0, s = 0; i < nBytes; i++)
        if (zAll[i] == '\n') {
            az[n] = zAll + s;
            an[n++] = i - s;
            s = i + 1;
        }
    *pzAll = zAll;
    *paz = az;
    *pan = an;
    return n;
}

/* A cache policy to measure: VFB with its lambda, Qtf or QtfDf. */
typedef struct policy_arg {
    genie_docs_policy policy;
    double lambda;
} policy_arg;

typedef struct gpu_args {
    uint64_t gpuMemory, buffer; /* with buffer: aFrac are cache sizes as shares of the index's postings */
    double aFrac[8];
    int nFrac;
    const char *zTrain;
    policy_arg aPolicy[8];
    int nPolicy;
} gpu_args;

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/*
 * Per k: the exhaustive CPU answers (the oracle), the early-terminated CPU
 * engine on all threads, then the GPU engine for every policy and cache
 * size, and once in exhaustive mode; every GPU answer is compared with the
 * oracle.  Prints the table of runs, then per k the postings read.
 */
static int bench_gpu(const genie_docs *d, const char **az, const size_t *an, size_t n, const uint32_t *aK, int nK,
                     unsigned threads, int repeat, const gpu_args *g)
{
    static const char *const azPolicy[] = {"VFB", "Qtf", "QtfDf"};
    genie_docs_plan *aPlan[8] = {NULL};
    int nPolicy = g->zTrain ? g->nPolicy : 1;
    if (g->zTrain) {
        char *zAll;
        const char **azT;
        size_t *anT;
        size_t nT = split_lines(g->zTrain, &zAll, &azT, &anT);
        for (int p = 0; p < nPolicy; p++) {
            double t0 = now();
            if (genie_docs_plan_build(d, azT, anT, nT, 10, g->aPolicy[p].policy, g->aPolicy[p].lambda, &aPlan[p]) !=
                GENIE_OK) {
                fprintf(stderr, "docs_bench: %s\n", genie_last_error());
                return 1;
            }
            fprintf(stderr, "docs_bench: plan %s (lambda %.2f) from %zu training queries in %.2f s\n",
                    azPolicy[g->aPolicy[p].policy], g->aPolicy[p].policy == GENIE_DOCS_VFB ? g->aPolicy[p].lambda : 1.0,
                    nT, now() - t0);
        }
        free(zAll);
        free(azT);
        free(anT);
    }
    genie_docs_info info;
    genie_docs_get_info(d, &info);
    int nChecked = 0, nDiff = 0;
    /* Per k: the oracle and the CPU engine, kept for the GPU runs. */
    genie_docs_results *aEx[8];
    double aQCpu[8];
    char zReads[8][256];
    for (int ki = 0; ki < nK; ki++) {
        genie_docs_options opt = {.k = aK[ki], .mode = GENIE_DOCS_AND, .exhaustive = 1, .threads = threads};
        double qEx;
        aEx[ki] = run(d, az, an, n, &opt, 1, &qEx);
        opt.exhaustive = 0;
        genie_docs_results *cpu = run(d, az, an, n, &opt, repeat, &aQCpu[ki]);
        genie_docs_stats sEx, sCpu;
        genie_docs_results_stats(aEx[ki], &sEx);
        genie_docs_results_stats(cpu, &sCpu);
        nChecked++;
        if (!same(aEx[ki], cpu)) {
            fprintf(stderr, "docs_bench: k=%u: CPU early termination differs from exhaustive\n", aK[ki]);
            nDiff++;
        }
        genie_docs_results_free(cpu);
        snprintf(zReads[ki], sizeof zReads[ki], "| %u | %.1f%% | %.1f%% | %.1f%% | %.0f | %.0f |\n", aK[ki],
                 pct(sEx.postings_read, sEx.postings_total), pct(sCpu.postings_read, sCpu.postings_total),
                 pct(sCpu.stopped_early, n), qEx, aQCpu[ki]);
    }
    printf("GPU rows: the CPU engine (%u threads; 0: all cores) against the GPU engine; then where the GPU "
           "call's time went, ms (genie_docs_stats; host stages on the wall clock, device ones from CUDA "
           "events; batches overlap, so the stages need not add up): CPU ms and GPU ms = the timed calls; "
           "prepare = queries to lists (CPU threads); setup = cache plan, device state, buffers; batch = host "
           "building batches; h2d, kernel = device; wait = host idle for the device; post = finishing "
           "batches on the CPU threads; pipeline = first batch built to last finished.\n\n"
           "| k | policy | lambda | %s | cache MiB | CPU q/s | GPU q/s | speedup | GPU postings read | "
           "post-processed | batches | MiB sent | = exhaustive | CPU ms | GPU ms | prepare | setup | batch | "
           "h2d | kernel | wait | post | pipeline |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
           "| --- | --- | --- | --- | --- | --- |\n",
           threads, g->buffer ? "cache share of index" : "cache fraction");
    /* Policy and cache size outside, k inside: the GPU cache is rebuilt
     * once per (policy, size).  The last pass is the GPU in exhaustive
     * mode with the first policy and cache size. */
    for (int p = 0; p <= nPolicy; p++) {
        int gpuExhaustive = p == nPolicy, pp = gpuExhaustive ? 0 : p;
        for (int fi = 0; fi < (gpuExhaustive ? 1 : g->nFrac); fi++) {
            for (int ki = 0; ki < nK; ki++) {
                genie_docs_options opt = {.k = aK[ki], .mode = GENIE_DOCS_AND, .exhaustive = gpuExhaustive,
                                          .threads = threads, .backend = GENIE_BACKEND_CUDA};
                opt.gpu_memory = g->gpuMemory;
                opt.cache_fraction = g->aFrac[fi];
                if (g->buffer) {
                    /* The cache as a share of the index (8 bytes a posting), the buffer fixed. */
                    double cache = g->aFrac[fi] * 8.0 * (double)info.n_postings + 1.0;
                    opt.gpu_memory = (uint64_t)cache + g->buffer;
                    opt.cache_fraction = cache / (double)opt.gpu_memory;
                }
                opt.plan = aPlan[pp];
                double qGpu;
                genie_docs_results *gpu = run(d, az, an, n, &opt, gpuExhaustive ? 1 : repeat, &qGpu);
                genie_docs_stats st;
                genie_docs_results_stats(gpu, &st);
                int eq = same(aEx[ki], gpu);
                nChecked++;
                if (!eq) {
                    fprintf(stderr, "docs_bench: k=%u policy %d share %.2f%s: GPU answers differ from exhaustive\n",
                            aK[ki], pp, g->aFrac[fi], gpuExhaustive ? " (GPU exhaustive)" : "");
                    nDiff++;
                }
                char zPolicy[64];
                snprintf(zPolicy, sizeof zPolicy, "%s%s", aPlan[pp] ? azPolicy[g->aPolicy[pp].policy] : "all or none",
                         gpuExhaustive ? ", GPU exhaustive" : "");
                char zLambda[16] = "-";
                if (aPlan[pp] && g->aPolicy[pp].policy == GENIE_DOCS_VFB)
                    snprintf(zLambda, sizeof zLambda, "%.2f", g->aPolicy[pp].lambda);
                printf("| %u | %s | %s | %.2f | %.1f | %.0f | %.0f | %.2f | %.1f%% | %.1f%% | %llu | %.1f | %s | "
                       "%.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                       aK[ki], zPolicy, zLambda, g->aFrac[fi], (double)st.cache_bytes / 1048576.0, aQCpu[ki], qGpu,
                       qGpu / aQCpu[ki], pct(st.postings_read, st.postings_total), pct(st.post_processed, n),
                       (unsigned long long)st.batches, (double)st.bytes_moved / 1048576.0, eq ? "yes" : "NO",
                       1e3 * (double)n / aQCpu[ki], 1e3 * (double)n / qGpu, 1e3 * st.prepare_seconds,
                       1e3 * st.setup_seconds, 1e3 * st.batch_seconds, 1e3 * st.h2d_seconds,
                       1e3 * st.kernel_seconds, 1e3 * st.wait_seconds, 1e3 * st.post_seconds,
                       1e3 * st.gpu_seconds);
                fflush(stdout);
                genie_docs_results_free(gpu);
            }
        }
    }
    for (int ki = 0; ki < nK; ki++)
        genie_docs_results_free(aEx[ki]);
    printf("\nPostings read (CPU engine, %u threads; the GPU's are in the table above):\n\n"
           "| k | exhaustive | early-terminated | stopped early | exhaustive q/s | early-terminated q/s |\n"
           "| --- | --- | --- | --- | --- | --- |\n",
           threads);
    for (int ki = 0; ki < nK; ki++)
        fputs(zReads[ki], stdout);
    printf("\n%s: %d of %d runs (CPU early termination, GPU in every policy, cache size and exhaustive mode) "
           "gave the answers of exhaustive CPU evaluation%s\n",
           nDiff ? "DIFFERENCES" : "All equal", nChecked - nDiff, nChecked,
           nDiff ? " (see standard error)" : ", bit for bit (docIDs and scores)");
    for (int p = 0; p < nPolicy; p++)
        genie_docs_plan_free(aPlan[p]);
    return nDiff != 0;
}

int main(int argc, char **argv)
{
    gpu_args g = {.gpuMemory = 0, .buffer = 0, .nFrac = 0, .zTrain = NULL, .nPolicy = 0};
    double lambda = 1.0;
    int cuda = 0;
    const char *zIndex = NULL, *zQueries = NULL;
    uint32_t aK[8];
    int nK = 0, repeat = 3;
    unsigned aThreads[2] = {1, 0};
    genie_docs_mode mode = GENIE_DOCS_AND;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-k") == 0 && i + 1 < argc && nK < 8)
            aK[nK++] = (uint32_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "-j") == 0 && i + 1 < argc)
            aThreads[1] = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--or") == 0)
            mode = GENIE_DOCS_OR;
        else if (strcmp(argv[i], "--cuda") == 0)
            cuda = 1;
        else if (strcmp(argv[i], "--gpu-memory") == 0 && i + 1 < argc)
            g.gpuMemory = strtoull(argv[++i], NULL, 10);
        else if ((strcmp(argv[i], "--cache-fraction") == 0 || strcmp(argv[i], "--cache-share") == 0) && i + 1 < argc &&
                 g.nFrac < 8)
            g.aFrac[g.nFrac++] = atof(argv[++i]);
        else if (strcmp(argv[i], "--buffer") == 0 && i + 1 < argc)
            g.buffer = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--train") == 0 && i + 1 < argc)
            g.zTrain = argv[++i];
        else if (strcmp(argv[i], "--lambda") == 0 && i + 1 < argc)
            lambda = atof(argv[++i]);
        else if (strcmp(argv[i], "--policy") == 0 && i + 1 < argc && g.nPolicy < 8) {
            /* vfb takes the --lambda given before it */
            const char *z = argv[++i];
            g.aPolicy[g.nPolicy].policy =
                strcmp(z, "qtf") == 0 ? GENIE_DOCS_QTF : strcmp(z, "qtfdf") == 0 ? GENIE_DOCS_QTFDF : GENIE_DOCS_VFB;
            g.aPolicy[g.nPolicy++].lambda = lambda;
        }
        else if (!zIndex)
            zIndex = argv[i];
        else
            zQueries = argv[i];
    }
    if (!zIndex || !zQueries || repeat < 1) {
        fprintf(stderr, "usage: docs_bench INDEX QUERIES [-k K]... [-j THREADS] [--repeat R] [--or]\n");
        return 2;
    }
    if (nK == 0) {
        aK[0] = 10, aK[1] = 100, aK[2] = 1000;
        nK = 3;
    }
    char *zAll;
    const char **az;
    size_t *an;
    size_t n = split_lines(zQueries, &zAll, &az, &an);
    genie_index *idx;
    genie_docs *d;
    if (genie_index_open(zIndex, &idx) != GENIE_OK || genie_docs_open(idx, &d) != GENIE_OK) {
        fprintf(stderr, "docs_bench: %s\n", genie_last_error());
        return 1;
    }
    if (cuda) {
        if (g.nFrac == 0)
            g.aFrac[g.nFrac++] = 0.5;
        if (g.nPolicy == 0)
            g.aPolicy[g.nPolicy++] = (policy_arg){GENIE_DOCS_VFB, lambda};
        int rc = bench_gpu(d, az, an, n, aK, nK, aThreads[1], repeat, &g);
        genie_docs_close(d);
        genie_index_close(idx);
        free(az);
        free(an);
        free(zAll);
        return rc;
    }
    printf("| k | threads | exhaustive q/s | early-terminated q/s | speedup | postings read, exhaustive | "
           "postings read, early | stopped early |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    int status = 0;
    for (int ki = 0; ki < nK; ki++) {
        for (int ti = 0; ti < 2; ti++) {
            genie_docs_options opt = {.k = aK[ki], .mode = mode, .exhaustive = 1, .threads = aThreads[ti]};
            double qEx, qEt;
            genie_docs_results *ex = run(d, az, an, n, &opt, repeat, &qEx);
            opt.exhaustive = 0;
            genie_docs_results *et = run(d, az, an, n, &opt, repeat, &qEt);
            genie_docs_stats sEx, sEt;
            genie_docs_results_stats(ex, &sEx);
            genie_docs_results_stats(et, &sEt);
            if (!same(ex, et)) {
                fprintf(stderr, "docs_bench: k=%u: early termination differs from exhaustive\n", aK[ki]);
                status = 1;
            }
            printf("| %u | %s | %.0f | %.0f | %.2f | %.1f%% | %.1f%% | %.1f%% |\n", aK[ki],
                   aThreads[ti] == 1 ? "1" : "all", qEx, qEt, qEt / qEx,
                   100.0 * (double)sEx.postings_read / (double)sEx.postings_total,
                   100.0 * (double)sEt.postings_read / (double)sEt.postings_total,
                   100.0 * (double)sEt.stopped_early / (double)n);
            genie_docs_results_free(ex);
            genie_docs_results_free(et);
        }
    }
    genie_docs_close(d);
    genie_index_close(idx);
    free(az);
    free(an);
    free(zAll);
    return status;
}
