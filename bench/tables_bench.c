/*
 * genie_tables_bench: the Zhou et al. (GENIE) Table I profile of the table front-end
 * on real tables, and a CPU vs CUDA identity check.
 *
 *   genie_tables_bench [-k K] [-b BACKEND,...] [-o DIR] DATA_DIR
 *
 * DATA_DIR holds what scripts/fetch-tables writes: cities.csv (indexed as
 * name, country, admin1:cat, admin2:cat, lat, lng) with cities_q.csv, and
 * credit-g.arff (all 21 columns) with credit_q.csv; 1,024 query rows
 * each, 1,024 bins, radius 50 bins (the paper's Adult setting), k = 100.
 *
 * Stages, in seconds (public API only, so the GPU's inner stages cannot be
 * told apart; what each figure holds is stated):
 *   index-build     genie_table_build: read, bin, encode, write (CPU);
 *   query-convert   reading the 1,024 query rows into items (CPU);
 *   index-transfer  first 1-query search minus a second one: uploading
 *                   the index to the GPU plus one-time setup ('-' on CPU);
 *   query           one batch of 1,024 queries, median of 3 runs: query
 *                   transfer + match + select, results back on the host.
 * Every backend's answers are compared with the first backend's (cpu by
 * default), query by query, hit by hit; any difference, or a backend that
 * could not run (no GPU), is printed and the exit status is 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/genie.h"
#include "genie/table.h"
#include "util/clock.h"

#define MAX_BACKENDS 4

static void die(const char *zWhat, genie_status rc)
{
    fprintf(stderr, "genie_tables_bench: %s: %s\n", zWhat, genie_last_error()[0] ? genie_last_error() : genie_strerror(rc));
    exit(2);
}

#define TRY(what, expr)                      \
    do {                                     \
        genie_status rc_ = (expr);           \
        if (rc_ != GENIE_OK)                 \
            die(what, rc_);                  \
    } while (0)

typedef struct dataset {
    const char *zName, *zTable, *zQueries, *zColumns;
} dataset;

typedef struct profile {
    double build, convert, transfer[MAX_BACKENDS], query[MAX_BACKENDS];
    int ran[MAX_BACKENDS];
    size_t nQuery, nMismatch, nSkipped;
    uint64_t nObjects, nPostings, nHits;
} profile;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static genie_results *timed_search(const genie_index *idx, const genie_queries *q, genie_backend b, uint32_t k,
                                   double *pSeconds)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = b;
    opt.k = k;
    genie_results *r;
    double t0 = util_now();
    TRY("search", genie_search(idx, q, &opt, &r));
    *pSeconds = util_now() - t0;
    return r;
}

/* Compare @p r with the reference @p ref; print the first differences. */
static size_t compare(const genie_results *ref, const genie_results *r, const char *zData, const char *zBackend)
{
    size_t nBad = 0;
    for (size_t q = 0; q < genie_results_queries(ref); q++) {
        size_t n1, n2;
        const genie_hit *a = genie_results_get(ref, q, &n1), *b = genie_results_get(r, q, &n2);
        int same = n1 == n2;
        for (size_t i = 0; same && i < n1; i++)
            same = a[i].object == b[i].object && a[i].count == b[i].count;
        if (!same && nBad++ < 5)
            fprintf(stderr, "MISMATCH %s query %zu: %s differs from the first backend (%zu vs %zu hits)\n", zData,
                    q + 1, zBackend, n2, n1);
    }
    return nBad;
}

static void run_dataset(const char *zDir, const char *zOutDir, const dataset *d, const genie_backend *aBackend,
                        int nBackend, uint32_t k, profile *p)
{
    char zTable[2048], zQueries[2048], zIndex[2048];
    snprintf(zTable, sizeof zTable, "%s/%s", zDir, d->zTable);
    snprintf(zQueries, sizeof zQueries, "%s/%s", zDir, d->zQueries);
    snprintf(zIndex, sizeof zIndex, "%s/%s.genie", zOutDir, d->zName);
    genie_table_options topt = {.bins = 1024, .columns = d->zColumns};
    double t0 = util_now();
    TRY("build", genie_table_build(zTable, &topt, NULL, zIndex));
    p->build = util_now() - t0;

    genie_index *idx;
    TRY("open", genie_index_open(zIndex, &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    p->nObjects = info.n_objects;
    p->nPostings = info.n_postings;
    genie_table *t;
    TRY("table", genie_table_open(idx, &t));
    genie_queries *q, *q1;
    TRY("queries", genie_queries_new(&q));
    TRY("queries", genie_queries_new(&q1));
    genie_table_reader *r;
    t0 = util_now();
    TRY("read queries", genie_table_reader_open(&r, t, zQueries));
    TRY("read queries", genie_table_reader_read(r, q, 1u << 20, 0, &p->nQuery));
    p->convert = util_now() - t0;
    genie_table_reader_close(r);
    TRY("read queries", genie_table_reader_open(&r, t, zQueries));
    size_t one;
    TRY("read queries", genie_table_reader_read(r, q1, 1, 0, &one));
    genie_table_reader_close(r);

    genie_results *ref = NULL;
    for (int b = 0; b < nBackend; b++) {
        if ((aBackend[b] == GENIE_BACKEND_CUDA || aBackend[b] == GENIE_BACKEND_CUDA_SPQ) && !genie_cuda_available()) {
            fprintf(stderr, "genie_tables_bench: %s: no usable GPU, skipped\n", genie_backend_name(aBackend[b]));
            p->nSkipped++;
            continue;
        }
        double tFirst, tSecond, aRun[3];
        genie_results_free(timed_search(idx, q1, aBackend[b], k, &tFirst));
        genie_results_free(timed_search(idx, q1, aBackend[b], k, &tSecond));
        p->transfer[b] = tFirst - tSecond;
        genie_results *res = NULL;
        for (int i = 0; i < 3; i++) {
            genie_results *x = timed_search(idx, q, aBackend[b], k, &aRun[i]);
            if (res)
                genie_results_free(x);
            else
                res = x;
        }
        qsort(aRun, 3, sizeof *aRun, cmp_double);
        p->query[b] = aRun[1];
        p->ran[b] = 1;
        if (!ref) {
            ref = res;
            for (size_t i = 0; i < genie_results_queries(ref); i++) {
                size_t n;
                genie_results_get(ref, i, &n);
                p->nHits += n;
            }
        } else {
            p->nMismatch += compare(ref, res, d->zName, genie_backend_name(aBackend[b]));
            genie_results_free(res);
        }
    }
    genie_results_free(ref);
    genie_queries_free(q);
    genie_queries_free(q1);
    genie_table_free(t);
    genie_index_close(idx);
}

static int parse_backends(char *z, genie_backend *a)
{
    int n = 0;
    for (char *tok = strtok(z, ","); tok && n < MAX_BACKENDS; tok = strtok(NULL, ","))
        if (genie_backend_parse(tok, &a[n++]) != GENIE_OK)
            return -1;
    return n;
}

int main(int argc, char **argv)
{
    uint32_t k = 100;
    const char *zOutDir = "/tmp";
    char zBackends[256] = "cpu,cuda";
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        if (strcmp(argv[i], "-k") == 0)
            k = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "-b") == 0)
            snprintf(zBackends, sizeof zBackends, "%s", argv[i + 1]);
        else if (strcmp(argv[i], "-o") == 0)
            zOutDir = argv[i + 1];
        else
            break;
    }
    genie_backend aBackend[MAX_BACKENDS];
    int nBackend = parse_backends(zBackends, aBackend);
    if (i + 1 != argc || k == 0 || nBackend <= 0) {
        fprintf(stderr, "usage: genie_tables_bench [-k K] [-b BACKEND,...] [-o DIR] DATA_DIR\n");
        return 2;
    }
    static const dataset aData[] = {
        {"cities", "cities.csv", "cities_q.csv", "name,country,admin1:cat,admin2:cat,lat,lng"},
        {"credit-g", "credit-g.arff", "credit_q.csv", NULL}};
    profile aProf[2];
    memset(aProf, 0, sizeof aProf);
    for (int d = 0; d < 2; d++)
        run_dataset(argv[i], zOutDir, &aData[d], aBackend, nBackend, k, &aProf[d]);

    printf("\n| stage (s), %u queries, k = %u | ", (unsigned)aProf[0].nQuery, k);
    for (int d = 0; d < 2; d++)
        for (int b = 0; b < nBackend; b++)
            printf("%s %s | ", aData[d].zName, genie_backend_name(aBackend[b]));
    printf("\n|---|");
    for (int c = 0; c < 2 * nBackend; c++)
        printf("---:|");
    printf("\n");
    static const char *azStage[] = {"index-build (CPU)", "query-convert (CPU)", "index-transfer + setup", "query (transfer+match+select)"};
    for (int s = 0; s < 4; s++) {
        printf("| %s | ", azStage[s]);
        for (int d = 0; d < 2; d++)
            for (int b = 0; b < nBackend; b++) {
                const profile *p = &aProf[d];
                double v = s == 0 ? p->build : s == 1 ? p->convert : s == 2 ? p->transfer[b] : p->query[b];
                if (!p->ran[b] && s >= 2)
                    printf("skipped | ");
                else if (s == 2 && aBackend[b] != GENIE_BACKEND_CUDA && aBackend[b] != GENIE_BACKEND_CUDA_SPQ)
                    printf("- | ");
                else
                    printf("%.4f | ", v);
            }
        printf("\n");
    }
    size_t nMismatch = 0;
    for (int d = 0; d < 2; d++) {
        printf("%s: %llu rows, %llu postings, %zu queries, %llu hits; %zu queries differ between backends"
               "%s\n", aData[d].zName, (unsigned long long)aProf[d].nObjects, (unsigned long long)aProf[d].nPostings,
               aProf[d].nQuery, (unsigned long long)aProf[d].nHits, aProf[d].nMismatch,
               aProf[d].nSkipped ? " (some backends skipped: not compared)" : "");
        nMismatch += aProf[d].nMismatch + aProf[d].nSkipped;
    }
    return nMismatch ? 1 : 0;
}
