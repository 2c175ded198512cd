/* genie build: read objects from files and write an index. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char zHelp[] =
    "Usage: genie build [options] -o INDEX INPUT...\n"
    "\n"
    "Build an index from INPUT files, read in order ('-' is standard input).\n"
    "Object ids are 0, 1, 2, ... in input order.\n"
    "\n"
    "  -o, --output FILE        the index file to write; an existing file is\n"
    "                           replaced only once the new index is complete\n"
    "  -t, --type TYPE          keywords (default): one object per line, its\n"
    "                             keywords as integers 0..4294967295 separated\n"
    "                             by white space (an empty line is an object\n"
    "                             with no keywords);\n"
    "                           text: one document per line (or per record,\n"
    "                             see --delimiter); words are lower-cased runs\n"
    "                             of letters and digits, each distinct word one\n"
    "                             keyword of a vocabulary stored in the index\n"
    "                           table: rows of a CSV or ARFF file, numeric\n"
    "                             columns binned, categorical ones exact;\n"
    "                             its options: genie build -t table -h\n"
    "                           sequences: strings under edit distance,\n"
    "                           sets: sets of strings under Jaccard, and\n"
    "                           metric: exact search under l2, l1, cosine,\n"
    "                             edit or jaccard (List of Clusters); these\n"
    "                           have their own options: genie build -t TYPE -h\n"
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
    "  genie build -o sets.genie sets.txt\n"
    "  genie build -t text -d % -o fortunes.genie /usr/share/games/fortunes/fortunes\n";

static void on_progress(void *ctx, uint64_t done)
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
    case 't':
        if (strcmp(zArg, "keywords") == 0)
            b->in.type = GENIE_TYPE_KEYWORDS;
        else if (strcmp(zArg, "text") == 0)
            b->in.type = GENIE_TYPE_TEXT;
        else
            return cli_usage_error("build", "unknown type '%s' (keywords or text)", zArg);
        return CLI_EXIT_OK;
    case 'd': b->in.delimiter = zArg; return CLI_EXIT_OK;
    case 'S': b->zStop = zArg; return CLI_EXIT_OK;
    case 'N': b->in.store_records = 0; return CLI_EXIT_OK;
    case 'R': b->in.store_records = 1; return CLI_EXIT_OK;
    case 'l': b->in.labels = 1; return CLI_EXIT_OK;
    default: return CLI_OPTION_UNKNOWN;
    }
}

int cmd_build(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"delimiter", required_argument, 0, 'd'}, {"stop-words", required_argument, 0, 'S'},
        {"no-records", no_argument, 0, 'N'},     {"records", no_argument, 0, 'R'},
        {"labels", no_argument, 0, 'l'},         {0, 0, 0, 0}};
    const char *zType = cli_find_type_arg(argc, argv);
    const cli_frontend *fe = zType ? cli_frontend_by_name(zType) : NULL;
    if (fe)
        return fe->xBuild(argc, argv);
    build_input b = {{.type = GENIE_TYPE_KEYWORDS, .store_records = -1}, NULL};
    cli_build_args a;
    int st = cli_parse_build(argc, argv, "d:", aOpt, zHelp, input_option, &b, &a);
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
    a.opt.progress = on_progress;
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
