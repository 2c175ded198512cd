/*
 * Shared by the CUDA module's translation units: the C headers of the
 * library seen from C++ (nvcc compiles .cu files as C++), error checking,
 * the devices and the memory budget (common/device.cu).  The match-count
 * backends' per-index device state is count/device_index.h.
 *
 * Every CUDA runtime call goes through CUDA_TRY / CUDA_TRY_GOTO, which turn
 * a failure into GENIE_EGPU with a message naming the call and CUDA's error
 * string; every kernel launch is followed by CUDA_CHECK_LAUNCH.
 */
#ifndef GENIE_ENGINE_CUDA_CUDA_COMMON_H
#define GENIE_ENGINE_CUDA_CUDA_COMMON_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "engine/engine.h"
#include "index/index.h"
#include "util/clock.h"
#include "util/error.h"
}

/*
 * Record a CUDA failure as GENIE_EGPU (out of GPU memory too: the parts
 * loop, engine/parts.c, retries on it) and clear CUDA's last error, so that
 * a later CUDA_CHECK_LAUNCH does not report it again; returns GENIE_EGPU.
 */
genie_status cuda_fail(cudaError_t err, const char *zCall);

#define CUDA_TRY(call)                                 \
    do {                                               \
        cudaError_t cuda_err_ = (call);                \
        if (cuda_err_ != cudaSuccess)                  \
            return cuda_fail(cuda_err_, #call);        \
    } while (0)

#define CUDA_TRY_GOTO(rc, call, label)                 \
    do {                                               \
        cudaError_t cuda_err_ = (call);                \
        if (cuda_err_ != cudaSuccess) {                \
            (rc) = cuda_fail(cuda_err_, #call);        \
            goto label;                                \
        }                                              \
    } while (0)

/* After a launch: configuration errors now, execution errors at the next sync. */
#define CUDA_CHECK_LAUNCH(rc, zKernel, label)                      \
    do {                                                           \
        cudaError_t cuda_err_ = cudaGetLastError();                \
        if (cuda_err_ != cudaSuccess) {                            \
            (rc) = cuda_fail(cuda_err_, "launch of " zKernel);     \
            goto label;                                            \
        }                                                          \
    } while (0)

/**
 * Bytes of device memory a batch may use: @p gpuMemory (the search's
 * limit), or when 0 most of the free memory plus @p nHeld bytes the caller
 * already holds (its workspace).
 */
genie_status cuda_memory_budget(uint64_t gpuMemory, uint64_t nHeld, uint64_t *pBytes);

/**
 * Copy @p nBytes from @p src to @p dst (pinned staging for an upload) on
 * up to 8 host threads, a megabyte per grab (common/stage.cu).
 */
void cuda_stage_copy(void *dst, const void *src, uint64_t nBytes);

/** Non-zero when a device is usable (probed once per process). */
int cuda_usable(void);
/** Usable devices, numbered 0 .. n-1 (probed once per process). */
int cuda_device_count(void);
/** Memory in use on @p device (by every process) and its total, in bytes. */
genie_status cuda_device_memory(int device, uint64_t *pUsed, uint64_t *pTotal);

#endif
