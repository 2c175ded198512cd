/*
 * gpu_edit: the CUDA module's batched edit distances (engine/edit.h,
 * src/engine/cuda/edit_gpu.cu) against the CPU's seq_pattern_distance,
 * pair by pair, and the searches that use them against the CPU backend.
 *
 *   gpu_edit [--cases N] [--seed S]     the comparison
 *   gpu_edit --bench WORDS [--queries Q] [--words N]
 *                                       edit distances per second, GPU
 *                                       against every CPU core
 *
 * Comparison: each case draws a base of random strings (lengths 0-300,
 * some longer) over an alphabet of 2-256 bytes, queries (random, near
 * copies of base strings with 10-40% edits, empty, and some longer than
 * the GPU's 512-byte limit, which must come back undone), and bounds
 * (none, small, the true distance and one below it); scans (every object)
 * and explicit pairs; every distance must equal the CPU's
 * min(ed, bound + 1).  Then, on a word-like collection, sequences
 * searches (--exact and --certify) and metric edit searches (k-NN and
 * range) with -b cuda must equal -b cpu hit for hit.  Prints one line per
 * failure and "N passed, N failed" last; exit status 1 on any failure.
 *
 * Bench: WORDS (one per line, e.g. scripts/fetch-words' list) as the
 * base; Q queries are words with 20% edits; every query against every
 * word, unbounded and with the bound 2 (a typo search), on the GPU and on
 * all cores of the CPU (seq_pattern_distance, one query per thread at a
 * time); prints distances per second of each.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/genie.h"
#include "genie/metric.h"
#include "genie/sequences.h"
#include "engine/backend.h"
#include "engine/edit.h"
#include "transform/sequences.h"
#include "util/clock.h"
#include "util/threads.h"

static unsigned gPassed, gFailed;

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

static void fail(const char *zFmt, const char *zWhat, unsigned long long a, unsigned long long b)
{
    if (gFailed < 30) {
        printf("FAIL ");
        printf(zFmt, zWhat, a, b);
        putchar('\n');
    }
    gFailed++;
}

/* A set of strings, packed (engine_strings) as the module takes them. */
typedef struct strs {
    char *aByte;
    uint64_t *aStart;
    uint64_t n, nCap, nByteCap;
} strs;

static void strs_add(strs *s, const char *z, size_t n)
{
    if (s->n + 1 >= s->nCap) {
        s->nCap = s->nCap ? 2 * s->nCap : 1024;
        s->aStart = realloc(s->aStart, s->nCap * sizeof *s->aStart);
        if (s->n == 0)
            s->aStart[0] = 0;
    }
    uint64_t at = s->aStart[s->n];
    if (at + n > s->nByteCap) {
        s->nByteCap = 2 * (at + n) + 4096;
        s->aByte = realloc(s->aByte, s->nByteCap);
    }
    memcpy(s->aByte + at, z, n);
    s->aStart[++s->n] = at + n;
}

static engine_strings strs_view(const strs *s)
{
    return (engine_strings){s->aByte, s->aStart, s->n};
}

static const char *str_at(const strs *s, uint64_t i, size_t *pn)
{
    *pn = (size_t)(s->aStart[i + 1] - s->aStart[i]);
    return s->aByte + s->aStart[i];
}

static uint32_t cpu_distance(const strs *q, uint64_t iq, const strs *b, uint64_t ib, uint32_t max)
{
    size_t nq, nb;
    const char *zq = str_at(q, iq, &nq), *zb = str_at(b, ib, &nb);
    seq_pattern pat;
    seq_pattern_init(&pat, zq, nq);
    uint32_t d = 0;
    if (seq_pattern_distance(&pat, zb, nb, max, &d) != GENIE_OK)
        d = ENGINE_EDIT_UNDONE - 1;
    seq_pattern_free(&pat);
    return d;
}

/* A copy of z with about pct% of its length in random edits. */
static size_t perturb(uint64_t *s, const char *z, size_t n, unsigned pct, unsigned alphabet, char *out)
{
    memcpy(out, z, n);
    size_t edits = (n * pct + 50) / 100;
    for (size_t e = 0; e < edits; e++) {
        size_t pos = n ? below(s, (uint32_t)n) : 0;
        unsigned kind = below(s, 3);
        if (kind == 0 && n)
            out[pos] = (char)below(s, alphabet);
        else if (kind == 1) {
            memmove(out + pos + 1, out + pos, n - pos);
            out[pos] = (char)below(s, alphabet);
            n++;
        } else if (n) {
            memmove(out + pos, out + pos + 1, n - pos - 1);
            n--;
        }
    }
    return n;
}

/* ------------------------------------------------------- pair by pair */

static void compare_case(const engine_backend *be, uint64_t seed)
{
    uint64_t s = seed;
    unsigned alphabet = 2 + below(&s, 255);
    uint32_t nBase = 1 + below(&s, 1500), nQ = 1 + below(&s, 12);
    strs base = {0}, q = {0};
    char z[2048], w[2048];
    for (uint32_t i = 0; i < nBase; i++) {
        size_t n = below(&s, 20) == 0 ? 301 + below(&s, 1200) : below(&s, 301);
        for (size_t j = 0; j < n; j++)
            z[j] = (char)below(&s, alphabet);
        strs_add(&base, z, n);
    }
    for (uint32_t i = 0; i < nQ; i++) {
        unsigned kind = below(&s, 10);
        size_t n;
        if (kind == 0) {
            n = 0;
        } else if (kind == 1) { /* beyond the GPU's limit: undone */
            n = 513 + below(&s, 300);
            for (size_t j = 0; j < n; j++)
                w[j] = (char)below(&s, alphabet);
        } else if (kind <= 5) {
            size_t nb;
            const char *zb = str_at(&base, below(&s, nBase), &nb);
            n = perturb(&s, zb, nb, 10 + below(&s, 31), alphabet, w);
        } else {
            n = below(&s, 301);
            for (size_t j = 0; j < n; j++)
                w[j] = (char)below(&s, alphabet);
        }
        strs_add(&q, w, n);
    }
    uint32_t *aMax = malloc(nQ * sizeof *aMax);
    for (uint32_t i = 0; i < nQ; i++) {
        unsigned kind = below(&s, 4);
        aMax[i] = kind == 0 ? ENGINE_EDIT_MAX_BOUND : kind == 1 ? below(&s, 4) : kind == 2 ? below(&s, 40) : below(&s, 400);
    }
    int scan = below(&s, 2);
    uint64_t nOut = 0;
    uint32_t nRun = 0;
    engine_edit_run *aRun = malloc(((uint64_t)nQ * (nBase / ENGINE_EDIT_RUN_MAX + 2) + 8) * sizeof *aRun);
    uint32_t *aObject = NULL;
    if (scan) {
        for (uint32_t i = 0; i < nQ; i++)
            for (uint32_t o = 0; o < nBase; o += ENGINE_EDIT_RUN_MAX) {
                uint32_t n = nBase - o < ENGINE_EDIT_RUN_MAX ? nBase - o : ENGINE_EDIT_RUN_MAX;
                aRun[nRun++] = (engine_edit_run){i, n, nOut, o};
                nOut += n;
            }
    } else { /* explicit pairs: a few hundred per query, any objects */
        aObject = malloc((uint64_t)nQ * 600 * sizeof *aObject);
        for (uint32_t i = 0; i < nQ; i++) {
            uint32_t n = 1 + below(&s, 600);
            aRun[nRun++] = (engine_edit_run){i, n, nOut, 0};
            for (uint32_t p = 0; p < n; p++)
                aObject[nOut++] = below(&s, nBase);
        }
    }
    uint32_t *out = malloc((nOut ? nOut : 1) * sizeof *out);
    engine_edit_batch b = {strs_view(&base), strs_view(&q), aMax, aRun, nRun, aObject, nOut, out};
    void *slot = NULL;
    genie_status rc = be->pEdit->xDistances(&slot, &b);
    if (rc != GENIE_OK) {
        fail("%s: %llu %llu", genie_last_error(), (unsigned long long)rc, seed);
    } else {
        unsigned bad = 0;
        for (uint32_t r = 0; r < nRun; r++)
            for (uint32_t p = 0; p < aRun[r].n; p++) {
                uint64_t i = aRun[r].first + p;
                uint32_t o = aObject ? aObject[i] : aRun[r].object0 + p, iq = aRun[r].query;
                size_t nq;
                str_at(&q, iq, &nq);
                uint32_t want = nq > 512 ? ENGINE_EDIT_UNDONE : cpu_distance(&q, iq, &base, o, aMax[iq]);
                if (out[i] != want && bad++ < 3) {
                    size_t nb;
                    str_at(&base, o, &nb);
                    printf("  seed %llu query %u (%zu bytes) object %u (%zu bytes) bound %u alphabet %u\n",
                           (unsigned long long)seed, iq, nq, o, nb, aMax[iq], alphabet);
                    fail("%s: gpu %llu, cpu %llu", "distance", out[i], want);
                }
            }
        if (bad == 0)
            gPassed++;
    }
    be->pEdit->xFree(slot);
    free(out);
    free(aObject);
    free(aRun);
    free(aMax);
    free(base.aByte);
    free(base.aStart);
    free(q.aByte);
    free(q.aStart);
}

/* ------------------------------------------------ searches, cpu vs cuda */

static int same_seq(const genie_seq_results *a, const genie_seq_results *b, size_t nQ)
{
    for (size_t i = 0; i < nQ; i++) {
        size_t na, nb;
        int ca, cb;
        const genie_seq_hit *ha = genie_seq_results_get(a, i, &na, &ca, NULL);
        const genie_seq_hit *hb = genie_seq_results_get(b, i, &nb, &cb, NULL);
        if (na != nb || ca != cb || memcmp(ha, hb, na * sizeof *ha) != 0)
            return 0;
    }
    return 1;
}

static void compare_searches(uint64_t seed)
{
    uint64_t s = seed;
    enum { N = 20000, NQ = 300 };
    char **az = malloc(N * sizeof *az), *azQ[NQ];
    size_t *an = malloc(N * sizeof *an), anQ[NQ];
    for (size_t i = 0; i < N; i++) {
        az[i] = malloc(64);
        an[i] = i % 9 == 0 ? 1 + below(&s, 5) : 3 + below(&s, 14);
        for (size_t j = 0; j < an[i]; j++)
            az[i][j] = (char)('a' + below(&s, 26));
    }
    for (size_t i = 0; i < NQ; i++) {
        azQ[i] = malloc(128);
        size_t src = below(&s, N);
        anQ[i] = i % 10 == 0 ? 0 : perturb(&s, az[src], an[src], 10 + below(&s, 31), 26, azQ[i]);
        for (size_t j = 0; j < anQ[i]; j++)
            if ((unsigned char)azQ[i][j] < 26)
                azQ[i][j] = (char)('a' + azQ[i][j]);
    }
    genie_seq_builder *sb;
    const char *zSeq = "gpu_edit_seq.genie", *zLc = "gpu_edit_lc.genie";
    genie_index *idx = NULL, *lc = NULL;
    if (genie_seq_builder_new(&sb, NULL, 3) != GENIE_OK) {
        fail("%s %llu %llu", "seq builder", 0, 0);
        return;
    }
    for (size_t i = 0; i < N; i++)
        genie_seq_builder_add(sb, az[i], an[i]);
    if (genie_seq_builder_write(sb, zSeq) != GENIE_OK || genie_index_open(zSeq, &idx) != GENIE_OK) {
        fail("%s %llu %llu", genie_last_error(), 0, 0);
        return;
    }
    genie_seq_builder_free(sb);
    for (int mode = 0; mode < 3; mode++) {
        genie_seq_options so = {.k = mode == 2 ? 10 : 3, .candidates = 8, .max_candidates = mode == 0 ? 0 : 64,
                                .exact = mode == 0};
        genie_search_options o;
        memset(&o, 0, sizeof o);
        genie_seq_results *rc = NULL, *rg = NULL;
        o.backend = GENIE_BACKEND_CPU;
        double t0 = util_now();
        genie_status e1 = genie_seq_search(idx, (const char *const *)azQ, anQ, NQ, &so, &o, &rc);
        double t1 = util_now();
        o.backend = GENIE_BACKEND_CUDA;
        genie_status e2 = genie_seq_search(idx, (const char *const *)azQ, anQ, NQ, &so, &o, &rg);
        double t2 = util_now();
        genie_search_stats st;
        if (e1 != GENIE_OK || e2 != GENIE_OK) {
            fail("%s: sequences search failed (%llu, %llu)", genie_last_error(), e1, e2);
        } else {
            genie_seq_results_stats(rg, &st);
            printf("  sequences %s k=%u: cpu %.3f s, cuda %.3f s (scans on %s, %llu by the fallback)\n",
                   mode == 0 ? "--exact" : "--certify", so.k, t1 - t0, t2 - t1, genie_backend_name(st.scan_backend),
                   (unsigned long long)st.fallback);
            if (!same_seq(rc, rg, NQ))
                fail("%s: cpu and cuda differ (%llu, %llu)", mode == 0 ? "sequences --exact" : "sequences --certify",
                     0, 0);
            else if (st.scan_backend != GENIE_BACKEND_CUDA && (mode == 0 || st.fallback))
                fail("%s: the scan did not run on the GPU (%llu, %llu)", "sequences", st.scan_backend, 0);
            else
                gPassed++;
        }
        genie_seq_results_free(rc);
        genie_seq_results_free(rg);
    }
    genie_lc_params p;
    memset(&p, 0, sizeof p);
    p.metric = GENIE_LC_EDIT;
    if (genie_lc_build_strings((const char *const *)az, an, N, &p, NULL, zLc) != GENIE_OK ||
        genie_index_open(zLc, &lc) != GENIE_OK) {
        fail("%s %llu %llu", genie_last_error(), 0, 0);
        return;
    }
    for (int range = 0; range <= 1; range++) {
        genie_lc_options o;
        memset(&o, 0, sizeof o);
        o.k = range ? 0 : 5;
        o.radius = 2;
        genie_lc_results *a = NULL, *b = NULL;
        o.backend = GENIE_BACKEND_CPU;
        genie_status e1 = genie_lc_search_strings(lc, (const char *const *)azQ, anQ, NQ, &o, &a);
        o.backend = GENIE_BACKEND_CUDA;
        genie_status e2 = genie_lc_search_strings(lc, (const char *const *)azQ, anQ, NQ, &o, &b);
        int same = e1 == GENIE_OK && e2 == GENIE_OK;
        for (size_t i = 0; same && i < NQ; i++) {
            size_t na, nb;
            const genie_lc_hit *ha = genie_lc_results_get(a, i, &na), *hb = genie_lc_results_get(b, i, &nb);
            same = na == nb;
            for (size_t j = 0; same && j < na; j++) /* fields: the struct has padding */
                same = ha[j].object == hb[j].object && ha[j].distance == hb[j].distance;
        }
        genie_search_stats st;
        genie_lc_results_stats(b, &st);
        if (!same || st.backend != GENIE_BACKEND_CUDA)
            fail("%s: metric edit search, cpu and cuda differ or cuda did not run (%llu, %llu)",
                 range ? "range" : "k-NN", e1, e2);
        else
            gPassed++;
        genie_lc_results_free(a);
        genie_lc_results_free(b);
    }
    genie_index_close(idx);
    genie_index_close(lc);
    remove(zSeq);
    remove(zLc);
    for (size_t i = 0; i < N; i++)
        free(az[i]);
    for (size_t i = 0; i < NQ; i++)
        free(azQ[i]);
    free(az);
    free(an);
}

/* -------------------------------------------------------------- bench */

typedef struct cpu_bench {
    const strs *q, *base;
    uint32_t max;
    size_t next;
    pthread_mutex_t lock;
    uint64_t sum;
} cpu_bench;

static void cpu_worker(void *ctx, unsigned t)
{
    (void)t;
    cpu_bench *c = ctx;
    uint64_t sum = 0;
    seq_pattern *pat = malloc(sizeof *pat);
    for (;;) {
        pthread_mutex_lock(&c->lock);
        size_t i = c->next++;
        pthread_mutex_unlock(&c->lock);
        if (i >= c->q->n)
            break;
        size_t nq;
        const char *zq = str_at(c->q, i, &nq);
        seq_pattern_init(pat, zq, nq);
        for (uint64_t o = 0; o < c->base->n; o++) {
            size_t nb;
            const char *zb = str_at(c->base, o, &nb);
            uint32_t d = 0;
            seq_pattern_distance(pat, zb, nb, c->max, &d);
            sum += d;
        }
        seq_pattern_free(pat);
    }
    free(pat);
    pthread_mutex_lock(&c->lock);
    c->sum += sum;
    pthread_mutex_unlock(&c->lock);
}

static int bench(const engine_backend *be, const char *zWords, uint32_t nQ, uint32_t nWords)
{
    FILE *f = fopen(zWords, "r");
    if (!f) {
        printf("cannot open %s\n", zWords);
        return 1;
    }
    strs base = {0}, q = {0};
    char line[4096], w[8192];
    while (base.n < nWords && fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n");
        strs_add(&base, line, n);
    }
    fclose(f);
    uint64_t s = 99;
    for (uint32_t i = 0; i < nQ; i++) {
        size_t nb;
        const char *zb = str_at(&base, below(&s, (uint32_t)base.n), &nb);
        size_t n = perturb(&s, zb, nb, 20, 26, w);
        for (size_t j = 0; j < n; j++)
            if ((unsigned char)w[j] < 26)
                w[j] = (char)('a' + w[j]);
        strs_add(&q, w, n);
    }
    uint64_t nPair = (uint64_t)nQ * base.n;
    printf("words: %llu from %s, %u queries (20%% edits), %llu distances per run, %u CPU threads\n",
           (unsigned long long)base.n, zWords, nQ, (unsigned long long)nPair, util_ncores());
    uint64_t nRunMax = (base.n + ENGINE_EDIT_RUN_MAX - 1) / ENGINE_EDIT_RUN_MAX;
    /* GPU: slices of queries, so that a slice's answers stay at 2^25 */
    uint64_t step = ((uint64_t)1 << 25) / base.n ? ((uint64_t)1 << 25) / base.n : 1;
    uint32_t *out = malloc(step * base.n * sizeof *out);
    engine_edit_run *aRun = malloc(step * nRunMax * sizeof *aRun);
    uint32_t *aMax = malloc(nQ * sizeof *aMax);
    static const uint32_t aBound[] = {ENGINE_EDIT_MAX_BOUND, 2};
    void *slot = NULL;
    for (int ib = 0; ib < 2; ib++) {
        for (uint32_t i = 0; i < nQ; i++)
            aMax[i] = aBound[ib];
        double tGpu = 0;
        uint64_t sumGpu = 0;
        for (int rep = 0; rep < 2; rep++) { /* the first run uploads the words and warms up */
            sumGpu = 0;
            double t0 = util_now();
            for (uint64_t q0 = 0; q0 < nQ; q0 += step) {
                uint64_t nS = nQ - q0 < step ? nQ - q0 : step;
                uint32_t nRun = 0;
                for (uint64_t i = 0; i < nS; i++)
                    for (uint64_t o = 0; o < base.n; o += ENGINE_EDIT_RUN_MAX) {
                        uint64_t n = base.n - o < ENGINE_EDIT_RUN_MAX ? base.n - o : ENGINE_EDIT_RUN_MAX;
                        aRun[nRun++] = (engine_edit_run){(uint32_t)i, (uint32_t)n, i * base.n + o, (uint32_t)o};
                    }
                engine_strings qv = {q.aByte, q.aStart + q0, nS};
                engine_edit_batch b = {strs_view(&base), qv, aMax + q0, aRun, nRun, NULL, nS * base.n, out};
                if (be->pEdit->xDistances(&slot, &b) != GENIE_OK) {
                    printf("GPU failed: %s\n", genie_last_error());
                    return 1;
                }
                for (uint64_t i = 0; i < nS * base.n; i++)
                    sumGpu += out[i];
            }
            tGpu = util_now() - t0;
        }
        cpu_bench c = {&q, &base, aBound[ib], 0, PTHREAD_MUTEX_INITIALIZER, 0};
        double t0 = util_now();
        util_parallel_run(util_ncores(), cpu_worker, &c);
        double tCpu = util_now() - t0;
        printf("| %s | GPU %.3f s, %.3g distances/s | CPU %.3f s, %.3g distances/s | GPU/CPU %.1fx | %s |\n",
               ib == 0 ? "unbounded" : "bound 2", tGpu, nPair / tGpu, tCpu, nPair / tCpu, tCpu / tGpu,
               sumGpu == c.sum ? "sums equal" : "SUMS DIFFER");
        if (sumGpu != c.sum)
            gFailed++;
    }
    be->pEdit->xFree(slot);
    free(out);
    free(aRun);
    free(aMax);
    return gFailed != 0;
}

int main(int argc, char **argv)
{
    unsigned nCases = 200;
    uint64_t seed = 1;
    const char *zWords = NULL;
    uint32_t nQ = 1000, nWords = 100000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cases") && i + 1 < argc)
            nCases = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc)
            zWords = argv[++i];
        else if (!strcmp(argv[i], "--queries") && i + 1 < argc)
            nQ = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--words") && i + 1 < argc)
            nWords = (uint32_t)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: gpu_edit [--cases N] [--seed S] | --bench WORDS [--queries Q] [--words N]\n");
            return 2;
        }
    }
    const engine_backend *be;
    if (engine_backend_pick(GENIE_BACKEND_CUDA, &be) != GENIE_OK || !be->pEdit) {
        printf("no usable CUDA backend: %s\n0 passed, 1 failed\n", genie_last_error());
        return 1;
    }
    if (zWords)
        return bench(be, zWords, nQ, nWords);
    for (unsigned c = 0; c < nCases; c++)
        compare_case(be, seed * 1000003 + c);
    compare_searches(seed);
    printf("%u passed, %u failed\n", gPassed, gFailed);
    return gFailed != 0;
}
