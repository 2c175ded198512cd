/*
 * The CUDA backend as a module: libgenie_cuda.so, loaded with dlopen() the
 * first time a search asks for a GPU, so that a process that never does
 * (a "-b cpu" run, a machine without a GPU) never maps the CUDA runtime
 * and cuBLAS (about 200 MB of address space), and one build serves
 * machines with and without a GPU.
 *
 * The module exports one symbol, ENGINE_CUDA_MODULE_SYMBOL, an
 * engine_cuda_module.  It is built from the same sources as the library
 * and shares its structures (engine_request, genie_index, ...); the sizes
 * it records are checked at load, and a module of another build is
 * refused.  What the module needs of the library (error messages, keyword
 * lookups, the thread pool) it borrows through the engine_host table that
 * xInit receives, so that its errors land in the library's per-thread
 * message and the library's internal symbols need not be exported.
 *
 * Where it is looked for, in order: $GENIE_CUDA_MODULE; beside the file
 * that holds this code (libgenie.so, or the program linked with
 * libgenie.a), and in ../lib from there (an installed program); the
 * installed library folder; the build tree.  Without a
 * sign of the NVIDIA driver (/dev/nvidiactl, /dev/nvidia0 or
 * /proc/driver/nvidia) nothing is loaded unless $GENIE_CUDA_MODULE names
 * the module.
 */
#ifndef GENIE_ENGINE_CUDA_MODULE_H
#define GENIE_ENGINE_CUDA_MODULE_H

#ifdef __cplusplus
extern "C" {
#endif

#include "engine/backend.h"
#include "engine/docs_gpu.h"
#include "engine/cuda/cuda_testing.h"

#define ENGINE_CUDA_MODULE_SYMBOL "genie_cuda_module"
#define ENGINE_CUDA_MODULE_FILE "libgenie_cuda.so"

/* What the module borrows from the library. */
typedef struct engine_host {
    void (*xSetError)(genie_status rc, const char *zMessage);
    const char *(*xLastError)(void);
    void (*xKeywordRange)(const genie_index *idx, uint32_t lo, uint32_t hi, size_t *pFirst, size_t *pEnd);
    void (*xParallelRun)(unsigned nThreads, void (*fn)(void *ctx, unsigned t), void *ctx);
    unsigned (*xNcores)(void);
} engine_host;

typedef struct engine_cuda_module {
    const char *zVersion;  /* GENIE_VERSION of its build */
    uint32_t nRequestSize; /* sizeof(engine_request) */
    uint32_t nIndexSize;   /* sizeof(genie_index) */
    uint32_t nHostSize;    /* sizeof(engine_host) */
    void (*xInit)(const engine_host *pHost);
    int (*xUsable)(void);
    int (*xDevices)(void); /* usable GPUs, numbered from 0 */
    engine_search_fn xTile;     /* "cuda": the c-PQ in the tile layout */
    engine_search_fn xSpq;      /* "cuda-spq": GEN-SPQ */
    engine_search_fn xCpqPaper; /* "cuda-cpq-paper": the c-PQ in the paper's layout */
    engine_parts_ops parts;
    engine_exact_fn xExact;
    void (*xExactFree)(void *pResident);
    engine_pairs_fn xPairs;             /* metric_gpu.cu: batched pair distances */
    void (*xPairsFree)(void *pResident);
    engine_edit_fn xEdit;               /* edit_gpu.cu: batched edit distances */
    void (*xEditFree)(void *pResident);
    /* Testing hooks (cuda_testing.h), for tests/gpu and bench/. */
    void (*xTimePhases)(int on);
    void (*xPhaseTimes)(cuda_phase_times *pOut);
    void (*xCpqSetSlots)(uint64_t nSlot);
    void (*xTileSetVariant)(int widePostings, int warpAggregate);
    /* The docs index type's GPU engine (engine/docs_gpu.h). */
    genie_status (*xDocs)(void **ppResident, engine_docs_request *req);
    void (*xDocsFree)(void *pResident);
    /* Device memory in use (every process's) and in all, in bytes. */
    genie_status (*xMemory)(int device, uint64_t *pUsed, uint64_t *pTotal);
    void (*xExactCounts)(int reset, cuda_exact_counts *pOut); /* testing hook (cuda_testing.h) */
    engine_lsh_fn xLsh;                                       /* lsh_gpu.cu: LSH keywords of query vectors */
    engine_sim_fn xSim;                 /* sim_gpu.cu: the exact set similarity search (engine/sim.h) */
    void (*xSimFree)(void *pResident);
} engine_cuda_module;

/**
 * The module, loaded on the first call (thread-safe), into *out.
 * @return GENIE_OK; GENIE_ENOTSUP when this genie was built without CUDA;
 *         GENIE_EGPU when there is no GPU device node, the module cannot be
 *         loaded (the message says why) or it finds no usable device.
 */
genie_status engine_cuda_module_get(const engine_cuda_module **out);

/* The CUDA entries of the backend table (cuda_module.c). */
extern const engine_backend engine_cuda_backend, engine_cuda_spq_backend, engine_cuda_cpq_paper_backend;

#ifdef __cplusplus
}
#endif

#endif
