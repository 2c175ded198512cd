/*
 * genie search: read queries in chunks, answer each chunk, print it.
 * Reading in chunks keeps memory bounded for query files of any length.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "search_output.h"

#define QUERIES_PER_CHUNK 8192

static const char zHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]\n"
    "\n"
    "Answer each query of QUERIES (default: standard input) with the top-k\n"
    "objects of INDEX by match count: count descending, ties by smaller\n"
    "object id; objects with count 0 are never returned.\n"
    "\n"
    "Queries take the form of the index:\n"
    "  keyword index: one query per line, items separated by white space,\n"
    "                 each 'lo-hi' or 'keyword', optionally ':weight' (1..255),\n"
    "                 e.g. '3 10-20:2'; an empty line is a query with no items\n"
    "  text index:    one document per line (or per record, see --delimiter)\n"
    "\n"
    "Output, one line per hit (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> label <TAB> count\n"
    "label is '-' when the index has none.  With --show a sixth column holds\n"
    "the stored record, with tab, newline and backslash written \\t \\n \\\\.\n"
    "\n"
    "  -k, --k N               results per query, >= 1 (default 10)\n"
    "  -m, --min-count N       leave out objects whose count is below N\n"
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "  -d, --delimiter LINE    text queries: records are blocks of lines\n"
    "                          between lines equal to LINE (e.g. '%')\n"
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each hit's stored record\n"
    "  -q, --quiet             no progress or notices on standard error\n"
    "  -h, --help              show this help\n";

typedef struct search_progress {
    cli_progress bar;
    uint64_t base;
} search_progress;

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)total;
    search_progress *p = ctx;
    cli_progress_update(&p->bar, p->base + done, 0);
}

static int parse_search_options(int argc, char **argv, genie_search_options *opt, uint32_t *pMin,
                                const char **pDelim, search_output *o, int *pQuiet)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},         {"min-count", required_argument, 0, 'm'},
        {"delimiter", required_argument, 0, 'd'}, {"json", no_argument, 0, 'J'},
        {"show", no_argument, 0, 's'},            {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},            CLI_ENGINE_LONG_OPTIONS,
        CLI_FILTER_LONG_OPTIONS,                  {0, 0, 0, 0}};
    int c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:m:d:qh" CLI_ENGINE_SHORT_OPTIONS, aOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", c, optarg, opt, &st) || cli_filter_option("search", c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'k':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("search", "-k must be an integer 1..4294967295, not '%s'", optarg);
            opt->k = (uint32_t)v;
            break;
        case 'm':
            if (!cli_parse_u64(optarg, 0, UINT32_MAX, &v))
                return cli_usage_error("search", "--min-count must be 0..4294967295, not '%s'", optarg);
            *pMin = (uint32_t)v;
            break;
        case 'd': *pDelim = optarg; break;
        case 'J': o->json = 1; break;
        case 's': o->show = 1; break;
        case 'q': *pQuiet = 1; break;
        case 'h': fputs(zHelp, stdout); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    if (*pDelim && !**pDelim)
        return cli_usage_error("search", "--delimiter must not be empty");
    return CLI_EXIT_OK;
}

static int run_search(genie_index *idx, genie_query_reader *qr, genie_search_options *opt, uint32_t minCount,
                      search_output *o, int quiet)
{
    genie_queries *q = NULL;
    genie_status rc = genie_queries_new(&q);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    search_progress prog;
    cli_progress_start(&prog.bar, "searching: queries", quiet);
    prog.base = 0;
    opt->progress = on_progress;
    opt->progress_ctx = &prog;
    int status = CLI_EXIT_OK, noticed = quiet;
    for (;;) {
        size_t n;
        genie_queries_clear(q);
        rc = genie_query_reader_read(qr, q, QUERIES_PER_CHUNK, minCount, &n);
        if (rc != GENIE_OK || n == 0)
            break;
        genie_results *r;
        genie_search_stats stats;
        rc = genie_search_with_stats(idx, q, opt, &r, &stats);
        if (rc != GENIE_OK)
            break;
        if (!noticed && opt->backend == GENIE_BACKEND_AUTO && genie_cuda_built() &&
            stats.backend != GENIE_BACKEND_CUDA) {
            fprintf(stderr, "genie: no usable GPU; using the cpu backend\n");
            noticed = 1;
        }
        cli_progress_end(&prog.bar);
        int printed = search_output_results(o, r, prog.base + 1);
        genie_results_free(r);
        if (printed != 0) {
            status = CLI_EXIT_FAIL;
            break;
        }
        prog.base += n;
    }
    cli_progress_end(&prog.bar);
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    if (fflush(stdout) != 0 && status == CLI_EXIT_OK) {
        fprintf(stderr, "genie: cannot write the results\n");
        status = CLI_EXIT_FAIL;
    }
    genie_queries_free(q);
    return status;
}

int cmd_search(int argc, char **argv)
{
    /* An index made by a front-end with options of its own: hand over. */
    genie_index_type type;
    const char *zFrontendIndex = cli_find_index_arg(argc, argv, &type);
    const cli_frontend *fe = zFrontendIndex ? cli_frontend_by_type(type) : NULL;
    if (fe)
        return fe->xSearch(argc, argv, zFrontendIndex);
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.k = 10;
    search_output o;
    memset(&o, 0, sizeof o);
    search_output_init(&o);
    uint32_t minCount = 0;
    const char *zDelim = NULL;
    int quiet = 0;
    int st = parse_search_options(argc, argv, &opt, &minCount, &zDelim, &o, &quiet);
    if (st != CLI_EXIT_OK) {
        search_output_free(&o);
        return st;
    }
    const char *zIndex = argv[optind];
    const char *zQueries = optind + 1 < argc ? argv[optind + 1] : "-";
    genie_index *idx;
    genie_status rc = genie_index_open(zIndex, &idx);
    if (rc != GENIE_OK) {
        search_output_free(&o);
        return cli_fail(rc);
    }
    genie_index_info info;
    genie_index_get_info(idx, &info);
    o.src.idx = idx;
    genie_query_reader *qr = NULL;
    genie_filter *filter = NULL;
    if (o.show && !info.has_records)
        st = cli_usage_error("search", "--show: %s stores no records (built with --no-records?)", zIndex);
    else if ((st = cli_filter_make("search", idx, NULL, NULL, NULL, &filter)) != CLI_EXIT_OK)
        ;
    else if ((rc = genie_query_reader_open(&qr, zQueries, idx, zDelim)) != GENIE_OK)
        st = cli_fail(rc);
    else {
        opt.filter = filter;
        st = run_search(idx, qr, &opt, minCount, &o, quiet);
    }
    genie_query_reader_close(qr);
    genie_filter_free(filter);
    genie_index_close(idx);
    search_output_free(&o);
    return st;
}
