/*
 * The batch driver shared by the c-PQ and GEN-SPQ methods: see cuda_batch.h.
 *
 * Host memory: per chunk query its growth shift and the start of its units
 * in the request's plan (all units, planned once: retries and batches
 * reuse it), plus pinned staging for one batch, laid out as
 *   [units | hits (nQuery * k) | infos (nQuery) | aux (2 nQuery + 1 words)]
 * and kept in the index's workspace between calls.  Device memory: one
 * workspace, grown only when a batch needs more, laid out as
 *   [units | hits (nQuery * k) | infos (nQuery) | method scratch]
 * each region aligned to CUDA_ALIGN.  The infos (and the method scratch,
 * if the method asks) are zeroed before every batch.  The workspace and
 * the stream are the index's cached ones (cuda_workspace) when no other
 * search holds them, so a call allocates nothing on the device in the
 * common case.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/count/cuda_batch.h"
extern "C" {
#include "util/threads.h"
}

/* Reruns of overflowing queries before giving up (each grows the table). */
#define DRIVER_MAX_SHIFT 8
/* Halvings of the budget tried when cudaMalloc says out of memory. */
#define DRIVER_MAX_SHRINK 8

typedef struct driver {
    const engine_request *req;
    const cuda_method *method;
    const cuda_index *dev;
    uint64_t budget;
    uint64_t *aUnitStart; /* per chunk query + 1: its units are h_aPlan[aUnitStart[i] .. aUnitStart[i + 1]) */
    cuda_unit *h_aPlan;   /* every unit of the request, tagged with weight only */
    uint8_t *aShift;      /* per chunk query */
    void *d_ws;
    uint64_t nWs;
    void *h_pin;          /* pinned staging, nPin bytes */
    uint64_t nPin;
    cuda_unit *h_aUnit;   /* carved from h_pin per batch */
    genie_hit *h_aHit;
    cuda_query_info *h_aInfo;
    uint32_t *h_aAux;
    cudaStream_t stream;
    cudaEvent_t aEv[5];   /* phase timing only */
    genie_gpu_phases *pT; /* the request's phase times (req->pPhases); NULL: not timed */
    plan_mode mode;
    uint32_t *d_aAllow;   /* the request's bitmap on the device (cuda_batch.d_aAllow), or NULL */
} driver;

static double ms_between(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    return cudaEventElapsedTime(&ms, a, b) == cudaSuccess ? ms : 0;
}

static uint64_t query_cost(const driver *d, uint32_t i, uint64_t *pScratch)
{
    uint64_t s = d->method->query_bytes(d->req, i, d->aShift[i]);
    *pScratch = s;
    if (s == UINT64_MAX)
        return UINT64_MAX;
    uint64_t nUnit = d->aUnitStart[i + 1] - d->aUnitStart[i];
    return s + nUnit * sizeof(cuda_unit) + (uint64_t)d->req->k * sizeof(genie_hit) +
           sizeof(cuda_query_info);
}

/*
 * Queries aList[pos..*pEnd) form the next batch; *pBytes is its workspace
 * size.  At least one query is taken; it fails if that one does not fit.
 */
static genie_status plan_batch(const driver *d, const uint32_t *aList, size_t nList, size_t pos, size_t *pEnd,
                               uint64_t *pBytes)
{
    uint64_t total = 4 * (uint64_t)CUDA_ALIGN, scratch;
    size_t end = pos;
    while (end < nList && end - pos < PLAN_MAX_BATCH_QUERIES) {
        uint64_t c = query_cost(d, aList[end], &scratch);
        if (c == UINT64_MAX || total + c > d->budget) {
            if (end > pos)
                break;
            return util_error(GENIE_EGPU,
                              "CUDA %s: query %zu needs %llu bytes of GPU memory, more than the budget of %llu "
                              "(count bound %u, k %u); lower k, or raise --gpu-memory",
                              d->method->zName, d->req->first + aList[end] + 1,
                              (unsigned long long)(c == UINT64_MAX ? 0 : c), (unsigned long long)d->budget,
                              d->req->aCountBound[aList[end]], d->req->k);
        }
        total += c;
        end++;
    }
    *pEnd = end;
    *pBytes = total;
    return GENIE_OK;
}

/* Pinned staging for a batch of @p nQuery queries and @p nUnit units, carved into d->h_a*. */
static genie_status ensure_host(driver *d, size_t nQuery, uint64_t nUnit)
{
    uint64_t nUnitBytes = cuda_align(nUnit * sizeof(cuda_unit));
    uint64_t nHitBytes = cuda_align((uint64_t)nQuery * d->req->k * sizeof(genie_hit));
    uint64_t nInfoBytes = cuda_align(nQuery * sizeof(cuda_query_info));
    uint64_t nAuxBytes = cuda_align((2 * (uint64_t)nQuery + 1) * sizeof(uint32_t));
    uint64_t need = nUnitBytes + nHitBytes + nInfoBytes + nAuxBytes;
    if (need > d->nPin) {
        uint64_t grow = d->nPin + d->nPin / 2 > need ? d->nPin + d->nPin / 2 : need;
        CUDA_TRY(cudaFreeHost(d->h_pin));
        d->h_pin = NULL;
        d->nPin = 0;
        cudaError_t err = cudaHostAlloc(&d->h_pin, grow, cudaHostAllocDefault);
        if (err != cudaSuccess) {
            d->h_pin = NULL;
            return util_error(GENIE_ENOMEM, "CUDA: cannot allocate %llu bytes of pinned host memory staging a "
                              "GPU batch of %zu queries: %s", (unsigned long long)grow, nQuery,
                              cudaGetErrorString(err));
        }
        d->nPin = grow;
    }
    char *p = (char *)d->h_pin;
    d->h_aUnit = (cuda_unit *)p;
    d->h_aHit = (genie_hit *)(p + nUnitBytes);
    d->h_aInfo = (cuda_query_info *)(p + nUnitBytes + nHitBytes);
    d->h_aAux = (uint32_t *)(p + nUnitBytes + nHitBytes + nInfoBytes);
    return GENIE_OK;
}

/* Grow the workspace to @p nBytes; *pOom is set when cudaMalloc ran out of memory. */
static genie_status ensure_device(driver *d, uint64_t nBytes, int *pOom)
{
    *pOom = 0;
    if (nBytes <= d->nWs)
        return GENIE_OK;
    CUDA_TRY(cudaFree(d->d_ws));
    d->d_ws = NULL;
    d->nWs = 0;
    cudaError_t err = cudaMalloc(&d->d_ws, nBytes);
    if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        d->d_ws = NULL;
        *pOom = 1;
        return GENIE_OK;
    }
    if (err != cudaSuccess)
        return cuda_fail(err, "cudaMalloc(workspace)");
    d->nWs = nBytes;
    return GENIE_OK;
}

static int hit_compare(const void *pa, const void *pb)
{
    const genie_hit *a = (const genie_hit *)pa, *b = (const genie_hit *)pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return a->object < b->object ? -1 : a->object > b->object;
}

static genie_status run_batch(driver *d, const uint32_t *aQuery, size_t nQuery, uint64_t nBytes)
{
    const engine_request *req = d->req;
    double t0 = d->pT ? util_now() : 0;
    uint64_t nUnit = 0;
    for (size_t j = 0; j < nQuery; j++)
        nUnit += d->aUnitStart[aQuery[j] + 1] - d->aUnitStart[aQuery[j]];
    GENIE_TRY(ensure_host(d, nQuery, nUnit));
    /* The batch's units from the plan, tagged with their batch position. */
    uint64_t u = 0;
    for (size_t j = 0; j < nQuery; j++) {
        uint64_t b = d->aUnitStart[aQuery[j]], e = d->aUnitStart[aQuery[j] + 1];
        for (uint64_t x = b; x < e; x++, u++) {
            d->h_aUnit[u] = d->h_aPlan[x];
            d->h_aUnit[u].uQueryWeight |= (uint32_t)j << 8;
        }
    }

    char *p = (char *)d->d_ws;
    uint64_t nUnitBytes = cuda_align(nUnit * sizeof(cuda_unit));
    uint64_t nHitBytes = cuda_align((uint64_t)nQuery * req->k * sizeof(genie_hit));
    uint64_t nInfoBytes = cuda_align(nQuery * sizeof(cuda_query_info));
    cuda_batch b;
    b.req = req;
    b.aQuery = aQuery;
    b.aShift = d->aShift;
    b.nQuery = (uint32_t)nQuery;
    b.d_aPosting = d->dev->d_aPosting;
    b.d_aAllow = d->d_aAllow;
    b.d_aUnit = (const cuda_unit *)p;
    b.h_aUnit = d->h_aUnit;
    b.nUnit = (uint32_t)nUnit;
    b.d_aHit = (genie_hit *)(p + nUnitBytes);
    b.d_aInfo = (cuda_query_info *)(p + nUnitBytes + nHitBytes);
    b.d_scratch = p + nUnitBytes + nHitBytes + nInfoBytes;
    b.h_aAux = d->h_aAux;
    b.stream = d->stream;
    b.evCounted = d->pT ? d->aEv[2] : NULL;
    uint64_t nScratch = nBytes - (nUnitBytes + nHitBytes + nInfoBytes);
    if (d->pT) {
        d->pT->stage_ms += (util_now() - t0) * 1e3;
        CUDA_TRY(cudaEventRecord(d->aEv[0], d->stream));
    }

    CUDA_TRY(cudaMemcpyAsync((void *)b.d_aUnit, d->h_aUnit, nUnit * sizeof(cuda_unit), cudaMemcpyHostToDevice,
                             d->stream));
    CUDA_TRY(cudaMemsetAsync(b.d_aInfo, 0, nInfoBytes + (d->method->zeroScratch ? nScratch : 0), d->stream));
    if (d->pT) {
        CUDA_TRY(cudaEventRecord(d->aEv[1], d->stream));
        CUDA_TRY(cudaEventRecord(d->aEv[2], d->stream)); /* re-recorded by methods that mark counting */
    }
    GENIE_TRY(d->method->run(&b));
    if (d->pT)
        CUDA_TRY(cudaEventRecord(d->aEv[3], d->stream));
    CUDA_TRY(cudaMemcpyAsync(d->h_aHit, b.d_aHit, (size_t)nQuery * req->k * sizeof(genie_hit),
                             cudaMemcpyDeviceToHost, d->stream));
    CUDA_TRY(cudaMemcpyAsync(d->h_aInfo, b.d_aInfo, nQuery * sizeof(cuda_query_info), cudaMemcpyDeviceToHost,
                             d->stream));
    if (d->pT)
        CUDA_TRY(cudaEventRecord(d->aEv[4], d->stream));
    CUDA_TRY(cudaStreamSynchronize(d->stream));
    if (d->pT) {
        d->pT->upload_ms += ms_between(d->aEv[0], d->aEv[1]);
        d->pT->count_ms += ms_between(d->aEv[1], d->aEv[2]);
        d->pT->select_ms += ms_between(d->aEv[2], d->aEv[3]);
        d->pT->download_ms += ms_between(d->aEv[3], d->aEv[4]);
        d->pT->batches++;
    }
    return GENIE_OK;
}

/*
 * Store the batch's answers in aHit/aN; overflowing queries go to aRetry
 * with a larger table.
 */
static genie_status collect(driver *d, const uint32_t *aQuery, size_t nQuery, genie_hit *aHit, uint32_t *aN,
                            uint32_t *aRetry, size_t *pnRetry)
{
    uint32_t k = d->req->k;
    for (size_t j = 0; j < nQuery; j++) {
        uint32_t i = aQuery[j];
        const cuda_query_info *info = &d->h_aInfo[j];
        if (info->overflow) {
            if (d->aShift[i] >= DRIVER_MAX_SHIFT)
                return util_error(GENIE_EGPU, "CUDA %s: query %zu: the hash table still overflowed after %d reruns",
                                  d->method->zName, d->req->first + i + 1, DRIVER_MAX_SHIFT);
            d->aShift[i]++;
            aRetry[(*pnRetry)++] = i;
            continue;
        }
        genie_hit *out = aHit + (size_t)i * k;
        memcpy(out, d->h_aHit + j * k, info->nHit * sizeof *out);
        if (info->nAbove > TOPK_SORT_MAX) /* the device sorted smaller sets */
            qsort(out, info->nAbove, sizeof *out, hit_compare);
        aN[i] = info->nHit;
    }
    return GENIE_OK;
}

/* Run every query of aList in as many batches as the budget needs. */
static genie_status run_list(driver *d, const uint32_t *aList, size_t nList, genie_hit *aHit, uint32_t *aN,
                             uint32_t *aRetry, size_t *pnRetry)
{
    size_t pos = 0;
    int nShrink = 0;
    while (pos < nList) {
        /* A cancelled request stops between batches: a running kernel is not interrupted. */
        if (engine_cancelled(d->req->cancel))
            return util_error(GENIE_ECANCELED, ENGINE_CANCELLED_MESSAGE);
        size_t end = pos;
        uint64_t nBytes = 0;
        GENIE_TRY(plan_batch(d, aList, nList, pos, &end, &nBytes));
        int oom;
        GENIE_TRY(ensure_device(d, nBytes, &oom));
        if (oom) {
            if (++nShrink > DRIVER_MAX_SHRINK)
                return util_error(GENIE_EGPU, "CUDA %s: out of GPU memory for a batch of %llu bytes",
                                  d->method->zName, (unsigned long long)nBytes);
            d->budget = nBytes / 2;
            continue;
        }
        GENIE_TRY(run_batch(d, aList + pos, end - pos, nBytes));
        double t0 = d->pT ? util_now() : 0;
        GENIE_TRY(collect(d, aList + pos, end - pos, aHit, aN, aRetry, pnRetry));
        if (d->pT)
            d->pT->collect_ms += (util_now() - t0) * 1e3;
        pos = end;
    }
    return GENIE_OK;
}

/*
 * Planning shares the queries out to threads PLAN_GRAB at a time, one
 * thread per PLAN_ITEMS_PER_THREAD query items (starting threads costs
 * tens of microseconds each).
 */
#define PLAN_GRAB 64u
#define PLAN_ITEMS_PER_THREAD 16384u

typedef struct plan_job {
    driver *d;
    int emit;    /* 0: count query i's units into aUnitStart[i + 1]; 1: write them */
    size_t next; /* the next query to take (atomic) */
} plan_job;

static void plan_worker(void *ctx, unsigned t)
{
    (void)t;
    plan_job *j = (plan_job *)ctx;
    driver *d = j->d;
    const engine_request *req = d->req;
    for (;;) {
        size_t b = __atomic_fetch_add(&j->next, PLAN_GRAB, __ATOMIC_RELAXED);
        if (b >= req->n)
            return;
        size_t e = req->n - b < PLAN_GRAB ? req->n : b + PLAN_GRAB;
        for (size_t i = b; i < e; i++) {
            if (!j->emit)
                d->aUnitStart[i + 1] =
                    plan_query_units(req->idx, &d->dev->kw, req->q, req->first + i, d->mode, 0, NULL, NULL);
            else if (d->aUnitStart[i + 1] > d->aUnitStart[i])
                plan_query_units(req->idx, &d->dev->kw, req->q, req->first + i, d->mode, 0,
                                 d->h_aPlan + d->aUnitStart[i], NULL);
        }
    }
}

/*
 * Upload the request's bitmap of allowed objects, padded with zero words
 * to whole tiles (the tile kernel reads a tile's bits whatever the view's
 * object count): (nTile * TILE_OBJECTS) / 32 words at least.
 */
static genie_status upload_allow(driver *d)
{
    const engine_request *req = d->req;
    uint64_t nWord = (req->idx->info.n_objects + 31) / 32, nPad = (uint64_t)d->dev->nTile * (TILE_OBJECTS / 32);
    if (nPad < nWord)
        nPad = nWord;
    CUDA_TRY(cudaMalloc(&d->d_aAllow, nPad * sizeof(uint32_t)));
    CUDA_TRY(cudaMemset(d->d_aAllow, 0, nPad * sizeof(uint32_t)));
    CUDA_TRY(cudaMemcpy(d->d_aAllow, req->aAllow, nWord * sizeof(uint32_t), cudaMemcpyHostToDevice));
    if (req->idx->info.n_objects % 32) {
        /* A slice's bits past its last object may be set (engine/filter.h): clear them on the device too. */
        uint32_t last;
        memcpy(&last, (const uint32_t *)(const void *)req->aAllow + nWord - 1, sizeof last);
        last &= (1u << (req->idx->info.n_objects % 32)) - 1u;
        CUDA_TRY(cudaMemcpy(d->d_aAllow + nWord - 1, &last, sizeof last, cudaMemcpyHostToDevice));
    }
    return GENIE_OK;
}

/*
 * Plan every query of the request once: d->aUnitStart and d->h_aPlan;
 * queries that scan no posting are left out of aList (no hits, no GPU).
 * Two passes over the queries (count, then write), each on up to
 * req->threads threads (all cores when 0) as the items call for, with a
 * prefix sum between.  Sets req->pPlanned first when the planning takes
 * at most half of those threads.
 */
static genie_status plan_request(driver *d, uint32_t *aList, size_t *pnList, uint32_t *aN)
{
    const engine_request *req = d->req;
    unsigned nThread = req->threads ? req->threads : util_ncores();
    const genie_queries *q = req->q;
    size_t nItem = req->n ? q->aItemEnd[req->first + req->n - 1] - (req->first ? q->aItemEnd[req->first - 1] : 0) : 0;
    size_t nWant = 1 + nItem / PLAN_ITEMS_PER_THREAD, nGrab = (req->n + PLAN_GRAB - 1) / PLAN_GRAB;
    if (nWant > nGrab)
        nWant = nGrab ? nGrab : 1;
    unsigned nCore = nThread;
    if (nThread > nWant)
        nThread = (unsigned)nWant;
    /* Planning on at most half the threads leaves the rest to another pass's planning: it may start now
     * (engine_request.pPlanned). */
    if (req->pPlanned && 2 * nThread <= nCore)
        engine_signal_set(req->pPlanned);
    plan_job j = {d, 0, 0};
    util_parallel_run(nThread, plan_worker, &j);
    uint64_t nUnit = 0;
    size_t nList = 0;
    d->aUnitStart[0] = 0;
    for (size_t i = 0; i < req->n; i++) {
        uint64_t n = d->aUnitStart[i + 1];
        d->aUnitStart[i + 1] = nUnit + n;
        nUnit += n;
        aN[i] = 0;
        if (n)
            aList[nList++] = (uint32_t)i;
    }
    d->h_aPlan = (cuda_unit *)malloc((nUnit ? nUnit : 1) * sizeof *d->h_aPlan);
    if (!d->h_aPlan)
        return util_error(GENIE_ENOMEM, "out of host memory for %llu GPU work units", (unsigned long long)nUnit);
    j.emit = 1;
    j.next = 0;
    util_parallel_run(nThread, plan_worker, &j);
    *pnList = nList;
    return GENIE_OK;
}

genie_status cuda_run_batches(const engine_request *req, const cuda_method *method, genie_hit *aHit, uint32_t *aN)
{
    genie_status rc = GENIE_OK;
    double tStart = req->pPhases ? util_now() : 0;
    driver d;
    memset(&d, 0, sizeof d);
    d.req = req;
    d.pT = req->pPhases;
    d.method = method;
    d.mode = method->listUnits ? PLAN_LISTS : req->loadBalance ? PLAN_SUBLISTS : PLAN_ITEMS;
    uint32_t *aList = NULL, *aRetry = NULL;
    GENIE_TRY(method->wide ? cuda_index_wide(req->idx, req->device, &d.dev)
                           : cuda_index_get(req->idx, req->device, &d.dev));
    /* The index's workspace, unless another search holds it (then a private one). */
    cuda_workspace *ws = d.dev->pWs;
    int cached = pthread_mutex_trylock(&ws->lock) == 0;
    if (cached) {
        d.d_ws = ws->d_mem;
        d.nWs = ws->nBytes;
        d.stream = ws->stream;
        d.h_pin = ws->h_pinned;
        d.nPin = ws->nPinned;
    }
    GENIE_TRY_GOTO(rc, cuda_memory_budget(req->gpuMemory, d.nWs, &d.budget), done);
    d.aUnitStart = (uint64_t *)malloc((req->n + 1) * sizeof *d.aUnitStart);
    d.aShift = (uint8_t *)calloc(req->n, 1);
    aList = (uint32_t *)malloc(req->n * sizeof *aList);
    aRetry = (uint32_t *)malloc(req->n * sizeof *aRetry);
    if (!d.aUnitStart || !d.aShift || !aList || !aRetry) {
        rc = util_error(GENIE_ENOMEM, "out of host memory planning %zu GPU queries", req->n);
        goto done;
    }
    {
        size_t nList = 0, nRetry = 0;
        double t0 = req->pPhases ? util_now() : 0;
        GENIE_TRY_GOTO(rc, plan_request(&d, aList, &nList, aN), done);
        if (req->pPhases)
            req->pPhases->plan_ms += (util_now() - t0) * 1e3;
        if (req->pPlanned) /* the host's share of this request is mostly done (engine_request.pPlanned) */
            engine_signal_set(req->pPlanned);
        if (d.dev->pfnReady && nList)
            GENIE_TRY_GOTO(rc, d.dev->pfnReady(d.dev->pReady), done);
        if (req->aAllow && nList)
            GENIE_TRY_GOTO(rc, upload_allow(&d), done);
        if (!d.stream)
            CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), done);
        if (req->pPhases)
            for (int e = 0; e < 5; e++)
                CUDA_TRY_GOTO(rc, cudaEventCreate(&d.aEv[e]), done);
        while (nList) {
            nRetry = 0;
            GENIE_TRY_GOTO(rc, run_list(&d, aList, nList, aHit, aN, aRetry, &nRetry), done);
            uint32_t *t = aList;
            aList = aRetry;
            aRetry = t;
            nList = nRetry;
        }
    }
done:
    if (cached) {
        ws->d_mem = d.d_ws;
        ws->nBytes = d.nWs;
        ws->stream = d.stream;
        ws->h_pinned = d.h_pin;
        ws->nPinned = d.nPin;
        pthread_mutex_unlock(&ws->lock);
    } else {
        if (d.stream)
            cudaStreamDestroy(d.stream);
        cudaFree(d.d_ws);
        cudaFreeHost(d.h_pin);
    }
    for (int e = 0; e < 5; e++)
        if (d.aEv[e])
            cudaEventDestroy(d.aEv[e]);
    cudaFree(d.d_aAllow);
    free(d.h_aPlan);
    free(d.aUnitStart);
    free(d.aShift);
    free(aList);
    free(aRetry);
    if (req->pPhases) {
        req->pPhases->total_ms += (util_now() - tStart) * 1e3;
        req->pPhases->calls++;
    }
    return rc;
}
