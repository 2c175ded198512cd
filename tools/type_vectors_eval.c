/*
 * genie eval of a vectors index: the search as genie search runs it
 * (LSH + re-rank, an IVF index's lists, or exact), --repeat times, scored
 * against the exact k nearest neighbours (from --truth, or an exact
 * search): k-recall@k, 1-recall@k and the approximation ratio (Eqn. 13 of
 * Zhou et al., "GENIE: A Generic Inverted Index Framework for Similarity
 * Search on the GPU"), with the search's time; of an IVF index without
 * one nprobe, a table over nprobe.  Queries are read through
 * genie_vectors_read() (fvecs, bvecs, ivecs, npy, IDX, GloVe JSON, any of
 * them gzip'd); the options are parsed by type_vectors_cli.c's
 * parse_vec_opts(), shared with genie search.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "cli.h"
#include "cli_search.h"
#include "type_vectors_cli.h"

/* The vectors entry, through the type table: type_vectors.c refers to this file (vec_cli_eval), not back. */
static const itype *vec_type(void)
{
    return itype_by_type(GENIE_TYPE_VECTORS);
}

const char vec_zEvalHelp[] =
    "Usage: genie eval [options] INDEX QUERIES\n"
    "\n"
    "Search QUERIES in the vectors INDEX (as genie search does) and compare\n"
    "with the exact k nearest neighbours, from --truth or computed exactly.\n"
    "Prints, one 'name: value' per line:\n"
    "  k_recall_at_k  |found top-k ∩ true top-k| / k, averaged (k-recall@k)\n"
    "  one_recall_at_k fraction of queries whose true nearest is in the\n"
    "                 found top-k (1-recall@k)\n"
    "  ratio          approximation ratio, Eqn. 13: mean over queries of\n"
    "                 (1/k) sum_i d(p_i, q) / d(p*_i, q), ranks with d(p*_i, q) = 0\n"
    "                 left out; queries with fewer than k found are left out\n"
    "  seconds, qps   wall time of the search alone, queries per second\n"
    "  seconds_hash, seconds_match, seconds_rerank   LSH: its three steps\n"
    "Of an IVF index, without --nprobe P (one value), --recall or --exact: a\n"
    "table instead, one line per nprobe, 'nprobe refine k_recall_at_k\n"
    "one_recall_at_k qps seconds backend'.\n"
    "\n"
    "  -k, --k N               neighbours (default 10)\n"
    "  -K, --candidates N      candidates re-ranked (IVF-PQ: the refinement\n"
    "                          depth; default as genie search's: for recall@k\n"
    "                          0.9 from INDEX.recall, else 10 k)\n"
    "  -r, --radius R          l2: neighbouring buckets (default 0)\n"
    "      --nprobe P[,P...]   an IVF index: the lists probed; several (up to\n"
    "                          32), or none: the table's lines (1, 2, 4, ... up\n"
    "                          to nlist)\n"
    "      --exact             evaluate the exact search itself\n"
    VEC_PRECISION_HELP
    "      --recall R          choose K and the radius (IVF: nprobe and the\n"
    "                          refinement depth) for an estimated recall@k >= R\n"
    "                          (as genie search does); prints them and the\n"
    "                          estimate\n"
    CLI_ENGINE_HELP
    "      --truth FILE        ground truth .ivecs (at least k ids per query);\n"
    "                          default: exact search on --truth-backend\n"
    "      --truth-backend B   backend of that exact search (default auto)\n"
    "      --truth-out FILE    write the computed ground truth as .ivecs\n"
    "      --limit N           use the first N queries only\n"
    CLI_REPEAT_HELP
    "                          (an exact GPU search keeps the base on the GPU\n"
    "                          after its first run: later runs are warm)\n"
    "      --csv               one CSV line instead: metric,exact,backend,m,\n"
    "                          k,K,r,queries,k_recall,one_recall,ratio,seconds,qps,\n"
    "                          seconds_hash,seconds_match,seconds_rerank (an IVF\n"
    "                          index: nprobe in m's place, the depth in K's)\n"
    "  -h, --help              show this help\n";

const struct option vec_aEvalOption[] = {
    VEC_OPTIONS, {"truth", required_argument, 0, OPT_TRUTH}, {"truth-backend", required_argument, 0, OPT_TRUTH_BACKEND},
    {"truth-out", required_argument, 0, OPT_TRUTH_OUT}, {"limit", required_argument, 0, OPT_LIMIT},
    {"csv", no_argument, 0, OPT_CSV}, {"repeat", required_argument, 0, OPT_REPEAT}, {0, 0, 0, 0}};

static const itype_cli vec_eval_cli = VEC_EVAL_CLI;

/* Search @p q with the entry into @p r (plain arrays: the neighbours, k per query). */
static genie_status run_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                               const genie_vectors *q, itype_results *r)
{
    itype_batch b = {q->n, NULL, NULL, NULL, q->data, q->dim};
    memset(r, 0, sizeof *r);
    return vec_type()->xSearch(ix, o, eng, &b, r);
}

/* The ground truth: ids, k per query, from --truth or an exact search. */
static genie_status load_truth(const vec_cli_opts *o, const itype_index *ix, const genie_vectors *q, uint32_t k,
                               uint32_t **pTruth)
{
    genie_status rc;
    if (o->zTruth) {
        uint32_t *aRows, dim;
        uint64_t n;
        if ((rc = genie_vectors_read_ivecs(o->zTruth, &aRows, &n, &dim)) != GENIE_OK)
            return rc;
        if (n < q->n || dim < k) {
            fprintf(stderr, "genie eval: %s has %llu rows of %u ids; need %llu rows of at least %u\n", o->zTruth,
                    (unsigned long long)n, dim, (unsigned long long)q->n, k);
            free(aRows);
            return GENIE_EINVAL;
        }
        for (uint64_t i = 0; i < q->n; i++)
            memmove(aRows + i * k, aRows + i * dim, k * sizeof *aRows);
        *pTruth = aRows;
        return GENIE_OK;
    }
    itype_options so;
    itype_options_init(&so, vec_type());
    so.k = k;
    so.exact = 1;
    genie_search_options eng;
    memset(&eng, 0, sizeof eng);
    eng.backend = o->truthBackend;
    eng.threads = o->eng.threads;
    itype_results r;
    rc = run_search(ix, &so, &eng, q, &r);
    uint32_t *aTruth = rc == GENIE_OK ? malloc((size_t)(q->n ? q->n : 1) * k * sizeof *aTruth) : NULL;
    if (rc == GENIE_OK && !aTruth)
        rc = GENIE_ENOMEM;
    const genie_neighbor *aOut = r.aHit;
    for (uint64_t i = 0; aTruth && i < q->n * k; i++)
        aTruth[i] = aOut[i].id;
    if (rc == GENIE_OK && o->zTruthOut)
        rc = genie_vectors_write_ivecs(aTruth, q->n, k, o->zTruthOut);
    itype_results_free(vec_type(), &r);
    if (rc != GENIE_OK) {
        free(aTruth);
        return rc;
    }
    *pTruth = aTruth;
    return GENIE_OK;
}

/* Open the index (a vectors index) and read the queries; on failure prints and returns non-zero. */
static int open_inputs(cli_search *s, const char *zIndex, const char *zQueries, uint64_t limit, genie_vectors *q)
{
    int ex = cli_search_open(s, zIndex);
    if (ex != CLI_EXIT_OK)
        return ex;
    genie_status rc = genie_vectors_read(zQueries, q);
    if (rc != GENIE_OK) {
        cli_search_close(s);
        return cli_fail(rc);
    }
    if (limit && limit < q->n)
        q->n = limit;
    return CLI_EXIT_OK;
}

/* What eval measures of one search against the truth. */
typedef struct eval_score {
    double kRecall, oneRecall, ratio;
} eval_score;

static genie_status score_search(const genie_vectors *q, const genie_vectors *base, genie_metric metric, uint32_t k,
                                 const uint32_t *aTruth, const itype_results *run, eval_score *pScore)
{
    const genie_neighbor *aOut = run->aHit;
    const uint32_t *aN = run->aN;
    double sumRecall = 0, sumRatio = 0;
    uint64_t nOne = 0, nRatio = 0;
    for (uint64_t i = 0; i < q->n; i++) {
        const uint32_t *t = aTruth + i * k;
        const genie_neighbor *g = aOut + i * k;
        uint32_t nHit = 0;
        for (uint32_t r = 0; r < aN[i]; r++)
            for (uint32_t j = 0; j < k; j++)
                nHit += g[r].id == t[j];
        sumRecall += (double)nHit / k;
        for (uint32_t r = 0; r < aN[i]; r++)
            if (g[r].id == t[0]) {
                nOne++;
                break;
            }
        if (aN[i] < k)
            continue;
        double sum = 0;
        uint32_t nTerm = 0;
        for (uint32_t r = 0; r < k; r++) {
            if (t[r] >= base->n) {
                fprintf(stderr, "genie eval: ground-truth id %u of query %llu is not below %llu\n", t[r],
                        (unsigned long long)i + 1, (unsigned long long)base->n);
                return GENIE_EINVAL;
            }
            double dTrue = genie_vector_distance(metric, base->data + (size_t)t[r] * base->dim,
                                                 q->data + i * q->dim, q->dim);
            if (dTrue > 0) {
                sum += g[r].distance / dTrue;
                nTerm++;
            }
        }
        if (nTerm) {
            sumRatio += sum / nTerm;
            nRatio++;
        }
    }
    double n = q->n ? (double)q->n : 1;
    pScore->kRecall = sumRecall / n;
    pScore->oneRecall = (double)nOne / n;
    pScore->ratio = nRatio ? sumRatio / (double)nRatio : NAN;
    return GENIE_OK;
}

/*
 * The search --repeat times on the open index and its score: the answers
 * of the last run in @p run (every run gives the same), the stats of the
 * median one in @p pSt.
 */
static genie_status eval_run(const itype_index *ix, const vec_cli_opts *o, const itype_options *so,
                             const genie_vectors *q, const genie_vectors *base, genie_metric metric,
                             const uint32_t *aTruth, itype_results *run, genie_search_stats *pSt, eval_score *sc)
{
    genie_search_stats *aSt = calloc(o->repeat, sizeof *aSt);
    double *aSecs = calloc(o->repeat, sizeof *aSecs);
    genie_status rc = aSt && aSecs ? GENIE_OK : GENIE_ENOMEM;
    for (uint32_t i = 0; rc == GENIE_OK && i < o->repeat; i++) {
        itype_results_free(vec_type(), run);
        rc = run_search(ix, so, &o->eng, q, run);
        aSt[i] = run->st;
        aSecs[i] = run->st.total_seconds;
    }
    if (rc == GENIE_OK) {
        *pSt = aSt[cli_median_index(aSecs, o->repeat)];
        rc = score_search(q, base, metric, so->k, aTruth, run, sc);
    }
    free(aSt);
    free(aSecs);
    return rc;
}

/* An IVF index's eval over several nprobe (--nprobe's, else 1, 2, 4, ... up to nlist): one line each. */
static genie_status eval_sweep(const itype_index *ix, const vec_cli_opts *o, const genie_vectors *q,
                               const genie_vectors *base, const genie_ivf_info *iv, const uint32_t *aTruth)
{
    uint32_t aP[32], nP = 0, maxP = iv->nlist < 2048 ? iv->nlist : 2048;
    if (o->nNprobe) {
        memcpy(aP, o->aNprobe, o->nNprobe * sizeof *aP);
        nP = o->nNprobe;
    } else {
        for (uint32_t p = 1; p < maxP && nP < 31; p *= 2)
            aP[nP++] = p;
        aP[nP++] = maxP;
    }
    printf("# %s, %s, nlist %u, k %u, %llu queries\n", genie_metric_name(iv->metric), iv->pq_m ? "ivf-pq" : "ivf-flat",
           iv->nlist, o->o.k, (unsigned long long)q->n);
    printf("nprobe refine k_recall_at_k one_recall_at_k qps seconds backend\n");
    itype_results run;
    memset(&run, 0, sizeof run);
    genie_status rc = GENIE_OK;
    for (uint32_t i = 0; rc == GENIE_OK && i < nP; i++) {
        itype_options so = o->o;
        so.nprobe = aP[i];
        eval_score sc;
        genie_search_stats st;
        rc = eval_run(ix, o, &so, q, base, iv->metric, aTruth, &run, &st, &sc);
        if (rc == GENIE_OK)
            printf("%u %u %.4f %.4f %.1f %.4f %s\n", st.nprobe, st.candidates, sc.kRecall, sc.oneRecall,
                   st.total_seconds > 0 ? (double)q->n / st.total_seconds : 0.0, st.total_seconds,
                   genie_backend_name(st.backend));
    }
    itype_results_free(vec_type(), &run);
    return rc;
}

/* One search's report: 'name: value' lines, or one CSV line. */
static void eval_print(const vec_cli_opts *o, const genie_vectors *q, genie_metric metric, uint32_t m,
                       const genie_ivf_info *iv, const genie_search_stats *st, const eval_score *sc)
{
    uint32_t k = o->o.k;
    double secs = st->total_seconds;
    int ivf = iv != NULL && !o->o.exact;
    if (o->csv) {
        printf("%s,%d,%s,%u,%u,%u,%u,%llu,%.4f,%.4f,%.4f,%.4f,%.1f,%.4f,%.4f,%.4f\n", genie_metric_name(metric),
               o->o.exact || (st->recall_target > 0 && !st->candidates && !ivf), genie_backend_name(st->backend),
               ivf ? st->nprobe : m, k, st->candidates, st->radius, (unsigned long long)q->n, sc->kRecall,
               sc->oneRecall, sc->ratio, secs, secs > 0 ? (double)q->n / secs : 0.0, st->prepare_seconds,
               st->match_seconds, st->rerank_seconds);
        return;
    }
    int lsh = st->candidates != 0 && !iv;
    printf("metric: %s\nsearch: %s\nbackend: %s\nqueries: %llu\nk: %u\n", genie_metric_name(metric),
           ivf ? (iv->pq_m ? "ivf-pq" : "ivf-flat") : lsh ? "lsh" : "exact", genie_backend_name(st->backend),
           (unsigned long long)q->n, k);
    if (lsh)
        printf("m: %u\ncandidates: %u\nradius: %u\n", m, st->candidates, st->radius);
    if (ivf)
        printf("nlist: %u\nnprobe: %u\nrefine: %u\n", iv->nlist, st->nprobe, st->candidates);
    if (st->recall_target > 0)
        printf("recall_target: %g%s\n", st->recall_target, o->o.recall > 0 ? "" : " (the default)");
    if (st->recall_estimate >= 0)
        printf("recall_estimate: %.4f\n", st->recall_estimate);
    printf("k_recall_at_k: %.4f\none_recall_at_k: %.4f\nratio: %.4f\nseconds: %.4f\nqps: %.1f\n", sc->kRecall,
           sc->oneRecall, sc->ratio, secs, secs > 0 ? (double)q->n / secs : 0.0);
    if (lsh)
        printf("seconds_hash: %.4f\nseconds_match: %.4f\nseconds_rerank: %.4f\n", st->prepare_seconds,
               st->match_seconds, st->rerank_seconds);
}

int vec_cli_eval(int argc, char **argv, const char *zIndex)
{
    (void)zIndex;
    vec_cli_opts o;
    int ex = parse_vec_opts("eval", &vec_eval_cli, argc, argv, &o);
    if (ex >= 0)
        return ex;
    cli_search cs;
    cli_search_init(&cs, vec_type());
    genie_vectors q, base;
    if ((ex = open_inputs(&cs, argv[optind], argv[optind + 1], o.limit, &q)) != CLI_EXIT_OK)
        return ex;
    const itype_index *ix = &cs.ix;
    const genie_ivf_info *iv = ix->pState; /* an IVF index's (vec_open); NULL for LSH */
    genie_lsh_params p;
    memset(&p, 0, sizeof p);
    itype_results run;
    memset(&run, 0, sizeof run);
    uint32_t *aTruth = NULL, k = o.o.k;
    genie_status rc = iv ? GENIE_OK : genie_vectors_index_params(ix->idx, &p);
    genie_metric metric = iv ? iv->metric : p.metric;
    if (rc == GENIE_OK)
        rc = genie_vectors_index_base(ix->idx, &base);
    if (rc == GENIE_OK)
        rc = load_truth(&o, ix, &q, k, &aTruth);
    if (rc == GENIE_OK && o.o.recall) /* the estimate's first computation is not the search's time */
        rc = genie_recall_prepare(ix->idx, o.eng.threads);
    eval_score sc;
    genie_search_stats st;
    if (rc == GENIE_OK && iv && !o.o.exact && !o.o.recall && o.nNprobe != 1)
        rc = eval_sweep(ix, &o, &q, &base, iv, aTruth);
    else if (rc == GENIE_OK && (rc = eval_run(ix, &o, &o.o, &q, &base, metric, aTruth, &run, &st, &sc)) == GENIE_OK)
        eval_print(&o, &q, metric, p.m, iv, &st, &sc);
    itype_results_free(vec_type(), &run);
    free(aTruth);
    genie_vectors_free(&q);
    cli_search_close(&cs);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}
