/*
 * `genie build --type sets` and `genie search` on a sets index: one set of
 * strings per line, searched by Jaccard (or another set similarity)
 * through MinHash and an exact re-rank, or exactly through the element
 * lists (docs/SETS.md).
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
    "parsed like the indexed sets) find the k sets of INDEX most similar to\n"
    "it, ties by smaller object id; sets sharing no element are never\n"
    "returned.  Two methods: MinHash (the top-K candidates by MinHash match\n"
    "count, re-ranked by exact Jaccard: a similar set MinHash missed can be\n"
    "missing) and the exact search (each element a keyword, the engine's\n"
    "match count is |A n B|, only the size classes and lists that can still\n"
    "matter are read).  Without -K or --exact the cheaper by estimate runs\n"
    "(-v says which and why).\n"
    "\n"
    "Output, one line per hit (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> similarity <TAB> shared <TAB> union <TAB> count\n"
    "similarity (Jaccard unless --measure) has 6 decimals; shared = |A n B|,\n"
    "union = |A u B|; count is the MinHash match count (0 when answered\n"
    "exactly).  With --show an eighth column holds the stored line, with tab,\n"
    "newline and backslash written \\t \\n \\\\.\n"
    "\n"
    "  -k, --k N               answers per query, 1..65536 (default 10; with\n"
    "                          --min-similarity: all unless given)\n"
    "  -K, --candidates N      MinHash with N candidates per query (raised to k)\n"
    "      --exact             exact answers (an index built before element\n"
    "                          lists: every set is compared)\n"
    "      --min-similarity T  every set whose similarity is at least T,\n"
    "                          0 < T <= 1 (exact; -k caps the answers)\n"
    "      --measure M         jaccard (default), cosine |A n B| / sqrt(|A| |B|),\n"
    "                          dice 2 |A n B| / (|A| + |B|), overlap\n"
    "                          |A n B| / min(|A|, |B|), containment |A n B| / |A|\n"
    "                          (A the query); all but jaccard are exact\n"
    CLI_RECALL_HELP
    "                          (or the exact search when it costs less)\n"
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each hit's stored line\n"
    CLI_VERBOSE_HELP
    "                          (first which method answered, why, and its K)\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

/* The sets search's own: its totals. */
typedef struct set_cli {
    double tMatch, tRank, tTotal;
    genie_backend backend;
    int exact; /* some chunk was answered exactly */
} set_cli;

/* The long options of sets alone (docs/ARCHITECTURE.md, "Options": long only). */
#define OPT_MIN_SIMILARITY 0x140
#define OPT_MEASURE 0x141

/* The spelling of the sets CLI's messages (itype_spelling). */
static const itype_spelling setSpelling = {.zK = "-k", .zCandidates = "-K", .zCertify = "--certify",
                                           .zRadius = "--radius", .zRecall = "--recall",
                                           .zMinSimilarity = "--min-similarity", .zMeasure = "--measure"};

#define SEARCH_SHORT CLI_SEARCH_SHORT_OPTIONS "K:" CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    CLI_SEARCH_LONG_OPTIONS, {"candidates", required_argument, 0, 'K'}, {"exact", no_argument, 0, 'E'},
    {"min-similarity", required_argument, 0, OPT_MIN_SIMILARITY}, {"measure", required_argument, 0, OPT_MEASURE},
    {"recall", required_argument, 0, 'R'}, CLI_ENGINE_LONG_OPTIONS, CLI_FILTER_LONG_OPTIONS, {0, 0, 0, 0}};

static int parse_set_search(int argc, char **argv, cli_search *s)
{
    itype_options *o = &s->o;
    int ch, kGiven = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, SEARCH_SHORT, aSearchOpt, NULL)) != -1) {
        int st;
        kGiven |= ch == 'k';
        if (cli_engine_option("search", ch, optarg, &s->eng, &st) || cli_search_option(s, ch, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (ch) {
        case OPT_MIN_SIMILARITY: {
            char *e;
            o->minSimilarity = strtod(optarg, &e);
            if (e == optarg || *e || !(o->minSimilarity > 0 && o->minSimilarity <= 1))
                return cli_usage_error("search", "--min-similarity must be a number in (0, 1], not '%s'", optarg);
            break;
        }
        case OPT_MEASURE: {
            genie_set_measure m;
            if (genie_set_measure_parse(optarg, &m) != GENIE_OK)
                return cli_usage_error("search", "--measure must be jaccard, cosine, dice, overlap or "
                                                 "containment, not '%s'", optarg);
            o->measure = (int)m;
            break;
        }
        case 'h': cli_help(zSearchHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    if (o->minSimilarity > 0 && !kGiven)
        o->k = 0; /* every set that reaches the threshold */
    char zErr[160];
    if (s->pType->xCheck(NULL, o, &setSpelling, zErr, sizeof zErr))
        return cli_usage_error("search", "%s", zErr);
    return cli_check_recall("search", o->recall, o->k, o->exact, o->candidates != 0);
}

/* -v: the recall target's K, the method that ran, why, and what it was estimated to cost. */
static void print_plan(const genie_set_results *r, const itype_options *o)
{
    genie_set_plan p;
    genie_set_results_plan(r, &p);
    static const char *const azMethod[] = {"MinHash", "exact (element lists)", "exact (every set compared)"};
    fprintf(stderr, "genie search: ");
    if (o->recall > 0 && p.candidates && p.recall >= 0)
        fprintf(stderr, "recall target %g: K = %u, estimated recall@%u %.4f; ", o->recall, p.candidates, o->k,
                p.recall);
    else if (o->recall > 0)
        fprintf(stderr, "recall target %g: no K up to 4096 reaches it; ", o->recall);
    else if (p.method == GENIE_SET_MINHASH)
        fprintf(stderr, "K = %u; ", p.candidates);
    fprintf(stderr, "%s ran (%s)", azMethod[p.method], p.reason);
    if (p.exact_cost >= 0)
        fprintf(stderr, "; estimated for the batch: exact %.3g s, MinHash %.3g s", p.exact_cost, p.minhash_cost);
    fputc('\n', stderr);
}

/* After each chunk: the totals; with -v the method of the first. */
static genie_status set_chunk_done(cli_search *s, const itype_results *r)
{
    set_cli *c = s->pCtx;
    genie_set_plan plan;
    genie_set_results_plan(r->pNative, &plan);
    if (s->verbose && s->nQuery == 0)
        print_plan(r->pNative, &s->o);
    c->exact |= plan.method != GENIE_SET_MINHASH;
    c->tMatch += r->st.match_seconds;
    c->tRank += r->st.rerank_seconds;
    c->tTotal += r->st.total_seconds;
    c->backend = r->st.backend;
    return GENIE_OK;
}

static void set_summary(cli_search *s)
{
    const set_cli *c = s->pCtx;
    if (c->exact)
        fprintf(stderr, "genie: %llu queries; exact search %.3f s (%s)\n", (unsigned long long)s->nQuery, c->tTotal,
                genie_backend_name(c->backend));
    else
        fprintf(stderr, "genie: %llu queries; match %.3f s (%s), exact Jaccard re-rank %.3f s\n",
                (unsigned long long)s->nQuery, c->tMatch, genie_backend_name(c->backend), c->tRank);
}

static int set_cli_search(int argc, char **argv, const char *zIndex)
{
    cli_search s;
    cli_search_init(&s, &itype_sets);
    set_cli c = {0, 0, 0, GENIE_BACKEND_CPU, 0};
    int status = parse_set_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    s.pCtx = &c;
    s.xDone = set_chunk_done;
    s.xSummary = set_summary;
    return cli_search_main(&s, argc, argv, zIndex, "-");
}

/* ------------------------------------------------------------- entry */

static genie_set_options set_options(const itype_options *o)
{
    genie_set_options so;
    genie_set_options_init(&so);
    so.k = o->k;
    so.candidates = o->candidates;
    so.exact = o->exact;
    so.recall = o->recall;
    so.measure = (genie_set_measure)o->measure;
    so.min_similarity = o->minSimilarity;
    return so;
}

static genie_status sets_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                                const itype_batch *q, itype_results *out)
{
    genie_set_options so = set_options(o);
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
        printf("%llu\t%zu\t%u\t%.6f\t%u\t%u\t%u", (unsigned long long)queryNo, i + 1, h->object, h->similarity,
               h->shared, h->union_size, h->count);
        cli_put_record(p->src.idx, h->object, p->show);
        putchar('\n');
    }
}

static void sets_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    const char *zMeasure = genie_set_measure_name(p->pOpt ? (genie_set_measure)p->pOpt->measure : GENIE_SET_JACCARD);
    json_out_set_hits(b, p->src.idx, queryNo, a->aHit, a->n, zMeasure, p->show);
}

/* genie eval: the similarity, larger better. */
static double sets_score(const itype_answer *a, size_t i, uint32_t *pObject)
{
    const genie_set_hit *h = (const genie_set_hit *)a->aHit + i;
    *pObject = h->object;
    return h->similarity;
}

/*
 * A recall target is for MinHash, which answers Jaccard without a
 * threshold; k = 0 (every answer) is for a threshold search.
 */
static const char *sets_check(const itype_index *ix, const itype_options *o, const itype_spelling *sp, char *zErr,
                              size_t nErr)
{
    (void)ix;
    if (o->recall > 0 && o->minSimilarity > 0)
        snprintf(zErr, nErr, "%s is for MinHash: not with %s (answered exactly)", sp->zRecall, sp->zMinSimilarity);
    else if (o->recall > 0 && o->measure != GENIE_SET_JACCARD)
        snprintf(zErr, nErr, "%s is for MinHash: not with %s %s (answered exactly)", sp->zRecall, sp->zMeasure,
                 genie_set_measure_name((genie_set_measure)o->measure));
    else if (o->k == 0 && o->minSimilarity == 0)
        snprintf(zErr, nErr, "%s 0 (every answer) needs %s", sp->zK, sp->zMinSimilarity);
    else
        return NULL;
    return zErr;
}

/*
 * genie-mpi: the exact search of the parts (ITYPE_F_PARTS_EXACT: MinHash's
 * counts would not travel), each hit as its shared count (key) and its
 * set's size (value), the query's size its word, so that the broker orders
 * the shards' hits exactly (sets_hit_before) and rebuilds them
 * (sets_from_hits) as genie search --exact prints them.
 */
static genie_status sets_search_parts(const itype_index *ix, uint32_t firstPart, uint32_t nParts, uint64_t base,
                                      const itype_options *o, const genie_search_options *eng, const itype_batch *q,
                                      itype_hits_fn xAdd, void *ctx)
{
    genie_set_options so = set_options(o);
    so.exact = 1;
    so.candidates = 0;
    so.recall = 0;
    genie_search_options e = itype_engine(o, eng);
    genie_set_results *r = NULL;
    genie_status rc = genie_set_search_parts(ix->idx, firstPart, nParts, q->azText, q->anText, q->nQuery, &so, &e,
                                             &r);
    itype_hit *aOut = NULL;
    size_t nCap = 0;
    for (size_t i = 0; rc == GENIE_OK && i < q->nQuery; i++) {
        size_t n;
        const genie_set_hit *aHit = genie_set_results_get(r, i, &n);
        uint32_t qSize = genie_set_results_query_size(r, i);
        if (n > nCap) {
            itype_hit *a = realloc(aOut, n * sizeof *a);
            if (!a) {
                rc = GENIE_ENOMEM;
                break;
            }
            aOut = a;
            nCap = n;
        }
        for (size_t j = 0; j < n; j++)
            aOut[j] = (itype_hit){(uint32_t)(aHit[j].object + base), aHit[j].shared,
                                  aHit[j].union_size - qSize + aHit[j].shared};
        rc = xAdd(ctx, i, aOut, n, 1, qSize);
    }
    free(aOut);
    genie_set_results_free(r);
    return rc;
}

static int sets_hit_before(const itype_hit *a, const itype_hit *b, const itype_options *o, uint32_t qSize)
{
    int c = genie_set_similarity_cmp((genie_set_measure)o->measure, qSize, a->key, a->value, b->key, b->value);
    return c > 0 || (c == 0 && a->object < b->object);
}

static void sets_from_hits(const itype_hit *aHit, size_t n, const itype_options *o, uint32_t qSize, void *aOut)
{
    genie_set_hit *a = aOut;
    for (size_t i = 0; i < n; i++)
        a[i] = (genie_set_hit){aHit[i].object, aHit[i].key, qSize + aHit[i].value - aHit[i].key, 0,
                               genie_set_similarity((genie_set_measure)o->measure, aHit[i].key, qSize,
                                                    aHit[i].value)};
}

static int sets_info(const genie_index *idx, const char *zPath)
{
    cli_print_recall_estimate(idx, zPath, 10, 100, 0);
    return CLI_EXIT_OK;
}

/*
 * A JSON body's k is at least 1 with min_similarity too: genie serve bounds
 * every answer by --max-k (the CLI's --min-similarity without -k is k 0,
 * every set that reaches it).
 */
static const itype_option aSetsOption[] = {
    ITYPE_OPTION("k", ITYPE_OPT_UINT, k, 1, GENIE_SETS_MAX_K),
    ITYPE_OPTION("show", ITYPE_OPT_BOOL, show, 0, 1),
    ITYPE_OPTION("candidates", ITYPE_OPT_UINT, candidates, 1, 65536),
    ITYPE_OPTION("exact", ITYPE_OPT_BOOL, exact, 0, 1),
    {"recall", ITYPE_OPT_REAL, offsetof(itype_options, recall), 0, 1, 1, 0},
    ITYPE_OPTION("measure", ITYPE_OPT_MEASURE, measure, 0, 0),
    {"min_similarity", ITYPE_OPT_REAL, offsetof(itype_options, minSimilarity), 0, 1, 1, 0},
    {NULL, 0, 0, 0, 0, 0, 0}};

/* Writes: a set line each, as genie build reads them. */
static const itype_writes sets_writes = {0, itype_add_strings};

const itype itype_sets = {
    .zName = "sets",
    .zAbout = "sets of strings, one per line, under Jaccard and other set similarities (exact, or MinHash)",
    .type = GENIE_TYPE_SETS,
    .maxK = GENIE_SETS_MAX_K,
    .defaultK = 10,
    .query = ITYPE_QUERY_LINE,
    .flags = ITYPE_F_PARTS_EXACT,
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
    .xCheck = sets_check,
    .xSearch = sets_search,
    .xAnswer = sets_answer,
    .xFree = sets_free,
    .xTsv = sets_tsv,
    .xJson = sets_json,
    .xScore = sets_score,
    .pWrites = &sets_writes,
    .xSearchParts = sets_search_parts,
    .xFromHits = sets_from_hits,
    .xHitBefore = sets_hit_before,
    .zNoShardMap = "sets indexes are searched as parts of one file, not with a shard map "
                   "(genie build --type sets --part-objects)",
};
