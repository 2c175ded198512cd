/*
 * Recall estimates of the approximate front-ends (sets, sequences, vectors
 * LSH) and the choice of a candidate count K for a recall target.
 *
 * The estimate.  RECALL_SAMPLE objects of the index, drawn without
 * replacement by a fixed seed, are perturbed into pseudo-queries the way
 * the front-end's queries are expected to differ from the data (vectors:
 * left out of their own answers instead; recall_sample.c says how).  For each pseudo-query q the exact answer
 * (the front-end's exact mode, or exact k-NN) gives the scores of its
 * RECALL_KMAX best objects, and one candidate search by match count with
 * K = Kmax = min(n, RECALL_KMAX_CANDIDATES) gives the candidates in their
 * rank order (match count descending, smaller id first; the list at a
 * smaller K is a prefix of it, so one search serves every K).  For the
 * candidate at position p its class c_p is the number of objects whose
 * score is strictly better than its own (capped: only candidates with
 * c_p < RECALL_KMAX are stored).
 *
 * Why that suffices.  The search returns the k best of the first K
 * candidates by exact score.  A returned answer is correct when its score
 * is at least the k-th true score s_k (ties count as correct: an answer
 * as good as a true one is as good), i.e. when fewer than k objects beat
 * it, i.e. when its class is below k.  Among the first K candidates the
 * best ones come first, so the correct answers returned number
 *   min(k, |{p < K : c_p < k}|),
 * and recall@k(q, K) is that over min(k, nTrue(q)), nTrue(q) being how many
 * objects can be answers at all (sets: Jaccard > 0), capped at
 * RECALL_KMAX.  The estimate is the mean over the pseudo-queries with
 * nTrue > 0.  It is monotone in K, so the smallest K that reaches a target
 * is found by bisection.  Vectors under l2 keep one such table ("curve")
 * per radius 0..RECALL_RADIUS_MAX.
 *
 * The side file INDEX.recall caches the estimate; its layout is in
 * docs/FORMAT.md and recall.c.  Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_RECALL_H
#define GENIE_TRANSFORM_RECALL_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

#define RECALL_SAMPLE 200u
#define RECALL_KMAX 100u
#define RECALL_KMAX_CANDIDATES 4096u
#define RECALL_RADIUS_MAX 2u
#define RECALL_SEED 0x5eed7ecau
/* The perturbation, per mille: sets replace this share of the elements,
 * strings get this share of their length in random edits (at least one). */
#define RECALL_PERTURB_PERMILLE 200u

typedef struct recall_entry {
    uint32_t pos; /* the candidate's position in match-count order, < Kmax */
    uint32_t cls; /* objects strictly better than it, < kMax */
} recall_entry;

typedef struct recall_estimate {
    uint32_t type;      /* genie_index_type */
    uint64_t indexSize; /* the index file's size and header CRC32C */
    uint32_t indexCrc;
    uint32_t nSample, kMax, nCandMax, nCurve, perturb, seed;
    uint32_t *aTrue;       /* nCurve * nSample: nTrue of each pseudo-query */
    uint64_t *aStart;      /* nCurve * nSample + 1: entries of (curve c, query q) */
    recall_entry *aEntry;  /* aStart[c * nSample + q] .. aStart[c * nSample + q + 1] */
    uint64_t nEntry, nEntryCap;
    uint32_t nRow;         /* rows appended so far */
} recall_estimate;

/* A choice for a recall target. */
typedef struct recall_plan {
    uint32_t K;      /* candidates; 0 when exact */
    uint32_t radius; /* l2 vectors */
    int exact;       /* no K <= Kmax at any radius reaches the target */
    double recall;   /* the estimate at that choice (1 when exact) */
} recall_plan;

void recall_estimate_free(recall_estimate *e);
/**
 * Append the next (curve, query) row, curve-major: @p n entries, positions
 * increasing.  e->nCurve and e->nSample must be set before the first.
 */
genie_status recall_estimate_add(recall_estimate *e, uint32_t nTrue, const recall_entry *a, size_t n);

/** The estimated recall@k with @p K candidates on curve @p curve (k <= kMax). */
double recall_predict(const recall_estimate *e, uint32_t curve, uint32_t k, uint32_t K);

/**
 * Check a recall target given with a front-end's options: 0 = none; else
 * it must lie in (0, 1], with no exact mode, no explicit candidate count,
 * and k <= RECALL_KMAX.  @p zExplicit names the option that excludes it
 * when set (NULL: none is set).
 */
genie_status recall_check_target(double target, uint32_t k, int exact, const char *zExplicit);

/**
 * The plan for recall@k >= @p target on @p idx: the smallest K <= Kmax
 * that reaches it at any radius, the smaller radius on a tie (re-ranking
 * K candidates costs K true distances, which dominates once K is in the
 * hundreds; a radius r costs 2r + 1 bucket lists per function instead of
 * one); exact when no K reaches it.  Loads or computes the estimate (recall_get).
 */
genie_status recall_plan_for(const genie_index *idx, uint32_t k, double target, unsigned threads, recall_plan *out);

/**
 * recall_check_target(), then, for a target: recall_plan_for() written
 * into a front-end's options: *pK = K, *pExact = the plan's exact,
 * *pEstimate = its recall.  Without a target *pEstimate = -1 and nothing
 * else changes.
 */
genie_status recall_apply(const genie_index *idx, uint32_t k, double target, int exact, const char *zExplicit,
                          unsigned threads, uint32_t *pK, int *pExact, double *pEstimate);

/**
 * The estimate of @p idx, kept with the open index: loaded from a valid
 * side file, else (when @p compute) computed and written to it.  With
 * !compute and no valid side file: *out = NULL, GENIE_OK, unless the side
 * file exists and is damaged (GENIE_ECORRUPT / GENIE_EFORMAT).
 */
genie_status recall_get(const genie_index *idx, unsigned threads, int compute, const recall_estimate **out);

/** Serialise @p e (the side file's bytes, checksum included); malloc'ed. */
genie_status recall_encode(const recall_estimate *e, unsigned char **paOut, size_t *pnOut);
/**
 * Parse and validate side-file bytes against @p idx (its type, size and
 * header checksum): GENIE_ECORRUPT for a damaged file, GENIE_EFORMAT for
 * another index's or an unknown version; @p zName names it in messages.
 */
genie_status recall_decode(const genie_index *idx, const unsigned char *a, size_t n, const char *zName,
                           recall_estimate *e);

/** Compute the estimate of @p idx (recall_sample.c). */
genie_status recall_sample(const genie_index *idx, unsigned threads, recall_estimate *e);

#endif
