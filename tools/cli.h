/*
 * Helpers shared by the genie subcommands: exit codes, option values,
 * and progress lines on a terminal.
 *
 * Exit codes: 0 ok, 1 bad input or failure (the library's message is
 * printed), 2 usage error.
 */
#ifndef GENIE_TOOLS_CLI_H
#define GENIE_TOOLS_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "genie/genie.h"
/* The one library file the tools compile in themselves (CMakeLists.txt): a clock. */
#include "util/clock.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

int cmd_build(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_info(int argc, char **argv);
/* The writes of a live index (tools/cmd_write.c). */
int cmd_add(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_compact(int argc, char **argv);
/* genie eval: the entry of the index's type evaluates (tools/cmd_eval.c). */
int cmd_eval(int argc, char **argv);
/* genie knn-graph: the entry of the index's type writes its k-NN graph (tools/cmd_knn_graph.c). */
int cmd_knn_graph(int argc, char **argv);
/* genie serve (tools/serve/serve.c, or serve_absent.c without libmicrohttpd/cJSON). */
int cmd_serve(int argc, char **argv);

struct itype;

/** The value of -t/--type in argv, or NULL. */
const char *cli_find_type_arg(int argc, char **argv);
/** Non-zero when argv asks for -h/--help (before a "--"). */
int cli_wants_help(int argc, char **argv);

/*
 * What the genie command says of the type table (tools/cli_types.c): the
 * lists of types of its help texts and messages, made from the entries,
 * never written out, and -t TYPE of the commands that read the type from
 * INDEX.
 */
/** genie --help (to @p f). */
void cli_print_usage(FILE *f);
/** genie build --help without -t: the options every type takes, the types. */
void cli_print_build_overview(void);
/** genie search --help without INDEX or -t: the options every type takes, each type's default k and own options. */
void cli_print_search_overview(void);
/** genie eval --help without INDEX or -t: the types it takes. */
void cli_print_eval_overview(void);
/** "unknown type 'NAME' (keywords, text, ... or metric)" as genie @p zCmd's usage error. */
int cli_unknown_type(const char *zCmd, const char *zName);
/**
 * Take -t/--type TYPE out of argv (of genie search and eval, which read the
 * type from INDEX and take -t to name it without one: -t TYPE --help):
 * *pType is its entry, or NULL without -t.
 * @return CLI_EXIT_OK, or CLI_EXIT_USAGE for an unknown TYPE (printed).
 */
int cli_take_type_arg(const char *zCmd, int *pArgc, char **argv, const struct itype **pType);
/**
 * The first argument naming a file with a valid index header, and the type
 * it holds (genie_index_file_type(); genie_index_open() checks the rest).
 */
const char *cli_find_index_arg(int argc, char **argv, genie_index_type *pType);
/**
 * The entry that genie @p zCmd (search, eval, knn-graph) runs: the type of
 * its INDEX argument, or -t TYPE (taken out of argv; with INDEX it must
 * agree), or NULL with neither (*@p pzIndex: INDEX, or NULL when no
 * argument is a readable index).  With @p xHas, a type it does not keep is
 * refused, naming the types it keeps (and, without INDEX, saying the type
 * has @p zLacks: "no k-NN graph").
 * @return CLI_EXIT_OK, or CLI_EXIT_FAIL / CLI_EXIT_USAGE (printed).
 */
int cli_command_entry(const char *zCmd, int *pArgc, char **argv, int (*xHas)(const struct itype *),
                      const char *zLacks, const struct itype **pT, const char **pzIndex);

/*
 * Line batches for the line-oriented front-ends (tools/cli_lines.c):
 * cli_lines_read() reads up to max lines into one buffer; azLine[i] and
 * anLine[i] (without the '\n' and a '\r' before it) stay valid until the
 * next read.  Errors are printed with the file name.
 */
typedef struct cli_lines {
    FILE *f;
    const char *zName;
    uint64_t lineNo;       /* lines read so far */
    char *zLine;           /* getline buffer */
    size_t nLineBuf;
    char *aBuf;            /* the batch's bytes, each line NUL-terminated */
    size_t nBufCap;
    const char **azLine;
    size_t *anLine;
    size_t nLine, nLineCap;
} cli_lines;

/** Open @p path ("-" or NULL: standard input). @return 0, or -1 (printed). */
int cli_lines_open(cli_lines *l, const char *path);
/** @return lines read (0 at the end), or -1 on a read error (printed). */
long cli_lines_read(cli_lines *l, size_t max);
void cli_lines_close(cli_lines *l);
typedef genie_status (*cli_line_fn)(void *ctx, const char *z, size_t n);
/**
 * Hand every line of the files azFile[0..nFile) to xAdd, in order.
 * @return CLI_EXIT_OK, or CLI_EXIT_FAIL once a file cannot be read or
 *         xAdd fails (the message is printed).
 */
int cli_feed_lines(char **azFile, int nFile, cli_line_fn xAdd, void *ctx);
/**
 * A build of one object per input line (sets, sequences): hand every line
 * of the inputs argv[optind..argc) to @p xAdd(@p pBuilder, ...), and
 * refuse an empty input ("genie: no @p zObjects to index").
 * @return CLI_EXIT_OK with *pnObjects, or a CLI_EXIT_* failure (printed).
 */
int cli_build_lines(const char *zObjects, cli_line_fn xAdd, void *pBuilder, int argc, char **argv,
                    uint64_t *pnObjects);
/** Write @p s with tab, newline and backslash as \\t \\n \\\\. */
void cli_put_escaped(const char *s, size_t n);
/** With @p show, a TSV column: a tab and @p object's stored record, escaped (nothing when it has none). */
void cli_put_record(const genie_index *idx, uint32_t object, int show);

/*
 * What several types' entries share: `genie eval` of types whose queries
 * are lines and whose hits the entry scores (tools/cmd_eval.c), and genie
 * info's line of the recall estimate for the default k and K (per
 * modelled edit rate: sequences) (tools/cmd_info.c).
 */
int cli_eval_lines(int argc, char **argv, const char *zIndex);
/* cli_eval_lines()'s options and help, the entries' cliEval (sets, sequences). */
#define CLI_EVAL_LINES_SHORT "k:K:h" CLI_ENGINE_SHORT_OPTIONS
extern const struct option cli_aEvalLinesOption[];
extern const char cli_zEvalLinesHelp[];
#define CLI_EVAL_LINES {CLI_EVAL_LINES_SHORT, cli_aEvalLinesOption, cli_zEvalLinesHelp}
void cli_print_recall_estimate(const genie_index *idx, const char *zPath, uint32_t k, uint32_t K, int perEditRate);

/* Commands of one type: `genie lsh-params` (tools/type_vectors_build.c), `genie cache-plan` (tools/type_docs.c). */
int vec_cli_lsh_params(int argc, char **argv);
int docs_cli_cache_plan(int argc, char **argv);
/* `genie build -t vectors` (tools/type_vectors_build.c): the vectors entry's xCliBuild and its cliBuild. */
int vec_cli_build(int argc, char **argv);
#define VEC_BUILD_SHORT "m:"
extern const struct option vec_aBuildOption[]; /* ended by a zero entry */
extern const char vec_zBuildHelp[];

/** Print "genie CMD: message" and the usage hint; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *zCmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Print "genie: <genie_last_error() or strerror>"; returns CLI_EXIT_FAIL. */
int cli_fail(genie_status rc);

/**
 * Refuse to write @p zOut when it would destroy what the user named
 * (genie_output_check(): not a regular file, or the same file as any
 * argument of @p argv or the standard input).  @p zOut points into argv.
 * @return CLI_EXIT_OK, or CLI_EXIT_FAIL with the message printed.
 */
int cli_check_output(const char *zOut, int argc, char **argv);
/*
 * Print the help text @p zHelp to standard output, with CLI_BACKENDS (at
 * the start of a line's text, after its indent) replaced by the names of
 * the backends the library knows (genie_backend_list), wrapped at 79
 * columns under the same indent.
 */
#define CLI_BACKENDS "@BACKENDS@"
void cli_help(const char *zHelp);

/** Parse a whole unsigned number in [lo, hi]; 0 on failure. */
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/** Parse a byte size with an optional K, M, G or T suffix (powers of 1024). */
int cli_parse_bytes(const char *s, uint64_t *out);
/** A separator of set elements: one byte (not a newline), or 'tab'.  @return 1, or 0 for anything else. */
int cli_parse_separator(const char *z, char *out);
/**
 * -k of a search of type @p t (NULL: of any type): 1..t->maxK into *@p pK
 * (itype_parse_k()).  @return 1 when @p c is 'k' (then *pStatus is
 * CLI_EXIT_OK, or CLI_EXIT_USAGE with the message printed), 0 otherwise.
 */
int cli_k_option(const char *zCmd, const struct itype *t, int c, const char *zArg, uint32_t *pK, int *pStatus);

/*
 * --recall R of the approximate searches (sets, sequences, vectors) and
 * their eval: a number in (0, 1]; CLI_EXIT_OK or a usage error naming it.
 */
int cli_parse_recall(const char *zCmd, const char *s, double *out);
#define CLI_RECALL_HELP                                                             \
    "      --recall R          choose K (vectors l2: and the radius) so that\n"    \
    "                          the recall@k the index's estimate predicts is at\n" \
    "                          least R, 0 < R <= 1; k <= 100; not with -K,\n"      \
    "                          --exact (exact when no K up to 4096 reaches R;\n"   \
    "                          the estimate is computed on first use and kept\n"   \
    "                          in INDEX.recall)\n"
/* -v of every search: what ran (cli_search.c), before the type's own lines. */
#define CLI_VERBOSE_HELP                                                          \
    "  -v, --verbose           on standard error: the queries, the answers,\n"  \
    "                          the seconds searching and the backend that ran\n"
/* -v of the searches whose only own verbose line is the recall choice (sets, vectors). */
#define CLI_RECALL_VERBOSE_HELP                                                   \
    CLI_VERBOSE_HELP                                                              \
    "                          (with --recall, first the K chosen and its\n"     \
    "                          estimated recall)\n"
/**
 * The usage errors of --recall with options it excludes: --exact, an
 * explicit -K (@p explicitK), k over 100.
 */
int cli_check_recall(const char *zCmd, double recall, uint32_t k, int exact, int explicitK);
/**
 * The candidate options of the sets and sequences searches and of genie
 * eval: -k (cli_k_option() of @p t), -K/--candidates (1..2^32-1) and
 * --recall, as option codes 'k', 'K' and 'R', written to *@p pK,
 * *@p pCandidates, *@p pRecall.
 * @return 1 when @p c is one of them (*@p pStatus: CLI_EXIT_OK, or
 *         CLI_EXIT_USAGE with the message printed), 0 otherwise.
 */
int cli_candidate_option(const char *zCmd, const struct itype *t, int c, const char *zArg, uint32_t *pK,
                         uint32_t *pCandidates, double *pRecall, int *pStatus);
/**
 * --verbose: "genie CMD: recall target R: K = ..., estimated recall@k ..."
 * on standard error, for the target @p st says the choice was made for
 * (the option's @p target, or a default target when @p target is 0);
 * nothing when there was none.
 */
void cli_print_recall_choice(const char *zCmd, double target, uint32_t k, const genie_search_stats *st, int radius);

/*
 * Short options (tools/cli_options.c; docs/ARCHITECTURE.md, "Options"):
 * each letter has one meaning across every command of genie and
 * genie-mpi, and cli_short_option() says which.  A long option of another
 * meaning gets no short letter: a new option is long only, unless it is
 * one of those meanings.  A letter that meant something else in one
 * command before the rule (-m of genie build -t metric and of the
 * match-count searches, -K of genie build -t metric, -r of metric
 * searches, -d of lsh-params) still works there through
 * cli_deprecated(): the long option has a code of its own, the letter is
 * kept in the short options and its case warns, then does the same.
 */
/** The long option(s) of short letter @p c ("--functions --hashes"), or NULL when it has none. */
const char *cli_short_option(int c);
/**
 * "WHO: -C here is deprecated: write LONG (-C means ...)" on standard
 * error, for a letter used with its old meaning (@p zWho: "genie build -t
 * metric", "genie-mpi", ...).
 */
void cli_deprecated(const char *zWho, int c, const char *zLong);

/*
 * Options shared by several commands (tools/cli_options.c).  An option
 * code is either a short option character or a CLI_OPT_* value, which lies
 * above any character and so clashes with no short option.
 *
 * The engine options every search command shares (cmd_search.c, each
 * front-end's search, eval): put CLI_ENGINE_SHORT_OPTIONS in the getopt
 * string, CLI_ENGINE_LONG_OPTIONS in the getopt_long table and
 * CLI_ENGINE_HELP in the --help text, and hand each option code to
 * cli_engine_option().  --gpu-memory is spelled as at build time but means
 * something else: here the most GPU memory the search may use
 * (genie_search_options.gpu_memory), there the budget the parts are sized
 * for (CLI_OPT_BUILD_GPU_MEMORY); hence two codes.
 */
#define CLI_OPT_SEARCH_GPU_MEMORY 0x110
#define CLI_OPT_LOAD_BALANCE 0x111
#define CLI_OPT_GPUS 0x112
#define CLI_OPT_GPU_MODE 0x113
#define CLI_ENGINE_SHORT_OPTIONS "b:j:"
/* -b and -j, which every search takes (docs and metric take these alone, or with --gpu-memory) */
#define CLI_BACKEND_LONG_OPTIONS                                             \
    {"backend", required_argument, 0, 'b'},                                 \
    {"threads", required_argument, 0, 'j'}
#define CLI_ENGINE_LONG_OPTIONS                                              \
    CLI_BACKEND_LONG_OPTIONS,                                                \
    {"gpu-memory", required_argument, 0, CLI_OPT_SEARCH_GPU_MEMORY},        \
    {"load-balance", no_argument, 0, CLI_OPT_LOAD_BALANCE},                  \
    {"gpus", required_argument, 0, CLI_OPT_GPUS},                            \
    {"gpu-mode", required_argument, 0, CLI_OPT_GPU_MODE}
#define CLI_BACKEND_HELP                                                            \
    "  -b, --backend NAME      auto (default: cuda when built and a GPU is\n"       \
    "                          present, else cpu), or one of\n"                    \
    "                          " CLI_BACKENDS "\n"                                 \
    "  -j, --threads N         CPU threads (default: all cores)\n"
#define CLI_ENGINE_HELP CLI_BACKEND_HELP CLI_GPU_HELP
/* The GPU options (CLI_ENGINE_LONG_OPTIONS but -b and -j). */
#define CLI_GPU_HELP                                                                \
    "      --gpu-memory BYTES  GPU memory budget, suffix K/M/G allowed\n"           \
    "                          (default: most of the free memory); an index\n"      \
    "                          of several parts whose parts exceed half of it,\n"   \
    "                          or with no budget given, streams its parts\n"        \
    "                          through the GPU one at a time\n"                     \
    "      --load-balance      cuda-cpq-paper, cuda-spq: split long lists, at\n"    \
    "                          most two per block\n"                                \
    "      --gpus LIST|all     several GPUs (e.g. 0,1): shards or replicas\n"      \
    "                          (docs/SCALING.md); default GPU 0 alone\n"           \
    "      --gpu-mode MODE     auto (default: shards when the parts do not fit\n"  \
    "                          one GPU), shards, replicas\n"
/**
 * Parse a shared engine option of command @p zCmd ("search", "eval").
 * @return 1 when @p c is one of them (then *pStatus is CLI_EXIT_OK, or
 *         CLI_EXIT_USAGE with the message printed), 0 otherwise.
 */
int cli_engine_option(const char *zCmd, int c, const char *zArg, genie_search_options *opt, int *pStatus);

/*
 * The filter options of every search (tools/cli_filter.c): each search
 * command puts CLI_FILTER_LONG_OPTIONS in its getopt_long table and
 * CLI_FILTER_HELP in its --help text; cli_search_option() collects them
 * (cli_filter_option()), and genie search's loop makes the filter once the
 * index is open (cli_filter_make()).
 */
#define CLI_OPT_FILTER_LABELS 0x150
#define CLI_OPT_FILTER_IDS 0x151
#define CLI_OPT_WHERE 0x152
#define CLI_FILTER_LONG_OPTIONS                                         \
    {"filter-labels", required_argument, 0, CLI_OPT_FILTER_LABELS},    \
    {"filter-ids", required_argument, 0, CLI_OPT_FILTER_IDS},          \
    {"where", required_argument, 0, CLI_OPT_WHERE}
#define CLI_FILTER_HELP                                                              \
    "      --filter-ids FILE   answer only with the objects whose ids (as\n"         \
    "                          printed) FILE lists, white space between them\n"     \
    "      --filter-labels FILE  answer only with the objects whose labels\n"      \
    "                          FILE lists\n"                                        \
    "      --where COND        tables: only rows with COLUMN=V1,V2,... (one of\n"   \
    "                          the values) or, numeric columns, COLUMN=LO..HI\n"    \
    "                          (either end may be left out); filter options\n"     \
    "                          repeat and AND; the answers are exactly those of\n" \
    "                          an index of the allowed objects alone\n"
/**
 * Collect a filter option of command @p zCmd.
 * @return 1 when @p c is one (*pStatus: CLI_EXIT_OK, or CLI_EXIT_USAGE
 *         with the message printed), 0 otherwise.
 */
int cli_filter_option(const char *zCmd, int c, const char *zArg, int *pStatus);
struct itype_index;
/**
 * The filter of the collected options for the open index @p ix: *pOut is
 * NULL when no filter option was given; free it with genie_filter_free().
 * @return CLI_EXIT_OK, CLI_EXIT_FAIL (a file that cannot be read, an id
 *         that is no object: printed), CLI_EXIT_USAGE (--where on a type
 *         without columns).
 */
int cli_filter_make(const char *zCmd, const struct itype_index *ix, genie_filter **pOut);
/**
 * The unsigned 64-bit numbers of file @p zPath ("-": standard input), white
 * space between them, into a new array *paOut (free it): object ids, labels.
 * @return CLI_EXIT_OK, CLI_EXIT_FAIL (printed: the file, the line, the token).
 */
int cli_read_numbers(const char *zPath, uint64_t **paOut, size_t *pn);

/*
 * The notice of a search with backend auto that found no usable GPU in a
 * build with CUDA (tools/cli_search.c), once per process; -b cpu, -q or
 * this variable (set, not empty) silence it.
 */
#define CLI_NO_GPU_NOTICE_ENV "GENIE_NO_GPU_NOTICE"

/** The index of the median of @p a[0..n) (the lower middle one when n is even); n >= 1. */
size_t cli_median_index(const double *a, size_t n);
#define CLI_REPEAT_HELP                                                              \
    "      --repeat N          run the search N times on the open index and\n"     \
    "                          report the median run's time (the lower middle\n"   \
    "                          one when N is even; default 1)\n"

/*
 * The options every `genie build` shares (cmd_build.c and each front-end's
 * build): -o/--output, -t/--type, -L/--sublist-length, the part options
 * (CLI_PART_LONG_OPTIONS, CLI_PART_HELP), -q/--quiet and -h/--help, all
 * parsed by cli_parse_build(), which hands the front-end's own options to
 * its callback.
 */
#define CLI_BUILD_SHORT_OPTIONS "o:t:L:qh"
extern const struct option cli_aBuildOption[]; /* ended by a zero entry */
#define CLI_OPT_PART_OBJECTS 0x100
#define CLI_OPT_PART_BYTES 0x101
#define CLI_OPT_BUILD_GPU_MEMORY 0x102
#define CLI_PART_LONG_OPTIONS                                      \
    {"part-objects", required_argument, 0, CLI_OPT_PART_OBJECTS}, \
    {"part-bytes", required_argument, 0, CLI_OPT_PART_BYTES},     \
    {"gpu-memory", required_argument, 0, CLI_OPT_BUILD_GPU_MEMORY}
#define CLI_PART_HELP                                                                 \
    "      --part-objects N     cut the index into parts of N objects each (by\n"     \
    "                           object id), each searched on its own and the\n"       \
    "                           answers merged: for data larger than GPU memory\n"    \
    "                           or RAM (see 'genie info' for the parts)\n"            \
    "      --part-bytes B       cut into parts of at most B bytes of postings (4\n"   \
    "                           per posting; K, M, G, T suffixes); a part holds\n"    \
    "                           at least one object; give at most one of the two\n"  \
    "      --gpu-memory B       the GPU memory budget the index will be searched\n"   \
    "                           under: without a part option, parts hold at most\n"  \
    "                           B/4 bytes of postings (two parts on the GPU at a\n"   \
    "                           time, the rest for the queries); without any of\n"   \
    "                           the three, parts hold at most 1G of postings, so\n"  \
    "                           most indexes are one part\n"

typedef struct cli_build_args {
    const char *zOut;         /* -o: the index to write (required) */
    genie_build_options opt;  /* -L and the part options; the rest zero */
    int quiet;                /* -q */
    int noRecall;             /* --no-recall-estimate (sets, sequences, vectors) */
    double recallBudget;      /* --recall-budget: seconds the estimate may take, 0 = no limit */
} cli_build_args;

/*
 * The approximate types' builds (sets, sequences, vectors) put
 * CLI_RECALL_BUILD_OPTION in their long options and CLI_RECALL_BUILD_HELP in
 * their help, and call cli_build_recall() once the index is written: it
 * computes the recall estimate into INDEX.recall (genie_recall_write()),
 * so that genie info can show it and the first --recall search finds it.
 */
#define CLI_OPT_NO_RECALL 0x120
#define CLI_OPT_RECALL_BUDGET 0x121
#define CLI_RECALL_BUILD_OPTION                                      \
    {"no-recall-estimate", no_argument, 0, CLI_OPT_NO_RECALL},      \
    {"recall-budget", required_argument, 0, CLI_OPT_RECALL_BUDGET}
/* The default of --recall-budget, seconds. */
#define CLI_RECALL_BUDGET_DEFAULT 30
#define CLI_RECALL_BUILD_HELP                                                        \
    "      --no-recall-estimate  skip the recall estimate (INDEX.recall, for\n"    \
    "                           --recall and genie info; else computed now:\n"    \
    "                           200 exact searches, strings 1,000, and one\n"    \
    "                           search of K = 4096)\n"                          \
    "      --recall-budget S    stop the estimate after S seconds (default 30;\n"  \
    "                           0: no limit); then INDEX.recall is not written\n" \
    "                           and a --recall search computes it when needed\n"
/**
 * The estimate in a child process within a->recallBudget seconds
 * (tools/build_recall.c).  @return CLI_EXIT_OK (also when the budget
 * stopped it: the index is complete), or CLI_EXIT_FAIL (printed).
 */
int cli_build_recall(const cli_build_args *a);

/** A front-end's option callback's answer for a code it does not know. */
#define CLI_OPTION_UNKNOWN (-1)
/**
 * A front-end's own option @p c with argument @p zArg (NULL when none).
 * @return CLI_EXIT_OK, CLI_EXIT_USAGE (message printed), or
 *         CLI_OPTION_UNKNOWN.
 */
typedef int (*cli_option_fn)(void *ctx, int c, const char *zArg);

/** cli_parse_build()'s answer when the command is to go on. */
#define CLI_GO_ON (-1)
/**
 * Parse the options of `genie build`: the shared ones into @p a, and
 * those of @p zShort (getopt letters) and @p aLong (a getopt_long table
 * ended by a zero entry; NULL for none) through @p xOption(@p ctx, ...).
 * -t goes to xOption too, and is ignored when xOption does not know it (the
 * type chose the front-end).  -h prints @p zHelp.  On return optind is the
 * first input.
 * @return CLI_GO_ON, CLI_EXIT_OK after --help, or CLI_EXIT_USAGE (printed).
 */
int cli_parse_build(int argc, char **argv, const char *zShort, const struct option *aLong, const char *zHelp,
                    cli_option_fn xOption, void *ctx, cli_build_args *a);

/* Progress on stderr: shown only on a terminal, after the first second. */
typedef struct cli_progress {
    const char *zWhat;
    double tStart, tLast;
    int enabled, shown;
} cli_progress;

void cli_progress_start(cli_progress *p, const char *zWhat, int quiet);
void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total);
void cli_progress_end(cli_progress *p);

/*
 * gpu_warm.c: load the CUDA module and create the context on a thread of
 * its own while the command opens its index, unless the command line
 * names a CPU backend (or --help), or the CUDA backend was not built.
 * cli_gpu_warm_wait joins that thread (before the process exits).
 */
void cli_gpu_warm_start(int argc, char **argv);
void cli_gpu_warm_wait(void);

#endif
