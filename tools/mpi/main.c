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

#include "../cli.h"
#include "../itype.h"
#include "genie_mpi.h"

static const char zHelp[] =
    "Usage: mpirun -np N genie-mpi search [options] INDEX [QUERIES]\n"
    "       mpirun -np N genie-mpi search [options] --shard-map FILE [QUERIES]\n"
    "       mpirun -np N genie-mpi serve [engine options] INDEX [genie serve options]\n"
    "       mpirun -np N genie-mpi metric [options] INDEX [QUERIES]   (genie-mpi metric --help)\n"
    "\n"
    "A distributed `genie search` of a keyword, text, vectors, sequences or\n"
    "sets index: rank 0 is the broker, ranks 1..N-1 the rankers.  By default\n"
    "ranker r of R = N-1 searches the contiguous parts [(r-1)P/R, rP/R) of\n"
    "INDEX's P parts (build it with `genie build --part-objects` into at\n"
    "least R parts, on a path every host reads).  The broker reads QUERIES\n"
    "(default: its standard input; a vector file for a vectors index) in\n"
    "batches, sends each batch to every ranker, merges their top-k lists\n"
    "exactly and prints what `genie search` prints for INDEX; with -np 1\n"
    "the broker searches INDEX alone.  Equal to genie search byte for byte:\n"
    "keywords, text, vectors --exact, sequences --exact, sets (always\n"
    "answered exactly: as genie search --exact); vectors LSH: the exact\n"
    "re-rank of the union of every shard's own top-K candidates (equal when\n"
    "K reaches the objects); vectors IVF: equal (IVF-PQ refined: the exact\n"
    "re-rank of the union of every shard's best estimates); sequences:\n"
    "certified answers are exact (docs/SCALING.md).\n"
    "\n"
    "  -k, --k N               results per query (default: as genie search)\n"
    "      --min-count N       keywords, text: leave out objects whose count\n"
    "                          is below N (-m, deprecated: -m is a build's hash\n"
    "                          functions)\n"
    "  -K, --candidates N      vectors: candidates re-ranked per shard (default\n"
    "                          10 k); sequences: candidates per shard (default 32)\n"
    "  -r, --radius R          vectors (l2): also match R buckets either side\n"
    "      --nprobe P          vectors, an IVF index: lists probed per query\n"
    "                          (every shard probes the same lists)\n"
    "      --exact             vectors, sequences: exact search (sets: always)\n"
    "      --measure M         sets: jaccard (default), cosine, dice, overlap or\n"
    "                          containment (genie search --help)\n"
    "      --min-similarity T  sets: the sets at or above T, 0 < T <= 1, the\n"
    "                          best k of them (-k is required)\n"
    "      --precision P       vectors --exact on a GPU: fp32 (default), tf32 or\n"
    "                          fp16 for the candidates; the answers are the same\n"
    "      --certify[=LIMIT]   sequences: search again with K doubled until\n"
    "                          certified or K reaches LIMIT (default 4096)\n"
    "  -b, --backend NAME      the rankers' backend (see genie search --help)\n"
    "  -j, --threads N         CPU threads per ranker (default: all cores)\n"
    "      --gpu-memory BYTES  GPU memory budget per ranker (per GPU), K/M/G\n"
    "      --gpus LIST|all|local  the GPUs of each ranker: a list (e.g. 0,1)\n"
    "                          or all, each ranker using them all (shards or\n"
    "                          replicas, --gpu-mode); local: each ranker one\n"
    "                          GPU, the i-th ranker of a host (in rank order)\n"
    "                          GPU i modulo the host's GPUs\n"
    "      --gpu-mode MODE     auto, shards, replicas (with a --gpus list)\n"
    "  -d, --delimiter LINE    text queries: records between lines equal to LINE\n"
    "  -o, --output FILE       write the answers to FILE (on the broker's host)\n"
    "                          instead of standard output, which mpirun\n"
    "                          forwards through a pipe, slowly; FILE is\n"
    "                          replaced only when the run succeeds\n"
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              keywords, text, sequences: print each hit's\n"
    "                          stored record\n"
    "      --shard-map FILE    instead of INDEX, each ranker searches a file of\n"
    "                          its own: lines 'rank path first_object' (object\n"
    "                          i of the file is object first_object+i), one\n"
    "                          per ranker; keyword and vectors indexes; the\n"
    "                          broker opens every file too (labels, records)\n"
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
    "genie-mpi serve: genie serve's HTTP/JSON server (docs/SERVER.md) on rank\n"
    "0 in front of the rankers, serving INDEX under its file name without\n"
    ".genie; each batch of its dynamic batching is one superstep.  Before\n"
    "INDEX: -b, -j, --gpu-memory, --gpus, --gpu-mode, --timeout, -q (the\n"
    "rankers'); after it, genie serve's options (--listen, --max-batch,\n"
    "--max-wait, --token-file, ...; not --index or --index-dir).  Requests\n"
    "give k and the front-end options, as to genie serve.  Needs N >= 2.\n"
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
#define OPT_EXACT 0x109
#define OPT_CERTIFY 0x10a
#define OPT_GPUS 0x10b
#define OPT_GPU_MODE 0x10c
#define OPT_PRECISION 0x10d
#define OPT_MIN_COUNT 0x10e
#define OPT_MEASURE 0x10f
#define OPT_MIN_SIMILARITY 0x110
#define OPT_NPROBE 0x111

static int usage(int rank, const char *fmt, const char *zArg)
{
    if (rank == 0) {
        fputs("genie-mpi: ", stderr);
        fprintf(stderr, fmt, zArg);
        fputs("\nTry 'genie-mpi search --help'.\n", stderr);
    }
    return MPI_EXIT_USAGE;
}

/* --gpus LIST|all|local into @p a.  @return 0, or -1 for a bad list. */
static int parse_gpus(const char *zArg, mpi_args *a)
{
    unsigned n = 0;
    if (strcmp(zArg, "local") == 0) {
        a->gpusLocal = 1;
        return 0;
    }
    if (strcmp(zArg, "all") == 0) {
        int nDevice = genie_cuda_device_count();
        for (int g = 0; g < nDevice && n < MPI_MAX_GPUS; g++)
            a->aGpu[n++] = g;
        if (n == 0)
            return -1;
    } else {
        for (const char *z = zArg;;) {
            char *end;
            unsigned long g = strtoul(z, &end, 10);
            if (end == z || g >= MPI_MAX_GPUS || n == MPI_MAX_GPUS || (*end && *end != ','))
                return -1;
            a->aGpu[n++] = (int)g;
            if (!*end)
                break;
            z = end + 1;
        }
    }
    a->opt.gpus = a->aGpu;
    a->opt.n_gpus = n;
    return 0;
}

/* genie-mpi serve: INDEX, then genie serve's own options; the options of genie-mpi search are refused. */
static int parse_serve(int argc, char **argv, int rank, mpi_args *a)
{
    const char *zBad = a->k ? "-k" : a->minCount ? "--min-count" : a->candidates ? "--candidates"
                     : a->radius ? "--radius" : a->nprobe ? "--nprobe" : a->exact ? "--exact"
                     : a->maxCandidates ? "--certify"
                     : a->precision != GENIE_PRECISION_FP32 ? "--precision"
                     : a->zDelim ? "--delimiter" : a->zOutput ? "--output" : a->json ? "--json"
                     : a->show ? "--show" : a->zShardMap ? "--shard-map" : a->allowPartial ? "--allow-partial"
                     : a->stats ? "--stats" : a->batch != 1024 ? "--batch" : a->depth != 2 ? "--depth" : NULL;
    if (zBad)
        return usage(rank, "serve: %s belongs to genie-mpi search (a request gives k and its options)", zBad);
    if (optind >= argc)
        return usage(rank, "serve: expected INDEX%s", "");
    a->zIndex = argv[optind++];
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    a->azServeArg = argv + optind;
    a->nServeArg = argc - optind;
    for (int i = 0; i < a->nServeArg; i++)
        if (strncmp(a->azServeArg[i], "--index", 7) == 0 || strcmp(a->azServeArg[i], "-i") == 0 ||
            strcmp(a->azServeArg[i], "-D") == 0)
            return usage(rank, "serve: %s: genie-mpi serve serves INDEX alone", a->azServeArg[i]);
    return MPI_EXIT_OK;
}

static int parse(int argc, char **argv, int rank, mpi_args *a)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},           {"min-count", required_argument, 0, OPT_MIN_COUNT},
        {"backend", required_argument, 0, 'b'},     {"threads", required_argument, 0, 'j'},
        {"gpu-memory", required_argument, 0, OPT_GPU_MEMORY},
        {"delimiter", required_argument, 0, 'd'},   {"json", no_argument, 0, OPT_JSON},
        {"show", no_argument, 0, OPT_SHOW},         {"shard-map", required_argument, 0, OPT_SHARD_MAP},
        {"batch", required_argument, 0, OPT_BATCH}, {"depth", required_argument, 0, OPT_DEPTH},
        {"timeout", required_argument, 0, OPT_TIMEOUT}, {"allow-partial", no_argument, 0, OPT_PARTIAL},
        {"stats", no_argument, 0, OPT_STATS},       {"quiet", no_argument, 0, 'q'},
        {"output", required_argument, 0, 'o'},      {"candidates", required_argument, 0, 'K'},
        {"radius", required_argument, 0, 'r'},      {"exact", no_argument, 0, OPT_EXACT},
        {"certify", optional_argument, 0, OPT_CERTIFY}, {"gpus", required_argument, 0, OPT_GPUS},
        {"gpu-mode", required_argument, 0, OPT_GPU_MODE}, {"precision", required_argument, 0, OPT_PRECISION},
        {"measure", required_argument, 0, OPT_MEASURE}, {"min-similarity", required_argument, 0, OPT_MIN_SIMILARITY},
        {"nprobe", required_argument, 0, OPT_NPROBE},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->localRanker = -1;
    a->batch = 1024;
    a->depth = 2;
    a->timeout = 600;
    if (argc < 2 || (strcmp(argv[1], "search") != 0 && strcmp(argv[1], "serve") != 0)) {
        if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
            if (rank == 0)
                cli_help(zHelp);
            return -1;
        }
        return usage(rank, "expected the command 'search', 'serve' or 'metric'%s", "");
    }
    a->serve = strcmp(argv[1], "serve") == 0;
#ifndef GENIE_HAVE_SERVER
    if (a->serve)
        return usage(rank, "serve: built without server support (libmicrohttpd-dev, libcjson-dev)%s", "");
#endif
    argc--;
    argv++;
    opterr = rank == 0;
    optind = 1;
    int c;
    uint64_t v;
    char zErr[128];
    /* serve: options end at INDEX, genie serve's follow it */
    while ((c = getopt_long(argc, argv, a->serve ? "+k:m:K:r:b:j:d:o:qh" : "k:m:K:r:b:j:d:o:qh", aOpt, NULL)) != -1) {
        switch (c) {
        case 'k': /* the index's type, and so its limit, is known later (check_options, search.c) */
            if (!itype_parse_k(NULL, optarg, &a->k, zErr, sizeof zErr))
                return usage(rank, "%s", zErr);
            break;
        case 'K':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return usage(rank, "--candidates must be 1..4294967295, not '%s'", optarg);
            a->candidates = (uint32_t)v;
            break;
        case 'r':
            if (!cli_parse_u64(optarg, 0, UINT32_MAX, &v))
                return usage(rank, "--radius must be a whole number, not '%s'", optarg);
            a->radius = (uint32_t)v;
            break;
        case OPT_EXACT: a->exact = 1; break;
        case OPT_NPROBE:
            if (!cli_parse_u64(optarg, 1, 65536, &v))
                return usage(rank, "--nprobe must be 1..65536, not '%s'", optarg);
            a->nprobe = (uint32_t)v;
            break;
        case OPT_MEASURE: {
            genie_set_measure m;
            if (genie_set_measure_parse(optarg, &m) != GENIE_OK)
                return usage(rank, "--measure must be jaccard, cosine, dice, overlap or containment, not '%s'", optarg);
            a->measure = (int)m;
            break;
        }
        case OPT_MIN_SIMILARITY: {
            char *e;
            a->minSimilarity = strtod(optarg, &e);
            if (e == optarg || *e || !(a->minSimilarity > 0 && a->minSimilarity <= 1))
                return usage(rank, "--min-similarity must be a number in (0, 1], not '%s'", optarg);
            break;
        }
        case OPT_PRECISION:
            if (genie_precision_parse(optarg, &a->precision) != GENIE_OK)
                return usage(rank, "--precision '%s': fp32, tf32 or fp16", optarg);
            break;
        case OPT_CERTIFY:
            a->maxCandidates = 4096;
            if (optarg && !cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return usage(rank, "--certify limit must be 1..4294967295, not '%s'", optarg);
            if (optarg)
                a->maxCandidates = (uint32_t)v;
            break;
        case OPT_GPUS:
            if (parse_gpus(optarg, a) != 0)
                return usage(rank,
                             "--gpus must be a list like 0,1 (ordinals 0..15), all (with a usable GPU) or local, "
                             "not '%s'",
                             optarg);
            break;
        case OPT_GPU_MODE:
            if (strcmp(optarg, "auto") == 0)
                a->opt.gpu_mode = GENIE_GPU_AUTO;
            else if (strcmp(optarg, "shards") == 0)
                a->opt.gpu_mode = GENIE_GPU_SHARDS;
            else if (strcmp(optarg, "replicas") == 0)
                a->opt.gpu_mode = GENIE_GPU_REPLICAS;
            else
                return usage(rank, "--gpu-mode must be auto, shards or replicas, not '%s'", optarg);
            break;
        case 'm': /* a deprecated letter (tools/cli.h, short options) */
            if (rank == 0)
                cli_deprecated("genie-mpi", c, "--min-count");
            /* fall through */
        case OPT_MIN_COUNT:
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
                cli_help(zHelp);
            return -1;
        default: return usage(rank, "bad option%s", "");
        }
    }
    if (a->zDelim && !*a->zDelim)
        return usage(rank, "--delimiter must not be empty%s", "");
    if (a->precision != GENIE_PRECISION_FP32 && !a->exact && !a->serve)
        return usage(rank, "--precision applies to --exact alone%s", "");
    if (a->serve)
        return parse_serve(argc, argv, rank, a);
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

/*
 * This rank's number among the rankers of its host, from 0 in rank order
 * (-1 for the broker): --gpus local gives it that GPU.  Collective: every
 * rank calls it (all parse the same arguments).
 */
static int local_ranker(int rank)
{
    MPI_Comm host;
    int nHost, iLocal = -1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) != MPI_SUCCESS)
        return rank - 1;
    MPI_Comm_size(host, &nHost);
    int *aRank = malloc((size_t)nHost * sizeof *aRank);
    if (aRank && MPI_Allgather(&rank, 1, MPI_INT, aRank, 1, MPI_INT, host) == MPI_SUCCESS && rank > 0) {
        iLocal = 0;
        for (int i = 0; i < nHost; i++)
            iLocal += aRank[i] > 0 && aRank[i] < rank;
    }
    free(aRank);
    MPI_Comm_free(&host);
    return rank > 0 && iLocal < 0 ? rank - 1 : iLocal;
}

int main(int argc, char **argv)
{
    /* genie-mpi serve calls MPI from its batcher thread, one call at a time. */
    int provided;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "genie-mpi: MPI_Init_thread failed\n");
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
    /* Ranks on hosts of their own may differ (--gpus all without a GPU): all go on only when all can. */
    int stAll = st;
    MPI_Allreduce(&st, &stAll, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (stAll != st && rank != 0)
        fprintf(stderr, "genie-mpi: rank %d: the arguments fail on another rank\n", rank);
    st = stAll;
    if (st == MPI_EXIT_OK && a.gpusLocal)
        a.localRanker = local_ranker(rank);
    if (st == MPI_EXIT_OK && a.zShardMap && size == 1)
        st = usage(rank, "--shard-map %s needs rankers: run with mpirun -np 2 or more", a.zShardMap);
    if (st == MPI_EXIT_OK && a.serve && size == 1)
        st = usage(rank, "serve needs rankers: run with mpirun -np 2 or more%s", "");
    if (st == MPI_EXIT_OK && a.serve && provided < MPI_THREAD_SERIALIZED)
        st = usage(rank, "serve: this MPI does not allow calls from the server's threads (MPI_THREAD_SERIALIZED)%s", "");
    if (st == MPI_EXIT_OK && rank == 0)
#ifdef GENIE_HAVE_SERVER
        st = a.serve ? broker_serve(&a, size - 1) : broker_run(&a, size - 1);
#else
        st = broker_run(&a, size - 1); /* parse() refused serve */
#endif
    else if (st == MPI_EXIT_OK)
        st = ranker_run(&a, rank, size - 1);
    else if (st < 0)
        st = MPI_EXIT_OK; /* --help */
    MPI_Finalize();
    return st;
}
