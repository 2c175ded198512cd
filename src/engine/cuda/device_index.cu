/*
 * Device discovery, the uploaded List Array and the memory budget.
 *
 * The index is uploaded once per opened genie_index: the first CUDA search
 * takes idx->deviceLock, copies aPosting to device 0 and leaves a
 * cuda_index in idx->pDevice; genie_index_close() calls cuda_index_free()
 * through idx->pfnDeviceFree.  Later searches (from any thread) reuse it.
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

static int gUsable;
static pthread_once_t gUsableOnce = PTHREAD_ONCE_INIT;

static void probe_device(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        cudaGetLastError(); /* clear the sticky "no device" state */
        return;
    }
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess)
        return;
    /* The kernels use 64-bit atomicCAS and __shfl_sync: compute 6.0 and later. */
    gUsable = prop.major >= 6 && cudaSetDevice(0) == cudaSuccess && cudaFree(0) == cudaSuccess;
}

extern "C" int engine_cuda_usable(void)
{
    pthread_once(&gUsableOnce, probe_device);
    return gUsable;
}

static void cuda_index_free(void *p)
{
    cuda_index *dev = (cuda_index *)p;
    if (!dev)
        return;
    cudaSetDevice(dev->device);
    cudaFree(dev->d_aPosting);
    free(dev);
}

static genie_status upload(const genie_index *idx, cuda_index **ppDev)
{
    genie_status rc = GENIE_OK;
    cuda_index *dev = (cuda_index *)calloc(1, sizeof *dev);
    if (!dev)
        return util_error(GENIE_ENOMEM, "out of memory for the device index");
    dev->device = 0;
    dev->nPosting = idx->info.n_postings;
    size_t nBytes = (size_t)(dev->nPosting ? dev->nPosting : 1) * sizeof(uint32_t);
    cudaError_t err = cudaMalloc((void **)&dev->d_aPosting, nBytes);
    if (err != cudaSuccess) {
        rc = util_error(GENIE_EGPU, "CUDA: cannot upload the index: cudaMalloc of %zu bytes of postings: %s",
                        nBytes, cudaGetErrorString(err));
        goto fail;
    }
    if (dev->nPosting)
        CUDA_TRY_GOTO(rc, cudaMemcpy(dev->d_aPosting, idx->aPosting, nBytes, cudaMemcpyHostToDevice), fail);
    *ppDev = dev;
    return GENIE_OK;
fail:
    cudaFree(dev->d_aPosting);
    free(dev);
    return rc;
}

genie_status cuda_index_get(const genie_index *idx, const cuda_index **ppDev)
{
    if (!engine_cuda_usable())
        return util_error(GENIE_EGPU, "no usable CUDA device (cudaGetDeviceCount found none, or it failed)");
    /* The index is read-only to searches; only its device slot changes, under its lock. */
    genie_index *pIdx = (genie_index *)idx;
    genie_status rc = GENIE_OK;
    pthread_mutex_lock(&pIdx->deviceLock);
    if (!pIdx->pDevice) {
        cuda_index *dev = NULL;
        CUDA_TRY_GOTO(rc, cudaSetDevice(0), done);
        rc = upload(idx, &dev);
        if (rc == GENIE_OK) {
            pIdx->pDevice = dev;
            pIdx->pfnDeviceFree = cuda_index_free;
        }
    }
done:
    pthread_mutex_unlock(&pIdx->deviceLock);
    if (rc != GENIE_OK)
        return rc;
    const cuda_index *dev = (const cuda_index *)pIdx->pDevice;
    CUDA_TRY(cudaSetDevice(dev->device));
    *ppDev = dev;
    return GENIE_OK;
}

genie_status cuda_memory_budget(const genie_search_options *opt, uint64_t *pBytes)
{
    size_t nFree = 0, nTotal = 0;
    CUDA_TRY(cudaMemGetInfo(&nFree, &nTotal));
    uint64_t avail = (uint64_t)(nFree * BUDGET_FREE_FRACTION);
    *pBytes = opt->gpu_memory && opt->gpu_memory < avail ? opt->gpu_memory : avail;
    return GENIE_OK;
}
