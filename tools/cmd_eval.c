/*
 * `genie eval`: the recall of an approximate search measured on the
 * user's own queries.  The entry of the index's type evaluates (its
 * xCliEval): vectors indexes in tools/type_vectors_eval.c; the types whose
 * queries are lines and whose entries score their hits (sets, sequences)
 * here, in cli_eval_lines(): the queries (one per line) are searched
 * exactly (the type's exact mode, the ground truth) and as asked (-K,
 * --recall, --certify), and
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
 * with --repeat the median run's, as the vectors eval reports).
 *
 * cmd_eval() picks the entry: the index's type (or -t TYPE, which must
 * agree with it), refusing the types without an approximate search with
 * the list of those that have one.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_search.h"
#include "itype.h"

const char cli_zEvalLinesHelp[] =
    "Usage: genie eval [options] INDEX QUERIES     (a sets or sequences index)\n"
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
    "  -k, --k N               answers (default: as genie search: 10 sets,\n"
    "                          1 sequences)\n"
    "  -K, --candidates N      candidates by match count (default: as genie\n"
    "                          search)\n"
    "      --recall R          choose K for an estimated recall@k >= R\n"
    "      --certify[=LIMIT]   sequences: as genie search --certify\n"
    "      --exact             evaluate the exact search itself\n"
    "      --limit N           use the first N queries only\n"
    CLI_REPEAT_HELP
    CLI_ENGINE_HELP
    "  -h, --help              show this help\n"
    "\n"
    "A vectors index takes the options of genie eval -t vectors --help.\n";

const struct option cli_aEvalLinesOption[] = {
    {"k", required_argument, 0, 'k'},         {"candidates", required_argument, 0, 'K'},
    {"recall", required_argument, 0, 'R'},    {"certify", optional_argument, 0, 'C'},
    {"exact", no_argument, 0, 'E'},           {"limit", required_argument, 0, 'l'},
    {"repeat", required_argument, 0, 'r'},
    {"help", no_argument, 0, 'h'},            CLI_ENGINE_LONG_OPTIONS,
    {0, 0, 0, 0}};

typedef struct eval_opts {
    const itype *pType;
    uint32_t limit, repeat;
    itype_options o;           /* k, candidates, certify, recall, exact */
    genie_search_options opt;
} eval_opts;

static int parse_eval(int argc, char **argv, eval_opts *e)
{
    itype_options *o = &e->o;
    int c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, CLI_EVAL_LINES_SHORT, cli_aEvalLinesOption, NULL)) != -1) {
        int st;
        if (cli_engine_option("eval", c, optarg, &e->opt, &st) ||
            cli_candidate_option("eval", e->pType, c, optarg, &o->k, &o->candidates, &o->recall, &st)) {
            if (st != CLI_EXIT_OK)
                return st;
            continue;
        }
        switch (c) {
        case 'C': {
            const itype_option *pCertify = e->pType ? itype_option_find(e->pType, "certify") : NULL;
            if (!pCertify)
                return cli_usage_error("eval", "--certify applies to a sequences index");
            o->maxCandidates = (uint32_t)pCertify->lo;
            if (optarg && !cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("eval", "--certify limit must be 1..4294967295, not '%s'", optarg);
            if (optarg)
                o->maxCandidates = (uint32_t)v;
            break;
        }
        case 'E': o->exact = 1; break;
        case 'l':
            if (!cli_parse_u64(optarg, 1, UINT32_MAX, &v))
                return cli_usage_error("eval", "--limit must be 1..4294967295, not '%s'", optarg);
            e->limit = (uint32_t)v;
            break;
        case 'r':
            if (!cli_parse_u64(optarg, 1, 1000, &v))
                return cli_usage_error("eval", "--repeat must be 1..1000, not '%s'", optarg);
            e->repeat = (uint32_t)v;
            break;
        case 'h': cli_help(cli_zEvalLinesHelp); return CLI_EXIT_OK;
        default: return cli_usage_error("eval", "bad option");
        }
    }
    if (optind + 2 != argc)
        return cli_usage_error("eval", "INDEX and QUERIES expected");
    if (o->recall && o->maxCandidates)
        return cli_usage_error("eval", "--recall is for the search without certificates: not with --certify");
    return cli_check_recall("eval", o->recall, o->k, o->exact, o->candidates != 0);
}

/* One query's answers as (object, score), larger score better. */
typedef struct scored {
    uint32_t object;
    double score;
} scored;

typedef struct eval_run {
    itype_results r;
    double seconds;
} eval_run;

static genie_status run_search(const eval_opts *e, const itype_index *ix, const cli_lines *l, size_t n, int exact,
                               eval_run *out)
{
    itype_options o = e->o;
    if (exact) {
        o.candidates = o.maxCandidates = 0;
        o.recall = 0;
    }
    o.exact = exact;
    itype_batch q = {n, NULL, l->azLine, l->anLine, NULL, 0};
    double t0 = util_now();
    genie_status rc = e->pType->xSearch(ix, &o, &e->opt, &q, &out->r);
    out->seconds = util_now() - t0;
    return rc;
}

/* The hits of query @p q as scores into @p a (room for k); *pCert: certified (ITYPE_F_CERTIFIED). */
static size_t get_scored(const eval_opts *e, const eval_run *r, size_t q, scored *a, int *pCert)
{
    itype_answer ans;
    itype_results_answer(e->pType, &r->r, q, &ans);
    *pCert = ans.certified;
    for (size_t i = 0; i < ans.n; i++)
        a[i].score = e->pType->xScore(&ans, i, &a[i].object);
    return ans.n;
}

int cli_eval_lines(int argc, char **argv, const char *zIndex)
{
    genie_index_type type;
    eval_opts e;
    memset(&e, 0, sizeof e);
    /* Without zIndex (genie eval -t TYPE and no readable index) only --help or an error follows. */
    e.pType = zIndex && genie_index_file_type(zIndex, &type) == GENIE_OK ? itype_by_type(type) : NULL;
    if (zIndex && (!e.pType || !e.pType->xScore))
        return cli_usage_error("eval", "%s: not an index whose queries are lines", zIndex);
    itype_options_init(&e.o, e.pType);
    e.repeat = 1;
    int status = parse_eval(argc, argv, &e);
    if (status != CLI_EXIT_OK || optind + 2 != argc)
        return status;
    if (!e.pType) { /* opening INDEX says what is wrong with it */
        genie_index *idx;
        genie_status rc = genie_index_open(argv[optind], &idx);
        genie_index_close(idx);
        return cli_fail(rc != GENIE_OK ? rc : GENIE_EINVAL);
    }
    cli_search s;
    cli_search_init(&s, e.pType);
    cli_lines l;
    eval_run truth, run;
    memset(&truth, 0, sizeof truth);
    memset(&run, 0, sizeof run);
    scored *aT = NULL, *aF = NULL;
    double *aSecs = NULL;
    genie_status rc = GENIE_OK;
    if ((status = cli_search_open(&s, argv[optind])) != CLI_EXIT_OK)
        return status;
    const itype_index *ix = &s.ix;
    if (cli_lines_open(&l, argv[optind + 1]) != 0) {
        cli_search_close(&s);
        return CLI_EXIT_FAIL;
    }
    uint32_t k = e.o.k;
    long nRead = cli_lines_read(&l, e.limit ? e.limit : (size_t)1 << 30);
    size_t n = nRead > 0 ? (size_t)nRead : 0;
    if (nRead < 0) {
        status = CLI_EXIT_FAIL;
        goto done;
    }
    aT = malloc(k * sizeof *aT);
    aF = malloc(k * sizeof *aF);
    if (!aT || !aF) {
        rc = GENIE_ENOMEM;
        fputs("genie eval: out of memory\n", stderr);
        goto done;
    }
    if ((rc = run_search(&e, ix, &l, n, 1, &truth)) != GENIE_OK)
        goto done;
    if (e.o.recall && (rc = genie_recall_prepare(ix->idx, e.opt.threads)) != GENIE_OK)
        goto done;
    /* --repeat: the answers of the last run (every run gives the same), the time of the median one */
    if (!(aSecs = malloc(e.repeat * sizeof *aSecs))) {
        rc = GENIE_ENOMEM;
        goto done;
    }
    for (uint32_t i = 0; i < e.repeat; i++) {
        itype_results_free(e.pType, &run.r);
        if ((rc = run_search(&e, ix, &l, n, e.o.exact, &run)) != GENIE_OK)
            goto done;
        aSecs[i] = run.seconds;
    }
    run.seconds = aSecs[cli_median_index(aSecs, e.repeat)];
    double sumK = 0, sumId = 0;
    uint64_t nUsed = 0, nCert = 0;
    for (size_t q = 0; q < n; q++) {
        int cert;
        size_t nT = get_scored(&e, &truth, q, aT, &cert);
        size_t nF = get_scored(&e, &run, q, aF, &cert);
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
    const genie_search_stats *st = &run.r.st;
    double d = nUsed ? (double)nUsed : 1;
    printf("type: %s\nsearch: %s\nbackend: %s\nqueries: %zu\nk: %u\ncandidates: %u\n", e.pType->zName,
           st->candidates ? "candidates" : "exact", genie_backend_name(st->backend), n, k, st->candidates);
    if (e.o.recall)
        printf("recall_target: %g\nrecall_estimate: %.4f\n", e.o.recall, st->recall_estimate);
    if (e.o.recall && st->recall_edit_rate >= 0)
        printf("recall_edit_rate: %.3f\n", st->recall_edit_rate);
    printf("k_recall_at_k: %.4f\nid_recall_at_k: %.4f\n", nUsed ? sumK / d : 1.0, nUsed ? sumId / d : 1.0);
    if (e.pType->flags & ITYPE_F_CERTIFIED)
        printf("certified: %.4f\n", n ? (double)nCert / (double)n : 1.0);
    printf("seconds: %.4f\nqps: %.1f\n", run.seconds, run.seconds > 0 ? (double)n / run.seconds : 0.0);
done:
    itype_results_free(e.pType, &truth.r);
    itype_results_free(e.pType, &run.r);
    free(aT);
    free(aF);
    free(aSecs);
    cli_lines_close(&l);
    cli_search_close(&s);
    if (rc != GENIE_OK && status == CLI_EXIT_OK)
        status = cli_fail(rc);
    return status;
}

static int has_eval(const itype *t)
{
    return t->xCliEval != NULL;
}

int cmd_eval(int argc, char **argv)
{
    const itype *t;
    const char *zIndex;
    int st = cli_command_entry("eval", &argc, argv, has_eval, "no approximate search", &t, &zIndex);
    if (st != CLI_EXIT_OK)
        return st;
    if (t)
        return t->xCliEval(argc, argv, zIndex);
    if (cli_wants_help(argc, argv)) {
        cli_print_eval_overview();
        return CLI_EXIT_OK;
    }
    /* No readable index: the vectors eval parses the options and, opening INDEX, says what is wrong. */
    return itype_by_type(GENIE_TYPE_VECTORS)->xCliEval(argc, argv, NULL);
}
