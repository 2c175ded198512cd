/* genie search's loop (see cli_search.h). */
#include "cli_search.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query_source.h"

/* Queries per search: bounded memory for a query file of any length (a vector file is read whole). */
#define CLI_QUERIES_PER_CHUNK 8192

void cli_search_init(cli_search *s, const itype *t)
{
    memset(s, 0, sizeof *s);
    s->pType = t;
    itype_options_init(&s->o, t);
}

int cli_search_option(cli_search *s, int c, const char *zArg, int *pStatus)
{
    uint64_t v;
    *pStatus = CLI_EXIT_OK;
    switch (c) {
    case 'k': return cli_k_option("search", s->pType, c, zArg, &s->o.k, pStatus);
    case 'K':
    case 'R':
        if (!itype_option_find(s->pType, c == 'K' ? "candidates" : "recall"))
            return 0;
        return cli_candidate_option("search", s->pType, c, zArg, &s->o.k, &s->o.candidates, &s->o.recall, pStatus);
    case 'E':
        if (!itype_option_find(s->pType, "exact"))
            return 0;
        s->o.exact = 1;
        return 1;
    case CLI_OPT_FILTER_IDS:
    case CLI_OPT_FILTER_LABELS:
    case CLI_OPT_WHERE: return cli_filter_option("search", c, zArg, pStatus);
    case 'J': s->json = 1; return 1;
    case 's': s->o.show = 1; return 1;
    case 'v': s->verbose = 1; return 1;
    case 'q': s->quiet = 1; return 1;
    case 'm':
    case CLI_OPT_MIN_COUNT:
        if (!itype_option_find(s->pType, "min_count"))
            return 0;
        if (c == 'm')
            cli_deprecated("genie search", c, "--min-count");
        if (!cli_parse_u64(zArg, 0, UINT32_MAX, &v))
            *pStatus = cli_usage_error("search", "--min-count must be 0..4294967295, not '%s'", zArg);
        else
            s->o.minCount = (uint32_t)v;
        return 1;
    default: return 0;
    }
}

const char *cli_search_queries(int argc, char **argv, const char *zIndex, const char *zDefault)
{
    if (strcmp(argv[optind], zIndex) != 0)
        return argv[optind];
    return optind + 1 < argc ? argv[optind + 1] : zDefault;
}

int cli_search_open(cli_search *s, const char *zIndex)
{
    genie_index *idx;
    genie_status rc = genie_index_open(zIndex, &idx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    if ((rc = itype_attach(&s->ix, idx)) != GENIE_OK) {
        genie_index_close(idx);
        return cli_fail(rc);
    }
    /* The command parsed the options of its type (keywords and text share theirs). */
    if (s->ix.pType->xCliSearch != s->pType->xCliSearch) {
        fprintf(stderr, "genie: %s is a %s index, not a %s index\n", zIndex, s->ix.pType->zName, s->pType->zName);
        cli_search_close(s);
        return CLI_EXIT_FAIL;
    }
    s->pType = s->ix.pType;
    char zWhy[160];
    if (s->o.show && itype_show_refusal(&s->ix, zWhy, sizeof zWhy)) {
        cli_search_close(s);
        return cli_usage_error("search", "--show: %s %s", zIndex, zWhy);
    }
    return CLI_EXIT_OK;
}

/* -v: what ran, after every answer (and the type's summary). */
static void print_verbose(const cli_search *s)
{
    const genie_search_stats *st = &s->st;
    char zParts[32] = "";
    if (st->n_parts > 1)
        snprintf(zParts, sizeof zParts, ", %u parts", st->n_parts);
    fprintf(stderr, "genie search: %s index, %llu queries, %llu answers, %.3f s searching on %s%s\n",
            s->pType->zName, (unsigned long long)s->nQuery, (unsigned long long)s->nAnswer, s->tSearch,
            s->nQuery ? genie_backend_name(st->backend) : "no backend (no queries)", zParts);
}

int cli_search_main(cli_search *s, int argc, char **argv, const char *zIndex, const char *zDefault)
{
    if (!zIndex)
        zIndex = argv[optind];
    const char *zQueries = cli_search_queries(argc, argv, zIndex, zDefault);
    int st = cli_search_open(s, zIndex);
    if (st != CLI_EXIT_OK)
        return st;
    genie_filter *filter = NULL;
    st = cli_filter_make("search", &s->ix, &filter);
    s->o.filter = filter;
    if (st == CLI_EXIT_OK && s->xOpened)
        st = s->xOpened(s, zIndex, zQueries);
    if (st == CLI_EXIT_OK)
        st = cli_search_run(s, zQueries ? zQueries : "-");
    if (st == CLI_EXIT_OK && s->xSummary && !s->quiet)
        s->xSummary(s);
    if (st == CLI_EXIT_OK && s->verbose)
        print_verbose(s);
    cli_search_close(s);
    s->o.filter = NULL;
    genie_filter_free(filter);
    return st;
}

void cli_search_close(cli_search *s)
{
    genie_index *idx = s->ix.idx;
    itype_detach(&s->ix);
    genie_index_close(idx);
}

/* Print the chunk's answers, numbered from s->nQuery + 1.  @return 0, or -1 (printed). */
static int print_chunk(cli_search *s, const itype_results *r, json_buf *b)
{
    const itype *t = s->pType;
    itype_printer p = {{s->ix.idx, NULL, NULL}, s->o.show, &s->o};
    for (size_t q = 0; q < r->nQuery; q++) {
        itype_answer a;
        itype_results_answer(t, r, q, &a);
        uint64_t queryNo = s->nQuery + 1 + q;
        if (s->json) {
            t->xJson(b, &p, queryNo, &a);
            if (json_buf_print_line(b) != 0)
                return -1;
        } else {
            t->xTsv(&p, queryNo, &a);
        }
        s->nAnswer += a.n;
        if (s->xQuery)
            s->xQuery(s, queryNo, &a);
    }
    return 0;
}

/*
 * Backend auto in a build with CUDA found no usable GPU: say so, once per
 * process (a search of several chunks, or eval's, says it once), and how to
 * silence it (cli.h, CLI_NO_GPU_NOTICE_ENV).
 */
static void maybe_gpu_notice(const cli_search *s)
{
    static int said;
    const char *zEnv = getenv(CLI_NO_GPU_NOTICE_ENV);
    if (said || s->quiet || s->eng.backend != GENIE_BACKEND_AUTO || (zEnv && *zEnv) || !genie_cuda_built() ||
        genie_cuda_available())
        return;
    said = 1;
    fprintf(stderr, "genie: no usable GPU; using the cpu backend (-b cpu, -q or %s=1 silence this notice)\n",
            CLI_NO_GPU_NOTICE_ENV);
}

int cli_search_run(cli_search *s, const char *zQueries)
{
    const itype *t = s->pType;
    size_t chunk = s->ix.query == ITYPE_QUERY_VECTOR ? SIZE_MAX : CLI_QUERIES_PER_CHUNK;
    query_source src;
    if (query_source_open(&src, &s->ix, zQueries, s->zDelim, s->o.minCount, chunk, 1) != 0) {
        genie_status rcOpen = src.rc;
        query_source_close(&src);
        return rcOpen != GENIE_OK ? cli_fail(rcOpen) : CLI_EXIT_FAIL;
    }
    json_buf b;
    json_buf_init(&b);
    int status = CLI_EXIT_OK;
    genie_status rc = GENIE_OK;
    itype_batch q;
    long n = 0;
    while (status == CLI_EXIT_OK && (n = query_source_next(&src, 0, &q)) > 0) {
        itype_results r;
        memset(&r, 0, sizeof r);
        double t0 = util_now();
        rc = t->xSearch(&s->ix, &s->o, &s->eng, &q, &r);
        s->tSearch += util_now() - t0;
        if (rc == GENIE_OK) {
            s->st = r.st;
            if (s->xSearched)
                s->xSearched(s, &r);
            maybe_gpu_notice(s);
            if (print_chunk(s, &r, &b) != 0)
                status = CLI_EXIT_FAIL;
            else if (s->xDone)
                rc = s->xDone(s, &r);
        }
        itype_results_free(t, &r);
        if (rc != GENIE_OK)
            break;
        s->nQuery += (uint64_t)n;
    }
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    else if (n < 0)
        status = src.rc != GENIE_OK ? cli_fail(src.rc) : CLI_EXIT_FAIL;
    if (status == CLI_EXIT_OK && fflush(stdout) != 0) {
        fprintf(stderr, "genie: cannot write the results\n");
        status = CLI_EXIT_FAIL;
    }
    query_source_close(&src);
    json_buf_free(&b);
    return status;
}
