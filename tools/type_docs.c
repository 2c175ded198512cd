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
#include "json_out.h"
#include "util/clock.h"

#define DOCS_QUERIES_PER_CHUNK 8192

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

int docs_cli_build(int argc, char **argv)
{
    static const struct option aOpt[] = {
        {"delimiter", required_argument, 0, 'd'},    {"links", required_argument, 0, 'l'},
        {"static-score", required_argument, 0, 'S'}, {"stop-words", required_argument, 0, 'w'},
        {"no-records", no_argument, 0, 'N'},         {"alpha", required_argument, 0, 'A'},
        {"k1", required_argument, 0, 'K'},           {"b", required_argument, 0, 'B'},
        {"damping", required_argument, 0, 'D'},      {0, 0, 0, 0}};
    docs_build_opts bo;
    memset(&bo, 0, sizeof bo);
    genie_docs_params_default(&bo.p);
    bo.storeRecords = 1;
    cli_build_args a;
    int st = cli_parse_build(argc, argv, "d:", aOpt, zBuildHelp, docs_build_option, &bo, &a);
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
    "  -b, --backend NAME      cpu (default) or cuda: AND queries with k <=\n"
    "                          1024 on the GPU (Algorithm 1 of Wang et al.),\n"
    "                          the rest on the CPU; same answers\n"
    "      --gpu-memory BYTES  cuda: memory M for the list cache and the batch\n"
    "                          buffer (K/M/G suffixes; default 1G)\n"
    "      --cache-fraction F  cuda: the cache's share of M, (0, 1) (default\n"
    "                          0.5); the batches get the rest\n"
    "      --cache-plan FILE   cuda: what the cache admits (genie cache-plan);\n"
    "                          without: every list if all fit, else none\n"
    "  -j, --threads N         CPU threads (default: all cores)\n"
    CLI_FILTER_HELP
    "                          (docs: ids are record numbers; scores keep the\n"
    "                          whole collection's statistics)\n"
    "      --json              one JSON object per query instead of TSV,\n"
    "                          with the BM25 and PageRank parts\n"
    "      --show              print each hit's stored document\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

typedef struct docs_cli {
    genie_docs_options opt;
    const char *zPlan;
    int json, show, quiet;
} docs_cli;

static int parse_docs_search(int argc, char **argv, docs_cli *s)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},       {"or", no_argument, 0, 'O'},
        {"exhaustive", no_argument, 0, 'E'},    {"threads", required_argument, 0, 'j'},
        {"json", no_argument, 0, 'J'},          {"show", no_argument, 0, 's'},
        {"quiet", no_argument, 0, 'q'},         {"help", no_argument, 0, 'h'},
        {"backend", required_argument, 0, 'b'}, {"gpu-memory", required_argument, 0, 'G'},
        {"cache-fraction", required_argument, 0, 'F'}, {"cache-plan", required_argument, 0, 'P'},
        CLI_FILTER_LONG_OPTIONS,                {0, 0, 0, 0}};
    int c, st;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:j:b:qh", aOpt, NULL)) != -1) {
        if (cli_filter_option("search", c, optarg, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'b':
            if (genie_backend_parse(optarg, &s->opt.backend) != GENIE_OK ||
                (s->opt.backend != GENIE_BACKEND_CPU && s->opt.backend != GENIE_BACKEND_CUDA))
                return cli_usage_error("search", "--backend of a docs index is cpu or cuda, not '%s'", optarg);
            break;
        case 'G':
            if (!cli_parse_bytes(optarg, &s->opt.gpu_memory) || s->opt.gpu_memory == 0)
                return cli_usage_error("search", "--gpu-memory must be a byte count > 0, not '%s'", optarg);
            break;
        case 'F':
            if (!parse_double(optarg, 1e-9, 1 - 1e-9, &s->opt.cache_fraction))
                return cli_usage_error("search", "--cache-fraction must be a number in (0, 1), not '%s'", optarg);
            break;
        case 'P': s->zPlan = optarg; break;
        case 'k':
            if (!cli_parse_u64(optarg, 1, 1000000, &v))
                return cli_usage_error("search", "-k must be an integer 1..1000000, not '%s'", optarg);
            s->opt.k = (uint32_t)v;
            break;
        case 'j':
            if (!cli_parse_u64(optarg, 1, 4096, &v))
                return cli_usage_error("search", "--threads must be 1..4096, not '%s'", optarg);
            s->opt.threads = (unsigned)v;
            break;
        case 'O': s->opt.mode = GENIE_DOCS_OR; break;
        case 'E': s->opt.exhaustive = 1; break;
        case 'J': s->json = 1; break;
        case 's': s->show = 1; break;
        case 'q': s->quiet = 1; break;
        case 'h': fputs(zSearchHelp, stdout); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    return CLI_EXIT_OK;
}

static int print_docs_results(const docs_cli *s, const genie_index *idx, const genie_docs_results *r, uint64_t first)
{
    json_buf b;
    json_buf_init(&b);
    int status = 0;
    for (size_t q = 0; q < genie_docs_results_queries(r) && status == 0; q++) {
        size_t n;
        const genie_docs_hit *aHit = genie_docs_results_get(r, q, &n);
        if (s->json) {
            json_out_docs_hits(&b, idx, first + q, aHit, n, s->show);
            status = json_buf_print_line(&b);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const genie_docs_hit *h = &aHit[i];
            const char *z;
            size_t len;
            printf("%llu\t%zu\t%u\t%.9f", (unsigned long long)(first + q), i + 1, h->record, h->score);
            if (s->show && genie_index_record(idx, h->doc, &z, &len) == GENIE_OK) {
                putchar('\t');
                cli_put_escaped(z, len);
            }
            putchar('\n');
        }
    }
    json_buf_free(&b);
    return status;
}

/* --filter-ids of a docs index names record numbers, as printed: their docIDs (cli_filter_id_fn). */
typedef struct doc_ids {
    const genie_docs *d;
    uint32_t *aDoc; /* record -> docID, made on first use */
    uint64_t n;
} doc_ids;

static int doc_of_record(void *ctx, uint64_t record, uint64_t *pDoc)
{
    doc_ids *x = ctx;
    if (!x->aDoc) {
        if (!(x->aDoc = malloc((x->n ? x->n : 1) * sizeof *x->aDoc)))
            return 0;
        for (uint64_t doc = 0; doc < x->n; doc++) {
            uint32_t rec = 0;
            genie_docs_document(x->d, (uint32_t)doc, &rec, NULL, NULL, NULL);
            x->aDoc[rec] = (uint32_t)doc;
        }
    }
    if (record >= x->n)
        return 0;
    *pDoc = x->aDoc[record];
    return 1;
}

int docs_cli_search(int argc, char **argv, const char *zIndex)
{
    docs_cli s;
    memset(&s, 0, sizeof s);
    s.opt.k = 10;
    int status = parse_docs_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    const char *zQueries = optind + 1 < argc ? argv[optind + 1] : "-";
    if (strcmp(argv[optind], zIndex) != 0)
        zQueries = argv[optind];
    genie_index *idx;
    genie_status rc = genie_index_open(zIndex, &idx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    genie_docs *d;
    if ((rc = genie_docs_open(idx, &d)) != GENIE_OK) {
        genie_index_close(idx);
        return cli_fail(rc);
    }
    genie_docs_plan *plan = NULL;
    if (s.zPlan && (rc = genie_docs_plan_read(d, s.zPlan, &plan)) != GENIE_OK) {
        genie_docs_close(d);
        genie_index_close(idx);
        return cli_fail(rc);
    }
    s.opt.plan = plan;
    genie_index_info info;
    genie_index_get_info(idx, &info);
    genie_filter *filter = NULL;
    doc_ids ids = {d, NULL, info.n_objects};
    status = cli_filter_make("search", idx, NULL, doc_of_record, &ids, &filter);
    free(ids.aDoc);
    if (status != CLI_EXIT_OK) {
        genie_docs_plan_free(plan);
        genie_docs_close(d);
        genie_index_close(idx);
        return status;
    }
    s.opt.filter = filter;
    if (s.show && !info.has_records) {
        genie_filter_free(filter);
        genie_docs_plan_free(plan);
        genie_docs_close(d);
        genie_index_close(idx);
        return cli_usage_error("search", "--show: %s stores no documents (built with --no-records)", zIndex);
    }
    cli_lines l;
    if (cli_lines_open(&l, zQueries) != 0) {
        genie_filter_free(filter);
        genie_docs_plan_free(plan);
        genie_docs_close(d);
        genie_index_close(idx);
        return CLI_EXIT_FAIL;
    }
    uint64_t nQuery = 0;
    genie_docs_stats total;
    memset(&total, 0, sizeof total);
    long n;
    while (status == CLI_EXIT_OK && (n = cli_lines_read(&l, DOCS_QUERIES_PER_CHUNK)) > 0) {
        genie_docs_results *r;
        rc = genie_docs_search(d, l.azLine, l.anLine, (size_t)n, &s.opt, &r);
        if (rc != GENIE_OK)
            break;
        if (print_docs_results(&s, idx, r, nQuery + 1) != 0)
            status = CLI_EXIT_FAIL;
        genie_docs_stats st;
        genie_docs_results_stats(r, &st);
        total.postings_read += st.postings_read;
        total.postings_total += st.postings_total;
        total.stopped_early += st.stopped_early;
        total.seconds += st.seconds;
        total.backend = st.backend;
        total.post_processed += st.post_processed;
        total.batches += st.batches;
        total.bytes_moved += st.bytes_moved;
        total.cache_bytes = st.cache_bytes;
        nQuery += (uint64_t)n;
        genie_docs_results_free(r);
    }
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    else if (n < 0)
        status = CLI_EXIT_FAIL;
    if (status == CLI_EXIT_OK && fflush(stdout) != 0) {
        fprintf(stderr, "genie: cannot write the results\n");
        status = CLI_EXIT_FAIL;
    }
    if (status == CLI_EXIT_OK && !s.quiet)
        fprintf(stderr, "genie: %llu queries in %.3f s; postings read %llu of %llu; %llu stopped early\n",
                (unsigned long long)nQuery, total.seconds, (unsigned long long)total.postings_read,
                (unsigned long long)total.postings_total, (unsigned long long)total.stopped_early);
    if (status == CLI_EXIT_OK && !s.quiet && total.backend == GENIE_BACKEND_CUDA)
        fprintf(stderr, "genie: cuda: cache %.1f MiB, %llu batches, %.1f MiB of lists sent, %llu queries "
                        "post-processed on the CPU\n",
                (double)total.cache_bytes / 1048576.0, (unsigned long long)total.batches,
                (double)total.bytes_moved / 1048576.0, (unsigned long long)total.post_processed);
    genie_filter_free(filter);
    genie_docs_plan_free(plan);
    cli_lines_close(&l);
    genie_docs_close(d);
    genie_index_close(idx);
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
    uint64_t k = 10;
    int quiet = 0, c;
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
            if (!cli_parse_u64(optarg, 1, 1000000, &k))
                return cli_usage_error("cache-plan", "-k must be an integer 1..1000000, not '%s'", optarg);
            break;
        case 'q': quiet = 1; break;
        case 'h': fputs(zPlanHelp, stdout); return CLI_EXIT_OK;
        default: return cli_usage_error("cache-plan", "bad option");
        }
    }
    if (!zOut)
        return cli_usage_error("cache-plan", "no output file (-o PLAN)");
    if (argc - optind != 2)
        return cli_usage_error("cache-plan", "expected INDEX and TRAIN");
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
        rc = genie_docs_plan_build(d, l.azLine, l.anLine, l.nLine, (uint32_t)k, policy, lambda, &p);
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
