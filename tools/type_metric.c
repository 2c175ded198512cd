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
#include "json_out.h"
#include "util/clock.h"

#define LC_QUERIES_PER_CHUNK 8192

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
    "  -m, --metric M           l2, l1, cosine, edit or jaccard (required)\n"
    "  -K, --cluster-size K     objects per cluster besides the center,\n"
    "                           1..1048576 (default 32)\n"
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
    "  genie build -t metric -m edit -K 16 -o words.genie /usr/share/dict/words\n";

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

static int parse_separator(const char *z, char *out)
{
    if (strcmp(z, "tab") == 0 || strcmp(z, "\\t") == 0) {
        *out = '\t';
        return 1;
    }
    if (strlen(z) != 1 || z[0] == '\n')
        return 0;
    *out = z[0];
    return 1;
}

enum { OPT_CENTERS = 0x200, OPT_MATRIX, OPT_SEED };

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
        if (genie_lc_metric_parse(zArg, &d->p.metric) != GENIE_OK)
            return cli_usage_error("build", "--metric must be l2, l1, cosine, edit or jaccard, not '%s'", zArg);
        d->haveMetric = 1;
        return CLI_EXIT_OK;
    case 'K':
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
        if (!parse_separator(zArg, &d->p.separator))
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

int lc_cli_build(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"metric", required_argument, 0, 'm'},        {"cluster-size", required_argument, 0, 'K'},
        {"centers", required_argument, 0, OPT_CENTERS}, {"center-distances", required_argument, 0, OPT_MATRIX},
        {"seed", required_argument, 0, OPT_SEED},     {"separator", required_argument, 0, 's'},
        {"threads", required_argument, 0, 'j'},       {0, 0, 0, 0}};
    lc_build_opts bo;
    memset(&bo, 0, sizeof bo);
    cli_build_args a;
    int st = cli_parse_build(argc, argv, "m:K:s:j:", aOpt, zBuildHelp, lc_build_option, &bo, &a);
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
    "  -r, --radius R          range search radius, or the k-NN limit\n"
    "  -k, --k K               the K nearest neighbours\n"
    "      --clusters F:N      search clusters F .. F+N-1 only (N = 0: to the end)\n"
    "      --brute-force       compare every object (the baseline)\n"
    "  -b, --backend NAME      auto (default), cpu or cuda: l2, l1, cosine and\n"
    "                          edit run on a GPU (auto: when one is usable),\n"
    "                          jaccard and --brute-force on the CPU\n"
    "  -j, --threads N         threads over queries (default: all cores)\n"
    CLI_FILTER_HELP
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each answer's stored string or set\n"
    "  -v, --verbose           per query, the distances computed (stderr)\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

typedef struct lc_cli {
    genie_lc_options o;
    int haveRadius, json, show, quiet, verbose;
} lc_cli;

static int parse_clusters(const char *z, genie_lc_options *o)
{
    char *end;
    unsigned long long f = strtoull(z, &end, 10);
    if (end == z || *end != ':' || f > UINT32_MAX)
        return 0;
    const char *z2 = end + 1;
    unsigned long long n = strtoull(z2, &end, 10);
    if (end == z2 || *end || n > UINT32_MAX)
        return 0;
    o->first_cluster = (uint32_t)f;
    o->n_clusters = (uint32_t)n;
    return 1;
}

static int parse_lc_search(int argc, char **argv, lc_cli *s)
{
    enum { OPT_JSON = 0x200, OPT_SHOW, OPT_BRUTE, OPT_CLUSTERS };
    static const struct option aOpt[] = {
        {"radius", required_argument, 0, 'r'},  {"k", required_argument, 0, 'k'},
        {"backend", required_argument, 0, 'b'}, {"threads", required_argument, 0, 'j'},
        {"json", no_argument, 0, OPT_JSON},     {"show", no_argument, 0, OPT_SHOW},
        {"brute-force", no_argument, 0, OPT_BRUTE}, {"clusters", required_argument, 0, OPT_CLUSTERS},
        {"verbose", no_argument, 0, 'v'},       {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},          CLI_FILTER_LONG_OPTIONS,
        {0, 0, 0, 0}};
    int c, st;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "r:k:b:j:vqh", aOpt, NULL)) != -1) {
        if (cli_filter_option("search", c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'r': {
            char *end;
            double r = strtod(optarg, &end);
            if (end == optarg || *end || !(r >= 0) || !isfinite(r))
                return cli_usage_error("search", "--radius must be a number >= 0, not '%s'", optarg);
            s->o.radius = r;
            s->haveRadius = 1;
            break;
        }
        case 'k':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("search", "-k must be an integer 1..4294967295, not '%s'", optarg);
            s->o.k = (uint32_t)v;
            break;
        case 'b':
            if (genie_backend_parse(optarg, &s->o.backend) != GENIE_OK)
                return cli_usage_error("search", "unknown backend '%s'", optarg);
            break;
        case 'j':
            if (!cli_parse_u64(optarg, 1, 4096, &v))
                return cli_usage_error("search", "--threads must be 1..4096, not '%s'", optarg);
            s->o.threads = (unsigned)v;
            break;
        case OPT_JSON: s->json = 1; break;
        case OPT_SHOW: s->show = 1; break;
        case OPT_BRUTE: s->o.brute_force = 1; break;
        case OPT_CLUSTERS:
            if (!parse_clusters(optarg, &s->o))
                return cli_usage_error("search", "--clusters must be FIRST:COUNT, not '%s'", optarg);
            break;
        case 'v': s->verbose = 1; break;
        case 'q': s->quiet = 1; break;
        case 'h': fputs(zSearchHelp, stdout); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (!s->haveRadius && s->o.k == 0)
        return cli_usage_error("search", "give --radius R (range search) or -k K (k nearest)");
    s->o.bounded = s->o.k && s->haveRadius;
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return CLI_EXIT_OK;
}

static void print_results(const lc_cli *s, const genie_index *idx, const genie_lc_results *r, uint64_t first)
{
    for (size_t q = 0; q < genie_lc_results_queries(r); q++) {
        size_t n;
        const genie_lc_hit *aHit = genie_lc_results_get(r, q, &n);
        if (s->json)
            printf("{\"query\":%llu,\"distances\":%llu,\"hits\":[", (unsigned long long)(first + q),
                   (unsigned long long)genie_lc_results_distances(r, q));
        for (size_t i = 0; i < n; i++) {
            const char *z;
            size_t len;
            int has = s->show && genie_index_record(idx, aHit[i].object, &z, &len) == GENIE_OK;
            if (s->json) {
                printf("%s{\"rank\":%zu,\"object\":%u,\"distance\":%.6g", i ? "," : "", i + 1, aHit[i].object,
                       aHit[i].distance);
                if (has) {
                    fputs(",\"text\":", stdout);
                    json_buf jb;
                    json_buf_init(&jb);
                    json_buf_string(&jb, z, len);
                    fwrite(jb.z, 1, jb.n, stdout);
                    json_buf_free(&jb);
                }
                putchar('}');
            } else {
                printf("%llu\t%zu\t%u\t%.6g", (unsigned long long)(first + q), i + 1, aHit[i].object,
                       aHit[i].distance);
                if (has) {
                    putchar('\t');
                    cli_put_escaped(z, len);
                }
                putchar('\n');
            }
        }
        if (s->json)
            fputs("]}\n", stdout);
        if (s->verbose)
            fprintf(stderr, "genie: query %llu: %zu answers, %llu distances\n", (unsigned long long)(first + q), n,
                    (unsigned long long)genie_lc_results_distances(r, q));
    }
}

/* Totals over the chunks of a search. */
typedef struct lc_totals {
    uint64_t nQuery, nHit, nDist;
    double seconds;
} lc_totals;

static void add_totals(lc_totals *t, const genie_lc_results *r)
{
    genie_search_stats st;
    genie_lc_results_stats(r, &st);
    t->nQuery += genie_lc_results_queries(r);
    t->nDist += st.verified;
    t->seconds += st.total_seconds;
    for (size_t q = 0; q < genie_lc_results_queries(r); q++) {
        size_t n;
        genie_lc_results_get(r, q, &n);
        t->nHit += n;
    }
}

static int search_vectors(const lc_cli *s, const genie_index *idx, const char *zQueries, lc_totals *t)
{
    if (!zQueries)
        return cli_usage_error("search", "a vector metric index needs a QUERIES file");
    genie_vectors q;
    memset(&q, 0, sizeof q);
    genie_status rc = genie_vectors_read(zQueries, &q);
    genie_lc_results *r = NULL;
    if (rc == GENIE_OK)
        rc = genie_lc_search_vectors(idx, &q, &s->o, &r);
    if (rc == GENIE_OK) {
        print_results(s, idx, r, 1);
        add_totals(t, r);
    }
    genie_lc_results_free(r);
    genie_vectors_free(&q);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}

static int search_lines(const lc_cli *s, const genie_index *idx, const char *zQueries, lc_totals *t)
{
    cli_lines l;
    if (cli_lines_open(&l, zQueries ? zQueries : "-") != 0)
        return CLI_EXIT_FAIL;
    genie_status rc = GENIE_OK;
    long n;
    while ((n = cli_lines_read(&l, LC_QUERIES_PER_CHUNK)) > 0) {
        genie_lc_results *r;
        rc = genie_lc_search_strings(idx, l.azLine, l.anLine, (size_t)n, &s->o, &r);
        if (rc != GENIE_OK)
            break;
        print_results(s, idx, r, t->nQuery + 1);
        add_totals(t, r);
        genie_lc_results_free(r);
    }
    cli_lines_close(&l);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    return n < 0 ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int lc_cli_search(int argc, char **argv, const char *zIndex)
{
    lc_cli s;
    memset(&s, 0, sizeof s);
    int status = parse_lc_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    const char *zQueries = optind + 1 < argc ? argv[optind + 1] : NULL;
    if (strcmp(argv[optind], zIndex) != 0)
        zQueries = argv[optind];
    genie_index *idx;
    genie_filter *filter;
    if ((status = cli_open_filtered("search", zIndex, &idx, &filter)) != CLI_EXIT_OK)
        return status;
    s.o.filter = filter;
    genie_lc_info info;
    genie_status rc = genie_lc_index_info(idx, &info);
    if (rc != GENIE_OK) {
        genie_filter_free(filter);
        genie_index_close(idx);
        return cli_fail(rc);
    }
    lc_totals t = {0, 0, 0, 0};
    status = info.dim ? search_vectors(&s, idx, zQueries, &t) : search_lines(&s, idx, zQueries, &t);
    if (status == CLI_EXIT_OK && fflush(stdout) != 0) {
        fprintf(stderr, "genie: cannot write the results\n");
        status = CLI_EXIT_FAIL;
    }
    if (status == CLI_EXIT_OK && !s.quiet)
        fprintf(stderr,
                "genie: %llu queries, %llu answers; %.1f distances per query (%s of %llu objects), %.3f s\n",
                (unsigned long long)t.nQuery, (unsigned long long)t.nHit,
                t.nQuery ? (double)t.nDist / (double)t.nQuery : 0.0, s.o.brute_force ? "brute force" : "LC",
                (unsigned long long)info.n_objects, t.seconds);
    genie_filter_free(filter);
    genie_index_close(idx);
    return status;
}
