/*
 * The vectors front-end's build commands (the type table's vectors entry,
 * type_vectors.c, runs the build through xCliBuild and shows its options
 * through cliBuild):
 *   genie build --type vectors   hash base vectors into an LSH index, or
 *                                (--ivf) an inverted file, IVF-Flat or IVF-PQ
 *   genie lsh-params             the number of hash functions by Eqn. 9
 * The build reads vector files through genie_vectors_read() (fvecs, bvecs,
 * ivecs, npy, IDX, GloVe JSON, any of them gzip'd).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "genie/vectors.h"
#include "cli.h"

const char vec_zBuildHelp[] =
    "Usage: genie build --type vectors [options] -o INDEX BASE\n"
    "\n"
    "Hash the vectors of BASE (.fvecs .bvecs .ivecs .npy .json, or IDX;\n"
    "gzip'd or not) with m LSH functions into an index; each function is one\n"
    "attribute.  Or, with --ivf, an inverted file: k-means centroids cut the\n"
    "vectors into lists, and a search scans the lists of the centroids\n"
    "nearest the query (IVF-Flat; with --pq, product-quantized codes: IVF-PQ).\n"
    "The index also stores the vectors (4 bytes per value) for re-ranking and\n"
    "exact search.\n"
    "\n"
    "  -t, --type vectors       this type\n"
    "  -o, --output FILE        the index to write (required)\n"
    "      --metric NAME        l2 (E2LSH, default), l1 (random binning +\n"
    "                           MurmurHash3), cosine (sign random projections);\n"
    "                           with --ivf: l2, ip (inner product) or cosine\n"
    "  -m, --functions M        hash functions (default 237, the paper's m for\n"
    "                           epsilon = delta = 0.06; see genie lsh-params)\n"
    "      --buckets D          l2, l1: buckets per function (default 67 for l2,\n"
    "                           8192 for l1)\n"
    "      --bits B             cosine: sign bits per function, 1..16 (default 8)\n"
    "      --width W            l2: bucket width (default: each function's range\n"
    "                           over BASE cut into D buckets)\n"
    "      --sigma S            l1: Laplacian kernel width (default: from BASE,\n"
    "                           median nearest-neighbour distance of a sample /\n"
    "                           ln 2)\n"
    "      --seed N             random seed (default 1); same seed, same index\n"
    "      --recall R           the recall@k that searches given no -K, -r,\n"
    "                           --nprobe or --recall meet, stored in the index\n"
    "                           (default 0.9; LSH: K and the radius chosen from\n"
    "                           INDEX.recall; --ivf: the default nprobe, chosen\n"
    "                           now for recall@10)\n"
    "      --ivf NLIST          an inverted file of NLIST lists (auto: 4 sqrt(n));\n"
    "                           the LSH options above do not apply\n"
    "      --pq M[xBITS]        IVF-PQ: M sub-quantizers (M divides the\n"
    "                           dimension) of 2^BITS codewords, BITS 1..8\n"
    "                           (default 8): M bytes per vector\n"
    "      --refine             IVF-PQ: searches re-rank the best PQ estimates\n"
    "                           by the exact distance by default\n"
    "      --train-size N       vectors the k-means train on (default\n"
    "                           min(n, max(64 NLIST, 256 x 2^BITS)))\n"
    "      --iterations N       k-means iterations (default 20)\n"
    "      --backend B          --ivf: where the k-means run: auto (a GPU when\n"
    "                           usable), cpu, cuda\n"
    "      --precision P        --ivf: the k-means' GEMM on a GPU: fp32\n"
    "                           (default) or tf32 (tensor cores, faster; a\n"
    "                           vector nearly equidistant from two centroids\n"
    "                           may be assigned to the other one, so the index\n"
    "                           may differ from fp32's; the same seed gives the\n"
    "                           same index either way; the CPU's GEMM is fp32)\n"
    "  -L, --sublist-length N   longest posting (sub)list (default 4096)\n"
    CLI_PART_HELP
    "                           (an IVF index: each part holds the lists of its\n"
    "                           objects; the centroids are the whole index's)\n"
    CLI_RECALL_BUILD_HELP
    "                           (an IVF index keeps no INDEX.recall: its\n"
    "                           estimate is made when a search first needs it)\n"
    "  -q, --quiet              no notices on standard error\n"
    "  -h, --help               show this help\n";

static const char zParamsHelp[] =
    "Usage: genie lsh-params [--epsilon E] [--delta D]\n"
    "\n"
    "The number of hash functions m by Eqn. 9 of Zhou et al. (GENIE) (IV-B1): the\n"
    "largest, over similarities s = 0.01 .. 0.99, of the smallest m with\n"
    "Pr[|c/m - s| <= epsilon] >= 1 - delta, c ~ Binomial(m, s).\n"
    "Defaults epsilon = delta = 0.06 (the paper reports m = 237). Settings that\n"
    "need more than 100,000 functions are refused.\n"
    "\n"
    "  -e, --epsilon E   0 < E < 1 (default 0.06)\n"
    "      --delta D     0 < D < 1 (default 0.06; -d, deprecated: -d is\n"
    "                    --delimiter)\n"
    "  -h, --help        show this help\n";

static int parse_float(const char *z, float *out)
{
    char *e;
    double v = strtod(z, &e);
    if (e == z || *e || !isfinite(v) || v < 0)
        return 0;
    *out = (float)v;
    return 1;
}

/* The build's options: LSH's, or (--ivf) the inverted file's. */
typedef struct vec_build_args {
    genie_lsh_params lsh;
    genie_ivf_params ivf;
    int isIvf, lshOption, ivfOption; /* --ivf given; an LSH-only option given; an IVF-only one */
} vec_build_args;

/* The long options of the inverted file's build (their getopt values). */
enum { OPT_IVF = 0x200, OPT_PQ, OPT_REFINE, OPT_TRAIN_SIZE, OPT_ITERATIONS, OPT_BUILD_BACKEND, OPT_BUILD_PRECISION };

/* --pq M[xBITS] */
static int parse_pq(const char *z, genie_ivf_params *p)
{
    char zM[32];
    const char *x = strchr(z, 'x');
    size_t n = x ? (size_t)(x - z) : strlen(z);
    uint64_t m, bits = 8;
    if (n == 0 || n >= sizeof zM)
        return 0;
    memcpy(zM, z, n);
    zM[n] = 0;
    if (!cli_parse_u64(zM, 1, 1u << 24, &m) || (x && !cli_parse_u64(x + 1, 1, 8, &bits)))
        return 0;
    p->pq_m = (uint32_t)m;
    p->pq_bits = (uint32_t)bits;
    return 1;
}

static int ivf_build_option(vec_build_args *a, int c, const char *zArg)
{
    uint64_t v;
    a->ivfOption |= c != OPT_IVF && c >= OPT_IVF && c <= OPT_BUILD_PRECISION;
    switch (c) {
    case OPT_IVF:
        a->isIvf = 1;
        if (strcmp(zArg, "auto") != 0 && !cli_parse_u64(zArg, 1, 65536, &v))
            return cli_usage_error("build", "--ivf '%s': a number of lists 1..65536, or auto", zArg);
        a->ivf.nlist = strcmp(zArg, "auto") == 0 ? 0 : (uint32_t)v;
        return CLI_EXIT_OK;
    case OPT_PQ:
        if (!parse_pq(zArg, &a->ivf))
            return cli_usage_error("build", "--pq '%s': M or MxBITS (BITS 1..8), e.g. 16 or 16x8", zArg);
        return CLI_EXIT_OK;
    case OPT_REFINE:
        a->ivf.refine = 1;
        return CLI_EXIT_OK;
    case OPT_TRAIN_SIZE:
        if (!cli_parse_u64(zArg, 1, UINT32_MAX, &a->ivf.train_size))
            return cli_usage_error("build", "--train-size '%s': a positive number", zArg);
        return CLI_EXIT_OK;
    case OPT_ITERATIONS:
        if (!cli_parse_u64(zArg, 1, 100000, &v))
            return cli_usage_error("build", "--iterations '%s': 1..100000", zArg);
        a->ivf.iterations = (uint32_t)v;
        return CLI_EXIT_OK;
    case OPT_BUILD_BACKEND:
        if (genie_backend_parse(zArg, &a->ivf.backend) != GENIE_OK)
            return cli_usage_error("build", "--backend: %s", genie_last_error());
        return CLI_EXIT_OK;
    case OPT_BUILD_PRECISION:
        if (strcmp(zArg, "fp32") != 0 && strcmp(zArg, "tf32") != 0)
            return cli_usage_error("build", "--precision '%s': fp32 or tf32 (the k-means' GEMM on a GPU)", zArg);
        a->ivf.precision = strcmp(zArg, "tf32") == 0 ? GENIE_PRECISION_TF32 : GENIE_PRECISION_FP32;
        return CLI_EXIT_OK;
    default:
        return CLI_OPTION_UNKNOWN;
    }
}

static int vec_build_option(void *ctx, int c, const char *zArg)
{
    vec_build_args *a = ctx;
    genie_lsh_params *p = &a->lsh;
    uint64_t v;
    if (c == 'm' || (c >= 2 && c <= 5))
        a->lshOption = 1;
    switch (c) {
    case 1:
        if (genie_metric_parse(zArg, &p->metric) != GENIE_OK)
            return cli_usage_error("build", "--metric '%s': l2, l1 or cosine (--ivf: l2, ip or cosine)", zArg);
        return CLI_EXIT_OK;
    case 'm':
        if (!cli_parse_u64(zArg, 1, 65536, &v))
            return cli_usage_error("build", "-m '%s': 1..65536", zArg);
        p->m = (uint32_t)v;
        return CLI_EXIT_OK;
    case 2:
        if (!cli_parse_u64(zArg, 2, UINT32_MAX, &v))
            return cli_usage_error("build", "--buckets '%s': at least 2", zArg);
        p->buckets = (uint32_t)v;
        return CLI_EXIT_OK;
    case 3:
        if (!cli_parse_u64(zArg, 1, 16, &v))
            return cli_usage_error("build", "--bits '%s': 1..16", zArg);
        p->bits = (uint32_t)v;
        return CLI_EXIT_OK;
    case 4:
        if (!parse_float(zArg, &p->width) || p->width == 0)
            return cli_usage_error("build", "--width '%s': a positive number", zArg);
        return CLI_EXIT_OK;
    case 5:
        if (!parse_float(zArg, &p->sigma) || p->sigma == 0)
            return cli_usage_error("build", "--sigma '%s': a positive number", zArg);
        return CLI_EXIT_OK;
    case 6:
        if (!cli_parse_u64(zArg, 0, UINT64_MAX, &p->seed))
            return cli_usage_error("build", "--seed '%s': a whole number", zArg);
        return CLI_EXIT_OK;
    case 7:
        return cli_parse_recall("build", zArg, &p->recall);
    default:
        return ivf_build_option(a, c, zArg);
    }
}

/* k-means progress on standard error, one line per iteration, rewritten in place on a terminal. */
static void ivf_progress(void *ctx, const char *zStage, uint32_t it, uint32_t nIt, double objective)
{
    (void)ctx;
    fprintf(stderr, "genie build: k-means %s: iteration %u/%u, mean objective %.6g%s", zStage, it, nIt, objective,
            it == nIt || !isatty(2) ? "\n" : "\r");
}

/* An inverted file; its recall estimate is made by the first search that needs it (no INDEX.recall). */
static int vec_cli_build_ivf(vec_build_args *b, cli_build_args *a, const char *zBase)
{
    if (b->lshOption)
        return cli_usage_error("build", "-m, --buckets, --bits, --width and --sigma are LSH options, not --ivf's");
    if (b->lsh.metric == GENIE_METRIC_L1)
        return cli_usage_error("build", "--ivf: metric l2, ip or cosine (not l1)");
    b->ivf.metric = b->lsh.metric;
    b->ivf.seed = b->lsh.seed;
    b->ivf.recall = b->lsh.recall;
    if (!a->quiet)
        b->ivf.progress = ivf_progress;
    genie_vectors base;
    genie_status rc = genie_vectors_read(zBase, &base);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    double t0 = util_now();
    rc = genie_vectors_build_ivf(&base, &b->ivf, &a->opt, a->zOut);
    if (rc == GENIE_OK && !a->quiet)
        fprintf(stderr, "genie build: %llu vectors of %u dimensions into an IVF index %s in %.2f s\n",
                (unsigned long long)base.n, base.dim, a->zOut, util_now() - t0);
    genie_vectors_free(&base);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    a->noRecall = 1; /* the old index's side file goes all the same */
    return cli_build_recall(a);
}

const struct option vec_aBuildOption[] = {
    {"metric", required_argument, 0, 1}, {"functions", required_argument, 0, 'm'},
    {"buckets", required_argument, 0, 2}, {"bits", required_argument, 0, 3},
    {"width", required_argument, 0, 4},  {"sigma", required_argument, 0, 5},
    {"seed", required_argument, 0, 6},   {"recall", required_argument, 0, 7}, {"ivf", required_argument, 0, OPT_IVF},
    {"pq", required_argument, 0, OPT_PQ}, {"refine", no_argument, 0, OPT_REFINE},
    {"train-size", required_argument, 0, OPT_TRAIN_SIZE}, {"iterations", required_argument, 0, OPT_ITERATIONS},
    {"backend", required_argument, 0, OPT_BUILD_BACKEND}, {"precision", required_argument, 0, OPT_BUILD_PRECISION},
    CLI_RECALL_BUILD_OPTION, {0, 0, 0, 0}};

int vec_cli_build(int argc, char **argv)
{
    vec_build_args b = {.lsh = {.metric = GENIE_METRIC_L2, .seed = 1}};
    cli_build_args a;
    int st = cli_parse_build(argc, argv, VEC_BUILD_SHORT, vec_aBuildOption, vec_zBuildHelp, vec_build_option, &b, &a);
    if (st != CLI_GO_ON)
        return st;
    if (optind + 1 != argc)
        return cli_usage_error("build", "one BASE vector file expected");
    if (b.isIvf)
        return vec_cli_build_ivf(&b, &a, argv[optind]);
    if (b.ivfOption)
        return cli_usage_error("build",
                               "--pq, --refine, --train-size, --iterations, --backend and --precision go with --ivf");
    if (b.lsh.metric == GENIE_METRIC_IP)
        return cli_usage_error("build", "--metric ip: no LSH family for the inner product (use --ivf)");
    genie_lsh_params p = b.lsh;
    if (p.metric != GENIE_METRIC_COSINE && p.bits)
        return cli_usage_error("build", "--bits applies to --metric cosine only");
    if (p.metric != GENIE_METRIC_L2 && p.width > 0)
        return cli_usage_error("build", "--width applies to --metric l2 only");
    if (p.metric != GENIE_METRIC_L1 && p.sigma > 0)
        return cli_usage_error("build", "--sigma applies to --metric l1 only");
    genie_vectors base;
    genie_status rc = genie_vectors_read(argv[optind], &base);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    double t0 = util_now();
    rc = genie_vectors_build(&base, &p, &a.opt, a.zOut);
    if (rc == GENIE_OK && !a.quiet)
        fprintf(stderr, "genie build: %llu vectors of %u dimensions hashed into %s in %.2f s\n",
                (unsigned long long)base.n, base.dim, a.zOut, util_now() - t0);
    genie_vectors_free(&base);
    return rc == GENIE_OK ? cli_build_recall(&a) : cli_fail(rc);
}

int vec_cli_lsh_params(int argc, char **argv)
{
    enum { OPT_DELTA = 0x200 };
    static const struct option aOpt[] = {{"epsilon", required_argument, 0, 'e'},
                                         {"delta", required_argument, 0, OPT_DELTA},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    double eps = 0.06, delta = 0.06;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "e:d:h", aOpt, NULL)) != -1) {
        char *e;
        switch (c) {
        case 'd':
            cli_deprecated("genie lsh-params", c, "--delta");
            /* fall through */
        case 'e':
        case OPT_DELTA: {
            double v = strtod(optarg, &e);
            if (e == optarg || *e || !(v > 0 && v < 1))
                return cli_usage_error("lsh-params", "'%s': a number between 0 and 1", optarg);
            *(c == 'e' ? &eps : &delta) = v;
            break;
        }
        case 'h':
            cli_help(zParamsHelp);
            return CLI_EXIT_OK;
        default:
            return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc)
        return cli_usage_error("lsh-params", "unexpected argument '%s'", argv[optind]);
    uint32_t m;
    double s;
    genie_status rc = genie_lsh_hash_count(eps, delta, &m, &s);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    printf("epsilon: %g\ndelta: %g\nm: %u\nworst_similarity: %.2f\n", eps, delta, m, s);
    return CLI_EXIT_OK;
}
