/*
 * `genie eval`: the recall of an approximate search measured on the
 * user's own queries.  Vectors indexes go to vec_cli_eval
 * (tools/type_vectors.c); sets and sequences indexes are evaluated here:
 * the queries (one per line) are searched exactly (the front-end's exact
 * mode, the ground truth) and as asked (-K, --recall, --certify), and
 *
 *   k_recall_at_k   found answers scoring at least as well as the k-th
 *                   true answer (ties count: an answer as good as a true
 *                   one is as good), over min(k, true answers), averaged
 *                   over the queries that have any true answer; this is
 *                   the recall the --recall estimate predicts
 *   id_recall_at_k  |found ids n true top-k ids| / min(k, true answers)
 *
 * are printed with the search's time and queries per second (the exact
 * search and a first computation of the recall estimate are not timed;
 * with --repeat the fastest of the runs, which on a shared machine is the
 * one least disturbed).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "cli.h"

static const char zEvalHelp[] =
    "Usage: genie eval [options] INDEX QUERIES     (a sets or sequences index;\n"
    "                                              vectors: see below)\n"
    "\n"
    "Search QUERIES (one query per line, as genie search reads them) in the\n"
    "sets or sequences INDEX and compare with the exact answers (the exact\n"
    "mode: Jaccard / edit distance to every object).  Prints, one\n"
    "'name: value' per line: type, search, backend, queries, k, candidates\n"
    "(K of the search; of the last round with --certify), recall_target and\n"
    "recall_estimate (with --recall; sequences also recall_edit_rate, the\n"
    "edit rate of the modelled queries K was chosen for), and\n"
    "  k_recall_at_k   found answers at least as good as the k-th true one\n"
    "                  (ties count), over min(k, true answers), averaged\n"
    "  id_recall_at_k  the same counting ids of the true top-k only\n"
    "  certified       sequences: fraction of queries certified\n"
    "  seconds, qps    the search alone, queries per second\n"
    "\n"
    "  -k, --k N               answers (default: 10 sets, 1 sequences)\n"
    "  -K, --candidates N      candidates by match count (default: as genie\n"
    "                          search)\n"
    "      --recall R          choose K for an estimated recall@k >= R\n"
    "      --certify[=LIMIT]   sequences: as genie search --certify\n"
    "      --exact             evaluate the exact search itself\n"
    "      --limit N           use the first N queries only\n"
    "      --repeat N          run the search N times, report the fastest\n"
    "                          (default 1)\n"
    CLI_ENGINE_HELP
    "  -h, --help              show this help\n"
    "\n"
    "On a vectors index genie eval takes the vectors options (genie eval\n"
    "--help with a vectors INDEX argument shows them).\n";

typedef struct eval_opts {
    genie_index_type type;
    uint32_t k, K, limit, repeat;
    uint32_t maxCandidates;
    double recall;
    int exact;
    genie_search_options opt;
} eval_opts;

static int parse_eval(int argc, char **argv, eval_opts *o)
{
    static const struct option aOpt[] = {
        {"k", required_argument, 0, 'k'},         {"candidates", required_argument, 0, 'K'},
        {"recall", required_argument, 0, 'R'},    {"certify", optional_argument, 0, 'C'},
        {"exact", no_argument, 0, 'E'},           {"limit", required_argument, 0, 'l'},
        {"repeat", required_argument, 0, 'r'},
        {"help", no_argument, 0, 'h'},            CLI_ENGINE_LONG_OPTIONS,
        {0, 0, 0, 0}};
    int c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:K:h" CLI_ENGINE_SHORT_OPTIONS, aOpt, NULL)) != -1) {
        int st;
        if (cli_engine_option("eval", c, optarg, &o->opt, &st) ||
            cli_candidate_option("eval", c, optarg, &o->k, &o->K, &o->recall, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'C':
            if (o->type != GENIE_TYPE_SEQUENCES)
                return cli_usage_error("eval", "--certify applies to a sequences index");
            o->maxCandidates = 4096;
            if (optarg && !cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("eval", "--certify limit must be 1..4294967295, not '%s'", optarg);
            if (optarg)
                o->maxCandidates = (uint32_t)v;
            break;
        case 'E': o->exact = 1; break;
        case 'l':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("eval", "--limit must be 1..4294967295, not '%s'", optarg);
            o->limit = (uint32_t)v;
            break;
        case 'r':
            if (!cli_parse_u64(optarg, 1, 1000, &v))
                return cli_usage_error("eval", "--repeat must be 1..1000, not '%s'", optarg);
            o->repeat = (uint32_t)v;
            break;
        case 'h': fputs(zEvalHelp, stdout); return CLI_EXIT_OK;
        default: return CLI_EXIT_USAGE;
        }
    }
    if (optind + 2 != argc)
        return cli_usage_error("eval", "INDEX and QUERIES expected");
    if (o->recall && o->maxCandidates)
        return cli_usage_error("eval", "--recall is for the search without certificates: not with --certify");
    return cli_check_recall("eval", o->recall, o->k, o->exact, o->K != 0);
}

/* One query's answers as (object, score), larger score better. */
typedef struct scored {
    uint32_t object;
    double score;
} scored;

typedef struct eval_run {
    void *pRes; /* genie_set_results or genie_seq_results */
    genie_search_stats st;
    double seconds;
} eval_run;

static genie_status run_search(const eval_opts *o, const genie_index *idx, const cli_lines *l, size_t n, int exact,
                               eval_run *out)
{
    double t0 = util_now();
    genie_status rc;
    if (o->type == GENIE_TYPE_SETS) {
        genie_set_options so = {
            .k = o->k, .candidates = exact ? 0 : o->K, .exact = exact, .recall = exact ? 0 : o->recall};
        genie_set_results *r = NULL;
        rc = genie_set_search(idx, l->azLine, l->anLine, n, &so, &o->opt, &r);
        if (rc == GENIE_OK)
            genie_set_results_stats(r, &out->st);
        out->pRes = r;
    } else {
        genie_seq_options so = {o->k, exact ? 0 : o->K, exact ? 0 : o->maxCandidates, exact, 0,
                                exact ? 0 : o->recall};
        genie_seq_results *r = NULL;
        rc = genie_seq_search(idx, l->azLine, l->anLine, n, &so, &o->opt, &r);
        if (rc == GENIE_OK)
            genie_seq_results_stats(r, &out->st);
        out->pRes = r;
    }
    out->seconds = util_now() - t0;
    return rc;
}

static void free_run(const eval_opts *o, eval_run *r)
{
    if (o->type == GENIE_TYPE_SETS)
        genie_set_results_free(r->pRes);
    else
        genie_seq_results_free(r->pRes);
    r->pRes = NULL;
}

/* The hits of query @p q as scores into @p a (room for k); *pCert: certified (sequences). */
static size_t get_scored(const eval_opts *o, const eval_run *r, size_t q, scored *a, int *pCert)
{
    size_t n;
    *pCert = 1;
    if (o->type == GENIE_TYPE_SETS) {
        const genie_set_hit *h = genie_set_results_get(r->pRes, q, &n);
        for (size_t i = 0; i < n; i++)
            a[i] = (scored){h[i].object, (double)h[i].shared / h[i].union_size};
    } else {
        const genie_seq_hit *h = genie_seq_results_get(r->pRes, q, &n, pCert, NULL);
        for (size_t i = 0; i < n; i++)
            a[i] = (scored){h[i].object, -(double)h[i].distance};
    }
    return n;
}

int cmd_eval(int argc, char **argv)
{
    genie_index_type type;
    const char *zIndex = cli_find_index_arg(argc, argv, &type);
    if (!zIndex || (type != GENIE_TYPE_SETS && type != GENIE_TYPE_SEQUENCES))
        return vec_cli_eval(argc, argv);
    eval_opts o;
    memset(&o, 0, sizeof o);
    o.type = type;
    o.k = type == GENIE_TYPE_SETS ? 10 : 1;
    o.repeat = 1;
    int status = parse_eval(argc, argv, &o);
    if (status != CLI_EXIT_OK || optind + 2 != argc)
        return status;
    genie_index *idx = NULL;
    cli_lines l;
    eval_run truth = {0}, run = {0};
    scored *aT = NULL, *aF = NULL;
    genie_status rc = genie_index_open(argv[optind], &idx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    if (cli_lines_open(&l, argv[optind + 1]) != 0) {
        genie_index_close(idx);
        return CLI_EXIT_FAIL;
    }
    long nRead = cli_lines_read(&l, o.limit ? o.limit : (size_t)1 << 30);
    size_t n = nRead > 0 ? (size_t)nRead : 0;
    if (nRead < 0) {
        status = CLI_EXIT_FAIL;
        goto done;
    }
    aT = malloc(o.k * sizeof *aT);
    aF = malloc(o.k * sizeof *aF);
    if (!aT || !aF) {
        rc = GENIE_ENOMEM;
        fputs("genie eval: out of memory\n", stderr);
        goto done;
    }
    if ((rc = run_search(&o, idx, &l, n, 1, &truth)) != GENIE_OK)
        goto done;
    if (o.recall && (rc = genie_recall_prepare(idx, o.opt.threads)) != GENIE_OK)
        goto done;
    for (uint32_t i = 0; i < o.repeat; i++) {
        eval_run next = {0};
        if ((rc = run_search(&o, idx, &l, n, o.exact, &next)) != GENIE_OK) {
            free_run(&o, &next);
            goto done;
        }
        if (i == 0 || next.seconds < run.seconds) {
            free_run(&o, &run);
            run = next;
        } else {
            free_run(&o, &next);
        }
    }
    double sumK = 0, sumId = 0;
    uint64_t nUsed = 0, nCert = 0;
    for (size_t q = 0; q < n; q++) {
        int cert;
        size_t nT = get_scored(&o, &truth, q, aT, &cert);
        size_t nF = get_scored(&o, &run, q, aF, &cert);
        nCert += cert != 0;
        if (nT == 0)
            continue;
        double kth = aT[nT - 1].score; /* nT = min(k, true answers) */
        uint32_t good = 0, same = 0;
        for (size_t i = 0; i < nF; i++) {
            good += aF[i].score >= kth;
            for (size_t j = 0; j < nT; j++)
                same += aF[i].object == aT[j].object;
        }
        sumK += (double)(good < nT ? good : nT) / (double)nT;
        sumId += (double)same / (double)nT;
        nUsed++;
    }
    double d = nUsed ? (double)nUsed : 1;
    printf("type: %s\nsearch: %s\nbackend: %s\nqueries: %zu\nk: %u\ncandidates: %u\n",
           genie_index_type_name(type), run.st.candidates ? "candidates" : "exact",
           genie_backend_name(run.st.backend), n, o.k, run.st.candidates);
    if (o.recall)
        printf("recall_target: %g\nrecall_estimate: %.4f\n", o.recall, run.st.recall_estimate);
    if (o.recall && run.st.recall_edit_rate >= 0)
        printf("recall_edit_rate: %.3f\n", run.st.recall_edit_rate);
    printf("k_recall_at_k: %.4f\nid_recall_at_k: %.4f\n", nUsed ? sumK / d : 1.0, nUsed ? sumId / d : 1.0);
    if (type == GENIE_TYPE_SEQUENCES)
        printf("certified: %.4f\n", n ? (double)nCert / (double)n : 1.0);
    printf("seconds: %.4f\nqps: %.1f\n", run.seconds, run.seconds > 0 ? (double)n / run.seconds : 0.0);
done:
    free_run(&o, &truth);
    free_run(&o, &run);
    free(aT);
    free(aF);
    cli_lines_close(&l);
    genie_index_close(idx);
    if (rc != GENIE_OK && status == CLI_EXIT_OK)
        status = cli_fail(rc);
    return status;
}
