/*
 * The devices the module may use, the error every CUDA failure becomes,
 * and the memory budget of a call (common/cuda_common.h).
 */
#include <pthread.h>

#include "engine/cuda/common/cuda_common.h"

/* Leave this much of the free memory to other users and the runtime. */
#define BUDGET_FREE_FRACTION 0.85

genie_status cuda_fail(cudaError_t err, const char *zCall)
{
    cudaGetLastError(); /* clear a non-sticky error (out of memory) so that no later check reports it again */
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

genie_status cuda_memory_budget(uint64_t gpuMemory, uint64_t nHeld, uint64_t *pBytes)
{
    size_t nFree = 0, nTotal = 0;
    CUDA_TRY(cudaMemGetInfo(&nFree, &nTotal));
    uint64_t avail = (uint64_t)((nFree + nHeld) * BUDGET_FREE_FRACTION);
    *pBytes = gpuMemory && gpuMemory < avail ? gpuMemory : avail;
    return GENIE_OK;
}
