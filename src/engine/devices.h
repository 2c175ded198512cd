/*
 * One search over several devices of a backend (several GPUs): which
 * devices, shared how, and the replicas' split of a request.  The shards'
 * side (parts spread over devices) is in parts.c.
 */
#ifndef GENIE_ENGINE_DEVICES_H
#define GENIE_ENGINE_DEVICES_H

#include <pthread.h>

#include "engine/backend.h"
#include "index/index.h"

typedef struct engine_devices {
    unsigned n;                /* at least 1 */
    int a[INDEX_MAX_DEVICES];  /* device ordinals, distinct */
    genie_gpu_mode mode;       /* SHARDS or REPLICAS when n > 1 */
} engine_devices;

/**
 * The devices of @p opt (gpus, n_gpus, gpu_mode) for backend @p be on
 * @p idx, checked: each ordinal exists and appears once; "auto" resolved.
 * @return GENIE_OK, GENIE_EINVAL (a GPU list for a backend without
 *         devices, an unknown or repeated ordinal, shards of an index with
 *         fewer parts than GPUs).
 */
genie_status engine_devices_resolve(const engine_backend *be, const genie_index *idx, const genie_search_options *opt,
                                    engine_devices *out);

/**
 * Answer @p req on every device of @p d: one device, directly; several
 * (replicas), the request's queries cut into d->n contiguous slices, each
 * answered on its own device by its own host thread.  Writes what
 * xSearch writes, for the whole request.
 */
genie_status engine_devices_search(const engine_backend *be, const engine_devices *d, const engine_request *req,
                                   genie_hit *aHit, uint32_t *aN);

/**
 * The message of a failure on another thread, kept to be raised again on
 * the calling one (errors are per thread): engine_thread_error_keep() on
 * the failing thread, engine_thread_error_raise() after the join.
 */
typedef struct engine_thread_error {
    pthread_mutex_t lock;
    genie_status rc;
    char zMessage[512];
} engine_thread_error;

void engine_thread_error_init(engine_thread_error *e);
void engine_thread_error_keep(engine_thread_error *e, genie_status rc);
genie_status engine_thread_error_raise(engine_thread_error *e);

#endif
