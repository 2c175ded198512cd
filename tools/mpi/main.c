/*
 * genie-mpi: `mpirun -np N genie-mpi search [options] INDEX [QUERIES]`.
 * Every rank parses the same arguments; rank 0 becomes the broker, the
 * others rankers.  Usage errors are found by every rank alike, printed by
 * rank 0 alone, and end every rank with status 2 before any message.
 */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli.h"
#include "genie_mpi.h"

static const char zHelp[] =
    "Usage: mpirun -np N genie-mpi search [options] INDEX [QUERIES]\n"
    "       mpirun -np N genie-mpi search [options] --shard-map FILE [QUERIES]\n"
    "       mpirun -np N genie-mpi metric [options] INDEX [QUERIES]   (genie-mpi metric --help)\n"
    "\n"
    "A distributed `genie search` of a keyword or text index: rank 0 is the\n"
    "broker, ranks 1..N-1 the rankers.  By default ranker r of R = N-1\n"
    "searches the contiguous parts [(r-1)P/R, rP/R) of INDEX's P parts (build\n"
    "it with `genie build --part-objects` into at least R parts, on a path\n"
    "every host reads).  The broker reads QUERIES (default: its standard\n"
    "input) in batches, sends each batch to every ranker, merges their top-k\n"
    "lists exactly and prints what `genie search` prints for INDEX, byte for\n"
    "byte; with -np 1 the broker searches INDEX alone.\n"
    "\n"
    "  -k, --k N               results per query, >= 1 (default 10)\n"
    "  -m, --min-count N       leave out objects whose count is below N\n"
    "  -b, --backend NAME      the rankers' backend (see genie search --help)\n"
    "  -j, --threads N         CPU threads per ranker (default: all cores)\n"
    "      --gpu-memory BYTES  GPU memory budget per ranker, suffix K/M/G\n"
    "  -d, --delimiter LINE    text queries: records between lines equal to LINE\n"
    "  -o, --output FILE       write the answers to FILE (on the broker's host)\n"
    "                          instead of standard output, which mpirun\n"
    "                          forwards through a pipe, slowly\n"
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each hit's stored record\n"
    "      --shard-map FILE    instead of INDEX, each ranker searches a file of\n"
    "                          its own: lines 'rank path first_object' (object\n"
    "                          i of the file is object first_object+i), one\n"
    "                          per ranker; keyword indexes; the broker opens\n"
    "                          every file too (labels, records)\n"
    "      --batch N           queries per superstep (default 1024)\n"
    "      --depth N           supersteps in flight, 1..8 (default 2: the\n"
    "                          broker merges one batch while the rankers search\n"
    "                          the next)\n"
    "      --timeout SECONDS   fail when a ranker has not answered a batch\n"
    "                          within SECONDS (default 600; 0: wait forever)\n"
    "      --allow-partial     instead, print what the other rankers found:\n"
    "                          JSON objects get \"partial\":true, standard\n"
    "                          error names the queries and the missing\n"
    "                          objects, and the exit status is 3\n"
    "      --stats             print the broker's timings on standard error\n"
    "  -q, --quiet             no notices on standard error\n"
    "  -h, --help              show this help\n"
    "\n"
    "Exit status: 0 answered, 1 failed (a ranker's error is printed with its\n"
    "rank), 2 usage, 3 answered with partial answers (--allow-partial).\n";

#define OPT_JSON 0x100
#define OPT_SHOW 0x101
#define OPT_SHARD_MAP 0x102
#define OPT_BATCH 0x103
#define OPT_DEPTH 0x104
#define OPT_TIMEOUT 0x105
#define OPT_PARTIAL 0x106
#define OPT_STATS 0x107
#define OPT_GPU_MEMORY 0x108

void mpi_nap(unsigned *pUs)
{
    struct timespec ts = {0, (long)*pUs * 1000};
    nanosleep(&ts, NULL);
    if (*pUs < 1000)
        *pUs = *pUs * 2 + 1;
}

double mpi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(int rank, const char *fmt, const char *zArg)
{
    if (rank == 0) {
        fputs("genie-mpi: ", stderr);
        fprintf(stderr, fmt, zArg);
        fputs("\nTry 'genie-mpi search --help'.\n", stderr);
    }
    return MPI_EXIT_USAGE;
}

static int parse(int argc, char **argv, int rank, mpi_args *a)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},           {"min-count", required_argument, 0, 'm'},
        {"backend", required_argument, 0, 'b'},     {"threads", required_argument, 0, 'j'},
        {"gpu-memory", required_argument, 0, OPT_GPU_MEMORY},
        {"delimiter", required_argument, 0, 'd'},   {"json", no_argument, 0, OPT_JSON},
        {"show", no_argument, 0, OPT_SHOW},         {"shard-map", required_argument, 0, OPT_SHARD_MAP},
        {"batch", required_argument, 0, OPT_BATCH}, {"depth", required_argument, 0, OPT_DEPTH},
        {"timeout", required_argument, 0, OPT_TIMEOUT}, {"allow-partial", no_argument, 0, OPT_PARTIAL},
        {"stats", no_argument, 0, OPT_STATS},       {"quiet", no_argument, 0, 'q'},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->opt.k = 10;
    a->batch = 1024;
    a->depth = 2;
    a->timeout = 600;
    if (argc < 2 || strcmp(argv[1], "search") != 0) {
        if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
            if (rank == 0)
                fputs(zHelp, stdout);
            return -1;
        }
        if (argc >= 2 && strcmp(argv[1], "serve") == 0)
            return usage(rank, "%s: the server has not landed yet; use genie-mpi search", "serve");
        return usage(rank, "expected the command 'search' or 'metric'%s", "");
    }
    argc--;
    argv++;
    opterr = rank == 0;
    optind = 1;
    int c;
    uint64_t v;
    while ((c = getopt_long(argc, argv, "k:m:b:j:d:o:qh", aOpt, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return usage(rank, "-k must be an integer 1..4294967295, not '%s'", optarg);
            a->opt.k = (uint32_t)v;
            break;
        case 'm':
            if (!cli_parse_u64(optarg, 0, UINT32_MAX, &v))
                return usage(rank, "--min-count must be 0..4294967295, not '%s'", optarg);
            a->minCount = (uint32_t)v;
            break;
        case 'b':
            if (genie_backend_parse(optarg, &a->opt.backend) != GENIE_OK)
                return usage(rank, "%s", genie_last_error());
            break;
        case 'j':
            if (!cli_parse_u64(optarg, 1, 4096, &v))
                return usage(rank, "--threads must be 1..4096, not '%s'", optarg);
            a->opt.threads = (unsigned)v;
            break;
        case OPT_GPU_MEMORY:
            if (!cli_parse_bytes(optarg, &a->opt.gpu_memory))
                return usage(rank, "--gpu-memory must be a size like 8G, not '%s'", optarg);
            break;
        case 'd': a->zDelim = optarg; break;
        case 'o': a->zOutput = optarg; break;
        case OPT_JSON: a->json = 1; break;
        case OPT_SHOW: a->show = 1; break;
        case OPT_SHARD_MAP: a->zShardMap = optarg; break;
        case OPT_BATCH:
            if (!cli_parse_u64(optarg, 1, 1u << 20, &v))
                return usage(rank, "--batch must be 1..1048576, not '%s'", optarg);
            a->batch = (size_t)v;
            break;
        case OPT_DEPTH:
            if (!cli_parse_u64(optarg, 1, 8, &v))
                return usage(rank, "--depth must be 1..8, not '%s'", optarg);
            a->depth = (unsigned)v;
            break;
        case OPT_TIMEOUT:
            if (!cli_parse_u64(optarg, 0, 86400 * 365, &v))
                return usage(rank, "--timeout must be whole seconds 0..31536000, not '%s'", optarg);
            a->timeout = (double)v;
            break;
        case OPT_PARTIAL: a->allowPartial = 1; break;
        case OPT_STATS: a->stats = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h':
            if (rank == 0)
                fputs(zHelp, stdout);
            return -1;
        default: return usage(rank, "bad option%s", "");
        }
    }
    if (a->zDelim && !*a->zDelim)
        return usage(rank, "--delimiter must not be empty%s", "");
    if (a->zShardMap) {
        if (argc - optind > 1)
            return usage(rank, "with --shard-map, expected at most one QUERIES file (no INDEX)%s", "");
        a->zQueries = optind < argc ? argv[optind] : "-";
        return MPI_EXIT_OK;
    }
    if (optind >= argc || argc - optind > 2)
        return usage(rank, "expected INDEX and at most one QUERIES file%s", "");
    a->zIndex = argv[optind];
    a->zQueries = optind + 1 < argc ? argv[optind + 1] : "-";
    return MPI_EXIT_OK;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "genie-mpi: MPI_Init failed\n");
        return MPI_EXIT_FAIL;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 2 && strcmp(argv[1], "metric") == 0) {
        int stm = lcm_main(argc - 1, argv + 1, rank, size);
        MPI_Finalize();
        return stm;
    }
    mpi_args a;
    int st = parse(argc, argv, rank, &a);
    if (st == MPI_EXIT_OK && a.zShardMap && size == 1)
        st = usage(rank, "--shard-map %s needs rankers: run with mpirun -np 2 or more", a.zShardMap);
    if (st == MPI_EXIT_OK)
        st = rank == 0 ? broker_run(&a, size - 1) : ranker_run(&a, rank, size - 1);
    else if (st < 0)
        st = MPI_EXIT_OK; /* --help */
    MPI_Finalize();
    return st;
}
