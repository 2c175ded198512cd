/*
 * Recall estimates of the approximate front-ends (sets, sequences, vectors
 * LSH) and the choice of a candidate count K for a recall target.
 *
 * The estimate.  RECALL_SAMPLE objects of the index, drawn without
 * replacement by a fixed seed, are perturbed into pseudo-queries the way
 * the front-end's queries are expected to differ from the data (vectors:
 * left out of their own answers instead; recall_sample.c says how).  For
 * each pseudo-query q the exact answer (the front-end's exact mode, or
 * exact k-NN) gives the scores of its RECALL_KMAX best objects, and one
 * candidate search by match count with K = Kmax = min(n,
 * RECALL_KMAX_CANDIDATES) gives the candidates in their rank order (match
 * count descending, smaller id first; the list at a smaller K is a prefix
 * of it, so one search serves every K).  For the candidate at position p
 * its class c_p is the number of objects whose score is strictly better
 * than its own (capped: only candidates with c_p < RECALL_KMAX are stored).
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
 * is found by bisection.
 *
 * Curves.  The table of one set of pseudo-queries is a curve.  Sets have
 * one; vectors under l2 one per radius 0..RECALL_RADIUS_MAX; sequences one
 * per modelled edit rate, RECALL_EDIT_LEVELS of them (10%, 20%, 30%, 40%
 * of the length).  Which rate a batch of real queries has is estimated at
 * search time by the level signal: a query's edit distance to the best of
 * its first RECALL_SIGNAL_CANDIDATES candidates, per mille of its length.
 * Each pseudo-query stores its own signal, measured the same way, so the
 * mean signal of a batch is placed between the mean signals of two
 * curves and the prediction interpolates them (recall_mix).
 *
 * The side file INDEX.recall caches the estimate; its layout is in
 * docs/FORMAT.md and recall.c.  Private to src/transform.
 *
 * Who computes it.  Each approximate type has a sampler of its own (in its
 * search's file: sets_search.c, sequences.c, vectors.c), built on the part
 * every type shares (recall_sample.h), and hands it to recall_get() and
 * recall_plan_for(), so that the estimate, which knows no type's search,
 * can have one computed; genie_recall_prepare() picks the sampler of the
 * index's type (recall_prepare.c).
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
/* Sets: the share of the elements replaced, per mille. */
#define RECALL_PERTURB_PERMILLE 200u
/* Sequences: curve c models round((c + 1) * 10% of the length) edits (at least one), 10% to 50%. */
#define RECALL_EDIT_LEVELS 5u
#define RECALL_EDIT_STEP_PERMILLE 100u
#define RECALL_SIGNAL_CANDIDATES 32u
#define RECALL_CURVES_MAX 5u
/* A row without a level signal (no candidate among the first ones). */
#define RECALL_NO_SIGNAL UINT32_MAX

typedef struct recall_entry {
    uint32_t pos; /* the candidate's position in match-count order, < Kmax */
    uint32_t cls; /* objects strictly better than it, < kMax */
} recall_entry;

typedef struct recall_estimate {
    uint32_t type;      /* genie_index_type */
    uint64_t indexSize; /* the index file's size and header CRC32C */
    uint32_t indexCrc;
    uint32_t nSample, kMax, nCandMax, nCurve, seed;
    uint32_t signalDepth;  /* the candidates of the level signal; 0: none */
    uint32_t aPerturb[RECALL_CURVES_MAX]; /* per curve, per mille */
    uint32_t *aTrue;       /* nCurve * nSample: nTrue of each pseudo-query */
    uint32_t *aSignal;     /* nCurve * nSample: its level signal, or RECALL_NO_SIGNAL */
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
    double perturb;  /* sequences: the modelled edit rate it assumed, per mille; else -1 */
} recall_plan;

/* A prediction's curves: weight 1 - w on curve a, w on curve b. */
typedef struct recall_mix {
    uint32_t a, b;
    double w;
} recall_mix;

void recall_estimate_free(recall_estimate *e);
/**
 * Append the next (curve, query) row, curve-major: @p n entries, positions
 * increasing, and the row's level signal.  e->nCurve and e->nSample must be
 * set before the first.
 */
genie_status recall_estimate_add(recall_estimate *e, uint32_t nTrue, uint32_t signal, const recall_entry *a,
                                 size_t n);

/** The estimated recall@k with @p K candidates on curve @p curve (k <= kMax). */
double recall_predict(const recall_estimate *e, uint32_t curve, uint32_t k, uint32_t K);

/**
 * The curves of sequences for a batch whose mean level signal is @p signal
 * (per mille): the two curves whose mean signals enclose it, interpolated
 * linearly; below the lightest curve the lightest, above the heaviest the
 * heaviest.  @p signal < 0 (none measured): the heaviest curve.
 */
recall_mix recall_mix_for(const recall_estimate *e, double signal);

/**
 * Check a recall target given with a front-end's options: 0 = none; else
 * it must lie in (0, 1], with no exact mode, no explicit candidate count,
 * and k <= RECALL_KMAX.  @p zExplicit names the option that excludes it
 * when set (NULL: none is set).
 */
genie_status recall_check_target(double target, uint32_t k, int exact, const char *zExplicit);

/**
 * A type's sampler: compute the estimate of @p idx into @p e (on @p threads
 * CPU threads, 0 = all cores) from its own searches (recall_sample.h).
 * @return GENIE_OK, the searches' errors, GENIE_ENOMEM; @p e is left empty
 *         on failure.
 */
typedef genie_status recall_sampler_fn(const genie_index *idx, unsigned threads, recall_estimate *e);

/**
 * The plan for recall@k >= @p target on @p idx: the smallest K <= Kmax
 * that reaches it at any radius, the smaller radius on a tie (re-ranking
 * K candidates costs K true distances, which dominates once K is in the
 * hundreds; a radius r costs 2r + 1 bucket lists per function instead of
 * one); for sequences on the curves recall_mix_for(@p signal) picks (the
 * batch's mean level signal; ignored by the other types); exact when no
 * K reaches it.  Loads the estimate or computes it with @p xSample
 * (recall_get).
 */
genie_status recall_plan_for(const genie_index *idx, uint32_t k, double target, double signal, unsigned threads,
                             recall_sampler_fn *xSample, recall_plan *out);

/*
 * A default recall target stored in an index (vectors: the target of the
 * searches given none), in millionths.  recall_default_target() checks a
 * build's @p *pTarget (0: @p dflt; else in [1e-6, 1]) and rounds it to
 * what the file will hold, so the build's value and the reopened one are
 * the same double; recall_from_millionths() reads one back (0, the value
 * of files written before the field: @p dflt).
 */
genie_status recall_default_target(double *pTarget, double dflt);
uint32_t recall_to_millionths(double target);
double recall_from_millionths(uint32_t v, double dflt);

/** A query's level signal: @p distance per mille of its length @p n (at least 1). */
uint32_t recall_signal(uint32_t distance, size_t n);

/**
 * A pilot search of sequences (recall_plan_sequences): for each of the
 * @p n queries, the edit distance of the best of its first @p depth
 * candidates into aBest[i], or RECALL_NO_SIGNAL when it has none.
 */
typedef genie_status recall_pilot_fn(void *ctx, const char *const *queries, const size_t *lengths, size_t n,
                                     uint32_t depth, uint32_t *aBest);

/**
 * recall_plan_for() for a batch of string queries, with the batch's level
 * signal measured by @p xPilot (the search's own, with @p pCtx) on at most
 * RECALL_SAMPLE of them (recall_level.c).  The plan's perturb is the edit
 * rate it assumed.
 */
genie_status recall_plan_sequences(const genie_index *idx, const char *const *queries, const size_t *lengths,
                                   size_t n, uint32_t k, double target, unsigned threads,
                                   recall_sampler_fn *xSample, recall_pilot_fn *xPilot, void *pCtx,
                                   recall_plan *out);

/**
 * The estimate of @p idx, kept with the open index: loaded from a valid
 * side file, else (when @p xSample is not NULL) computed by it and written
 * to the side file: a write that fails is an error when @p mustWrite (a
 * build: genie_recall_write), else not (a cache; the estimate stays in
 * memory).  Without @p xSample and without a valid side file: *out = NULL,
 * GENIE_OK, unless the side file exists and is damaged (GENIE_ECORRUPT /
 * GENIE_EFORMAT).
 */
genie_status recall_get(const genie_index *idx, unsigned threads, recall_sampler_fn *xSample, int mustWrite,
                        const recall_estimate **out);

/**
 * recall_get() without computing: the estimate of @p idx when one is at
 * hand (kept with the open index, or a valid side file) and it describes
 * what a search of @p idx reads; *out = NULL, GENIE_OK otherwise (an index
 * not opened from a file, a live index whose log holds writes, no side
 * file, or one that is damaged or another index's: a cache a plain search
 * does without; a search with a recall target reports it).
 */
genie_status recall_at_hand(const genie_index *idx, unsigned threads, const recall_estimate **out);

/** Serialise @p e (the side file's bytes, checksum included); malloc'ed. */
genie_status recall_encode(const recall_estimate *e, unsigned char **paOut, size_t *pnOut);
/**
 * Parse and validate side-file bytes against @p idx (its type, size and
 * header checksum): GENIE_ECORRUPT for a damaged file, GENIE_EFORMAT for
 * another index's or an unknown version; @p zName names it in messages.
 */
genie_status recall_decode(const genie_index *idx, const unsigned char *a, size_t n, const char *zName,
                           recall_estimate *e);

#endif
