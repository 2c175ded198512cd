/*
 * sets_exact_bench: the exact set similarity search (engine/sim.h through
 * the sets front-end) against MinHash at a recall target, and what the
 * choice between them picks (docs/BENCHMARKS.md "Exact set similarity";
 * the sparse-matrix baseline is bench/sets_scipy.py, run on the same files).
 *
 *   sets_exact_bench BASE QUERIES [-k 10] [-n N] [-b BACKEND] [-t THREADS]
 *                    [-r REPEAT] [-R RECALL] [-T MIN_SIMILARITY] [-o ANSWERS]
 *                    [-i INDEX] [-x]
 *
 * Builds the index of BASE (one set per line, white-space separated) into
 * INDEX (default $TMPDIR/sets_exact_bench.genie; an existing INDEX newer
 * than BASE is reused), reads N queries from QUERIES (cycled when the file
 * has fewer), and times, end to end (query lines in, answers out, the
 * index open):
 *   - the first exact call on 64 queries (deriving the set sizes, the
 *     vocabulary's table, the device copies: once per open index);
 *   - the exact top-k of the N queries (-T: every set at or above T), in
 *     one call, best of REPEAT, with the engine's work (postings counted,
 *     probed, sets scored);
 *   - MinHash with the K whose estimated recall@k reaches RECALL (0.9;
 *     genie_recall_predict), best of REPEAT, and its recall@k measured
 *     against the exact answers (a hit counts when its Jaccard reaches
 *     the exact k-th: ties count);
 *   - the default search and the one with --recall RECALL: which method
 *     the cost estimate picked, why, and the time.
 * -x: the exact search alone.  -o writes the exact answers as 'query rank object similarity' lines
 * (similarity %.17g) for bench/sets_scipy.py --check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "genie/genie.h"
#include "genie/sets.h"
#include "transform/sets_exact.h"
#include "util/clock.h"

typedef struct lines {
    char *aBuf;
    const char **az;
    size_t *an;
    size_t n;
} lines;

static void die(const char *what, genie_status rc)
{
    fprintf(stderr, "sets_exact_bench: %s: %s (%s)\n", what, genie_strerror(rc), genie_last_error());
    exit(1);
}

/* The lines of @p path, cycled to @p n when n > 0. */
static void read_lines(const char *path, size_t n, lines *l)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "sets_exact_bench: cannot read %s (scripts/prepare-exactsets)\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    l->aBuf = malloc((size_t)size + 1);
    if (fread(l->aBuf, 1, (size_t)size, f) != (size_t)size)
        exit(1);
    fclose(f);
    size_t nFile = 0, cap = 1024;
    const char **az = malloc(cap * sizeof *az);
    size_t *an = malloc(cap * sizeof *an);
    for (char *p = l->aBuf, *end = l->aBuf + size; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            nl = end;
        if (nFile == cap) {
            cap *= 2;
            az = realloc(az, cap * sizeof *az);
            an = realloc(an, cap * sizeof *an);
        }
        az[nFile] = p;
        an[nFile++] = (size_t)(nl - p);
        p = nl + 1;
    }
    l->n = n ? n : nFile;
    l->az = malloc(l->n * sizeof *l->az);
    l->an = malloc(l->n * sizeof *l->an);
    for (size_t i = 0; i < l->n; i++) {
        l->az[i] = az[i % nFile];
        l->an[i] = an[i % nFile];
    }
    free(az);
    free(an);
}

typedef struct run {
    genie_set_results *r;
    double seconds;
} run;

/* The best of @p repeat calls; the last results are kept. */
static run search(const genie_index *idx, const lines *q, size_t n, const genie_set_options *so,
                  const genie_search_options *opt, int repeat)
{
    run best = {NULL, 1e300};
    for (int i = 0; i < repeat; i++) {
        genie_set_results *r;
        double t0 = util_now();
        genie_status rc = genie_set_search(idx, q->az, q->an, n, so, opt, &r);
        double dt = util_now() - t0;
        if (rc != GENIE_OK)
            die("genie_set_search", rc);
        genie_set_results_free(best.r);
        best.r = r;
        if (dt < best.seconds)
            best.seconds = dt;
    }
    return best;
}

static const char *method_name(genie_set_method m)
{
    return m == GENIE_SET_MINHASH ? "minhash" : m == GENIE_SET_EXACT_LISTS ? "exact" : "scan";
}

/* The smallest K whose estimated recall@k reaches @p target (0 when none up to 4096 does). */
static uint32_t minhash_k(const genie_index *idx, uint32_t k, double target, double *pRecall)
{
    genie_status rc = genie_recall_prepare(idx, 0);
    if (rc != GENIE_OK)
        die("genie_recall_prepare", rc);
    uint32_t lo = k, hi = 4096;
    double r;
    if ((rc = genie_recall_predict(idx, k, hi, 0, &r, NULL)) != GENIE_OK)
        die("genie_recall_predict", rc);
    if (r < target)
        return 0;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        genie_recall_predict(idx, k, mid, 0, &r, NULL);
        if (r >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    genie_recall_predict(idx, k, lo, 0, pRecall, NULL);
    return lo;
}

/* recall@k of @p got against the exact answers @p want, ties counted (docs/SETS.md). */
static double recall_at_k(const genie_set_results *got, const genie_set_results *want, size_t n, uint32_t k)
{
    double sum = 0;
    size_t nUsed = 0;
    for (size_t q = 0; q < n; q++) {
        size_t nw, ng;
        const genie_set_hit *w = genie_set_results_get(want, q, &nw);
        const genie_set_hit *g = genie_set_results_get(got, q, &ng);
        if (nw == 0)
            continue;
        const genie_set_hit *kth = &w[(nw < k ? nw : k) - 1];
        size_t good = 0;
        for (size_t i = 0; i < ng; i++)
            good += (uint64_t)g[i].shared * kth->union_size >= (uint64_t)kth->shared * g[i].union_size;
        sum += (double)good / (double)(nw < k ? nw : k);
        nUsed++;
    }
    return nUsed ? sum / (double)nUsed : 1;
}

int main(int argc, char **argv)
{
    const char *zBase = NULL, *zQueries = NULL, *zOut = NULL, *zIndex = NULL;
    uint32_t k = 10;
    size_t n = 0;
    int repeat = 3, exactOnly = 0;
    double target = 0.9, minSim = 0;
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-k") && v)
            k = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "-n") && v)
            n = (size_t)atol(argv[++i]);
        else if (!strcmp(a, "-t") && v)
            opt.threads = (unsigned)atoi(argv[++i]);
        else if (!strcmp(a, "-r") && v)
            repeat = atoi(argv[++i]);
        else if (!strcmp(a, "-R") && v)
            target = atof(argv[++i]);
        else if (!strcmp(a, "-T") && v)
            minSim = atof(argv[++i]);
        else if (!strcmp(a, "-o") && v)
            zOut = argv[++i];
        else if (!strcmp(a, "-x"))
            exactOnly = 1;
        else if (!strcmp(a, "-i") && v)
            zIndex = argv[++i];
        else if (!strcmp(a, "-b") && v) {
            if (genie_backend_parse(argv[++i], &opt.backend) != GENIE_OK)
                die("-b", GENIE_EINVAL);
        } else if (!zBase)
            zBase = a;
        else if (!zQueries)
            zQueries = a;
        else {
            fprintf(stderr, "usage: sets_exact_bench BASE QUERIES [-k K] [-n N] [-b BACKEND] [-t THREADS] [-r REPEAT] "
                            "[-R RECALL] [-T MIN_SIMILARITY] [-o ANSWERS] [-i INDEX]\n");
            return 2;
        }
    }
    if (!zBase || !zQueries)
        return 2;
    char zDefault[1024];
    if (!zIndex) {
        const char *zTmp = getenv("TMPDIR");
        snprintf(zDefault, sizeof zDefault, "%s/sets_exact_bench.genie", zTmp && *zTmp ? zTmp : "/tmp");
        zIndex = zDefault;
    }
    struct stat sb, si;
    double tBuild = -1;
    if (stat(zBase, &sb) != 0 || stat(zIndex, &si) != 0 || si.st_mtime < sb.st_mtime) {
        lines base;
        read_lines(zBase, 0, &base);
        double t0 = util_now();
        genie_set_builder *b;
        genie_status rc = genie_set_builder_new(&b, NULL, NULL);
        for (size_t i = 0; rc == GENIE_OK && i < base.n; i++)
            rc = genie_set_builder_add(b, base.az[i], base.an[i]);
        if (rc == GENIE_OK)
            rc = genie_set_builder_write(b, zIndex);
        if (rc != GENIE_OK)
            die("building", rc);
        genie_set_builder_free(b);
        tBuild = util_now() - t0;
    }
    genie_index *idx;
    genie_status rc = genie_index_open(zIndex, &idx);
    if (rc != GENIE_OK)
        die("opening", rc);
    genie_index_info info;
    genie_index_get_info(idx, &info);
    lines q;
    read_lines(zQueries, n, &q);
    n = q.n;
    printf("collection: %s, %llu sets, %llu elements, %llu postings (MinHash and elements); %zu queries of %s; "
           "k %u; backend %s; threads %u; build %.2f s\n",
           zBase, (unsigned long long)info.n_objects, (unsigned long long)info.n_words,
           (unsigned long long)info.n_postings, n, zQueries, k, genie_backend_name(opt.backend), opt.threads,
           tBuild);

    genie_set_options so = {.k = minSim > 0 ? 0 : k, .exact = 1, .min_similarity = minSim};
    run first = search(idx, &q, n < 64 ? n : 64, &so, &opt, 1);
    genie_set_results_free(first.r);
    run ex = search(idx, &q, n, &so, &opt, repeat);
    genie_search_stats st;
    genie_set_results_stats(ex.r, &st);
    set_params p;
    set_exact_out work;
    if (set_index_params(idx, &p) != GENIE_OK ||
        set_exact_search(idx, &p, 0, genie_index_parts(idx), q.az, q.an, NULL, n, 0, so.k, minSim, &opt, &work) !=
            GENIE_OK)
        die("the exact search's work", GENIE_EINVAL);
    set_exact_out_free(&work);
    uint64_t nHit = 0;
    for (size_t i = 0; i < n; i++) {
        size_t m;
        genie_set_results_get(ex.r, i, &m);
        nHit += m;
    }
    printf("exact: first call (64 queries) %.3f s; %zu queries in %.3f s (%.1f queries/s), backend %s, "
           "prepare %.3f s, engine %.3f s; %llu answers; work: %llu counted, %llu probed, %llu scored\n",
           first.seconds, n, ex.seconds, (double)n / ex.seconds, genie_backend_name(st.backend), st.prepare_seconds,
           st.match_seconds, (unsigned long long)nHit, (unsigned long long)work.work.counted,
           (unsigned long long)work.work.probed, (unsigned long long)work.work.scored);
    if (zOut) {
        FILE *f = fopen(zOut, "w");
        for (size_t i = 0; f && i < n; i++) {
            size_t m;
            const genie_set_hit *h = genie_set_results_get(ex.r, i, &m);
            for (size_t j = 0; j < m; j++)
                fprintf(f, "%zu\t%zu\t%u\t%.17g\n", i + 1, j + 1, h[j].object, h[j].similarity);
        }
        if (f)
            fclose(f);
    }
    if (minSim == 0 && !exactOnly) {
        double est = 0;
        uint32_t K = minhash_k(idx, k, target, &est);
        if (K) {
            genie_set_options mo = {.k = k, .candidates = K};
            run mh = search(idx, &q, n, &mo, &opt, repeat);
            genie_search_stats ms;
            genie_set_results_stats(mh.r, &ms);
            printf("minhash: recall target %.2f: K = %u (estimate %.4f); %zu queries in %.3f s (%.1f queries/s), "
                   "prepare %.3f s, match %.3f s, re-rank %.3f s; recall@%u measured %.4f; exact / minhash time "
                   "%.2f\n",
                   target, K, est, n, mh.seconds, (double)n / mh.seconds, ms.prepare_seconds, ms.match_seconds,
                   ms.rerank_seconds, k, recall_at_k(mh.r, ex.r, n, k), ex.seconds / mh.seconds);
            genie_set_results_free(mh.r);
        } else {
            printf("minhash: recall target %.2f: no K up to 4096 reaches it\n", target);
        }
        for (int withTarget = 0; withTarget < 2; withTarget++) {
            genie_set_options ao = {.k = k, .recall = withTarget ? target : 0};
            run au = search(idx, &q, n, &ao, &opt, repeat);
            genie_set_plan plan;
            genie_set_results_plan(au.r, &plan);
            printf("auto%s: %s (%s), K %u; %.3f s (%.1f queries/s); estimated exact %.3g s, minhash %.3g s\n",
                   withTarget ? " with the recall target" : " (default)", method_name(plan.method), plan.reason,
                   plan.candidates, au.seconds, (double)n / au.seconds, plan.exact_cost, plan.minhash_cost);
            genie_set_results_free(au.r);
        }
    }
    genie_set_results_free(ex.r);
    genie_index_close(idx);
    free(q.aBuf);
    free(q.az);
    free(q.an);
    return 0;
}
