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
    index_device *d = &idx->aDev[0]; /* the module computes on GPU 0 */
    pthread_mutex_lock(&d->lock);
    if (d->pPairs && d->xPairsFree != be->pPairs->xFree) {
        d->xPairsFree(d->pPairs); /* another backend's resident base */
        d->pPairs = NULL;
    }
    d->xPairsFree = be->pPairs->xFree;
    genie_status rc =
        be->pPairs->xDistances(&d->pPairs, base, nBase, dim, metric, queries, nQuery, aPair, nPair, out);
    pthread_mutex_unlock(&d->lock);
    return rc;
}
