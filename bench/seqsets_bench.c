/*
 * seqsets_bench: the sequences and sets front-ends on real data
 * (data/seqsets/, made by scripts/prepare-seqsets).
 *
 *   seqsets_bench seq  DIR [-b B1,B2] [-n QUERIES] [-e EXACT] [-K 8,16,...]
 *   seqsets_bench sets DIR [-b B1,B2] [-n QUERIES] [-K 100,...]
 *
 * Indexes are written to $TMPDIR (default /tmp).
 * seq:  builds the index of DIR/words.txt, then per backend and per
 *       modification rate (DIR/words-q{10,20,30,40}.txt, first QUERIES
 *       lines): one round of top-1 search per K (Zhou et al. (GENIE) Tables VI and
 *       VII: accuracy = top-1 distance equal to the exact one, over the
 *       first EXACT queries; certified share; match and verify seconds),
 *       one --certify-only run (K from 8, limit 4096: the certificate
 *       alone, without the fallback scan), and the exact brute force
 *       over the EXACT queries.  Then the Table I profile for 1,024 queries
 *       (build, transfer = the first search of one query, which uploads
 *       the index on a GPU, match, verify).
 * sets: DIR/debian.txt (space-separated) and DIR/supermarket.txt (tabs)
 *       with their -q.txt queries: recall@10 of MinHash (m = 64) + exact
 *       re-rank per K against exact Jaccard, tie-aware (a hit counts when
 *       its Jaccard reaches the exact 10th best), and the same profile.
 * With two backends, every answer of the second is compared with the
 * first's (objects, distances or similarities, certified flags); the line
 * 'compare: ... identical' or '... MISMATCH' says how it went.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/genie.h"
#include "genie/sequences.h"
#include "genie/sets.h"
#include "util/clock.h"

typedef struct lines {
    char *aBuf;
    const char **az;
    size_t *an;
    size_t n;
} lines;

/* Indexes go to $TMPDIR (default /tmp), not to the data folder, which
 * travels to the GPU machine and must stay small. */
static const char *tmp_dir(void)
{
    const char *z = getenv("TMPDIR");
    return z && *z ? z : "/tmp";
}

static void die(const char *what, genie_status rc)
{
    fprintf(stderr, "seqsets_bench: %s: %s (%s)\n", what, genie_strerror(rc), genie_last_error());
    exit(1);
}

static int read_lines(const char *path, size_t max, lines *l)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    l->aBuf = malloc((size_t)size + 1);
    if (fread(l->aBuf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        return -1;
    }
    fclose(f);
    size_t cap = 1024;
    l->az = malloc(cap * sizeof *l->az);
    l->an = malloc(cap * sizeof *l->an);
    l->n = 0;
    for (char *p = l->aBuf, *end = l->aBuf + size; p < end && l->n < max;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        if (l->n == cap) {
            cap *= 2;
            l->az = realloc(l->az, cap * sizeof *l->az);
            l->an = realloc(l->an, cap * sizeof *l->an);
        }
        l->az[l->n] = p;
        l->an[l->n++] = (size_t)(nl - p);
        p = nl + 1;
    }
    return 0;
}

static void free_lines(lines *l)
{
    free(l->aBuf);
    free(l->az);
    free(l->an);
}

static int parse_list(const char *z, uint32_t *a, int max)
{
    int n = 0;
    while (*z && n < max) {
        a[n++] = (uint32_t)strtoul(z, (char **)&z, 10);
        if (*z == ',')
            z++;
    }
    return n;
}

static int parse_backends(const char *z, genie_backend *a, int max)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", z);
    for (char *t = strtok(buf, ","); t && n < max; t = strtok(NULL, ","))
        if (genie_backend_parse(t, &a[n]) == GENIE_OK)
            n++;
    return n;
}

/* --------------------------------------------------------- sequences */

typedef struct seq_answer {
    uint32_t object, distance;
    int certified;
} seq_answer;

static genie_seq_results *seq_run(const genie_index *idx, const lines *q, size_t n, genie_backend b, uint32_t K,
                                  uint32_t limit, int exact)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = b;
    /* the certificate alone (--certify-only) */
    genie_seq_options so = {.k = 1, .candidates = K, .max_candidates = limit, .exact = exact, .certify_only = 1};
    genie_seq_results *r;
    genie_status rc = genie_seq_search(idx, q->az, q->an, n, &so, &opt, &r);
    if (rc != GENIE_OK)
        die("genie_seq_search", rc);
    return r;
}

static void seq_collect(const genie_seq_results *r, size_t n, seq_answer *a)
{
    for (size_t i = 0; i < n; i++) {
        size_t nh;
        int cert;
        const genie_seq_hit *h = genie_seq_results_get(r, i, &nh, &cert, NULL);
        a[i] = nh ? (seq_answer){h[0].object, h[0].distance, cert} : (seq_answer){UINT32_MAX, UINT32_MAX, cert};
    }
}

static int bench_seq(const char *dir, const genie_backend *aB, int nB, size_t nQ, size_t nExact, const uint32_t *aK,
                     int nK)
{
    char path[1024];
    lines words;
    snprintf(path, sizeof path, "%s/words.txt", dir);
    if (read_lines(path, SIZE_MAX, &words) != 0) {
        fprintf(stderr, "seqsets_bench: cannot read %s (run scripts/prepare-seqsets)\n", path);
        return 1;
    }
    double t0 = util_now();
    genie_seq_builder *sb;
    genie_status rc = genie_seq_builder_new(&sb, NULL, 3);
    for (size_t i = 0; rc == GENIE_OK && i < words.n; i++)
        rc = genie_seq_builder_add(sb, words.az[i], words.an[i]);
    snprintf(path, sizeof path, "%s/seqsets-words.genie", tmp_dir());
    if (rc == GENIE_OK)
        rc = genie_seq_builder_write(sb, path);
    if (rc != GENIE_OK)
        die("building the word index", rc);
    genie_seq_builder_free(sb);
    double tBuild = util_now() - t0;
    genie_index *idx;
    if ((rc = genie_index_open(path, &idx)) != GENIE_OK)
        die("opening the word index", rc);
    printf("sequences: %zu words, 3-grams, build %.2f s\n", words.n, tBuild);

    static const int aRate[] = {10, 20, 30, 40};
    lines aQ[4];
    seq_answer *aaExact[4], *aaFirst[4];
    for (int r = 0; r < 4; r++) {
        snprintf(path, sizeof path, "%s/words-q%d.txt", dir, aRate[r]);
        if (read_lines(path, nQ, &aQ[r]) != 0) {
            fprintf(stderr, "seqsets_bench: cannot read %s\n", path);
            return 1;
        }
        if (nExact > aQ[r].n)
            nExact = aQ[r].n;
        aaExact[r] = malloc(nExact * sizeof **aaExact);
        aaFirst[r] = malloc(aQ[r].n * sizeof **aaFirst);
        t0 = util_now();
        genie_seq_results *res = seq_run(idx, &aQ[r], nExact, GENIE_BACKEND_CPU, 0, 0, 1);
        double tExact = util_now() - t0;
        seq_collect(res, nExact, aaExact[r]);
        genie_seq_results_free(res);
        printf("exact brute force, %d%% modified: %zu queries in %.2f s (%.2f ms/query)\n", aRate[r], nExact, tExact,
               1e3 * tExact / (double)(nExact ? nExact : 1));
    }
    int mismatch = 0;
    for (int ib = 0; ib < nB; ib++) {
        const char *zB = genie_backend_name(aB[ib]);
        t0 = util_now();
        genie_seq_results_free(seq_run(idx, &aQ[0], 1, aB[ib], 32, 0, 0));
        printf("\n[%s] transfer (first search of one query): %.3f s\n", zB, util_now() - t0);
        printf("[%s] %-5s %5s %10s %10s %9s %9s %11s\n", zB, "mod", "K", "accuracy", "certified", "match_s",
               "verify_s", "ms/query");
        for (int r = 0; r < 4; r++) {
            size_t n = aQ[r].n;
            seq_answer *a = malloc(n * sizeof *a);
            for (int ik = 0; ik <= nK; ik++) {
                int certify = ik == nK; /* last row: --certify from K = 8 */
                uint32_t K = certify ? 8 : aK[ik];
                genie_seq_results *res = seq_run(idx, &aQ[r], n, aB[ib], K, certify ? 4096 : 0, 0);
                genie_search_stats st;
                genie_seq_results_stats(res, &st);
                seq_collect(res, n, a);
                genie_seq_results_free(res);
                size_t good = 0, cert = 0;
                for (size_t i = 0; i < nExact; i++)
                    good += a[i].distance == aaExact[r][i].distance;
                for (size_t i = 0; i < n; i++) {
                    cert += a[i].certified != 0;
                    if (a[i].certified && i < nExact && a[i].distance != aaExact[r][i].distance) {
                        printf("ERROR: certified answer of query %zu is wrong\n", i);
                        mismatch++;
                    }
                }
                char zK[32];
                snprintf(zK, sizeof zK, certify ? "cert" : "%u", K);
                printf("[%s] %4d%% %5s %10.4f %10.4f %9.3f %9.3f %11.4f\n", zB, aRate[r], zK,
                       (double)good / (double)(nExact ? nExact : 1), (double)cert / (double)n, st.match_seconds,
                       st.rerank_seconds, 1e3 * (st.match_seconds + st.rerank_seconds) / (double)n);
                if (!certify && K == 32) {
                    if (ib == 0) {
                        memcpy(aaFirst[r], a, n * sizeof *a);
                    } else {
                        size_t bad = 0;
                        for (size_t i = 0; i < n; i++)
                            bad += a[i].object != aaFirst[r][i].object || a[i].distance != aaFirst[r][i].distance ||
                                   a[i].certified != aaFirst[r][i].certified;
                        printf("compare: %s vs %s, %d%% modified, K = 32, %zu queries: %s (%zu differ)\n", zB,
                               genie_backend_name(aB[0]), aRate[r], n, bad ? "MISMATCH" : "identical", bad);
                        mismatch += bad != 0;
                    }
                }
            }
            free(a);
        }
        /* Table I profile: 1,024 queries of the 20% file, K = 32, one round */
        size_t np = aQ[1].n < 1024 ? aQ[1].n : 1024;
        genie_seq_results *res = seq_run(idx, &aQ[1], np, aB[ib], 32, 0, 0);
        genie_search_stats st;
        genie_seq_results_stats(res, &st);
        genie_seq_results_free(res);
        printf("[%s] profile, %zu queries (20%%, K = 32): build %.2f s, match %.3f s, verify %.3f s\n", zB, np, tBuild,
               st.match_seconds, st.rerank_seconds);
    }
    for (int r = 0; r < 4; r++) {
        free_lines(&aQ[r]);
        free(aaExact[r]);
        free(aaFirst[r]);
    }
    genie_index_close(idx);
    free_lines(&words);
    return mismatch ? 2 : 0;
}

/* -------------------------------------------------------------- sets */

static genie_set_results *set_run(const genie_index *idx, const lines *q, genie_backend b, uint32_t K, int exact)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = b;
    genie_set_options so = {.k = 10, .candidates = K, .exact = exact};
    genie_set_results *r;
    genie_status rc = genie_set_search(idx, q->az, q->an, q->n, &so, &opt, &r);
    if (rc != GENIE_OK)
        die("genie_set_search", rc);
    return r;
}

static int bench_one_set(const char *dir, const char *name, char sep, const genie_backend *aB, int nB, size_t nQ,
                         const uint32_t *aK, int nK)
{
    char path[1024];
    lines sets, q;
    snprintf(path, sizeof path, "%s/%s.txt", dir, name);
    if (read_lines(path, SIZE_MAX, &sets) != 0) {
        fprintf(stderr, "seqsets_bench: cannot read %s (run scripts/prepare-seqsets)\n", path);
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s-q.txt", dir, name);
    if (read_lines(path, nQ, &q) != 0) {
        fprintf(stderr, "seqsets_bench: cannot read %s\n", path);
        return 1;
    }
    double t0 = util_now();
    genie_set_params p = {64, 0, sep};
    genie_set_builder *sb;
    genie_status rc = genie_set_builder_new(&sb, NULL, &p);
    for (size_t i = 0; rc == GENIE_OK && i < sets.n; i++)
        rc = genie_set_builder_add(sb, sets.az[i], sets.an[i]);
    snprintf(path, sizeof path, "%s/seqsets-%s.genie", tmp_dir(), name);
    if (rc == GENIE_OK)
        rc = genie_set_builder_write(sb, path);
    if (rc != GENIE_OK)
        die("building the set index", rc);
    genie_set_builder_free(sb);
    double tBuild = util_now() - t0;
    genie_index *idx;
    if ((rc = genie_index_open(path, &idx)) != GENIE_OK)
        die("opening the set index", rc);
    t0 = util_now();
    genie_set_results *ex = set_run(idx, &q, GENIE_BACKEND_CPU, 0, 1);
    printf("\nsets %s: %zu sets, m = 64, build %.2f s; exact Jaccard for %zu queries %.2f s\n", name, sets.n, tBuild,
           q.n, util_now() - t0);
    genie_set_results *first = NULL;
    int mismatch = 0;
    for (int ib = 0; ib < nB; ib++) {
        const char *zB = genie_backend_name(aB[ib]);
        lines one = q;
        one.n = 1;
        t0 = util_now();
        genie_set_results_free(set_run(idx, &one, aB[ib], 100, 0));
        printf("[%s] transfer (first search of one query): %.3f s\n", zB, util_now() - t0);
        printf("[%s] %5s %10s %9s %9s\n", zB, "K", "recall@10", "match_s", "rank_s");
        for (int ik = 0; ik < nK; ik++) {
            genie_set_results *r = set_run(idx, &q, aB[ib], aK[ik], 0);
            size_t found = 0, want = 0;
            for (size_t i = 0; i < q.n; i++) {
                size_t ne, nr;
                const genie_set_hit *e = genie_set_results_get(ex, i, &ne);
                const genie_set_hit *h = genie_set_results_get(r, i, &nr);
                want += ne;
                for (size_t j = 0; j < nr && ne; j++) /* tie-aware: reaches the exact k-th similarity */
                    found += (uint64_t)h[j].shared * e[ne - 1].union_size >= (uint64_t)e[ne - 1].shared * h[j].union_size;
            }
            genie_search_stats st;
            genie_set_results_stats(r, &st);
            double tm = st.match_seconds, tr = st.rerank_seconds;
            printf("[%s] %5u %10.4f %9.3f %9.3f\n", zB, aK[ik], want ? (double)found / (double)want : 1.0, tm, tr);
            if (aK[ik] == 100) {
                if (!first) {
                    first = r;
                    r = NULL;
                } else {
                    size_t bad = 0;
                    for (size_t i = 0; i < q.n; i++) {
                        size_t na, nb;
                        const genie_set_hit *a = genie_set_results_get(first, i, &na);
                        const genie_set_hit *b = genie_set_results_get(r, i, &nb);
                        bad += na != nb || (na && memcmp(a, b, na * sizeof *a) != 0);
                    }
                    printf("compare: %s vs %s, %s, K = 100, %zu queries: %s (%zu differ)\n", zB,
                           genie_backend_name(aB[0]), name, q.n, bad ? "MISMATCH" : "identical", bad);
                    mismatch += bad != 0;
                }
            }
            genie_set_results_free(r);
        }
        size_t np = q.n < 1024 ? q.n : 1024;
        lines prof = q;
        prof.n = np;
        genie_set_results *r = set_run(idx, &prof, aB[ib], 100, 0);
        genie_search_stats st;
        genie_set_results_stats(r, &st);
        double tm = st.match_seconds, tr = st.rerank_seconds;
        genie_set_results_free(r);
        printf("[%s] profile, %zu queries (K = 100): build %.2f s, match %.3f s, re-rank %.3f s\n", zB, np, tBuild, tm,
               tr);
    }
    genie_set_results_free(first);
    genie_set_results_free(ex);
    genie_index_close(idx);
    free_lines(&sets);
    free_lines(&q);
    return mismatch ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "seq") != 0 && strcmp(argv[1], "sets") != 0)) {
        fprintf(stderr, "usage: seqsets_bench seq|sets DIR [-b B1,B2] [-n QUERIES] [-e EXACT] [-K K1,K2,...]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a timeout */
    genie_backend aB[4] = {GENIE_BACKEND_CPU};
    int nB = 1;
    int isSeq = strcmp(argv[1], "seq") == 0;
    size_t nQ = 10000, nExact = 1000;
    uint32_t aK[16] = {8, 16, 32, 64, 128, 256};
    int nK = 6;
    if (!isSeq) {
        aK[0] = 20, aK[1] = 50, aK[2] = 100, aK[3] = 200, aK[4] = 500;
        nK = 5;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-b") == 0)
            nB = parse_backends(argv[i + 1], aB, 4);
        else if (strcmp(argv[i], "-n") == 0)
            nQ = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-e") == 0)
            nExact = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "-K") == 0)
            nK = parse_list(argv[i + 1], aK, 16);
    }
    if (nB == 0 || nK == 0) {
        fprintf(stderr, "seqsets_bench: bad -b or -K list\n");
        return 2;
    }
    if (isSeq)
        return bench_seq(argv[2], aB, nB, nQ, nExact, aK, nK);
    int rc = bench_one_set(argv[2], "debian", ' ', aB, nB, nQ, aK, nK);
    int rc2 = bench_one_set(argv[2], "supermarket", '\t', aB, nB, nQ, aK, nK);
    return rc ? rc : rc2;
}
