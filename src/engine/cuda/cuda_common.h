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
#include <pthread.h>
#include <stdint.h>

extern "C" {
#include "engine/engine.h"
#include "index/index.h"
#include "util/clock.h"
#include "util/error.h"
#include "engine/cuda/work_plan.h"
#include "engine/tile_lists.h"
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
 * The workspace kept between searches of one index (the first 10 ms of a
 * call used to be cudaMalloc/cudaFree and stream creation): device memory,
 * the stream, and pinned host staging (units up, hits and infos down:
 * cudaHostAlloc costs milliseconds, so it is kept too).  One search at a
 * time holds it (lock, taken with trylock: a concurrent search allocates
 * its own); released at index close.
 */
typedef struct cuda_workspace {
    pthread_mutex_t lock;
    void *d_mem;
    uint64_t nBytes;
    cudaStream_t stream; /* 0 until first use */
    void *h_pinned;      /* page-locked host staging, nPinned bytes */
    uint64_t nPinned;
} cuda_workspace;

/** A new, empty workspace (NULL when out of memory); free with cuda_workspace_free (NULL is fine). */
cuda_workspace *cuda_workspace_new(void);
void cuda_workspace_free(cuda_workspace *ws);

/*
 * The List Array on the device (Zhou et al. (GENIE) III-B): uploaded once
 * per opened index and kept in the module's slot of genie_index.aDev[device]
 * (cuda_slot_claim) until genie_index_close, with the list offsets and the tile arrays
 * (engine/tile_lists.h).  The Position Map stays on the host.
 *
 * The tile layout, the default, reads the postings as 16-bit tile-local
 * ids (d_aLocal, with d_aShortPost for the lists it binary-searches); the
 * paper's layout and GEN-SPQ read the 32-bit ids (d_aPosting), uploaded
 * only when one of them first runs on the index (cuda_index_wide), so an
 * index searched by the default method holds 2 bytes per posting on the
 * device, not 4 (nor 6).  A streamed part (part_stream.cu) has the 32-bit
 * ids alone and the tile layout reads those.
 */
typedef struct cuda_index {
    int device;               /* the device the postings live on */
    uint32_t *d_aPosting;     /* n_postings object ids; NULL until cuda_index_wide() */
    uint16_t *d_aLocal;       /* n_postings tile-local ids (id mod TILE_OBJECTS); NULL in a streamed part */
    uint32_t *d_aShortPost;   /* the ids of the lists without a tile row, list after list */
    uint64_t *d_aShortOff;    /* n_keywords: where such a list starts in d_aShortPost */
    uint64_t nPosting;
    uint64_t *d_aListOffset;  /* n_keywords + 1: list l is postings off[l] .. off[l + 1] */
    uint32_t *d_aListRow;     /* n_keywords: the list's tile row, or TILE_NO_ROW */
    uint32_t *d_aTileOff;     /* rows of nTile + 1 segment starts, relative to the list */
    uint32_t nTile;           /* ceil(n_objects / TILE_OBJECTS), at least 1 */
    plan_keywords kw;         /* host: the keyword lookup of the planner (work_plan.h) */
    cuda_workspace *pWs;
    /*
     * A part streamed through the device (part_stream.cu) may still be on
     * its way when a search plans its queries: the driver calls
     * pfnReady(pReady) after planning and before the first use of the
     * device arrays.  NULL for an uploaded index.
     */
    genie_status (*pfnReady)(void *pReady);
    void *pReady;
} cuda_index;

/*
 * The module's slot of @p idx on @p device (index/index.h): a cuda_index
 * (the index's copy there, or a streamed part's), or, for a multi-part
 * index, the engine_stream of its parts.  cuda_slot_claim() under
 * idx->aDev[device].lock, the first time; cuda_slot_find() after that.
 */
extern const char cuda_slot_owner;

static inline index_slot *cuda_slot_claim(const genie_index *idx, int device)
{
    return index_slot_claim(idx->aDev[device].aSlot, &cuda_slot_owner);
}

static inline index_slot *cuda_slot_find(const genie_index *idx, int device)
{
    return index_slot_find(idx->aDev[device].aSlot, &cuda_slot_owner);
}

/** What the module's slot of @p idx on @p device holds, NULL when it has none. */
static inline void *cuda_slot_state(const genie_index *idx, int device)
{
    const index_slot *s = cuda_slot_find(idx, device);
    return s ? s->p : NULL;
}

/**
 * The copy of @p idx's postings on device @p device, uploaded on first use
 * under idx->aDev[device].lock.  Also makes that device current for the calling thread.
 * @param[out] ppDev  valid until the index is closed.
 */
genie_status cuda_index_get(const genie_index *idx, int device, const cuda_index **ppDev);
/**
 * The same, with the 32-bit ids (d_aPosting) on the device too: uploaded
 * on the first call, under the same lock, and kept until the index closes.
 */
genie_status cuda_index_wide(const genie_index *idx, int device, const cuda_index **ppDev);

/**
 * Bytes of device memory a batch may use: @p gpuMemory (the search's
 * limit), or when 0 most of the free memory plus @p nHeld bytes the caller
 * already holds (its workspace).
 */
genie_status cuda_memory_budget(uint64_t gpuMemory, uint64_t nHeld, uint64_t *pBytes);

/** Non-zero when a device is usable (probed once per process). */
int cuda_usable(void);
/** Usable devices, numbered 0 .. n-1 (probed once per process). */
int cuda_device_count(void);
/** Memory in use on @p device (by every process) and its total, in bytes. */
genie_status cuda_device_memory(int device, uint64_t *pUsed, uint64_t *pTotal);

#endif
