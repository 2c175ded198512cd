/*
 * Several devices of one backend (devices.h), after Johnson, Douze and
 * Jégou, "Billion-scale similarity search with GPUs", section 5.4:
 * replicas split the queries, shards split the data.
 *
 * Replicas here cut each request (a chunk of queries) into one contiguous
 * slice per device; every slice is a request of its own, answered by the
 * backend on its device from a host thread of its own.  A slice's hits go
 * to the same places of the output as they would in one call, so the
 * answers are those of one device by construction.  The host threads take
 * slices from a shared counter, so a thread that could not be started
 * only makes another thread do more.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "engine/devices.h"
#include "util/error.h"
#include "util/threads.h"

const char *genie_gpu_mode_name(genie_gpu_mode mode)
{
    static const char *const azMode[] = {"auto", "shards", "replicas"};
    return (unsigned)mode < sizeof azMode / sizeof *azMode ? azMode[mode] : NULL;
}

void engine_thread_error_init(engine_thread_error *e)
{
    pthread_mutex_init(&e->lock, NULL);
    e->rc = GENIE_OK;
    e->zMessage[0] = 0;
}

void engine_thread_error_keep(engine_thread_error *e, genie_status rc)
{
    pthread_mutex_lock(&e->lock);
    if (e->rc == GENIE_OK) {
        e->rc = rc;
        snprintf(e->zMessage, sizeof e->zMessage, "%s", genie_last_error());
    }
    pthread_mutex_unlock(&e->lock);
}

genie_status engine_thread_error_raise(engine_thread_error *e)
{
    pthread_mutex_destroy(&e->lock);
    if (e->rc == GENIE_OK)
        return GENIE_OK;
    return util_error(e->rc, "%s", e->zMessage[0] ? e->zMessage : genie_strerror(e->rc));
}

/* Auto: shards when the index has a part for every device and its parts do not fit one device together. */
static genie_gpu_mode auto_mode(const engine_backend *be, const genie_index *idx, const genie_search_options *opt,
                                unsigned n, int device)
{
    if (idx->nPart < n || !be->pParts)
        return GENIE_GPU_REPLICAS;
    return be->pParts->xFits(idx, 0, idx->nPart, device, opt->gpu_memory) ? GENIE_GPU_REPLICAS : GENIE_GPU_SHARDS;
}

genie_status engine_devices_resolve(const engine_backend *be, const genie_index *idx, const genie_search_options *opt,
                                    engine_devices *out)
{
    memset(out, 0, sizeof *out);
    out->n = 1;
    out->mode = GENIE_GPU_REPLICAS;
    if (!opt->gpus || opt->n_gpus == 0)
        return GENIE_OK;
    if (!be->xDevices)
        return util_error(GENIE_EINVAL, "a list of GPUs, but backend %s runs on no GPU", be->zName);
    if (opt->n_gpus > INDEX_MAX_DEVICES)
        return util_error(GENIE_EINVAL, "%u GPUs: at most %d", opt->n_gpus, INDEX_MAX_DEVICES);
    if (!genie_gpu_mode_name(opt->gpu_mode))
        return util_error(GENIE_EINVAL, "unknown GPU mode %d", (int)opt->gpu_mode);
    int nDevice = be->xDevices();
    for (unsigned i = 0; i < opt->n_gpus; i++) {
        int g = opt->gpus[i];
        if (g < 0 || g >= nDevice || g >= INDEX_MAX_DEVICES)
            return util_error(GENIE_EINVAL, "GPU %d does not exist (this machine has %d, numbered from 0)", g,
                              nDevice);
        for (unsigned j = 0; j < i; j++)
            if (opt->gpus[j] == g)
                return util_error(GENIE_EINVAL, "GPU %d is listed twice", g);
        out->a[i] = g;
    }
    out->n = opt->n_gpus;
    if (out->n == 1)
        return GENIE_OK;
    out->mode = opt->gpu_mode == GENIE_GPU_AUTO ? auto_mode(be, idx, opt, out->n, out->a[0]) : opt->gpu_mode;
    if (out->mode == GENIE_GPU_SHARDS && idx->nPart < out->n)
        return util_error(GENIE_EINVAL,
                          "shards over %u GPUs need an index of at least %u parts (this one has %u: rebuild it "
                          "with --part-objects, --part-bytes or --gpu-memory), or use replicas",
                          out->n, out->n, idx->nPart);
    return GENIE_OK;
}

typedef struct replica_job {
    const engine_backend *be;
    const engine_devices *d;
    const engine_request *req;
    genie_hit *aHit;
    uint32_t *aN;
    atomic_uint next; /* the next slice to answer */
    engine_thread_error err;
    pthread_mutex_t phasesLock; /* the slices' phase times into req->pPhases */
} replica_job;

static void replica_worker(void *ctx, unsigned t)
{
    (void)t;
    replica_job *j = ctx;
    unsigned s;
    while ((s = atomic_fetch_add(&j->next, 1)) < j->d->n) {
        size_t lo = j->req->n * s / j->d->n, hi = j->req->n * (s + 1) / j->d->n;
        if (hi == lo)
            continue;
        engine_request r = *j->req;
        r.first += lo;
        r.n = hi - lo;
        r.aCountBound += lo;
        r.device = j->d->a[s];
        genie_gpu_phases phases;
        memset(&phases, 0, sizeof phases);
        r.pPhases = j->req->pPhases ? &phases : NULL;
        genie_status rc = j->be->xSearch(&r, j->aHit + lo * r.k, j->aN + lo);
        if (rc != GENIE_OK)
            engine_thread_error_keep(&j->err, rc);
        if (j->req->pPhases) {
            pthread_mutex_lock(&j->phasesLock);
            engine_phases_add(j->req->pPhases, &phases);
            pthread_mutex_unlock(&j->phasesLock);
        }
    }
}

genie_status engine_devices_search(const engine_backend *be, const engine_devices *d, const engine_request *req,
                                   genie_hit *aHit, uint32_t *aN)
{
    if (d->n == 1 || req->n < 2) {
        engine_request r = *req;
        r.device = d->a[0];
        return be->xSearch(&r, aHit, aN);
    }
    replica_job j = {.be = be, .d = d, .req = req, .aHit = aHit, .aN = aN};
    atomic_init(&j.next, 0);
    engine_thread_error_init(&j.err);
    pthread_mutex_init(&j.phasesLock, NULL);
    util_parallel_run(d->n, replica_worker, &j);
    pthread_mutex_destroy(&j.phasesLock);
    return engine_thread_error_raise(&j.err);
}
