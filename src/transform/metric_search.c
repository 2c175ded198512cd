/*
 * Searching the List of Clusters: Gil-Costa, Marin and Reyes, "Parallel
 * query processing on distributed clustering indexes" (J. Discrete
 * Algorithms 7, 2009), sections 2 and 3.  Queries run in parallel, one
 * query per thread at a time; each is exact.
 *
 * Range search (Fig. 4 and Fig. 5, with the table of 3.2).  Clusters in
 * construction order.  With the center-to-center distances (3.1), the
 * centers already compared with the query are pivots: lb = max |d(q,p) -
 * d(c,p)| and ub = min d(q,p) + d(c,p) bound d(q,c); when lb > rc + r the
 * cluster and its center cannot hold an answer and d(q,c) is not computed.
 * Otherwise d(q,c) is computed, the center reported when within r, and
 * when the query ball meets the cluster ball (d(q,c) <= rc + r) only the
 * members whose stored distance to the center lies in
 * [d(q,c) - r, d(q,c) + r] (two binary searches, 3.2) are compared.  The
 * search stops when d(q,c) + r < outer (or ub + r < outer): every later
 * object is at least outer from c (metric_build.c), hence farther than r
 * from q.  Pivots: the first LC_PIVOTS centers compared (the farthest-
 * first heuristic spreads them out); a bounded set keeps the bound cost per
 * cluster constant.
 *
 * k-NN search (Fig. 6, 3.3).  A max-heap A of the k best (distance, id)
 * so far; r is the k-th distance once A is full (else the bound given, or
 * infinity).  Phase 1 compares q with the centers in construction order
 * (skipping, once r is finite, those the pivots prove useless, and
 * stopping by the outer rule), feeding A.  Phase 2 visits the clusters in
 * increasing order of lb = max(d(q,c) - rc, 0) (ties by d(q,c), then
 * construction order) until lb > r; inside a cluster the members are
 * taken outward from d(q,c) along the sorted table, nearest bound first,
 * until |d(q,c) - d(o,c)| > r on both sides.  r shrinks as A improves.  A
 * cluster that contains the query ball (d(q,c) + r < outer) removes every
 * later cluster, the refinement the paper leaves out of Fig. 6.
 *
 * Ties.  Answers are ordered by (distance, id); pruning removes only
 * objects provably farther than r (never those at exactly r), so an object
 * tied with the k-th is still compared and the smaller id wins, as in a
 * brute-force scan.  Every pruning test carries lc_slack() (metric.h).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "engine/pairs.h"
#include "index/index.h"
#include "transform/edit_batch.h"
#include "transform/metric.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/finite.h"
#include "util/grow.h"
#include "util/options.h"
#include "util/threads.h"

#define LC_QUERY_CHUNK 4

/* Per-thread state of a search. */
typedef struct lc_scratch {
    lc_probe probe;
    genie_lc_hit *aHit; /* range hits, or the heap */
    size_t nHit, nHitCap;
    lc_cand *aCand;     /* m */
    uint32_t aPiv[LC_PIVOTS];
    double aPivD[LC_PIVOTS];
    unsigned nPiv;
    uint64_t nDist;
    const uint64_t *aAllow; /* the objects that may be answered (lc_query_ctx's) */
} lc_scratch;

typedef struct lc_query_ctx {
    const lc_layout *L;
    const lc_space *s;
    const genie_lc_options *opt;
    const uint64_t *aAllow; /* the objects that may be answered (engine/filter.h), or NULL */
    uint32_t first, end; /* clusters [first, end) */
} lc_query_ctx;

/* A range answer; an object the filter does not allow (a center still prunes) is left out. */
static genie_status add_hit(lc_scratch *w, uint32_t o, double d)
{
    if (!filter_allows(w->aAllow, o))
        return GENIE_OK;
    GENIE_TRY(util_grow(&w->aHit, &w->nHitCap, w->nHit, sizeof *w->aHit, 64, "range answers"));
    w->aHit[w->nHit++] = (genie_lc_hit){o, d};
    return GENIE_OK;
}

static genie_status dist(const lc_query_ctx *x, lc_scratch *w, uint32_t o, double max, double *pD)
{
    w->nDist++;
    return lc_distance(x->s, &w->probe, o, max, pD);
}

/* Bounds on delta(q, c_i) from the pivots (needs the center matrix). */
static void pivot_bounds(const lc_layout *L, const lc_scratch *w, uint32_t i, double *pLb, double *pUb)
{
    double lb = 0, ub = INFINITY;
    for (unsigned p = 0; p < w->nPiv; p++) {
        double dcp = lc_center_dist(L, i, w->aPiv[p]);
        double lo = fabs(w->aPivD[p] - dcp), hi = w->aPivD[p] + dcp;
        if (lo > lb)
            lb = lo;
        if (hi < ub)
            ub = hi;
    }
    *pLb = lb;
    *pUb = ub;
}

static void pivot_add(lc_scratch *w, uint32_t i, double delta)
{
    if (w->nPiv < LC_PIVOTS) {
        w->aPiv[w->nPiv] = i;
        w->aPivD[w->nPiv++] = delta;
    }
}

static genie_status range_query(const lc_query_ctx *x, lc_scratch *w)
{
    const lc_layout *L = x->L;
    const lc_space *s = x->s;
    double r = x->opt->radius, rd = lc_to_metric(s, r);
    int pivots = L->aCenterDist != NULL;
    for (uint32_t i = x->first; i < x->end; i++) {
        double rc = L->aRadius[i], ro = L->aOuter[i];
        if (pivots && w->nPiv) {
            double lb, ub;
            pivot_bounds(L, w, i, &lb, &ub);
            if (lb - lc_slack(s, lb, rc, rd) > rc + rd) {
                if (ub + rd + lc_slack(s, ub, ro, rd) < ro)
                    break;
                continue;
            }
        }
        uint32_t c = L->aCenter[i];
        double D;
        GENIE_TRY(dist(x, w, c, INFINITY, &D));
        double dc = lc_to_metric(s, D), tol = lc_slack(s, dc, rc, rd);
        if (D <= r)
            GENIE_TRY(add_hit(w, c, D));
        if (pivots)
            pivot_add(w, i, dc);
        if (dc - tol <= rc + rd) {
            /* 3.2: members with d(o,c) in [dc - rd, dc + rd], by binary search. */
            uint32_t lo = lc_cluster_begin(L, i), hi = L->aEnd[i];
            double from = dc - rd - tol, to = dc + rd + tol;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (L->aMemberDist[mid] < from)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (uint32_t j = lo; j < L->aEnd[i] && L->aMemberDist[j] <= to; j++) {
                GENIE_TRY(dist(x, w, L->aMember[j], r, &D));
                if (D <= r)
                    GENIE_TRY(add_hit(w, L->aMember[j], D));
            }
        }
        if (dc + rd + tol < ro)
            break;
    }
    if (w->nHit > 1)
        qsort(w->aHit, w->nHit, sizeof *w->aHit, lc_cmp_hit);
    return GENIE_OK;
}

static genie_status knn_offer(const lc_query_ctx *x, lc_heap *h, uint32_t o, double D)
{
    if ((!x->opt->bounded || D <= x->opt->radius) && filter_allows(x->aAllow, o))
        lc_heap_push(h, (genie_lc_hit){o, D});
    return GENIE_OK;
}

/* Members of cluster i outward from dc along the sorted table (3.3). */
static genie_status knn_cluster(const lc_query_ctx *x, lc_scratch *w, lc_heap *h, uint32_t i, double dc, double r0)
{
    const lc_layout *L = x->L;
    const lc_space *s = x->s;
    uint32_t b = lc_cluster_begin(L, i), e = L->aEnd[i], lo = b, hi = e;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (L->aMemberDist[mid] < dc)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t up = lo, down = lo; /* next: aMember[up] going up, aMember[down - 1] going down */
    while (up < e || down > b) {
        double gapUp = up < e ? L->aMemberDist[up] - dc : INFINITY;
        double gapDown = down > b ? dc - L->aMemberDist[down - 1] : INFINITY;
        int goUp = gapUp <= gapDown;
        double gap = goUp ? gapUp : gapDown;
        double r = lc_knn_radius(h, r0), rd = lc_to_metric(s, r);
        if (isfinite(rd) && gap - lc_slack(s, dc, L->aRadius[i], rd) > rd)
            break;
        uint32_t o = goUp ? L->aMember[up++] : L->aMember[--down];
        double D;
        GENIE_TRY(dist(x, w, o, r, &D));
        GENIE_TRY(knn_offer(x, h, o, D));
    }
    return GENIE_OK;
}

static genie_status knn_query(const lc_query_ctx *x, lc_scratch *w, size_t k)
{
    const lc_layout *L = x->L;
    const lc_space *s = x->s;
    lc_heap h = {w->aHit, 0, k};
    double r0 = x->opt->bounded ? x->opt->radius : INFINITY;
    int pivots = L->aCenterDist != NULL;
    uint32_t stopAt = x->end;
    size_t nCand = 0;
    for (uint32_t i = x->first; i < x->end; i++) {
        double rc = L->aRadius[i], ro = L->aOuter[i];
        double r = lc_knn_radius(&h, r0), rd = lc_to_metric(s, r);
        if (pivots && w->nPiv && isfinite(rd)) {
            double lb, ub;
            pivot_bounds(L, w, i, &lb, &ub);
            if (lb - lc_slack(s, lb, rc, rd) > rc + rd) {
                if (ub + rd + lc_slack(s, ub, ro, rd) < ro) {
                    stopAt = i + 1;
                    break;
                }
                continue;
            }
        }
        double D;
        GENIE_TRY(dist(x, w, L->aCenter[i], INFINITY, &D));
        GENIE_TRY(knn_offer(x, &h, L->aCenter[i], D));
        double dc = lc_to_metric(s, D);
        if (pivots)
            pivot_add(w, i, dc);
        if (L->aEnd[i] > lc_cluster_begin(L, i))
            w->aCand[nCand++] = (lc_cand){dc > rc ? dc - rc : 0, dc, i};
        r = lc_knn_radius(&h, r0);
        rd = lc_to_metric(s, r);
        if (dc + rd + lc_slack(s, dc, ro, rd) < ro) {
            stopAt = i + 1;
            break;
        }
    }
    qsort(w->aCand, nCand, sizeof *w->aCand, lc_cmp_cand);
    for (size_t j = 0; j < nCand; j++) {
        const lc_cand *cd = &w->aCand[j];
        if (cd->i >= stopAt)
            continue;
        double r = lc_knn_radius(&h, r0), rd = lc_to_metric(s, r);
        if (isfinite(rd) && cd->lb - lc_slack(s, cd->dc, L->aRadius[cd->i], rd) > rd)
            break;
        GENIE_TRY(knn_cluster(x, w, &h, cd->i, cd->dc, r0));
        r = lc_knn_radius(&h, r0);
        rd = lc_to_metric(s, r);
        if (cd->dc + rd + lc_slack(s, cd->dc, L->aOuter[cd->i], rd) < L->aOuter[cd->i] && cd->i + 1 < stopAt)
            stopAt = cd->i + 1;
    }
    w->nHit = h.n;
    if (h.n > 1)
        qsort(w->aHit, h.n, sizeof *w->aHit, lc_cmp_hit);
    return GENIE_OK;
}

/* The baseline: every object of the clusters searched. */
static genie_status brute_query(const lc_query_ctx *x, lc_scratch *w, size_t k)
{
    const lc_layout *L = x->L;
    lc_heap h = {w->aHit, 0, k};
    double r = x->opt->radius;
    for (uint32_t i = x->first; i < x->end; i++) {
        /* the members, then the center */
        for (uint32_t j = lc_cluster_begin(L, i); j <= L->aEnd[i]; j++) {
            uint32_t o = j == L->aEnd[i] ? L->aCenter[i] : L->aMember[j];
            double D;
            if (x->opt->k) {
                GENIE_TRY(dist(x, w, o, INFINITY, &D));
                GENIE_TRY(knn_offer(x, &h, o, D));
            } else {
                GENIE_TRY(dist(x, w, o, r, &D));
                if (D <= r)
                    GENIE_TRY(add_hit(w, o, D));
            }
        }
    }
    if (x->opt->k)
        w->nHit = h.n;
    if (w->nHit > 1)
        qsort(w->aHit, w->nHit, sizeof *w->aHit, lc_cmp_hit);
    return GENIE_OK;
}

/* ------------------------------------------------------------- driver */

/*
 * Batched distances on a backend, for lc_batch_search: vectors through
 * the pPairs capability (engine/pairs.h; floats, widened exactly), strings through the
 * batched edit distances (transform/edit_batch.h; integers).
 */
typedef struct lc_device_ctx {
    const engine_backend *be;
    const genie_index *idx;
    const lc_space *s;
    const float *aQVec; /* vectors: every query */
    engine_strings q;   /* edit: every query, packed */
    float *aF;          /* the backend's answers, nCap of them */
    uint32_t *aU;
    uint64_t nCap;
} lc_device_ctx;

static genie_status device_pairs(void *ctx, size_t q0, size_t nQuery, const uint32_t *aPair, uint64_t nPair,
                                 double *out)
{
    static const genie_metric aVm[] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    lc_device_ctx *d = ctx;
    const lc_space *s = d->s;
    if (nPair > d->nCap) {
        free(d->aF);
        free(d->aU);
        d->aU = NULL;
        d->nCap = 0;
        d->aF = malloc(nPair * sizeof *d->aF);
        d->aU = malloc(nPair * sizeof *d->aU);
        if (!d->aF || !d->aU)
            return util_error(GENIE_ENOMEM, "out of memory for %llu distances", (unsigned long long)nPair);
        d->nCap = nPair;
    }
    if (lc_metric_is_vector(s->metric)) {
        GENIE_TRY(engine_pair_distances(d->be, d->idx, s->aVec, s->n, s->dim, aVm[s->metric], d->aQVec + q0 * s->dim,
                                        nQuery, aPair, nPair, d->aF));
        for (uint64_t i = 0; i < nPair; i++)
            out[i] = d->aF[i];
        return GENIE_OK;
    }
    engine_strings q = {d->q.aByte, d->q.aStart + q0, nQuery};
    GENIE_TRY(edit_pairs(d->be, d->idx, &q, aPair, nPair, d->aU));
    for (uint64_t i = 0; i < nPair; i++)
        out[i] = d->aU[i];
    return GENIE_OK;
}

/*
 * Which search runs: sets, and the brute-force baseline, on the CPU
 * threads; vectors and edit distance on the backend @p opt names ("auto":
 * a GPU when usable), batched when it computes their distances (the
 * pPairs and pEdit capabilities), else on the CPU threads.  *pBe is NULL for the CPU threads.
 */
static genie_status pick_backend(genie_lc_metric metric, const genie_lc_options *opt, const engine_backend **pBe)
{
    int vectors = lc_metric_is_vector(metric);
    *pBe = NULL;
    if ((!vectors && metric != GENIE_LC_EDIT) || opt->brute_force) {
        if (opt->backend != GENIE_BACKEND_AUTO && opt->backend != GENIE_BACKEND_CPU)
            return util_error(GENIE_ENOTSUP, "%s runs on the cpu backend, not %s",
                              opt->brute_force ? "the brute-force baseline" : "jaccard search",
                              genie_backend_name(opt->backend) ? genie_backend_name(opt->backend) : "?");
        return GENIE_OK;
    }
    return engine_backend_pick_cap(opt->backend, vectors ? ENGINE_CAP(pPairs) : ENGINE_CAP(pEdit), pBe);
}

typedef struct lc_job {
    lc_query_ctx x;
    const float *aQVec; /* vectors: nQuery * dim */
    const char *const *azQ;
    const size_t *anQ;
    genie_lc_results *res;
    size_t k; /* heap size: min(opt->k, objects searched) */
    atomic_size_t next;
    atomic_int failed;
    genie_status rc;
} lc_job;

static genie_status one_query(lc_job *job, lc_scratch *w, size_t q)
{
    const lc_query_ctx *x = &job->x;
    w->nHit = 0;
    w->nPiv = 0;
    w->nDist = 0;
    GENIE_TRY(lc_probe_query(&w->probe, x->s, job->aQVec ? job->aQVec + q * x->s->dim : NULL,
                             job->azQ ? job->azQ[q] : NULL, job->anQ ? job->anQ[q] : 0, x->L->info.separator));
    if (x->opt->brute_force)
        GENIE_TRY(brute_query(x, w, job->k));
    else if (x->opt->k)
        GENIE_TRY(knn_query(x, w, job->k));
    else
        GENIE_TRY(range_query(x, w));
    genie_lc_results *res = job->res;
    res->anDist[q] = w->nDist;
    res->anHit[q] = w->nHit;
    if (w->nHit) {
        if (!(res->aaHit[q] = malloc(w->nHit * sizeof **res->aaHit)))
            return util_error(GENIE_ENOMEM, "out of memory for the answers of query %zu", q);
        memcpy(res->aaHit[q], w->aHit, w->nHit * sizeof *w->aHit);
    }
    return GENIE_OK;
}

static void search_worker(void *ctx, unsigned t)
{
    (void)t;
    lc_job *job = ctx;
    lc_scratch w;
    memset(&w, 0, sizeof w);
    w.aAllow = job->x.aAllow;
    uint32_t m = job->x.L->info.n_clusters;
    genie_status rc = GENIE_OK;
    w.aCand = malloc(m * sizeof *w.aCand);
    if (job->k && (w.aHit = malloc(job->k * sizeof *w.aHit)))
        w.nHitCap = job->k;
    if (!w.aCand || (job->k && !w.aHit))
        rc = util_error(GENIE_ENOMEM, "out of memory for a search thread's state");
    while (rc == GENIE_OK && !atomic_load(&job->failed)) {
        size_t q0 = atomic_fetch_add(&job->next, LC_QUERY_CHUNK);
        if (q0 >= job->res->n)
            break;
        size_t q1 = q0 + LC_QUERY_CHUNK < job->res->n ? q0 + LC_QUERY_CHUNK : job->res->n;
        for (size_t q = q0; q < q1 && rc == GENIE_OK; q++)
            rc = one_query(job, &w, q);
    }
    if (rc != GENIE_OK && !atomic_exchange(&job->failed, 1))
        job->rc = rc; /* the message stays on this thread; the driver re-states it */
    lc_probe_free(&w.probe);
    free(w.aHit);
    free(w.aCand);
}

static genie_status check_options(const lc_layout *L, const genie_lc_options *opt, uint32_t *pFirst, uint32_t *pEnd)
{
    if (!opt)
        return util_error(GENIE_EINVAL, "no search options");
    if ((opt->k == 0 || opt->bounded) && !(opt->radius >= 0))
        return util_error(GENIE_EINVAL, "the radius must be a number >= 0, not %g", opt->radius);
    uint32_t m = L->info.n_clusters;
    if (opt->first_cluster >= m || opt->n_clusters > m - opt->first_cluster)
        return util_error(GENIE_EINVAL, "clusters %u + %u outside the index's %u", opt->first_cluster,
                          opt->n_clusters, m);
    *pFirst = opt->first_cluster;
    *pEnd = opt->n_clusters ? opt->first_cluster + opt->n_clusters : m;
    return GENIE_OK;
}

static void results_free(genie_lc_results *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->aaHit && i < r->n; i++)
        free(r->aaHit[i]);
    free(r->aaHit);
    free(r->anHit);
    free(r->anDist);
    free(r);
}

void genie_lc_options_init(genie_lc_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
}

static genie_status search(const genie_index *idx, int vectors, const genie_vectors *qv, const char *const *azQ,
                           const size_t *anQ, size_t nQuery, const genie_lc_options *opt, genie_lc_results **out)
{
    double t0 = util_now();
    *out = NULL;
    GENIE_TRY(UTIL_OPTIONS_CHECK(opt, genie_lc_options, filter));
    lc_layout L;
    lc_space s;
    GENIE_TRY(lc_open_index(idx, &L, &s));
    genie_status rc = GENIE_OK;
    genie_lc_results *res = NULL;
    lc_job job;
    memset(&job, 0, sizeof job);
    uint64_t *aAllowOwned = NULL;
    if (vectors != lc_metric_is_vector(L.info.metric)) {
        rc = util_error(GENIE_EINVAL, "a metric index of %s is searched with %s",
                        genie_lc_metric_name(L.info.metric), vectors ? "strings or sets" : "vectors");
        goto done;
    }
    if (vectors && qv->n && qv->dim != L.info.dim) {
        rc = util_error(GENIE_EINVAL, "queries have %u dimensions, the index %u", qv->dim, L.info.dim);
        goto done;
    }
    GENIE_TRY_GOTO(rc, check_options(&L, opt, &job.x.first, &job.x.end), done);
    GENIE_TRY_GOTO(rc, filter_effective(idx, opt->filter, &job.x.aAllow, &aAllowOwned), done);
    const engine_backend *be;
    GENIE_TRY_GOTO(rc, pick_backend(L.info.metric, opt, &be), done);
    if (!(res = calloc(1, sizeof *res)) || !(res->aaHit = calloc(nQuery + 1, sizeof *res->aaHit)) ||
        !(res->anHit = calloc(nQuery + 1, sizeof *res->anHit)) ||
        !(res->anDist = calloc(nQuery + 1, sizeof *res->anDist))) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the results of %zu queries", nQuery);
        goto done;
    }
    res->n = nQuery;
    job.x.L = &L;
    job.x.s = &s;
    job.x.opt = opt;
    job.aQVec = vectors ? qv->data : NULL;
    job.azQ = azQ;
    job.anQ = anQ;
    job.res = res;
    uint64_t nIn = (uint64_t)(job.x.end - job.x.first) + L.aEnd[job.x.end - 1] - lc_cluster_begin(&L, job.x.first);
    job.k = opt->k < nIn ? opt->k : (size_t)nIn;
    if (be) {
        lc_device_ctx d;
        memset(&d, 0, sizeof d);
        d.be = be;
        d.idx = idx;
        d.s = &s;
        d.aQVec = vectors ? qv->data : NULL;
        char *aQByte = NULL;
        uint64_t *aQStart = NULL;
        if (!vectors)
            rc = edit_strings_pack(azQ, anQ, NULL, nQuery, &d.q, &aQByte, &aQStart);
        if (rc == GENIE_OK)
            rc = lc_batch_search(&L, &s, opt, job.x.aAllow, job.x.first, job.x.end, nQuery, device_pairs, &d, res);
        free(aQByte);
        free(aQStart);
        free(d.aF);
        free(d.aU);
        if (rc != GENIE_OK)
            goto done;
        res->stats.backend = be->id;
        goto finish;
    }
    unsigned nThread = opt->threads ? opt->threads : util_ncores();
    if (nThread > (nQuery + LC_QUERY_CHUNK - 1) / LC_QUERY_CHUNK)
        nThread = (unsigned)((nQuery + LC_QUERY_CHUNK - 1) / LC_QUERY_CHUNK);
    util_parallel_run(nThread ? nThread : 1, search_worker, &job);
    if (atomic_load(&job.failed)) {
        rc = util_error(job.rc, "metric search failed: %s", genie_strerror(job.rc));
        goto done;
    }
    res->stats.backend = GENIE_BACKEND_CPU;
finish:
    /* A live index's added objects (in no cluster): with the last cluster's range. */
    if (job.x.end == L.info.n_clusters)
        GENIE_TRY_GOTO(rc, lc_live_scan(idx, &L, job.aQVec, azQ, anQ, nQuery, opt, job.x.aAllow, res), done);
    res->stats.n_parts = 1;
    res->stats.rounds = 1;
    for (size_t q = 0; q < nQuery; q++)
        res->stats.verified += res->anDist[q];
    res->stats.total_seconds = util_now() - t0;
    *out = res;
    res = NULL;
done:
    free(aAllowOwned);
    results_free(res);
    lc_space_free(&s);
    return rc;
}

genie_status genie_lc_search_vectors(const genie_index *idx, const genie_vectors *queries,
                                     const genie_lc_options *opt, genie_lc_results **out)
{
    util_error_clear();
    if (!queries || (queries->n && !queries->data))
        return util_error(GENIE_EINVAL, "no query vectors");
    GENIE_TRY(util_check_finite(queries->data, queries->n, queries->dim, opt ? opt->threads : 0, "query"));
    return search(idx, 1, queries, NULL, NULL, (size_t)queries->n, opt, out);
}

genie_status genie_lc_search_strings(const genie_index *idx, const char *const *queries, const size_t *lengths,
                                     size_t n_queries, const genie_lc_options *opt, genie_lc_results **out)
{
    util_error_clear();
    if (n_queries && (!queries || !lengths))
        return util_error(GENIE_EINVAL, "no query strings");
    return search(idx, 0, NULL, queries, lengths, n_queries, opt, out);
}

size_t genie_lc_results_queries(const genie_lc_results *r)
{
    return r ? r->n : 0;
}

const genie_lc_hit *genie_lc_results_get(const genie_lc_results *r, size_t query, size_t *n)
{
    if (!r || query >= r->n) {
        *n = 0;
        return NULL;
    }
    *n = r->anHit[query];
    return r->aaHit[query];
}

uint64_t genie_lc_results_distances(const genie_lc_results *r, size_t query)
{
    return r && query < r->n ? r->anDist[query] : 0;
}

void genie_lc_results_stats(const genie_lc_results *r, genie_search_stats *out)
{
    memset(out, 0, sizeof *out);
    if (r)
        *out = r->stats;
}

void genie_lc_results_free(genie_lc_results *r)
{
    results_free(r);
}
