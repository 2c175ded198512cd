/*
 * `genie build --type sets` and `genie search` on a sets index: one set of
 * strings per line, searched by Jaccard similarity through MinHash and an
 * exact re-rank (docs/SETS.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/sets.h"
#include "cli.h"
#include "json_out.h"

#define SET_QUERIES_PER_CHUNK 8192

/* cli_feed_lines() callback: one input line is one object. */
static genie_status add_set(void *ctx, const char *z, size_t n)
{
    return genie_set_builder_add(ctx, z, n);
}

static const char zBuildHelp[] =
    "Usage: genie build --type sets [options] -o INDEX INPUT...\n"
    "\n"
    "Index sets of strings for Jaccard similarity search: one set per line\n"
    "of each INPUT ('-' is standard input), object ids 0, 1, ... in input\n"
    "order.  Elements are separated by runs of white space (space, tab, CR)\n"
    "or by the --separator byte; empty elements are ignored and repeated\n"
    "elements count once.  An empty line is an empty set, which no query\n"
    "matches.  Each set gets m MinHash keywords (Zhou et al. (GENIE) IV-A, one\n"
    "attribute per hash function) and its line is stored in the index.\n"
    "\n"
    "  -o, --output FILE        the index file to write (replaced only once\n"
    "                           the new index is complete)\n"
    "  -m, --hashes M           MinHash functions, 1..4096 (default 64)\n"
    "      --seed S             seed of the hash functions (default 0)\n"
    "  -s, --separator C        element separator: one byte, or 'tab';\n"
    "                           default: white space\n"
    "  -L, --sublist-length N   split lists longer than N postings (default 4096)\n"
    CLI_PART_HELP
    CLI_RECALL_BUILD_HELP
    "  -q, --quiet              no summary on standard error\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  genie build -t sets -s , -o baskets.genie baskets.txt\n";

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

static int set_build_option(void *ctx, int c, const char *zArg)
{
    genie_set_params *p = ctx;
    uint64_t v;
    switch (c) {
    case 'm':
        if (!cli_parse_u64(zArg, 1, 4096, &v))
            return cli_usage_error("build", "--hashes must be 1..4096, not '%s'", zArg);
        p->hashes = (uint32_t)v;
        return CLI_EXIT_OK;
    case 'S':
        if (!cli_parse_u64(zArg, 0, UINT32_MAX, &v))
            return cli_usage_error("build", "--seed must be 0..4294967295, not '%s'", zArg);
        p->seed = (uint32_t)v;
        return CLI_EXIT_OK;
    case 's':
        if (!parse_separator(zArg, &p->separator))
            return cli_usage_error("build", "--separator must be one byte (not a newline) or 'tab', not '%s'", zArg);
        return CLI_EXIT_OK;
    default:
        return CLI_OPTION_UNKNOWN;
    }
}

int set_cli_build(int argc, char **argv)
{
    static const struct option aOpt[] = {{"hashes", required_argument, 0, 'm'},
                                         {"seed", required_argument, 0, 'S'},
                                         {"separator", required_argument, 0, 's'},
                                         CLI_RECALL_BUILD_OPTION,
                                         {0, 0, 0, 0}};
    genie_set_params p = {64, 0, 0};
    cli_build_args a;
    int status = cli_parse_build(argc, argv, "m:s:", aOpt, zBuildHelp, set_build_option, &p, &a);
    if (status != CLI_GO_ON)
        return status;
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    double t0 = util_now();
    genie_set_builder *sb = NULL;
    genie_status rc = genie_set_builder_new(&sb, &a.opt, &p);
    status = rc == GENIE_OK ? cli_feed_lines(argv + optind, argc - optind, add_set, sb) : CLI_EXIT_OK;
    if (rc == GENIE_OK && status == CLI_EXIT_OK && genie_set_builder_count(sb) == 0) {
        fprintf(stderr, "genie: no sets to index (empty input)\n");
        status = CLI_EXIT_FAIL;
    }
    if (rc == GENIE_OK && status == CLI_EXIT_OK)
        rc = genie_set_builder_write(sb, a.zOut);
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    else if (status == CLI_EXIT_OK && !a.quiet)
        fprintf(stderr, "genie: wrote %s: %llu sets, %u MinHash functions, in %.2f s\n", a.zOut,
                (unsigned long long)genie_set_builder_count(sb), p.hashes, util_now() - t0);
    genie_set_builder_free(sb);
    if (rc == GENIE_OK && status == CLI_EXIT_OK)
        status = cli_build_recall(&a);
    return status;
}

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]     (a sets index)\n"
    "\n"
    "For each query set (one per line of QUERIES, default standard input,\n"
    "parsed like the indexed sets) find the k sets of INDEX with the largest\n"
    "Jaccard similarity |A n B| / |A u B|, ties by smaller object id; sets\n"
    "sharing no element are never returned.  The engine returns the top-K\n"
    "candidates by MinHash match count, re-ranked by exact Jaccard; so a\n"
    "similar set MinHash missed can be missing (--exact compares every set).\n"
    "\n"
    "Output, one line per hit (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> jaccard <TAB> shared <TAB> union <TAB> count\n"
    "jaccard has 6 decimals; count is the MinHash match count (0 with\n"
    "--exact).  With --show an eighth column holds the stored line, with tab,\n"
    "newline and backslash written \\t \\n \\\\.\n"
    "\n"
    "  -k, --k N               answers per query, 1..65536 (default 10)\n"
    "  -K, --candidates N      MinHash candidates per query (default 100;\n"
    "                          raised to k)\n"
    "      --exact             exact Jaccard against every set (ground truth)\n"
    CLI_RECALL_HELP
    CLI_RECALL_VERBOSE_HELP
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each hit's stored line\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

typedef struct set_cli {
    genie_set_options so;
    genie_search_options opt;
    int json, show, quiet, verbose;
} set_cli;

static int parse_set_search(int argc, char **argv, set_cli *s)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'}, {"candidates", required_argument, 0, 'K'},
        {"exact", no_argument, 0, 'E'},   {"json", no_argument, 0, 'J'},
        {"show", no_argument, 0, 's'},    {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},    {"recall", required_argument, 0, 'R'},
        {"verbose", no_argument, 0, 'v'}, CLI_ENGINE_LONG_OPTIONS,
        CLI_FILTER_LONG_OPTIONS,          {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:K:qvh" CLI_ENGINE_SHORT_OPTIONS, aOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", c, optarg, &s->opt, &st) || cli_filter_option("search", c, optarg, &st) ||
            cli_candidate_option("search", c, optarg, &s->so.k, &s->so.candidates, &s->so.recall, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'E': s->so.exact = 1; break;
        case 'v': s->verbose = 1; break;
        case 'J': s->json = 1; break;
        case 's': s->show = 1; break;
        case 'q': s->quiet = 1; break;
        case 'h': fputs(zSearchHelp, stdout); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return cli_check_recall("search", s->so.recall, s->so.k, s->so.exact, s->so.candidates != 0);
}

static int print_set_results(const set_cli *s, const genie_index *idx, const genie_set_results *r, uint64_t first)
{
    json_buf b;
    json_buf_init(&b);
    int status = 0;
    for (size_t q = 0; q < genie_set_results_queries(r) && status == 0; q++) {
        size_t n;
        const genie_set_hit *aHit = genie_set_results_get(r, q, &n);
        if (s->json) {
            json_out_set_hits(&b, idx, first + q, aHit, n, s->show);
            status = json_buf_print_line(&b);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const genie_set_hit *h = &aHit[i];
            const char *z;
            size_t len;
            printf("%llu\t%zu\t%u\t%.6f\t%u\t%u\t%u", (unsigned long long)(first + q), i + 1, h->object,
                   (double)h->shared / h->union_size, h->shared, h->union_size, h->count);
            if (s->show && genie_index_record(idx, h->object, &z, &len) == GENIE_OK) {
                putchar('\t');
                cli_put_escaped(z, len);
            }
            putchar('\n');
        }
    }
    json_buf_free(&b);
    return status;
}

int set_cli_search(int argc, char **argv, const char *zIndex)
{
    set_cli s;
    memset(&s, 0, sizeof s);
    s.so.k = 10;
    int status = parse_set_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    const char *zQueries = optind + 1 < argc ? argv[optind + 1] : "-";
    if (strcmp(argv[optind], zIndex) != 0)
        zQueries = argv[optind];
    genie_index *idx;
    genie_filter *filter;
    if ((status = cli_open_filtered("search", zIndex, &idx, &filter)) != CLI_EXIT_OK)
        return status;
    genie_status rc = GENIE_OK;
    cli_lines l;
    if (cli_lines_open(&l, zQueries) != 0) {
        genie_filter_free(filter);
        genie_index_close(idx);
        return CLI_EXIT_FAIL;
    }
    s.opt.filter = filter;
    uint64_t nQuery = 0;
    double tMatch = 0, tRank = 0;
    genie_backend backend = GENIE_BACKEND_CPU;
    long n;
    while ((n = cli_lines_read(&l, SET_QUERIES_PER_CHUNK)) > 0) {
        genie_set_results *r;
        rc = genie_set_search(idx, l.azLine, l.anLine, (size_t)n, &s.so, &s.opt, &r);
        if (rc != GENIE_OK)
            break;
        if (print_set_results(&s, idx, r, nQuery + 1) != 0) {
            genie_set_results_free(r);
            status = CLI_EXIT_FAIL;
            break;
        }
        genie_search_stats st;
        genie_set_results_stats(r, &st);
        if (s.verbose && nQuery == 0)
            cli_print_recall_choice("search", s.so.recall, s.so.k, &st, 0);
        tMatch += st.match_seconds;
        tRank += st.rerank_seconds;
        backend = st.backend;
        nQuery += (uint64_t)n;
        genie_set_results_free(r);
    }
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    else if (n < 0)
        status = CLI_EXIT_FAIL;
    if (status == CLI_EXIT_OK && fflush(stdout) != 0) {
        fprintf(stderr, "genie: cannot write the results\n");
        status = CLI_EXIT_FAIL;
    }
    if (status == CLI_EXIT_OK && !s.quiet)
        fprintf(stderr, "genie: %llu queries; match %.3f s (%s), exact Jaccard %.3f s\n", (unsigned long long)nQuery,
                tMatch, s.so.exact ? "none" : genie_backend_name(backend), tRank);
    cli_lines_close(&l);
    genie_filter_free(filter);
    genie_index_close(idx);
    return status;
}
