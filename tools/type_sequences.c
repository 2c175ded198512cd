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
#include "json_out.h"

#define SEQ_QUERIES_PER_CHUNK 8192
/* --certify's default limit on K: rounds up to 4096 candidates cost about
 * as much to match and verify as a scan of some 10^4 strings, so past it
 * the fallback scan is the better buy on collections of that size or more
 * (the library also stops the doubling at a quarter of the strings). */
#define SEQ_CERTIFY_LIMIT 4096u

/* ------------------------------------------------------------ build */

/* cli_feed_lines() callback: one input line is one object. */
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

int seq_cli_build(int argc, char **argv)
{
    static const struct option aOpt[] = {{"gram", required_argument, 0, 'n'}, CLI_RECALL_BUILD_OPTION,
                                         {0, 0, 0, 0}};
    uint32_t gram = 3;
    cli_build_args a;
    int status = cli_parse_build(argc, argv, "n:", aOpt, zBuildHelp, seq_build_option, &gram, &a);
    if (status != CLI_GO_ON)
        return status;
    if (optind >= argc)
        return cli_usage_error("build", "no input files");
    double t0 = util_now();
    genie_seq_builder *sb = NULL;
    genie_status rc = genie_seq_builder_new(&sb, &a.opt, gram);
    status = rc == GENIE_OK ? cli_feed_lines(argv + optind, argc - optind, add_string, sb) : CLI_EXIT_OK;
    if (rc == GENIE_OK && status == CLI_EXIT_OK && genie_seq_builder_count(sb) == 0) {
        fprintf(stderr, "genie: no strings to index (empty input)\n");
        status = CLI_EXIT_FAIL;
    }
    if (rc == GENIE_OK && status == CLI_EXIT_OK)
        rc = genie_seq_builder_write(sb, a.zOut);
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    else if (status == CLI_EXIT_OK && !a.quiet)
        fprintf(stderr, "genie: wrote %s: %llu strings, %u-grams, in %.2f s\n", a.zOut,
                (unsigned long long)genie_seq_builder_count(sb), gram, util_now() - t0);
    genie_seq_builder_free(sb);
    if (rc == GENIE_OK && status == CLI_EXIT_OK)
        status = cli_build_recall(&a);
    return status;
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
    "  -k, --k N               answers per query, 1..65536 (default 1)\n"
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
    "  -v, --verbose           per query on standard error: its last K and\n"
    "                          how it was answered (certificate, full scan,\n"
    "                          or not certified); with --recall, the K chosen,\n"
    "                          its estimated recall and the edit rate it\n"
    "                          assumed (measured on the queries)\n"
    "  -q, --quiet             no summary on standard error (it counts the\n"
    "                          queries the fallback scanned)\n"
    "  -h, --help              show this help\n"
    "\n"
    "Example:\n"
    "  echo algoritm | genie search -k 3 --certify words.genie\n";

typedef struct seq_cli {
    genie_seq_options so;
    genie_search_options opt;
    int json, show, quiet, verbose;
    uint64_t nQuery, nCertified, nVerified, nFallback;
    genie_backend backend;     /* of the candidate searches */
    genie_backend scanBackend; /* of the full scans (auto: none ran) */
    double tMatch, tVerify;
} seq_cli;

static int print_seq_results(const seq_cli *s, const genie_index *idx, const genie_seq_results *r, uint64_t first)
{
    json_buf b;
    json_buf_init(&b);
    int status = 0;
    for (size_t q = 0; q < genie_seq_results_queries(r) && status == 0; q++) {
        size_t n;
        int cert;
        uint32_t usedK;
        const genie_seq_hit *aHit = genie_seq_results_get(r, q, &n, &cert, &usedK);
        int scanned = genie_seq_results_scanned(r, q);
        if (s->verbose)
            fprintf(stderr, "genie: query %llu: K %u, %s\n", (unsigned long long)(first + q), usedK,
                    scanned ? "answered by the full scan" : cert ? "certified" : "not certified");
        if (s->json) {
            json_out_seq_hits(&b, idx, first + q, aHit, n, cert, scanned, usedK, s->show);
            status = json_buf_print_line(&b);
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            const char *z;
            size_t len;
            printf("%llu\t%zu\t%u\t%u\t%u\t%s", (unsigned long long)(first + q), i + 1, aHit[i].object,
                   aHit[i].distance, aHit[i].count, cert ? "yes" : "no");
            if (s->show && genie_index_record(idx, aHit[i].object, &z, &len) == GENIE_OK) {
                putchar('\t');
                cli_put_escaped(z, len);
            }
            putchar('\n');
        }
    }
    json_buf_free(&b);
    return status;
}

static int parse_seq_search(int argc, char **argv, seq_cli *s)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},      {"candidates", required_argument, 0, 'K'},
        {"certify", optional_argument, 0, 'C'}, {"exact", no_argument, 0, 'E'},
        {"certify-only", optional_argument, 0, 'O'}, {"verbose", no_argument, 0, 'v'},
        {"json", no_argument, 0, 'J'},         {"show", no_argument, 0, 's'},
        {"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
        {"recall", required_argument, 0, 'R'},
        CLI_ENGINE_LONG_OPTIONS,               CLI_FILTER_LONG_OPTIONS,
        {0, 0, 0, 0}};
    int c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:K:vqh" CLI_ENGINE_SHORT_OPTIONS, aOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("search", c, optarg, &s->opt, &st) || cli_filter_option("search", c, optarg, &st) ||
            cli_candidate_option("search", c, optarg, &s->so.k, &s->so.candidates, &s->so.recall, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'C':
        case 'O':
            s->so.max_candidates = SEQ_CERTIFY_LIMIT;
            s->so.certify_only = c == 'O';
            if (optarg && !cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("search", "--%s limit must be 1..4294967295, not '%s'",
                                       c == 'O' ? "certify-only" : "certify", optarg);
            if (optarg)
                s->so.max_candidates = (uint32_t)v;
            break;
        case 'v': s->verbose = 1; break;
        case 'E': s->so.exact = 1; break;
        case 'J': s->json = 1; break;
        case 's': s->show = 1; break;
        case 'q': s->quiet = 1; break;
        case 'h': fputs(zSearchHelp, stdout); exit(CLI_EXIT_OK);
        default: return cli_usage_error("search", "bad option");
        }
    }
    if (optind >= argc || argc - optind > 2)
        return cli_usage_error("search", "expected INDEX and at most one QUERIES file");
    if (s->so.recall && s->so.max_candidates)
        return cli_usage_error("search", "--recall is for the search without certificates: not with --certify");
    int stRecall = cli_check_recall("search", s->so.recall, s->so.k, s->so.exact, s->so.candidates != 0);
    if (stRecall != CLI_EXIT_OK)
        return stRecall;
    uint32_t K = s->so.candidates ? s->so.candidates : 32;
    if (K < s->so.k)
        K = s->so.k;
    if (s->so.max_candidates && s->so.max_candidates < K)
        return cli_usage_error("search", "--%s limit %u is below K = %u",
                               s->so.certify_only ? "certify-only" : "certify", s->so.max_candidates, K);
    return CLI_EXIT_OK;
}

int seq_cli_search(int argc, char **argv, const char *zIndex)
{
    seq_cli s;
    memset(&s, 0, sizeof s);
    s.so.k = 1;
    int status = parse_seq_search(argc, argv, &s);
    if (status != CLI_EXIT_OK)
        return status;
    const char *zQueries = optind + 1 < argc ? argv[optind + 1] : "-";
    if (strcmp(argv[optind], zIndex) != 0)
        zQueries = argv[optind];
    genie_index *idx;
    genie_filter *filter;
    if ((status = cli_open_filtered("search", zIndex, &idx, &filter)) != CLI_EXIT_OK)
        return status;
    genie_status rc = GENIE_OK;
    cli_lines l;
    if (cli_lines_open(&l, zQueries) != 0) {
        genie_filter_free(filter);
        genie_index_close(idx);
        return CLI_EXIT_FAIL;
    }
    s.opt.filter = filter;
    long n;
    while ((n = cli_lines_read(&l, SEQ_QUERIES_PER_CHUNK)) > 0) {
        genie_seq_results *r;
        rc = genie_seq_search(idx, l.azLine, l.anLine, (size_t)n, &s.so, &s.opt, &r);
        if (rc != GENIE_OK)
            break;
        if (print_seq_results(&s, idx, r, s.nQuery + 1) != 0) {
            genie_seq_results_free(r);
            status = CLI_EXIT_FAIL;
            break;
        }
        for (long q = 0; q < n; q++) {
            int cert;
            size_t nHit;
            genie_seq_results_get(r, (size_t)q, &nHit, &cert, NULL);
            s.nCertified += cert != 0;
        }
        genie_search_stats st;
        genie_seq_results_stats(r, &st);
        if (s.verbose && s.nQuery == 0)
            cli_print_recall_choice("search", s.so.recall, s.so.k, &st, 0);
        s.tMatch += st.match_seconds;
        s.tVerify += st.rerank_seconds;
        s.nVerified += st.verified;
        s.nFallback += st.fallback;
        s.backend = st.backend;
        if (st.scan_backend != GENIE_BACKEND_AUTO)
            s.scanBackend = st.scan_backend;
        s.nQuery += (uint64_t)n;
        genie_seq_results_free(r);
    }
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    else if (n < 0)
        status = CLI_EXIT_FAIL;
    if (status == CLI_EXIT_OK && fflush(stdout) != 0) {
        fprintf(stderr, "genie: cannot write the results\n");
        status = CLI_EXIT_FAIL;
    }
    if (status == CLI_EXIT_OK && !s.quiet) {
        char zScan[96] = "";
        if (s.so.max_candidates && !s.so.certify_only && !s.so.exact)
            snprintf(zScan, sizeof zScan, " (%llu by the fallback scan%s%s)", (unsigned long long)s.nFallback,
                     s.nFallback ? " on " : "", s.nFallback ? genie_backend_name(s.scanBackend) : "");
        fprintf(stderr,
                "genie: %llu queries, %llu certified%s; match %.3f s (%s), verify %.3f s (%s), %llu edit distances\n",
                (unsigned long long)s.nQuery, (unsigned long long)s.nCertified, zScan, s.tMatch,
                s.so.exact ? "none" : genie_backend_name(s.backend), s.tVerify,
                s.scanBackend != GENIE_BACKEND_AUTO ? genie_backend_name(s.scanBackend) : "cpu",
                (unsigned long long)s.nVerified);
    }
    cli_lines_close(&l);
    genie_filter_free(filter);
    genie_index_close(idx);
    return status;
}
