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
#include "cli_search.h"
#include "counts.h"

extern const itype itype_table;

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
    "  -t, --type table         this type\n"
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
    "      --radius R          radius in bins of every numeric column (no -r:\n"
    "                          -r is a vectors search's radius)\n"
    "      --radius COL=R      radius of column COL (default 50); repeatable,\n"
    "                          applied in order\n"
    "      --weight W          weight 1..255 of every column\n"
    "      --weight COL=W      weight of column COL (default 1); repeatable\n"
    "      --min-count N       leave out rows whose count is below N (-m,\n"
    "                          deprecated: -m is a build's hash functions)\n"
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --show              print each hit's row as a sixth column, with\n"
    "                          tab, newline and backslash written \\t \\n \\\\\n"
    "      --json              one JSON object per query instead of TSV\n"
    CLI_VERBOSE_HELP
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

#define BUILD_SHORT ""
static const struct option aBuildOpt[] = {{"bins", required_argument, 0, 'B'},
                                          {"columns", required_argument, 0, 'C'},
                                          {"no-records", no_argument, 0, 'N'},
                                          {0, 0, 0, 0}};

static int table_cli_build(int argc, char **argv)
{
    genie_table_options topt = {0};
    cli_build_args a;
    int st = cli_parse_build(argc, argv, BUILD_SHORT, aBuildOpt, zBuildHelp, table_build_option, &topt, &a);
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

/* The table search's own: --radius and --weight, in order (argc entries). */
typedef struct table_search_args {
    struct {
        int isWeight;
        const char *zArg;
    } *aSetting;
    size_t nSetting;
} table_search_args;

#define SEARCH_SHORT CLI_SEARCH_SHORT_OPTIONS "m:" CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    CLI_SEARCH_LONG_OPTIONS, CLI_MIN_COUNT_LONG_OPTION, {"radius", required_argument, 0, 'r'},
    {"weight", required_argument, 0, 'w'}, CLI_ENGINE_LONG_OPTIONS, CLI_FILTER_LONG_OPTIONS, {0, 0, 0, 0}};

static int parse_search(int argc, char **argv, cli_search *s, table_search_args *a)
{
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, SEARCH_SHORT, aSearchOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", c, optarg, &s->eng, &st) || cli_search_option(s, c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'r':
        case 'w':
            a->aSetting[a->nSetting].isWeight = c == 'w';
            a->aSetting[a->nSetting].zArg = optarg;
            a->nSetting++;
            break;
        case 'h': cli_help(zSearchHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return CLI_EXIT_OK;
}

/* The --radius and --weight settings, in order. */
static int table_opened(cli_search *s, const char *zIndex, const char *zQueries)
{
    (void)zIndex;
    (void)zQueries;
    const table_search_args *a = s->pCtx;
    int st = CLI_EXIT_OK;
    for (size_t i = 0; i < a->nSetting && st == CLI_EXIT_OK; i++)
        st = apply_setting(s->ix.pState, a->aSetting[i].zArg, a->aSetting[i].isWeight);
    return st;
}

static int table_cli_search(int argc, char **argv, const char *zIndex)
{
    cli_search s;
    cli_search_init(&s, &itype_table);
    table_search_args a;
    memset(&a, 0, sizeof a);
    a.aSetting = calloc((size_t)argc, sizeof *a.aSetting);
    if (!a.aSetting)
        return cli_fail(GENIE_ENOMEM);
    int st = parse_search(argc, argv, &s, &a);
    s.pCtx = &a;
    s.xOpened = table_opened;
    if (st == CLI_EXIT_OK)
        st = cli_search_main(&s, argc, argv, zIndex, "-");
    free(a.aSetting);
    return st;
}

/* ------------------------------------------------------------- entry */

static genie_status table_open(itype_index *ix)
{
    genie_table *t = NULL;
    genie_status rc = genie_table_open(ix->idx, &t);
    ix->pState = t;
    return rc;
}

static void table_close(itype_index *ix)
{
    genie_table_free(ix->pState);
}

static genie_status table_reader_open(const itype_index *ix, const char *zPath, const char *zDelim, void **pp)
{
    (void)zDelim;
    return genie_table_reader_open((genie_table_reader **)pp, ix->pState, zPath);
}

static genie_status table_reader_read(void *p, genie_queries *q, size_t max, uint32_t minCount, size_t *pn)
{
    return genie_table_reader_read(p, q, max, minCount, pn);
}

static void table_reader_close(void *p)
{
    genie_table_reader_close(p);
}

/* Query files: rows of a CSV or ARFF file whose header names the columns. */
static const itype_reader table_reader = {table_reader_open, table_reader_read, table_reader_close};

/* A batch's settings: the defaults (radius 50, weight 1), then the request's, in order. */
static genie_status table_prepare(const itype_index *ix, const itype_options *o)
{
    genie_table *t = ix->pState;
    genie_status rc = genie_table_set_radius(t, NULL, 50);
    if (rc == GENIE_OK)
        rc = genie_table_set_weight(t, NULL, 1);
    for (size_t i = 0; i < o->nSetting && rc == GENIE_OK; i++) {
        const itype_setting *p = &o->aSetting[i];
        rc = p->isWeight ? genie_table_set_weight(t, p->zColumn, p->value)
                         : genie_table_set_radius(t, p->zColumn, p->value);
    }
    return rc;
}

static genie_status table_add_query(const itype_index *ix, genie_queries *q, const itype_query *one,
                                    uint32_t minCount)
{
    return genie_table_add_query(ix->pState, q, one->azColumn, one->azValue, one->nCell, minCount);
}

/* genie serve: the columns and how each is matched. */
static void table_info_json(const itype_index *ix, json_buf *b)
{
    genie_table *t = ix->pState;
    json_buf_puts(b, ",\"columns\":[");
    for (size_t c = 0; c < genie_table_columns(t); c++) {
        genie_column_kind kind;
        const char *z = genie_table_column(t, c, &kind);
        json_buf_puts(b, c ? ",{\"name\":" : "{\"name\":");
        json_buf_string(b, z, strlen(z));
        json_buf_printf(b, ",\"kind\":\"%s\"}",
                        kind == GENIE_COLUMN_NUMERIC ? "numeric"
                        : kind == GENIE_COLUMN_CATEGORICAL ? "categorical"
                                                           : "stored");
    }
    json_buf_puts(b, "]");
}

/* --where: the rows meeting a condition on their stored values. */
static genie_status table_where(const itype_index *ix, const char *zCond, genie_filter *f)
{
    return genie_table_where(ix->pState, ix->idx, zCond, f);
}

/* Append @p z as a CSV field: quoted, quotes doubled, when it holds a comma, a quote or a line break. */
static void put_csv_field(json_buf *b, const char *z)
{
    if (!strpbrk(z, ",\"\r\n")) {
        json_buf_puts(b, z);
        return;
    }
    json_buf_put(b, "\"", 1);
    for (const char *p = z; *p; p++) {
        if (*p == '"')
            json_buf_put(b, "\"", 1);
        json_buf_put(b, p, 1);
    }
    json_buf_put(b, "\"", 1);
}

/*
 * genie serve's rows ({column: value} objects) as the CSV lines of the
 * table's columns in their order that genie_writer_add_records takes: a
 * column a row leaves out, or gives null, is missing (an empty field).
 */
static genie_status table_add(genie_writer *w, const itype_index *ix, const itype_objects *p, const uint64_t *aIn,
                              uint64_t *aOut, char *zErr, size_t nErr)
{
    const genie_table *t = ix->pState;
    size_t nCol = genie_table_columns(t);
    genie_column_kind kind;
    for (size_t i = 0; i < p->n; i++)
        for (size_t j = p->aStart[i]; j < p->aStart[i + 1]; j++) {
            size_t c = 0;
            while (c < nCol && strcmp(p->azText[j], genie_table_column(t, c, &kind)) != 0)
                c++;
            if (c == nCol) {
                snprintf(zErr, nErr, "objects[%zu]: the table has no column '%s'", i, p->azText[j]);
                return GENIE_EINVAL;
            }
        }
    json_buf b;
    json_buf_init(&b);
    size_t *aAt = calloc(p->n + 1, sizeof *aAt);
    const char **azRow = malloc((p->n ? p->n : 1) * sizeof *azRow);
    size_t *anRow = malloc((p->n ? p->n : 1) * sizeof *anRow);
    genie_status rc = aAt && azRow && anRow ? GENIE_OK : GENIE_ENOMEM;
    for (size_t i = 0; rc == GENIE_OK && i < p->n; i++) {
        for (size_t c = 0; c < nCol; c++) {
            const char *zCol = genie_table_column(t, c, &kind), *zValue = NULL;
            for (size_t j = p->aStart[i]; j < p->aStart[i + 1]; j++)
                if (strcmp(p->azText[j], zCol) == 0)
                    zValue = p->azValue[j];
            if (c)
                json_buf_put(&b, ",", 1);
            if (zValue)
                put_csv_field(&b, zValue);
        }
        aAt[i + 1] = b.n;
    }
    if (rc == GENIE_OK && b.oom)
        rc = GENIE_ENOMEM;
    for (size_t i = 0; rc == GENIE_OK && i < p->n; i++) {
        azRow[i] = b.z ? b.z + aAt[i] : "";
        anRow[i] = aAt[i + 1] - aAt[i];
    }
    if (rc == GENIE_OK)
        rc = itype_add_done(genie_writer_add_records(w, azRow, anRow, p->n, aIn, aOut), zErr, nErr);
    else
        snprintf(zErr, nErr, "out of memory for %zu rows", p->n);
    json_buf_free(&b);
    free(aAt);
    free(azRow);
    free(anRow);
    return rc;
}

static const itype_writes table_writes = {0, table_add};

static const itype_option aTableOption[] = {
    COUNTS_OPTIONS,
    {"radius", ITYPE_OPT_COLUMNS, 0, 0, 16777216, 0, 0},
    {"weight", ITYPE_OPT_COLUMNS, 0, 1, 255, 0, 1},
    {NULL, 0, 0, 0, 0, 0, 0}};

const itype itype_table = {
    .zName = "table",
    .zAbout = "rows of a CSV or ARFF table, numeric columns binned, categorical ones exact",
    .zNoRecords = "built with --no-records",
    .type = GENIE_TYPE_TABLE,
    .maxK = GENIE_SEARCH_MAX_K,
    .defaultK = 10,
    .query = ITYPE_QUERY_ROW,
    .zJsonQuery = "an object {column: value}",
    .aOption = aTableOption,
    .xCliBuild = table_cli_build,
    .xCliSearch = table_cli_search,
    .cliBuild = {BUILD_SHORT, aBuildOpt, zBuildHelp},
    .cliSearch = {SEARCH_SHORT, aSearchOpt, zSearchHelp},
    .xOpen = table_open,
    .xClose = table_close,
    .pReader = &table_reader,
    .xPrepare = table_prepare,
    .xAddQuery = table_add_query,
    COUNTS_MEMBERS,
    .xInfoJson = table_info_json,
    .xWhere = table_where,
    .pWrites = &table_writes,
};
