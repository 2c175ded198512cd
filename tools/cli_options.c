/*
 * The options several commands share (see cli.h): the engine options of
 * every search, and the options and the getopt loop of every build.
 */
#include <assert.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "itype.h"

/*
 * The one meaning of each short letter (cli.h): its long option, or two
 * for -m, which is m, the number of hash functions (Zhou et al. (GENIE)
 * IV-B1), of both hashing builds.
 */
static const struct {
    char c;
    const char *zLong;    /* space-separated */
    const char *zMeaning; /* for cli_deprecated() */
} aShort[] = {
    {'b', "--backend", "--backend"},
    {'D', "--index-dir", "--index-dir"},
    {'d', "--delimiter", "--delimiter"},
    {'e', "--epsilon", "--epsilon"},
    {'h', "--help", "--help"},
    {'i', "--index", "--index"},
    {'j', "--threads", "--threads"},
    {'K', "--candidates", "--candidates, the candidates of an approximate search"},
    {'k', "--k", "-k, the answers per query"},
    {'L', "--sublist-length", "--sublist-length"},
    {'l', "--listen", "--listen"},
    {'m', "--functions --hashes", "--functions or --hashes, the number of hash functions"},
    {'n', "--gram", "--gram"},
    {'o', "--output", "--output"},
    {'p', "--partition", "--partition"},
    {'q', "--quiet", "--quiet"},
    {'r', "--radius", "--radius of a vectors search, in LSH buckets"},
    {'s', "--separator", "--separator"},
    {'t', "--type", "--type"},
    {'v', "--verbose", "--verbose"},
};

const char *cli_short_option(int c)
{
    for (size_t i = 0; i < sizeof aShort / sizeof *aShort; i++)
        if (aShort[i].c == c)
            return aShort[i].zLong;
    return NULL;
}

void cli_deprecated(const char *zWho, int c, const char *zLong)
{
    const char *zMeaning = "nothing";
    for (size_t i = 0; i < sizeof aShort / sizeof *aShort; i++)
        if (aShort[i].c == c)
            zMeaning = aShort[i].zMeaning;
    fprintf(stderr, "%s: -%c here is deprecated: write %s (-%c means %s)\n", zWho, c, zLong, c, zMeaning);
}

size_t cli_median_index(const double *a, size_t n)
{
    /* n is small (--repeat: at most 1000): count, for each, those below it */
    for (size_t i = 0; i < n; i++) {
        size_t nBelow = 0, nEqual = 0;
        for (size_t j = 0; j < n; j++) {
            nBelow += a[j] < a[i];
            nEqual += a[j] == a[i] && j < i;
        }
        if (nBelow + nEqual == (n - 1) / 2)
            return i;
    }
    return 0;
}

/* --gpus: a comma-separated list of ordinals, or "all"; one list per process. */
static int parse_gpus(const char *zCmd, const char *zArg, genie_search_options *opt)
{
    static int aGpu[16];
    unsigned n = 0;
    if (strcmp(zArg, "all") == 0) {
        int nDevice = genie_cuda_device_count();
        if (nDevice < 1)
            return cli_usage_error(zCmd, "--gpus all: no usable GPU");
        for (int g = 0; g < nDevice && n < 16; g++)
            aGpu[n++] = g;
    } else {
        const char *z = zArg;
        for (;;) {
            char *end;
            unsigned long g = strtoul(z, &end, 10);
            if (end == z || g > 15 || n == 16 || (*end && *end != ','))
                return cli_usage_error(zCmd, "--gpus must be a list like 0,1 (ordinals 0..15) or all, not '%s'",
                                       zArg);
            aGpu[n++] = (int)g;
            if (!*end)
                break;
            z = end + 1;
        }
    }
    opt->gpus = aGpu;
    opt->n_gpus = n;
    return CLI_EXIT_OK;
}

int cli_engine_option(const char *zCmd, int c, const char *zArg, genie_search_options *opt, int *pStatus)
{
    uint64_t v;
    *pStatus = CLI_EXIT_OK;
    switch (c) {
    case 'b':
        if (genie_backend_parse(zArg, &opt->backend) != GENIE_OK)
            *pStatus = cli_usage_error(zCmd, "%s", genie_last_error());
        return 1;
    case 'j':
        if (!cli_parse_u64(zArg, 1, 4096, &v))
            *pStatus = cli_usage_error(zCmd, "--threads must be 1..4096, not '%s'", zArg);
        else
            opt->threads = (unsigned)v;
        return 1;
    case CLI_OPT_SEARCH_GPU_MEMORY:
        if (!cli_parse_bytes(zArg, &opt->gpu_memory))
            *pStatus = cli_usage_error(zCmd, "--gpu-memory must be a size like 8G, not '%s'", zArg);
        return 1;
    case CLI_OPT_LOAD_BALANCE:
        opt->load_balance = 1;
        return 1;
    case CLI_OPT_GPUS:
        *pStatus = parse_gpus(zCmd, zArg, opt);
        return 1;
    case CLI_OPT_GPU_MODE:
        if (strcmp(zArg, "auto") == 0)
            opt->gpu_mode = GENIE_GPU_AUTO;
        else if (strcmp(zArg, "shards") == 0)
            opt->gpu_mode = GENIE_GPU_SHARDS;
        else if (strcmp(zArg, "replicas") == 0)
            opt->gpu_mode = GENIE_GPU_REPLICAS;
        else
            *pStatus = cli_usage_error(zCmd, "--gpu-mode must be auto, shards or replicas, not '%s'", zArg);
        return 1;
    default:
        return 0;
    }
}

/* -L and the part options; 1 when @p c is one of them, *pStatus as above. */
static int build_option(int c, const char *zArg, genie_build_options *opt, int *pStatus)
{
    uint64_t v;
    *pStatus = CLI_EXIT_OK;
    switch (c) {
    case 'L':
        if (!cli_parse_u64(zArg, 1, UINT32_MAX, &v))
            *pStatus = cli_usage_error("build", "--sublist-length must be 1..4294967295, not '%s'", zArg);
        else
            opt->sublist_length = (uint32_t)v;
        return 1;
    case CLI_OPT_PART_OBJECTS:
        if (!cli_parse_u64(zArg, 1, UINT32_MAX, &opt->part_objects))
            *pStatus = cli_usage_error("build", "--part-objects must be 1..4294967295, not '%s'", zArg);
        break;
    case CLI_OPT_PART_BYTES:
        if (!cli_parse_bytes(zArg, &opt->part_bytes))
            *pStatus = cli_usage_error("build", "--part-bytes must be a size above 0 (e.g. 64M), not '%s'", zArg);
        break;
    case CLI_OPT_BUILD_GPU_MEMORY:
        if (!cli_parse_bytes(zArg, &opt->part_gpu_memory))
            *pStatus = cli_usage_error("build", "--gpu-memory must be a size above 0 (e.g. 8G), not '%s'", zArg);
        break;
    default:
        return 0;
    }
    if (*pStatus == CLI_EXIT_OK && opt->part_objects && opt->part_bytes)
        *pStatus = cli_usage_error("build", "give --part-objects or --part-bytes, not both");
    return 1;
}

const struct option cli_aBuildOption[] = {
    {"output", required_argument, 0, 'o'}, {"type", required_argument, 0, 't'},
    {"sublist-length", required_argument, 0, 'L'}, {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'}, CLI_PART_LONG_OPTIONS, {0, 0, 0, 0}};

/* The most long options one build command has, its own and the shared. */
#define CLI_BUILD_MAX_OPTIONS 40

int cli_parse_build(int argc, char **argv, const char *zShort, const struct option *aLong, const char *zHelp,
                    cli_option_fn xOption, void *ctx, cli_build_args *a)
{
    struct option aOpt[CLI_BUILD_MAX_OPTIONS];
    size_t n = 0;
    for (size_t i = 0; cli_aBuildOption[i].name; i++)
        aOpt[n++] = cli_aBuildOption[i];
    for (size_t i = 0; aLong && aLong[i].name; i++) {
        assert(n + 1 < CLI_BUILD_MAX_OPTIONS);
        aOpt[n++] = aLong[i];
    }
    aOpt[n] = (struct option){0, 0, 0, 0};
    char zAllShort[64];
    snprintf(zAllShort, sizeof zAllShort, CLI_BUILD_SHORT_OPTIONS "%s", zShort ? zShort : "");

    memset(a, 0, sizeof *a);
    a->recallBudget = CLI_RECALL_BUDGET_DEFAULT;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, zAllShort, aOpt, NULL)) != -1) {
        int st;
        if (build_option(c, optarg, &a->opt, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'o': a->zOut = optarg; break;
        case 'q': a->quiet = 1; break;
        case CLI_OPT_NO_RECALL: a->noRecall = 1; break; /* only where the type lists it */
        case CLI_OPT_RECALL_BUDGET: { /* only where the type lists it */
            char *e;
            a->recallBudget = strtod(optarg, &e);
            if (e == optarg || *e || !(a->recallBudget >= 0 && a->recallBudget <= 1e9))
                return cli_usage_error("build", "--recall-budget must be seconds >= 0 (0: no limit), not '%s'",
                                       optarg);
            break;
        }
        case 'h': cli_help(zHelp); return CLI_EXIT_OK;
        default:
            st = xOption ? xOption(ctx, c, optarg) : CLI_OPTION_UNKNOWN;
            if (st == CLI_OPTION_UNKNOWN && c != 't')
                return cli_usage_error("build", "bad option");
            if (st != CLI_OPTION_UNKNOWN && st != CLI_EXIT_OK)
                return st;
        }
    }
    if (!a->zOut)
        return cli_usage_error("build", "no output file (-o INDEX)");
    int st = cli_check_output(a->zOut, argc, argv);
    return st == CLI_EXIT_OK ? CLI_GO_ON : st;
}

int cli_parse_recall(const char *zCmd, const char *s, double *out)
{
    char *e;
    double v = strtod(s, &e);
    if (e == s || *e || !(v > 0 && v <= 1))
        return cli_usage_error(zCmd, "--recall must be a number in (0, 1] (a recall@k target), not '%s'", s);
    *out = v;
    return CLI_EXIT_OK;
}

void cli_print_recall_choice(const char *zCmd, double target, uint32_t k, const genie_search_stats *st, int radius)
{
    if (st->recall_estimate < 0)
        return;
    if (st->candidates == 0)
        fprintf(stderr, "genie %s: recall target %g: exact search (no K the estimate covers, up to 4096, reaches it)\n",
                zCmd, target);
    else if (radius)
        fprintf(stderr, "genie %s: recall target %g: K = %u, radius %u, estimated recall@%u %.4f\n", zCmd, target,
                st->candidates, st->radius, k, st->recall_estimate);
    else if (st->recall_edit_rate >= 0)
        fprintf(stderr, "genie %s: recall target %g: K = %u, estimated recall@%u %.4f (queries modelled with %.0f%% "
                        "edits, estimated from them)\n",
                zCmd, target, st->candidates, k, st->recall_estimate, 100 * st->recall_edit_rate);
    else
        fprintf(stderr, "genie %s: recall target %g: K = %u, estimated recall@%u %.4f\n", zCmd, target,
                st->candidates, k, st->recall_estimate);
}

int cli_k_option(const char *zCmd, const itype *t, int c, const char *zArg, uint32_t *pK, int *pStatus)
{
    char zErr[128];
    *pStatus = CLI_EXIT_OK;
    if (c != 'k')
        return 0;
    if (!itype_parse_k(t, zArg, pK, zErr, sizeof zErr))
        *pStatus = cli_usage_error(zCmd, "%s", zErr);
    return 1;
}

int cli_candidate_option(const char *zCmd, const itype *t, int c, const char *zArg, uint32_t *pK,
                         uint32_t *pCandidates, double *pRecall, int *pStatus)
{
    uint64_t v;
    *pStatus = CLI_EXIT_OK;
    switch (c) {
    case 'k': return cli_k_option(zCmd, t, c, zArg, pK, pStatus);
    case 'K':
        if (!cli_parse_u64(zArg, 1, UINT32_MAX, &v))
            *pStatus = cli_usage_error(zCmd, "--candidates must be 1..4294967295, not '%s'", zArg);
        else
            *pCandidates = (uint32_t)v;
        return 1;
    case 'R': *pStatus = cli_parse_recall(zCmd, zArg, pRecall); return 1;
    default: return 0;
    }
}

int cli_check_recall(const char *zCmd, double recall, uint32_t k, int exact, int explicitK)
{
    if (recall == 0)
        return CLI_EXIT_OK;
    if (exact)
        return cli_usage_error(zCmd, "--recall and --exact exclude each other (--exact is recall 1)");
    if (explicitK)
        return cli_usage_error(zCmd, "--recall chooses K itself: give --recall or -K, not both");
    if (k > 100)
        return cli_usage_error(zCmd, "--recall needs -k <= 100 (the estimate records 100 answers per query), not %u",
                               k);
    return CLI_EXIT_OK;
}
