/*
 * The recall estimate of an inverted-file index and the choice of nprobe
 * (and of IVF-PQ's refinement depth) for a recall target (vectors_ivf.h).
 *
 * Pseudo-queries, as for LSH (docs/RECALL.md): S = min(n, RECALL_SAMPLE)
 * vectors of the index, one from each of S equal ranges of ids at a
 * seeded place, each left out of its own answers (leave-one-out: a query
 * drawn like the data, not in the index).  Their true RECALL_KMAX nearest
 * come from the exact search on the CPU.  recall@k is the share of the
 * true k nearest ids found, over min(k, the vectors there are besides the
 * query), averaged over the pseudo-queries.
 *
 * IVF-Flat needs no search: it ranks its candidates exactly, so it finds a
 * true neighbour exactly when the neighbour's list is probed, i.e. when
 * that list's rank among the query's nearest centroids (the coarse exact
 * search's order, ties to the smaller list) is below nprobe.  The ranks
 * are kept, and every nprobe's recall follows from them.
 *
 * IVF-PQ's recall depends on the codes too: the pseudo-queries are
 * searched on the CPU at the nprobe and depth asked (k + 1 neighbours and
 * depth + 1, the query itself dropped from the answers, or the last one
 * when it is not among them), and the results kept for later questions.
 */
#include "transform/vectors_ivf.h"

#include <stdlib.h>
#include <string.h>

#include "engine/exact.h"
#include "transform/recall.h"
#include "util/error.h"
#include "util/hash.h"

#define MEMO_MAX 256u

typedef struct memo {
    uint32_t k, nprobe, nRefine;
    double recall;
} memo;

struct vivf_recall {
    uint32_t nSample, kMax; /* kMax <= RECALL_KMAX: true neighbours kept per pseudo-query */
    uint32_t *aQuery;       /* nSample ids */
    float *aQueryVec;       /* nSample x dim */
    uint32_t *aTrue;        /* nSample x kMax ids, nearest first */
    uint32_t *aRank;        /* IVF-Flat: nSample x kMax, the rank of each true neighbour's list */
    memo aMemo[MEMO_MAX];
    uint32_t nMemo;
};

uint32_t vivf_pseudo_queries(uint64_t n, uint32_t *aOut)
{
    uint32_t S = n < RECALL_SAMPLE ? (uint32_t)n : RECALL_SAMPLE;
    uint64_t rng = RECALL_SEED;
    for (uint32_t s = 0; s < S; s++) {
        uint64_t lo = n * s / S, hi = n * (s + 1) / S;
        aOut[s] = (uint32_t)(lo + util_splitmix64(&rng) % (hi - lo));
    }
    return S;
}

void vivf_recall_free(vivf_recall *r)
{
    if (!r)
        return;
    free(r->aQuery);
    free(r->aQueryVec);
    free(r->aTrue);
    free(r->aRank);
    free(r);
}

/* The true neighbours of each pseudo-query, itself left out. */
static genie_status true_neighbours(const engine_ivf *ix, vivf_recall *r, unsigned threads)
{
    uint32_t kq = r->kMax + 1 < ix->n ? r->kMax + 1 : (uint32_t)ix->n;
    genie_neighbor *aOut = malloc((size_t)r->nSample * kq * sizeof *aOut);
    if (!aOut)
        return util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
    genie_vectors base = {ix->n, ix->dim, (float *)(uintptr_t)ix->aVec};
    genie_vectors q = {r->nSample, ix->dim, r->aQueryVec};
    genie_status rc = exact_search_in_index(NULL, &base, &q, ix->metric, GENIE_PRECISION_FP32, kq, GENIE_BACKEND_CPU,
                                            0, threads, aOut, NULL, NULL);
    for (uint32_t s = 0; rc == GENIE_OK && s < r->nSample; s++) {
        uint32_t n = 0;
        for (uint32_t j = 0; j < kq && n < r->kMax; j++)
            if (aOut[(size_t)s * kq + j].id != r->aQuery[s])
                r->aTrue[(size_t)s * r->kMax + n++] = aOut[(size_t)s * kq + j].id;
    }
    free(aOut);
    return rc;
}

/* IVF-Flat: the rank of each true neighbour's list among the pseudo-query's lists. */
static genie_status list_ranks(const engine_ivf *ix, vivf_recall *r, unsigned threads)
{
    uint32_t *aListOf = malloc((size_t)ix->n * sizeof *aListOf);
    genie_neighbor *aProbe = malloc((size_t)r->nSample * ix->nlist * sizeof *aProbe);
    uint32_t *aRankOf = malloc((size_t)ix->nlist * sizeof *aRankOf);
    genie_status rc = GENIE_OK;
    if (!aListOf || !aProbe || !aRankOf) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the recall estimate of %u lists", ix->nlist);
        goto done;
    }
    for (uint32_t l = 0; l < ix->nlist; l++)
        for (uint64_t p = ix->aListStart[l]; p < ix->aListStart[l + 1]; p++)
            aListOf[ix->aId[p]] = l;
    GENIE_TRY_GOTO(rc, ivf_probes(ix, r->aQueryVec, r->nSample, ix->nlist, threads, aProbe), done);
    for (uint32_t s = 0; s < r->nSample; s++) {
        for (uint32_t j = 0; j < ix->nlist; j++)
            aRankOf[aProbe[(size_t)s * ix->nlist + j].id] = j;
        for (uint32_t j = 0; j < r->kMax; j++)
            r->aRank[(size_t)s * r->kMax + j] = aRankOf[aListOf[r->aTrue[(size_t)s * r->kMax + j]]];
    }
done:
    free(aListOf);
    free(aProbe);
    free(aRankOf);
    return rc;
}

genie_status vivf_recall_make(const engine_ivf *ix, unsigned threads, vivf_recall **out)
{
    *out = NULL;
    if (ix->n < 2)
        return util_error(GENIE_EINVAL, "a recall estimate needs at least 2 vectors (the index has %llu)",
                          (unsigned long long)ix->n);
    vivf_recall *r = calloc(1, sizeof *r);
    if (!r)
        return util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
    r->kMax = ix->n - 1 < RECALL_KMAX ? (uint32_t)(ix->n - 1) : RECALL_KMAX;
    genie_status rc = GENIE_OK;
    r->aQuery = malloc(RECALL_SAMPLE * sizeof *r->aQuery);
    r->nSample = r->aQuery ? vivf_pseudo_queries(ix->n, r->aQuery) : 0;
    r->aQueryVec = malloc((size_t)r->nSample * ix->dim * sizeof *r->aQueryVec);
    r->aTrue = malloc((size_t)r->nSample * r->kMax * sizeof *r->aTrue);
    r->aRank = ix->pqM ? NULL : malloc((size_t)r->nSample * r->kMax * sizeof *r->aRank);
    if (!r->aQuery || !r->aQueryVec || !r->aTrue || (!ix->pqM && !r->aRank)) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
        goto fail;
    }
    for (uint32_t s = 0; s < r->nSample; s++)
        memcpy(r->aQueryVec + (size_t)s * ix->dim, ix->aVec + (size_t)r->aQuery[s] * ix->dim,
               ix->dim * sizeof(float));
    GENIE_TRY_GOTO(rc, true_neighbours(ix, r, threads), fail);
    if (!ix->pqM)
        GENIE_TRY_GOTO(rc, list_ranks(ix, r, threads), fail);
    *out = r;
    return GENIE_OK;
fail:
    vivf_recall_free(r);
    return rc;
}

/* IVF-Flat's recall@k at nprobe, from the ranks. */
static double flat_recall(const vivf_recall *r, uint32_t k, uint32_t nprobe)
{
    uint32_t kk = k < r->kMax ? k : r->kMax;
    double sum = 0;
    for (uint32_t s = 0; s < r->nSample; s++) {
        uint32_t hit = 0;
        for (uint32_t j = 0; j < kk; j++)
            hit += r->aRank[(size_t)s * r->kMax + j] < nprobe;
        sum += (double)hit / kk;
    }
    return sum / r->nSample;
}

/* IVF-PQ's recall@k at (nprobe, depth) by searching the pseudo-queries. */
static genie_status pq_recall(vivf_recall *r, const engine_ivf *ix, ivf_cpu_cache *cache, uint32_t k,
                              uint32_t nprobe, uint32_t nRefine, unsigned threads, double *pOut)
{
    for (uint32_t i = 0; i < r->nMemo; i++)
        if (r->aMemo[i].k == k && r->aMemo[i].nprobe == nprobe && r->aMemo[i].nRefine == nRefine) {
            *pOut = r->aMemo[i].recall;
            return GENIE_OK;
        }
    uint32_t kk = k < r->kMax ? k : r->kMax, kq = kk + 1;
    engine_ivf_query q = {.aQuery = r->aQueryVec, .n = r->nSample, .k = kq, .nprobe = nprobe,
                          .nRefine = nRefine ? (nRefine + 1 < IVF_MAX_REFINE ? nRefine + 1 : IVF_MAX_REFINE) : 0,
                          .threads = threads};
    if (q.nRefine && q.nRefine < kq)
        q.nRefine = kq;
    genie_neighbor *aOut = malloc((size_t)r->nSample * kq * sizeof *aOut);
    uint32_t *aN = malloc(r->nSample * sizeof *aN);
    genie_status rc = GENIE_OK;
    if (!aOut || !aN) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
        goto done;
    }
    GENIE_TRY_GOTO(rc, ivf_cpu_search(ix, cache, &q, aOut, aN), done);
    double sum = 0;
    for (uint32_t s = 0; s < r->nSample; s++) {
        const genie_neighbor *o = aOut + (size_t)s * kq;
        uint32_t hit = 0, taken = 0;
        for (uint32_t j = 0; j < aN[s] && taken < kk; j++) {
            if (o[j].id == r->aQuery[s])
                continue;
            taken++;
            for (uint32_t t = 0; t < kk; t++)
                hit += o[j].id == r->aTrue[(size_t)s * r->kMax + t];
        }
        sum += (double)hit / kk;
    }
    *pOut = sum / r->nSample;
    if (r->nMemo < MEMO_MAX)
        r->aMemo[r->nMemo++] = (memo){k, nprobe, nRefine, *pOut};
done:
    free(aOut);
    free(aN);
    return rc;
}

genie_status vivf_recall_at(vivf_recall *r, const engine_ivf *ix, ivf_cpu_cache *cache, uint32_t k,
                            uint32_t nprobe, uint32_t nRefine, unsigned threads, double *pRecall)
{
    if (!ix->pqM) {
        *pRecall = flat_recall(r, k, nprobe);
        return GENIE_OK;
    }
    return pq_recall(r, ix, cache, k, nprobe, nRefine, threads, pRecall);
}

genie_status vivf_recall_plan(vivf_recall *r, const engine_ivf *ix, ivf_cpu_cache *cache, uint32_t k,
                              double target, int depths, unsigned threads, uint32_t *pNprobe, uint32_t *pRefine,
                              double *pEstimate)
{
    uint32_t maxProbe = ix->nlist < IVF_MAX_PROBE ? ix->nlist : IVF_MAX_PROBE;
    double est = 0;
    if (!ix->pqM) {
        uint32_t p = 1;
        while (p < maxProbe && (est = flat_recall(r, k, p)) < target)
            p++;
        *pNprobe = p;
        *pRefine = 0;
        *pEstimate = flat_recall(r, k, p);
        return GENIE_OK;
    }
    double bestCost = -1, bestEst = -1, listLen = (double)ix->n / ix->nlist;
    uint32_t bestP = maxProbe, bestR = 0;
    /* Depth 0 (none) unless refining is required, then 2k, 4k, ... when it is allowed. */
    uint32_t R0 = depths == VIVF_DEPTH_REFINED ? 2 * k : 0;
    for (uint32_t R = R0; R <= IVF_MAX_REFINE; R = R ? 2 * R : depths != VIVF_DEPTH_NONE ? 2 * k : IVF_MAX_REFINE + 1) {
        /* The smallest nprobe reaching the target, assuming recall grows with it: doubling, then bisection. */
        uint32_t hi = 1;
        GENIE_TRY(pq_recall(r, ix, cache, k, hi, R, threads, &est));
        while (est < target && hi < maxProbe) {
            hi = hi * 2 < maxProbe ? hi * 2 : maxProbe;
            GENIE_TRY(pq_recall(r, ix, cache, k, hi, R, threads, &est));
        }
        if (est < target) { /* unreachable at this depth: remember the best there is */
            if (bestCost < 0 && est > bestEst) {
                bestEst = est;
                bestP = maxProbe;
                bestR = R;
            }
            continue;
        }
        uint32_t lo = hi / 2 + 1;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            GENIE_TRY(pq_recall(r, ix, cache, k, mid, R, threads, &est));
            if (est >= target)
                hi = mid;
            else
                lo = mid + 1;
        }
        GENIE_TRY(pq_recall(r, ix, cache, k, hi, R, threads, &est));
        double cost = hi * listLen * ix->pqM + (double)R * ix->dim;
        if (bestCost < 0 || cost < bestCost) {
            bestCost = cost;
            bestEst = est;
            bestP = hi;
            bestR = R;
        }
    }
    *pNprobe = bestP;
    *pRefine = bestR;
    *pEstimate = bestEst;
    return GENIE_OK;
}
