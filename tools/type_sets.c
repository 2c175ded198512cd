/*
 * `genie build --type sets` and `genie search` on a sets index: one set of
 * strings per line, searched by Jaccard similarity through MinHash and an
 * exact re-rank (docs/SETS.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/sets.h"
#include "cli.h"
#include "cli_search.h"
#include "json_out.h"

extern const itype itype_sets;

/* cli_build_lines() callback: one input line is one object. */
static genie_status add_set(void *ctx, const char *z, size_t n)
{
    return genie_set_builder_add(ctx, z, n);
}

static const char zBuildHelp[] =
    "Usage: genie build --type sets [options] -o INDEX INPUT...\n"
    "\n"
    "Index sets of strings for Jaccard similarity search: one set per line\n"
    "of each INPUT ('-' is standard input), object ids 0, 1, ... in input\n"
    "order.  Elements are separated by runs of white space (space, tab, CR)\n"
    "or by the --separator byte; empty elements are ignored and repeated\n"
    "elements count once.  An empty line is an empty set, which no query\n"
    "matches.  Each set gets m MinHash keywords (Zhou et al. (GENIE) IV-A, one\n"
    "attribute per hash function) and its line is stored in the index.\n"
    "\n"
    "  -o, --output FILE        the index file to write (replaced only once\n"
    "                           the new index is complete)\n"
    "  -t, --type sets          this type\n"
    "  -m, --hashes M           MinHash functions m, 1..4096 (default 64)\n"
    "      --seed S             seed of the hash functions (default 0)\n"
    "  -s, --separator C        element separator: one byte, or 'tab';\n"
    "                           default: white space\n"
    "  -L, --sublist-length N   split lists longer than N postings (default 4096)\n"
    CLI_PART_HELP
    CLI_RECALL_BUILD_HELP
    "  -q, --quiet              no summary on standard error\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  genie build -t sets -s , -o baskets.genie baskets.txt\n";

static int set_build_option(void *ctx, int c, const char *zArg)
{
    genie_set_params *p = ctx;
    uint64_t v;
    switch (c) {
    case 'm':
        if (!cli_parse_u64(zArg, 1, 4096, &v))
            return cli_usage_error("build", "--hashes must be 1..4096, not '%s'", zArg);
        p->hashes = (uint32_t)v;
        return CLI_EXIT_OK;
    case 'S':
        if (!cli_parse_u64(zArg, 0, UINT32_MAX, &v))
            return cli_usage_error("build", "--seed must be 0..4294967295, not '%s'", zArg);
        p->seed = (uint32_t)v;
        return CLI_EXIT_OK;
    case 's':
        if (!cli_parse_separator(zArg, &p->separator))
            return cli_usage_error("build", "--separator must be one byte (not a newline) or 'tab', not '%s'", zArg);
        return CLI_EXIT_OK;
    default:
        return CLI_OPTION_UNKNOWN;
    }
}

#define BUILD_SHORT "m:s:"
static const struct option aBuildOpt[] = {{"hashes", required_argument, 0, 'm'},
                                          {"seed", required_argument, 0, 'S'},
                                          {"separator", required_argument, 0, 's'},
                                          CLI_RECALL_BUILD_OPTION,
                                          {0, 0, 0, 0}};

static int set_cli_build(int argc, char **argv)
{
    genie_set_params p = {64, 0, 0};
    cli_build_args a;
    int status = cli_parse_build(argc, argv, BUILD_SHORT, aBuildOpt, zBuildHelp, set_build_option, &p, &a);
    if (status != CLI_GO_ON)
        return status;
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    double t0 = util_now();
    genie_set_builder *sb = NULL;
    uint64_t n = 0;
    genie_status rc = genie_set_builder_new(&sb, &a.opt, &p);
    status = rc == GENIE_OK ? cli_build_lines("sets", add_set, sb, argc, argv, &n) : cli_fail(rc);
    if (status == CLI_EXIT_OK && (rc = genie_set_builder_write(sb, a.zOut)) != GENIE_OK)
        status = cli_fail(rc);
    if (status == CLI_EXIT_OK && !a.quiet)
        fprintf(stderr, "genie: wrote %s: %llu sets, %u MinHash functions, in %.2f s\n", a.zOut,
                (unsigned long long)n, p.hashes, util_now() - t0);
    genie_set_builder_free(sb);
    return status == CLI_EXIT_OK ? cli_build_recall(&a) : status;
}

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]     (a sets index)\n"
    "\n"
    "For each query set (one per line of QUERIES, default standard input,\n"
    "parsed like the indexed sets) find the k sets of INDEX with the largest\n"
    "Jaccard similarity |A n B| / |A u B|, ties by smaller object id; sets\n"
    "sharing no element are never returned.  The engine returns the top-K\n"
    "candidates by MinHash match count, re-ranked by exact Jaccard; so a\n"
    "similar set MinHash missed can be missing (--exact compares every set).\n"
    "\n"
    "Output, one line per hit (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> jaccard <TAB> shared <TAB> union <TAB> count\n"
    "jaccard has 6 decimals; count is the MinHash match count (0 with\n"
    "--exact).  With --show an eighth column holds the stored line, with tab,\n"
    "newline and backslash written \\t \\n \\\\.\n"
    "\n"
    "  -k, --k N               answers per query, 1..65536 (default 10)\n"
    "  -K, --candidates N      MinHash candidates per query (default 100;\n"
    "                          raised to k)\n"
    "      --exact             exact Jaccard against every set (ground truth)\n"
    CLI_RECALL_HELP
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each hit's stored line\n"
    CLI_RECALL_VERBOSE_HELP
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

/* The sets search's own: its totals. */
typedef struct set_cli {
    double tMatch, tRank;
    genie_backend backend;
} set_cli;

#define SEARCH_SHORT CLI_SEARCH_SHORT_OPTIONS "K:" CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    CLI_SEARCH_LONG_OPTIONS, {"candidates", required_argument, 0, 'K'}, {"exact", no_argument, 0, 'E'},
    {"recall", required_argument, 0, 'R'}, CLI_ENGINE_LONG_OPTIONS, CLI_FILTER_LONG_OPTIONS, {0, 0, 0, 0}};

static int parse_set_search(int argc, char **argv, cli_search *s)
{
    itype_options *o = &s->o;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, SEARCH_SHORT, aSearchOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", ch, optarg, &s->eng, &st) || cli_search_option(s, ch, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (ch) {
        case 'h': cli_help(zSearchHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return cli_check_recall("search", o->recall, o->k, o->exact, o->candidates != 0);
}

/* After each chunk: the totals; with -v the recall choice of the first. */
static genie_status set_chunk_done(cli_search *s, const itype_results *r)
{
    set_cli *c = s->pCtx;
    if (s->verbose && s->nQuery == 0)
        cli_print_recall_choice("search", s->o.recall, s->o.k, &r->st, 0);
    c->tMatch += r->st.match_seconds;
    c->tRank += r->st.rerank_seconds;
    c->backend = r->st.backend;
    return GENIE_OK;
}

static void set_summary(cli_search *s)
{
    const set_cli *c = s->pCtx;
    fprintf(stderr, "genie: %llu queries; match %.3f s (%s), exact Jaccard %.3f s\n", (unsigned long long)s->nQuery,
            c->tMatch, s->o.exact ? "none" : genie_backend_name(c->backend), c->tRank);
}

static int set_cli_search(int argc, char **argv, const char *zIndex)
{
    cli_search s;
    cli_search_init(&s, &itype_sets);
    set_cli c = {0, 0, GENIE_BACKEND_CPU};
    int status = parse_set_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    s.pCtx = &c;
    s.xDone = set_chunk_done;
    s.xSummary = set_summary;
    return cli_search_main(&s, argc, argv, zIndex, "-");
}

/* ------------------------------------------------------------- entry */

static genie_status sets_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                                const itype_batch *q, itype_results *out)
{
    genie_set_options so;
    memset(&so, 0, sizeof so);
    so.k = o->k;
    so.candidates = o->candidates;
    so.exact = o->exact;
    so.recall = o->recall;
    genie_set_results *r = NULL;
    genie_search_options e = itype_engine(o, eng);
    genie_status rc = genie_set_search(ix->idx, q->azText, q->anText, q->nQuery, &so, &e, &r);
    out->pNative = r;
    if (r) {
        out->nQuery = genie_set_results_queries(r);
        genie_set_results_stats(r, &out->st);
    }
    return rc;
}

static void sets_answer(const itype_results *r, size_t q, itype_answer *a)
{
    a->aHit = genie_set_results_get(r->pNative, q, &a->n);
}

static void sets_free(void *pNative)
{
    genie_set_results_free(pNative);
}

static void sets_tsv(const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    const genie_set_hit *aHit = a->aHit;
    for (size_t i = 0; i < a->n; i++) {
        const genie_set_hit *h = &aHit[i];
        printf("%llu\t%zu\t%u\t%.6f\t%u\t%u\t%u", (unsigned long long)queryNo, i + 1, h->object,
               (double)h->shared / h->union_size, h->shared, h->union_size, h->count);
        cli_put_record(p->src.idx, h->object, p->show);
        putchar('\n');
    }
}

static void sets_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    json_out_set_hits(b, p->src.idx, queryNo, a->aHit, a->n, p->show);
}

/* genie eval: Jaccard similarity, larger better. */
static double sets_score(const itype_answer *a, size_t i, uint32_t *pObject)
{
    const genie_set_hit *h = (const genie_set_hit *)a->aHit + i;
    *pObject = h->object;
    return (double)h->shared / h->union_size;
}

static int sets_info(const genie_index *idx, const char *zPath)
{
    cli_print_recall_estimate(idx, zPath, 10, 100, 0);
    return CLI_EXIT_OK;
}

static const itype_option aSetsOption[] = {
    ITYPE_OPTION("k", ITYPE_OPT_UINT, k, 1, GENIE_SETS_MAX_K),
    ITYPE_OPTION("show", ITYPE_OPT_BOOL, show, 0, 1),
    ITYPE_OPTION("candidates", ITYPE_OPT_UINT, candidates, 1, 65536),
    ITYPE_OPTION("exact", ITYPE_OPT_BOOL, exact, 0, 1),
    {"recall", ITYPE_OPT_REAL, offsetof(itype_options, recall), 0, 1, 1, 0},
    {NULL, 0, 0, 0, 0, 0, 0}};

/* Writes: a set line each, as genie build reads them. */
static const itype_writes sets_writes = {0, itype_add_strings};

const itype itype_sets = {
    .zName = "sets",
    .zAbout = "sets of strings, one per line, under Jaccard similarity (MinHash, exact re-rank)",
    .type = GENIE_TYPE_SETS,
    .maxK = GENIE_SETS_MAX_K,
    .defaultK = 10,
    .query = ITYPE_QUERY_LINE,
    .zJsonQuery = "a string (one set, elements as in the index)",
    .aOption = aSetsOption,
    .szHit = sizeof(genie_set_hit),
    .xCliBuild = set_cli_build,
    .xCliSearch = set_cli_search,
    .xCliEval = cli_eval_lines,
    .xCliInfo = sets_info,
    .cliBuild = {BUILD_SHORT, aBuildOpt, zBuildHelp},
    .cliSearch = {SEARCH_SHORT, aSearchOpt, zSearchHelp},
    .cliEval = CLI_EVAL_LINES,
    .xSearch = sets_search,
    .xAnswer = sets_answer,
    .xFree = sets_free,
    .xTsv = sets_tsv,
    .xJson = sets_json,
    .xScore = sets_score,
    .pWrites = &sets_writes,
};
