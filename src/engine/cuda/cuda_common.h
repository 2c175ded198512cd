/*
 * Shared by the CUDA backend's translation units: the C headers of the
 * library seen from C++ (nvcc compiles .cu files as C++), error checking,
 * and the per-index device state.
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
#include "util/error.h"
}

/* Record a CUDA failure as GENIE_EGPU; returns GENIE_EGPU. */
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

/*
 * The List Array on the device (seeds/003 III-B): every posting of the
 * index, uploaded once per opened index and kept in genie_index.pDevice
 * until genie_index_close.  The Position Map stays on the host.
 */
typedef struct cuda_index {
    int device;            /* the device the postings live on */
    uint32_t *d_aPosting;  /* n_postings object ids */
    uint64_t nPosting;
} cuda_index;

/**
 * The device copy of @p idx's postings, uploaded on first use under
 * idx->deviceLock.  Also makes that device current for the calling thread.
 * @param[out] ppDev  valid until the index is closed.
 */
genie_status cuda_index_get(const genie_index *idx, const cuda_index **ppDev);

/** Bytes of device memory a batch may use: opt->gpu_memory, or most of the free. */
genie_status cuda_memory_budget(const genie_search_options *opt, uint64_t *pBytes);

#endif
