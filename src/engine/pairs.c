/*
 * Batched pair distances through a backend's xPairs, with the index's
 * resident slot (pairs.h).
 */
#include "engine/pairs.h"
#include "util/error.h"

genie_status engine_pair_distances(const engine_backend *be, const genie_index *idx, const float *base,
                                   uint64_t nBase, uint32_t dim, genie_metric metric, const float *queries,
                                   uint64_t nQuery, const uint32_t *aPair, uint64_t nPair, float *out)
{
    if (!be->pPairs)
        return util_error(GENIE_ENOTSUP, "backend %s has no batched distances", be->zName);
    static const char owner; /* the slot of the resident base (index.h) */
    index_device *d = &idx->aDev[0]; /* the module computes on GPU 0 */
    index_slot *s = index_device_slot(d, &owner, be->pPairs->xFree);
    if (!s)
        return GENIE_ENOMEM;
    genie_status rc = be->pPairs->xDistances(&s->p, base, nBase, dim, metric, queries, nQuery, aPair, nPair, out);
    pthread_mutex_unlock(&d->lock);
    return rc;
}
