/*
 * What genie search and genie eval of a vectors index share: their
 * options (vec_cli_opts), the common part of their getopt tables
 * (VEC_OPTIONS) and help, and parse_vec_opts() (tools/type_vectors_cli.c),
 * which parses either command's; and what the vectors entry
 * (tools/type_vectors.c) takes of genie eval (tools/type_vectors_eval.c):
 * its xCliEval and, for its cliEval, VEC_EVAL_CLI (as cli.h's
 * CLI_EVAL_LINES).
 */
#ifndef GENIE_TOOLS_TYPE_VECTORS_CLI_H
#define GENIE_TOOLS_TYPE_VECTORS_CLI_H

#include "cli.h"
#include "itype.h"

#define VEC_PRECISION_HELP                                                                 \
    "      --precision P       with --exact on a GPU: fp32 (default), tf32 or fp16,\n"        \
    "                          the GEMM that bounds the distances; the answers\n"         \
    "                          are the same in each (candidates the bound cannot\n"       \
    "                          rule out are re-ranked by the direct fp32 distance);\n"    \
    "                          ignored on the CPU; l1 takes fp32 alone\n"

/* Options shared by search and eval. */
typedef struct vec_cli_opts {
    itype_options o;
    genie_search_options eng;
    const char *zIvecs, *zTruth, *zTruthOut;
    genie_backend truthBackend;
    uint64_t limit;
    uint32_t repeat; /* eval: runs of the search, the median one's time reported */
    int quiet, csv, json, verbose, show;
    genie_search_stats st; /* search: what it did */
    uint32_t aNprobe[32];  /* eval: --nprobe P,P,... (the first is o.nprobe) */
    uint32_t nNprobe;
} vec_cli_opts;

/* The options of the vectors search and eval (parse_vec_opts() parses both). */
enum { OPT_EXACT = 1, OPT_IVECS, OPT_TRUTH, OPT_TRUTH_BACKEND, OPT_TRUTH_OUT, OPT_LIMIT, OPT_CSV, OPT_REPEAT,
       OPT_RECALL, OPT_PRECISION, OPT_NPROBE };
#define VEC_OPTIONS                                                                                     \
    {"k", required_argument, 0, 'k'}, {"candidates", required_argument, 0, 'K'},                         \
    {"radius", required_argument, 0, 'r'}, {"exact", no_argument, 0, OPT_EXACT},                        \
    {"recall", required_argument, 0, OPT_RECALL}, {"precision", required_argument, 0, OPT_PRECISION},   \
    {"nprobe", required_argument, 0, OPT_NPROBE}, {"help", no_argument, 0, 'h'}, CLI_ENGINE_LONG_OPTIONS

/* Parse search/eval options; returns -1 to go on, else an exit code. */
int parse_vec_opts(const char *zCmd, const itype_cli *cli, int argc, char **argv, vec_cli_opts *o);

/* genie eval (type_vectors_eval.c): the entry's xCliEval, and its options and help for cliEval. */
int vec_cli_eval(int argc, char **argv, const char *zIndex);

#define VEC_EVAL_SHORT "k:K:r:h" CLI_ENGINE_SHORT_OPTIONS
extern const struct option vec_aEvalOption[];
extern const char vec_zEvalHelp[];
#define VEC_EVAL_CLI {VEC_EVAL_SHORT, vec_aEvalOption, vec_zEvalHelp}

#endif
