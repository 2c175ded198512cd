/*
 * The recall plan of a batch of string queries (recall.h): which modelled
 * edit rate the batch is closest to, measured before K is chosen.
 *
 * The estimate of a sequences index holds one curve per edit rate (10% to
 * 40% of the length) and, for each pseudo-query, its level signal: the
 * edit distance to the best of its first RECALL_SIGNAL_CANDIDATES
 * candidates, per mille of its length.  Here the same signal is measured
 * on the batch by a pilot search (k = 1, K = the estimate's signal depth)
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

#include "genie/sequences.h"
#include "util/error.h"

/* The mean level signal of the batch, per mille; -1 when no pilot query had a candidate. */
static genie_status batch_signal(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                 const char *const *queries, const size_t *lengths, size_t n, uint32_t depth,
                                 const genie_search_options *opt, double *pSignal)
{
    *pSignal = -1;
    size_t m = n < RECALL_SAMPLE ? n : RECALL_SAMPLE;
    const char **az = malloc((m ? m : 1) * sizeof *az);
    size_t *an = malloc((m ? m : 1) * sizeof *an);
    genie_seq_results *r = NULL;
    genie_status rc = GENIE_OK;
    if (!az || !an) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %zu pilot queries", m);
        goto done;
    }
    for (size_t i = 0; i < m; i++) {
        size_t q = i * n / m;
        az[i] = queries[q];
        an[i] = lengths[q];
    }
    genie_seq_options so = {.k = 1, .candidates = depth};
    GENIE_TRY_GOTO(rc, genie_seq_search_parts(idx, first_part, n_parts, az, an, m, &so, opt, &r), done);
    double sum = 0;
    size_t nUsed = 0;
    for (size_t i = 0; i < m; i++) {
        size_t nHit;
        const genie_seq_hit *aHit = genie_seq_results_get(r, i, &nHit, NULL, NULL);
        if (nHit) {
            sum += recall_signal(aHit[0].distance, an[i]);
            nUsed++;
        }
    }
    if (nUsed)
        *pSignal = sum / (double)nUsed;
done:
    genie_seq_results_free(r);
    free(az);
    free(an);
    return rc;
}

genie_status recall_plan_sequences(const genie_index *idx, uint32_t first_part, uint32_t n_parts,
                                   const char *const *queries, const size_t *lengths, size_t n, uint32_t k,
                                   double target, const genie_search_options *opt, recall_plan *out)
{
    const recall_estimate *e;
    GENIE_TRY(recall_get(idx, opt->threads, RECALL_COMPUTE, &e));
    double signal = -1;
    if (e->signalDepth && n)
        GENIE_TRY(batch_signal(idx, first_part, n_parts, queries, lengths, n, e->signalDepth, opt, &signal));
    return recall_plan_for(idx, k, target, signal, opt->threads, out);
}
