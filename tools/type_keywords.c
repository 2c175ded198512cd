/*
 * The keywords and text types: their entries in the type table, `genie
 * build` of both (keyword lines, or text documents through a vocabulary)
 * and `genie search` on them.  They are answered by match count: the
 * search, answers, printing and parts are counts.c's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/text.h"
#include "cli.h"
#include "cli_search.h"
#include "counts.h"

extern const itype itype_keywords;

/* ------------------------------------------------------------ build */

static const char zBuildHelp[] =
    "Usage: genie build [-t keywords|text] [options] -o INDEX INPUT...\n"
    "\n"
    "Build a keywords or text index from INPUT files, read in order ('-' is\n"
    "standard input).  Object ids are 0, 1, 2, ... in input order.\n"
    "  keywords (the default type): one object per line, its keywords as\n"
    "    integers 0..4294967295 separated by white space (an empty line is\n"
    "    an object with no keywords);\n"
    "  text: one document per line (or per record, see --delimiter); words\n"
    "    are lower-cased runs of letters and digits, each distinct word one\n"
    "    keyword of a vocabulary stored in the index.\n"
    "The other types: genie build --help.\n"
    "\n"
    "  -o, --output FILE        the index file to write; an existing file is\n"
    "                           replaced only once the new index is complete\n"
    "  -t, --type TYPE          keywords (default) or text\n"
    "  -d, --delimiter LINE     text: records are the blocks of lines between\n"
    "                           lines equal to LINE ('%' reads fortune files)\n"
    "      --stop-words FILE    text: words in FILE (white-space separated) are\n"
    "                           not indexed\n"
    "      --no-records         text: do not store the documents in the index\n"
    "                           (then 'genie search --show' cannot print them)\n"
    "      --records            keywords: store each input line in the index\n"
    "      --labels             keywords: the first number of each line is the\n"
    "                           object's 64-bit label, not a keyword\n"
    "  -L, --sublist-length N   split lists longer than N postings into\n"
    "                           sublists for GPU load balance (default 4096)\n"
    CLI_PART_HELP
    "  -q, --quiet              no progress on standard error\n"
    "  -h, --help               show this help\n"
    "\n"
    "Examples:\n"
    "  genie build -o sets.genie examples/sets.txt\n"
    "  genie build -t text -d % -o fortunes.genie /usr/share/games/fortunes/fortunes\n";

static void on_build_progress(void *ctx, uint64_t done)
{
    cli_progress_update(ctx, done, 0);
}

static char *read_whole_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* The keywords and text types' own options. */
typedef struct build_input {
    genie_input_options in;
    const char *zStop; /* --stop-words */
} build_input;

static int input_option(void *ctx, int c, const char *zArg)
{
    build_input *b = ctx;
    switch (c) {
    case 't': /* genie build chose this entry by the name: keywords or text */
        b->in.type = strcmp(zArg, "text") == 0 ? GENIE_TYPE_TEXT : GENIE_TYPE_KEYWORDS;
        return CLI_EXIT_OK;
    case 'd': b->in.delimiter = zArg; return CLI_EXIT_OK;
    case 'S': b->zStop = zArg; return CLI_EXIT_OK;
    case 'N': b->in.store_records = 0; return CLI_EXIT_OK;
    case 'R': b->in.store_records = 1; return CLI_EXIT_OK;
    case 'l': b->in.labels = 1; return CLI_EXIT_OK;
    default: return CLI_OPTION_UNKNOWN;
    }
}

#define BUILD_SHORT "d:"
static const struct option aBuildOpt[] = {
    {"delimiter", required_argument, 0, 'd'}, {"stop-words", required_argument, 0, 'S'},
    {"no-records", no_argument, 0, 'N'},     {"records", no_argument, 0, 'R'},
    {"labels", no_argument, 0, 'l'},         {0, 0, 0, 0}};

/* `genie build` of a keywords or text index (-t keywords, -t text, or no -t). */
static int kw_cli_build(int argc, char **argv)
{
    build_input b = {{.type = GENIE_TYPE_KEYWORDS, .store_records = -1}, NULL};
    cli_build_args a;
    int st = cli_parse_build(argc, argv, BUILD_SHORT, aBuildOpt, zBuildHelp, input_option, &b, &a);
    if (st != CLI_GO_ON)
        return st;
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    int text = b.in.type == GENIE_TYPE_TEXT;
    if (!text && (b.in.delimiter || b.zStop))
        return cli_usage_error("build", "--delimiter and --stop-words apply to --type text");
    if (text && b.in.labels)
        return cli_usage_error("build", "--labels applies to --type keywords");
    if (b.in.store_records < 0)
        b.in.store_records = text;
    if (b.in.delimiter && !*b.in.delimiter)
        return cli_usage_error("build", "--delimiter must not be empty");

    char *zStopText = NULL;
    if (b.zStop) {
        zStopText = read_whole_file(b.zStop);
        if (!zStopText) {
            fprintf(stderr, "genie: cannot read stop-word file %s\n", b.zStop);
            return CLI_EXIT_FAIL;
        }
        b.in.stop_words = (const char *const *)&zStopText;
        b.in.n_stop_words = 1;
    }
    cli_progress prog;
    cli_progress_start(&prog, "indexing: objects", a.quiet);
    a.opt.progress = on_build_progress;
    a.opt.progress_ctx = &prog;
    double t0 = util_now();
    genie_status rc =
        genie_build_files((const char *const *)argv + optind, (size_t)(argc - optind), &b.in, &a.opt, a.zOut);
    cli_progress_end(&prog);
    free(zStopText);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    if (!a.quiet) {
        genie_index *idx;
        if (genie_index_open(a.zOut, &idx) != GENIE_OK)
            return cli_fail(GENIE_EIO);
        genie_index_info info;
        genie_index_get_info(idx, &info);
        fprintf(stderr, "genie: wrote %s: %llu objects, %llu postings, %llu keywords, %u part%s in %.2f s\n",
                a.zOut, (unsigned long long)info.n_objects, (unsigned long long)info.n_postings,
                (unsigned long long)info.n_keywords, genie_index_parts(idx), genie_index_parts(idx) == 1 ? "" : "s",
                util_now() - t0);
        genie_index_close(idx);
    }
    return CLI_EXIT_OK;
}

/* ----------------------------------------------------------- search */

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]     (a keywords or text index)\n"
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
    "      --min-count N       leave out objects whose count is below N (-m,\n"
    "                          deprecated: -m is a build's hash functions)\n"
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "  -d, --delimiter LINE    text queries: records are blocks of lines\n"
    "                          between lines equal to LINE (e.g. '%')\n"
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each hit's stored record\n"
    CLI_VERBOSE_HELP
    "  -q, --quiet             no progress or notices on standard error\n"
    "  -h, --help              show this help\n";

/* The engine's progress through a chunk, after the chunks before it. */
static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)total;
    cli_search *s = ctx;
    cli_progress_update(s->pCtx, s->nQuery + done, 0);
}

/* After a chunk's search: the progress line goes before the answers. */
static void end_progress(cli_search *s, const itype_results *r)
{
    (void)r;
    cli_progress_end(s->pCtx);
}

#define SEARCH_SHORT CLI_SEARCH_SHORT_OPTIONS "m:d:" CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    CLI_SEARCH_LONG_OPTIONS, CLI_MIN_COUNT_LONG_OPTION, {"delimiter", required_argument, 0, 'd'},
    CLI_ENGINE_LONG_OPTIONS, CLI_FILTER_LONG_OPTIONS,  {0, 0, 0, 0}};

static int parse_search_options(int argc, char **argv, cli_search *s)
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
        case 'd': s->zDelim = optarg; break;
        case 'h': cli_help(zSearchHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    if (s->zDelim && !*s->zDelim)
        return cli_usage_error("search", "--delimiter must not be empty");
    return CLI_EXIT_OK;
}

/* `genie search` on a keywords or text index (@p zIndex; NULL: INDEX, which opening checks). */
static int kw_cli_search(int argc, char **argv, const char *zIndex)
{
    cli_search s;
    cli_search_init(&s, &itype_keywords);
    int st = parse_search_options(argc, argv, &s);
    if (st != CLI_EXIT_OK)
        return st;
    cli_progress bar;
    cli_progress_start(&bar, "searching: queries", s.quiet);
    s.pCtx = &bar;
    s.eng.progress = on_progress;
    s.eng.progress_ctx = &s;
    s.xSearched = end_progress;
    st = cli_search_main(&s, argc, argv, zIndex, "-");
    cli_progress_end(&bar);
    return st;
}

/* ---------------------------------------------------------- entries */

static genie_status kw_reader_open(const itype_index *ix, const char *zPath, const char *zDelim, void **pp)
{
    return genie_query_reader_open((genie_query_reader **)pp, zPath, ix->idx, zDelim);
}

static genie_status kw_reader_read(void *p, genie_queries *q, size_t max, uint32_t minCount, size_t *pn)
{
    return genie_query_reader_read(p, q, max, minCount, pn);
}

static void kw_reader_close(void *p)
{
    genie_query_reader_close(p);
}

/* Query files of keywords and text indexes: lines (or --delimiter records) through genie_query_reader. */
static const itype_reader kw_reader = {kw_reader_open, kw_reader_read, kw_reader_close};

static genie_status add_items(const itype_index *ix, genie_queries *q, const itype_query *one, uint32_t minCount)
{
    (void)ix;
    return genie_queries_add(q, one->aItem, one->nItem, minCount);
}

static genie_status add_text(const itype_index *ix, genie_queries *q, const itype_query *one, uint32_t minCount)
{
    return genie_queries_add_text(q, ix->idx, one->z, one->n, minCount);
}

static const itype_option aCountsOption[] = {COUNTS_OPTIONS, {NULL, 0, 0, 0, 0, 0, 0}};

/* What keywords and text share: the build and search commands, the query files, the parts. */
#define KW_MEMBERS                                                                                      \
    .maxK = GENIE_SEARCH_MAX_K, .defaultK = 10, .flags = ITYPE_F_DELIMITER, .aOption = aCountsOption,       \
    .xCliBuild = kw_cli_build, .xCliSearch = kw_cli_search, .cliBuild = {BUILD_SHORT, aBuildOpt, zBuildHelp},  \
    .cliSearch = {SEARCH_SHORT, aSearchOpt, zSearchHelp}, .pReader = &kw_reader, COUNTS_MEMBERS,           \
    .xSearchParts = counts_search_parts, .xFromHits = counts_from_hits

/* Writes: keyword lists (--labels: a label first on each input line); documents. */
static const itype_writes kw_writes = {ITYPE_W_LABELS, itype_add_keywords};
static const itype_writes text_writes = {ITYPE_W_DELIMITER, itype_add_strings};

const itype itype_keywords = {
    .zName = "keywords",
    .zAbout = "sets of integer keywords, one object per line (the default type); top-k by match count",
    .zNoRecords = "a keywords index stores them when built with --records",
    .type = GENIE_TYPE_KEYWORDS,
    .query = ITYPE_QUERY_ITEMS,
    .zJsonQuery = "a list of items (keywords or [lo, hi, weight])",
    .xAddQuery = add_items,
    KW_MEMBERS,
    .pWrites = &kw_writes,
};

const itype itype_text = {
    .zName = "text",
    .zAbout = "short documents (lines, or records between --delimiter lines); top-k by words shared",
    .zNoRecords = "built with --no-records",
    .type = GENIE_TYPE_TEXT,
    .query = ITYPE_QUERY_TEXT,
    .zJsonQuery = "a string (a document)",
    .xAddQuery = add_text,
    KW_MEMBERS,
    .zNoShardMap = "text shards of a shard map have vocabularies of their own, so one query's words would be "
                   "different keywords in each; cut one text index into parts instead (genie build --part-objects)",
    .pWrites = &text_writes,
};
