/*
 * genie knn-graph of a vectors index: every object's k nearest other
 * objects, exact or through an IVF index's lists, written as .ivecs by
 * genie_vectors_knn_graph_write() (block by block, crash-safely), with a
 * progress line on a terminal and a summary on standard error.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "genie/vectors.h"
#include "cli.h"
#include "type_vectors_graph.h"

const char vec_zKnnGraphHelp[] =
    "Usage: genie knn-graph [options] -o GRAPH INDEX   (INDEX of type vectors)\n"
    "\n"
    "The k-NN graph of the vectors INDEX: every object's k nearest other\n"
    "objects (the object itself left out), written to GRAPH as .ivecs, one\n"
    "row per object in id order, each k ids nearest first, ties by smaller\n"
    "id, under the index's metric.  Each object's stored vector is searched\n"
    "for k + 1 neighbours (the object itself among them), in blocks of\n"
    "objects, so memory besides the index is one block's whatever its size:\n"
    "exactly, as genie search --exact searches it (an LSH index, or --exact),\n"
    "or, of an IVF index, through its lists as genie search --nprobe P does\n"
    "(one nprobe for the whole graph; a row whose lists hold fewer than k + 1\n"
    "vectors ends in -1s).\n"
    "\n"
    "  -k, --k N               neighbours per object, 1..objects - 1 (default\n"
    "                          10); at most 65535 exact on the CPU, 2047 exact\n"
    "                          on a GPU, 1023 through IVF\n"
    "  -o, --output GRAPH      the .ivecs file to write (required); an existing\n"
    "                          file is replaced only once the graph is\n"
    "                          complete, and never by the index itself\n"
    "      --nprobe P          an IVF index: lists probed per object, 1..nlist\n"
    "                          (default: the index's, chosen at build time for\n"
    "                          recall@10 0.9)\n"
    "      --recall R          an IVF index: nprobe (and IVF-PQ's depth) chosen\n"
    "                          as genie search -k K --recall R chooses them, for\n"
    "                          an estimated recall@k >= R; k <= 100\n"
    "  -K, --candidates R      IVF-PQ: the best R estimates re-ranked by the\n"
    "                          exact distance, k + 1..2048 (default the index's)\n"
    "      --exact             an IVF index: the exact graph instead (an LSH\n"
    "                          index's graph is always exact)\n"
    "      --precision P       exact on a GPU: fp32 (default), tf32 or fp16, the\n"
    "                          GEMM that bounds the distances (the graph is the\n"
    "                          same in each); ignored on the CPU; l1 takes fp32\n"
    CLI_BACKEND_HELP
    "  -q, --quiet             no progress line or summary on standard error\n"
    "  -h, --help              show this help\n";

enum { OPT_PRECISION = 0x200, OPT_NPROBE, OPT_RECALL, OPT_EXACT };
const struct option vec_aKnnGraphOption[] = {
    {"k", required_argument, 0, 'k'},          {"output", required_argument, 0, 'o'},
    {"nprobe", required_argument, 0, OPT_NPROBE}, {"recall", required_argument, 0, OPT_RECALL},
    {"candidates", required_argument, 0, 'K'}, {"exact", no_argument, 0, OPT_EXACT},
    {"precision", required_argument, 0, OPT_PRECISION},
    {"quiet", no_argument, 0, 'q'},            {"help", no_argument, 0, 'h'},
    CLI_BACKEND_LONG_OPTIONS,                  {0, 0, 0, 0}};

typedef struct graph_cli {
    genie_vsearch_options vo;
    const char *zOut;
    int quiet;
} graph_cli;

/* The options that need an IVF index or exclude each other, before the index is opened. */
static int check_graph(const graph_cli *g)
{
    const genie_vsearch_options *o = &g->vo;
    if (o->exact && (o->nprobe || o->recall > 0 || o->candidates))
        return cli_usage_error("knn-graph", "--exact takes no %s", o->nprobe ? "--nprobe" : o->recall > 0 ? "--recall" : "-K");
    if (o->recall > 0 && (o->nprobe || o->candidates))
        return cli_usage_error("knn-graph", "--recall chooses %s itself: give one or the other",
                               o->nprobe ? "nprobe" : "the refinement depth");
    if (o->precision != GENIE_PRECISION_FP32 && (o->nprobe || o->recall > 0 || o->candidates))
        return cli_usage_error("knn-graph", "--precision applies to the exact graph alone");
    return -1;
}

/* Parse the options; returns -1 to go on, else an exit code. */
static int parse_graph(int argc, char **argv, graph_cli *g)
{
    genie_vsearch_options_init(&g->vo);
    g->zOut = NULL;
    g->quiet = 0;
    int c;
    uint64_t v;
    genie_precision precision;
    optind = 1;
    while ((c = getopt_long(argc, argv, VEC_KNN_GRAPH_SHORT, vec_aKnnGraphOption, NULL)) != -1) {
        int st;
        if (cli_engine_option("knn-graph", c, optarg, &g->vo.search, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'k':
            if (!cli_parse_u64(optarg, 1, GENIE_VECTORS_MAX_K - 1, &v))
                return cli_usage_error("knn-graph", "-k must be an integer 1..%u, not '%s'",
                                       GENIE_VECTORS_MAX_K - 1, optarg);
            g->vo.k = (uint32_t)v;
            break;
        case 'o': g->zOut = optarg; break;
        case 'K':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("knn-graph", "-K '%s': a positive number", optarg);
            g->vo.candidates = (uint32_t)v;
            break;
        case OPT_NPROBE:
            if (!cli_parse_u64(optarg, 1, 65536, &v))
                return cli_usage_error("knn-graph", "--nprobe: a number 1..65536, not '%s'", optarg);
            g->vo.nprobe = (uint32_t)v;
            break;
        case OPT_RECALL:
            if ((st = cli_parse_recall("knn-graph", optarg, &g->vo.recall)) != CLI_EXIT_OK)
                return st;
            break;
        case OPT_EXACT: g->vo.exact = 1; break;
        case OPT_PRECISION:
            if (genie_precision_parse(optarg, &precision) != GENIE_OK)
                return cli_usage_error("knn-graph", "--precision '%s': fp32, tf32 or fp16", optarg);
            g->vo.precision = precision;
            break;
        case 'q': g->quiet = 1; break;
        case 'h': cli_help(vec_zKnnGraphHelp); return CLI_EXIT_OK;
        default: return cli_usage_error("knn-graph", "bad option");
        }
    }
    if (!g->zOut)
        return cli_usage_error("knn-graph", "-o GRAPH is required");
    if (optind + 1 != argc)
        return cli_usage_error("knn-graph", "expected exactly one INDEX");
    int st = check_graph(g);
    if (st >= 0)
        return st;
    if (cli_check_output(g->zOut, argc, argv) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    return -1;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress_update(ctx, done, total);
}

int vec_cli_knn_graph(int argc, char **argv, const char *zIndex)
{
    (void)zIndex; /* the index is the one argument left after the options */
    graph_cli g;
    int ex = parse_graph(argc, argv, &g);
    if (ex >= 0)
        return ex;
    const char *zPath = argv[optind];
    genie_index *idx;
    genie_status rc = genie_index_open(zPath, &idx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    cli_progress prog;
    cli_progress_start(&prog, "knn-graph: objects", g.quiet);
    g.vo.search.progress = on_progress;
    g.vo.search.progress_ctx = &prog;
    genie_search_stats st;
    rc = genie_vectors_knn_graph_write(idx, &g.vo, g.zOut, &st);
    cli_progress_end(&prog);
    if (rc == GENIE_OK && !g.quiet) {
        genie_index_info info;
        genie_index_get_info(idx, &info);
        char zHow[160];
        if (st.nprobe) {
            int n = snprintf(zHow, sizeof zHow, "ivf, nprobe %u", st.nprobe);
            if (st.candidates)
                n += snprintf(zHow + n, sizeof zHow - (size_t)n, ", depth %u", st.candidates);
            if (st.recall_estimate >= 0)
                snprintf(zHow + n, sizeof zHow - (size_t)n, ", estimated recall@%u %.4f", g.vo.k, st.recall_estimate);
        } else {
            snprintf(zHow, sizeof zHow, "exact%s%s", g.vo.precision != GENIE_PRECISION_FP32 ? ", " : "",
                     g.vo.precision != GENIE_PRECISION_FP32 ? genie_precision_name(g.vo.precision) : "");
        }
        fprintf(stderr, "genie knn-graph: %llu objects, k = %u, in %.3f s (%s, %s) to %s\n",
                (unsigned long long)info.n_objects, g.vo.k, st.total_seconds, zHow, genie_backend_name(st.backend),
                g.zOut);
    }
    genie_index_close(idx);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}
