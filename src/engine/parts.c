/*
 * Searching an index of several parts (Zhou et al. (GENIE) III-D, "multiple
 * loadings").
 *
 * Parts cut the objects by id into consecutive ranges (index/format.h), so
 * an object's count comes from one part alone and the global top-k of a
 * query is the best k of the union of the parts' top-k lists.  The search
 * therefore loops over parts, outermost, so each part is loaded once per
 * batch: for each part the backend answers every chunk of queries on the
 * part's view (part-relative ids, its own count bounds, k clamped to the
 * part's objects), and each query's answer is merged into a running best
 * list of k hits (aBest, nQuery * k hits on the host).  Parts come in id
 * order, so every id already in aBest is smaller than every id of the
 * current part: a merge of two sorted lists that prefers aBest on equal
 * counts gives exactly the single-load order (count descending, then
 * smaller object id), ties across a part boundary included.
 *
 * Pruning.  Once a query's best list is full, an object of a later part
 * enters it only with a count above the k-th best count so far (an equal
 * count loses to the earlier, smaller id), so the backend is asked for that
 * part with the query's minimum count raised to k-th best + 1.  The
 * backends read minimum counts through engine_query_threshold(), so a
 * shallow copy of the query store with its own minimum counts (qPart)
 * carries this to every backend; the merge stays exact either way.  Without
 * it every part would select a full top-k of candidates that mostly lose.
 *
 * Residency.  Before a part, its pages are read ahead (index_part_load);
 * after it they are dropped (index_part_release), so a CPU search holds
 * about one part of the index in memory.
 *
 * A backend that keeps parts in a memory of its own (a GPU) has parts
 * hooks in the backend table (backend.h), and this file knows no more of
 * devices than those hooks.  xBegin decides from the budget (--gpu-memory,
 * or most of the free memory): when the parts fit in half of it together,
 * each part's view keeps its own device copy across searches (resident);
 * otherwise the parts stream through two device buffers, and the loop here
 * starts the next part's upload as soon as the current part's turn comes,
 * so that its staging and copy overlap the current part's matching (or,
 * with serial_upload or room for one buffer only, after the current part
 * is done).  A part's own upload is waited for by the backend once it has
 * planned its queries.  The time spent starting uploads and waiting for
 * them is the search's wait_seconds.  The batches of a streamed search get
 * the budget minus the buffers.  A resident part whose upload fails for
 * lack of device memory frees the other parts' copies and is tried once
 * more, each part's copy freed after its use from then on.  Device copies
 * change under the index's own lock of that device, held for the whole
 * search.
 *
 * Several devices (devices.h).  Replicas: one lane over every part, its
 * chunks split over the devices (engine_devices_search); every device must
 * hold every part (resident), else the search asks for shards.  Shards:
 * one lane per device, lane g holding the run of parts [P g / G, P (g + 1)
 * / G) and searching them on its device from a host thread of its own,
 * exactly as one device would (resident or streamed, pruned, merged).  The
 * lanes' best lists are then merged in lane order: every id of a lane is
 * smaller than every id of the next, so the same merge (the earlier list
 * wins a tie) gives the single-device order.
 */

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "engine/devices.h"
#include "engine/filter.h"
#include "engine/parts.h"
#include "index/index.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/threads.h"

/* One lane: a run of parts on one device (or, for replicas, on every device of pDevs). */
typedef struct parts_run {
    const genie_index *idx;
    const genie_queries *q;
    genie_queries qPart; /* q with aMinCount = aMin */
    uint32_t *aMin;      /* per query: its minimum count raised by the best list */
    const genie_search_options *opt;
    const uint64_t *aAllow;         /* the search's bitmap (global ids), or NULL */
    const uint64_t *aViewAllow;     /* the current part's slice of it, or NULL */
    engine_signal *pPlanned;        /* engine_request.pPlanned of every request, or NULL */
    uint64_t *aViewOwned;           /* that slice when it is a copy */
    uint64_t gpuMemory;             /* the batches' device budget: the caller's, less the streaming buffers */
    const engine_backend *be;
    const engine_parts_ops *pParts; /* be->pParts: the backend keeps parts in a memory of its own */
    engine_devices devs;            /* the devices every chunk runs on: one, or the replicas */
    uint32_t pFirst, pEnd;          /* the lane's parts */
    int reportProgress;             /* one lane, on the calling thread: it reports progress */
    uint32_t k;
    size_t chunk;
    engine_stream *pStream; /* parts streamed through the backend's memory; NULL when resident */
    int overlap;            /* streamed: the next part uploads during the current one's matching */
    int freeAfter;          /* resident, after running out of device memory: free each part after use */
    genie_hit *aBest;       /* nQuery * k, global ids */
    uint32_t *aNBest;       /* nQuery */
    genie_hit *aHit;        /* one chunk's answers on one part */
    uint32_t *aN;
    uint32_t *aBound;
    genie_hit *aTmp;        /* k, for merging */
    genie_search_stats stats; /* this lane's times */
} parts_run;

/* Free @p view's copies on the lane's devices. */
static void free_device(const parts_run *w, const genie_index *view)
{
    for (unsigned i = 0; i < w->devs.n; i++) {
        index_device *d = &view->aDev[w->devs.a[i]];
        pthread_mutex_lock(&d->lock);
        index_slots_release(d->aSlot); /* a view's slots hold the backend's copy of its part alone */
        pthread_mutex_unlock(&d->lock);
    }
}

/* Merge @p nPart hits of a later part (ids + @p base) into a query's best list. */
static uint32_t merge(genie_hit *aBest, uint32_t nBest, const genie_hit *aPart, uint32_t nPart, uint32_t base,
                      uint32_t k, genie_hit *aTmp)
{
    if (nPart == 0)
        return nBest; /* the usual case once pruning sets in */
    uint32_t i = 0, j = 0, n = 0;
    while (n < k && (i < nBest || j < nPart)) {
        if (j >= nPart || (i < nBest && aBest[i].count >= aPart[j].count)) {
            aTmp[n++] = aBest[i++];
        } else {
            aTmp[n].object = aPart[j].object + base;
            aTmp[n++].count = aPart[j++].count;
        }
    }
    memcpy(aBest, aTmp, n * sizeof *aTmp);
    return n;
}

/* One chunk of queries on one part, merged into aBest. */
static genie_status run_chunk(parts_run *w, genie_index *view, size_t first, size_t n)
{
    uint32_t kp = w->k < view->info.n_objects ? w->k : (uint32_t)view->info.n_objects;
    GENIE_TRY(engine_count_bounds(view, w->q, first, n, w->aBound));
    for (size_t qi = first; qi < first + n; qi++) {
        uint32_t m = w->q->aMinCount[qi];
        if (w->aNBest[qi] == w->k) {
            uint32_t c = w->aBest[qi * w->k + w->k - 1].count;
            if (c != UINT32_MAX && c + 1 > m)
                m = c + 1;
        }
        w->aMin[qi] = m;
    }
    if (engine_cancelled(w->opt->cancel))
        return engine_cancelled_error();
    engine_request req = {.idx = view, .q = &w->qPart, .first = first, .n = n, .k = kp, .aCountBound = w->aBound,
                          .threads = w->opt->threads, .gpuMemory = w->gpuMemory,
                          .loadBalance = w->opt->load_balance,
                          .pPhases = w->opt->time_phases ? &w->stats.phases : NULL, .cancel = w->opt->cancel,
                          .aAllow = w->aViewAllow, .pPlanned = w->pPlanned};
    double t0 = util_now();
    genie_status rc = engine_devices_search(w->be, &w->devs, &req, w->aHit, w->aN);
    if (rc == GENIE_EGPU && w->pParts && !w->pStream && !w->freeAfter) {
        /* Maybe the other parts' device copies crowd this one out: free them, and each part after use. */
        for (uint32_t p = w->pFirst; p < w->pEnd; p++)
            if (&w->idx->aPart[p] != view)
                free_device(w, &w->idx->aPart[p]);
        w->freeAfter = 1;
        rc = engine_devices_search(w->be, &w->devs, &req, w->aHit, w->aN);
    }
    GENIE_TRY(rc);
    double t1 = util_now();
    w->stats.part_seconds += t1 - t0;
    for (size_t i = 0; i < n; i++) {
        size_t qi = first + i;
        w->aNBest[qi] = merge(w->aBest + qi * w->k, w->aNBest[qi], w->aHit + i * kp, w->aN[i],
                              (uint32_t)view->firstObject, w->k, w->aTmp);
    }
    w->stats.merge_seconds += util_now() - t1;
    return GENIE_OK;
}

/* The first of the lane's parts from @p p on that holds objects the search may answer (pEnd when none). */
static uint32_t next_part(const parts_run *w, uint32_t p)
{
    while (p < w->pEnd && (w->idx->aPart[p].info.n_objects == 0 ||
                           filter_count_range(w->aAllow, w->idx->aPart[p].firstObject,
                                              w->idx->aPart[p].info.n_objects) == 0))
        p++;
    return p;
}

/* Streamed: start part @p p's upload, if there is such a part. */
static genie_status start_part(parts_run *w, uint32_t p)
{
    if (p >= w->pEnd)
        return GENIE_OK;
    double t0 = util_now();
    genie_status rc = w->pParts->xStart(w->pStream, &w->idx->aPart[p]);
    w->stats.wait_seconds += util_now() - t0;
    return rc;
}

/* Streamed: part @p view's buffer becomes its device copy; the next part's upload starts when overlapping. */
static genie_status ready_part(parts_run *w, genie_index *view, uint32_t next)
{
    GENIE_TRY(w->pParts->xReady(w->pStream, view));
    return w->overlap ? start_part(w, next) : GENIE_OK;
}

/* Streamed: part @p view is done; count its upload's time and the time waited for it. */
static genie_status done_part(parts_run *w, genie_index *view)
{
    double upload, wait;
    genie_status rc = w->pParts->xDone(w->pStream, view, &upload, &wait);
    w->stats.upload_seconds += upload;
    w->stats.wait_seconds += wait;
    return rc;
}

static genie_status run_parts(parts_run *w)
{
    const genie_index *idx = w->idx;
    size_t nQuery = w->q->nQuery;
    uint32_t p = next_part(w, w->pFirst);
    if (w->pStream)
        GENIE_TRY(start_part(w, p));
    while (p < w->pEnd) {
        genie_index *view = &idx->aPart[p];
        uint32_t next = next_part(w, p + 1);
        if (w->pStream)
            GENIE_TRY(ready_part(w, view, next));
        else
            index_part_load(view);
        free(w->aViewOwned);
        GENIE_TRY(filter_slice(w->aAllow, view->firstObject, view->info.n_objects, &w->aViewAllow, &w->aViewOwned));
        for (size_t first = 0; first < nQuery; first += w->chunk) {
            size_t n = nQuery - first < w->chunk ? nQuery - first : w->chunk;
            GENIE_TRY(run_chunk(w, view, first, n));
            if (w->reportProgress && w->opt->progress) {
                uint64_t nPart = w->pEnd - w->pFirst;
                w->opt->progress(w->opt->progress_ctx, ((uint64_t)(p - w->pFirst) * nQuery + first + n) / nPart,
                                 nQuery);
            }
        }
        if (w->pStream)
            GENIE_TRY(done_part(w, view));
        double t0 = util_now();
        if (w->freeAfter)
            free_device(w, view);
        index_part_release(view);
        w->stats.release_seconds += util_now() - t0;
        if (w->pStream && !w->overlap)
            GENIE_TRY(start_part(w, next));
        p = next;
    }
    return GENIE_OK;
}

/*
 * A lane's search: its parts placed on its devices under their locks
 * (resident or streamed; replicas must be resident), then the parts loop.
 */
static genie_status run_lane(parts_run *w)
{
    if (!w->pParts)
        return run_parts(w);
    const genie_index *idx = w->idx;
    genie_status rc = GENIE_OK;
    unsigned nLocked = 0;
    for (; rc == GENIE_OK && nLocked < w->devs.n; nLocked++) {
        int device = w->devs.a[nLocked];
        pthread_mutex_lock(&idx->aDev[device].lock);
        engine_stream *pStream = NULL;
        int overlap = 0;
        uint64_t left = w->opt->gpu_memory;
        rc = w->pParts->xBegin(idx, w->pFirst, w->pEnd, device, w->opt->gpu_memory, w->opt->serial_upload, &pStream,
                               &overlap, &left);
        if (rc == GENIE_OK && pStream && w->devs.n > 1) {
            w->pParts->xEnd(pStream);
            rc = util_error(GENIE_EGPU,
                            "replicas: the index's %u parts do not fit GPU %d together; use shards "
                            "(--gpu-mode shards) so that each GPU holds some of them",
                            idx->nPart, device);
        } else if (rc == GENIE_OK) {
            w->pStream = pStream;
            w->overlap = overlap;
            w->gpuMemory = left;
        }
    }
    if (rc == GENIE_OK)
        rc = run_parts(w);
    if (w->pStream)
        w->pParts->xEnd(w->pStream);
    while (nLocked > 0)
        pthread_mutex_unlock(&idx->aDev[w->devs.a[--nLocked]].lock);
    w->stats.streamed = w->pStream != NULL;
    w->stats.overlapped = w->overlap;
    return rc;
}

static genie_status lane_alloc(parts_run *w, size_t nQuery, size_t nChunk, uint32_t k)
{
    w->aBest = malloc(nQuery * k * sizeof *w->aBest);
    w->aNBest = calloc(nQuery, sizeof *w->aNBest);
    w->aHit = malloc(nChunk * k * sizeof *w->aHit);
    w->aN = malloc(nChunk * sizeof *w->aN);
    w->aBound = malloc(nChunk * sizeof *w->aBound);
    w->aTmp = malloc(k * sizeof *w->aTmp);
    w->aMin = malloc(nQuery * sizeof *w->aMin);
    w->qPart.aMinCount = w->aMin;
    if (!w->aBest || !w->aNBest || !w->aHit || !w->aN || !w->aBound || !w->aTmp || !w->aMin)
        return util_error(GENIE_ENOMEM, "out of memory for %zu queries with k = %u over %u parts", w->q->nQuery, k,
                          w->idx->nPart);
    return GENIE_OK;
}

static void lane_free(parts_run *w)
{
    free(w->aBest);
    free(w->aNBest);
    free(w->aHit);
    free(w->aN);
    free(w->aBound);
    free(w->aTmp);
    free(w->aMin);
    free(w->aViewOwned);
}

/* Move the best lists into the results, compactly. */
static genie_status collect(const parts_run *w, genie_results *r)
{
    size_t nQuery = w->q->nQuery;
    uint64_t total = 0;
    for (size_t i = 0; i < nQuery; i++)
        total += w->aNBest[i];
    genie_hit *aHit = realloc(r->aHit, (total ? total : 1) * sizeof *aHit);
    if (!aHit)
        return util_error(GENIE_ENOMEM, "out of memory for search results");
    r->aHit = aHit;
    uint64_t have = 0;
    for (size_t i = 0; i < nQuery; i++) {
        if (w->aNBest[i])
            memcpy(aHit + have, w->aBest + i * w->k, w->aNBest[i] * sizeof *aHit);
        have += w->aNBest[i];
        r->aEnd[i] = have;
    }
    r->nQuery = nQuery;
    return GENIE_OK;
}

/* Shards: the lanes, each on its own host thread. */
typedef struct lanes_job {
    parts_run *aLane;
    unsigned nLane;
    atomic_uint next;
    engine_thread_error err;
} lanes_job;

static void lane_worker(void *ctx, unsigned t)
{
    (void)t;
    lanes_job *j = ctx;
    unsigned l;
    while ((l = atomic_fetch_add(&j->next, 1)) < j->nLane) {
        genie_status rc = run_lane(&j->aLane[l]);
        if (rc != GENIE_OK)
            engine_thread_error_keep(&j->err, rc);
    }
}

/* Add a lane's times to the search's. */
static void add_lane_stats(genie_search_stats *stats, const genie_search_stats *lane)
{
    stats->part_seconds += lane->part_seconds;
    stats->merge_seconds += lane->merge_seconds;
    stats->release_seconds += lane->release_seconds;
    stats->upload_seconds += lane->upload_seconds;
    stats->wait_seconds += lane->wait_seconds;
    stats->streamed |= lane->streamed;
    stats->overlapped |= lane->overlapped;
    engine_phases_add(&stats->phases, &lane->phases);
}

genie_status engine_search_parts(const genie_index *idx, uint32_t iFirst, uint32_t iEnd, const genie_queries *q,
                                 const genie_search_options *opt, const uint64_t *aAllow, engine_signal *pPlanned,
                                 const engine_backend *be, const engine_devices *devs, uint32_t k, size_t chunk,
                                 genie_results *r, genie_search_stats *stats)
{
    size_t nQuery = q->nQuery ? q->nQuery : 1, nChunk = chunk < nQuery ? chunk : nQuery;
    if ((uint64_t)nQuery * k > SIZE_MAX / sizeof(genie_hit))
        return util_error(GENIE_ENOMEM, "%zu queries with k = %u do not fit in memory", q->nQuery, k);
    unsigned nLane = devs->n > 1 && devs->mode == GENIE_GPU_SHARDS ? devs->n : 1;
    parts_run *aLane = calloc(nLane, sizeof *aLane);
    if (!aLane)
        return util_error(GENIE_ENOMEM, "out of memory for %u lanes", nLane);
    genie_status rc = GENIE_OK;
    for (unsigned l = 0; l < nLane; l++) {
        parts_run *w = &aLane[l];
        w->idx = idx;
        w->q = q;
        w->qPart = *q;
        w->opt = opt;
        w->aAllow = aAllow;
        w->pPlanned = pPlanned;
        w->gpuMemory = opt->gpu_memory;
        w->be = be;
        w->pParts = be->pParts;
        w->k = k;
        w->chunk = chunk;
        w->reportProgress = nLane == 1; /* progress comes from the calling thread */
        if (nLane == 1) {
            w->devs = *devs;
            w->pFirst = iFirst;
            w->pEnd = iEnd;
        } else {
            w->devs.n = 1;
            w->devs.a[0] = devs->a[l];
            w->pFirst = iFirst + (uint32_t)((uint64_t)(iEnd - iFirst) * l / nLane);
            w->pEnd = iFirst + (uint32_t)((uint64_t)(iEnd - iFirst) * (l + 1) / nLane);
        }
        GENIE_TRY_GOTO(rc, lane_alloc(w, nQuery, nChunk, k), done);
    }
    if (nLane == 1) {
        rc = run_lane(&aLane[0]);
    } else {
        lanes_job j = {.aLane = aLane, .nLane = nLane};
        atomic_init(&j.next, 0);
        engine_thread_error_init(&j.err);
        util_parallel_run(nLane, lane_worker, &j);
        rc = engine_thread_error_raise(&j.err);
    }
    for (unsigned l = 0; l < nLane; l++)
        add_lane_stats(stats, &aLane[l].stats);
    if (rc != GENIE_OK)
        goto done;
    double t0 = util_now();
    for (unsigned l = 1; l < nLane; l++)
        for (size_t qi = 0; qi < q->nQuery; qi++)
            aLane[0].aNBest[qi] = merge(aLane[0].aBest + qi * k, aLane[0].aNBest[qi], aLane[l].aBest + qi * k,
                                        aLane[l].aNBest[qi], 0, k, aLane[0].aTmp);
    stats->merge_seconds += util_now() - t0;
    rc = collect(&aLane[0], r);
done:
    for (unsigned l = 0; l < nLane; l++)
        lane_free(&aLane[l]);
    free(aLane);
    return rc;
}
