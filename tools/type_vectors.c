/*
 * The vectors entry of the type table and genie search of a vectors index:
 * each query's k nearest neighbours by LSH + re-rank, from the lists of the
 * nprobe nearest centroids, or exact, the queries read through
 * genie_vectors_read() (fvecs, bvecs, ivecs, npy, IDX, GloVe JSON, any of
 * them gzip'd).  The entry's other commands and parts live apart: the
 * options search and eval share in type_vectors_cli.c, the build and
 * genie lsh-params in type_vectors_build.c, genie eval (recall@k, the
 * approximation ratio) in type_vectors_eval.c, genie knn-graph in
 * type_vectors_graph.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "cli.h"
#include "cli_search.h"
#include "json_out.h"
#include "type_vectors_cli.h"
#include "type_vectors_graph.h"

extern const itype itype_vectors;

static const char zSearchHelp[] =
    "Usage: genie search [options] INDEX QUERIES   (INDEX of type vectors)\n"
    "\n"
    "The k nearest base vectors of each vector in QUERIES: the query's LSH\n"
    "buckets, the top-K objects by match count (on the chosen backend), then\n"
    "re-ranked by the true distance; of an IVF index, the nearest among the\n"
    "lists of the nprobe centroids nearest the query (IVF-PQ: by the codes'\n"
    "estimate, refined by the true distance when asked); or, with --exact, an\n"
    "exact search.\n"
    "Output, one line per neighbour (queries and ranks count from 1):\n"
    "  query_no <TAB> rank <TAB> object <TAB> distance\n"
    "or, with --json, one JSON object per query:\n"
    "  {\"query\":N,\"hits\":[{\"rank\",\"object\",\"distance\"}]}\n"
    "Distances: l2 Euclidean, l1 sum of absolute differences, cosine\n"
    "1 - cos(angle), ip the negated inner product.\n"
    "\n"
    "  -k, --k N               neighbours per query (default 10; IVF: 1..1024)\n"
    "  -K, --candidates N      candidates re-ranked, >= k; an IVF-PQ index: the\n"
    "                          refinement depth, k..2048.  Default, with no -K,\n"
    "                          -r or --recall: K and the radius chosen for an\n"
    "                          estimated recall@k of 0.9 from INDEX.recall (which\n"
    "                          genie build writes) when k <= 100, else K = 10 k;\n"
    "                          -v says which\n"
    "  -r, --radius R          l2: also match R buckets either side (default 0)\n"
    "      --nprobe P          an IVF index: lists probed per query, 1..nlist\n"
    "                          (at most 2048; default: the build's choice for\n"
    "                          recall@10 0.9)\n"
    "      --exact             exact search (GPU: k <= 2048; CPU: k <= 65536);\n"
    "                          any cpu* backend runs it on the CPU, any cuda*\n"
    "                          on the GPU\n"
    VEC_PRECISION_HELP
    CLI_RECALL_HELP
    CLI_ENGINE_HELP
    CLI_FILTER_HELP
    "      --ivecs FILE        also write the neighbour ids as .ivecs\n"
    "      --json              one JSON object per query instead of TSV\n"
    "      --show              refused: a vectors index stores no records\n"
    CLI_RECALL_VERBOSE_HELP
    "  -q, --quiet             no timing line on standard error\n"
    "  -h, --help              show this help\n";

/* After the search (one chunk: the whole file): -v's recall choice, --ivecs. */
static genie_status vec_chunk_done(cli_search *s, const itype_results *r)
{
    vec_cli_opts *o = s->pCtx;
    o->st = r->st;
    if (s->verbose)
        cli_print_recall_choice("search", s->o.recall, s->o.k, &r->st, !r->st.nprobe);
    if (s->verbose && !(r->st.recall_target > 0) && !r->st.nprobe && !s->o.exact && !s->o.candidates &&
        !s->o.radius)
        fprintf(stderr, "genie search: K = %u (10 k), recall not estimated: the index has no recall estimate at hand "
                        "(INDEX.recall, which genie build writes unless --no-recall-estimate; none while its log "
                        "holds writes, nor another index's)%s\n",
                r->st.candidates, s->o.k > 100 ? " or k > 100" : "");
    if (!o->zIvecs)
        return GENIE_OK;
    /* Rows of k ids; a query with fewer neighbours is padded with -1. */
    uint32_t k = s->o.k;
    const genie_neighbor *aOut = r->aHit;
    uint32_t *aIds = malloc((r->nQuery ? r->nQuery : 1) * k * sizeof *aIds);
    if (!aIds)
        return GENIE_ENOMEM;
    for (size_t i = 0; i < r->nQuery; i++)
        for (uint32_t j = 0; j < k; j++)
            aIds[i * k + j] = j < r->aN[i] ? aOut[i * k + j].id : UINT32_MAX;
    genie_status rc = genie_vectors_write_ivecs(aIds, r->nQuery, k, o->zIvecs);
    free(aIds);
    return rc;
}

static void vec_summary(cli_search *s)
{
    const vec_cli_opts *o = s->pCtx;
    int lowP = o->o.precision != GENIE_PRECISION_FP32;
    char zIvf[64] = "";
    if (o->st.nprobe)
        snprintf(zIvf, sizeof zIvf, "ivf, nprobe %u%s, ", o->st.nprobe, o->st.candidates ? ", refined" : "");
    fprintf(stderr, "genie search: %llu queries in %.3f s (%s%s%s%s%s)\n", (unsigned long long)s->nQuery,
            o->st.total_seconds, o->o.exact ? "exact, " : "", zIvf,
            lowP ? genie_precision_name((genie_precision)o->o.precision) : "", lowP ? ", " : "",
            genie_backend_name(o->st.backend));
}

#define SEARCH_SHORT "k:K:r:vqh" CLI_ENGINE_SHORT_OPTIONS
static const struct option aSearchOpt[] = {
    VEC_OPTIONS, {"ivecs", required_argument, 0, OPT_IVECS}, {"json", no_argument, 0, 'J'},
    {"show", no_argument, 0, 's'}, {"verbose", no_argument, 0, 'v'}, {"quiet", no_argument, 0, 'q'},
    CLI_FILTER_LONG_OPTIONS, {0, 0, 0, 0}};

static const itype_cli vec_search_cli = {SEARCH_SHORT, aSearchOpt, zSearchHelp};

static int vec_cli_search(int argc, char **argv, const char *zIndex)
{
    vec_cli_opts o;
    int ex = parse_vec_opts("search", &vec_search_cli, argc, argv, &o);
    if (ex >= 0)
        return ex;
    cli_search s;
    cli_search_init(&s, &itype_vectors);
    s.o = o.o;
    s.o.show = o.show;
    s.eng = o.eng;
    s.json = o.json;
    s.quiet = o.quiet;
    s.verbose = o.verbose;
    s.pCtx = &o;
    s.xDone = vec_chunk_done;
    s.xSummary = vec_summary;
    return cli_search_main(&s, argc, argv, zIndex, NULL);
}

/* ------------------------------------------------------------- entry */

/* The dimension; an IVF index's parameters into pState (LSH: NULL), for xCheck, eval and xInfoJson. */
static genie_status vec_open(itype_index *ix)
{
    genie_vectors base;
    genie_status rc = genie_vectors_index_base(ix->idx, &base);
    ix->dim = base.dim;
    genie_ivf_info iv;
    if (rc == GENIE_OK && genie_vectors_index_ivf(ix->idx, &iv) == GENIE_OK) {
        if (!(ix->pState = malloc(sizeof iv)))
            return GENIE_ENOMEM;
        memcpy(ix->pState, &iv, sizeof iv);
    }
    return rc;
}

static void vec_close(itype_index *ix)
{
    free(ix->pState);
    ix->pState = NULL;
}

static genie_vsearch_options vsearch_options(const itype_options *o, const genie_search_options *eng)
{
    genie_vsearch_options vo;
    memset(&vo, 0, sizeof vo);
    vo.search = itype_engine(o, eng);
    vo.search.k = o->k;
    vo.k = o->k;
    vo.candidates = o->candidates;
    vo.radius = o->radius;
    vo.exact = o->exact;
    vo.recall = o->recall;
    vo.precision = (genie_precision)o->precision;
    vo.nprobe = o->nprobe;
    return vo;
}

/* The neighbours into plain arrays; st.total_seconds is the whole call's. */
static genie_status vec_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                               const itype_batch *q, itype_results *out)
{
    genie_status rc = itype_results_alloc(&itype_vectors, out, q->nQuery, o->k);
    if (rc != GENIE_OK)
        return rc;
    genie_vectors v = {q->nQuery, q->dim, (float *)(uintptr_t)q->aVec}; /* read only: the search takes it const */
    genie_vsearch_options vo = vsearch_options(o, eng);
    double t0 = util_now();
    rc = genie_vectors_search(ix->idx, &v, &vo, out->aHit, out->aN, &out->st);
    out->st.total_seconds = util_now() - t0;
    return rc;
}

static void vec_tsv(const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    (void)p;
    const genie_neighbor *aHit = a->aHit;
    for (size_t i = 0; i < a->n; i++)
        printf("%llu\t%zu\t%u\t%.6g\n", (unsigned long long)queryNo, i + 1, aHit[i].id, (double)aHit[i].distance);
}

static void vec_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a)
{
    (void)p;
    json_out_vec_hits(b, queryNo, a->aHit, a->n);
}

/*
 * K, when given, is at least k; nprobe takes no recall target and no exact
 * search; on an open index (@p ix), the options of its kind: nprobe an IVF
 * index's, the radius an LSH index's, K (the refinement depth) IVF-PQ's,
 * k up to an IVF search's largest.  (sp->zNprobe: every interface that
 * reaches the vectors entry spells nprobe.)
 */
static const char *vec_check(const itype_index *ix, const itype_options *o, const itype_spelling *sp, char *zErr,
                             size_t nErr)
{
    const genie_ivf_info *iv = ix ? ix->pState : NULL;
    const char *zNprobe = sp->zNprobe ? sp->zNprobe : "nprobe";
    uint32_t maxProbe = iv ? (iv->nlist < 2048 ? iv->nlist : 2048) : 0;
    if (o->candidates && o->candidates < o->k)
        snprintf(zErr, nErr, "%s %u is below %s %u", sp->zCandidates, o->candidates, sp->zK, o->k);
    else if (o->nprobe && o->recall > 0)
        snprintf(zErr, nErr, "%s %u: a recall target chooses nprobe itself; give one or the other", zNprobe,
                 o->nprobe);
    else if (o->nprobe && o->exact)
        snprintf(zErr, nErr, "%s %u: an exact search compares every vector; give one or the other", zNprobe,
                 o->nprobe);
    else if (ix && !iv && o->nprobe)
        snprintf(zErr, nErr, "%s %u: an LSH index has no lists (build with --ivf)", zNprobe, o->nprobe);
    else if (iv && o->radius)
        snprintf(zErr, nErr, "%s %u: an IVF index has no buckets (use %s)", sp->zRadius, o->radius, zNprobe);
    else if (iv && !o->exact && o->nprobe > maxProbe)
        snprintf(zErr, nErr, "%s %u: the index has %u lists (%s 1..%u)", zNprobe, o->nprobe, iv->nlist, zNprobe,
                 maxProbe);
    else if (iv && !o->exact && !iv->pq_m && o->candidates)
        snprintf(zErr, nErr, "%s %u: IVF-Flat's distances are exact already (the refinement depth is IVF-PQ's)",
                 sp->zCandidates, o->candidates);
    else if (iv && !o->exact && o->k > 1024)
        snprintf(zErr, nErr, "%s %u: an IVF search returns 1..1024 neighbours", sp->zK, o->k);
    else
        return NULL;
    return zErr;
}

/* genie info: an IVF index's parameters, or the LSH index's recall estimate. */
static int vec_info(const genie_index *idx, const char *zPath)
{
    genie_ivf_info iv;
    if (genie_vectors_index_ivf(idx, &iv) != GENIE_OK) {
        genie_lsh_params p;
        if (genie_vectors_index_params(idx, &p) == GENIE_OK)
            printf("default_recall: %g\n", p.recall);
        cli_print_recall_estimate(idx, zPath, 10, 100, 0);
        return CLI_EXIT_OK;
    }
    printf("ivf: %s %s, nlist %u, pq %u x %u bits%s, dim %u, trained on %llu vectors (%u iterations), "
           "longest list %llu, empty lists %llu\ndefault_recall: %g\ndefault_nprobe: %u\ndefault_refine: %u\n",
           iv.pq_m ? "ivf-pq" : "ivf-flat", genie_metric_name(iv.metric), iv.nlist, iv.pq_m, iv.pq_bits,
           iv.refine ? ", refined" : "", iv.dim, (unsigned long long)iv.train_size, iv.iterations,
           (unsigned long long)iv.longest_list, (unsigned long long)iv.empty_lists, iv.default_recall,
           iv.default_nprobe, iv.default_refine);
    return CLI_EXIT_OK;
}

/* genie serve: the dimension queries must have; an IVF index's kind and lists. */
static void vec_info_json(const itype_index *ix, json_buf *b)
{
    const genie_ivf_info *iv = ix->pState;
    json_buf_printf(b, ",\"dimension\":%u", ix->dim);
    if (iv)
        json_buf_printf(b, ",\"kind\":\"%s\",\"metric\":\"%s\",\"nlist\":%u,\"pq_m\":%u,\"pq_bits\":%u,"
                           "\"default_nprobe\":%u,\"default_refine\":%u,\"default_recall\":%g",
                        iv->pq_m ? "ivf-pq" : "ivf-flat", genie_metric_name(iv->metric), iv->nlist, iv->pq_m,
                        iv->pq_bits, iv->default_nprobe, iv->default_refine, iv->default_recall);
    else
        json_buf_printf(b, ",\"kind\":\"lsh\"");
}

static genie_status vec_search_parts(const itype_index *ix, uint32_t firstPart, uint32_t nParts, uint64_t base,
                                     const itype_options *o, const genie_search_options *eng, const itype_batch *q,
                                     itype_hits_fn xAdd, void *ctx)
{
    genie_vsearch_options vo = vsearch_options(o, eng);
    genie_vectors v = {q->nQuery, q->dim, (float *)(uintptr_t)q->aVec}; /* read only: the search takes it const */
    size_t nq = q->nQuery ? q->nQuery : 1, k = o->k ? o->k : 1;
    genie_neighbor *aNb = malloc(nq * k * sizeof *aNb);
    uint32_t *aN = malloc(nq * sizeof *aN);
    itype_hit *aOut = malloc(k * sizeof *aOut);
    genie_status rc = aNb && aN && aOut ? GENIE_OK : GENIE_ENOMEM;
    if (rc == GENIE_OK)
        rc = genie_vectors_search_parts(ix->idx, firstPart, nParts, &v, &vo, aNb, aN, NULL);
    for (size_t i = 0; rc == GENIE_OK && i < q->nQuery; i++) {
        const genie_neighbor *p = aNb + i * k;
        for (uint32_t j = 0; j < aN[i]; j++) {
            uint32_t bits;
            memcpy(&bits, &p[j].distance, 4);
            aOut[j] = (itype_hit){(uint32_t)(p[j].id + base), itype_float_key(p[j].distance), bits};
        }
        rc = xAdd(ctx, i, aOut, aN[i], 1, 0);
    }
    free(aNb);
    free(aN);
    free(aOut);
    return rc;
}

static void vec_from_hits(const itype_hit *aHit, size_t n, const itype_options *o, uint32_t word, void *aOut)
{
    (void)o, (void)word;
    genie_neighbor *a = aOut;
    for (size_t i = 0; i < n; i++) {
        a[i].id = aHit[i].object;
        memcpy(&a[i].distance, &aHit[i].value, 4);
    }
}

static const itype_option aVecOption[] = {
    ITYPE_OPTION("k", ITYPE_OPT_UINT, k, 1, GENIE_VECTORS_MAX_K),
    ITYPE_OPTION("candidates", ITYPE_OPT_UINT, candidates, 1, 65536),
    ITYPE_OPTION("exact", ITYPE_OPT_BOOL, exact, 0, 1),
    ITYPE_OPTION("radius", ITYPE_OPT_UINT, radius, 0, UINT32_MAX),
    {"recall", ITYPE_OPT_REAL, offsetof(itype_options, recall), 0, 1, 1, 0},
    ITYPE_OPTION("precision", ITYPE_OPT_PRECISION, precision, 0, 0),
    ITYPE_OPTION("nprobe", ITYPE_OPT_UINT, nprobe, 1, 65536),
    {NULL, 0, 0, 0, 0, 0, 0}};

/* Writes: vectors of the index's dimension. */
static const itype_writes vec_writes = {0, itype_add_vectors};

const itype itype_vectors = {
    .zName = "vectors",
    .zAbout = "dense vectors under l2, l1, cosine or ip: LSH candidates re-ranked, inverted files (IVF-Flat, "
              "IVF-PQ), or exact k-NN",
    .zNoRecords = "a vectors index stores its vectors, never records",
    .type = GENIE_TYPE_VECTORS,
    .maxK = GENIE_VECTORS_MAX_K,
    .defaultK = 10,
    .query = ITYPE_QUERY_VECTOR,
    .zJsonQuery = "an array of numbers",
    .aOption = aVecOption,
    .szHit = sizeof(genie_neighbor),
    .xCliBuild = vec_cli_build,
    .xCliSearch = vec_cli_search,
    .xCliEval = vec_cli_eval,
    .xCliInfo = vec_info,
    .cliBuild = {VEC_BUILD_SHORT, vec_aBuildOption, vec_zBuildHelp}, /* type_vectors_build.c */
    .cliSearch = {SEARCH_SHORT, aSearchOpt, zSearchHelp},
    .cliEval = VEC_EVAL_CLI, /* type_vectors_eval.c */
    .xCliKnnGraph = vec_cli_knn_graph,
    .cliKnnGraph = VEC_KNN_GRAPH_CLI,
    .xOpen = vec_open,
    .xClose = vec_close,
    .xCheck = vec_check,
    .xSearch = vec_search,
    .xTsv = vec_tsv,
    .xJson = vec_json,
    .xInfoJson = vec_info_json,
    .xSearchParts = vec_search_parts,
    .xFromHits = vec_from_hits,
    .pWrites = &vec_writes,
};
