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

int cmd_build(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"output", required_argument, 0, 'o'},   {"type", required_argument, 0, 't'},
        {"delimiter", required_argument, 0, 'd'}, {"stop-words", required_argument, 0, 'S'},
        {"no-records", no_argument, 0, 'N'},     {"records", no_argument, 0, 'R'},
        {"labels", no_argument, 0, 'l'},         {"sublist-length", required_argument, 0, 'L'},
        {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
        CLI_PART_LONG_OPTIONS,                   {0, 0, 0, 0}};
    const char *zType = cli_find_type_arg(argc, argv);
    const cli_frontend *fe = zType ? cli_frontend_by_name(zType) : NULL;
    if (fe)
        return fe->xBuild(argc, argv);
    const char *zOut = NULL, *zStop = NULL;
    genie_input_options in = {GENIE_TYPE_KEYWORDS, NULL, 0, -1, NULL, 0};
    genie_build_options opt;
    memset(&opt, 0, sizeof opt);
    int quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:t:d:L:qh", aOpt, NULL)) != -1) {
        int st;
        if (cli_build_option(c, optarg, &opt, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'o': zOut = optarg; break;
        case 't':
            if (strcmp(optarg, "keywords") == 0)
                in.type = GENIE_TYPE_KEYWORDS;
            else if (strcmp(optarg, "text") == 0)
                in.type = GENIE_TYPE_TEXT;
            else
                return cli_usage_error("build", "unknown type '%s' (keywords or text)", optarg);
            break;
        case 'd': in.delimiter = optarg; break;
        case 'S': zStop = optarg; break;
        case 'N': in.store_records = 0; break;
        case 'R': in.store_records = 1; break;
        case 'l': in.labels = 1; break;
        case 'q': quiet = 1; break;
        case 'h': fputs(zHelp, stdout); return CLI_EXIT_OK;
        default: return cli_usage_error("build", "bad option");
        }
    }
    if (!zOut)
        return cli_usage_error("build", "no output file (-o INDEX)");
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    int text = in.type == GENIE_TYPE_TEXT;
    if (!text && (in.delimiter || zStop))
        return cli_usage_error("build", "--delimiter and --stop-words apply to --type text");
    if (text && in.labels)
        return cli_usage_error("build", "--labels applies to --type keywords");
    if (in.store_records < 0)
        in.store_records = text;
    if (in.delimiter && !*in.delimiter)
        return cli_usage_error("build", "--delimiter must not be empty");

    char *zStopText = NULL;
    if (zStop) {
        zStopText = read_whole_file(zStop);
        if (!zStopText) {
            fprintf(stderr, "genie: cannot read stop-word file %s\n", zStop);
            return CLI_EXIT_FAIL;
        }
        in.stop_words = (const char *const *)&zStopText;
        in.n_stop_words = 1;
    }
    cli_progress prog;
    cli_progress_start(&prog, "indexing: objects", quiet);
    opt.progress = on_progress;
    opt.progress_ctx = &prog;
    double t0 = cli_now();
    genie_status rc = genie_build_files((const char *const *)argv + optind, (size_t)(argc - optind), &in, &opt, zOut);
    cli_progress_end(&prog);
    free(zStopText);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    if (!quiet) {
        genie_index *idx;
        if (genie_index_open(zOut, &idx) != GENIE_OK)
            return cli_fail(GENIE_EIO);
        genie_index_info info;
        genie_index_get_info(idx, &info);
        fprintf(stderr, "genie: wrote %s: %llu objects, %llu postings, %llu keywords, %u part%s in %.2f s\n",
                zOut, (unsigned long long)info.n_objects, (unsigned long long)info.n_postings,
                (unsigned long long)info.n_keywords, genie_index_parts(idx), genie_index_parts(idx) == 1 ? "" : "s",
                cli_now() - t0);
        genie_index_close(idx);
    }
    return CLI_EXIT_OK;
}
