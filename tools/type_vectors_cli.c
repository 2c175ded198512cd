/*
 * The option parsing that genie search and genie eval of a vectors index
 * share (type_vectors_cli.h): parse_vec_opts() for either command's
 * getopt table, and --nprobe's list.  The vectors entry is reached through
 * the type table (itype_by_type), so that neither command's file and this
 * one refer to each other.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "cli.h"
#include "type_vectors_cli.h"

/* --nprobe P[,P...]: one value for search, up to 32 for eval. */
static int parse_nprobe(const char *zCmd, const char *z, int many, vec_cli_opts *o)
{
    o->nNprobe = 0;
    while (*z) {
        char *e;
        unsigned long v = strtoul(z, &e, 10);
        if (e == z || v == 0 || v > 65536 || (*e && *e != ',') || o->nNprobe == (many ? 32u : 1u))
            return cli_usage_error(zCmd, "--nprobe: %s 1..65536%s", many ? "up to 32 numbers" : "a number",
                                   many ? ", separated by commas" : "");
        o->aNprobe[o->nNprobe++] = (uint32_t)v;
        z = *e ? e + 1 : e;
    }
    if (o->nNprobe == 0)
        return cli_usage_error(zCmd, "--nprobe: a number 1..65536");
    o->o.nprobe = o->aNprobe[0];
    return CLI_EXIT_OK;
}

/* Parse search/eval options; returns -1 to go on, else an exit code. */
int parse_vec_opts(const char *zCmd, const itype_cli *cli, int argc, char **argv, vec_cli_opts *o)
{
    const itype *vt = itype_by_type(GENIE_TYPE_VECTORS);
    static const itype_spelling spell = {.zK = "-k", .zCandidates = "-K", .zCertify = "--certify",
                                         .zRadius = "-r", .zNprobe = "--nprobe"};
    memset(o, 0, sizeof *o);
    itype_options_init(&o->o, vt);
    o->repeat = 1;
    int isEval = strcmp(zCmd, "eval") == 0, c;
    uint64_t v;
    genie_precision precision;
    optind = 1;
    while ((c = getopt_long(argc, argv, cli->zShort, cli->aLong, NULL)) != -1) {
        int st;
        if (cli_engine_option(zCmd, c, optarg, &o->eng, &st) ||
            cli_k_option(zCmd, vt, c, optarg, &o->o.k, &st) ||
            cli_filter_option(zCmd, c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'K':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error(zCmd, "-K '%s': a positive number", optarg);
            o->o.candidates = (uint32_t)v;
            break;
        case 'r':
            if (!cli_parse_u64(optarg, 0, UINT32_MAX, &v))
                return cli_usage_error(zCmd, "-r '%s': a whole number", optarg);
            o->o.radius = (uint32_t)v;
            break;
        case OPT_EXACT:
            o->o.exact = 1;
            break;
        case OPT_IVECS:
            o->zIvecs = optarg;
            break;
        case OPT_TRUTH:
            o->zTruth = optarg;
            break;
        case OPT_TRUTH_BACKEND:
            if (genie_backend_parse(optarg, &o->truthBackend) != GENIE_OK)
                return cli_usage_error(zCmd, "--truth-backend: %s", genie_last_error());
            break;
        case OPT_TRUTH_OUT:
            o->zTruthOut = optarg;
            break;
        case OPT_LIMIT:
            if (!cli_parse_u64(optarg, 1, UINT64_MAX, &o->limit))
                return cli_usage_error(zCmd, "--limit '%s': a positive number", optarg);
            break;
        case OPT_CSV:
            o->csv = 1;
            break;
        case OPT_REPEAT:
            if (!cli_parse_u64(optarg, 1, 1000, &v))
                return cli_usage_error(zCmd, "--repeat '%s': 1..1000", optarg);
            o->repeat = (uint32_t)v;
            break;
        case 'J':
            o->json = 1;
            break;
        case 's':
            o->show = 1;
            break;
        case OPT_RECALL:
            if ((st = cli_parse_recall(zCmd, optarg, &o->o.recall)) != CLI_EXIT_OK)
                return st;
            break;
        case OPT_PRECISION:
            if (genie_precision_parse(optarg, &precision) != GENIE_OK)
                return cli_usage_error(zCmd, "--precision '%s': fp32, tf32 or fp16", optarg);
            o->o.precision = (int)precision;
            break;
        case OPT_NPROBE:
            if ((st = parse_nprobe(zCmd, optarg, isEval, o)) != CLI_EXIT_OK)
                return st;
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            cli_help(cli->zHelp);
            return CLI_EXIT_OK;
        default:
            return cli_usage_error(zCmd, "bad option");
        }
    }
    char zErr[128];
    if (vt->xCheck(NULL, &o->o, &spell, zErr, sizeof zErr))
        return cli_usage_error(zCmd, "%s", zErr);
    if (o->o.precision != GENIE_PRECISION_FP32 && !o->o.exact)
        return cli_usage_error(zCmd, "--precision applies to --exact alone");
    if (o->o.recall && o->o.radius)
        return cli_usage_error(zCmd, "--recall chooses the radius itself: give --recall or -r, not both");
    int stRecall = cli_check_recall(zCmd, o->o.recall, o->o.k, o->o.exact, o->o.candidates != 0);
    if (stRecall != CLI_EXIT_OK)
        return stRecall;
    if (optind + 2 != argc)
        return cli_usage_error(zCmd, "INDEX and QUERIES expected");
    if (o->zIvecs && cli_check_output(o->zIvecs, argc, argv) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    if (o->zTruthOut && cli_check_output(o->zTruthOut, argc, argv) != CLI_EXIT_OK)
        return CLI_EXIT_FAIL;
    return -1;
}
