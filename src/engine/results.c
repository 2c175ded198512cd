/* Reading and freeing search results (genie_results_*). */
#include <stdlib.h>

#include "engine/engine.h"

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

uint64_t engine_results_hits(const genie_results *r)
{
    return r->nQuery ? r->aEnd[r->nQuery - 1] : 0;
}
