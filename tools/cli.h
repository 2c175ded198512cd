/*
 * Helpers shared by the genie subcommands: exit codes, option values,
 * and progress lines on a terminal.
 *
 * Exit codes: 0 ok, 1 bad input or failure (the library's message is
 * printed), 2 usage error.
 */
#ifndef GENIE_TOOLS_CLI_H
#define GENIE_TOOLS_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "genie/genie.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

int cmd_build(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_info(int argc, char **argv);

/*
 * Front-ends with their own options (tools/frontends.c): one entry per data
 * type in cli_aFrontend, ended by an entry whose zType is NULL.
 *   xBuild(argc, argv):         `genie build --type zType ...` (argv[0] is
 *                               "build"; it parses every option itself);
 *   xSearch(argc, argv, zIndex): `genie search ...` when the index found
 *                               in argv is of this type (argv[0] "search").
 * Both return a CLI_EXIT_* code.
 */
typedef struct cli_frontend {
    const char *zType;
    genie_index_type type;
    int (*xBuild)(int argc, char **argv);
    int (*xSearch)(int argc, char **argv, const char *zIndex);
} cli_frontend;

extern const cli_frontend cli_aFrontend[];
const cli_frontend *cli_frontend_by_name(const char *zType);
const cli_frontend *cli_frontend_by_type(genie_index_type type);
/** The value of -t/--type in argv, or NULL. */
const char *cli_find_type_arg(int argc, char **argv);
/**
 * The first argument naming a file that starts with the index magic, and
 * the type its header claims (genie_index_open() validates it later).
 */
const char *cli_find_index_arg(int argc, char **argv, genie_index_type *pType);

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
/** Write @p s with tab, newline and backslash as \\t \\n \\\\. */
void cli_put_escaped(const char *s, size_t n);
/** Write @p s as a JSON string; bytes < 0x20 and >= 0x7f as \\u00XX. */
void cli_put_json_string(const char *s, size_t n);

/* Front-ends: sequences (tools/type_sequences.c), sets (tools/type_sets.c). */
int seq_cli_build(int argc, char **argv);
int seq_cli_search(int argc, char **argv, const char *zIndex);
int set_cli_build(int argc, char **argv);
int set_cli_search(int argc, char **argv, const char *zIndex);

/* Front-end: relational tables (tools/type_table.c). */
int table_cli_build(int argc, char **argv);
int table_cli_search(int argc, char **argv, const char *zIndex);

/* Metric spaces, the List of Clusters (tools/type_metric.c). */
int lc_cli_build(int argc, char **argv);
int lc_cli_search(int argc, char **argv, const char *zIndex);

/* Vectors (tools/type_vectors.c); eval and lsh-params are subcommands. */
int vec_cli_build(int argc, char **argv);
int vec_cli_search(int argc, char **argv, const char *zIndex);
int vec_cli_eval(int argc, char **argv);
int vec_cli_lsh_params(int argc, char **argv);

/** Print "genie CMD: message" and the usage hint; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *zCmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Print "genie: <genie_last_error() or strerror>"; returns CLI_EXIT_FAIL. */
int cli_fail(genie_status rc);

/** Parse a whole unsigned number in [lo, hi]; 0 on failure. */
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/** Parse a byte size with an optional K, M, G or T suffix (powers of 1024). */
int cli_parse_bytes(const char *s, uint64_t *out);

/**
 * The engine options every search command shares, by getopt code: 'b'
 * --backend, 'j' --threads, 'G' --gpu-memory, 'B' --load-balance.
 * @return 1 when @p c is one of them (then *pStatus is CLI_EXIT_OK, or
 *         CLI_EXIT_USAGE with the message printed), 0 otherwise.
 */
int cli_engine_option(int c, const char *zArg, genie_search_options *opt, int *pStatus);

/*
 * The options every `genie build` shares (cmd_build.c and each front-end's
 * build): put CLI_PART_LONG_OPTIONS and {"sublist-length", ..., 'L'} in the
 * getopt_long table, CLI_PART_HELP in the --help text, and hand each option
 * code to cli_build_option().  The codes lie above any character, so they clash
 * with no short option.
 */
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
/**
 * Parse a shared build option by getopt code ('L' --sublist-length,
 * CLI_OPT_PART_*), refusing both --part-objects and --part-bytes.
 * @return 1 when @p c is one of them (then *pStatus is CLI_EXIT_OK, or
 *         CLI_EXIT_USAGE with the message printed), 0 otherwise.
 */
int cli_build_option(int c, const char *zArg, genie_build_options *opt, int *pStatus);

/* Progress on stderr: shown only on a terminal, after the first second. */
typedef struct cli_progress {
    const char *zWhat;
    double tStart, tLast;
    int enabled, shown;
} cli_progress;

double cli_now(void);
void cli_progress_start(cli_progress *p, const char *zWhat, int quiet);
void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total);
void cli_progress_end(cli_progress *p);

#endif
