/*
 * engine_ivf_search (engine/ivf.h): the checks of a request and the choice
 * between the backend's GPU search and the CPU's.
 */
#include "engine/ivf.h"

#include "engine/backend.h"
#include "index/index.h"
#include "util/error.h"

/* The GPU's search through @p idx's device slot (NULL: a copy made and freed within the call). */
static genie_status gpu_search(const engine_backend *be, const genie_index *idx, int device, const engine_ivf *ix,
                               const engine_ivf_query *q, genie_neighbor *out, uint32_t *aN)
{
    const engine_ivf_ops *o = be->pIvf;
    if (!idx) {
        void *p = NULL;
        genie_status rc = o->xSearch(device, &p, ix, q, out, aN);
        if (p)
            o->xFree(p);
        return rc;
    }
    static const char owner; /* the slot of the device copy (index/index.h) */
    index_device *d = &idx->aDev[device];
    index_slot *s = index_device_slot(d, &owner, o->xFree);
    if (!s)
        return GENIE_ENOMEM;
    genie_status rc = o->xSearch(device, &s->p, ix, q, out, aN);
    pthread_mutex_unlock(&d->lock);
    return rc;
}

genie_status engine_ivf_search(const engine_ivf *ix, const genie_index *idx, ivf_cpu_cache *pCache,
                               const engine_ivf_query *q, genie_backend backend, int device, genie_neighbor *out,
                               uint32_t *aN, genie_backend *pUsed)
{
    uint32_t maxProbe = ix->nlist < IVF_MAX_PROBE ? ix->nlist : IVF_MAX_PROBE;
    if (q->k == 0 || q->k > IVF_MAX_K)
        return util_error(GENIE_EINVAL, "IVF search: k = %u, outside 1..%u", q->k, IVF_MAX_K);
    if (q->nprobe == 0 || q->nprobe > maxProbe)
        return util_error(GENIE_EINVAL, "IVF search: nprobe = %u, outside 1..%u (the index has %u lists%s)",
                          q->nprobe, maxProbe, ix->nlist, ix->nlist > IVF_MAX_PROBE ? ", 2048 probes at most" : "");
    if (q->nRefine && (!ix->pqM || q->nRefine < q->k || q->nRefine > IVF_MAX_REFINE))
        return util_error(GENIE_EINVAL, ix->pqM ? "IVF-PQ search: %u candidates to re-rank, outside k = %u..%u"
                                                : "IVF-Flat search: %u candidates to re-rank; its distances are exact "
                                                  "already (k = %u, at most %u)",
                          q->nRefine, q->k, IVF_MAX_REFINE);
    const engine_backend *be;
    GENIE_TRY(engine_backend_pick_cap(backend, ENGINE_CAP(pIvf), &be));
    if (be) {
        int nDevice = be->xDevices ? be->xDevices() : 1;
        if (device < 0 || device >= nDevice)
            return util_error(GENIE_EINVAL, "IVF search: GPU %d does not exist (%d found)", device, nDevice);
    }
    if (pUsed)
        *pUsed = be ? be->id : GENIE_BACKEND_CPU;
    if (q->n == 0)
        return GENIE_OK;
    if (engine_cancelled(q->cancel)) /* a GPU search is not cut short once it runs */
        return engine_cancelled_error();
    if (be)
        return gpu_search(be, idx, device, ix, q, out, aN);
    return ivf_cpu_search(ix, pCache, q, out, aN);
}
