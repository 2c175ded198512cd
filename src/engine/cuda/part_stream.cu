/*
 * Index parts streamed through the GPU (Zhou et al. (GENIE) III-D, multiple loadings,
 * with the transfers overlapped): see engine.h for the calls, parts.c for
 * the loop that makes them.
 *
 * The state of device d lives in the multi-part index's own slot of that
 * device (the module's slot of idx->aDev[d], cuda_slot_claim; only its
 * views carry device copies when resident), covers a run of parts [pFirst, pEnd) (all of
 * them, or one GPU's shard), and
 * is kept until the index is closed, so the buffers are allocated once:
 *   - one or two slots, each a device buffer and a pinned host buffer sized
 *     for the largest part, laid out as
 *       [postings | list offsets | list rows | tile rows]
 *     (the tile layout, engine/tile_lists.h), and a copy stream of its own;
 *   - per part, what the host derives from it, made on its first upload and
 *     kept: the tile rows and the planner's keyword table (a few words per
 *     list, against one per posting);
 *   - one batch workspace that the parts share (cuda_workspace).
 * Uploading a part into a slot copies its postings, list offsets and rows
 * into the slot's pinned buffer on several threads (the page faults of the
 * mapping included), 32 MiB at a time, each segment sent on the slot's
 * copy stream as soon as it is staged, and waits for the last on the same
 * thread.  When overlapping, that runs on a thread of its own, started as
 * the previous part begins to be matched, so the staging and the copy hide
 * behind the matching.  The part's view gets, as soon as it is its turn, a
 * cuda_index that points into the slot (with no free function: the slot
 * owns the memory), which every method uses as it would a resident index,
 * until the part is done; its pfnReady makes the batch driver wait for the
 * upload after planning the queries and before the first kernel, so the
 * planning hides part of the transfer too (the first part's included) and
 * the search waits only for what is left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/cuda/cuda_batch.h"
#include "engine/cuda/cuda_entry.h"
extern "C" {
#include "util/threads.h"
}

/*
 * Staging: the slot is filled segment by segment, each segment copied into
 * pinned memory by several threads (grabs of STAGE_CHUNK bytes) and then
 * sent to the device asynchronously, so the copy of one segment overlaps
 * the staging of the next.
 */
#define STAGE_SEGMENT (32u << 20)
#define STAGE_CHUNK (1u << 20)
#define STAGE_MAX_THREADS 16u
#define ERROR_MAX 512

/* Where a part's arrays lie in a slot (bytes from its start). */
typedef struct part_layout {
    uint64_t offList, offRowOf, offRow, total;
} part_layout;

/* What the host derives from one part, made on its first upload. */
typedef struct part_host {
    int made;
    uint32_t nTile;
    uint64_t nRow;
    uint32_t *aRowOf; /* n_keywords */
    uint32_t *aRow;   /* nRow * (nTile + 1) */
    plan_keywords kw;
} part_host;

typedef struct stream_slot {
    char *d_mem;
    char *h_pin;
    cudaStream_t copy;
    cuda_index dev;     /* the view's device copy while it is installed */
    genie_index *view;  /* the part being uploaded or installed; NULL when free */
    pthread_t worker;
    int running;        /* worker started and not joined yet */
    genie_status rc;    /* the upload's outcome, with its message */
    char zError[ERROR_MAX];
    double seconds;     /* the upload's own time */
    double waited;      /* the time the search spent waiting for it */
} stream_slot;

struct engine_stream {
    const genie_index *idx;
    int device;              /* the GPU the buffers live on */
    uint32_t pFirst, pEnd;   /* the parts it streams */
    uint32_t nSlot;
    uint64_t slotBytes;
    stream_slot aSlot[2];
    uint32_t next; /* the slot the next upload takes */
    int serial;
    part_host *aHost; /* per part of the index (those in [pFirst, pEnd) are used) */
    cuda_workspace *pWs;
};

static part_layout layout_of(const genie_index *v, uint32_t nTile, uint64_t nRow)
{
    part_layout L;
    L.offList = cuda_align(v->info.n_postings * sizeof(uint32_t));
    L.offRowOf = L.offList + cuda_align((v->info.n_keywords + 1) * sizeof(uint64_t));
    L.offRow = L.offRowOf + cuda_align(v->info.n_keywords * sizeof(uint32_t));
    L.total = L.offRow + cuda_align(nRow * ((uint64_t)nTile + 1) * sizeof(uint32_t));
    return L;
}

/* Part @p p's device bytes (counting its tile rows without making them when aHost has none). */
static uint64_t part_bytes(const genie_index *idx, const part_host *aHost, uint32_t p)
{
    const genie_index *v = &idx->aPart[p];
    if (aHost && aHost[p].made)
        return layout_of(v, aHost[p].nTile, aHost[p].nRow).total;
    uint32_t nTile = tile_count(v);
    return layout_of(v, nTile, tile_row_of(v, nTile, NULL)).total;
}

static void host_free(part_host *h)
{
    free(h->aRowOf);
    free(h->aRow);
    plan_keywords_free(&h->kw);
    memset(h, 0, sizeof *h);
}

static genie_status host_make(const genie_index *v, part_host *h)
{
    if (h->made)
        return GENIE_OK;
    h->nTile = tile_count(v);
    h->aRowOf = (uint32_t *)malloc((v->info.n_keywords ? v->info.n_keywords : 1) * sizeof *h->aRowOf);
    if (!h->aRowOf)
        return util_error(GENIE_ENOMEM, "out of memory for the tile rows of a part of %llu lists",
                          (unsigned long long)v->info.n_keywords);
    h->nRow = tile_row_of(v, h->nTile, h->aRowOf);
    uint64_t nWord = h->nRow * ((uint64_t)h->nTile + 1);
    h->aRow = (uint32_t *)malloc((nWord ? nWord : 1) * sizeof *h->aRow);
    if (!h->aRow) {
        host_free(h);
        return util_error(GENIE_ENOMEM, "out of memory for %llu tile rows of a part", (unsigned long long)h->nRow);
    }
    tile_rows_fill(v, h->nTile, h->aRowOf, h->aRow);
    genie_status rc = plan_keywords_build(v, &h->kw);
    if (rc != GENIE_OK) {
        host_free(h);
        return rc;
    }
    h->made = 1;
    return GENIE_OK;
}

/* One array of a part and where it goes in the slot. */
typedef struct stage_region {
    uint64_t off, n;
    const char *src;
} stage_region;

typedef struct stage_job {
    char *dst;                 /* the slot's pinned buffer */
    const stage_region *aRegion;
    uint64_t lo, hi;           /* the segment: slot bytes [lo, hi) */
    uint64_t next;             /* the next chunk of the segment to copy (atomic) */
} stage_job;

static void stage_worker(void *ctx, unsigned t)
{
    (void)t;
    stage_job *j = (stage_job *)ctx;
    for (;;) {
        uint64_t b = j->lo + __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED) * STAGE_CHUNK;
        if (b >= j->hi)
            return;
        uint64_t e = j->hi - b < STAGE_CHUNK ? j->hi : b + STAGE_CHUNK;
        for (const stage_region *r = j->aRegion; r->src; r++) {
            uint64_t x = b > r->off ? b : r->off, y = e < r->off + r->n ? e : r->off + r->n;
            if (x < y)
                memcpy(j->dst + x, r->src + (x - r->off), y - x);
        }
    }
}

static unsigned stage_threads(void)
{
    unsigned n = util_ncores();
    n = n > 2 ? n - 2 : 1; /* leave the searching thread a core */
    return n < STAGE_MAX_THREADS ? n : STAGE_MAX_THREADS;
}

typedef struct hosts_job {
    engine_stream *s;
    uint32_t next;      /* the next part to make (atomic) */
    genie_status *aRc;  /* per part */
} hosts_job;

static void hosts_worker(void *ctx, unsigned t)
{
    (void)t;
    hosts_job *j = (hosts_job *)ctx;
    const engine_stream *s = j->s;
    for (uint32_t p; (p = s->pFirst + __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) < s->pEnd;)
        j->aRc[p] = host_make(&s->idx->aPart[p], &j->s->aHost[p]);
}

/* Every part's host data, on the first streamed search (the parts in parallel). */
static genie_status hosts_make(engine_stream *s)
{
    uint32_t nPart = s->idx->nPart, p = s->pFirst;
    while (p < s->pEnd && s->aHost[p].made)
        p++;
    if (p == s->pEnd)
        return GENIE_OK;
    genie_status *aRc = (genie_status *)calloc(nPart, sizeof *aRc);
    if (!aRc)
        return util_error(GENIE_ENOMEM, "out of memory for the tile rows of %u parts", nPart);
    hosts_job j = {s, 0, aRc};
    unsigned n = util_ncores();
    uint32_t nRun = s->pEnd - s->pFirst;
    util_parallel_run(n < nRun ? n : nRun, hosts_worker, &j);
    genie_status rc = GENIE_OK;
    for (p = s->pFirst; p < s->pEnd && rc == GENIE_OK; p++)
        if (aRc[p] != GENIE_OK)
            rc = util_error(aRc[p], "out of memory for the tile rows and keyword table of part %u", p + 1);
    free(aRc);
    return rc;
}

/* Upload sl->view into the slot (the body of the worker thread when overlapping). */
static genie_status upload_part(engine_stream *s, stream_slot *sl)
{
    const genie_index *v = sl->view;
    const part_host *h = &s->aHost[v - s->idx->aPart];
    CUDA_TRY(cudaSetDevice(s->device));
    part_layout L = layout_of(v, h->nTile, h->nRow);
    const stage_region aRegion[] = {
        {0, v->info.n_postings * sizeof(uint32_t), (const char *)v->aPosting},
        {L.offList, (v->info.n_keywords + 1) * sizeof(uint64_t), (const char *)v->aListOffset},
        {L.offRowOf, v->info.n_keywords * sizeof(uint32_t), (const char *)h->aRowOf},
        {L.offRow, h->nRow * ((uint64_t)h->nTile + 1) * sizeof(uint32_t), (const char *)h->aRow},
        {0, 0, NULL}};
    unsigned nThread = stage_threads();
    for (uint64_t lo = 0; lo < L.total; lo += STAGE_SEGMENT) {
        stage_job j = {sl->h_pin, aRegion, lo, L.total - lo < STAGE_SEGMENT ? L.total : lo + STAGE_SEGMENT, 0};
        uint64_t nChunk = (j.hi - j.lo + STAGE_CHUNK - 1) / STAGE_CHUNK;
        util_parallel_run(nChunk < nThread ? (unsigned)nChunk : nThread, stage_worker, &j);
        CUDA_TRY(cudaMemcpyAsync(sl->d_mem + j.lo, sl->h_pin + j.lo, j.hi - j.lo, cudaMemcpyHostToDevice, sl->copy));
    }
    CUDA_TRY(cudaStreamSynchronize(sl->copy));
    return GENIE_OK;
}

static void run_upload(engine_stream *s, stream_slot *sl)
{
    double t0 = util_now();
    sl->rc = upload_part(s, sl);
    if (sl->rc != GENIE_OK)
        snprintf(sl->zError, sizeof sl->zError, "%s", genie_last_error());
    sl->seconds = util_now() - t0;
}

typedef struct worker_arg {
    engine_stream *s;
    stream_slot *sl;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg *a = (worker_arg *)p;
    run_upload(a->s, a->sl);
    free(a);
    return NULL;
}

static stream_slot *slot_of(engine_stream *s, const genie_index *view)
{
    for (uint32_t i = 0; i < s->nSlot; i++)
        if (s->aSlot[i].view == view)
            return &s->aSlot[i];
    return NULL;
}

/* Wait for the slot's upload, counting the time waited. */
static void join(stream_slot *sl)
{
    if (sl->running) {
        double t0 = util_now();
        pthread_join(sl->worker, NULL);
        sl->running = 0;
        sl->waited += util_now() - t0;
    }
}

/* cuda_index.pfnReady of a streamed part: its upload must be complete. */
static genie_status slot_ready(void *p)
{
    stream_slot *sl = (stream_slot *)p;
    join(sl);
    return sl->rc == GENIE_OK ? GENIE_OK : util_error(sl->rc, "%s", sl->zError);
}

static void uninstall(stream_slot *sl)
{
    genie_index *v = sl->view;
    if (!v)
        return;
    index_device *d = &v->aDev[sl->dev.device];
    pthread_mutex_lock(&d->lock);
    index_slot *slot = cuda_slot_find(v, sl->dev.device);
    if (slot && slot->p == &sl->dev)
        slot->p = NULL;
    pthread_mutex_unlock(&d->lock);
    sl->view = NULL;
}

static void stream_free(void *p)
{
    engine_stream *s = (engine_stream *)p;
    if (!s)
        return;
    cudaSetDevice(s->device);
    for (uint32_t i = 0; i < 2; i++) {
        stream_slot *sl = &s->aSlot[i];
        join(sl);
        cudaFree(sl->d_mem);
        cudaFreeHost(sl->h_pin);
        if (sl->copy)
            cudaStreamDestroy(sl->copy);
    }
    if (s->aHost)
        for (uint32_t p = 0; p < s->idx->nPart; p++)
            host_free(&s->aHost[p]);
    free(s->aHost);
    cuda_workspace_free(s->pWs);
    free(s);
}

static genie_status stream_new(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint32_t nSlot,
                               uint64_t slotBytes, engine_stream **ppS)
{
    engine_stream *s = (engine_stream *)calloc(1, sizeof *s);
    if (!s)
        return util_error(GENIE_ENOMEM, "out of memory for streaming parts");
    s->idx = idx;
    s->device = device;
    s->pFirst = pFirst;
    s->pEnd = pEnd;
    s->nSlot = nSlot;
    s->slotBytes = slotBytes;
    s->aHost = (part_host *)calloc(idx->nPart, sizeof *s->aHost);
    s->pWs = cuda_workspace_new();
    genie_status rc = GENIE_OK;
    if (!s->aHost || !s->pWs) {
        rc = util_error(GENIE_ENOMEM, "out of memory for streaming %u parts", idx->nPart);
        goto fail;
    }
    for (uint32_t i = 0; i < nSlot; i++) {
        stream_slot *sl = &s->aSlot[i];
        cudaError_t err = cudaMalloc((void **)&sl->d_mem, slotBytes);
        if (err != cudaSuccess) {
            cudaGetLastError();
            sl->d_mem = NULL;
            rc = util_error(GENIE_EGPU, "CUDA: out of GPU memory for part buffer %u of %llu bytes: %s", i + 1,
                            (unsigned long long)slotBytes, cudaGetErrorString(err));
            goto fail;
        }
        err = cudaHostAlloc((void **)&sl->h_pin, slotBytes, cudaHostAllocDefault);
        if (err != cudaSuccess) {
            sl->h_pin = NULL;
            rc = util_error(GENIE_ENOMEM, "CUDA: cannot allocate %llu bytes of pinned host memory to stage parts: %s",
                            (unsigned long long)slotBytes, cudaGetErrorString(err));
            goto fail;
        }
        CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&sl->copy, cudaStreamNonBlocking), fail);
    }
    *ppS = s;
    return GENIE_OK;
fail:
    stream_free(s);
    return rc;
}

/* Free @p v's own (resident) copy on @p device. */
static void free_resident(genie_index *v, int device)
{
    index_device *d = &v->aDev[device];
    pthread_mutex_lock(&d->lock);
    index_slot *slot = cuda_slot_find(v, device);
    if (slot && slot->p && slot->xFree)
        slot->xFree(slot->p);
    if (slot) {
        slot->p = NULL;
        slot->xFree = NULL;
    }
    pthread_mutex_unlock(&d->lock);
}

/*
 * Parts [pFirst, pEnd) on @p device: their device bytes together and the
 * largest, the budget (with what is held there already: their resident
 * copies and the stream's buffers, which the search may reuse).
 */
static genie_status measure(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory,
                            uint64_t *pTotal, uint64_t *pMaxPart, uint64_t *pBudget)
{
    if (device < 0 || device >= cuda_device_count())
        return util_error(GENIE_EGPU, "no usable CUDA device %d (%d found)", device, cuda_device_count());
    CUDA_TRY(cudaSetDevice(device));
    const engine_stream *s = (const engine_stream *)cuda_slot_state(idx, device);
    uint64_t total = 0, maxPart = 0, held = s ? s->nSlot * s->slotBytes : 0;
    for (uint32_t p = pFirst; p < pEnd; p++) {
        uint64_t b = part_bytes(idx, s ? s->aHost : NULL, p);
        total += b;
        maxPart = b > maxPart ? b : maxPart;
        if (cuda_slot_state(&idx->aPart[p], device))
            held += b;
    }
    *pTotal = total;
    *pMaxPart = maxPart;
    return cuda_memory_budget(gpuMemory, held, pBudget);
}

int cuda_stream_fits(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory)
{
    uint64_t total = 0, maxPart = 0, budget = 0;
    if (measure(idx, pFirst, pEnd, device, gpuMemory, &total, &maxPart, &budget) != GENIE_OK)
        return 0;
    return total <= budget / 2;
}

genie_status cuda_stream_begin(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory,
                               int serialUpload, engine_stream **ppS, int *pOverlap, uint64_t *pLeft)
{
    *ppS = NULL;
    *pOverlap = 0;
    *pLeft = gpuMemory;
    uint64_t total = 0, maxPart = 0, budget = 0;
    GENIE_TRY(measure(idx, pFirst, pEnd, device, gpuMemory, &total, &maxPart, &budget));
    index_slot *root = cuda_slot_claim(idx, device); /* under the index's lock of the device (backend.h) */
    if (!root)
        return util_error(GENIE_ENOMEM, "CUDA: every one of the index's %d device slots is taken", INDEX_SLOTS);
    engine_stream *s = (engine_stream *)root->p;
    if (total <= budget / 2) {
        if (s) {
            stream_free(s);
            root->p = NULL;
            root->xFree = NULL;
        }
        return GENIE_OK;
    }
    for (uint32_t p = pFirst; p < pEnd; p++)
        free_resident(&idx->aPart[p], device);
    uint64_t room = budget / 4 * 3;
    uint32_t nSlot = 2 * maxPart <= room ? 2 : maxPart <= room ? 1 : 0;
    if (nSlot == 0)
        return util_error(GENIE_EGPU,
                          "CUDA: the largest part of this index needs %llu bytes of GPU memory, more than three "
                          "quarters of the budget of %llu bytes; raise --gpu-memory, or rebuild the index with "
                          "--gpu-memory %llu so that its parts are cut to fit",
                          (unsigned long long)maxPart, (unsigned long long)budget, (unsigned long long)budget);
    if (s && (s->nSlot != nSlot || s->slotBytes != maxPart || s->pFirst != pFirst || s->pEnd != pEnd)) {
        stream_free(s);
        root->p = NULL;
        root->xFree = NULL;
        s = NULL;
    }
    if (!s) {
        GENIE_TRY(stream_new(idx, pFirst, pEnd, device, nSlot, maxPart, &s));
        root->p = s;
        root->xFree = stream_free;
    }
    GENIE_TRY(hosts_make(s));
    s->next = 0;
    s->serial = nSlot < 2 || serialUpload;
    *ppS = s;
    *pOverlap = !s->serial;
    uint64_t nBuffers = (uint64_t)nSlot * maxPart;
    if (gpuMemory)
        *pLeft = gpuMemory > nBuffers ? gpuMemory - nBuffers : 1;
    return GENIE_OK;
}

genie_status cuda_stream_start(engine_stream *s, genie_index *view)
{
    stream_slot *sl = &s->aSlot[s->next];
    if (sl->view)
        return util_error(GENIE_EGPU, "CUDA: part buffer %u is still in use (parts started out of turn)", s->next + 1);
    s->next = (s->next + 1) % s->nSlot;
    sl->view = view;
    sl->rc = GENIE_OK;
    sl->seconds = sl->waited = 0;
    const part_host *h = &s->aHost[view - s->idx->aPart];
    part_layout L = layout_of(view, h->nTile, h->nRow);
    cuda_index *dev = &sl->dev;
    memset(dev, 0, sizeof *dev);
    dev->device = s->device;
    dev->d_aPosting = (uint32_t *)sl->d_mem;
    dev->nPosting = view->info.n_postings;
    dev->d_aListOffset = (uint64_t *)(sl->d_mem + L.offList);
    dev->d_aListRow = (uint32_t *)(sl->d_mem + L.offRowOf);
    dev->d_aTileOff = (uint32_t *)(sl->d_mem + L.offRow);
    dev->nTile = h->nTile;
    dev->kw = h->kw;
    dev->pWs = s->pWs;
    dev->pfnReady = slot_ready;
    dev->pReady = sl;
    if (!s->serial) {
        worker_arg *a = (worker_arg *)malloc(sizeof *a);
        if (a) {
            a->s = s;
            a->sl = sl;
            if (pthread_create(&sl->worker, NULL, worker_main, a) == 0) {
                sl->running = 1;
                return GENIE_OK;
            }
            free(a);
        }
    }
    run_upload(s, sl); /* serial, or no thread to be had: upload now */
    return GENIE_OK;
}

genie_status cuda_stream_ready(engine_stream *s, genie_index *view)
{
    stream_slot *sl = slot_of(s, view);
    if (!sl)
        return util_error(GENIE_EGPU, "CUDA: part at object %llu was never started",
                          (unsigned long long)view->firstObject);
    index_device *d = &view->aDev[s->device];
    pthread_mutex_lock(&d->lock);
    index_slot *slot = cuda_slot_claim(view, s->device);
    if (slot) {
        slot->p = &sl->dev;
        slot->xFree = NULL;
    }
    pthread_mutex_unlock(&d->lock);
    if (!slot)
        return util_error(GENIE_ENOMEM, "CUDA: every one of the part's %d device slots is taken", INDEX_SLOTS);
    return GENIE_OK;
}

genie_status cuda_stream_done(engine_stream *s, genie_index *view, double *pUpload, double *pWait)
{
    *pUpload = *pWait = 0;
    stream_slot *sl = slot_of(s, view);
    if (!sl)
        return GENIE_OK;
    genie_status rc = slot_ready(sl);
    uninstall(sl);
    *pUpload = sl->seconds;
    *pWait = sl->waited;
    return rc;
}

void cuda_stream_end(engine_stream *s)
{
    for (uint32_t i = 0; i < s->nSlot; i++) {
        join(&s->aSlot[i]);
        uninstall(&s->aSlot[i]);
    }
}
