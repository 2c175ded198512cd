/*
 * Device discovery, the uploaded List Array and the memory budget.
 *
 * The index is uploaded once per opened genie_index: the first CUDA search
 * takes idx->pDev->lock, copies aPosting, the list offsets and the tile
 * rows (cuda_common.h) to device 0 and leaves a cuda_index in
 * idx->pDev->p; genie_index_close() calls cuda_index_free() through
 * idx->pDev->xFree, which also frees the cached workspace.  Later
 * searches (from any thread) reuse both.
 */
#include <pthread.h>
#include <stdlib.h>

#include "engine/cuda/cuda_common.h"

/* Leave this much of the free memory to other users and the runtime. */
#define BUDGET_FREE_FRACTION 0.85

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

uint32_t cuda_tile_count(const genie_index *idx)
{
    uint64_t n = (idx->info.n_objects + TILE_OBJECTS - 1) / TILE_OBJECTS;
    return n ? (uint32_t)n : 1;
}

uint64_t cuda_tile_row_of(const genie_index *idx, uint32_t nTile, uint32_t *aRowOf)
{
    uint64_t nRow = 0;
    for (uint64_t l = 0; l < idx->info.n_keywords; l++) {
        uint64_t len = idx->aListOffset[l + 1] - idx->aListOffset[l];
        int row = nTile > 1 && len > (uint64_t)TILE_ROW_MIN_PER_TILE * nTile;
        if (aRowOf)
            aRowOf[l] = row ? (uint32_t)nRow : TILE_NO_ROW;
        nRow += row;
    }
    return nRow;
}

void cuda_tile_rows_fill(const genie_index *idx, uint32_t nTile, const uint32_t *aRowOf, uint32_t *aOff)
{
    uint64_t nPer = (uint64_t)nTile + 1;
    for (uint64_t l = 0; l < idx->info.n_keywords; l++) {
        if (aRowOf[l] == TILE_NO_ROW)
            continue;
        const uint32_t *post = idx->aPosting + idx->aListOffset[l];
        uint64_t len = idx->aListOffset[l + 1] - idx->aListOffset[l], p = 0;
        uint32_t *row = aOff + (uint64_t)aRowOf[l] * nPer;
        for (uint64_t t = 0; t < nPer; t++) {
            while (p < len && post[p] < t * TILE_OBJECTS)
                p++;
            row[t] = (uint32_t)p;
        }
        row[nTile] = (uint32_t)len;
    }
}

/* The tile rows of @p idx (cuda_common.h), made on the host and uploaded. */
static genie_status upload_tile_rows(const genie_index *idx, cuda_index *dev)
{
    uint64_t nList = idx->info.n_keywords, nPer = (uint64_t)dev->nTile + 1;
    uint32_t *aRowOf = (uint32_t *)malloc((nList ? nList : 1) * sizeof *aRowOf);
    if (!aRowOf)
        return util_error(GENIE_ENOMEM, "out of memory for the tile rows of %llu lists", (unsigned long long)nList);
    uint64_t nRow = cuda_tile_row_of(idx, dev->nTile, aRowOf);
    uint32_t *aOff = (uint32_t *)malloc((nRow ? nRow * nPer : 1) * sizeof *aOff);
    if (!aOff) {
        free(aRowOf);
        return util_error(GENIE_ENOMEM, "out of memory for %llu tile rows", (unsigned long long)nRow);
    }
    cuda_tile_rows_fill(idx, dev->nTile, aRowOf, aOff);
    genie_status rc = upload_array((void **)&dev->d_aListRow, aRowOf, nList * sizeof *aRowOf, "list rows");
    if (rc == GENIE_OK)
        rc = upload_array((void **)&dev->d_aTileOff, aOff, nRow * nPer * sizeof *aOff, "tile rows");
    free(aRowOf);
    free(aOff);
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
    dev->nTile = cuda_tile_count(idx);
    GENIE_TRY_GOTO(rc, upload_array((void **)&dev->d_aPosting, idx->aPosting, dev->nPosting * sizeof(uint32_t),
                                    "postings"), fail);
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
    index_device *slot = &idx->aDev[device];
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&slot->lock);
    if (!slot->p) {
        cuda_index *dev = NULL;
        CUDA_TRY_GOTO(rc, cudaSetDevice(device), done);
        rc = upload(idx, device, &dev);
        if (rc == GENIE_OK) {
            slot->p = dev;
            slot->xFree = cuda_index_free;
        }
    }
done:
    pthread_mutex_unlock(&slot->lock);
    if (rc != GENIE_OK)
        return rc;
    const cuda_index *dev = (const cuda_index *)slot->p;
    CUDA_TRY(cudaSetDevice(dev->device));
    *ppDev = dev;
    return GENIE_OK;
}

genie_status cuda_memory_budget(uint64_t gpuMemory, uint64_t nHeld, uint64_t *pBytes)
{
    size_t nFree = 0, nTotal = 0;
    CUDA_TRY(cudaMemGetInfo(&nFree, &nTotal));
    uint64_t avail = (uint64_t)((nFree + nHeld) * BUDGET_FREE_FRACTION);
    *pBytes = gpuMemory && gpuMemory < avail ? gpuMemory : avail;
    return GENIE_OK;
}
