/*
 * A search of a live index (index/live.h) reads its base and its delta
 * at the same time (engine.c) and merges their answers here.  The
 * merge is exact for the same reason the parts' merge is (parts.c): an
 * object's count comes from the one index that holds it, every id of the
 * base is smaller than every id of the delta, so the best k of the union
 * of the two top-k lists, by count descending and then smaller id (the
 * base's hit wins a tie), is the top k of base and delta together.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/error.h"

genie_status engine_results_merge(const genie_results *a, const genie_results *b, uint32_t idBase, uint32_t k,
                                  genie_results **out)
{
    *out = NULL;
    genie_results *r = calloc(1, sizeof *r);
    uint64_t nMax = engine_results_hits(a) + engine_results_hits(b);
    if (r) {
        r->aEnd = malloc((a->nQuery ? a->nQuery : 1) * sizeof *r->aEnd);
        r->aHit = malloc((nMax ? nMax : 1) * sizeof *r->aHit);
    }
    if (!r || !r->aEnd || !r->aHit) {
        genie_results_free(r);
        return util_error(GENIE_ENOMEM, "out of memory merging the answers of %zu queries", a->nQuery);
    }
    uint64_t n = 0;
    for (size_t q = 0; q < a->nQuery; q++) {
        size_t nA, nB, i = 0, j = 0, m = 0;
        const genie_hit *pA = genie_results_get(a, q, &nA);
        const genie_hit *pB = genie_results_get(b, q, &nB);
        while (m < k && (i < nA || j < nB)) {
            if (j >= nB || (i < nA && pA[i].count >= pB[j].count)) {
                r->aHit[n] = pA[i++];
            } else {
                r->aHit[n] = pB[j++];
                r->aHit[n].object += idBase;
            }
            n++;
            m++;
        }
        r->aEnd[q] = n;
    }
    r->nQuery = a->nQuery;
    *out = r;
    return GENIE_OK;
}

void engine_stats_sum(genie_search_stats *a, const genie_search_stats *b)
{
    a->n_parts += b->n_parts;
    a->part_seconds += b->part_seconds;
    a->merge_seconds += b->merge_seconds;
    a->release_seconds += b->release_seconds;
    a->upload_seconds += b->upload_seconds;
    a->wait_seconds += b->wait_seconds;
    a->streamed |= b->streamed;
    a->overlapped |= b->overlapped;
    engine_phases_add(&a->phases, &b->phases);
}
