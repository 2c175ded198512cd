/*
 * metric_bench: the List of Clusters (Gil-Costa, Marin and Reyes,
 * "Parallel query processing on distributed clustering indexes", J.
 * Discrete Algorithms 7, 2009) against brute force: distance computations
 * per query and time, for range search (the paper's 5.1 radii) and k-NN.
 *
 *   metric_bench words FILE [-n QUERIES] [-K 10,50] [-j THREADS] [-b BACKEND] [-C auto|yes|no]
 *   metric_bench vectors FILE|synthetic:N:DIM [-m l2|cosine|l1] [-n QUERIES]
 *                [-K 32] [-j THREADS] [-b BACKEND] [-C auto|yes|no] [-N MAX]
 *
 * words: one word per line (a Debian word list), edit distance, radii 1-4
 *   and k = 1, 10; as in the paper's 5.1, the QUERIES words are drawn at
 *   random and removed from the data before the index is built.
 * vectors: any file genie_vectors_read() reads, or a synthetic set of N
 *   clustered Gaussian vectors (100 clusters); the last QUERIES vectors are
 *   the queries.  Radii retrieving about 0.01%, 0.1% and 1% of the data
 *   (from a sample of distances, as the paper's NASA radii), and k = 1, 10.
 *   -b picks the backend of the LC search (auto: the GPU's batched
 *   distances when usable) and of genie_exact_search, the GEMM-based
 *   brute force shown for k-NN.
 * -C: the center-to-center distances of 3.1 (the paper's Fig. 7 compares
 *   LC with them, "LC-DC", and without); -N: use only the first MAX
 *   vectors of the file (queries included).  k = 16 is the paper's Fig. 8.
 * Every LC answer is compared with brute force (same ids and distances);
 * a line 'compare: identical' or 'compare: MISMATCH' ends each data set.
 * Prints markdown table rows.  Indexes go to $TMPDIR (default /tmp).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "genie/metric.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void die(const char *what, genie_status rc)
{
    fprintf(stderr, "metric_bench: %s: %s (%s)\n", what, genie_strerror(rc), genie_last_error());
    exit(1);
}

typedef struct bench {
    const char *zData;
    genie_index *idx;
    uint64_t n;
    genie_backend backend;
    unsigned threads;
    /* queries: vectors or strings */
    genie_vectors q;
    const char **azQ;
    size_t *anQ;
    size_t nQ;
    int mismatch;
} bench;

static genie_lc_results *run(bench *b, genie_lc_options *o, double *pSec)
{
    genie_lc_results *r;
    double t0 = now();
    genie_status rc = b->q.n ? genie_lc_search_vectors(b->idx, &b->q, o, &r)
                             : genie_lc_search_strings(b->idx, b->azQ, b->anQ, b->nQ, o, &r);
    if (rc != GENIE_OK)
        die("search", rc);
    *pSec = now() - t0;
    return r;
}

static int same(const genie_lc_results *a, const genie_lc_results *b)
{
    for (size_t q = 0; q < genie_lc_results_queries(a); q++) {
        size_t na, nb;
        const genie_lc_hit *x = genie_lc_results_get(a, q, &na), *y = genie_lc_results_get(b, q, &nb);
        if (na != nb)
            return 0;
        for (size_t i = 0; i < na; i++)
            if (x[i].object != y[i].object || x[i].distance != y[i].distance)
                return 0;
    }
    return 1;
}

/* One row: LC against brute force for one query kind. */
static void row(bench *b, uint32_t K, uint32_t k, double radius, const char *zQuery)
{
    genie_lc_options o;
    memset(&o, 0, sizeof o);
    o.k = k;
    o.radius = radius;
    o.threads = b->threads;
    o.backend = b->backend;
    double tLc, tBf;
    genie_lc_results *r = run(b, &o, &tLc);
    genie_search_stats st;
    genie_lc_results_stats(r, &st);
    o.brute_force = 1;
    o.backend = GENIE_BACKEND_CPU;
    genie_lc_results *bf = run(b, &o, &tBf);
    if (!same(r, bf))
        b->mismatch = 1;
    uint64_t nHit = 0;
    for (size_t q = 0; q < genie_lc_results_queries(r); q++) {
        size_t n;
        genie_lc_results_get(r, q, &n);
        nHit += n;
    }
    double perQ = (double)st.verified / (double)b->nQ;
    printf("| %s | %u | %s | %.1f | %.1f | %.1f%% | %s %.3f | %.3f | %.2fx |\n", b->zData, K, zQuery,
           (double)nHit / (double)b->nQ, perQ, 100.0 * perQ / (double)b->n, genie_backend_name(st.backend), tLc, tBf,
           tBf / tLc);
    fflush(stdout);
    genie_lc_results_free(r);
    genie_lc_results_free(bf);
}

static void header(void)
{
    printf("| data | K | query | answers/q | distances/q (LC) | of n | LC s | brute force s (cpu) | speed-up |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
}

static void parse_list(const char *z, uint32_t *a, int *pn)
{
    *pn = 0;
    while (*z && *pn < 8) {
        a[(*pn)++] = (uint32_t)strtoul(z, (char **)&z, 10);
        if (*z == ',')
            z++;
    }
}

static char *read_file(const char *path, size_t *pn)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "metric_bench: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    p[n] = 0;
    *pn = (size_t)n;
    return p;
}

static const char *index_path(const char *zName)
{
    static char z[1024];
    const char *zTmp = getenv("TMPDIR");
    snprintf(z, sizeof z, "%s/%s", zTmp ? zTmp : "/tmp", zName);
    return z;
}

static void bench_words(const char *path, size_t nQ, const uint32_t *aK, int nK, unsigned threads,
                        genie_backend backend, int cd)
{
    size_t nBytes;
    char *p = read_file(path, &nBytes);
    size_t n = 0, cap = 1 << 17;
    const char **az = malloc(cap * sizeof *az);
    size_t *an = malloc(cap * sizeof *an);
    for (char *s = p; s < p + nBytes;) {
        char *e = memchr(s, '\n', (size_t)(p + nBytes - s));
        if (!e)
            e = p + nBytes;
        if (n == cap) {
            cap *= 2;
            az = realloc(az, cap * sizeof *az);
            an = realloc(an, cap * sizeof *an);
        }
        az[n] = s;
        an[n++] = (size_t)(e - s);
        s = e + 1;
    }
    /* Queries: nQ random words, removed from the data (swapped to the end). */
    uint64_t seed = 42;
    for (size_t i = 0; i < nQ; i++) {
        size_t j = (size_t)(rng_next(&seed) % (n - i));
        const char *tz = az[j];
        size_t tn = an[j];
        az[j] = az[n - 1 - i];
        an[j] = an[n - 1 - i];
        az[n - 1 - i] = tz;
        an[n - 1 - i] = tn;
    }
    bench b;
    memset(&b, 0, sizeof b);
    b.zData = "words (edit)";
    b.n = n - nQ;
    b.threads = threads;
    b.backend = backend;
    b.azQ = az + b.n;
    b.anQ = an + b.n;
    b.nQ = nQ;
    printf("words: %s, %llu objects, %zu queries\n\n", path, (unsigned long long)b.n, nQ);
    header();
    for (int ki = 0; ki < nK; ki++) {
        genie_lc_params lp;
        memset(&lp, 0, sizeof lp);
        lp.metric = GENIE_LC_EDIT;
        lp.cluster_size = aK[ki];
        lp.center_distances = cd;
        lp.threads = threads;
        double t0 = now();
        genie_status rc = genie_lc_build_strings(az, an, (size_t)b.n, &lp, NULL, index_path("metric_bench.genie"));
        if (rc != GENIE_OK)
            die("build", rc);
        double tBuild = now() - t0;
        if ((rc = genie_index_open(index_path("metric_bench.genie"), &b.idx)) != GENIE_OK)
            die("open", rc);
        genie_lc_info info;
        genie_lc_index_info(b.idx, &info);
        fprintf(stderr, "built K=%u: %u clusters, center distances %s, %.1f s\n", aK[ki], info.n_clusters,
                info.has_center_distances ? "yes" : "no", tBuild);
        char zq[32];
        for (int r = 1; r <= 4; r++) {
            snprintf(zq, sizeof zq, "range r=%d", r);
            row(&b, aK[ki], 0, r, zq);
        }
        row(&b, aK[ki], 1, 0, "1-NN");
        row(&b, aK[ki], 10, 0, "10-NN");
        row(&b, aK[ki], 16, 0, "16-NN");
        genie_index_close(b.idx);
    }
    printf("\ncompare: %s\n\n", b.mismatch ? "MISMATCH" : "identical");
    free(az);
    free(an);
    free(p);
}

static void synthetic(genie_vectors *v, uint64_t n, uint32_t dim)
{
    uint64_t seed = 7;
    v->n = n;
    v->dim = dim;
    v->data = malloc(n * dim * sizeof(float));
    float *aC = malloc(100 * (size_t)dim * sizeof(float));
    for (size_t i = 0; i < 100 * (size_t)dim; i++)
        aC[i] = (float)(rng_next(&seed) % 20000) / 1000.0f - 10.0f;
    for (uint64_t i = 0; i < n; i++) {
        size_t c = (size_t)(rng_next(&seed) % 100);
        for (uint32_t j = 0; j < dim; j++) {
            /* a sum of four uniforms: roughly Gaussian, sd about 0.6 */
            double g = 0;
            for (int t = 0; t < 4; t++)
                g += (double)(rng_next(&seed) % 1000000) / 1e6 - 0.5;
            v->data[i * dim + j] = aC[c * dim + j] + (float)g;
        }
    }
    free(aC);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench_vectors(const char *zSrc, genie_lc_metric metric, size_t nQ, const uint32_t *aK, int nK,
                          unsigned threads, genie_backend backend, int cd, uint64_t nMax)
{
    genie_vectors all;
    memset(&all, 0, sizeof all);
    unsigned long long sn;
    unsigned sdim;
    if (sscanf(zSrc, "synthetic:%llu:%u", &sn, &sdim) == 2) {
        synthetic(&all, sn, sdim);
    } else {
        genie_status rc = genie_vectors_read(zSrc, &all);
        if (rc != GENIE_OK)
            die(zSrc, rc);
    }
    if (nMax && all.n > nMax)
        all.n = nMax;
    if (all.n <= nQ) {
        fprintf(stderr, "metric_bench: %s has %llu vectors, need more than %zu\n", zSrc, (unsigned long long)all.n,
                nQ);
        exit(1);
    }
    genie_vectors base = {all.n - nQ, all.dim, all.data};
    bench b;
    memset(&b, 0, sizeof b);
    char zData[128];
    snprintf(zData, sizeof zData, "%s (%s)", strchr(zSrc, '/') ? strrchr(zSrc, '/') + 1 : zSrc,
             genie_lc_metric_name(metric));
    b.zData = zData;
    b.n = base.n;
    b.threads = threads;
    b.backend = backend;
    b.q = (genie_vectors){nQ, all.dim, all.data + base.n * all.dim};
    b.nQ = nQ;
    /* Radii from 100,000 sampled query-object distances. */
    static const genie_metric aVm[] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    size_t nS = 100000;
    double *aS = malloc(nS * sizeof *aS);
    uint64_t seed = 3;
    for (size_t i = 0; i < nS; i++) {
        size_t qi = (size_t)(rng_next(&seed) % nQ), oi = (size_t)(rng_next(&seed) % base.n);
        aS[i] = genie_vector_distance(aVm[metric], b.q.data + qi * all.dim, base.data + oi * all.dim, all.dim);
    }
    qsort(aS, nS, sizeof *aS, cmp_double);
    double aR[3] = {aS[nS / 10000], aS[nS / 1000], aS[nS / 100]};
    free(aS);
    printf("vectors: %s, %llu objects of %u dimensions, %zu queries, metric %s\n\n", zSrc, (unsigned long long)b.n,
           all.dim, nQ, genie_lc_metric_name(metric));
    header();
    for (int ki = 0; ki < nK; ki++) {
        genie_lc_params lp;
        memset(&lp, 0, sizeof lp);
        lp.metric = metric;
        lp.cluster_size = aK[ki];
        lp.center_distances = cd;
        lp.threads = threads;
        double t0 = now();
        genie_status rc = genie_lc_build_vectors(&base, &lp, NULL, index_path("metric_bench.genie"));
        if (rc != GENIE_OK)
            die("build", rc);
        double tBuild = now() - t0;
        if ((rc = genie_index_open(index_path("metric_bench.genie"), &b.idx)) != GENIE_OK)
            die("open", rc);
        genie_lc_info info;
        genie_lc_index_info(b.idx, &info);
        fprintf(stderr, "built K=%u: %u clusters, center distances %s, %.1f s\n", aK[ki], info.n_clusters,
                info.has_center_distances ? "yes" : "no", tBuild);
        static const char *const azPct[] = {"0.01%", "0.1%", "1%"};
        char zq[64];
        for (int r = 0; r < 3; r++) {
            snprintf(zq, sizeof zq, "range %s (r=%.4g)", azPct[r], aR[r]);
            row(&b, aK[ki], 0, aR[r], zq);
        }
        row(&b, aK[ki], 1, 0, "1-NN");
        row(&b, aK[ki], 10, 0, "10-NN");
        row(&b, aK[ki], 16, 0, "16-NN");
        genie_index_close(b.idx);
    }
    /* The dense brute force (genie_exact_search: GEMM on a GPU) for k = 10. */
    genie_neighbor *aNb = malloc(nQ * 10 * sizeof *aNb);
    genie_search_stats st;
    static const genie_metric aEm[] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    double t0 = now();
    genie_status rc = genie_exact_search(&base, &b.q, aEm[metric], 10, backend, threads, aNb, &st);
    if (rc != GENIE_OK)
        die("exact search", rc);
    printf("| %s | - | 10-NN, genie_exact_search | 10 | %llu | 100%% | %s %.3f | | |\n", zData,
           (unsigned long long)base.n, genie_backend_name(st.backend), now() - t0);
    printf("\ncompare: %s\n\n", b.mismatch ? "MISMATCH" : "identical");
    free(aNb);
    genie_vectors_free(&all);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: metric_bench words FILE [-n Q] [-K 10,50] [-j T] [-b B] [-C auto|yes|no]\n"
                        "       metric_bench vectors FILE|synthetic:N:DIM [-m l2|cosine|l1] [-n Q] [-K 32] [-j T] "
                        "[-b BACKEND] [-C auto|yes|no] [-N MAX]\n");
        return 2;
    }
    size_t nQ = 500;
    uint32_t aK[8] = {32};
    int nK = 1;
    unsigned threads = 0;
    genie_lc_metric metric = GENIE_LC_L2;
    genie_backend backend = GENIE_BACKEND_AUTO;
    int cd = 0;
    uint64_t nMax = 0;
    if (strcmp(argv[1], "words") == 0) {
        aK[0] = 10;
        aK[1] = 50;
        nK = 2;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-n") == 0)
            nQ = (size_t)strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-K") == 0)
            parse_list(argv[i + 1], aK, &nK);
        else if (strcmp(argv[i], "-j") == 0)
            threads = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-m") == 0 && genie_lc_metric_parse(argv[i + 1], &metric) != GENIE_OK)
            die("-m", GENIE_EINVAL);
        else if (strcmp(argv[i], "-b") == 0 && genie_backend_parse(argv[i + 1], &backend) != GENIE_OK)
            die("-b", GENIE_EINVAL);
        else if (strcmp(argv[i], "-C") == 0)
            cd = strcmp(argv[i + 1], "yes") == 0 ? 1 : strcmp(argv[i + 1], "no") == 0 ? -1 : 0;
        else if (strcmp(argv[i], "-N") == 0)
            nMax = strtoull(argv[i + 1], NULL, 10);
    }
    if (nQ == 0 || nK == 0) {
        fprintf(stderr, "metric_bench: -n and -K need positive values\n");
        return 2;
    }
    if (strcmp(argv[1], "words") == 0)
        bench_words(argv[2], nQ, aK, nK, threads, backend, cd);
    else if (strcmp(argv[1], "vectors") == 0)
        bench_vectors(argv[2], metric, nQ, aK, nK, threads, backend, cd, nMax);
    else {
        fprintf(stderr, "metric_bench: unknown data kind '%s'\n", argv[1]);
        return 2;
    }
    return 0;
}
