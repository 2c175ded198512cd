/*
 * `genie build --type docs` and `genie search` on a docs index: ranked
 * retrieval of documents by AND (or OR) queries, BM25 + PageRank, with
 * early termination (docs/DOCS.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/docs.h"
#include "cli.h"
#include "cli_search.h"
#include "json_out.h"
#include "util/clock.h"

extern const itype itype_docs;

static const char zBuildHelp[] =
    "Usage: genie build --type docs [options] -o INDEX INPUT...\n"
    "\n"
    "Index text documents for ranked AND queries: one document per line of\n"
    "each INPUT ('-' is standard input), or per block of lines between\n"
    "lines equal to --delimiter; record numbers 0, 1, ... in input order.\n"
    "Words are lower-cased runs of letters, digits and bytes >= 0x80 (as\n"
    "the text type).  Documents are ranked by 0.3 PageRank + 0.7 BM25 (both\n"
    "normalised); PageRank comes from --links, or is uniform.  The index\n"
    "numbers documents by global score so that searches stop early.\n"
    "\n"
    "  -o, --output FILE        the index file to write\n"
    "  -t, --type docs          this type\n"
    "  -d, --delimiter LINE     documents are blocks of lines between lines\n"
    "                           equal to LINE (e.g. '%')\n"
    "      --links FILE         links for PageRank: lines 'from to' (record\n"
    "                           numbers); repeats count once, self-links are\n"
    "                           ignored\n"
    "      --static-score FILE  one score >= 0 per line (record i on line\n"
    "                           i+1) used instead of PageRank\n"
    "      --stop-words FILE    words never indexed (any layout)\n"
    "      --no-records         do not store the documents' text (--show)\n"
    "      --alpha A            weight of PageRank, 0..1 (default 0.3)\n"
    "      --k1 K               BM25 k1 (default 1.2)\n"
    "      --b B                BM25 b, 0..1 (default 0.75)\n"
    "      --damping C          PageRank damping, (0, 1) (default 0.85);\n"
    "                           iterations stop at an L1 change < 1e-9 or\n"
    "                           after 1000\n"
    "  -L, --sublist-length N   split lists longer than N postings (default 4096)\n"
    "      --part-objects, --part-bytes, --gpu-memory   refused: an index of\n"
    "                           documents is one part\n"
    "  -q, --quiet              no summary on standard error\n"
    "  -h, --help               show this help\n"
    "\n"
    "Example:\n"
    "  genie build -t docs --links links.txt -o foldoc.genie foldoc.txt\n";

static int parse_double(const char *z, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(z, &end);
    if (end == z || *end || !(v >= lo && v <= hi))
        return 0;
    *out = v;
    return 1;
}

/* Stop words: every line of @p path is handed to the builder as a text. */
static int read_stop_lines(const char *path, cli_lines *l)
{
    if (cli_lines_open(l, path) != 0)
        return -1;
    return cli_lines_read(l, (size_t)-1) < 0 ? -1 : 0;
}

static int build_docs(genie_docs_builder *db, char **azIn, int nIn, const char *zDelim, const char *zLinks,
                      const char *zScores)
{
    genie_status rc = GENIE_OK;
    for (int i = 0; i < nIn && rc == GENIE_OK; i++)
        rc = genie_docs_builder_add_file(db, azIn[i], zDelim);
    if (rc == GENIE_OK && zLinks)
        rc = genie_docs_builder_read_links(db, zLinks);
    if (rc == GENIE_OK && zScores)
        rc = genie_docs_builder_read_scores(db, zScores);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}

/* The docs build's own options (cli_parse_build parses the shared ones). */
typedef struct docs_build_opts {
    const char *zDelim, *zLinks, *zScores, *zStop;
    genie_docs_params p;
    int storeRecords;
} docs_build_opts;

static int docs_build_option(void *ctx, int c, const char *zArg)
{
    docs_build_opts *d = ctx;
    switch (c) {
    case 'd': d->zDelim = zArg; return CLI_EXIT_OK;
    case 'l': d->zLinks = zArg; return CLI_EXIT_OK;
    case 'S': d->zScores = zArg; return CLI_EXIT_OK;
    case 'w': d->zStop = zArg; return CLI_EXIT_OK;
    case 'N': d->storeRecords = 0; return CLI_EXIT_OK;
    case 'A':
        return parse_double(zArg, 0, 1, &d->p.alpha)
                   ? CLI_EXIT_OK
                   : cli_usage_error("build", "--alpha must be a number in [0, 1], not '%s'", zArg);
    case 'K':
        return parse_double(zArg, 0, 1e300, &d->p.k1)
                   ? CLI_EXIT_OK
                   : cli_usage_error("build", "--k1 must be a number >= 0, not '%s'", zArg);
    case 'B':
        return parse_double(zArg, 0, 1, &d->p.b) ? CLI_EXIT_OK
                                                 : cli_usage_error("build", "--b must be a number in [0, 1], not '%s'", zArg);
    case 'D':
        return parse_double(zArg, 1e-12, 1 - 1e-12, &d->p.damping)
                   ? CLI_EXIT_OK
                   : cli_usage_error("build", "--damping must be a number in (0, 1), not '%s'", zArg);
    default: return CLI_OPTION_UNKNOWN;
    }
}

#define BUILD_SHORT "d:"
static const struct option aBuildOpt[] = {
    {"delimiter", required_argument, 0, 'd'},    {"links", required_argument, 0, 'l'},
    {"static-score", required_argument, 0, 'S'}, {"stop-words", required_argument, 0, 'w'},
    {"no-records", no_argument, 0, 'N'},         {"alpha", required_argument, 0, 'A'},
    {"k1", required_argument, 0, 'K'},           {"b", required_argument, 0, 'B'},
    {"damping", required_argument, 0, 'D'},      {0, 0, 0, 0}};

static int docs_cli_build(int argc, char **argv)
{
    docs_build_opts bo;
    memset(&bo, 0, sizeof bo);
    genie_docs_params_default(&bo.p);
    bo.storeRecords = 1;
    cli_build_args a;
    int st = cli_parse_build(argc, argv, BUILD_SHORT, aBuildOpt, zBuildHelp, docs_build_option, &bo, &a);
    if (st != CLI_GO_ON)
        return st;
    const char *zOut = a.zOut, *zDelim = bo.zDelim, *zLinks = bo.zLinks, *zScores = bo.zScores, *zStop = bo.zStop;
    genie_build_options opt = a.opt;
    genie_docs_params p = bo.p;
    int quiet = a.quiet, storeRecords = bo.storeRecords;
    if (!zOut)
        return cli_usage_error("build", "no output file (-o INDEX)");
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    if (zLinks && zScores)
        return cli_usage_error("build", "--links and --static-score exclude each other");
    if (zDelim && !*zDelim)
        return cli_usage_error("build", "--delimiter must not be empty");
    cli_lines stop;
    memset(&stop, 0, sizeof stop);
    if (zStop && read_stop_lines(zStop, &stop) != 0) {
        cli_lines_close(&stop);
        return CLI_EXIT_FAIL;
    }
    double t0 = util_now();
    genie_docs_builder *db = NULL;
    genie_status rc = genie_docs_builder_new(&db, &opt, &p, stop.azLine, stop.nLine, storeRecords);
    cli_lines_close(&stop);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    int status = build_docs(db, argv + optind, argc - optind, zDelim, zLinks, zScores);
    if (status == CLI_EXIT_OK) {
        rc = genie_docs_builder_write(db, zOut);
        if (rc != GENIE_OK)
            status = cli_fail(rc);
    }
    genie_docs_builder_free(db);
    if (status != CLI_EXIT_OK || quiet)
        return status;
    genie_index *idx;
    genie_docs *d;
    if (genie_index_open(zOut, &idx) != GENIE_OK)
        return cli_fail(GENIE_EIO);
    if ((rc = genie_docs_open(idx, &d)) != GENIE_OK) {
        genie_index_close(idx);
        return cli_fail(rc);
    }
    genie_docs_info info;
    genie_docs_get_info(d, &info);
    static const char *const azSource[] = {"uniform", "PageRank", "static scores"};
    fprintf(stderr, "genie: wrote %s: %llu documents, %llu postings, %llu words; %s", zOut,
            (unsigned long long)info.n_docs, (unsigned long long)info.n_postings, (unsigned long long)info.n_words,
            azSource[info.score_source]);
    if (info.score_source == 1)
        fprintf(stderr, " of %llu links in %u iterations", (unsigned long long)info.n_links, info.iterations);
    fprintf(stderr, "; %.2f s\n", util_now() - t0);
    genie_docs_close(d);
    genie_index_close(idx);
    return CLI_EXIT_OK;
}

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX [QUERIES]     (a docs index)\n"
    "\n"
    "For each query (one line of words of QUERIES, default standard input)\n"
    "find the k documents holding every word with the highest score\n"
    "0.3 PageRank + 0.7 BM25 (both normalised to [0, 1]; the weights are\n"
    "the index's), ties by smaller record number.  A word no document holds\n"
    "makes the answer empty; repeated words count once.  The search stops as\n"
    "soon as no unread document can enter the top k (documents are numbered\n"
    "by global score); the answers equal --exhaustive's.\n"
    "\n"
    "Output, one line per hit (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> record <TAB> score\n"
    "score has 9 decimals.  With --show a fifth column holds the stored\n"
    "document, with tab, newline and backslash written \\t \\n \\\\.\n"
    "\n"
    "  -k, --k N               answers per query, 1..1000000 (default 10)\n"
    "      --or                documents holding any of the words (unknown\n"
    "                          words are skipped), same score\n"
    "      --exhaustive        score every matching document (the oracle)\n"
    CLI_BACKEND_HELP
    "                          (-b on a docs index: cuda runs AND queries\n"
    "                          with k <= 1024 on the GPU, Algorithm 1 of Wang\n"
    "                          et al., the rest on the CPU, with the same\n"
    "                          answers; auto: the GPU when one is usable, as\n"
    "                          the library chooses: genie_docs_options)\n"
    "      --gpu-memory BYTES  cuda: memory M for the list cache and the batch\n"
    "                          buffer (K/M/G suffixes; default 1G)\n"
    "      --cache-fraction F  cuda: the cache's share of M, (0, 1) (default\n"
    "                          0.5); the batches get the rest\n"
    "      --cache-plan FILE   cuda: what the cache admits (genie cache-plan);\n"
    "                          without: every list if all fit, else none\n"
    CLI_FILTER_HELP
    "                          (docs: ids are record numbers; scores keep the\n"
    "                          whole collection's statistics)\n"
    "      --json              one JSON object per query instead of TSV,\n"
    "                          with the BM25 and PageRank parts\n"
    "      --show              print each hit's stored document\n"
    CLI_VERBOSE_HELP
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

/* The docs search's own: the cache plan, the totals. */
typedef struct docs_cli {
    const char *zPlan;
    genie_docs_plan *plan;
    genie_docs_stats total;
} docs_cli;

#define SEARCH_SHORT CLI_SEARCH_SHORT_OPTIONS CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    CLI_SEARCH_LONG_OPTIONS, {"or", no_argument, 0, 'O'}, {"exhaustive", no_argument, 0, 'E'},
    CLI_BACKEND_LONG_OPTIONS, {"gpu-memory", required_argument, 0, CLI_OPT_SEARCH_GPU_MEMORY},
    {"cache-fraction", required_argument, 0, 'F'}, {"cache-plan", required_argument, 0, 'P'},
    CLI_FILTER_LONG_OPTIONS, {0, 0, 0, 0}};

static int parse_docs_search(int argc, char **argv, cli_search *s, docs_cli *d)
{
    itype_options *o = &s->o;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, SEARCH_SHORT, aSearchOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", c, optarg, &s->eng, &st) || cli_search_option(s, c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'F':
            if (!parse_double(optarg, 1e-9, 1 - 1e-9, &o->cacheFraction))
                return cli_usage_error("search", "--cache-fraction must be a number in (0, 1), not '%s'", optarg);
            break;
        case 'P': d->zPlan = optarg; break;
        case 'O': o->orMode = 1; break;
        case 'E': o->exhaustive = 1; break;
        case 'h': cli_help(zSearchHelp); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return CLI_EXIT_OK;
}

/* After each chunk: the totals. */
static genie_status docs_chunk_done(cli_search *s, const itype_results *r)
{
    docs_cli *d = s->pCtx;
    genie_docs_stats st;
    genie_docs_results_stats(r->pNative, &st);
    d->total.postings_read += st.postings_read;
    d->total.postings_total += st.postings_total;
    d->total.stopped_early += st.stopped_early;
    d->total.seconds += st.seconds;
    d->total.backend = st.backend;
    d->total.post_processed += st.post_processed;
    d->total.batches += st.batches;
    d->total.bytes_moved += st.bytes_moved;
    d->total.cache_bytes = st.cache_bytes;
    return GENIE_OK;
}

static void docs_summary(cli_search *s)
{
    const docs_cli *d = s->pCtx;
    const genie_docs_stats *t = &d->total;
    fprintf(stderr, "genie: %llu queries in %.3f s; postings read %llu of %llu; %llu stopped early\n",
            (unsigned long long)s->nQuery, t->seconds, (unsigned long long)t->postings_read,
            (unsigned long long)t->postings_total, (unsigned long long)t->stopped_early);
    if (t->backend == GENIE_BACKEND_CUDA)
        fprintf(stderr, "genie: cuda: cache %.1f MiB, %llu batches, %.1f MiB of lists sent, %llu queries "
                        "post-processed on the CPU\n",
                (double)t->cache_bytes / 1048576.0, (unsigned long long)t->batches,
                (double)t->bytes_moved / 1048576.0, (unsigned long long)t->post_processed);
}

/* The plan of --cache-plan: what the search needs beyond the index. */
static int docs_prepare(cli_search *s, const char *zIndex, const char *zQueries)
{
    (void)zIndex;
    (void)zQueries;
    docs_cli *d = s->pCtx;
    genie_status rc;
    if (d->zPlan && (rc = genie_docs_plan_read(s->ix.pState, d->zPlan, &d->plan)) != GENIE_OK)
        return cli_fail(rc);
    s->o.plan = d->plan;
    return CLI_EXIT_OK;
}

static int docs_cli_search(int argc, char **argv, const char *zIndex)
{
    cli_search s;
    cli_search_init(&s, &itype_docs);
    docs_cli d;
    memset(&d, 0, sizeof d);
    int status = parse_docs_search(argc, argv, &s, &d);
    if (status != CLI_EXIT_OK)
        return status;
    s.pCtx = &d;
    s.xOpened = docs_prepare;
    s.xDone = docs_chunk_done;
    s.xSummary = docs_summary;
    status = cli_search_main(&s, argc, argv, zIndex, "-");
    genie_docs_plan_free(d.plan);
    return status;
}

static const char zPlanHelp[] =
    "Usage: genie cache-plan [options] -o PLAN INDEX TRAIN\n"
    "\n"
    "The GPU list cache plan of a docs INDEX from the training queries TRAIN\n"
    "(one per line): the order in which lists, or blocks of 256 postings,\n"
    "enter the cache (Wang et al. 3.3).  'genie search -b cuda --cache-plan\n"
    "PLAN' admits the steps that fit its cache (--gpu-memory times\n"
    "--cache-fraction).\n"
    "\n"
    "  -o, --output FILE        the plan file to write\n"
    "      --policy P           vfb (default): blocks by how many training\n"
    "                           queries visit them (top-k searches with early\n"
    "                           termination); qtf: whole lists by query\n"
    "                           frequency; qtfdf: by frequency / list length\n"
    "      --lambda L           vfb: admit a block only when it starts within\n"
    "                           the first L of its list, (0, 1] (default 1)\n"
    "  -k, --k N                the k of the training searches (default 10)\n"
    "  -q, --quiet              no summary on standard error\n"
    "  -h, --help               show this help\n";

int docs_cli_cache_plan(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"output", required_argument, 0, 'o'}, {"policy", required_argument, 0, 'p'},
        {"lambda", required_argument, 0, 'l'}, {"k", required_argument, 0, 'k'},
        {"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *zOut = NULL;
    genie_docs_policy policy = GENIE_DOCS_VFB;
    double lambda = 1.0;
    uint32_t k = itype_docs.defaultK;
    int quiet = 0, c, st;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:k:qh", aOpt, NULL)) != -1) {
        switch (c) {
        case 'o': zOut = optarg; break;
        case 'p':
            if (strcmp(optarg, "vfb") == 0)
                policy = GENIE_DOCS_VFB;
            else if (strcmp(optarg, "qtf") == 0)
                policy = GENIE_DOCS_QTF;
            else if (strcmp(optarg, "qtfdf") == 0)
                policy = GENIE_DOCS_QTFDF;
            else
                return cli_usage_error("cache-plan", "--policy is vfb, qtf or qtfdf, not '%s'", optarg);
            break;
        case 'l':
            if (!parse_double(optarg, 1e-9, 1, &lambda))
                return cli_usage_error("cache-plan", "--lambda must be a number in (0, 1], not '%s'", optarg);
            break;
        case 'k':
            cli_k_option("cache-plan", &itype_docs, c, optarg, &k, &st);
            if (st != CLI_EXIT_OK)
                return st;
            break;
        case 'q': quiet = 1; break;
        case 'h': cli_help(zPlanHelp); return CLI_EXIT_OK;
        default: return cli_usage_error("cache-plan", "bad option");
        }
    }
    if (!zOut)
        return cli_usage_error("cache-plan", "no output file (-o PLAN)");
    if (argc - optind != 2)
        return cli_usage_error("cache-plan", "expected INDEX and TRAIN");
    if ((st = cli_check_output(zOut, argc, argv)) != CLI_EXIT_OK)
        return st;
    genie_index *idx;
    genie_docs *d;
    genie_status rc = genie_index_open(argv[optind], &idx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    if ((rc = genie_docs_open(idx, &d)) != GENIE_OK) {
        genie_index_close(idx);
        return cli_fail(rc);
    }
    cli_lines l;
    int status = CLI_EXIT_OK;
    if (cli_lines_open(&l, argv[optind + 1]) != 0 || cli_lines_read(&l, (size_t)-1) < 0) {
        status = CLI_EXIT_FAIL;
    } else {
        genie_docs_plan *p = NULL;
        rc = genie_docs_plan_build(d, l.azLine, l.anLine, l.nLine, k, policy, lambda, &p);
        if (rc == GENIE_OK)
            rc = genie_docs_plan_write(p, zOut);
        genie_docs_plan_free(p);
        if (rc != GENIE_OK)
            status = cli_fail(rc);
        else if (!quiet)
            fprintf(stderr, "genie: wrote %s from %zu training queries\n", zOut, l.nLine);
    }
    cli_lines_close(&l);
    genie_docs_close(d);
    genie_index_close(idx);
    return status;
}

/* ------------------------------------------------------------- entry */

static genie_status docs_open(itype_index *ix)
{
    genie_docs *d = NULL;
    genie_status rc = genie_docs_open(ix->idx, &d);
    ix->pState = d;
    return rc;
}

static void docs_close(itype_index *ix)
{
    genie_docs_close(ix->pState);
}

static genie_status docs_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                                const itype_batch *q, itype_results *out)
{
    genie_docs_options dopt;
    memset(&dopt, 0, sizeof dopt);
    dopt.k = o->k;
    dopt.mode = o->orMode ? GENIE_DOCS_OR : GENIE_DOCS_AND;
    dopt.exhaustive = o->exhaustive;
    dopt.threads = eng->threads;
    dopt.backend = eng->backend; /* the library chooses (genie_docs_options.backend) */
    dopt.gpu_memory = eng->gpu_memory;
    dopt.cache_fraction = o->cacheFraction;
    dopt.plan = o->plan;
    dopt.filter = o->filter;
    genie_docs_results *r = NULL;
    genie_status rc = genie_docs_search(ix->pState, q->azText, q->anText, q->nQuery, &dopt, &r);
    out->pNative = r;
    out->nQuery = r ? genie_docs_results_queries(r) : 0;
    if (r) {
        genie_docs_stats st;
        genie_docs_results_stats(r, &st);
        out->st.backend = st.backend;
        out->st.total_seconds = st.seconds;
    }
    return rc;
}

static void docs_answer(const itype_results *r, size_t q, itype_answer *a)
{
    a->aHit = genie_docs_results_get(r->pNative, q, &a->n);
}

static void docs_free(void *pNative)
{
    genie_docs_results_free(pNative);
}

static void docs_tsv(const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    const genie_docs_hit *aHit = a->aHit;
    for (size_t i = 0; i < a->n; i++) {
        const genie_docs_hit *h = &aHit[i];
        printf("%llu\t%zu\t%u\t%.9f", (unsigned long long)queryNo, i + 1, h->record, h->score);
        cli_put_record(p->src.idx, h->doc, p->show);
        putchar('\n');
    }
}

static void docs_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    json_out_docs_hits(b, p->src.idx, queryNo, a->aHit, a->n, p->show);
}

/*
 * Filters name documents by the record numbers genie search prints; the
 * library's filter is over docIDs (its object ids, in the index's global
 * order): the table record -> docID, made for each filter.
 */
static genie_status docs_objects_of_ids(const itype_index *ix, const uint64_t *aId, size_t n, uint64_t *aObject,
                                        size_t *pBad)
{
    genie_docs_info info;
    genie_docs_get_info(ix->pState, &info);
    uint32_t *aDoc = malloc((info.n_docs ? info.n_docs : 1) * sizeof *aDoc);
    if (!aDoc)
        return GENIE_ENOMEM;
    for (uint64_t doc = 0; doc < info.n_docs; doc++) {
        uint32_t rec = 0;
        genie_docs_document(ix->pState, (uint32_t)doc, &rec, NULL, NULL, NULL);
        if (rec < info.n_docs)
            aDoc[rec] = (uint32_t)doc;
    }
    genie_status rc = GENIE_OK;
    for (size_t i = 0; i < n && rc == GENIE_OK; i++) {
        if (aId[i] >= info.n_docs) {
            *pBad = i;
            rc = GENIE_EINVAL;
        } else {
            aObject[i] = aDoc[aId[i]];
        }
    }
    free(aDoc);
    return rc;
}

static const itype_option aDocsOption[] = {
    ITYPE_OPTION("k", ITYPE_OPT_UINT, k, 1, GENIE_DOCS_MAX_K),
    ITYPE_OPTION("show", ITYPE_OPT_BOOL, show, 0, 1),
    ITYPE_OPTION("or", ITYPE_OPT_BOOL, orMode, 0, 1),
    ITYPE_OPTION("exhaustive", ITYPE_OPT_BOOL, exhaustive, 0, 1),
    {NULL, 0, 0, 0, 0, 0, 0}};

const itype itype_docs = {
    .zName = "docs",
    .zAbout = "documents ranked by BM25 and PageRank for AND (or OR) queries, stopping early",
    .zNoRecords = "built with --no-records",
    .type = GENIE_TYPE_DOCS,
    .maxK = GENIE_DOCS_MAX_K,
    .defaultK = 10,
    .query = ITYPE_QUERY_LINE,
    .zJsonQuery = "a string (words)",
    .aOption = aDocsOption,
    .szHit = sizeof(genie_docs_hit),
    .xCliBuild = docs_cli_build,
    .xCliSearch = docs_cli_search,
    .cliBuild = {BUILD_SHORT, aBuildOpt, zBuildHelp},
    .cliSearch = {SEARCH_SHORT, aSearchOpt, zSearchHelp},
    .xOpen = docs_open,
    .xClose = docs_close,
    .xSearch = docs_search,
    .xAnswer = docs_answer,
    .xFree = docs_free,
    .xTsv = docs_tsv,
    .xJson = docs_json,
    .xObjectsOfIds = docs_objects_of_ids,
};
