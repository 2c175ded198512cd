/*
 * `genie search`'s one loop (cli_search.c), for every index type: read the
 * queries in chunks (query_source.h: 8192 queries, or a vector file whole),
 * search each chunk with the type's entry, print every answer as TSV or
 * JSON with the entry's printers, and hand the chunk to the type's own
 * hooks (its totals, verbose lines, notices, summary).  The type's CLI file
 * parses its options into s->o and s->eng (cli_search_option() takes those
 * every search has), sets its hooks and calls cli_search_main().
 */
#ifndef GENIE_TOOLS_CLI_SEARCH_H
#define GENIE_TOOLS_CLI_SEARCH_H

#include "cli.h"
#include "itype.h"

typedef struct cli_search cli_search;
struct cli_search {
    const itype *pType;
    itype_index ix;           /* cli_search_open() */
    itype_options o;          /* the search's options; o.show prints the records */
    genie_search_options eng; /* the engine's options (k is o.k) */
    int json;                 /* JSON lines instead of TSV */
    int quiet;                /* -q: no summary, progress or notices */
    int verbose;              /* -v: what ran, after the answers (and the type's own lines) */
    const char *zDelim;       /* records of a query file (ITYPE_F_DELIMITER) */
    /* The type's own, each optional: xOpened once the index is open (its
     * checks and state; a CLI_EXIT_* code); xSearched after a chunk's
     * search, before it is printed; xQuery after each query is printed;
     * xDone after the chunk is printed (non-OK stops the search: the
     * status is failed); xSummary when every query was answered. */
    int (*xOpened)(cli_search *s, const char *zIndex, const char *zQueries);
    void (*xSearched)(cli_search *s, const itype_results *r);
    void (*xQuery)(cli_search *s, uint64_t queryNo, const itype_answer *a);
    genie_status (*xDone)(cli_search *s, const itype_results *r);
    void (*xSummary)(cli_search *s);
    void *pCtx;
    uint64_t nQuery;          /* queries answered so far */
    uint64_t nAnswer;         /* their answers (hits) */
    double tSearch;           /* seconds in the entry's xSearch */
    genie_search_stats st;    /* the last chunk's (backend, parts) */
};

/* The options of every search (cli_search_option()), for the types' getopt tables. */
#define CLI_SEARCH_SHORT_OPTIONS "k:vqh"
#define CLI_SEARCH_LONG_OPTIONS                                                               \
    {"k", required_argument, 0, 'k'}, {"json", no_argument, 0, 'J'},                           \
    {"show", no_argument, 0, 's'}, {"verbose", no_argument, 0, 'v'},                           \
    {"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}
/* --min-count (keywords, text, table); -m too, deprecated (cli.h, short options). */
#define CLI_OPT_MIN_COUNT 0x130
#define CLI_MIN_COUNT_LONG_OPTION {"min-count", required_argument, 0, CLI_OPT_MIN_COUNT}

/**
 * The options of every search command, as getopt codes: 'k' (-k, the
 * type's limit), 'J' (--json), 's' (--show), 'v' (-v), 'q' (-q) and, for
 * the types that take them (their option descriptors), CLI_OPT_MIN_COUNT
 * (--min-count; 'm', deprecated), 'K' (-K, --candidates), 'R' (--recall)
 * and 'E' (--exact), into s; and the filter options
 * (CLI_FILTER_LONG_OPTIONS, every type), made into s->o.filter once the
 * index is open (cli_search_main).  @return 1 when @p c is one of them
 * (*pStatus: CLI_EXIT_OK, or CLI_EXIT_USAGE with the message printed), 0
 * otherwise.
 */
int cli_search_option(cli_search *s, int c, const char *zArg, int *pStatus);

/** Defaults for a search of @p t: its options' defaults, no hooks. */
void cli_search_init(cli_search *s, const itype *t);
/**
 * QUERIES of `genie search [options] INDEX [QUERIES]` once getopt is done
 * (optind at INDEX): the argument that is not @p zIndex, else @p zDefault.
 */
const char *cli_search_queries(int argc, char **argv, const char *zIndex, const char *zDefault);
/**
 * Open @p zIndex for searching, and refuse --show when it holds no
 * records (itype_show_refusal()).  @return CLI_EXIT_OK, or CLI_EXIT_FAIL /
 * CLI_EXIT_USAGE (printed).
 */
int cli_search_open(cli_search *s, const char *zIndex);
/** Answer every query of @p zQueries.  @return a CLI_EXIT_* code (failures printed). */
int cli_search_run(cli_search *s, const char *zQueries);
/**
 * `genie search [options] INDEX [QUERIES]` once the options are parsed:
 * open @p zIndex (NULL: INDEX is argv[optind], which opening checks),
 * make the filter of the filter options, xOpened, answer QUERIES
 * (cli_search_queries(), @p zDefault when none: "-" is standard input,
 * NULL leaves it to xOpened), xSummary, then with -v what ran, close.
 * @return a CLI_EXIT_* code (failures printed).
 */
int cli_search_main(cli_search *s, int argc, char **argv, const char *zIndex, const char *zDefault);
/** Close what cli_search_open() opened. */
void cli_search_close(cli_search *s);

#endif
