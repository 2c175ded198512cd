/*
 * What the genie command says of the type table (see cli.h): genie
 * --help, the overviews that genie build --help and genie search --help
 * print without a type, the list of types in messages, and -t TYPE of the
 * commands that read the type from INDEX.  Every list of types and every
 * per-type line here is made from the entries (tools/itype.h), so a new
 * entry appears in all of them.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "itype.h"

#define HELP_WIDTH 79
#define TYPE_INDENT 13 /* "  keywords   " */

/* Print the words of @p z from column @p col on, wrapped at HELP_WIDTH under @p indent, then a newline. */
static void put_wrapped(FILE *f, const char *z, size_t col, size_t indent)
{
    size_t start = col;
    while (*z) {
        size_t n = strcspn(z, " ");
        if (col > start && col + 1 + n > HELP_WIDTH) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = start = indent;
        } else if (col > start) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)n, z);
        col += n;
        z += n;
        z += strspn(z, " ");
    }
    fputc('\n', f);
}

/* "  NAME       ABOUT", wrapped, one line of the lists of types. */
static void put_type_line(FILE *f, const itype *t, const char *zAbout)
{
    fprintf(f, "  %-*s ", TYPE_INDENT - 3, t->zName);
    put_wrapped(f, zAbout, TYPE_INDENT, TYPE_INDENT);
}

/* Every type with its zAbout. */
static void put_types(FILE *f)
{
    for (size_t i = 0; i < itype_nAll; i++)
        if (itype_aAll[i])
            put_type_line(f, itype_aAll[i], itype_aAll[i]->zAbout);
}

static int has_eval(const itype *t)
{
    return t->xCliEval != NULL;
}

static int has_knn_graph(const itype *t)
{
    return t->xCliKnnGraph != NULL;
}

void cli_print_usage(FILE *f)
{
    char zEval[128], zGraph[128];
    itype_names(zEval, sizeof zEval, has_eval);
    itype_names(zGraph, sizeof zGraph, has_knn_graph);
    fprintf(f,
            "Usage: genie COMMAND [options] ...\n"
            "\n"
            "A generic inverted index for batched similarity search (GENIE).\n"
            "\n"
            "Commands:\n"
            "  build    build an index of one of the types below from input files\n"
            "  search   answer queries against an index, as its type answers them\n"
            "  info     describe an index file\n"
            "  add      add objects to an index (its write-ahead log, docs/LIVE.md)\n"
            "  delete   delete objects of an index by label\n"
            "  compact  write an index with its log's writes applied\n"
            "  serve    keep indexes open behind an HTTP/JSON API (docs/SERVER.md)\n"
            "  eval     recall@k and queries/s of an approximate search against\n"
            "           exact answers (%s)\n"
            "  knn-graph  every object's k nearest other objects, as .ivecs (%s)\n"
            "  lsh-params  hash functions m by Eqn. 9 for (epsilon, delta)\n"
            "  cache-plan  the GPU list cache plan of a docs index from a query log\n"
            "  help     genie help TYPE: a type's build, search, eval and knn-graph\n"
            "           options; genie help COMMAND: the command's --help\n"
            "\n"
            "Index types (genie build -t TYPE):\n",
            zEval, zGraph);
    put_types(f);
    fprintf(f, "\n"
               "Run 'genie COMMAND --help' for a command's options, 'genie help TYPE' for a\n"
               "type's.  Short options mean one thing in every command (docs/ARCHITECTURE.md,\n"
               "\"Options\").  Exit status: 0 ok, 1 bad input or failure, 2 usage error.\n");
}

void cli_print_build_overview(void)
{
    fputs("Usage: genie build [-t TYPE] [options] -o INDEX INPUT...\n"
          "\n"
          "Build an index of TYPE (default keywords) from the INPUT files, read in\n"
          "order ('-' is standard input); object ids are 0, 1, 2, ... in input\n"
          "order.  Each type takes options of its own: genie build -t TYPE --help\n"
          "(or genie help TYPE).\n"
          "\n"
          "Types:\n",
          stdout);
    put_types(stdout);
    fputs("\n"
          "Options of every type:\n"
          "  -o, --output FILE        the index file to write; an existing file is\n"
          "                           replaced only once the new index is complete\n"
          "  -t, --type TYPE          one of the types above (default keywords)\n"
          "  -L, --sublist-length N   split lists longer than N postings into\n"
          "                           sublists for GPU load balance (default 4096)\n"
          CLI_PART_HELP
          "                           (docs refuses the part options: an index of\n"
          "                           documents is one part)\n"
          "  -q, --quiet              no progress or summary on standard error\n"
          "  -h, --help               show this help (with -t TYPE: that type's)\n",
          stdout);
}

/* Options every search takes, or that the overview describes as a group. */
static int is_common_search_option(const char *zName)
{
    static const char *const az[] = {"k",       "json",    "show",       "verbose",       "quiet",
                                     "help",    "backend", "threads",    "filter-labels", "filter-ids",
                                     "where"};
    for (size_t i = 0; i < sizeof az / sizeof *az; i++)
        if (strcmp(az[i], zName) == 0)
            return 1;
    return 0;
}

static int is_gpu_option(const char *zName)
{
    return strcmp(zName, "gpu-memory") == 0 || strcmp(zName, "load-balance") == 0 || strcmp(zName, "gpus") == 0 ||
           strcmp(zName, "gpu-mode") == 0;
}

/* "default k 10; --candidates (-K), --exact, ..., the GPU options" of @p t's search. */
static void put_search_line(const itype *t)
{
    char z[1024];
    size_t at = 0;
    if (t->defaultK)
        at += (size_t)snprintf(z, sizeof z, "default k %u%s%s%s", t->defaultK, t->zWhyDefaultK ? " (" : "",
                               t->zWhyDefaultK ? t->zWhyDefaultK : "", t->zWhyDefaultK ? ")" : "");
    else
        at += (size_t)snprintf(z, sizeof z, "no default k (%s)", t->zWhyDefaultK ? t->zWhyDefaultK : "");
    const itype_cli *c = &t->cliSearch;
    int nGpu = 0, gpuSaid = 0;
    for (const struct option *o = c->aLong; o && o->name; o++)
        nGpu += is_gpu_option(o->name);
    const char *zSep = "; ";
    for (const struct option *o = c->aLong; o && o->name && at < sizeof z; o++) {
        if (is_common_search_option(o->name) || (nGpu == 4 && is_gpu_option(o->name) && gpuSaid++))
            continue;
        const char *zShort = o->val > 0 && o->val < 128 ? strchr(c->zShort, o->val) : NULL;
        if (nGpu == 4 && is_gpu_option(o->name))
            at += (size_t)snprintf(z + at, sizeof z - at, "%sthe GPU options", zSep);
        else if (zShort)
            at += (size_t)snprintf(z + at, sizeof z - at, "%s--%s (-%c)", zSep, o->name, o->val);
        else
            at += (size_t)snprintf(z + at, sizeof z - at, "%s--%s", zSep, o->name);
        zSep = ", ";
    }
    put_type_line(stdout, t, z);
}

void cli_print_search_overview(void)
{
    cli_help("Usage: genie search [options] INDEX [QUERIES]\n"
          "\n"
          "Answer each query of QUERIES (default: standard input; a vector file\n"
          "where INDEX holds vectors) against INDEX.  How a query is written, what\n"
          "an answer holds and which options apply depend on INDEX's type: 'genie\n"
          "search -h INDEX', 'genie search -t TYPE --help' or 'genie help TYPE'\n"
          "tells all of one type.\n"
          "\n"
          "Options of every type:\n"
          "  -k, --k N               answers per query (default: per type, below)\n"
          CLI_BACKEND_HELP
          "      --json              one JSON object per query instead of TSV\n"
          "      --show              print each answer's stored record (refused,\n"
          "                          naming why, when INDEX stores none)\n"
          CLI_VERBOSE_HELP
          CLI_FILTER_HELP
          "  -q, --quiet             no summary, progress or notices on standard error\n"
          "  -h, --help              show this help (with INDEX or -t TYPE: that type's)\n"
          "The GPU options, of the types below that list them:\n"
          CLI_GPU_HELP
          "\n"
          "Types, their default k and their own options:\n");
    for (size_t i = 0; i < itype_nAll; i++)
        if (itype_aAll[i])
            put_search_line(itype_aAll[i]);
}

void cli_print_eval_overview(void)
{
    char z[512], zTypes[128];
    snprintf(z, sizeof z,
             "The recall of an approximate search on your own queries: QUERIES are searched in INDEX as genie "
             "search does and exactly, and the answers compared, with the search's time (--repeat N: the median "
             "of N runs, for every type).  INDEX is a %s index.  Each type has options of its own: genie eval -t "
             "TYPE --help (or genie eval -h INDEX, genie help TYPE).",
             itype_names(zTypes, sizeof zTypes, has_eval));
    fputs("Usage: genie eval [options] INDEX QUERIES\n\n", stdout);
    put_wrapped(stdout, z, 0, 0);
}

int cli_unknown_type(const char *zCmd, const char *zName)
{
    char zTypes[160];
    return cli_usage_error(zCmd, "unknown type '%s' (%s)", zName, itype_names(zTypes, sizeof zTypes, NULL));
}

int cli_take_type_arg(const char *zCmd, int *pArgc, char **argv, const itype **pType)
{
    *pType = NULL;
    for (int i = 1; i < *pArgc && strcmp(argv[i], "--") != 0; i++) {
        const char *zName = NULL;
        int nTake = 1;
        if ((strcmp(argv[i], "-t") == 0 || strcmp(argv[i], "--type") == 0) && i + 1 < *pArgc) {
            zName = argv[i + 1];
            nTake = 2;
        } else if (strncmp(argv[i], "--type=", 7) == 0) {
            zName = argv[i] + 7;
        } else if (strncmp(argv[i], "-t", 2) == 0 && argv[i][2]) {
            zName = argv[i] + 2;
        }
        if (!zName)
            continue;
        if (!(*pType = itype_by_name(zName)))
            return cli_unknown_type(zCmd, zName);
        /* argv[argc] (NULL) moves too */
        memmove(argv + i, argv + i + nTake, (size_t)(*pArgc - i - nTake + 1) * sizeof *argv);
        *pArgc -= nTake;
        i--;
    }
    return CLI_EXIT_OK;
}

int cli_command_entry(const char *zCmd, int *pArgc, char **argv, int (*xHas)(const itype *), const char *zLacks,
                      const itype **pT, const char **pzIndex)
{
    const itype *tNamed;
    int st = cli_take_type_arg(zCmd, pArgc, argv, &tNamed);
    if (st != CLI_EXIT_OK)
        return st;
    genie_index_type type;
    const char *zIndex = cli_find_index_arg(*pArgc, argv, &type);
    const itype *t = zIndex ? itype_by_type(type) : tNamed;
    if (zIndex && tNamed && t != tNamed) {
        fprintf(stderr, "genie %s: %s is a %s index, not %s (-t)\n", zCmd, zIndex, t ? t->zName : "unknown",
                tNamed->zName);
        return CLI_EXIT_FAIL;
    }
    if (t && xHas && !xHas(t)) {
        char zTypes[128];
        itype_names(zTypes, sizeof zTypes, xHas);
        if (zIndex)
            fprintf(stderr, "genie %s: %s is a %s index: genie %s takes a %s index\n", zCmd, zIndex, t->zName, zCmd,
                    zTypes);
        else
            fprintf(stderr, "genie %s: a %s index has %s: genie %s takes a %s index\n", zCmd, t->zName, zLacks, zCmd,
                    zTypes);
        return CLI_EXIT_FAIL;
    }
    *pT = t;
    *pzIndex = zIndex;
    return CLI_EXIT_OK;
}
