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
 * The tile layout (tile.cu) cuts the object ids into tiles of TILE_OBJECTS.
 * Postings are sorted by id within a list, so a list splits into one
 * segment per tile; the upload stores, for every list longer than
 * TILE_ROW_MIN_PER_TILE postings per tile, the start of each tile's segment
 * (relative to the list start, nTile + 1 entries: a "row"), so a block
 * finds its segment with two loads.  Shorter lists are binary-searched
 * (a few steps).  The rows take at most 4 / TILE_ROW_MIN_PER_TILE bytes per
 * posting.
 */
#define TILE_LOG2 15u
#define TILE_OBJECTS (1u << TILE_LOG2)
#define TILE_ROW_MIN_PER_TILE 2u
#define TILE_NO_ROW 0xffffffffu

/** Tiles of @p idx's object ids: ceil(n_objects / TILE_OBJECTS), at least 1. */
uint32_t cuda_tile_count(const genie_index *idx);
/**
 * Which lists of @p idx get a tile row: aRowOf[l] (n_keywords entries; may
 * be NULL to count only) is the row of list l, or TILE_NO_ROW.
 * @return the number of rows.
 */
uint64_t cuda_tile_row_of(const genie_index *idx, uint32_t nTile, uint32_t *aRowOf);
/** Fill the rows (nTile + 1 words each) that aRowOf names; one pass over those lists. */
void cuda_tile_rows_fill(const genie_index *idx, uint32_t nTile, const uint32_t *aRowOf, uint32_t *aOff);

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
 * The List Array on the device (Zhou et al. (GENIE) III-B): every posting of the
 * index, uploaded once per opened index and kept in genie_index.aDev[device]
 * until genie_index_close, with the list offsets and the tile rows.  The
 * Position Map stays on the host.
 */
typedef struct cuda_index {
    int device;               /* the device the postings live on */
    uint32_t *d_aPosting;     /* n_postings object ids */
    uint64_t nPosting;
    uint64_t *d_aListOffset;  /* n_keywords + 1: list l is d_aPosting[off[l] .. off[l + 1]) */
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

/**
 * The copy of @p idx's postings on device @p device, uploaded on first use
 * under idx->aDev[device].lock.  Also makes that device current for the calling thread.
 * @param[out] ppDev  valid until the index is closed.
 */
genie_status cuda_index_get(const genie_index *idx, int device, const cuda_index **ppDev);

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
