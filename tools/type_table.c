/*
 * genie build --type table / genie search on a table index (Zhou et al. (GENIE) V-C).
 *
 * Both hand the work to the library's table front-end (genie_table_*):
 * building reads one CSV or ARFF file; searching reads query rows from a
 * CSV or ARFF file whose header names the columns to match, in chunks so
 * any number of queries runs in bounded memory.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/table.h"
#include "cli.h"
#include "search_output.h"

#define TABLE_QUERIES_PER_CHUNK 8192

static const char zBuildHelp[] =
    "Usage: genie build --type table [options] -o INDEX TABLE\n"
    "\n"
    "Index the rows of TABLE, a CSV file with a header row (RFC 4180 quoting;\n"
    "'-' reads standard input) or an ARFF file (name ending in .arff).  Row i\n"
    "is object i.  A numeric column is cut into equal-width bins between its\n"
    "smallest and largest value; a categorical column gets a dictionary of\n"
    "its values; bins, bounds and dictionaries are stored in the index.  A\n"
    "CSV column is numeric when all its present values are decimal numbers;\n"
    "ARFF numeric attributes are numeric, nominal and string ones categorical.\n"
    "A missing value (empty field or unquoted '?') gives the row no keyword\n"
    "for that column.  Each row is stored as its record (a CSV line).\n"
    "\n"
    "  -o, --output FILE        the index file to write\n"
    "  -t, --type table         this front-end\n"
    "      --bins B             bins per numeric column, 1..16777216\n"
    "                           (default 1024)\n"
    "      --columns SPEC       index only these columns: name[:num|:cat],...\n"
    "                           ':num' forces numeric (every value must be a\n"
    "                           number), ':cat' categorical; the others are\n"
    "                           kept in the records only (default: all)\n"
    "      --no-records         do not store the rows (then 'genie search\n"
    "                           --show' cannot print them)\n"
    "  -L, --sublist-length N   split lists longer than N postings (default 4096)\n"
    CLI_PART_HELP
    "  -q, --quiet              no progress on standard error (shown on a\n"
    "                           terminal after the first second)\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  genie build -t table --bins 1024 -o credit.genie credit-g.arff\n";

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]\n"
    "\n"
    "INDEX is a table index.  Each row of QUERIES (CSV with a header row, or\n"
    "ARFF if the name ends in .arff; default: standard input as CSV) is one\n"
    "query; its header names the columns to match, any subset of the table's\n"
    "in any order.  Per column one item: a numeric value matches rows whose\n"
    "bin is within the radius of the value's bin (a value outside the built\n"
    "range counts as the first or last bin); a categorical value matches rows\n"
    "with exactly that value.  A missing value (empty or unquoted '?') or a\n"
    "category the table never held matches nothing.  The answer is the top-k\n"
    "rows by the sum of the weights of the matching columns, ties by smaller\n"
    "row number; rows matching nothing are never returned.\n"
    "\n"
    "Output, one line per hit (queries and ranks count from 1, objects are\n"
    "row numbers from 0):\n"
    "  query_no <TAB> rank <TAB> object <TAB> - <TAB> count [<TAB> row]\n"
    "With --json one JSON object per query instead:\n"
    "  {\"query\":N,\"hits\":[{\"rank\",\"object\",\"label\":null,\"count\"[,\"record\"]}]}\n"
    "\n"
    "  -k, --k N               results per query, >= 1 (default 10)\n"
    "      --radius R          radius in bins of every numeric column\n"
    "      --radius COL=R      radius of column COL (default 50); repeatable,\n"
    "                          applied in order\n"
    "      --weight W          weight 1..255 of every column\n"
    "      --weight COL=W      weight of column COL (default 1); repeatable\n"
    "  -m, --min-count N       leave out rows whose count is below N\n"
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --show              print each hit's row as a sixth column, with\n"
    "                          tab, newline and backslash written \\t \\n \\\\\n"
    "      --json              one JSON object per query instead of TSV\n"
    "  -q, --quiet             no notices on standard error\n"
    "  -h, --help              show this help\n"
    "\n"
    "Example:\n"
    "  genie search -k 5 --radius 20 --weight purpose=3 credit.genie q.csv\n";

static void on_build_progress(void *ctx, uint64_t done)
{
    cli_progress_update(ctx, done, 0);
}

static int table_build_option(void *ctx, int c, const char *zArg)
{
    genie_table_options *t = ctx;
    uint64_t v;
    switch (c) {
    case 'B':
        if (!cli_parse_u64(zArg, 1, 16777216, &v))
            return cli_usage_error("build", "--bins must be 1..16777216, not '%s'", zArg);
        t->bins = (uint32_t)v;
        return CLI_EXIT_OK;
    case 'C': t->columns = zArg; return CLI_EXIT_OK;
    case 'N': t->no_records = 1; return CLI_EXIT_OK;
    default: return CLI_OPTION_UNKNOWN;
    }
}

int table_cli_build(int argc, char **argv)
{
    static const struct option aOpt[] = {{"bins", required_argument, 0, 'B'},
                                         {"columns", required_argument, 0, 'C'},
                                         {"no-records", no_argument, 0, 'N'},
                                         {0, 0, 0, 0}};
    genie_table_options topt = {0, NULL, 0};
    cli_build_args a;
    int st = cli_parse_build(argc, argv, NULL, aOpt, zBuildHelp, table_build_option, &topt, &a);
    if (st != CLI_GO_ON)
        return st;
    if (optind + 1 != argc)
        return cli_usage_error("build", "--type table reads exactly one TABLE file");
    cli_progress prog;
    cli_progress_start(&prog, "building: rows", a.quiet);
    a.opt.progress = on_build_progress;
    a.opt.progress_ctx = &prog;
    genie_status rc = genie_table_build(argv[optind], &topt, &a.opt, a.zOut);
    cli_progress_end(&prog);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}

/* ------------------------------------------------------------- search */

/* "--radius R" / "--radius COL=R" and the same for --weight. */
static int apply_setting(genie_table *t, const char *zArg, int isWeight)
{
    const char *zEq = strrchr(zArg, '=');
    const char *zNum = zEq ? zEq + 1 : zArg;
    uint64_t v;
    if (!cli_parse_u64(zNum, isWeight ? 1 : 0, isWeight ? 255 : 16777216, &v))
        return cli_usage_error("search", "--%s '%s': expected %s", isWeight ? "weight" : "radius", zArg,
                               isWeight ? "W or COL=W with W in 1..255" : "R or COL=R with R in 0..16777216");
    char *zCol = zEq ? strndup(zArg, (size_t)(zEq - zArg)) : NULL;
    if (zEq && !zCol)
        return cli_fail(GENIE_ENOMEM);
    genie_status rc = isWeight ? genie_table_set_weight(t, zCol, (uint32_t)v) : genie_table_set_radius(t, zCol, (uint32_t)v);
    free(zCol);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_usage_error("search", "%s", genie_last_error());
}

typedef struct table_search_args {
    genie_search_options opt;
    uint32_t minCount;
    int show, json, quiet;
    struct {
        int isWeight;
        const char *zArg;
    } *aSetting; /* --radius and --weight, in order; argc entries */
    size_t nSetting;
} table_search_args;

static int parse_search(int argc, char **argv, table_search_args *a)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},      {"min-count", required_argument, 0, 'm'},
        {"radius", required_argument, 0, 'r'}, {"weight", required_argument, 0, 'w'},
        {"show", no_argument, 0, 's'},         {"quiet", no_argument, 0, 'q'},
        {"json", no_argument, 0, 'J'},
        {"help", no_argument, 0, 'h'},         CLI_ENGINE_LONG_OPTIONS,
        CLI_FILTER_LONG_OPTIONS,               {0, 0, 0, 0}};
    int c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:m:qh" CLI_ENGINE_SHORT_OPTIONS, aOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", c, optarg, &a->opt, &st) || cli_filter_option("search", c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'k':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("search", "-k must be an integer 1..4294967295, not '%s'", optarg);
            a->opt.k = (uint32_t)v;
            break;
        case 'm':
            if (!cli_parse_u64(optarg, 0, UINT32_MAX, &v))
                return cli_usage_error("search", "--min-count must be 0..4294967295, not '%s'", optarg);
            a->minCount = (uint32_t)v;
            break;
        case 'r':
        case 'w':
            a->aSetting[a->nSetting].isWeight = c == 'w';
            a->aSetting[a->nSetting].zArg = optarg;
            a->nSetting++;
            break;
        case 's': a->show = 1; break;
        case 'J': a->json = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h': fputs(zSearchHelp, stdout); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return CLI_EXIT_OK;
}

static int run_queries(const genie_index *idx, genie_table *t, const char *zQueries, table_search_args *a)
{
    genie_queries *q = NULL;
    genie_table_reader *r = NULL;
    genie_status rc;
    /* TSV or, with --json, one JSON object per query: genie search's printer (a table has no labels). */
    search_output out = {{idx, NULL, NULL}, a->json, a->show, {NULL, 0, 0, 0}};
    search_output_init(&out);
    if ((rc = genie_queries_new(&q)) != GENIE_OK)
        goto fail;
    if ((rc = genie_table_reader_open(&r, t, zQueries)) != GENIE_OK)
        goto fail;
    uint64_t done = 0;
    int noticed = a->quiet;
    for (;;) {
        size_t n;
        genie_queries_clear(q);
        if ((rc = genie_table_reader_read(r, q, TABLE_QUERIES_PER_CHUNK, a->minCount, &n)) != GENIE_OK)
            goto fail;
        if (n == 0)
            break;
        genie_results *res;
        genie_search_stats stats;
        if ((rc = genie_search_with_stats(idx, q, &a->opt, &res, &stats)) != GENIE_OK)
            goto fail;
        if (!noticed && a->opt.backend == GENIE_BACKEND_AUTO && genie_cuda_built() &&
            stats.backend != GENIE_BACKEND_CUDA) {
            fprintf(stderr, "genie: no usable GPU; using the cpu backend\n");
            noticed = 1;
        }
        int printed = search_output_results(&out, res, done + 1);
        genie_results_free(res);
        if (printed != 0) {
            rc = GENIE_ENOMEM;
            goto fail;
        }
        done += n;
    }
    genie_table_reader_close(r);
    genie_queries_free(q);
    search_output_free(&out);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "genie: cannot write the results\n");
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
fail:
    fflush(stdout);
    genie_table_reader_close(r);
    genie_queries_free(q);
    search_output_free(&out);
    return cli_fail(rc);
}

int table_cli_search(int argc, char **argv, const char *zIndex)
{
    table_search_args a;
    memset(&a, 0, sizeof a);
    a.opt.k = 10;
    a.aSetting = calloc((size_t)argc, sizeof *a.aSetting);
    if (!a.aSetting)
        return cli_fail(GENIE_ENOMEM);
    genie_index *idx = NULL;
    genie_table *t = NULL;
    genie_filter *filter = NULL;
    int st = parse_search(argc, argv, &a);
    if (st != CLI_EXIT_OK)
        goto done;
    const char *zQueries = optind + 1 < argc ? argv[optind + 1] : "-";
    genie_status rc = genie_index_open(zIndex, &idx);
    if (rc == GENIE_OK)
        rc = genie_table_open(idx, &t);
    if (rc != GENIE_OK) {
        st = cli_fail(rc);
        goto done;
    }
    genie_index_info info;
    genie_index_get_info(idx, &info);
    if (a.show && !info.has_records) {
        st = cli_usage_error("search", "--show: %s stores no rows (built with --no-records)", zIndex);
        goto done;
    }
    for (size_t i = 0; i < a.nSetting && st == CLI_EXIT_OK; i++)
        st = apply_setting(t, a.aSetting[i].zArg, a.aSetting[i].isWeight);
    if (st == CLI_EXIT_OK)
        st = cli_filter_make("search", idx, t, NULL, NULL, &filter);
    a.opt.filter = filter;
    if (st == CLI_EXIT_OK)
        st = run_queries(idx, t, zQueries, &a);
done:
    genie_filter_free(filter);
    genie_table_free(t);
    genie_index_close(idx);
    free(a.aSetting);
    return st;
}
