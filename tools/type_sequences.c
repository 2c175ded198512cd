/*
 * `genie build --type sequences` and `genie search` on a sequences index:
 * strings, one per line, searched under edit distance (docs/SEQUENCES.md).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/sequences.h"
#include "cli.h"
#include "cli_search.h"
#include "json_out.h"

extern const itype itype_sequences;
/* --certify's default limit on K: rounds up to 4096 candidates cost about
 * as much to match and verify as a scan of some 10^4 strings, so past it
 * the fallback scan is the better buy on collections of that size or more
 * (the library also stops the doubling at a quarter of the strings). */
#define SEQ_CERTIFY_LIMIT 4096u

/* ------------------------------------------------------------ build */

/* cli_build_lines() callback: one input line is one object. */
static genie_status add_string(void *ctx, const char *z, size_t n)
{
    return genie_seq_builder_add(ctx, z, n);
}

static const char zBuildHelp[] =
    "Usage: genie build --type sequences [options] -o INDEX INPUT...\n"
    "\n"
    "Index strings for search under edit distance (Zhou et al. (GENIE) V-A): one\n"
    "string per line of each INPUT ('-' is standard input), object ids 0, 1,\n"
    "... in input order.  A line's bytes are the string, without its '\\n'\n"
    "and a '\\r' before it; bytes are symbols (no UTF-8 decoding, any byte\n"
    "but '\\n' allowed).  Each string is indexed by its ordered n-grams and\n"
    "stored in the index.  Empty lines and strings shorter than n are kept\n"
    "as objects without n-grams: only 'search --exact' finds them.\n"
    "\n"
    "  -o, --output FILE        the index file to write (replaced only once\n"
    "                           the new index is complete)\n"
    "  -t, --type sequences     this type\n"
    "  -n, --gram N             n-gram length, 1..64 (default 3)\n"
    "  -L, --sublist-length N   split lists longer than N postings (default 4096)\n"
    CLI_PART_HELP
    CLI_RECALL_BUILD_HELP
    "  -q, --quiet              no summary on standard error\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  genie build -t sequences -o words.genie /usr/share/dict/american-english-insane\n";

static int seq_build_option(void *ctx, int c, const char *zArg)
{
    uint64_t v;
    if (c != 'n')
        return CLI_OPTION_UNKNOWN;
    if (!cli_parse_u64(zArg, 1, 64, &v))
        return cli_usage_error("build", "--gram must be 1..64, not '%s'", zArg);
    *(uint32_t *)ctx = (uint32_t)v;
    return CLI_EXIT_OK;
}

#define BUILD_SHORT "n:"
static const struct option aBuildOpt[] = {{"gram", required_argument, 0, 'n'}, CLI_RECALL_BUILD_OPTION,
                                          {0, 0, 0, 0}};

static int seq_cli_build(int argc, char **argv)
{
    uint32_t gram = 3;
    cli_build_args a;
    int status = cli_parse_build(argc, argv, BUILD_SHORT, aBuildOpt, zBuildHelp, seq_build_option, &gram, &a);
    if (status != CLI_GO_ON)
        return status;
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    double t0 = util_now();
    genie_seq_builder *sb = NULL;
    uint64_t n = 0;
    genie_status rc = genie_seq_builder_new(&sb, &a.opt, gram);
    status = rc == GENIE_OK ? cli_build_lines("strings", add_string, sb, argc, argv, &n) : cli_fail(rc);
    if (status == CLI_EXIT_OK && (rc = genie_seq_builder_write(sb, a.zOut)) != GENIE_OK)
        status = cli_fail(rc);
    if (status == CLI_EXIT_OK && !a.quiet)
        fprintf(stderr, "genie: wrote %s: %llu strings, %u-grams, in %.2f s\n", a.zOut, (unsigned long long)n, gram,
                util_now() - t0);
    genie_seq_builder_free(sb);
    return status == CLI_EXIT_OK ? cli_build_recall(&a) : status;
}

/* ----------------------------------------------------------- search */

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]     (a sequences index)\n"
    "\n"
    "For each query string (one per line of QUERIES, default standard input)\n"
    "find the k strings of INDEX nearest by edit distance (unit-cost insert,\n"
    "delete, substitute of bytes), ties by smaller object id.  The engine\n"
    "returns the top-K candidates by ordered n-gram match count; they are\n"
    "verified with the exact edit distance (Zhou et al. (GENIE) Algorithm 2).  A query\n"
    "is 'certified' when Theorem V.2 proves its answer is the exact top-k;\n"
    "otherwise it may miss closer strings (and may have fewer than k hits).\n"
    "With --certify every answer is the exact top-k: the queries the\n"
    "certificate does not prove are compared with every string.\n"
    "\n"
    "Output, one line per hit (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> distance <TAB> count <TAB> certified\n"
    "count is the match count (0 when the answer came from comparing every\n"
    "string: --exact, or --certify's fallback); certified is yes or no.\n"
    "A query without hits prints no line (use --json to see it).  With --show\n"
    "a seventh column holds the string, with tab, newline and backslash\n"
    "written \\t \\n \\\\.\n"
    "\n"
    "  -k, --k N               answers per query, 1..65536 (default 1, where\n"
    "                          the other types have 10: the nearest string,\n"
    "                          as a spelling check asks; the default K, the\n"
    "                          cost of --certify and genie info's recall\n"
    "                          figures are for k = 1)\n"
    "  -K, --candidates N      candidates per query from the engine (default\n"
    "                          32; raised to k)\n"
    "      --certify[=LIMIT]   exact answers: search uncertified queries again\n"
    "                          with K doubled until certified or K reaches\n"
    "                          LIMIT (default 4096) or a quarter of the\n"
    "                          strings, then compare the queries still\n"
    "                          uncertified with every string (the fallback;\n"
    "                          on the GPU with -b cuda); every query certified\n"
    "      --certify-only[=LIMIT]  the same doubling without the fallback:\n"
    "                          certificate or nothing (cheaper; uncertified\n"
    "                          answers may miss closer strings)\n"
    "      --exact             brute force: the edit distance to every string\n"
    "                          (ground truth; every query certified)\n"
    CLI_RECALL_HELP
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              print each hit's string\n"
    CLI_VERBOSE_HELP
    "                          (before it, per query: its last K and how it\n"
    "                          was answered: certificate, full scan, or not\n"
    "                          certified; with --recall, first the K chosen,\n"
    "                          its estimated recall and the edit rate it\n"
    "                          assumed, measured on the queries)\n"
    "  -q, --quiet             no summary on standard error (it counts the\n"
    "                          queries the fallback scanned)\n"
    "  -h, --help              show this help\n"
    "\n"
    "Example:\n"
    "  echo algoritm | genie search -k 3 --certify words.genie\n";

/* The sequences search's own: its totals. */
typedef struct seq_cli {
    uint64_t nCertified, nVerified, nFallback;
    genie_backend backend;     /* of the candidate searches */
    genie_backend scanBackend; /* of the full scans (auto: none ran) */
    double tMatch, tVerify;
} seq_cli;

/* The spelling of the sequences CLI's messages (itype_spelling). */
static const itype_spelling *seq_spelling(const itype_options *o)
{
    static const itype_spelling aSpell[2] = {
        {.zK = "-k", .zCandidates = "-K", .zCertify = "--certify", .zRadius = "--radius"},
        {.zK = "-k", .zCandidates = "-K", .zCertify = "--certify-only", .zRadius = "--radius"}};
    return &aSpell[o->certifyOnly != 0];
}

#define SEARCH_SHORT CLI_SEARCH_SHORT_OPTIONS "K:" CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    CLI_SEARCH_LONG_OPTIONS, {"candidates", required_argument, 0, 'K'}, {"certify", optional_argument, 0, 'C'},
    {"exact", no_argument, 0, 'E'}, {"certify-only", optional_argument, 0, 'O'}, {"recall", required_argument, 0, 'R'},
    CLI_ENGINE_LONG_OPTIONS, CLI_FILTER_LONG_OPTIONS, {0, 0, 0, 0}};

static int parse_seq_search(int argc, char **argv, cli_search *s)
{
    itype_options *o = &s->o;
    int ch;
    uint64_t v;
    optind = 1;
    while ((ch = getopt_long(argc, argv, SEARCH_SHORT, aSearchOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", ch, optarg, &s->eng, &st) || cli_search_option(s, ch, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (ch) {
        case 'C':
        case 'O':
            o->maxCandidates = SEQ_CERTIFY_LIMIT;
            o->certifyOnly = ch == 'O';
            if (optarg && !cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("search", "--%s limit must be 1..4294967295, not '%s'",
                                       ch == 'O' ? "certify-only" : "certify", optarg);
            if (optarg)
                o->maxCandidates = (uint32_t)v;
            break;
        case 'h': cli_help(zSearchHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    if (o->recall && o->maxCandidates)
        return cli_usage_error("search", "--recall is for the search without certificates: not with --certify");
    int stRecall = cli_check_recall("search", o->recall, o->k, o->exact, o->candidates != 0);
    if (stRecall != CLI_EXIT_OK)
        return stRecall;
    char zErr[160];
    if (s->pType->xCheck(NULL, o, seq_spelling(o), zErr, sizeof zErr))
        return cli_usage_error("search", "%s", zErr);
    return CLI_EXIT_OK;
}

/* -v: how each query was answered. */
static void seq_query_verbose(cli_search *s, uint64_t queryNo, const itype_answer *a)
{
    (void)s;
    fprintf(stderr, "genie: query %llu: K %u, %s\n", (unsigned long long)queryNo, a->usedK,
            a->scanned ? "answered by the full scan" : a->certified ? "certified" : "not certified");
}

/* After each chunk: the totals; with -v the recall choice of the first. */
static genie_status seq_chunk_done(cli_search *s, const itype_results *r)
{
    seq_cli *c = s->pCtx;
    for (size_t q = 0; q < r->nQuery; q++) {
        itype_answer a;
        itype_results_answer(s->pType, r, q, &a);
        c->nCertified += a.certified != 0;
    }
    const genie_search_stats *st = &r->st;
    if (s->verbose && s->nQuery == 0)
        cli_print_recall_choice("search", s->o.recall, s->o.k, st, 0);
    c->tMatch += st->match_seconds;
    c->tVerify += st->rerank_seconds;
    c->nVerified += st->verified;
    c->nFallback += st->fallback;
    c->backend = st->backend;
    if (st->scan_backend != GENIE_BACKEND_AUTO)
        c->scanBackend = st->scan_backend;
    return GENIE_OK;
}

static void seq_summary(cli_search *s)
{
    const seq_cli *c = s->pCtx;
    const itype_options *o = &s->o;
    char zScan[96] = "";
    if (o->maxCandidates && !o->certifyOnly && !o->exact)
        snprintf(zScan, sizeof zScan, " (%llu by the fallback scan%s%s)", (unsigned long long)c->nFallback,
                 c->nFallback ? " on " : "", c->nFallback ? genie_backend_name(c->scanBackend) : "");
    fprintf(stderr,
            "genie: %llu queries, %llu certified%s; match %.3f s (%s), verify %.3f s (%s), %llu edit distances\n",
            (unsigned long long)s->nQuery, (unsigned long long)c->nCertified, zScan, c->tMatch,
            o->exact ? "none" : genie_backend_name(c->backend), c->tVerify,
            c->scanBackend != GENIE_BACKEND_AUTO ? genie_backend_name(c->scanBackend) : "cpu",
            (unsigned long long)c->nVerified);
}

static int seq_cli_search(int argc, char **argv, const char *zIndex)
{
    cli_search s;
    cli_search_init(&s, &itype_sequences);
    seq_cli c;
    memset(&c, 0, sizeof c);
    int status = parse_seq_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    s.pCtx = &c;
    s.xDone = seq_chunk_done;
    s.xSummary = seq_summary;
    if (s.verbose)
        s.xQuery = seq_query_verbose;
    return cli_search_main(&s, argc, argv, zIndex, "-");
}

/* ------------------------------------------------------------- entry */

static genie_seq_options seq_options(const itype_options *o)
{
    genie_seq_options so;
    memset(&so, 0, sizeof so);
    so.k = o->k;
    so.candidates = o->candidates;
    so.max_candidates = o->maxCandidates;
    so.exact = o->exact;
    so.certify_only = o->certifyOnly;
    so.recall = o->recall;
    return so;
}

static genie_status seq_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                               const itype_batch *q, itype_results *out)
{
    genie_seq_options so = seq_options(o);
    genie_seq_results *r = NULL;
    genie_search_options e = itype_engine(o, eng);
    genie_status rc = genie_seq_search(ix->idx, q->azText, q->anText, q->nQuery, &so, &e, &r);
    out->pNative = r;
    if (r) {
        out->nQuery = genie_seq_results_queries(r);
        genie_seq_results_stats(r, &out->st);
    }
    return rc;
}

static void seq_answer(const itype_results *r, size_t q, itype_answer *a)
{
    a->aHit = genie_seq_results_get(r->pNative, q, &a->n, &a->certified, &a->usedK);
    a->scanned = genie_seq_results_scanned(r->pNative, q);
}

static void seq_free(void *pNative)
{
    genie_seq_results_free(pNative);
}

static void seq_tsv(const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    const genie_seq_hit *aHit = a->aHit;
    for (size_t i = 0; i < a->n; i++) {
        printf("%llu\t%zu\t%u\t%u\t%u\t%s", (unsigned long long)queryNo, i + 1, aHit[i].object, aHit[i].distance,
               aHit[i].count, a->certified ? "yes" : "no");
        cli_put_record(p->src.idx, aHit[i].object, p->show);
        putchar('\n');
    }
}

static void seq_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    json_out_seq_hits(b, p->src.idx, queryNo, a->aHit, a->n, a->certified, a->scanned, a->usedK, p->show);
}

/* genie eval: the edit distance, smaller better. */
static double seq_score(const itype_answer *a, size_t i, uint32_t *pObject)
{
    const genie_seq_hit *h = (const genie_seq_hit *)a->aHit + i;
    *pObject = h->object;
    return -(double)h->distance;
}

/* --certify's limit is at least K (the default 32, raised to k). */
static const char *seq_check(const itype_index *ix, const itype_options *o, const itype_spelling *sp, char *zErr,
                             size_t nErr)
{
    (void)ix;
    uint32_t K = o->candidates ? o->candidates : 32;
    if (K < o->k)
        K = o->k;
    if (o->maxCandidates && o->maxCandidates < K) {
        snprintf(zErr, nErr, "%s limit %u is below K = %u", sp->zCertify, o->maxCandidates, K);
        return zErr;
    }
    return NULL;
}

static int seq_info(const genie_index *idx, const char *zPath)
{
    cli_print_recall_estimate(idx, zPath, 1, 32, 1);
    return CLI_EXIT_OK;
}

static genie_status seq_search_parts(const itype_index *ix, uint32_t firstPart, uint32_t nParts, uint64_t base,
                                     const itype_options *o, const genie_search_options *eng, const itype_batch *q,
                                     itype_hits_fn xAdd, void *ctx)
{
    genie_seq_options so = seq_options(o);
    genie_seq_results *r = NULL;
    genie_search_options e = itype_engine(o, eng);
    itype_hit *aOut = malloc((o->k ? o->k : 1) * sizeof *aOut); /* a query's hits: at most k */
    genie_status rc = aOut ? genie_seq_search_parts(ix->idx, firstPart, nParts, q->azText, q->anText, q->nQuery,
                                                    &so, &e, &r)
                           : GENIE_ENOMEM;
    for (size_t i = 0; rc == GENIE_OK && i < q->nQuery; i++) {
        size_t n;
        int certified;
        uint32_t usedK;
        const genie_seq_hit *aHit = genie_seq_results_get(r, i, &n, &certified, &usedK);
        for (size_t j = 0; j < n; j++)
            aOut[j] = (itype_hit){(uint32_t)(aHit[j].object + base), aHit[j].distance, aHit[j].count};
        rc = xAdd(ctx, i, aOut, n, certified, usedK);
    }
    free(aOut);
    genie_seq_results_free(r);
    return rc;
}

static void seq_from_hits(const itype_hit *aHit, size_t n, const itype_options *o, uint32_t word, void *aOut)
{
    (void)o, (void)word;
    genie_seq_hit *a = aOut;
    for (size_t i = 0; i < n; i++)
        a[i] = (genie_seq_hit){aHit[i].object, aHit[i].key, aHit[i].value};
}

static const itype_option aSeqOption[] = {
    ITYPE_OPTION("k", ITYPE_OPT_UINT, k, 1, GENIE_SEQ_MAX_K),
    ITYPE_OPTION("show", ITYPE_OPT_BOOL, show, 0, 1),
    ITYPE_OPTION("candidates", ITYPE_OPT_UINT, candidates, 1, 65536),
    ITYPE_OPTION("exact", ITYPE_OPT_BOOL, exact, 0, 1),
    ITYPE_OPTION("certify", ITYPE_OPT_CERTIFY, maxCandidates, SEQ_CERTIFY_LIMIT, 1048576),
    {"recall", ITYPE_OPT_REAL, offsetof(itype_options, recall), 0, 1, 1, 0},
    {NULL, 0, 0, 0, 0, 0, 0}};

/* Writes: a string each, as genie build reads them. */
static const itype_writes seq_writes = {0, itype_add_strings};

const itype itype_sequences = {
    .zName = "sequences",
    .zAbout = "strings, one per line, under edit distance (n-grams, exact verification)",
    .type = GENIE_TYPE_SEQUENCES,
    .maxK = GENIE_SEQ_MAX_K,
    .defaultK = 1,
    .zWhyDefaultK = "the nearest string, as a spelling check asks; the default K, the cost of --certify and "
                    "genie info's recall figures are for k = 1",
    .flags = ITYPE_F_CERTIFIED | ITYPE_F_BATCH_ALONE,
    .query = ITYPE_QUERY_LINE,
    .zJsonQuery = "a string",
    .aOption = aSeqOption,
    .szHit = sizeof(genie_seq_hit),
    .xCliBuild = seq_cli_build,
    .xCliSearch = seq_cli_search,
    .xCliEval = cli_eval_lines,
    .xCliInfo = seq_info,
    .cliBuild = {BUILD_SHORT, aBuildOpt, zBuildHelp},
    .cliSearch = {SEARCH_SHORT, aSearchOpt, zSearchHelp},
    .cliEval = CLI_EVAL_LINES,
    .xCheck = seq_check,
    .xSearch = seq_search,
    .xAnswer = seq_answer,
    .xFree = seq_free,
    .xTsv = seq_tsv,
    .xJson = seq_json,
    .xScore = seq_score,
    .xSearchParts = seq_search_parts,
    .xFromHits = seq_from_hits,
    .zNoShardMap = "sequences indexes are searched as parts of one file, not with a shard map "
                   "(genie build --type sequences --part-objects)",
    .pWrites = &seq_writes,
};
