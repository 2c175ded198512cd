/*
 * The vectors front-end's commands:
 *   genie build --type vectors   hash base vectors into an LSH index
 *   genie search (vectors index) k nearest neighbours, LSH + re-rank or exact
 *   genie eval                   recall@k and the approximation ratio (Eqn. 13)
 *   genie lsh-params             the number of hash functions by Eqn. 9
 * All four read vector files through genie_vectors_read() (fvecs, bvecs,
 * ivecs, npy, IDX, GloVe JSON, any of them gzip'd).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "cli.h"
#include "json_out.h"

static const char zBuildHelp[] =
    "Usage: genie build --type vectors [options] -o INDEX BASE\n"
    "\n"
    "Hash the vectors of BASE (.fvecs .bvecs .ivecs .npy .json, or IDX;\n"
    "gzip'd or not) with m LSH functions into an index; each function is one\n"
    "attribute.  The index also stores the vectors (4 bytes per value) for\n"
    "re-ranking and exact search.\n"
    "\n"
    "  -t, --type vectors       this front-end\n"
    "  -o, --output FILE        the index to write (required)\n"
    "      --metric NAME        l2 (E2LSH, default), l1 (random binning +\n"
    "                           MurmurHash3), cosine (sign random projections)\n"
    "  -m, --functions M        hash functions (default 237, the paper's m for\n"
    "                           epsilon = delta = 0.06; see genie lsh-params)\n"
    "      --buckets D          l2, l1: buckets per function (default 67 for l2,\n"
    "                           8192 for l1)\n"
    "      --bits B             cosine: sign bits per function, 1..16 (default 8)\n"
    "      --width W            l2: bucket width (default: each function's range\n"
    "                           over BASE cut into D buckets)\n"
    "      --sigma S            l1: Laplacian kernel width (default: from BASE,\n"
    "                           median nearest-neighbour distance of a sample /\n"
    "                           ln 2)\n"
    "      --seed N             random seed (default 1); same seed, same index\n"
    "  -L, --sublist-length N   longest posting (sub)list (default 4096)\n"
    CLI_PART_HELP
    CLI_RECALL_BUILD_HELP
    "  -q, --quiet              no notices on standard error\n"
    "  -h, --help               show this help\n";

#define PRECISION_HELP                                                                     \
    "      --precision P       with --exact on a GPU: fp32 (default), tf32 or fp16,\n"        \
    "                          the GEMM that bounds the distances; the answers\n"         \
    "                          are the same in each (candidates the bound cannot\n"       \
    "                          rule out are re-ranked by the direct fp32 distance);\n"    \
    "                          ignored on the CPU; l1 takes fp32 alone\n"

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX QUERIES   (INDEX of type vectors)\n"
    "\n"
    "The k nearest base vectors of each vector in QUERIES: the query's LSH\n"
    "buckets, the top-K objects by match count (on the chosen backend), then\n"
    "re-ranked by the true distance; or, with --exact, an exact search.\n"
    "Output, one line per neighbour (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> distance\n"
    "or, with --json, one JSON object per query:\n"
    "  {\"query\":N,\"hits\":[{\"rank\",\"object\",\"distance\"}]}\n"
    "Distances: l2 Euclidean, l1 sum of absolute differences, cosine\n"
    "1 - cos(angle).\n"
    "\n"
    "  -k, --k N               neighbours per query (default 10)\n"
    "  -K, --candidates N      candidates re-ranked, >= k (default 10 k)\n"
    "  -r, --radius R          l2: also match R buckets either side (default 0)\n"
    "      --exact             exact search (GPU: k <= 2048; CPU: k <= 65536);\n"
    "                          any cpu* backend runs it on the CPU, any cuda*\n"
    "                          on the GPU\n"
    PRECISION_HELP
    CLI_RECALL_HELP
    CLI_RECALL_VERBOSE_HELP
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --ivecs FILE        also write the neighbour ids as .ivecs\n"
    "      --json              one JSON object per query instead of TSV\n"
    "  -q, --quiet             no timing line on standard error\n"
    "  -h, --help              show this help\n";

static const char zEvalHelp[] =
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
    "\n"
    "  -k, --k N               neighbours (default 10)\n"
    "  -K, --candidates N      candidates re-ranked (default 10 k)\n"
    "  -r, --radius R          l2: neighbouring buckets (default 0)\n"
    "      --exact             evaluate the exact search itself\n"
    PRECISION_HELP
    "      --recall R          choose K and the radius for an estimated\n"
    "                          recall@k >= R (as genie search does); prints\n"
    "                          them and the estimate\n"
    CLI_ENGINE_HELP
    "      --truth FILE        ground truth .ivecs (at least k ids per query);\n"
    "                          default: exact search on --truth-backend\n"
    "      --truth-backend B   backend of that exact search (default auto)\n"
    "      --truth-out FILE    write the computed ground truth as .ivecs\n"
    "      --limit N           use the first N queries only\n"
    "      --repeat N          run the search N times on the open index and\n"
    "                          report the last (warm: an exact GPU search keeps\n"
    "                          the base on the GPU after its first run; default 1)\n"
    "      --csv               one CSV line instead: metric,exact,backend,m,\n"
    "                          k,K,r,queries,k_recall,one_recall,ratio,seconds,qps,\n"
    "                          seconds_hash,seconds_match,seconds_rerank\n"
    "  -h, --help              show this help\n";

static const char zParamsHelp[] =
    "Usage: genie lsh-params [--epsilon E] [--delta D]\n"
    "\n"
    "The number of hash functions m by Eqn. 9 of Zhou et al. (GENIE) (IV-B1): the\n"
    "largest, over similarities s = 0.01 .. 0.99, of the smallest m with\n"
    "Pr[|c/m - s| <= epsilon] >= 1 - delta, c ~ Binomial(m, s).\n"
    "Defaults epsilon = delta = 0.06 (the paper reports m = 237).\n";

static int parse_backend(const char *z, genie_backend *b)
{
    if (genie_backend_parse(z, b) != GENIE_OK)
        return 0;
    return 1;
}

static int parse_float(const char *z, float *out)
{
    char *e;
    double v = strtod(z, &e);
    if (e == z || *e || !isfinite(v) || v < 0)
        return 0;
    *out = (float)v;
    return 1;
}

static int vec_build_option(void *ctx, int c, const char *zArg)
{
    genie_lsh_params *p = ctx;
    uint64_t v;
    switch (c) {
    case 1:
        if (genie_metric_parse(zArg, &p->metric) != GENIE_OK || p->metric == GENIE_METRIC_IP)
            return cli_usage_error("build", "--metric '%s': l2, l1 or cosine", zArg);
        return CLI_EXIT_OK;
    case 'm':
        if (!cli_parse_u64(zArg, 1, 65536, &v))
            return cli_usage_error("build", "-m '%s': 1..65536", zArg);
        p->m = (uint32_t)v;
        return CLI_EXIT_OK;
    case 2:
        if (!cli_parse_u64(zArg, 2, UINT32_MAX, &v))
            return cli_usage_error("build", "--buckets '%s': at least 2", zArg);
        p->buckets = (uint32_t)v;
        return CLI_EXIT_OK;
    case 3:
        if (!cli_parse_u64(zArg, 1, 16, &v))
            return cli_usage_error("build", "--bits '%s': 1..16", zArg);
        p->bits = (uint32_t)v;
        return CLI_EXIT_OK;
    case 4:
        if (!parse_float(zArg, &p->width) || p->width == 0)
            return cli_usage_error("build", "--width '%s': a positive number", zArg);
        return CLI_EXIT_OK;
    case 5:
        if (!parse_float(zArg, &p->sigma) || p->sigma == 0)
            return cli_usage_error("build", "--sigma '%s': a positive number", zArg);
        return CLI_EXIT_OK;
    case 6:
        if (!cli_parse_u64(zArg, 0, UINT64_MAX, &p->seed))
            return cli_usage_error("build", "--seed '%s': a whole number", zArg);
        return CLI_EXIT_OK;
    default:
        return CLI_OPTION_UNKNOWN;
    }
}

int vec_cli_build(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"metric", required_argument, 0, 1}, {"functions", required_argument, 0, 'm'},
        {"buckets", required_argument, 0, 2}, {"bits", required_argument, 0, 3},
        {"width", required_argument, 0, 4},  {"sigma", required_argument, 0, 5},
        {"seed", required_argument, 0, 6},   CLI_RECALL_BUILD_OPTION, {0, 0, 0, 0}};
    genie_lsh_params p = {.metric = GENIE_METRIC_L2, .seed = 1};
    cli_build_args a;
    int st = cli_parse_build(argc, argv, "m:", aOpt, zBuildHelp, vec_build_option, &p, &a);
    if (st != CLI_GO_ON)
        return st;
    if (optind + 1 != argc)
        return cli_usage_error("build", "one BASE vector file expected");
    if (p.metric != GENIE_METRIC_COSINE && p.bits)
        return cli_usage_error("build", "--bits applies to --metric cosine only");
    if (p.metric != GENIE_METRIC_L2 && p.width > 0)
        return cli_usage_error("build", "--width applies to --metric l2 only");
    if (p.metric != GENIE_METRIC_L1 && p.sigma > 0)
        return cli_usage_error("build", "--sigma applies to --metric l1 only");
    genie_vectors base;
    genie_status rc = genie_vectors_read(argv[optind], &base);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    double t0 = util_now();
    rc = genie_vectors_build(&base, &p, &a.opt, a.zOut);
    if (rc == GENIE_OK && !a.quiet)
        fprintf(stderr, "genie build: %llu vectors of %u dimensions hashed into %s in %.2f s\n",
                (unsigned long long)base.n, base.dim, a.zOut, util_now() - t0);
    genie_vectors_free(&base);
    return rc == GENIE_OK ? cli_build_recall(&a) : cli_fail(rc);
}

/* Options shared by search and eval. */
typedef struct vec_cli_opts {
    genie_vsearch_options so;
    const char *zIvecs, *zTruth, *zTruthOut;
    genie_backend truthBackend;
    uint64_t limit;
    uint32_t repeat; /* eval: runs of the search, the last one reported */
    int quiet, csv, json, verbose;
} vec_cli_opts;

/* Parse search/eval options; returns -1 to go on, else an exit code. */
static int parse_vec_opts(const char *zCmd, const char *zHelp, int argc, char **argv, vec_cli_opts *o)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},         {"candidates", required_argument, 0, 'K'},
        {"radius", required_argument, 0, 'r'},    {"exact", no_argument, 0, 1},
        {"ivecs", required_argument, 0, 2},       {"truth", required_argument, 0, 3},
        {"truth-backend", required_argument, 0, 4}, {"truth-out", required_argument, 0, 5},
        {"limit", required_argument, 0, 6},       {"csv", no_argument, 0, 7},
        {"repeat", required_argument, 0, 8},      {"json", no_argument, 0, 9},
        {"quiet", no_argument, 0, 'q'},           {"help", no_argument, 0, 'h'},
        {"recall", required_argument, 0, 10},     {"verbose", no_argument, 0, 'v'},
        {"precision", required_argument, 0, 11},
        CLI_ENGINE_LONG_OPTIONS,                  CLI_FILTER_LONG_OPTIONS,
        {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->so.k = 10;
    o->repeat = 1;
    int isEval = strcmp(zCmd, "eval") == 0, c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:K:r:qvh" CLI_ENGINE_SHORT_OPTIONS, aOpt, NULL)) != -1) {
        if (!isEval && (c >= 3 && c <= 8))
            return cli_usage_error(zCmd, "option not known to genie search on a vectors index");
        if (isEval && (c == 2 || c == 9))
            return cli_usage_error(zCmd, "--ivecs and --json belong to genie search");
        int st;
        if (cli_engine_option(zCmd, c, optarg, &o->so.search, &st) || cli_filter_option(zCmd, c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            if (isEval && (c == CLI_OPT_FILTER_IDS || c == CLI_OPT_FILTER_LABELS || c == CLI_OPT_WHERE))
                return cli_usage_error(zCmd, "the filter options belong to genie search");
            continue;
        }
        switch (c) {
        case 'k':
            if (!cli_parse_u64(optarg, 1, 65536, &v))
                return cli_usage_error(zCmd, "-k '%s': 1..65536", optarg);
            o->so.k = (uint32_t)v;
            break;
        case 'K':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error(zCmd, "-K '%s': a positive number", optarg);
            o->so.candidates = (uint32_t)v;
            break;
        case 'r':
            if (!cli_parse_u64(optarg, 0, UINT32_MAX, &v))
                return cli_usage_error(zCmd, "-r '%s': a whole number", optarg);
            o->so.radius = (uint32_t)v;
            break;
        case 1:
            o->so.exact = 1;
            break;
        case 2:
            o->zIvecs = optarg;
            break;
        case 3:
            o->zTruth = optarg;
            break;
        case 4:
            if (!parse_backend(optarg, &o->truthBackend))
                return cli_usage_error(zCmd, "unknown backend '%s'", optarg);
            break;
        case 5:
            o->zTruthOut = optarg;
            break;
        case 6:
            if (!cli_parse_u64(optarg, 1, UINT64_MAX, &o->limit))
                return cli_usage_error(zCmd, "--limit '%s': a positive number", optarg);
            break;
        case 7:
            o->csv = 1;
            break;
        case 8:
            if (!cli_parse_u64(optarg, 1, 1000, &v))
                return cli_usage_error(zCmd, "--repeat '%s': 1..1000", optarg);
            o->repeat = (uint32_t)v;
            break;
        case 9:
            o->json = 1;
            break;
        case 10:
            if ((st = cli_parse_recall(zCmd, optarg, &o->so.recall)) != CLI_EXIT_OK)
                return st;
            break;
        case 11:
            if (genie_precision_parse(optarg, &o->so.precision) != GENIE_OK)
                return cli_usage_error(zCmd, "--precision '%s': fp32, tf32 or fp16", optarg);
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(zHelp, stdout);
            return CLI_EXIT_OK;
        default:
            return CLI_EXIT_USAGE;
        }
    }
    if (o->so.candidates && o->so.candidates < o->so.k)
        return cli_usage_error(zCmd, "-K %u is below -k %u", o->so.candidates, o->so.k);
    if (o->so.precision != GENIE_PRECISION_FP32 && !o->so.exact)
        return cli_usage_error(zCmd, "--precision applies to --exact alone");
    if (o->so.recall && o->so.radius)
        return cli_usage_error(zCmd, "--recall chooses the radius itself: give --recall or -r, not both");
    int stRecall = cli_check_recall(zCmd, o->so.recall, o->so.k, o->so.exact, o->so.candidates != 0);
    if (stRecall != CLI_EXIT_OK)
        return stRecall;
    if (optind + 2 != argc)
        return cli_usage_error(zCmd, "INDEX and QUERIES expected");
    return -1;
}

/* Open the index and read the queries; on failure prints and returns non-zero. */
static int open_inputs(const char *zIndex, const char *zQueries, uint64_t limit, genie_index **pIdx,
                       genie_vectors *q)
{
    genie_status rc = genie_index_open(zIndex, pIdx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    genie_index_info info;
    genie_index_get_info(*pIdx, &info);
    if (info.type != GENIE_TYPE_VECTORS) {
        fprintf(stderr, "genie: %s is a %s index, not a vectors index\n", zIndex, genie_index_type_name(info.type));
        genie_index_close(*pIdx);
        return CLI_EXIT_FAIL;
    }
    rc = genie_vectors_read(zQueries, q);
    if (rc != GENIE_OK) {
        genie_index_close(*pIdx);
        return cli_fail(rc);
    }
    if (limit && limit < q->n)
        q->n = limit;
    return 0;
}

/* Search into new result arrays; *pStats: what the search did, total_seconds timed here (the whole call). */
static genie_status run_search(const genie_index *idx, const genie_vectors *q, const genie_vsearch_options *so,
                               genie_neighbor **pOut, uint32_t **pN, genie_search_stats *pStats)
{
    *pOut = malloc((size_t)(q->n ? q->n : 1) * so->k * sizeof **pOut);
    *pN = malloc((size_t)(q->n ? q->n : 1) * sizeof **pN);
    if (!*pOut || !*pN) {
        fputs("genie: out of memory for the results\n", stderr);
        return GENIE_ENOMEM;
    }
    double t0 = util_now();
    genie_status rc = genie_vectors_search(idx, q, so, *pOut, *pN, pStats);
    pStats->total_seconds = util_now() - t0;
    return rc;
}

int vec_cli_search(int argc, char **argv, const char *zIndex)
{
    (void)zIndex;
    vec_cli_opts o;
    int ex = parse_vec_opts("search", zSearchHelp, argc, argv, &o);
    if (ex >= 0)
        return ex;
    genie_index *idx;
    genie_vectors q;
    if ((ex = open_inputs(argv[optind], argv[optind + 1], 0, &idx, &q)) != 0)
        return ex;
    genie_filter *filter = NULL;
    if ((ex = cli_filter_make("search", idx, NULL, NULL, NULL, &filter)) != CLI_EXIT_OK) {
        genie_vectors_free(&q);
        genie_index_close(idx);
        return ex;
    }
    o.so.search.filter = filter;
    genie_neighbor *aOut = NULL;
    uint32_t *aN = NULL, *aIds = NULL;
    genie_search_stats st;
    genie_status rc = run_search(idx, &q, &o.so, &aOut, &aN, &st);
    if (rc == GENIE_OK) {
        json_buf b;
        json_buf_init(&b);
        for (uint64_t i = 0; i < q.n && o.json && rc == GENIE_OK; i++) {
            json_out_vec_hits(&b, i + 1, aOut + i * o.so.k, aN[i]);
            if (json_buf_print_line(&b) != 0)
                rc = GENIE_ENOMEM;
        }
        json_buf_free(&b);
        for (uint64_t i = 0; i < q.n && !o.json; i++)
            for (uint32_t r = 0; r < aN[i]; r++)
                printf("%llu\t%u\t%u\t%.6g\n", (unsigned long long)i + 1, r + 1, aOut[i * o.so.k + r].id,
                       (double)aOut[i * o.so.k + r].distance);
        if (o.verbose)
            cli_print_recall_choice("search", o.so.recall, o.so.k, &st, 1);
        if (!o.quiet) {
            int lowP = o.so.precision != GENIE_PRECISION_FP32;
            fprintf(stderr, "genie search: %llu queries in %.3f s (%s%s%s%s)\n", (unsigned long long)q.n,
                    st.total_seconds, o.so.exact ? "exact, " : "", lowP ? genie_precision_name(o.so.precision) : "",
                    lowP ? ", " : "", genie_backend_name(st.backend));
        }
    }
    if (rc == GENIE_OK && o.zIvecs) {
        /* Rows of k ids; a query with fewer neighbours is padded with -1. */
        aIds = malloc((size_t)(q.n ? q.n : 1) * o.so.k * sizeof *aIds);
        if (!aIds)
            rc = GENIE_ENOMEM;
        for (uint64_t i = 0; aIds && i < q.n; i++)
            for (uint32_t r = 0; r < o.so.k; r++)
                aIds[i * o.so.k + r] = r < aN[i] ? aOut[i * o.so.k + r].id : UINT32_MAX;
        if (aIds)
            rc = genie_vectors_write_ivecs(aIds, q.n, o.so.k, o.zIvecs);
    }
    free(aOut);
    free(aN);
    free(aIds);
    genie_filter_free(filter);
    genie_vectors_free(&q);
    genie_index_close(idx);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}

/* The ground truth: ids, k per query, from --truth or an exact search. */
static genie_status load_truth(const vec_cli_opts *o, const genie_index *idx, const genie_vectors *q, uint32_t k,
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
    genie_vsearch_options so;
    memset(&so, 0, sizeof so);
    so.k = k;
    so.exact = 1;
    so.search.backend = o->truthBackend;
    so.search.threads = o->so.search.threads;
    genie_neighbor *aOut;
    uint32_t *aN;
    genie_search_stats st;
    rc = run_search(idx, q, &so, &aOut, &aN, &st);
    uint32_t *aTruth = rc == GENIE_OK ? malloc((size_t)(q->n ? q->n : 1) * k * sizeof *aTruth) : NULL;
    if (rc == GENIE_OK && !aTruth)
        rc = GENIE_ENOMEM;
    for (uint64_t i = 0; aTruth && i < q->n * k; i++)
        aTruth[i] = aOut[i].id;
    if (rc == GENIE_OK && o->zTruthOut)
        rc = genie_vectors_write_ivecs(aTruth, q->n, k, o->zTruthOut);
    free(aOut);
    free(aN);
    if (rc != GENIE_OK) {
        free(aTruth);
        return rc;
    }
    *pTruth = aTruth;
    return GENIE_OK;
}

int vec_cli_eval(int argc, char **argv)
{
    vec_cli_opts o;
    int ex = parse_vec_opts("eval", zEvalHelp, argc, argv, &o);
    if (ex >= 0)
        return ex;
    genie_index *idx;
    genie_vectors q, base;
    if ((ex = open_inputs(argv[optind], argv[optind + 1], o.limit, &idx, &q)) != 0)
        return ex;
    genie_lsh_params p;
    genie_neighbor *aOut = NULL;
    uint32_t *aN = NULL, *aTruth = NULL, k = o.so.k;
    genie_search_stats st;
    memset(&st, 0, sizeof st);
    genie_status rc = genie_vectors_index_params(idx, &p);
    if (rc == GENIE_OK)
        rc = genie_vectors_index_base(idx, &base);
    if (rc == GENIE_OK)
        rc = load_truth(&o, idx, &q, k, &aTruth);
    if (rc == GENIE_OK && o.so.recall) /* the estimate's first computation is not the search's time */
        rc = genie_recall_prepare(idx, o.so.search.threads);
    for (uint32_t i = 0; rc == GENIE_OK && i < o.repeat; i++) {
        free(aOut);
        free(aN);
        aOut = NULL;
        aN = NULL;
        rc = run_search(idx, &q, &o.so, &aOut, &aN, &st);
    }
    double secs = st.total_seconds;
    if (rc != GENIE_OK)
        goto done;
    double sumRecall = 0, sumRatio = 0;
    uint64_t nOne = 0, nRatio = 0;
    for (uint64_t i = 0; i < q.n; i++) {
        const uint32_t *t = aTruth + i * k;
        const genie_neighbor *g = aOut + i * k;
        uint32_t nHit = 0;
        for (uint32_t r = 0; r < aN[i]; r++)
            for (uint32_t s = 0; s < k; s++)
                nHit += g[r].id == t[s];
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
            if (t[r] >= base.n) {
                rc = GENIE_EINVAL;
                fprintf(stderr, "genie eval: ground-truth id %u of query %llu is not below %llu\n", t[r],
                        (unsigned long long)i + 1, (unsigned long long)base.n);
                goto done;
            }
            double dTrue = genie_vector_distance(p.metric, base.data + (size_t)t[r] * base.dim,
                                                 q.data + i * q.dim, q.dim);
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
    double n = q.n ? (double)q.n : 1;
    double ratio = nRatio ? sumRatio / (double)nRatio : NAN;
    if (o.csv) {
        printf("%s,%d,%s,%u,%u,%u,%u,%llu,%.4f,%.4f,%.4f,%.4f,%.1f,%.4f,%.4f,%.4f\n", genie_metric_name(p.metric),
               o.so.exact || (o.so.recall && !st.candidates), genie_backend_name(st.backend), p.m, k,
               st.candidates, st.radius, (unsigned long long)q.n,
               sumRecall / n, (double)nOne / n, ratio, secs, secs > 0 ? (double)q.n / secs : 0.0,
               st.prepare_seconds, st.match_seconds, st.rerank_seconds);
    } else {
        int lsh = st.candidates != 0;
        printf("metric: %s\nsearch: %s\nbackend: %s\nqueries: %llu\nk: %u\n", genie_metric_name(p.metric),
               lsh ? "lsh" : "exact", genie_backend_name(st.backend), (unsigned long long)q.n, k);
        if (lsh)
            printf("m: %u\ncandidates: %u\nradius: %u\n", p.m, st.candidates, st.radius);
        if (o.so.recall)
            printf("recall_target: %g\nrecall_estimate: %.4f\n", o.so.recall, st.recall_estimate);
        printf("k_recall_at_k: %.4f\none_recall_at_k: %.4f\nratio: %.4f\nseconds: %.4f\nqps: %.1f\n",
               sumRecall / n, (double)nOne / n, ratio, secs, secs > 0 ? (double)q.n / secs : 0.0);
        if (lsh)
            printf("seconds_hash: %.4f\nseconds_match: %.4f\nseconds_rerank: %.4f\n", st.prepare_seconds,
                   st.match_seconds, st.rerank_seconds);
    }
done:
    free(aOut);
    free(aN);
    free(aTruth);
    genie_vectors_free(&q);
    genie_index_close(idx);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}

int vec_cli_lsh_params(int argc, char **argv)
{
    static const struct option aOpt[] = {{"epsilon", required_argument, 0, 'e'},
                                         {"delta", required_argument, 0, 'd'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double eps = 0.06, delta = 0.06;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:d:h", aOpt, NULL)) != -1) {
        char *e;
        switch (c) {
        case 'e':
        case 'd': {
            double v = strtod(optarg, &e);
            if (e == optarg || *e || !(v > 0 && v < 1))
                return cli_usage_error("lsh-params", "'%s': a number between 0 and 1", optarg);
            *(c == 'e' ? &eps : &delta) = v;
            break;
        }
        case 'h':
            fputs(zParamsHelp, stdout);
            return CLI_EXIT_OK;
        default:
            return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc)
        return cli_usage_error("lsh-params", "unexpected argument '%s'", argv[optind]);
    uint32_t m;
    double s;
    genie_status rc = genie_lsh_hash_count(eps, delta, &m, &s);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    printf("epsilon: %g\ndelta: %g\nm: %u\nworst_similarity: %.2f\n", eps, delta, m, s);
    return CLI_EXIT_OK;
}
