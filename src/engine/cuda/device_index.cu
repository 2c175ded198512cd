/*
 * Device discovery, the uploaded List Array and the memory budget.
 *
 * The index is uploaded once per opened genie_index: the first CUDA search
 * takes idx->aDev[device].lock, uploads the list offsets and the tile
 * arrays (engine/tile_lists.h: rows, 16-bit tile-local ids, the short
 * lists' 32-bit ids) and leaves a cuda_index in the module's slot there
 * (cuda_slot_claim, index/index.h); the
 * first search by a method that reads 32-bit ids adds those under the same
 * lock (cuda_index_wide).  genie_index_close() calls cuda_index_free()
 * through the slot's xFree, which also frees the cached workspace.  Later
 * searches (from any thread) reuse both.
 *
 * The tile-local ids are made on the host (on several threads) a chunk at
 * a time into two pinned buffers, each chunk's copy overlapping the next
 * one's conversion: the transfer carries 2 bytes per posting.
 */
#include <pthread.h>
#include <stdlib.h>

#include "engine/cuda/cuda_common.h"

/* Leave this much of the free memory to other users and the runtime. */
#define BUDGET_FREE_FRACTION 0.85
/* Tile-local ids converted and sent per chunk (two pinned chunks in turn). */
#define LOCAL_CHUNK (16u << 20)

const char cuda_slot_owner = 0; /* its address names the module's slots */

genie_status cuda_fail(cudaError_t err, const char *zCall)
{
    return util_error(GENIE_EGPU, "CUDA: %s failed: %s (%s)", zCall, cudaGetErrorString(err),
                      cudaGetErrorName(err));
}

/* Usable devices: 0 .. gDevices-1, each of compute 6.0 or later (the
 * kernels use 64-bit atomicCAS and __shfl_sync); counted once. */
static int gDevices;
static pthread_once_t gUsableOnce = PTHREAD_ONCE_INIT;

static void probe_devices(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        cudaGetLastError(); /* clear the sticky "no device" state */
        return;
    }
    if (n > INDEX_MAX_DEVICES)
        n = INDEX_MAX_DEVICES;
    for (int d = 0; d < n; d++) {
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess || prop.major < 6)
            break;
        gDevices = d + 1;
    }
    if (gDevices > 0 && (cudaSetDevice(0) != cudaSuccess || cudaFree(0) != cudaSuccess))
        gDevices = 0;
}

int cuda_usable(void)
{
    return cuda_device_count() > 0;
}

int cuda_device_count(void)
{
    pthread_once(&gUsableOnce, probe_devices);
    return gDevices;
}

genie_status cuda_device_memory(int device, uint64_t *pUsed, uint64_t *pTotal)
{
    if (device < 0 || device >= cuda_device_count())
        return util_error(GENIE_EINVAL, "GPU %d: the usable GPUs are 0..%d", device, cuda_device_count() - 1);
    int prev = 0;
    cudaGetDevice(&prev);
    size_t nFree = 0, nTotal = 0;
    cudaError_t err = cudaSetDevice(device);
    if (err == cudaSuccess)
        err = cudaMemGetInfo(&nFree, &nTotal);
    cudaSetDevice(prev); /* the calling thread's device as it was */
    if (err != cudaSuccess)
        return cuda_fail(err, "cudaMemGetInfo");
    *pUsed = nTotal - nFree;
    *pTotal = nTotal;
    return GENIE_OK;
}

static void cuda_index_free(void *p)
{
    cuda_index *dev = (cuda_index *)p;
    if (!dev)
        return;
    cudaSetDevice(dev->device);
    cudaFree(dev->d_aPosting);
    cudaFree(dev->d_aLocal);
    cudaFree(dev->d_aShortPost);
    cudaFree(dev->d_aShortOff);
    cudaFree(dev->d_aListOffset);
    cudaFree(dev->d_aListRow);
    cudaFree(dev->d_aTileOff);
    plan_keywords_free(&dev->kw);
    cuda_workspace_free(dev->pWs);
    free(dev);
}

cuda_workspace *cuda_workspace_new(void)
{
    cuda_workspace *ws = (cuda_workspace *)calloc(1, sizeof *ws);
    if (ws)
        pthread_mutex_init(&ws->lock, NULL);
    return ws;
}

void cuda_workspace_free(cuda_workspace *ws)
{
    if (!ws)
        return;
    cudaFree(ws->d_mem);
    cudaFreeHost(ws->h_pinned);
    if (ws->stream)
        cudaStreamDestroy(ws->stream);
    pthread_mutex_destroy(&ws->lock);
    free(ws);
}

/* Copy @p nBytes of @p h to a new device buffer *pd (at least 4 bytes, so never NULL). */
static genie_status upload_array(void **pd, const void *h, uint64_t nBytes, const char *zWhat)
{
    cudaError_t err = cudaMalloc(pd, nBytes ? nBytes : 4);
    if (err != cudaSuccess) {
        *pd = NULL;
        return util_error(GENIE_EGPU, "CUDA: cannot upload the index: cudaMalloc of %llu bytes of %s: %s",
                          (unsigned long long)nBytes, zWhat, cudaGetErrorString(err));
    }
    if (nBytes)
        CUDA_TRY(cudaMemcpy(*pd, h, nBytes, cudaMemcpyHostToDevice));
    return GENIE_OK;
}

/* The tile rows of @p idx (engine/tile_lists.h) and the short lists' ids, made on the host and uploaded. */
static genie_status upload_tile_rows(const genie_index *idx, cuda_index *dev)
{
    uint64_t nList = idx->info.n_keywords, nPer = (uint64_t)dev->nTile + 1;
    genie_status rc = GENIE_OK;
    uint32_t *aRowOf = (uint32_t *)malloc((nList ? nList : 1) * sizeof *aRowOf);
    uint64_t *aShortOff = (uint64_t *)malloc((nList ? nList : 1) * sizeof *aShortOff);
    uint32_t *aOff = NULL, *aShort = NULL;
    uint64_t nRow = 0, nShort = 0;
    if (!aRowOf || !aShortOff) {
        rc = util_error(GENIE_ENOMEM, "out of memory for the tile rows of %llu lists", (unsigned long long)nList);
        goto done;
    }
    nRow = tile_row_of(idx, dev->nTile, aRowOf);
    nShort = tile_short_postings(idx, dev->nTile, aRowOf, NULL, NULL);
    aOff = (uint32_t *)malloc((nRow ? nRow * nPer : 1) * sizeof *aOff);
    aShort = (uint32_t *)malloc((nShort ? nShort : 1) * sizeof *aShort);
    if (!aOff || !aShort) {
        rc = util_error(GENIE_ENOMEM, "out of memory for %llu tile rows and %llu postings of short lists",
                        (unsigned long long)nRow, (unsigned long long)nShort);
        goto done;
    }
    tile_rows_fill(idx, dev->nTile, aRowOf, aOff);
    tile_short_postings(idx, dev->nTile, aRowOf, aShort, aShortOff);
    GENIE_TRY_GOTO(rc, upload_array((void **)&dev->d_aListRow, aRowOf, nList * sizeof *aRowOf, "list rows"), done);
    GENIE_TRY_GOTO(rc, upload_array((void **)&dev->d_aTileOff, aOff, nRow * nPer * sizeof *aOff, "tile rows"), done);
    GENIE_TRY_GOTO(rc, upload_array((void **)&dev->d_aShortOff, aShortOff, nList * sizeof *aShortOff,
                                    "short list offsets"), done);
    GENIE_TRY_GOTO(rc, upload_array((void **)&dev->d_aShortPost, aShort, nShort * sizeof *aShort,
                                    "short list postings"), done);
done:
    free(aRowOf);
    free(aShortOff);
    free(aOff);
    free(aShort);
    return rc;
}

/* dev->d_aLocal: the tile-local ids of @p idx's postings, converted a chunk at a time into pinned memory. */
static genie_status upload_local_ids(const genie_index *idx, cuda_index *dev)
{
    uint64_t n = dev->nPosting;
    genie_status rc = GENIE_OK;
    uint16_t *h_buf = NULL;
    cudaStream_t stream = 0;
    cudaEvent_t aSent[2] = {0, 0};
    cudaError_t err = cudaMalloc((void **)&dev->d_aLocal, n ? n * sizeof(uint16_t) : 4);
    if (err != cudaSuccess) {
        dev->d_aLocal = NULL;
        return util_error(GENIE_EGPU, "CUDA: cannot upload the index: cudaMalloc of %llu bytes of tile-local ids: %s",
                          (unsigned long long)(n * sizeof(uint16_t)), cudaGetErrorString(err));
    }
    if (!n)
        return GENIE_OK;
    uint64_t nChunk = n < LOCAL_CHUNK ? n : LOCAL_CHUNK;
    CUDA_TRY_GOTO(rc, cudaHostAlloc((void **)&h_buf, 2 * nChunk * sizeof *h_buf, cudaHostAllocDefault), done);
    CUDA_TRY_GOTO(rc, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), done);
    for (int i = 0; i < 2; i++)
        CUDA_TRY_GOTO(rc, cudaEventCreateWithFlags(&aSent[i], cudaEventDisableTiming), done);
    for (uint64_t b = 0, c = 0; b < n; b += nChunk, c ^= 1) {
        uint64_t m = n - b < nChunk ? n - b : nChunk;
        uint16_t *h = h_buf + c * nChunk;
        if (b >= 2 * nChunk) /* the copy that last read this buffer */
            CUDA_TRY_GOTO(rc, cudaEventSynchronize(aSent[c]), done);
        tile_local_ids(idx->aPosting + b, m, 0, h);
        CUDA_TRY_GOTO(rc, cudaMemcpyAsync(dev->d_aLocal + b, h, m * sizeof *h, cudaMemcpyHostToDevice, stream), done);
        CUDA_TRY_GOTO(rc, cudaEventRecord(aSent[c], stream), done);
    }
    CUDA_TRY_GOTO(rc, cudaStreamSynchronize(stream), done);
done:
    if (stream) {
        cudaStreamSynchronize(stream); /* no copy may still read h_buf */
        cudaStreamDestroy(stream);
    }
    for (int i = 0; i < 2; i++)
        if (aSent[i])
            cudaEventDestroy(aSent[i]);
    cudaFreeHost(h_buf);
    return rc;
}

static genie_status upload(const genie_index *idx, int device, cuda_index **ppDev)
{
    genie_status rc = GENIE_OK;
    cuda_index *dev = (cuda_index *)calloc(1, sizeof *dev);
    cuda_workspace *ws = cuda_workspace_new();
    if (!dev || !ws) {
        free(dev);
        cuda_workspace_free(ws);
        return util_error(GENIE_ENOMEM, "out of memory for the device index");
    }
    dev->pWs = ws;
    dev->device = device;
    dev->nPosting = idx->info.n_postings;
    dev->nTile = tile_count(idx);
    GENIE_TRY_GOTO(rc, upload_local_ids(idx, dev), fail);
    GENIE_TRY_GOTO(rc, upload_array((void **)&dev->d_aListOffset, idx->aListOffset,
                                    (idx->info.n_keywords + 1) * sizeof(uint64_t), "list offsets"), fail);
    GENIE_TRY_GOTO(rc, upload_tile_rows(idx, dev), fail);
    GENIE_TRY_GOTO(rc, plan_keywords_build(idx, &dev->kw), fail);
    *ppDev = dev;
    return GENIE_OK;
fail:
    cuda_index_free(dev);
    return rc;
}

genie_status cuda_index_get(const genie_index *idx, int device, const cuda_index **ppDev)
{
    if (device < 0 || device >= cuda_device_count())
        return util_error(GENIE_EGPU, "no usable CUDA device %d (%d found)", device, cuda_device_count());
    /* The index is read-only to searches; only its device slot changes, under its lock. */
    index_device *d = &idx->aDev[device];
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&d->lock);
    index_slot *slot = cuda_slot_claim(idx, device);
    if (!slot) {
        rc = util_error(GENIE_ENOMEM, "CUDA: every one of the index's %d device slots is taken", INDEX_SLOTS);
    } else if (!slot->p) {
        cuda_index *dev = NULL;
        CUDA_TRY_GOTO(rc, cudaSetDevice(device), done);
        rc = upload(idx, device, &dev);
        if (rc == GENIE_OK) {
            slot->p = dev;
            slot->xFree = cuda_index_free;
        }
    }
done:
    pthread_mutex_unlock(&d->lock);
    if (rc != GENIE_OK)
        return rc;
    const cuda_index *dev = (const cuda_index *)slot->p;
    CUDA_TRY(cudaSetDevice(dev->device));
    *ppDev = dev;
    return GENIE_OK;
}

genie_status cuda_index_wide(const genie_index *idx, int device, const cuda_index **ppDev)
{
    GENIE_TRY(cuda_index_get(idx, device, ppDev));
    index_device *d = &idx->aDev[device];
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&d->lock);
    cuda_index *dev = (cuda_index *)cuda_slot_state(idx, device);
    if (!dev->d_aPosting)
        rc = upload_array((void **)&dev->d_aPosting, idx->aPosting, dev->nPosting * sizeof(uint32_t), "postings");
    pthread_mutex_unlock(&d->lock);
    return rc;
}

genie_status cuda_memory_budget(uint64_t gpuMemory, uint64_t nHeld, uint64_t *pBytes)
{
    size_t nFree = 0, nTotal = 0;
    CUDA_TRY(cudaMemGetInfo(&nFree, &nTotal));
    uint64_t avail = (uint64_t)((nFree + nHeld) * BUDGET_FREE_FRACTION);
    *pBytes = gpuMemory && gpuMemory < avail ? gpuMemory : avail;
    return GENIE_OK;
}
