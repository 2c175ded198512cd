/*
 * gpu_compare: CUDA (the default tile layout; the paper's c-PQ layout, with
 * and without load balance) and GEN-SPQ against the CPU backend, byte for
 * byte (ids and counts, ties included).
 *
 *   gpu_compare [--cases N] [--seed S] [--small] [--fortunes DIR] [--seconds T]
 *
 * Each case draws a random index (object count, keywords per object,
 * Zipf-skewed or uniform keyword choice, one "very long list" keyword in
 * most objects, small vocabularies for many exact ties, a random sublist
 * length), a random batch (1 to 10,000 queries; single keywords and
 * ranges; weights 1 or 1..255; min counts; queries that match nothing;
 * empty queries) and a k from 1 to beyond the object count, and sometimes
 * a tiny GPU memory budget (many batches) or tiny c-PQ hash tables (the
 * overflow-and-rerun path).  Three cases in four also run the tile layout
 * in one of its other kernel variants (32-bit postings, warp-aggregated
 * increments, both: tile_testing_set_variant).  --small keeps every case tiny, for
 * compute-sanitizer (a quarter of them still span 2-3 tiles of the tile
 * layout).  --fortunes DIR adds the fortune files of DIR as a
 * text index queried with its own documents.  --seconds T starts no new
 * random case after T seconds (the fortunes case still runs), for runs
 * with a time limit; the summary says how many cases ran.
 *
 * Prints one line per failure and "N passed, N failed" last; exit status 1
 * on any failure.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/cuda/common/cuda_testing.h"
#include "genie/genie.h"
#include "genie/text.h"
#include "util/clock.h"

static unsigned gPassed, gFailed;
static double gSeconds[6]; /* per backend, summed over all searches */

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static uint32_t below(uint64_t *s, uint32_t n)
{
    return n ? (uint32_t)(rnd(s) % n) : 0;
}

static double unit(uint64_t *s)
{
    return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/* Keyword drawn from 0..V-1 with P(i) ~ 1/(i+1)^skew (skew 0: uniform). */
static uint32_t draw_keyword(uint64_t *s, uint32_t V, double skew)
{
    if (skew <= 0)
        return below(s, V);
    /* Inverse of the continuous approximation of the Zipf CDF. */
    double u = unit(s);
    double x;
    if (fabs(skew - 1.0) < 1e-9)
        x = pow((double)V + 1, u) - 1;
    else
        x = pow(u * (pow((double)V + 1, 1 - skew) - 1) + 1, 1 / (1 - skew)) - 1;
    uint32_t k = (uint32_t)x;
    return k < V ? k : V - 1;
}

static void fail(const char *zCase, const char *fmt, const char *zDetail)
{
    gFailed++;
    printf("FAIL %s: %s %s\n", zCase, fmt, zDetail ? zDetail : "");
    fflush(stdout);
}

/* Run @p q on @p idx with @p backend; NULL (and a failure) on error. */
static genie_results *search(const genie_index *idx, const genie_queries *q, genie_backend backend, uint32_t k,
                             int loadBalance, uint64_t gpuMemory, const char *zCase)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = backend;
    opt.k = k;
    opt.load_balance = loadBalance;
    opt.gpu_memory = gpuMemory;
    genie_results *r = NULL;
    double t0 = util_now();
    genie_status rc = genie_search(idx, q, &opt, &r);
    gSeconds[backend] += util_now() - t0;
    if (rc != GENIE_OK) {
        char z[512];
        snprintf(z, sizeof z, "backend %s: %s: %s", genie_backend_name(backend), genie_strerror(rc),
                 genie_last_error());
        fail(zCase, "search failed", z);
        return NULL;
    }
    return r;
}

static void compare(const genie_results *ref, const genie_results *got, const char *zCase, const char *zWhat)
{
    if (!ref || !got)
        return;
    size_t nq = genie_results_queries(ref);
    if (genie_results_queries(got) != nq) {
        fail(zCase, zWhat, "different query counts");
        return;
    }
    for (size_t i = 0; i < nq; i++) {
        size_t na, nb;
        const genie_hit *a = genie_results_get(ref, i, &na);
        const genie_hit *b = genie_results_get(got, i, &nb);
        if (na != nb || (na && memcmp(a, b, na * sizeof *a) != 0)) {
            char z[256];
            size_t j = 0;
            while (j < na && j < nb && a[j].object == b[j].object && a[j].count == b[j].count)
                j++;
            snprintf(z, sizeof z, "query %zu: cpu %zu hits, gpu %zu; first difference at %zu: cpu %u:%u gpu %u:%u", i,
                     na, nb, j, j < na ? a[j].object : 0, j < na ? a[j].count : 0, j < nb ? b[j].object : 0,
                     j < nb ? b[j].count : 0);
            fail(zCase, zWhat, z);
            return;
        }
    }
    gPassed++;
}

/* The tile layout's kernel variants (tile_testing_set_variant): 32-bit ids, warp aggregation. */
static const char *const azVariant[] = {"cuda", "cuda (32-bit postings)", "cuda (warp aggregation)",
                                        "cuda (32-bit postings, warp aggregation)"};

/*
 * All GPU methods against the CPU for one index and batch; the tile layout
 * in its default variant and, when @p variant is not 0, in that one too.
 */
static void compare_all(const genie_index *idx, const genie_queries *q, uint32_t k, uint64_t gpuMemory,
                        const char *zCase, unsigned variant)
{
    genie_results *ref = search(idx, q, GENIE_BACKEND_CPU, k, 0, 0, zCase);
    genie_results *r;
    r = search(idx, q, GENIE_BACKEND_CUDA, k, 0, gpuMemory, zCase);
    compare(ref, r, zCase, "cuda");
    genie_results_free(r);
    if (variant) {
        tile_testing_set_variant(variant & 1, variant >> 1);
        r = search(idx, q, GENIE_BACKEND_CUDA, k, 0, gpuMemory, zCase);
        compare(ref, r, zCase, azVariant[variant]);
        genie_results_free(r);
        tile_testing_set_variant(0, 0);
    }
    r = search(idx, q, GENIE_BACKEND_CUDA_CPQ_PAPER, k, 0, gpuMemory, zCase);
    compare(ref, r, zCase, "cuda-cpq-paper");
    genie_results_free(r);
    r = search(idx, q, GENIE_BACKEND_CUDA_CPQ_PAPER, k, 1, gpuMemory, zCase);
    compare(ref, r, zCase, "cuda-cpq-paper --load-balance");
    genie_results_free(r);
    r = search(idx, q, GENIE_BACKEND_CUDA_SPQ, k, 0, gpuMemory, zCase);
    compare(ref, r, zCase, "cuda-spq");
    genie_results_free(r);
    genie_results_free(ref);
}

static genie_index *random_index(uint64_t *s, int small, const char *zPath, uint32_t *pV)
{
    /* More than 32,768 objects: several tiles of the tile layout. */
    uint32_t n = small ? (below(s, 4) == 0 ? 30000 + below(s, 45000) : 1 + below(s, 300))
                       : (below(s, 5) == 0 ? 20000 + below(s, 200000) : 1 + below(s, 20000));
    uint32_t V = 1 + (below(s, 3) == 0 ? below(s, 8) : below(s, small ? 200 : 5000));
    uint32_t maxLen = below(s, 4) == 0 || (small && n > 300) ? 1 + below(s, 4) : 1 + below(s, 64);
    double skew = below(s, 3) == 0 ? 0.0 : 0.5 + unit(s);
    int longList = below(s, 2);
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.sublist_length = below(s, 2) ? 1 + below(s, 64) : 4096;
    genie_builder *b;
    if (genie_builder_new(&b, &opt) != GENIE_OK)
        return NULL;
    uint32_t aKw[80];
    for (uint32_t o = 0; o < n; o++) {
        uint32_t m = below(s, maxLen + 1);
        for (uint32_t j = 0; j < m; j++)
            aKw[j] = draw_keyword(s, V, skew);
        if (longList && below(s, 10) != 0)
            aKw[m++] = V; /* one list holding most objects */
        genie_object obj = {aKw, m, 0, 0, NULL, 0};
        if (genie_builder_add(b, &obj) != GENIE_OK) {
            genie_builder_free(b);
            return NULL;
        }
    }
    genie_index *idx = NULL;
    if (genie_builder_write(b, zPath) != GENIE_OK || genie_index_open(zPath, &idx) != GENIE_OK)
        idx = NULL;
    genie_builder_free(b);
    *pV = V + 1;
    return idx;
}

static genie_queries *random_queries(uint64_t *s, int small, uint32_t V)
{
    genie_queries *q;
    if (genie_queries_new(&q) != GENIE_OK)
        return NULL;
    uint32_t r = below(s, 20);
    uint32_t nq = small ? 1 + below(s, 8) : r == 0 ? 1 + below(s, 10000) : r < 4 ? 1 : 1 + below(s, 300);
    int weighted = below(s, 2), ranges = below(s, 3) == 0;
    for (uint32_t i = 0; i < nq; i++) {
        genie_item aItem[64];
        uint32_t nItem = below(s, 20) == 0 ? 0 : 1 + below(s, small ? 8 : 64);
        for (uint32_t j = 0; j < nItem; j++) {
            uint32_t lo = below(s, 12) == 0 ? V + below(s, 100) : below(s, V + 1); /* sometimes nothing */
            uint32_t hi = ranges ? lo + below(s, 1 + V / 4) : lo;
            aItem[j].lo = lo;
            aItem[j].hi = hi;
            aItem[j].weight = weighted ? 1 + below(s, 255) : 1;
        }
        uint32_t minCount = below(s, 5) == 0 ? below(s, 6) : 0;
        if (genie_queries_add(q, aItem, nItem, minCount) != GENIE_OK) {
            genie_queries_free(q);
            return NULL;
        }
    }
    return q;
}

static uint32_t random_k(uint64_t *s, uint64_t nObj)
{
    static const uint32_t aK[] = {1, 2, 3, 5, 10, 32, 100, 256, 1000, 1024, 1500, 4096, 5000};
    uint32_t r = below(s, 16);
    if (r < sizeof aK / sizeof *aK)
        return aK[r];
    return (uint32_t)(nObj + below(s, 10));
}

static void random_case(uint64_t seed, int small, const char *zDir)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    char zPath[512], zCase[64];
    snprintf(zPath, sizeof zPath, "%s/case.genie", zDir);
    snprintf(zCase, sizeof zCase, "seed %llu", (unsigned long long)seed);
    uint32_t V = 0;
    genie_index *idx = random_index(&s, small, zPath, &V);
    genie_queries *q = idx ? random_queries(&s, small, V) : NULL;
    if (!idx || !q) {
        fail(zCase, "setup failed:", genie_last_error());
        genie_queries_free(q);
        genie_index_close(idx);
        return;
    }
    genie_index_info info;
    genie_index_get_info(idx, &info);
    uint32_t k = random_k(&s, info.n_objects);
    uint32_t r = below(&s, 10);
    /* A tiny budget (many batches) where one query surely fits in it. */
    int tiny = r == 0 && info.n_objects <= 20001 && k <= 5000;
    uint64_t gpuMemory = tiny ? (uint64_t)(1 + below(&s, 64)) << 20 : 0;
    cpq_testing_set_slots(r == 1 ? 1 + below(&s, 64) : 0); /* overflow, rerun */
    unsigned variant = below(&s, 4);
    double t0 = util_now();
    compare_all(idx, q, k, gpuMemory, zCase, variant);
    if (util_now() - t0 > 2.0)
        printf("slow: %s: %.1f s, %llu objects, %llu postings, %zu queries, k %u\n", zCase, util_now() - t0,
               (unsigned long long)info.n_objects, (unsigned long long)info.n_postings, genie_queries_count(q), k);
    cpq_testing_set_slots(0);
    genie_queries_free(q);
    genie_index_close(idx);
}

/* The fortune files of @p zSrc as one text index, queried with its own documents. */
static void fortunes_case(const char *zSrc, const char *zDir)
{
    const char *azIn[256];
    char *azOwned[256];
    size_t nIn = 0;
    DIR *dir = opendir(zSrc);
    struct dirent *e;
    while (dir && (e = readdir(dir)) && nIn < 256) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || (len > 4 && (!strcmp(e->d_name + len - 4, ".dat") || !strcmp(e->d_name + len - 3, ".u8"))))
            continue;
        azOwned[nIn] = malloc(strlen(zSrc) + len + 2);
        sprintf(azOwned[nIn], "%s/%s", zSrc, e->d_name);
        azIn[nIn] = azOwned[nIn];
        nIn++;
    }
    if (dir)
        closedir(dir);
    if (!nIn) {
        fail("fortunes", "no fortune files in", zSrc);
        return;
    }
    char zPath[512];
    snprintf(zPath, sizeof zPath, "%s/fortunes.genie", zDir);
    genie_input_options in;
    memset(&in, 0, sizeof in);
    in.type = GENIE_TYPE_TEXT;
    in.delimiter = "%";
    in.store_records = 1;
    genie_index *idx = NULL;
    genie_queries *q = NULL;
    if (genie_build_files(azIn, nIn, &in, NULL, zPath) != GENIE_OK || genie_index_open(zPath, &idx) != GENIE_OK ||
        genie_queries_new(&q) != GENIE_OK) {
        fail("fortunes", "setup failed:", genie_last_error());
        goto done;
    }
    genie_index_info info;
    genie_index_get_info(idx, &info);
    printf("fortunes: %zu files, %llu documents, %llu postings, %llu words\n", nIn,
           (unsigned long long)info.n_objects, (unsigned long long)info.n_postings,
           (unsigned long long)info.n_words);
    for (uint32_t o = 0; o < info.n_objects; o += 3) {
        const char *z;
        size_t len;
        if (genie_index_record(idx, o, &z, &len) == GENIE_OK)
            genie_queries_add_text(q, idx, z, len, 0);
    }
    static const uint32_t aK[] = {1, 10, 100, 1024};
    for (size_t j = 0; j < sizeof aK / sizeof *aK; j++) {
        char zCase[64];
        snprintf(zCase, sizeof zCase, "fortunes k=%u", aK[j]);
        compare_all(idx, q, aK[j], 0, zCase, j % 4);
    }
done:
    genie_queries_free(q);
    genie_index_close(idx);
    for (size_t i = 0; i < nIn; i++)
        free(azOwned[i]);
}

int main(int argc, char **argv)
{
    unsigned nCase = 1000;
    uint64_t seed = 1;
    int small = 0;
    const char *zFortunes = NULL;
    double seconds = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cases") && i + 1 < argc)
            nCase = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--small"))
            small = 1;
        else if (!strcmp(argv[i], "--fortunes") && i + 1 < argc)
            zFortunes = argv[++i];
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = strtod(argv[++i], NULL);
        else {
            fprintf(stderr, "usage: gpu_compare [--cases N] [--seed S] [--small] [--fortunes DIR] [--seconds T]\n");
            return 2;
        }
    }
    if (!genie_cuda_available()) {
        fprintf(stderr, "gpu_compare: no usable CUDA device\n");
        return 1;
    }
    char zDir[] = "/tmp/gpu_compare.XXXXXX";
    if (!mkdtemp(zDir)) {
        perror("mkdtemp");
        return 1;
    }
    double tStart = util_now();
    unsigned nRan = 0;
    while (nRan < nCase && !(seconds > 0 && util_now() - tStart > seconds))
        random_case(seed + nRan++, small, zDir);
    if (nRan < nCase)
        printf("stopped after %u of %u cases (seeds %llu-%llu): --seconds %.0f\n", nRan, nCase,
               (unsigned long long)seed, (unsigned long long)(seed + nRan - 1), seconds);
    if (zFortunes)
        fortunes_case(zFortunes, zDir);
    char zFile[600];
    snprintf(zFile, sizeof zFile, "%s/case.genie", zDir);
    unlink(zFile);
    snprintf(zFile, sizeof zFile, "%s/fortunes.genie", zDir);
    unlink(zFile);
    rmdir(zDir);
    printf("seconds searching: cpu %.1f, cuda %.1f, cuda-cpq-paper %.1f, cuda-spq %.1f\n", gSeconds[GENIE_BACKEND_CPU],
           gSeconds[GENIE_BACKEND_CUDA], gSeconds[GENIE_BACKEND_CUDA_CPQ_PAPER], gSeconds[GENIE_BACKEND_CUDA_SPQ]);
    printf("%u passed, %u failed\n", gPassed, gFailed);
    return gFailed ? 1 : 0;
}
