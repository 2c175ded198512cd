/*
 * The recall plan of a batch of string queries (recall.h): which modelled
 * edit rate the batch is closest to, measured before K is chosen.
 *
 * The estimate of a sequences index holds one curve per edit rate (10% to
 * 40% of the length) and, for each pseudo-query, its level signal: the
 * edit distance to the best of its first RECALL_SIGNAL_CANDIDATES
 * candidates, per mille of its length.  Here the same signal is measured
 * on the batch by a pilot search (k = 1, K = the estimate's signal depth:
 * the sequences front-end's own search, handed over as a recall_pilot_fn)
 * of at most RECALL_SAMPLE of its queries, spread evenly over it, and its
 * mean places the batch between two curves (recall_mix_for).  A query with
 * no candidate at all (shorter than an n-gram, or sharing none) has no
 * signal, in the pilot as in the estimate.
 *
 * Why a measured level rather than one fixed rate: the recall of a K
 * falls steeply with the edit rate (on a word list, K = 432 gives 0.92 at
 * 10% edits and 0.81 at 40%), so a model fixed at one rate misses the
 * target for heavier queries and overpays for lighter ones.  The distance
 * to the best early candidate is what the search itself sees first, it
 * grows with the edit rate, and it is measured identically on the
 * pseudo-queries and the real ones, so no assumption about how the
 * queries were made enters except that they look like edited data.
 *
 * Cost: the pilot is a search of min(n, 200) queries at K = 32, next to
 * the search itself at the chosen K (hundreds to thousands): a few per
 * cent for large batches, about as much as a default search for one
 * query.
 */
#include "transform/recall.h"

#include <stdlib.h>

#include "util/error.h"

/* The mean level signal of the batch, per mille; -1 when no pilot query had a candidate. */
static genie_status batch_signal(const char *const *queries, const size_t *lengths, size_t n, uint32_t depth,
                                 recall_pilot_fn *xPilot, void *pCtx, double *pSignal)
{
    *pSignal = -1;
    size_t m = n < RECALL_SAMPLE ? n : RECALL_SAMPLE;
    const char **az = malloc((m ? m : 1) * sizeof *az);
    size_t *an = malloc((m ? m : 1) * sizeof *an);
    uint32_t *aBest = malloc((m ? m : 1) * sizeof *aBest);
    genie_status rc = GENIE_OK;
    if (!az || !an || !aBest) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu pilot queries", m);
        goto done;
    }
    for (size_t i = 0; i < m; i++) {
        size_t q = i * n / m;
        az[i] = queries[q];
        an[i] = lengths[q];
    }
    GENIE_TRY_GOTO(rc, xPilot(pCtx, az, an, m, depth, aBest), done);
    double sum = 0;
    size_t nUsed = 0;
    for (size_t i = 0; i < m; i++) {
        if (aBest[i] != RECALL_NO_SIGNAL) {
            sum += recall_signal(aBest[i], an[i]);
            nUsed++;
        }
    }
    if (nUsed)
        *pSignal = sum / (double)nUsed;
done:
    free(az);
    free(an);
    free(aBest);
    return rc;
}

genie_status recall_plan_sequences(const genie_index *idx, const char *const *queries, const size_t *lengths,
                                   size_t n, uint32_t k, double target, unsigned threads,
                                   recall_sampler_fn *xSample, recall_pilot_fn *xPilot, void *pCtx,
                                   recall_plan *out)
{
    const recall_estimate *e;
    GENIE_TRY(recall_get(idx, threads, xSample, 0, &e));
    double signal = -1;
    if (e->signalDepth && n)
        GENIE_TRY(batch_signal(queries, lengths, n, e->signalDepth, xPilot, pCtx, &signal));
    return recall_plan_for(idx, k, target, signal, threads, xSample, out);
}
