/*
 * docs_bench: throughput of the CPU engine of the docs index type and the
 * share of postings that early termination reads, against exhaustive
 * evaluation, for several k (Wang et al., "Efficient GPU-based Query
 * Processing with Pruned List Caching in Search Engines", section 4.4
 * compares k = 10, 100, 1000).  Every early-terminated answer is checked
 * against the exhaustive one; a difference fails the run.
 *
 * Usage: docs_bench INDEX QUERIES [-k K]... [-j THREADS] [--repeat R] [--or]
 * Prints one markdown table row per (k, threads, mode).
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

static genie_docs_results *run(const genie_docs *d, const char **az, const size_t *an, size_t n,
                               const genie_docs_options *opt, int repeat, double *pQps)
{
    genie_docs_results *r = NULL;
    double best = 0;
    for (int i = 0; i < repeat; i++) {
        genie_docs_results_free(r);
        double t0 = now();
        if (genie_docs_search(d, az, an, n, opt, &r) != GENIE_OK) {
            fprintf(stderr, "docs_bench: %s\n", genie_last_error());
            exit(1);
        }
        double qps = (double)n / (now() - t0);
        best = qps > best ? qps : best;
    }
    *pQps = best;
    return r;
}

int main(int argc, char **argv)
{
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
    size_t nBytes;
    char *zAll = read_all(zQueries, &nBytes);
    if (!zAll) {
        fprintf(stderr, "docs_bench: cannot read %s\n", zQueries);
        return 1;
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
    genie_index *idx;
    genie_docs *d;
    if (genie_index_open(zIndex, &idx) != GENIE_OK || genie_docs_open(idx, &d) != GENIE_OK) {
        fprintf(stderr, "docs_bench: %s\n", genie_last_error());
        return 1;
    }
    printf("| k | threads | exhaustive q/s | early-terminated q/s | speedup | postings read, exhaustive | "
           "postings read, early | stopped early |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    int status = 0;
    for (int ki = 0; ki < nK; ki++) {
        for (int ti = 0; ti < 2; ti++) {
            genie_docs_options opt = {aK[ki], mode, 1, aThreads[ti]};
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
