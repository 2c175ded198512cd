/* Reading and freeing search results (genie_results_*). */
#include <stdlib.h>

#include "engine/engine.h"
#include "util/error.h"

size_t genie_results_queries(const genie_results *r)
{
    return r->nQuery;
}

const genie_hit *genie_results_get(const genie_results *r, size_t query, size_t *n)
{
    if (query >= r->nQuery) {
        *n = 0;
        return NULL;
    }
    uint64_t b = query ? r->aEnd[query - 1] : 0;
    *n = (size_t)(r->aEnd[query] - b);
    return r->aHit + b;
}

void genie_results_free(genie_results *r)
{
    if (!r)
        return;
    free(r->aEnd);
    free(r->aHit);
    free(r);
}

genie_status genie_results_copy(const genie_results *r, uint32_t k, int64_t *ids, int32_t *counts)
{
    util_error_clear();
    if (k == 0)
        return util_error(GENIE_EINVAL, "k must be at least 1");
    for (size_t q = 0; q < r->nQuery; q++) {
        size_t n;
        const genie_hit *aHit = genie_results_get(r, q, &n);
        if (n > k)
            n = k;
        int64_t *pId = ids + q * k;
        int32_t *pCount = counts ? counts + q * k : NULL;
        for (size_t i = 0; i < n; i++) {
            pId[i] = aHit[i].object;
            if (pCount && aHit[i].count > INT32_MAX)
                return util_error(GENIE_ERANGE, "query %zu, rank %zu: count %u does not fit a signed 32-bit count",
                                  q + 1, i + 1, aHit[i].count);
            if (pCount)
                pCount[i] = (int32_t)aHit[i].count;
        }
        for (size_t i = n; i < k; i++) {
            pId[i] = -1;
            if (pCount)
                pCount[i] = -1;
        }
    }
    return GENIE_OK;
}

uint64_t engine_results_hits(const genie_results *r)
{
    return r->nQuery ? r->aEnd[r->nQuery - 1] : 0;
}
