/*
 * Batched edit distances through a backend's xEdit, with the index's
 * resident slot (edit.h).
 */
#include "engine/edit.h"
#include "util/error.h"

genie_status engine_edit_distances(const engine_backend *be, const genie_index *idx, const engine_edit_batch *b)
{
    if (!be->pEdit)
        return util_error(GENIE_ENOTSUP, "backend %s has no batched edit distances", be->zName);
    index_device *d = &idx->aDev[0]; /* the module computes on GPU 0 */
    pthread_mutex_lock(&d->lock);
    if (d->pEdit && d->xEditFree != be->pEdit->xFree) {
        d->xEditFree(d->pEdit); /* another backend's resident strings */
        d->pEdit = NULL;
    }
    d->xEditFree = be->pEdit->xFree;
    genie_status rc = be->pEdit->xDistances(&d->pEdit, b);
    pthread_mutex_unlock(&d->lock);
    return rc;
}
