/*
 * Test hooks of the CUDA module: knobs that change sizes or kernels, never
 * answers, for tests/gpu and bench/genie_bench.
 *
 * They exist in GENIE_TESTING builds alone (as SQLite's SQLITE_TEST):
 * libgenie_testing.a, which the test programs link, and the module
 * libgenie_cuda_testing.so, which that library loads; the libraries that
 * are installed (libgenie.a, libgenie.so, libgenie_cuda.so) never hold
 * them, which tests/test_install.c checks with nm.  Every test hook's name
 * has "_testing" in it.  GENIE_TESTING adds functions and never changes a
 * structure, so objects built with and without it share every type.
 */
#ifndef GENIE_ENGINE_CUDA_CUDA_TESTING_H
#define GENIE_ENGINE_CUDA_CUDA_TESTING_H

#ifndef GENIE_TESTING
#error "engine/cuda/cuda_testing.h: the test hooks exist in GENIE_TESTING builds alone"
#endif

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Start every c-PQ hash table with @p nSlot slots (rounded up to a power of
 * two) instead of the size Theorem III.1 suggests; 0 restores the default.
 * Small tables overflow, which the driver must detect and rerun.  Not
 * thread-safe: call before searching.
 */
void cpq_testing_set_slots(uint64_t nSlot);

/**
 * The variant of the tile layout's counting kernel (tile.cu), for
 * benchmarks and tests: @p widePostings non-zero reads the 32-bit ids
 * (uploaded beside the 16-bit tile-local ids on first use) instead of the
 * tile-local ids; @p warpAggregate non-zero sums the increments of the
 * lanes of a warp that hit the same counter word before one atomic.  The
 * answers are the same in every variant.  (0, 0) is the default.  Not
 * thread-safe: call before searching.
 */
void tile_testing_set_variant(int widePostings, int warpAggregate);

/* The testing module's table of its hooks, exported as ENGINE_CUDA_TESTING_SYMBOL. */
#define ENGINE_CUDA_TESTING_SYMBOL "genie_cuda_testing"

typedef struct engine_cuda_testing {
    void (*xCpqSetSlots)(uint64_t nSlot);
    void (*xTileSetVariant)(int widePostings, int warpAggregate);
} engine_cuda_testing;

#ifdef __cplusplus
}
#endif

#endif
