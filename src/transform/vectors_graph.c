/*
 * The k-NN graph of a vectors index: every object's k nearest other
 * objects (Johnson, Douze and Jegou, "Billion-scale similarity search with
 * GPUs", section 6.5: "all vectors queried against the entire index").
 *
 * A row is one search of the index with the object's own stored vector as
 * the query and k + 1 answers.  The search ranks objects by (distance,
 * id), the object itself among them, so leaving it out of the k + 1 leaves
 * the k nearest others in the same order, ties by smaller id.  Where the
 * object is not among the k + 1 the first k are the answer: all k + 1
 * rank before it, so they are the k nearest of the others.  That happens
 * with inner product (-x.y < -x.x for a longer y), with cosine (1 - x.x /
 * |x|^2 rounds above 0, and a neighbour may round to 0), with equal
 * vectors, which tie at their distance and rank by id, and with IVF-PQ's
 * estimates, which need not put a vector nearest itself.
 *
 * Two searches make rows:
 *   - exact (every index; an IVF index's with exact set): the index's own
 *     exact search (genie_vectors_search with exact: exact_search_in_index,
 *     the base resident on the GPU from the first block on), so a row is
 *     genie search --exact's answer for that vector on every backend, bit
 *     for bit;
 *   - approximate (an IVF index, exact not set): the index's IVF search
 *     with one nprobe (and IVF-PQ refinement depth) for the whole graph:
 *     given, the index's defaults, or chosen for a recall target as
 *     genie search -k K --recall R chooses them (the estimate's
 *     pseudo-queries are base vectors left out of their own answers, as
 *     the graph's rows are), so a row is genie search --nprobe P's answer
 *     for that vector with k + 1, the object left out.
 *
 * Memory: the objects are searched in blocks of at most GRAPH_BLOCK_ROWS,
 * fewer when k is large so that a block's k + 1 answers per object stay
 * within GRAPH_BLOCK_BYTES.  genie_vectors_knn_graph_write turns each
 * block into .ivecs rows and appends them to the temporary file of
 * util/file.h, so nothing proportional to the graph is ever held.
 */
#include <stdlib.h>
#include <string.h>

#include "genie/vectors.h"
#include "engine/backend.h"
#include "engine/ivf.h"
#include "index/index.h"
#include "index/live.h"
#include "transform/recall.h"
#include "transform/vectors_ivf.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/file.h"
#include "util/options.h"

#define GRAPH_BLOCK_ROWS 8192u
#define GRAPH_BLOCK_BYTES (16ull << 20) /* a block's answers: rows * (k + 1) neighbours */
#define GRAPH_NO_ID UINT32_MAX          /* an .ivecs entry past a row's neighbours (-1) */

/* One graph computation: the index, its vectors, the search of a block and its answers. */
typedef struct graph_run {
    const genie_index *idx;
    genie_vectors base;        /* the index's vectors (a view into it) */
    genie_vsearch_options so;  /* a block's search: k + 1 answers, exact or IVF at a fixed nprobe */
    const genie_search_options *pUser; /* progress and cancel, as the caller gave them */
    uint32_t k;                /* neighbours asked per object */
    uint64_t nBlock;           /* objects per block */
    genie_neighbor *aNb;       /* nBlock * (k + 1): a block's answers */
    uint32_t *aN;              /* nBlock */
    double recallEstimate;     /* a recall target's estimate for the chosen nprobe; else -1 */
    genie_search_stats st;     /* summed over the blocks */
} graph_run;

static void graph_free(graph_run *g)
{
    free(g->aNb);
    free(g->aN);
}

/* The largest k of the backend the exact search will run on (the search takes k + 1). */
static genie_status graph_max_k(const genie_vsearch_options *opt, uint32_t *pMax, const char **pzWhere)
{
    const engine_backend *be;
    GENIE_TRY(engine_backend_pick_cap(opt->search.backend, ENGINE_CAP(pExact), &be));
    *pMax = be ? be->pExact->nMaxK : GENIE_VECTORS_MAX_K;
    *pzWhere = be ? be->zName : "the CPU";
    return GENIE_OK;
}

/* k against the search's largest (the search takes k + 1) and the objects (each has n - 1 others). */
static genie_status graph_check_k(const graph_run *g, const genie_vsearch_options *opt)
{
    uint32_t kMax = IVF_MAX_K;
    const char *zWhere = "an IVF search";
    if (g->so.exact)
        GENIE_TRY(graph_max_k(opt, &kMax, &zWhere));
    if (opt->k == 0 || opt->k >= kMax)
        return util_error(GENIE_EINVAL,
                          "k-NN graph: k = %u outside 1..%u (each object's search takes k + 1 answers, the object "
                          "itself among them, and %s takes at most %u)",
                          opt->k, kMax - 1, zWhere, kMax);
    if (opt->k >= g->base.n)
        return util_error(GENIE_EINVAL, "k-NN graph: k = %u, but the index holds %llu objects: each has %llu others",
                          opt->k, (unsigned long long)g->base.n, (unsigned long long)g->base.n - 1);
    return GENIE_OK;
}

/*
 * The approximate graph's search: nprobe and the depth for every block,
 * fixed here.  A recall target chooses them as the search of object 0's
 * vector for k with that target does (genie search -k K --recall R); the
 * depth then at least k + 1, what the graph's searches take.
 */
static genie_status graph_ivf_plan(graph_run *g, const genie_vsearch_options *opt)
{
    if (opt->candidates && opt->candidates <= opt->k)
        return util_error(GENIE_EINVAL,
                          "k-NN graph: a refinement depth of %u candidates: each object's search takes k + 1 = %u "
                          "answers, the object itself among them, so the depth must be at least %u",
                          opt->candidates, opt->k + 1, opt->k + 1);
    if (!(opt->recall > 0))
        return GENIE_OK;
    genie_vsearch_options one = *opt;
    one.size = sizeof one;
    one.search.size = sizeof one.search;
    one.search.progress = NULL;
    genie_vectors q = {1, g->base.dim, g->base.data};
    genie_neighbor aNb[RECALL_KMAX];
    uint32_t n;
    genie_search_stats st;
    if (opt->k > RECALL_KMAX)
        return util_error(GENIE_EINVAL, "k-NN graph: a recall target needs k <= %u, not %u", RECALL_KMAX,
                          opt->k);
    GENIE_TRY(genie_vectors_search(g->idx, &q, &one, aNb, &n, &st));
    g->so.recall = 0;
    g->so.nprobe = st.nprobe;
    g->so.candidates = st.candidates && st.candidates <= opt->k ? opt->k + 1 : st.candidates;
    g->recallEstimate = st.recall_estimate;
    return GENIE_OK;
}

/* Check @p opt against @p idx, choose the search and make the block buffers. */
static genie_status graph_open(graph_run *g, const genie_index *idx, const genie_vsearch_options *opt)
{
    memset(g, 0, sizeof *g);
    g->recallEstimate = -1;
    if (!idx || !opt)
        return util_error(GENIE_EINVAL, "k-NN graph: NULL index or options");
    GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_vsearch_options, nprobe));
    GENIE_TRY(UTIL_OPTIONS_CHECK(&opt->search, genie_search_options, cancel));
    if (live_active(idx))
        return util_error(GENIE_EINVAL, "k-NN graph: the index has writes in its log (%llu added, %llu deleted "
                                        "objects) that the graph would not see: compact it first (genie compact)",
                          (unsigned long long)idx->pLive->nAdded, (unsigned long long)idx->pLive->nDeleted);
    GENIE_TRY(genie_vectors_index_base(idx, &g->base));
    if (g->base.n < 2)
        return util_error(GENIE_EINVAL, "k-NN graph: the index holds %llu object; a graph needs at least 2",
                          (unsigned long long)g->base.n);
    int ivf = !opt->exact && vivf_is_ivf(idx);
    if (opt->radius)
        return util_error(GENIE_EINVAL, "k-NN graph: radius %u: the graph is exact or an IVF index's; neither "
                                        "searches buckets",
                          opt->radius);
    if (!ivf && (opt->candidates || opt->recall > 0 || opt->nprobe))
        return util_error(GENIE_EINVAL, "k-NN graph: %s belongs to the approximate graph of an IVF index; %s",
                          opt->nprobe ? "nprobe" : opt->recall > 0 ? "a recall target" : "a candidate count",
                          opt->exact ? "this graph is exact" : "an LSH index's graph is exact (build with --ivf)");
    if (ivf && opt->precision != GENIE_PRECISION_FP32)
        return util_error(GENIE_EINVAL, "k-NN graph: precision %s is the exact search's; an IVF index's graph "
                                        "searches its lists unless exact is set",
                          genie_precision_name(opt->precision));
    g->idx = idx;
    g->pUser = &opt->search;
    g->k = opt->k;
    g->so = *opt;
    g->so.size = sizeof g->so;
    g->so.search.size = sizeof g->so.search;
    g->so.exact = !ivf;
    GENIE_TRY(graph_check_k(g, opt));
    if (ivf)
        GENIE_TRY(graph_ivf_plan(g, opt));
    g->so.k = g->so.search.k = opt->k + 1;
    g->so.search.progress = NULL; /* the graph reports per block */
    uint64_t perRow = ((uint64_t)opt->k + 1) * sizeof(genie_neighbor);
    g->nBlock = GRAPH_BLOCK_BYTES / perRow;
    if (g->nBlock > GRAPH_BLOCK_ROWS)
        g->nBlock = GRAPH_BLOCK_ROWS;
    if (g->nBlock == 0)
        g->nBlock = 1;
    if (g->nBlock > g->base.n)
        g->nBlock = g->base.n;
    g->aNb = malloc(g->nBlock * perRow);
    g->aN = malloc(g->nBlock * sizeof *g->aN);
    if (!g->aNb || !g->aN) {
        graph_free(g);
        return util_error(GENIE_ENOMEM, "k-NN graph: out of memory for a block of %llu objects (k = %u)",
                          (unsigned long long)g->nBlock, opt->k);
    }
    g->st.backend = opt->search.backend;
    return GENIE_OK;
}

static void stats_add(genie_search_stats *sum, const genie_search_stats *one)
{
    sum->backend = one->backend;
    sum->prepare_seconds += one->prepare_seconds;
    sum->match_seconds += one->match_seconds;
    sum->rerank_seconds += one->rerank_seconds;
    sum->verified += one->verified;
    sum->fallback += one->fallback;
    sum->rounds++;
    sum->nprobe = one->nprobe;
    sum->candidates = one->candidates;
}

/*
 * Search the objects [first, first + n) (n <= nBlock) and put their rows,
 * the object itself left out, at @p out (stride g->k) and their counts at
 * @p aN.
 */
static genie_status graph_block(graph_run *g, uint64_t first, uint64_t n, genie_neighbor *out, uint32_t *aN)
{
    if (g->pUser->cancel && __atomic_load_n(g->pUser->cancel, __ATOMIC_RELAXED))
        return util_error(GENIE_ECANCELED, "k-NN graph: canceled after %llu objects", (unsigned long long)first);
    genie_vectors q = {n, g->base.dim, g->base.data + first * g->base.dim};
    genie_search_stats st;
    GENIE_TRY(genie_vectors_search(g->idx, &q, &g->so, g->aNb, g->aN, &st));
    stats_add(&g->st, &st);
    uint32_t kq = g->k + 1;
    for (uint64_t i = 0; i < n; i++) {
        const genie_neighbor *pIn = g->aNb + i * kq;
        genie_neighbor *pOut = out + i * g->k;
        uint32_t self = (uint32_t)(first + i), m = 0;
        for (uint32_t j = 0; j < g->aN[i] && m < g->k; j++)
            if (pIn[j].id != self)
                pOut[m++] = pIn[j];
        aN[i] = m;
    }
    return GENIE_OK;
}

static void graph_progress(const graph_run *g, uint64_t done, uint64_t total)
{
    if (g->pUser->progress)
        g->pUser->progress(g->pUser->progress_ctx, done, total);
}

static void graph_stats(const graph_run *g, double tStart, genie_search_stats *stats)
{
    if (!stats)
        return;
    *stats = g->st;
    stats->total_seconds = util_now() - tStart;
    stats->recall_estimate = g->recallEstimate;
    stats->recall_edit_rate = -1;
}

genie_status genie_vectors_knn_graph(const genie_index *idx, const genie_vsearch_options *opt, uint64_t first,
                                     uint64_t n, genie_neighbor *out, uint32_t *aN, genie_search_stats *stats)
{
    util_error_clear();
    double tStart = util_now();
    graph_run g;
    GENIE_TRY(graph_open(&g, idx, opt));
    genie_status rc = GENIE_OK;
    if (first > g.base.n || n > g.base.n - first) {
        rc = util_error(GENIE_EINVAL, "k-NN graph: %llu objects from object %llu: the index holds %llu",
                        (unsigned long long)n, (unsigned long long)first, (unsigned long long)g.base.n);
        goto done;
    }
    for (uint64_t b0 = 0; b0 < n && rc == GENIE_OK; b0 += g.nBlock) {
        uint64_t nb = n - b0 < g.nBlock ? n - b0 : g.nBlock;
        rc = graph_block(&g, first + b0, nb, out + b0 * g.k, aN + b0);
        if (rc == GENIE_OK)
            graph_progress(&g, b0 + nb, n);
    }
    graph_stats(&g, tStart, stats);
done:
    graph_free(&g);
    return rc;
}

/* A block's rows as .ivecs: per row its width k, then its ids (GRAPH_NO_ID past a short IVF row). */
static void ivecs_rows(const graph_run *g, uint64_t n, const genie_neighbor *aRow, const uint32_t *aN,
                       uint32_t *aOut)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t *p = aOut + i * (1 + (uint64_t)g->k);
        p[0] = g->k;
        for (uint32_t j = 0; j < g->k; j++)
            p[1 + j] = j < aN[i] ? aRow[i * g->k + j].id : GRAPH_NO_ID;
    }
}

genie_status genie_vectors_knn_graph_write(const genie_index *idx, const genie_vsearch_options *opt,
                                           const char *path, genie_search_stats *stats)
{
    util_error_clear();
    double tStart = util_now();
    if (!path)
        return util_error(GENIE_EINVAL, "k-NN graph: NULL path");
    /* The output first: a recall target's estimate in graph_open may take a while. */
    GENIE_TRY(util_check_output(path));
    if (idx && idx->zPath)
        GENIE_TRY(util_check_not_input(path, idx->zPath));
    graph_run g;
    GENIE_TRY(graph_open(&g, idx, opt));
    genie_status rc = GENIE_OK;
    genie_neighbor *aRow = NULL;
    uint32_t *aRowN = NULL, *aOut = NULL;
    util_atomic_file af;
    int isOpen = 0;
    aRow = malloc(g.nBlock * g.k * sizeof *aRow);
    aRowN = malloc(g.nBlock * sizeof *aRowN);
    aOut = malloc(g.nBlock * (1 + (uint64_t)g.k) * sizeof *aOut);
    if (!aRow || !aRowN || !aOut) {
        rc = util_error(GENIE_ENOMEM, "k-NN graph: out of memory for a block of %llu objects (k = %u)",
                        (unsigned long long)g.nBlock, g.k);
        goto done;
    }
    GENIE_TRY_GOTO(rc, util_atomic_open(&af, path), done);
    isOpen = 1;
    for (uint64_t b0 = 0; b0 < g.base.n; b0 += g.nBlock) {
        uint64_t nb = g.base.n - b0 < g.nBlock ? g.base.n - b0 : g.nBlock;
        GENIE_TRY_GOTO(rc, graph_block(&g, b0, nb, aRow, aRowN), done);
        ivecs_rows(&g, nb, aRow, aRowN, aOut);
        GENIE_TRY_GOTO(rc, util_atomic_write(&af, aOut, nb * (1 + (uint64_t)g.k) * sizeof *aOut), done);
        graph_progress(&g, b0 + nb, g.base.n);
    }
    isOpen = 0;
    rc = util_atomic_commit(&af);
    graph_stats(&g, tStart, stats);
done:
    if (isOpen)
        util_atomic_abort(&af);
    free(aRow);
    free(aRowN);
    free(aOut);
    graph_free(&g);
    return rc;
}
