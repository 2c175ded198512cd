/*
 * The batched List of Clusters search: the pruning of Gil-Costa, Marin
 * and Reyes, "Parallel query processing on distributed clustering
 * indexes" (J. Discrete Algorithms 7, 2009), sections 2-3, reorganised so
 * that distances are computed many at a time by a device (a GPU through
 * engine/pairs.h), the host deciding between batches which ones the
 * triangle inequality cannot rule out.  Vectors (l2, l1, cosine) and
 * strings under edit distance; the distances come back as the CPU's.
 *
 * For a block of queries:
 *   1. every query against every center of the clusters searched (one
 *      batch; the paper's Fig. 6 does this too, before its clusters);
 *   2. range search: the stop cluster is the first whose outer distance
 *      exceeds d(q,c) + r (metric_build.c); in the clusters up to it that
 *      the query ball meets (d(q,c) <= rc + r), the members whose stored
 *      distance lies in [d(q,c) - r, d(q,c) + r] (3.2) are one batch;
 *   3. k-NN: r is the k-th distance among the centers (every answer is
 *      within it); round A takes, per query, the cluster of smallest lower
 *      bound max(d(q,c) - rc, 0) (ties by d(q,c), then order) and its
 *      members in the window of r; round B, with r shrunk by round A, all
 *      other clusters up to the stop cluster whose lower bound is <= r,
 *      their members in the window of the new r.
 * Every object left out is provably farther than the final radius (never
 * at it), so the answers, ranked by (distance, id) on distances equal to
 * the CPU's bit for bit, are the sequential search's.  The batched form
 * computes more distances than the sequential one (all centers; round B
 * uses the radius after round A, not the one shrinking pair by pair),
 * traded for a device's throughput; stats count every one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/filter.h"
#include "transform/metric.h"
#include "util/error.h"
#include "util/grow.h"

#define LC_BATCH_PAIRS (1u << 22)

/* Per query of a block. */
typedef struct bq_state {
    genie_lc_hit *aHit; /* range: growable; k-NN: the heap's k slots */
    size_t nHit, nCap;
    uint32_t stop;      /* clusters > stop cannot hold an answer */
    uint32_t iA;        /* k-NN round A's cluster, or UINT32_MAX */
    uint64_t nDist;
} bq_state;

typedef struct bq_block {
    const lc_layout *L;
    const lc_space *s;
    const genie_lc_options *opt;
    const uint64_t *aAllow; /* the objects that may be answered (engine/filter.h), or NULL */
    uint32_t first, end;
    size_t q0;       /* the block's first query */
    size_t nQ;
    bq_state *aState;
    double *aDc;     /* nQ * (end - first): reported distance to each center */
    uint32_t *aPair; /* pending pairs (query in block, object) */
    double *aOut;
    size_t nPair;
    lc_pairs_fn xPairs;
    void *ctx;
} bq_block;

static genie_status add_hit(bq_state *q, uint32_t o, double d)
{
    GENIE_TRY(util_grow(&q->aHit, &q->nCap, q->nHit, sizeof *q->aHit, 16, "range answers"));
    q->aHit[q->nHit++] = (genie_lc_hit){o, d};
    return GENIE_OK;
}

/* A distance for query q: a range hit when within r, or a k-NN candidate. */
static genie_status offer(bq_block *b, size_t q, uint32_t o, double D)
{
    const genie_lc_options *opt = b->opt;
    bq_state *st = &b->aState[q];
    if (!filter_allows(b->aAllow, o))
        return GENIE_OK; /* a center not allowed still prunes; it is never answered */
    if (opt->k == 0)
        return D <= opt->radius ? add_hit(st, o, D) : GENIE_OK;
    if (!opt->bounded || D <= opt->radius) {
        lc_heap h = {st->aHit, st->nHit, st->nCap};
        lc_heap_push(&h, (genie_lc_hit){o, D});
        st->nHit = h.n;
    }
    return GENIE_OK;
}

/* Compute the pending pairs and hand each distance to its query. */
static genie_status flush(bq_block *b)
{
    if (b->nPair == 0)
        return GENIE_OK;
    GENIE_TRY(b->xPairs(b->ctx, b->q0, b->nQ, b->aPair, b->nPair, b->aOut));
    for (size_t i = 0; i < b->nPair; i++) {
        b->aState[b->aPair[2 * i]].nDist++;
        GENIE_TRY(offer(b, b->aPair[2 * i], b->aPair[2 * i + 1], b->aOut[i]));
    }
    b->nPair = 0;
    return GENIE_OK;
}

static genie_status add_pair(bq_block *b, size_t q, uint32_t o)
{
    if (b->nPair == LC_BATCH_PAIRS)
        GENIE_TRY(flush(b));
    b->aPair[2 * b->nPair] = (uint32_t)q;
    b->aPair[2 * b->nPair + 1] = o;
    b->nPair++;
    return GENIE_OK;
}

/* Members of cluster i within [dc - rd, dc + rd] (with slack) as pairs. */
static genie_status add_window(bq_block *b, size_t q, uint32_t i, double dc, double rd)
{
    const lc_layout *L = b->L;
    uint32_t lo = lc_cluster_begin(L, i), hi = L->aEnd[i], e = hi;
    double tol = lc_slack(b->s, dc, L->aRadius[i], rd), from = dc - rd - tol, to = dc + rd + tol;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (L->aMemberDist[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t j = lo; j < e && L->aMemberDist[j] <= to; j++)
        GENIE_TRY(add_pair(b, q, L->aMember[j]));
    return GENIE_OK;
}

/* The current radius of query q in reported and pruning units. */
static double radius_of(const bq_block *b, size_t q)
{
    const genie_lc_options *opt = b->opt;
    if (opt->k == 0)
        return opt->radius;
    const bq_state *st = &b->aState[q];
    lc_heap h = {st->aHit, st->nHit, st->nCap};
    return lc_knn_radius(&h, opt->bounded ? opt->radius : INFINITY);
}

/* The first cluster that contains the query ball; later ones are out. */
static uint32_t stop_cluster(const bq_block *b, size_t q, double rd, uint32_t stop)
{
    const lc_layout *L = b->L;
    const double *aDc = b->aDc + q * (b->end - b->first);
    for (uint32_t i = b->first; i < stop; i++) {
        double dc = lc_to_metric(b->s, aDc[i - b->first]);
        if (dc + rd + lc_slack(b->s, dc, L->aOuter[i], rd) < L->aOuter[i])
            return i;
    }
    return stop;
}

static int has_members(const lc_layout *L, uint32_t i)
{
    return L->aEnd[i] > lc_cluster_begin(L, i);
}

/* Round A or B (k-NN) or the one round (range) of member pairs of query q. */
static genie_status member_pairs(bq_block *b, size_t q, int roundA)
{
    const lc_layout *L = b->L;
    const lc_space *s = b->s;
    bq_state *st = &b->aState[q];
    const double *aDc = b->aDc + q * (b->end - b->first);
    double rd = lc_to_metric(s, radius_of(b, q));
    st->stop = stop_cluster(b, q, rd, st->stop);
    if (roundA) {
        uint32_t best = UINT32_MAX;
        double bestLb = 0, bestDc = 0;
        for (uint32_t i = b->first; i <= st->stop && i < b->end; i++) {
            if (!has_members(L, i))
                continue;
            double dc = lc_to_metric(s, aDc[i - b->first]), lb = dc > L->aRadius[i] ? dc - L->aRadius[i] : 0;
            if (best == UINT32_MAX || lb < bestLb || (lb == bestLb && dc < bestDc)) {
                best = i;
                bestLb = lb;
                bestDc = dc;
            }
        }
        st->iA = best;
        if (best != UINT32_MAX && !(bestLb - lc_slack(s, bestDc, L->aRadius[best], rd) > rd))
            GENIE_TRY(add_window(b, q, best, bestDc, rd));
        return GENIE_OK;
    }
    for (uint32_t i = b->first; i <= st->stop && i < b->end; i++) {
        if (i == st->iA || !has_members(L, i))
            continue;
        double dc = lc_to_metric(s, aDc[i - b->first]), rc = L->aRadius[i];
        if (dc - lc_slack(s, dc, rc, rd) <= rc + rd)
            GENIE_TRY(add_window(b, q, i, dc, rd));
    }
    return GENIE_OK;
}

/* 1. Every query of the block against every center, in batches. */
static genie_status center_distances(bq_block *b)
{
    const lc_layout *L = b->L;
    uint32_t M = b->end - b->first;
    uint64_t nAll = (uint64_t)b->nQ * M;
    for (uint64_t g0 = 0; g0 < nAll; g0 += LC_BATCH_PAIRS) {
        size_t n = nAll - g0 < LC_BATCH_PAIRS ? (size_t)(nAll - g0) : LC_BATCH_PAIRS;
        for (size_t j = 0; j < n; j++) {
            uint64_t g = g0 + j;
            b->aPair[2 * j] = (uint32_t)(g / M);
            b->aPair[2 * j + 1] = L->aCenter[b->first + g % M];
        }
        GENIE_TRY(b->xPairs(b->ctx, b->q0, b->nQ, b->aPair, n, b->aOut));
        for (size_t j = 0; j < n; j++)
            b->aDc[g0 + j] = b->aOut[j];
    }
    for (size_t q = 0; q < b->nQ; q++) {
        b->aState[q].nDist += M;
        for (uint32_t i = b->first; i < b->end; i++)
            GENIE_TRY(offer(b, q, L->aCenter[i], b->aDc[q * M + (i - b->first)]));
    }
    return GENIE_OK;
}

static genie_status run_block(bq_block *b)
{
    GENIE_TRY(center_distances(b));
    if (b->opt->k) {
        for (size_t q = 0; q < b->nQ; q++)
            GENIE_TRY(member_pairs(b, q, 1));
        GENIE_TRY(flush(b));
    }
    for (size_t q = 0; q < b->nQ; q++)
        GENIE_TRY(member_pairs(b, q, 0));
    return flush(b);
}

genie_status lc_batch_search(const lc_layout *L, const lc_space *s, const genie_lc_options *opt,
                             const uint64_t *aAllow, uint32_t first, uint32_t end, size_t nQuery, lc_pairs_fn xPairs,
                             void *ctx, genie_lc_results *res)
{
    uint32_t M = end - first;
    uint64_t nIn = (uint64_t)M + L->aEnd[end - 1] - lc_cluster_begin(L, first);
    size_t k = opt->k < nIn ? opt->k : (size_t)nIn;
    size_t nBlock = LC_BATCH_PAIRS / M ? LC_BATCH_PAIRS / M : 1;
    if (nBlock > nQuery)
        nBlock = nQuery ? nQuery : 1;
    bq_block b;
    memset(&b, 0, sizeof b);
    b.L = L;
    b.s = s;
    b.opt = opt;
    b.aAllow = aAllow;
    b.first = first;
    b.end = end;
    b.xPairs = xPairs;
    b.ctx = ctx;
    genie_status rc = GENIE_OK;
    b.aState = calloc(nBlock, sizeof *b.aState);
    b.aDc = malloc(nBlock * M * sizeof *b.aDc);
    b.aPair = malloc(2 * (size_t)LC_BATCH_PAIRS * sizeof *b.aPair);
    b.aOut = malloc((size_t)LC_BATCH_PAIRS * sizeof *b.aOut);
    if (!b.aState || !b.aDc || !b.aPair || !b.aOut) {
        rc = util_error(GENIE_ENOMEM, "out of memory for a batched metric search");
        goto done;
    }
    for (size_t q0 = 0; q0 < nQuery; q0 += nBlock) {
        b.nQ = nQuery - q0 < nBlock ? nQuery - q0 : nBlock;
        b.q0 = q0;
        for (size_t q = 0; q < b.nQ; q++) {
            bq_state *st = &b.aState[q];
            memset(st, 0, sizeof *st);
            st->stop = end;
            st->iA = UINT32_MAX;
            if (k && !(st->aHit = malloc(k * sizeof *st->aHit))) {
                rc = util_error(GENIE_ENOMEM, "out of memory for %zu neighbours", k);
                goto done;
            }
            st->nCap = k;
        }
        GENIE_TRY_GOTO(rc, run_block(&b), done);
        for (size_t q = 0; q < b.nQ; q++) {
            bq_state *st = &b.aState[q];
            if (st->nHit > 1)
                qsort(st->aHit, st->nHit, sizeof *st->aHit, lc_cmp_hit);
            res->anDist[q0 + q] = st->nDist;
            res->anHit[q0 + q] = st->nHit;
            if (st->nHit) {
                res->aaHit[q0 + q] = st->aHit;
                st->aHit = NULL;
            }
            free(st->aHit);
            st->aHit = NULL;
        }
    }
done:
    for (size_t q = 0; b.aState && q < nBlock; q++)
        free(b.aState[q].aHit);
    free(b.aState);
    free(b.aDc);
    free(b.aPair);
    free(b.aOut);
    return rc;
}
