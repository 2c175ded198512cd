/*
 * The CUDA backend as a module: libgenie_cuda.so, loaded with dlopen() the
 * first time a search asks for a GPU, so that a process that never does
 * (a "-b cpu" run, a machine without a GPU) never maps the CUDA runtime
 * and cuBLAS (about 200 MB of address space), and one build serves
 * machines with and without a GPU.
 *
 * The module exports one symbol, ENGINE_CUDA_MODULE_SYMBOL, an
 * engine_cuda_module.  It is built from the same sources as the library
 * and shares its structures (engine_request, genie_index, engine_backend,
 * ...); the sizes it records are checked at load, and a module of another
 * build is refused.  Its xInit receives the engine_host table: through it
 * the module registers its backends (engine/backend.h: their entries
 * replace the placeholders the library lists for "cuda", "cuda-spq" and
 * "cuda-cpq-paper"), and borrows what it needs of the library (error
 * messages, keyword lookups, the thread pool), so that its errors land in
 * the library's per-thread message and the library's internal symbols need
 * not be exported.
 *
 * A GENIE_TESTING build of the library (libgenie_testing.a, for the test
 * programs) loads the testing module, libgenie_cuda_testing.so, which
 * exports the test hooks besides (engine/cuda/cuda_testing.h), and refuses
 * one without them.
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
#ifdef GENIE_TESTING
#include "engine/cuda/cuda_testing.h"
#endif

#define ENGINE_CUDA_MODULE_SYMBOL "genie_cuda_module"

/*
 * What the module borrows from the library, and how it registers its
 * backends (xRegister: engine_backend_register).
 */
typedef genie_status (*engine_register_fn)(const engine_backend *b, genie_backend *pId);

typedef struct engine_host {
    engine_register_fn xRegister;
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
    uint32_t nBackendSize; /* sizeof(engine_backend) */
    /**
     * Keep @p pHost, look for usable GPUs and, when there are, register the
     * module's backends through pHost->xRegister.
     * @return GENIE_OK; GENIE_EGPU (no usable device: nothing registered),
     *         a registration's failure.
     */
    genie_status (*xInit)(const engine_host *pHost);
    /* Device memory in use (every process's) and in all, in bytes. */
    genie_status (*xMemory)(int device, uint64_t *pUsed, uint64_t *pTotal);
} engine_cuda_module;

/**
 * Load the module (once per process, thread-safe): it registers its
 * backends through @p xRegister (engine_backend_register, handed over by
 * backends.c, whose placeholders call this), and they replace the
 * placeholders.
 * @return GENIE_OK; GENIE_ENOTSUP when this genie was built without CUDA;
 *         GENIE_EGPU when there is no GPU device node, the module cannot be
 *         loaded (the message says why) or it finds no usable device.
 */
genie_status engine_cuda_module_load(engine_register_fn xRegister);

/**
 * Memory of GPU @p device, through the loaded module (genie_cuda_memory).
 * @return as genie_cuda_memory(); GENIE_EGPU when the module is not loaded.
 */
genie_status engine_cuda_module_memory(int device, uint64_t *pUsed, uint64_t *pTotal);

#ifdef GENIE_TESTING
/** The loaded testing module's hooks (engine/cuda/cuda_testing.h); NULL when it is not loaded. */
const engine_cuda_testing *engine_cuda_module_testing(void);
#endif

#ifdef __cplusplus
}
#endif

#endif
