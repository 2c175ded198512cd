/*
 * `genie build --type metric` and `genie search` on a metric index: the
 * List of Clusters (Gil-Costa, Marin and Reyes, "Parallel query processing
 * on distributed clustering indexes", J. Discrete Algorithms 7, 2009,
 * sections 2-3), exact range and k-NN search under l2, l1, cosine (vectors),
 * edit (strings) or jaccard (sets).  See docs/METRIC.md.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/metric.h"
#include "cli.h"
#include "cli_search.h"
#include "json_out.h"
#include "util/clock.h"

extern const itype itype_metric;

static const char zBuildHelp[] =
    "Usage: genie build --type metric --metric M [options] -o INDEX INPUT...\n"
    "\n"
    "Build a List of Clusters (Gil-Costa, Marin and Reyes 2009, section 2)\n"
    "for exact metric search.\n"
    "Objects: for l2, l1, cosine one vector file (.fvecs, .bvecs, .ivecs,\n"
    ".npy, .json, IDX; gzip allowed); for edit one string per line, for\n"
    "jaccard one set per line (elements separated by white space or by\n"
    "--separator), of each INPUT ('-' is standard input).  Object ids are\n"
    "0, 1, ... in input order.  Each cluster is a center and its K nearest\n"
    "remaining objects, stored with their distances to the center; the\n"
    "center-to-center distances are stored too (section 3.1).\n"
    "\n"
    "  -o, --output FILE        the index file to write\n"
    "  -t, --type metric        this type\n"
    "      --metric M           l2, l1, cosine, edit or jaccard (required; -m,\n"
    "                           deprecated: -m is a build's hash functions)\n"
    "      --cluster-size K     objects per cluster besides the center,\n"
    "                           1..1048576 (default 32; -K, deprecated: -K is\n"
    "                           --candidates)\n"
    "      --centers H          farthest (default: the object with the largest\n"
    "                           sum of distances to the centers so far) or random\n"
    "      --center-distances W auto (default: when at most 4096 clusters),\n"
    "                           yes or no\n"
    "      --seed S             seed of the center choice (default 0)\n"
    "  -s, --separator C        jaccard: element separator, one byte or 'tab'\n"
    "  -j, --threads N          build threads (default: all cores)\n"
    "  -L, --sublist-length N   (accepted for uniformity; a metric index has no lists)\n"
    CLI_PART_HELP
    "  -q, --quiet              no summary on standard error\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  genie build -t metric --metric edit --cluster-size 16 -o words.genie \\\n"
    "        /usr/share/dict/american-english\n";

typedef struct str_list {
    char **az;
    size_t *an;
    size_t n, nCap;
} str_list;

static genie_status add_line(void *ctx, const char *z, size_t n)
{
    str_list *l = ctx;
    if (l->n == l->nCap) {
        size_t cap = l->nCap ? 2 * l->nCap : 1024;
        char **az = realloc(l->az, cap * sizeof *az);
        if (az)
            l->az = az;
        size_t *an = realloc(l->an, cap * sizeof *an);
        if (an)
            l->an = an;
        if (!az || !an)
            return GENIE_ENOMEM;
        l->nCap = cap;
    }
    char *c = malloc(n + 1);
    if (!c)
        return GENIE_ENOMEM;
    memcpy(c, z, n);
    c[n] = 0;
    l->az[l->n] = c;
    l->an[l->n++] = n;
    return GENIE_OK;
}

static void str_list_free(str_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->az[i]);
    free(l->az);
    free(l->an);
}

enum { OPT_CENTERS = 0x200, OPT_MATRIX, OPT_SEED, OPT_METRIC, OPT_CLUSTER_SIZE };

/* The metric build's own options (cli_parse_build parses the shared ones). */
typedef struct lc_build_opts {
    genie_lc_params p;
    int haveMetric;
} lc_build_opts;

static int lc_build_option(void *ctx, int c, const char *zArg)
{
    lc_build_opts *d = ctx;
    uint64_t v;
    switch (c) {
    case 'm':
        cli_deprecated("genie build -t metric", c, "--metric");
        /* fall through */
    case OPT_METRIC:
        if (genie_lc_metric_parse(zArg, &d->p.metric) != GENIE_OK)
            return cli_usage_error("build", "--metric must be l2, l1, cosine, edit or jaccard, not '%s'", zArg);
        d->haveMetric = 1;
        return CLI_EXIT_OK;
    case 'K':
        cli_deprecated("genie build -t metric", c, "--cluster-size");
        /* fall through */
    case OPT_CLUSTER_SIZE:
        if (!cli_parse_u64(zArg, 1, 1u << 20, &v))
            return cli_usage_error("build", "--cluster-size must be 1..1048576, not '%s'", zArg);
        d->p.cluster_size = (uint32_t)v;
        return CLI_EXIT_OK;
    case OPT_CENTERS:
        if (genie_lc_centers_parse(zArg, &d->p.centers) != GENIE_OK)
            return cli_usage_error("build", "--centers must be farthest or random, not '%s'", zArg);
        return CLI_EXIT_OK;
    case OPT_MATRIX:
        if (strcmp(zArg, "auto") == 0)
            d->p.center_distances = 0;
        else if (strcmp(zArg, "yes") == 0)
            d->p.center_distances = 1;
        else if (strcmp(zArg, "no") == 0)
            d->p.center_distances = -1;
        else
            return cli_usage_error("build", "--center-distances must be auto, yes or no, not '%s'", zArg);
        return CLI_EXIT_OK;
    case OPT_SEED:
        if (!cli_parse_u64(zArg, 0, UINT64_MAX, &v))
            return cli_usage_error("build", "--seed must be a non-negative integer, not '%s'", zArg);
        d->p.seed = v;
        return CLI_EXIT_OK;
    case 's':
        if (!cli_parse_separator(zArg, &d->p.separator))
            return cli_usage_error("build", "--separator must be one byte (not a newline) or 'tab', not '%s'",
                               zArg);
        return CLI_EXIT_OK;
    case 'j':
        if (!cli_parse_u64(zArg, 1, 4096, &v))
            return cli_usage_error("build", "--threads must be 1..4096, not '%s'", zArg);
        d->p.threads = (unsigned)v;
        return CLI_EXIT_OK;
    default: return CLI_OPTION_UNKNOWN;
    }
}

/* -m and -K: deprecated letters (cli.h, short options) */
#define BUILD_SHORT "m:K:s:j:"
static const struct option aBuildOpt[] = {
    {"metric", required_argument, 0, OPT_METRIC},  {"cluster-size", required_argument, 0, OPT_CLUSTER_SIZE},
    {"centers", required_argument, 0, OPT_CENTERS}, {"center-distances", required_argument, 0, OPT_MATRIX},
    {"seed", required_argument, 0, OPT_SEED},     {"separator", required_argument, 0, 's'},
    {"threads", required_argument, 0, 'j'},       {0, 0, 0, 0}};

static int lc_cli_build(int argc, char **argv)
{
    lc_build_opts bo;
    memset(&bo, 0, sizeof bo);
    cli_build_args a;
    int st = cli_parse_build(argc, argv, BUILD_SHORT, aBuildOpt, zBuildHelp, lc_build_option, &bo, &a);
    if (st != CLI_GO_ON)
        return st;
    const char *zOut = a.zOut;
    genie_build_options opt = a.opt;
    genie_lc_params p = bo.p;
    int quiet = a.quiet, haveMetric = bo.haveMetric;
    if (!haveMetric)
        return cli_usage_error("build", "no metric (--metric l2|l1|cosine|edit|jaccard)");
    if (!zOut)
        return cli_usage_error("build", "no output file (-o INDEX)");
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    if (p.separator && p.metric != GENIE_LC_JACCARD)
        return cli_usage_error("build", "--separator is for --metric jaccard");
    int vectors = p.metric == GENIE_LC_L2 || p.metric == GENIE_LC_L1 || p.metric == GENIE_LC_COSINE;
    if (vectors && argc - optind != 1)
        return cli_usage_error("build", "vectors come from one input file");
    double t0 = util_now();
    genie_status rc;
    int status = CLI_EXIT_OK;
    uint64_t n = 0;
    if (vectors) {
        genie_vectors base;
        memset(&base, 0, sizeof base);
        rc = genie_vectors_read(argv[optind], &base);
        if (rc == GENIE_OK) {
            n = base.n;
            rc = genie_lc_build_vectors(&base, &p, &opt, zOut);
        }
        genie_vectors_free(&base);
    } else {
        str_list l;
        memset(&l, 0, sizeof l);
        rc = GENIE_OK;
        status = cli_feed_lines(argv + optind, argc - optind, add_line, &l);
        n = l.n;
        if (status == CLI_EXIT_OK)
            rc = genie_lc_build_strings((const char *const *)l.az, l.an, l.n, &p, &opt, zOut);
        str_list_free(&l);
    }
    if (status != CLI_EXIT_OK)
        return status;
    if (rc != GENIE_OK)
        return cli_fail(rc);
    if (!quiet)
        fprintf(stderr, "genie: wrote %s: %llu objects, metric %s, clusters of %u, in %.2f s\n", zOut,
                (unsigned long long)n, genie_lc_metric_name(p.metric), p.cluster_size ? p.cluster_size : 32,
                util_now() - t0);
    return CLI_EXIT_OK;
}

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]     (a metric index)\n"
    "\n"
    "Exact search of a List of Clusters: with --radius R alone, every object\n"
    "within distance R of the query (range search); with -k K, the K nearest\n"
    "(k-NN, section 3.3 of the paper), only those within R with --radius.\n"
    "QUERIES: a vector file (vector metrics; required), or one string / set\n"
    "per line (edit, jaccard; default standard input).  Answers are nearest\n"
    "first, ties by smaller object id, exactly what comparing the query with\n"
    "every object gives.  Distances: l2 Euclidean, l1 sum of absolute\n"
    "differences, cosine 1 - cos(angle), edit Levenshtein, jaccard\n"
    "1 - |A n B| / |A u B|.\n"
    "\n"
    "Output, one line per answer (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> distance\n"
    "With --show a fifth column holds the stored string or set (tab, newline\n"
    "and backslash written \\t \\n \\\\).\n"
    "\n"
    "      --radius R          range search radius, or the k-NN limit (-r,\n"
    "                          deprecated: -r is a vectors search's radius)\n"
    "  -k, --k K               the K nearest neighbours (no default, where the\n"
    "                          other types have 10: --radius alone is a range\n"
    "                          search, which takes no k; give -k, --radius or\n"
    "                          both)\n"
    "      --clusters F:N      search clusters F .. F+N-1 only (N = 0: to the end)\n"
    "      --brute-force       compare every object (the baseline)\n"
    CLI_BACKEND_HELP
    "                          (-b on a metric index: l2, l1, cosine and edit\n"
    "                          run on a GPU with cuda, and with auto when one\n"
    "                          is usable; jaccard and --brute-force on the\n"
    "                          CPU; -j: the threads over queries)\n"
    CLI_FILTER_HELP
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each answer's stored string or set\n"
    CLI_VERBOSE_HELP
    "                          (before it, per query: its answers and the\n"
    "                          distances computed)\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

/* The metric search's own: its totals. */
typedef struct lc_cli {
    uint64_t nHit, nDist;
    double seconds;
} lc_cli;

static int parse_clusters(const char *z, itype_options *o)
{
    char *end;
    unsigned long long f = strtoull(z, &end, 10);
    if (end == z || *end != ':' || f > UINT32_MAX)
        return 0;
    const char *z2 = end + 1;
    unsigned long long n = strtoull(z2, &end, 10);
    if (end == z2 || *end || n > UINT32_MAX)
        return 0;
    o->firstCluster = (uint32_t)f;
    o->nClusters = (uint32_t)n;
    return 1;
}

enum { OPT_BRUTE = 0x300, OPT_CLUSTERS, OPT_RADIUS };
/* -r: a deprecated letter (cli.h, short options) */
#define SEARCH_SHORT CLI_SEARCH_SHORT_OPTIONS "r:" CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    CLI_SEARCH_LONG_OPTIONS, {"radius", required_argument, 0, OPT_RADIUS},
    {"brute-force", no_argument, 0, OPT_BRUTE}, {"clusters", required_argument, 0, OPT_CLUSTERS},
    CLI_BACKEND_LONG_OPTIONS, CLI_FILTER_LONG_OPTIONS, {0, 0, 0, 0}};

static int parse_lc_search(int argc, char **argv, cli_search *s)
{
    static const itype_spelling spell = {.zK = "-k K", .zCandidates = "-K", .zCertify = "--certify",
                                         .zRadius = "--radius R"};
    itype_options *o = &s->o;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, SEARCH_SHORT, aSearchOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", ch, optarg, &s->eng, &st) || cli_search_option(s, ch, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (ch) {
        case 'r':
            cli_deprecated("genie search (metric index)", ch, "--radius");
            /* fall through */
        case OPT_RADIUS: {
            char *end;
            double r = strtod(optarg, &end);
            if (end == optarg || *end || !(r >= 0) || !isfinite(r))
                return cli_usage_error("search", "--radius must be a number >= 0, not '%s'", optarg);
            o->maxDistance = r;
            break;
        }
        case OPT_BRUTE: o->bruteForce = 1; break;
        case OPT_CLUSTERS:
            if (!parse_clusters(optarg, o))
                return cli_usage_error("search", "--clusters must be FIRST:COUNT, not '%s'", optarg);
            break;
        case 'h': cli_help(zSearchHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    char zErr[128];
    if (s->pType->xCheck(NULL, o, &spell, zErr, sizeof zErr))
        return cli_usage_error("search", "%s", zErr);
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return CLI_EXIT_OK;
}

/* -v: each query's distances, after its answers. */
static void lc_query_verbose(cli_search *s, uint64_t queryNo, const itype_answer *a)
{
    (void)s;
    fprintf(stderr, "genie: query %llu: %zu answers, %llu distances\n", (unsigned long long)queryNo, a->n,
            (unsigned long long)a->distances);
}

/* After each chunk: the totals. */
static genie_status lc_chunk_done(cli_search *s, const itype_results *r)
{
    lc_cli *c = s->pCtx;
    c->nDist += r->st.verified;
    c->seconds += r->st.total_seconds;
    for (size_t q = 0; q < r->nQuery; q++) {
        itype_answer a;
        itype_results_answer(s->pType, r, q, &a);
        c->nHit += a.n;
    }
    return GENIE_OK;
}

/* Vector queries come from a file (strings from standard input by default). */
static int lc_opened(cli_search *s, const char *zIndex, const char *zQueries)
{
    (void)zIndex;
    if (s->ix.query == ITYPE_QUERY_VECTOR && !zQueries)
        return cli_usage_error("search", "a vector metric index needs a QUERIES file");
    return CLI_EXIT_OK;
}

static void lc_summary(cli_search *s)
{
    const lc_cli *c = s->pCtx;
    const genie_lc_info *info = s->ix.pState;
    fprintf(stderr, "genie: %llu queries, %llu answers; %.1f distances per query (%s of %llu objects), %.3f s\n",
            (unsigned long long)s->nQuery, (unsigned long long)c->nHit,
            s->nQuery ? (double)c->nDist / (double)s->nQuery : 0.0, s->o.bruteForce ? "brute force" : "LC",
            (unsigned long long)info->n_objects, c->seconds);
}

static int lc_cli_search(int argc, char **argv, const char *zIndex)
{
    cli_search s;
    cli_search_init(&s, &itype_metric);
    lc_cli c;
    memset(&c, 0, sizeof c);
    int status = parse_lc_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    s.pCtx = &c;
    s.xOpened = lc_opened;
    s.xDone = lc_chunk_done;
    s.xSummary = lc_summary;
    if (s.verbose)
        s.xQuery = lc_query_verbose;
    return cli_search_main(&s, argc, argv, zIndex, NULL);
}

/* ------------------------------------------------------------- entry */

/* The index's List of Clusters (validated as it is read): the metric says how queries are written. */
static genie_status lc_open(itype_index *ix)
{
    genie_lc_info *info = malloc(sizeof *info);
    if (!info)
        return GENIE_ENOMEM;
    genie_status rc = genie_lc_index_info(ix->idx, info);
    if (rc != GENIE_OK) {
        free(info);
        return rc;
    }
    ix->pState = info;
    ix->dim = info->dim;
    ix->query = info->dim ? ITYPE_QUERY_VECTOR : ITYPE_QUERY_LINE;
    return GENIE_OK;
}

static void lc_close(itype_index *ix)
{
    free(ix->pState);
}

static genie_status lc_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                              const itype_batch *q, itype_results *out)
{
    genie_lc_options lo;
    memset(&lo, 0, sizeof lo);
    lo.k = o->k;
    lo.radius = o->maxDistance >= 0 ? o->maxDistance : 0;
    lo.bounded = o->k && o->maxDistance >= 0;
    lo.backend = eng->backend;
    lo.threads = eng->threads;
    lo.filter = o->filter;
    lo.brute_force = o->bruteForce;
    lo.first_cluster = o->firstCluster;
    lo.n_clusters = o->nClusters;
    genie_lc_results *r = NULL;
    genie_status rc;
    if (ix->dim) {
        genie_vectors v = {q->nQuery, q->dim, (float *)(uintptr_t)q->aVec}; /* read only */
        rc = genie_lc_search_vectors(ix->idx, &v, &lo, &r);
    } else {
        rc = genie_lc_search_strings(ix->idx, q->azText, q->anText, q->nQuery, &lo, &r);
    }
    out->pNative = r;
    if (r) {
        out->nQuery = genie_lc_results_queries(r);
        genie_lc_results_stats(r, &out->st);
    }
    return rc;
}

static void lc_answer(const itype_results *r, size_t q, itype_answer *a)
{
    a->aHit = genie_lc_results_get(r->pNative, q, &a->n);
    a->distances = genie_lc_results_distances(r->pNative, q);
}

static void lc_free(void *pNative)
{
    genie_lc_results_free(pNative);
}

static void lc_tsv(const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    const genie_lc_hit *aHit = a->aHit;
    for (size_t i = 0; i < a->n; i++) {
        printf("%llu\t%zu\t%u\t%.6g", (unsigned long long)queryNo, i + 1, aHit[i].object, aHit[i].distance);
        cli_put_record(p->src.idx, aHit[i].object, p->show);
        putchar('\n');
    }
}

static void lc_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    json_out_lc_hits(b, p->src.idx, queryNo, a->aHit, a->n, a->distances, p->show);
}

/* A search is a range search (radius), a k-NN search (k), or a k-NN search within the radius. */
static const char *lc_check(const itype_index *ix, const itype_options *o, const itype_spelling *sp, char *zErr,
                            size_t nErr)
{
    (void)ix;
    if (o->k || o->maxDistance >= 0)
        return NULL;
    snprintf(zErr, nErr, "give %s (range search) or %s (k nearest)", sp->zRadius, sp->zK);
    return zErr;
}

/* genie info: the List of Clusters. */
static int lc_info(const genie_index *idx, const char *zPath)
{
    (void)zPath;
    genie_lc_info lc;
    genie_status rc = genie_lc_index_info(idx, &lc);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    printf("metric: %s\ndim: %u\nclusters: %u\ncluster_size: %u\ncenters: %s\ncenter_distances: %s\n",
           genie_lc_metric_name(lc.metric), lc.dim, lc.n_clusters, lc.cluster_size, genie_lc_centers_name(lc.centers),
           lc.has_center_distances ? "yes" : "no");
    return CLI_EXIT_OK;
}

/* genie serve: the metric, and the dimension of vector queries. */
static void lc_info_json(const itype_index *ix, json_buf *b)
{
    const genie_lc_info *info = ix->pState;
    json_buf_printf(b, ",\"metric\":\"%s\"", genie_lc_metric_name(info->metric));
    if (info->dim)
        json_buf_printf(b, ",\"dimension\":%u", info->dim);
}

static const itype_option aLcOption[] = {
    ITYPE_OPTION("k", ITYPE_OPT_UINT, k, 1, GENIE_LC_MAX_K),
    ITYPE_OPTION("radius", ITYPE_OPT_REAL, maxDistance, 0, HUGE_VAL),
    ITYPE_OPTION("show", ITYPE_OPT_BOOL, show, 0, 1),
    ITYPE_OPTION("brute_force", ITYPE_OPT_BOOL, bruteForce, 0, 1),
    {NULL, 0, 0, 0, 0, 0, 0}};

/* Writes: strings or sets (one a line), or vectors, by the index's metric (ix->query). */
static genie_status lc_add(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                           uint64_t *aOut, char *zErr, size_t nErr)
{
    return ix->query == ITYPE_QUERY_VECTOR ? itype_add_vectors(w, ix, p, aIn, aOut, zErr, nErr)
                                           : itype_add_strings(w, ix, p, aIn, aOut, zErr, nErr);
}

static const itype_writes lc_writes = {0, lc_add};

const itype itype_metric = {
    .zName = "metric",
    .zAbout = "exact range and k-NN search under l2, l1, cosine, edit or jaccard (List of Clusters)",
    .zNoRecords = "a metric index of vectors stores none",
    .type = GENIE_TYPE_METRIC,
    .maxK = GENIE_LC_MAX_K,
    .defaultK = 0,
    .zWhyDefaultK = "--radius alone is a range search, which takes no k: give -k, --radius or both",
    .query = ITYPE_QUERY_LINE,
    .zJsonQuery = "a string (a string or a set, as in the index)",
    .aOption = aLcOption,
    .szHit = sizeof(genie_lc_hit),
    .xCliBuild = lc_cli_build,
    .xCliSearch = lc_cli_search,
    .cliBuild = {BUILD_SHORT, aBuildOpt, zBuildHelp},
    .cliSearch = {SEARCH_SHORT, aSearchOpt, zSearchHelp},
    .xCliInfo = lc_info,
    .xOpen = lc_open,
    .xClose = lc_close,
    .xCheck = lc_check,
    .xSearch = lc_search,
    .xAnswer = lc_answer,
    .xFree = lc_free,
    .xTsv = lc_tsv,
    .xJson = lc_json,
    .xInfoJson = lc_info_json,
    .pWrites = &lc_writes,
};
