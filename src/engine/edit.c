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
    static const char owner; /* the slot of the resident strings (index.h) */
    index_device *d = &idx->aDev[0]; /* the module computes on GPU 0 */
    index_slot *s = index_device_slot(d, &owner, be->pEdit->xFree);
    if (!s)
        return GENIE_ENOMEM;
    genie_status rc = be->pEdit->xDistances(&s->p, b);
    pthread_mutex_unlock(&d->lock);
    return rc;
}
