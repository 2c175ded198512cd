/*
 * The List of Clusters search of one query, in quanta: Gil-Costa, Marin
 * and Reyes, "Parallel query processing on distributed clustering indexes"
 * (J. Discrete Algorithms 7, 2009), section 4.1 (round-robin quanta of K
 * distance computations per superstep) and 4.2 (LL, LG: the centers on the
 * query's ranker, the members on every processor).
 *
 * A walk is metric_search.c's sequential search (range: Fig. 5 with the
 * table of 3.2; k-NN: Fig. 6 with the shrinking radius, 3.3) written as a
 * state machine that stops after any distance and resumes there:
 *
 *   centers  clusters in construction order; with the center-to-center
 *            distances, the first LC_PIVOTS centers compared are pivots
 *            that skip a center when max |d(q,p) - d(c,p)| > rc + r; the
 *            center is compared, reported when within r, and its cluster
 *            becomes a candidate when the query ball meets it; the part
 *            ends after the cluster whose outer distance exceeds
 *            d(q,c) + r (nothing later can be within r).  Range search
 *            decides each center with the fixed radius, so it computes
 *            exactly the sequential search's centers; k-NN uses the k-th
 *            distance among the centers so far, as Fig. 6 does.
 *   members  the candidates (k-NN: in increasing order of
 *            max(d(q,c) - rc, 0), ties by d(q,c) then number, until that
 *            exceeds r); range: the members whose stored distance lies in
 *            [d(q,c) - r, d(q,c) + r]; k-NN: outward from d(q,c) along the
 *            sorted table, nearest bound first, until both sides are
 *            farther than r.  Members outside the walk's share are stepped
 *            over without a distance.  A cluster that contains the query
 *            ball ends the walk at it (k-NN).
 *
 * A members part started from a plan knows the centers' distances from
 * the plan and never compares a center.  Its k-NN radius starts at the
 * plan's (the k-th distance among the centers, which the final k-th
 * distance cannot exceed), and it keeps only objects within it: an object
 * farther than k centers is in no answer, and with edit distance its
 * computed value past the radius would not be exact.
 *
 * Exactness and ties are those of metric_search.c (its header): pruning
 * removes only objects provably farther than r, with lc_slack().
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "transform/metric.h"
#include "util/error.h"
#include "util/grow.h"
#include "util/options.h"

struct genie_lc_walker {
    lc_layout L;
    lc_space s;
};

enum { WALK_CENTERS, WALK_MEMBERS, WALK_DONE };

struct genie_lc_walk {
    const genie_lc_walker *W;
    genie_lc_walk_options o;
    lc_probe probe;
    float *aQ;            /* the query, owned */
    char *zQ;
    int phase, havePlan;
    uint32_t next, stop;  /* centers: the next cluster; no cluster >= stop is visited */
    uint32_t aPiv[LC_PIVOTS];
    double aPivD[LC_PIVOTS];
    unsigned nPiv;
    lc_cand *aCand;     /* members: the clusters to look into */
    size_t nCand, nCandCap, jCand;
    int inCluster;        /* members: inside aCand[jCand] */
    uint32_t lo, hi, up, down;
    genie_lc_hit *aHit;   /* range answers, or the k-NN heap's array */
    size_t nHit, nHitCap;
    lc_heap h;
    double r0;            /* k-NN: the radius bound (INFINITY: none) */
    uint64_t nDist;
    uint32_t *aPlanCluster;
    double *aPlanDist;
    double planRadius;
};

genie_status genie_lc_walker_new(const genie_index *idx, genie_lc_walker **out)
{
    util_error_clear();
    *out = NULL;
    genie_lc_walker *w = calloc(1, sizeof *w);
    if (!w)
        return util_error(GENIE_ENOMEM, "out of memory for a metric walker");
    genie_status rc = lc_open_index(idx, &w->L, &w->s);
    if (rc != GENIE_OK) {
        free(w);
        return rc;
    }
    *out = w;
    return GENIE_OK;
}

void genie_lc_walker_free(genie_lc_walker *w)
{
    if (!w)
        return;
    lc_space_free(&w->s);
    free(w);
}

static genie_status add_cand(genie_lc_walk *k, uint32_t i, double dc)
{
    GENIE_TRY(util_grow(&k->aCand, &k->nCandCap, k->nCand, sizeof *k->aCand, 16, "clusters of a query"));
    double rc = k->W->L.aRadius[i];
    k->aCand[k->nCand++] = (lc_cand){dc > rc ? dc - rc : 0, dc, i};
    return GENIE_OK;
}

static genie_status add_hit(genie_lc_walk *k, uint32_t o, double d)
{
    GENIE_TRY(util_grow(&k->aHit, &k->nHitCap, k->nHit, sizeof *k->aHit, 64, "range answers"));
    k->aHit[k->nHit++] = (genie_lc_hit){o, d};
    return GENIE_OK;
}

static genie_status dist(genie_lc_walk *k, uint32_t o, double max, double *pD)
{
    k->nDist++;
    return lc_distance(&k->W->s, &k->probe, o, max, pD);
}

/* k-NN: the radius now (reported distance). */
static double knn_r(const genie_lc_walk *k)
{
    return lc_knn_radius(&k->h, k->r0);
}

static void offer(genie_lc_walk *k, uint32_t o, double D)
{
    if (D <= k->r0)
        lc_heap_push(&k->h, (genie_lc_hit){o, D});
}

static int owned(const genie_lc_walk *k, uint32_t o)
{
    return k->o.share_stride <= 1 || o % k->o.share_stride == k->o.share_offset;
}

void genie_lc_walk_options_init(genie_lc_walk_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
}

genie_status genie_lc_walk_start(const genie_lc_walker *w, const genie_lc_walk_options *o, const float *vec,
                                 const char *z, size_t n, genie_lc_walk **out)
{
    util_error_clear();
    *out = NULL;
    const lc_layout *L = &w->L;
    int vectors = lc_metric_is_vector(L->info.metric);
    if (!o || o->part > GENIE_LC_WALK_MEMBERS)
        return util_error(GENIE_EINVAL, "bad walk options");
    GENIE_TRY(UTIL_OPTIONS_CHECK(o, genie_lc_walk_options, share_offset));
    if ((o->k == 0 || o->bounded) && !(o->radius >= 0))
        return util_error(GENIE_EINVAL, "the radius must be a number >= 0, not %g", o->radius);
    if (o->share_stride > 1 && (o->part != GENIE_LC_WALK_MEMBERS || o->share_offset >= o->share_stride))
        return util_error(GENIE_EINVAL, "a share (%u of %u) is for a members walk, with offset < stride",
                          o->share_offset, o->share_stride);
    if (vectors ? !vec : (!z && n))
        return util_error(GENIE_EINVAL, "a metric index of %s is searched with %s",
                          genie_lc_metric_name(L->info.metric), vectors ? "vectors" : "strings or sets");
    genie_lc_walk *k = calloc(1, sizeof *k);
    if (!k)
        return util_error(GENIE_ENOMEM, "out of memory for a walk");
    genie_status rc = GENIE_OK;
    k->W = w;
    k->o = *o;
    k->stop = L->info.n_clusters;
    k->phase = o->part == GENIE_LC_WALK_MEMBERS ? WALK_MEMBERS : WALK_CENTERS;
    k->r0 = o->k && o->bounded ? o->radius : INFINITY;
    k->planRadius = INFINITY;
    if (o->k) {
        size_t kk = o->k < L->info.n_objects ? o->k : (size_t)L->info.n_objects;
        if (!(k->aHit = malloc(kk * sizeof *k->aHit))) {
            rc = util_error(GENIE_ENOMEM, "out of memory for a k-NN heap of %zu", kk);
            goto fail;
        }
        k->h = (lc_heap){k->aHit, 0, kk};
    }
    if (vectors) {
        if (!(k->aQ = malloc((size_t)L->info.dim * sizeof *k->aQ))) {
            rc = util_error(GENIE_ENOMEM, "out of memory for a query");
            goto fail;
        }
        memcpy(k->aQ, vec, (size_t)L->info.dim * sizeof *k->aQ);
    } else {
        if (!(k->zQ = malloc(n + 1))) {
            rc = util_error(GENIE_ENOMEM, "out of memory for a query of %zu bytes", n);
            goto fail;
        }
        if (n)
            memcpy(k->zQ, z, n);
        k->zQ[n] = 0;
    }
    GENIE_TRY_GOTO(rc, lc_probe_query(&k->probe, &w->s, k->aQ, k->zQ, n, L->info.separator), fail);
    *out = k;
    return GENIE_OK;
fail:
    genie_lc_walk_free(k);
    return rc;
}

genie_status genie_lc_walk_set_plan(genie_lc_walk *k, const genie_lc_plan *p)
{
    util_error_clear();
    const lc_layout *L = &k->W->L;
    uint32_t m = L->info.n_clusters;
    if (k->o.part != GENIE_LC_WALK_MEMBERS || k->havePlan)
        return util_error(GENIE_EINVAL, "a plan is for a members walk, once");
    if (!p || p->stop > m || isnan(p->radius) || p->n > m || (p->n && (!p->clusters || !p->center_distances)))
        return util_error(GENIE_EINVAL, "a plan of %u clusters, stop %u, for an index of %u clusters",
                          p ? p->n : 0, p ? p->stop : 0, m);
    for (uint32_t j = 0; j < p->n; j++) {
        uint32_t i = p->clusters[j];
        if (i >= m || isnan(p->center_distances[j]))
            return util_error(GENIE_EINVAL, "plan entry %u: cluster %u of %u, distance %g", j, i, m,
                              p->center_distances[j]);
        GENIE_TRY(add_cand(k, i, p->center_distances[j]));
    }
    if (k->o.k) {
        if (k->nCand > 1)
            qsort(k->aCand, k->nCand, sizeof *k->aCand, lc_cmp_cand);
        if (p->radius < k->r0)
            k->r0 = p->radius;
    }
    k->stop = p->stop;
    k->havePlan = 1;
    return GENIE_OK;
}

/* Pivot bounds on delta(q, c_i) (needs the center matrix). */
static void pivot_bounds(const genie_lc_walk *k, uint32_t i, double *pLb, double *pUb)
{
    double lb = 0, ub = INFINITY;
    for (unsigned p = 0; p < k->nPiv; p++) {
        double dcp = lc_center_dist(&k->W->L, i, k->aPiv[p]);
        double lo = fabs(k->aPivD[p] - dcp), hi = k->aPivD[p] + dcp;
        if (lo > lb)
            lb = lo;
        if (hi < ub)
            ub = hi;
    }
    *pLb = lb;
    *pUb = ub;
}

/* The centers part, until it ends or *pLeft distances are spent. */
static genie_status step_centers(genie_lc_walk *k, uint64_t *pLeft)
{
    const lc_layout *L = &k->W->L;
    const lc_space *s = &k->W->s;
    int pivots = L->aCenterDist != NULL;
    while (k->next < k->stop) {
        uint32_t i = k->next;
        double rc = L->aRadius[i], ro = L->aOuter[i];
        double r = k->o.k ? knn_r(k) : k->o.radius, rd = lc_to_metric(s, r);
        if (pivots && k->nPiv && isfinite(rd)) {
            double lb, ub;
            pivot_bounds(k, i, &lb, &ub);
            if (lb - lc_slack(s, lb, rc, rd) > rc + rd) {
                k->next++;
                if (ub + rd + lc_slack(s, ub, ro, rd) < ro)
                    k->stop = i + 1;
                continue;
            }
        }
        if (*pLeft == 0)
            return GENIE_OK;
        (*pLeft)--;
        k->next++;
        double D;
        GENIE_TRY(dist(k, L->aCenter[i], INFINITY, &D));
        double dc = lc_to_metric(s, D);
        if (k->o.k)
            offer(k, L->aCenter[i], D);
        else if (D <= r)
            GENIE_TRY(add_hit(k, L->aCenter[i], D));
        if (pivots && k->nPiv < LC_PIVOTS) {
            k->aPiv[k->nPiv] = i;
            k->aPivD[k->nPiv++] = dc;
        }
        int members = L->aEnd[i] > lc_cluster_begin(L, i);
        if (k->o.k) {
            if (members)
                GENIE_TRY(add_cand(k, i, dc));
            r = knn_r(k);
            rd = lc_to_metric(s, r);
        } else if (members && dc - lc_slack(s, dc, rc, rd) <= rc + rd) {
            GENIE_TRY(add_cand(k, i, dc));
        }
        if (dc + rd + lc_slack(s, dc, ro, rd) < ro)
            k->stop = i + 1;
    }
    if (k->o.k && k->nCand > 1)
        qsort(k->aCand, k->nCand, sizeof *k->aCand, lc_cmp_cand);
    k->phase = k->o.part == GENIE_LC_WALK_CENTERS ? WALK_DONE : WALK_MEMBERS;
    return GENIE_OK;
}

/* Range: the window [dc - r, dc + r] of the current cluster's table. */
static genie_status step_range_members(genie_lc_walk *k, uint64_t *pLeft)
{
    const lc_layout *L = &k->W->L;
    const lc_space *s = &k->W->s;
    double r = k->o.radius, rd = lc_to_metric(s, r);
    for (; k->jCand < k->nCand; k->jCand++) {
        const lc_cand *cd = &k->aCand[k->jCand];
        double tol = lc_slack(s, cd->dc, L->aRadius[cd->i], rd), to = cd->dc + rd + tol;
        if (!k->inCluster) {
            uint32_t lo = lc_cluster_begin(L, cd->i), hi = L->aEnd[cd->i];
            double from = cd->dc - rd - tol;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (L->aMemberDist[mid] < from)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            k->lo = lo;
            k->inCluster = 1;
        }
        for (; k->lo < L->aEnd[cd->i] && L->aMemberDist[k->lo] <= to; k->lo++) {
            uint32_t o = L->aMember[k->lo];
            if (!owned(k, o))
                continue;
            if (*pLeft == 0)
                return GENIE_OK;
            (*pLeft)--;
            double D;
            GENIE_TRY(dist(k, o, r, &D));
            if (D <= r)
                GENIE_TRY(add_hit(k, o, D));
        }
        k->inCluster = 0;
    }
    k->phase = WALK_DONE;
    return GENIE_OK;
}

/* k-NN: clusters by lower bound, each outward from d(q,c) (Fig. 6). */
static genie_status step_knn_members(genie_lc_walk *k, uint64_t *pLeft)
{
    const lc_layout *L = &k->W->L;
    const lc_space *s = &k->W->s;
    for (; k->jCand < k->nCand; k->jCand++) {
        const lc_cand *cd = &k->aCand[k->jCand];
        double rc = L->aRadius[cd->i], ro = L->aOuter[cd->i];
        uint32_t b = lc_cluster_begin(L, cd->i), e = L->aEnd[cd->i];
        if (!k->inCluster) {
            if (cd->i >= k->stop)
                continue;
            double rd = lc_to_metric(s, knn_r(k));
            if (isfinite(rd) && cd->lb - lc_slack(s, cd->dc, rc, rd) > rd)
                break;
            uint32_t lo = b, hi = e;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (L->aMemberDist[mid] < cd->dc)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            k->up = k->down = lo;
            k->inCluster = 1;
        }
        while (k->up < e || k->down > b) {
            double gapUp = k->up < e ? L->aMemberDist[k->up] - cd->dc : INFINITY;
            double gapDown = k->down > b ? cd->dc - L->aMemberDist[k->down - 1] : INFINITY;
            int goUp = gapUp <= gapDown;
            double r = knn_r(k), rd = lc_to_metric(s, r);
            if (isfinite(rd) && (goUp ? gapUp : gapDown) - lc_slack(s, cd->dc, rc, rd) > rd)
                break;
            uint32_t o = goUp ? L->aMember[k->up] : L->aMember[k->down - 1];
            if (owned(k, o)) {
                if (*pLeft == 0)
                    return GENIE_OK;
                (*pLeft)--;
                double D;
                GENIE_TRY(dist(k, o, r, &D));
                offer(k, o, D);
            }
            if (goUp)
                k->up++;
            else
                k->down--;
        }
        k->inCluster = 0;
        double rd = lc_to_metric(s, knn_r(k));
        if (cd->dc + rd + lc_slack(s, cd->dc, ro, rd) < ro && cd->i + 1 < k->stop)
            k->stop = cd->i + 1;
    }
    k->phase = WALK_DONE;
    return GENIE_OK;
}

/* The walk is over: its answers in (distance, id) order, its plan. */
static genie_status finish(genie_lc_walk *k)
{
    k->planRadius = k->o.k ? knn_r(k) : INFINITY; /* before the sort below unmakes the heap */
    if (k->o.k)
        k->nHit = k->h.n;
    if (k->nHit > 1)
        qsort(k->aHit, k->nHit, sizeof *k->aHit, lc_cmp_hit);
    if (k->o.part != GENIE_LC_WALK_CENTERS)
        return GENIE_OK;
    size_t n = k->nCand ? k->nCand : 1;
    if (!(k->aPlanCluster = malloc(n * sizeof *k->aPlanCluster)) || !(k->aPlanDist = malloc(n * sizeof *k->aPlanDist)))
        return util_error(GENIE_ENOMEM, "out of memory for a plan of %zu clusters", k->nCand);
    for (size_t j = 0; j < k->nCand; j++) {
        k->aPlanCluster[j] = k->aCand[j].i;
        k->aPlanDist[j] = k->aCand[j].dc;
    }
    return GENIE_OK;
}

genie_status genie_lc_walk_step(genie_lc_walk *k, uint64_t quantum, int *done)
{
    util_error_clear();
    *done = 0;
    if (k->phase == WALK_DONE) {
        *done = 1;
        return GENIE_OK;
    }
    if (quantum == 0)
        return util_error(GENIE_EINVAL, "a quantum of 0 distances");
    if (k->o.part == GENIE_LC_WALK_MEMBERS && !k->havePlan)
        return util_error(GENIE_EINVAL, "a members walk without its plan");
    uint64_t left = quantum;
    if (k->phase == WALK_CENTERS)
        GENIE_TRY(step_centers(k, &left));
    if (k->phase == WALK_MEMBERS)
        GENIE_TRY(k->o.k ? step_knn_members(k, &left) : step_range_members(k, &left));
    if (k->phase == WALK_DONE) {
        GENIE_TRY(finish(k));
        *done = 1;
    }
    return GENIE_OK;
}

genie_status genie_lc_walk_plan(const genie_lc_walk *k, genie_lc_plan *out)
{
    util_error_clear();
    if (k->o.part != GENIE_LC_WALK_CENTERS || k->phase != WALK_DONE)
        return util_error(GENIE_EINVAL, "a plan comes from a finished centers walk");
    *out = (genie_lc_plan){(uint32_t)k->nCand, k->aPlanCluster, k->aPlanDist, k->stop, k->planRadius};
    return GENIE_OK;
}

const genie_lc_hit *genie_lc_walk_hits(const genie_lc_walk *k, size_t *n)
{
    if (k->phase != WALK_DONE) {
        *n = 0;
        return NULL;
    }
    *n = k->nHit;
    return k->aHit;
}

uint64_t genie_lc_walk_distances(const genie_lc_walk *k)
{
    return k->nDist;
}

void genie_lc_walk_free(genie_lc_walk *k)
{
    if (!k)
        return;
    lc_probe_free(&k->probe);
    free(k->aQ);
    free(k->zQ);
    free(k->aCand);
    free(k->aHit);
    free(k->aPlanCluster);
    free(k->aPlanDist);
    free(k);
}
